/*
 * model.h - a transformer's size turned into what a training step moves
 * and computes: parameters, FLOPs per token, the per-GPU compute time of
 * an iteration, the data-parallel gradient, the tensor-parallel and
 * pipeline activations, micro-batches.  Pure arithmetic (doc/jobs.md has
 * every formula); a job with a model takes its volumes from here.
 */
#ifndef FAB_MODEL_H
#define FAB_MODEL_H

#include "../base/base.h"

enum fab_precision { FAB_PREC_BF16, FAB_PREC_FP16, FAB_PREC_FP32, FAB_PREC_FP8 };

struct fab_model_spec {
	uint32_t layers; /* 0: no model (the job's compute and volumes are given) */
	uint32_t hidden, ffn_hidden, vocab, seq_len;
	uint32_t heads, kv_heads;      /* grouped-query attention: K and V have kv_heads of heads (0: all) */
	bool gated_mlp;                /* SwiGLU: three MLP matrices instead of two */
	uint32_t micro_batch;          /* sequences per micro-batch */
	uint32_t global_batch;         /* sequences per iteration; 0: micro_batch x dp x microbatches */
	int precision, grad_precision; /* enum fab_precision: activations, gradients */
	double gpu_tflops, efficiency; /* peak dense TFLOP/s of a GPU, fraction reached */
	uint32_t experts, top_k;       /* mixture of experts: experts per MoE layer (0: dense) */
	uint32_t ep;                   /* expert-parallel group: replicas that share out the experts (0: auto) */
};

struct fab_model_volumes {
	double params;              /* weights */
	double active_params;       /* weights a token passes through */
	double flops_per_token;     /* forward and backward */
	double tokens;              /* per iteration */
	double flops;               /* per iteration, whole job */
	fab_time_ps compute_ps;     /* per GPU and iteration */
	uint64_t grad_bytes;        /* what each GPU all-reduces over its data-parallel group */
	uint32_t ep;                /* MoE: expert-parallel group size (a divisor of dp); 0: dense */
	uint64_t expert_grad_bytes; /* MoE: what each GPU all-reduces over the dp / ep replicas of its experts */
	uint64_t tp_bytes;          /* one tensor-parallel all-reduce */
	uint32_t tp_collectives;    /* per micro-batch and stage, forward and backward */
	uint64_t pp_bytes;          /* activations per micro-batch from each GPU to the next stage */
	uint64_t a2a_bytes;         /* MoE: what each GPU sends in one all-to-all */
	uint32_t a2a_collectives;   /* MoE: per micro-batch and stage, forward and backward */
	uint32_t microbatches;
};

uint32_t fab_precision_bytes(int p);
/* Volumes of the model on dp x tp x pp GPUs; microbatches is the job's
 * (used when global_batch is 0).  Errors name the key. */
/* the most a model may make: an iteration's compute on a GPU (seconds,
 * jobs[].compute's limit) and the bytes of one transfer (gradient_bytes',
 * tp_bytes' and pp_bytes' limit); beyond, fab_model_volumes refuses */
#define FAB_MODEL_MAX_COMPUTE_S 1000.0
#define FAB_MODEL_MAX_BYTES 1e13
int fab_model_volumes(const struct fab_model_spec *m, uint32_t dp, uint32_t tp, uint32_t pp, uint32_t microbatches,
		      struct fab_model_volumes *out, struct fab_err *err);

#endif
