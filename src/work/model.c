/*
 * model.c - transformer arithmetic (model.h).
 *
 * A layer holds attention (Q and output h^2 each, K and V h^2 each or, with
 * grouped-query attention, h^2 kv_heads / heads) and an MLP of two
 * matrices h x f (three with a gated MLP), times the experts in a MoE
 * layer; a token passes through top_k of them.  The vocabulary adds V h
 * (the embedding, tied to the output projection).  A token costs 6 FLOPs
 * per weight it passes through (forward 2, backward 4) and 12 L s h for
 * attention's scores and weighted sums.  Tensor parallelism all-reduces
 * the b s h activations twice per layer forward and twice backward;
 * pipeline stages pass b s h / tp from each GPU (Megatron-LM's scattered
 * send); a MoE layer sends each token's h to top_k experts and back,
 * forward and backward (four all-to-alls) within its expert-parallel
 * group: ep consecutive data-parallel replicas that share out the experts
 * (E / ep a GPU), as Megatron-LM's expert parallelism does.  The dense
 * weights' gradients are all-reduced over dp; each expert's over the dp / ep
 * replicas that hold it.
 */
#include <string.h>

#include "model.h"

uint32_t fab_precision_bytes(int p)
{
	return p == FAB_PREC_FP32 ? 4 : p == FAB_PREC_FP8 ? 1 : 2;
}

int fab_model_volumes(const struct fab_model_spec *m, uint32_t dp, uint32_t tp, uint32_t pp, uint32_t microbatches,
		      struct fab_model_volumes *o, struct fab_err *err)
{
	memset(o, 0, sizeof *o);
	if (!m->hidden || !m->seq_len || !m->micro_batch)
		return fab_err_set(err, FAB_EINVAL, "model: hidden, seq_len and micro_batch must be above 0");
	if (m->layers % pp)
		return fab_err_set(err, FAB_EINVAL, "model.layers: %u layers do not divide into pp %u stages",
				   m->layers, pp);
	if (m->kv_heads > m->heads)
		return fab_err_set(err, FAB_EINVAL, "model.kv_heads: %u is more than heads (%u)", m->kv_heads,
				   m->heads);
	if (m->experts && (!m->top_k || m->top_k > m->experts))
		return fab_err_set(err, FAB_EINVAL, "model.top_k: between 1 and the experts (%u)", m->experts);
	uint32_t ep = 0;
	if (m->experts) {
		/* auto: the largest divisor of dp up to the experts */
		ep = m->ep ? m->ep : FAB_MIN(m->experts, dp);
		while (!m->ep && dp % ep)
			ep--;
		if (ep > m->experts)
			return fab_err_set(err, FAB_EINVAL, "model.ep: %u is more than the experts (%u)", ep,
					   m->experts);
		if (dp % ep)
			return fab_err_set(err, FAB_EINVAL, "model.ep: %u does not divide dp %u", ep, dp);
	}
	double h = m->hidden, f = m->ffn_hidden ? m->ffn_hidden : 4.0 * m->hidden, L = m->layers, s = m->seq_len;
	double mlp = (m->gated_mlp ? 3 : 2) * h * f, E = m->experts ? m->experts : 1, K = m->experts ? m->top_k : 1;
	double kv = m->heads && m->kv_heads ? (double)m->kv_heads / m->heads : 1, attn = (2 + 2 * kv) * h * h;
	o->params = L * (attn + mlp * E) + (double)m->vocab * h;
	o->active_params = L * (attn + mlp * K) + (double)m->vocab * h;
	o->flops_per_token = 6 * o->active_params + 12 * L * s * h;
	uint64_t per_replica = (uint64_t)m->micro_batch * dp;
	if (m->global_batch) {
		if (m->global_batch % per_replica)
			return fab_err_set(err, FAB_EINVAL,
					   "model.global_batch: %u sequences do not divide into micro_batch %u x dp %u",
					   m->global_batch, m->micro_batch, dp);
		o->microbatches = (uint32_t)(m->global_batch / per_replica);
	} else {
		o->microbatches = microbatches ? microbatches : 1;
	}
	o->tokens = (double)per_replica * o->microbatches * s;
	o->flops = o->flops_per_token * o->tokens;
	double gpus = (double)dp * tp * pp;
	double compute_s = o->flops / gpus / (m->gpu_tflops * 1e12 * m->efficiency);
	/* what the model makes must fit what a job may be given by hand
	 * (jobs[].compute, gradient_bytes, tp_bytes and pp_bytes' limits) */
	if (!(compute_s <= FAB_MODEL_MAX_COMPUTE_S))
		return fab_err_set(err, FAB_EINVAL,
				   "model: an iteration computes for %.3g s on each GPU (%.3g FLOPs over %.0f GPUs at "
				   "%g TFLOP/s x %g), more than %g s: a smaller model, fewer or shorter sequences",
				   compute_s, o->flops, gpus, m->gpu_tflops, m->efficiency, FAB_MODEL_MAX_COMPUTE_S);
	o->compute_ps = (fab_time_ps)(compute_s * 1e12 + 0.5);
	/* the experts are shared out over ep replicas: with ep > 1 their
	 * gradients are reduced apart, over the dp / ep replicas of each */
	double experts = ep > 1 ? L * mlp * E : 0, gb = fab_precision_bytes(m->grad_precision);
	double act = (double)m->micro_batch * s * h * fab_precision_bytes(m->precision);
	double grads = (o->params - experts) / (tp * pp) * gb, egrads = experts / (ep ? ep : 1) / (tp * pp) * gb;
	/* bounded before any becomes an integer (a double past 2^64 is
	 * undefined there) */
	double most = FAB_MAX(FAB_MAX(grads, egrads), act * K);
	if (!(most <= FAB_MODEL_MAX_BYTES))
		return fab_err_set(err, FAB_EINVAL,
				   "model: %s of %.3g bytes a GPU, more than %g: a smaller model, shorter sequences or "
				   "smaller micro-batches",
				   most == grads            ? "gradients"
					   : most == egrads ? "expert gradients"
							    : "activations",
				   most, FAB_MODEL_MAX_BYTES);
	o->grad_bytes = (uint64_t)(grads + 0.5);
	o->ep = ep;
	if (ep > 1 && ep < dp)
		o->expert_grad_bytes = (uint64_t)(egrads + 0.5);
	if (tp > 1) {
		o->tp_bytes = (uint64_t)act;
		o->tp_collectives = 4 * m->layers / pp;
	}
	if (pp > 1)
		o->pp_bytes = (uint64_t)(act / tp + 0.5);
	if (ep > 1) {
		o->a2a_bytes = (uint64_t)(act * K / tp + 0.5);
		o->a2a_collectives = 4 * m->layers / pp;
	}
	return 0;
}
