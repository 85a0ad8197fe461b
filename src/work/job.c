/*
 * job.c - the training-job state machine of job.h.
 *
 * A worker is one tensor-parallel group of one stage of one replica; its
 * GPUs compute in lockstep.  Compute is a timer; tensor-parallel
 * all-reduces run on the worker's own communicator and block it; pipeline
 * transfers are messages between the corresponding GPUs of adjacent
 * stages; data-parallel all-reduces run on one communicator per stage and
 * tensor index, one bucket after another.  Forward takes a third of the
 * compute and backward two thirds, split evenly over micro-batches (and
 * model chunks).  Each worker runs its list of passes (forward or backward
 * of a micro-batch through one model chunk) in the order its pipeline
 * schedule gives: GPipe, 1F1B, or 1F1B interleaved over virtual stages.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "job_int.h"
#include "sweep.h"

void jb_op_begin(struct fab_job *j)
{
	if (j->active_ops++ == 0)
		j->comm_since = fab_sim_now(j->w->sim);
}

void jb_op_end(struct fab_job *j)
{
	if (--j->active_ops == 0)
		j->comm_acc += fab_sim_now(j->w->sim) - j->comm_since;
}

void jb_fail(struct fab_job *j)
{
	j->rc = j->err.code ? j->err.code : FAB_EINTERNAL;
	if (!j->finished) {
		j->finished = true;
		fab_sim_hold(j->w->sim, -1);
	}
}

static void start_iteration(struct fab_job *j);

void jb_maybe_end_iteration(struct fab_job *j)
{
	if (j->workers_done < j->pp * j->dp || j->dp_pending)
		return;
	fab_time_ps now = fab_sim_now(j->w->sim);
	struct fab_job_iter *it = &j->iters[j->niters++];
	it->start_ps = j->iter_start;
	it->end_ps = now;
	it->compute_ps = j->spec.compute_ps;
	it->comm_ps = j->comm_acc;
	it->exposed_ps = now - j->iter_start > j->spec.compute_ps ? now - j->iter_start - j->spec.compute_ps : 0;
	/* the straggler: the worker that finished its backward pass last */
	uint32_t nw = j->pp * j->dp, last = 0;
	fab_time_ps *sorted = fab_xcalloc(nw, sizeof *sorted);
	for (uint32_t i = 0; i < nw; i++) {
		sorted[i] = j->done_at[i];
		if (j->done_at[i] > j->done_at[last])
			last = i;
	}
	for (uint32_t i = 1; i < nw; i++)
		for (uint32_t k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
			fab_time_ps x = sorted[k];
			sorted[k] = sorted[k - 1];
			sorted[k - 1] = x;
		}
	it->last_worker = last;
	it->lag_ps = j->done_at[last] - sorted[nw / 2];
	free(sorted);
	fab_log_printf(&j->w->log, "fabscope INFO %s: iteration %u time %.3f us comm %.3f us exposed %.3f us\n",
		       j->spec.name, j->niters - 1, (double)(now - j->iter_start) / 1e6, (double)j->comm_acc / 1e6,
		       (double)it->exposed_ps / 1e6);
	if (++j->iter < j->spec.iterations) {
		start_iteration(j);
		return;
	}
	j->finished = true;
	fab_sim_hold(j->w->sim, -1);
}

/* ---- data-parallel buckets ---- */

static void dp_start(struct fab_job *j, uint32_t s, uint32_t x);

static void dp_done(void *ctx, const struct fab_op_result *r)
{
	(void)r;
	struct fab_comm *c = ctx;
	struct fab_job *j = c->user;
	uint32_t idx = (uint32_t)(c - j->dp_comm), s = idx / j->tp, x = idx % j->tp;
	jb_op_end(j);
	j->dp_busy[idx] = false;
	j->dp_next[idx]++;
	j->dp_pending--;
	dp_start(j, s, x);
	jb_maybe_end_iteration(j);
}

static void dp_start(struct fab_job *j, uint32_t s, uint32_t x)
{
	uint32_t idx = s * j->tp + x, b = j->dp_next[idx];
	if (j->dp_busy[idx] || b >= j->spec.buckets || j->bucket_ready[s * j->spec.buckets + b] < j->dp)
		return;
	uint64_t bytes = j->spec.grad_bytes / j->spec.buckets + (b < j->spec.grad_bytes % j->spec.buckets ? 1 : 0);
	struct fab_coll_req req = {FAB_OP_ALLREDUCE, j->spec.algo, FAB_MAX(bytes / 4, 1), 4, 0};
	j->dp_busy[idx] = true;
	jb_op_begin(j);
	if (fab_comm_start(&j->dp_comm[idx], &req, dp_done, &j->dp_comm[idx], &j->err))
		jb_fail(j);
}

static void bucket_produced(struct fab_job *j, uint32_t s, uint32_t b)
{
	if (++j->bucket_ready[s * j->spec.buckets + b] < j->dp)
		return;
	for (uint32_t x = 0; x < j->tp; x++)
		dp_start(j, s, x);
	if (b + 1 == j->spec.buckets)
		jb_moe_grads(j, s);
}

/* ---- pipeline transfers ---- */

static void run_pass(struct fab_job_worker *wk);

/* virtual stage of chunk c on stage s: chunk c of every stage comes
 * before chunk c + 1 of any */
static uint32_t vstage(const struct fab_job *j, uint32_t s, uint32_t c)
{
	return c * j->pp + s;
}

static void on_arrival(struct fab_job_worker *wk)
{
	if (wk->waiting) {
		wk->waiting = false;
		run_pass(wk);
	}
}

static void on_act(void *obj, uint32_t idx)
{
	struct fab_job_worker *wk = obj;
	wk->act_have[idx]++;
	on_arrival(wk);
}

static void on_grad(void *obj, uint32_t idx)
{
	struct fab_job_worker *wk = obj;
	wk->grad_have[idx]++;
	on_arrival(wk);
}

/* Every GPU of the worker's group sends to its peer in the next virtual
 * stage (down: activations) or the previous (up: gradients). */
static void pp_send(struct fab_job_worker *wk, bool down, uint32_t m, uint32_t c)
{
	struct fab_job *j = wk->job;
	uint32_t vs = vstage(j, wk->s, c), v2 = down ? vs + 1 : vs - 1;
	uint32_t s2 = v2 % j->pp, idx = (v2 / j->pp) * j->M + m;
	uint32_t bnd = down ? wk->s : s2; /* the boundary from stage bnd to (bnd + 1) mod pp */
	struct fab_job_worker *to = worker(j, s2, wk->d);
	for (uint32_t x = 0; x < j->tp; x++) {
		uint32_t src = j->gpu[rank_of(j, wk->s, wk->d, x)], dst = j->gpu[rank_of(j, s2, wk->d, x)];
		uint32_t cookie = fab_work_cookie(j->w, down ? on_act : on_grad, to, idx);
		if (fab_topo_gpu_server(j->t, src) == fab_topo_gpu_server(j->t, dst)) {
			fab_sim_post_local(j->w->sim, src, dst, j->spec.pp_bytes, cookie);
			continue;
		}
		size_t ci = (((size_t)bnd * j->dp + wk->d) * j->tp + x) * 2 + (down ? 0 : 1);
		fab_sim_post(j->w->sim, j->pp_conn[ci], j->spec.pp_bytes, cookie);
	}
}

/* ---- the schedule ---- */

/* the k-th forward (or backward) pass of a 1F1B stage: micro-batches in
 * groups of pp, each group through every chunk in turn (backward: the
 * chunks in reverse); with one chunk, simply micro-batch k */
static struct pass nth_pass(const struct fab_job *j, uint32_t k, bool back)
{
	uint32_t pp = j->pp, v = j->v, c = (k / pp) % v;
	return (struct pass){(k / (pp * v)) * pp + k % pp, (uint16_t)(back ? v - 1 - c : c), (uint8_t)back};
}

/* The passes of stage s in order.  GPipe: every forward, then every
 * backward in reverse.  1F1B: pp - s - 1 forwards to fill the pipeline,
 * then one forward and one backward in turn, then the remaining backwards.
 * Interleaved (v chunks per stage): the k-th forward runs chunk
 * (k / pp) mod v of micro-batch (k / (pp v)) pp + k mod pp, the k-th
 * backward the same in reverse chunk order, with 2 (pp - s - 1) +
 * (v - 1) pp forwards first (Megatron-LM's schedule). */
static void build_passes(const struct fab_job *j, struct fab_job_worker *wk)
{
	uint32_t M = j->M, v = j->v, pp = j->pp, n = M * v, s = wk->s;
	wk->nops = 2 * n;
	wk->ops = fab_xcalloc(wk->nops, sizeof *wk->ops);
	struct pass *o = wk->ops;
	uint32_t at = 0;
	if (j->spec.schedule == FAB_SCHED_GPIPE) {
		for (uint32_t m = 0; m < M; m++)
			o[at++] = (struct pass){m, 0, 0};
		for (uint32_t m = M; m-- > 0;)
			o[at++] = (struct pass){m, 0, 1};
		return;
	}
	uint32_t warm = v == 1 ? pp - s - 1 : 2 * (pp - s - 1) + (v - 1) * pp;
	warm = FAB_MIN(warm, n);
	uint32_t f = 0, b = 0;
	while (f < warm)
		o[at++] = nth_pass(j, f++, false);
	while (f < n) {
		o[at++] = nth_pass(j, f++, false);
		o[at++] = nth_pass(j, b++, true);
	}
	while (b < n)
		o[at++] = nth_pass(j, b++, true);
}

/* ---- the worker ---- */

/* fraction of the step's compute, at the worker's pace */
static fab_time_ps compute(const struct fab_job_worker *wk, uint64_t num, uint64_t den)
{
	return (fab_time_ps)((double)wk->job->spec.compute_ps * (double)num / (double)den * wk->slow + 0.5);
}

/* collectives in the forward pass of chunk c: the stage's tensor-parallel
 * all-reduces (and MoE all-to-alls) split over its chunks */
static uint32_t split_colls(const struct fab_job *j, uint64_t T, uint32_t c)
{
	return (uint32_t)(T * (c + 1) / j->v - T * c / j->v);
}

static uint32_t tp_colls(const struct fab_job *j, uint32_t c)
{
	return j->tp < 2 || !j->spec.tp_bytes ? 0 : split_colls(j, j->spec.tp_collectives, c);
}

static uint32_t a2a_colls(const struct fab_job *j, uint32_t c)
{
	return j->ep_comm ? split_colls(j, j->vol.a2a_collectives, c) : 0;
}

/* compute chunks of the running pass: a forward is cut before each of its
 * blocking collectives; the stage's last pass yields the buckets */
static uint32_t pass_chunks(const struct fab_job_worker *wk)
{
	const struct pass *p = &wk->ops[wk->pc];
	if (!p->bwd)
		return FAB_MAX(FAB_MAX(tp_colls(wk->job, p->c), a2a_colls(wk->job, p->c)), 1u);
	return wk->pc + 1 == wk->nops ? wk->job->spec.buckets : 1;
}

static fab_time_ps chunk_time(const struct fab_job_worker *wk)
{
	const struct fab_job *j = wk->job;
	return compute(wk, wk->ops[wk->pc].bwd ? 2 : 1, 3ull * j->M * j->v * pass_chunks(wk));
}

static void chunk_done(void *obj, uint32_t unused);

static void next_chunk(struct fab_job_worker *wk)
{
	fab_work_timer(wk->job->w, fab_sim_now(wk->job->w->sim) + chunk_time(wk), chunk_done, wk, 0);
}

static void pass_done(struct fab_job_worker *wk)
{
	struct fab_job *j = wk->job;
	const struct pass p = wk->ops[wk->pc];
	uint32_t vs = vstage(j, wk->s, p.c);
	if (!p.bwd && vs + 1 < j->pp * j->v)
		pp_send(wk, true, p.m, p.c);
	if (p.bwd && vs > 0)
		pp_send(wk, false, p.m, p.c);
	if (++wk->pc < wk->nops) {
		run_pass(wk);
		return;
	}
	wk->done = true;
	j->done_at[wk - j->wk] = fab_sim_now(j->w->sim);
	j->workers_done++;
	if (!j->spec.overlap)
		for (uint32_t b = 0; b < j->spec.buckets; b++)
			bucket_produced(j, wk->s, b);
	jb_maybe_end_iteration(j);
}

/* the chunk and its collectives are done */
void jb_chunk_finished(struct fab_job_worker *wk)
{
	struct fab_job *j = wk->job;
	if (wk->ops[wk->pc].bwd && wk->pc + 1 == wk->nops && j->spec.overlap)
		bucket_produced(j, wk->s, wk->k);
	if (++wk->k < pass_chunks(wk))
		next_chunk(wk);
	else
		pass_done(wk);
}

static void after_tp(struct fab_job_worker *wk)
{
	const struct pass *p = &wk->ops[wk->pc];
	if (!p->bwd && wk->k < a2a_colls(wk->job, p->c))
		jb_a2a_arrive(wk);
	else
		jb_chunk_finished(wk);
}

static void tp_done(void *ctx, const struct fab_op_result *r)
{
	(void)r;
	struct fab_job_worker *wk = ctx;
	jb_op_end(wk->job);
	after_tp(wk);
}

static void chunk_done(void *obj, uint32_t unused)
{
	(void)unused;
	struct fab_job_worker *wk = obj;
	struct fab_job *j = wk->job;
	const struct pass *p = &wk->ops[wk->pc];
	if (!p->bwd && wk->k < tp_colls(j, p->c)) {
		/* the chunk's tensor-parallel all-reduce blocks the group */
		struct fab_coll_req req = {FAB_OP_ALLREDUCE, FAB_ALGO_AUTO, FAB_MAX(j->spec.tp_bytes / 4, 1), 4, 0};
		jb_op_begin(j);
		if (fab_comm_start(&j->tp_comm[wk->s * j->dp + wk->d], &req, tp_done, wk, &j->err))
			jb_fail(j);
		return;
	}
	after_tp(wk);
}

/* runs the next pass once its input is there */
static void run_pass(struct fab_job_worker *wk)
{
	struct fab_job *j = wk->job;
	const struct pass *p = &wk->ops[wk->pc];
	uint32_t vs = vstage(j, wk->s, p->c), idx = p->c * j->M + p->m;
	bool need = p->bwd ? vs + 1 < j->pp * j->v && wk->grad_have[idx] < j->tp : vs > 0 && wk->act_have[idx] < j->tp;
	if (need) {
		wk->waiting = true;
		return;
	}
	wk->k = 0;
	next_chunk(wk);
}

static void start_iteration(struct fab_job *j)
{
	j->iter_start = fab_sim_now(j->w->sim);
	j->comm_acc = 0;
	if (j->active_ops)
		j->comm_since = j->iter_start;
	j->workers_done = 0;
	j->dp_pending = j->pp * j->tp * j->spec.buckets + jb_moe_reductions(j);
	memset(j->bucket_ready, 0, (size_t)j->pp * j->spec.buckets * sizeof *j->bucket_ready);
	memset(j->dp_next, 0, (size_t)j->pp * j->tp * sizeof *j->dp_next);
	for (uint32_t i = 0; i < j->pp * j->dp; i++) {
		struct fab_job_worker *wk = &j->wk[i];
		wk->done = false;
		wk->pc = 0;
		wk->waiting = false;
		memset(wk->act_have, 0, (size_t)j->v * j->M * sizeof *wk->act_have);
		memset(wk->grad_have, 0, (size_t)j->v * j->M * sizeof *wk->grad_have);
	}
	for (uint32_t i = 0; i < j->pp * j->dp; i++)
		run_pass(&j->wk[i]);
}

static void begin(void *obj, uint32_t unused)
{
	(void)unused;
	start_iteration(obj);
}

void fab_job_start(struct fab_job *j)
{
	fab_sim_hold(j->w->sim, +1);
	fab_work_timer(j->w, j->spec.start_ps, begin, j, 0);
}

int fab_job_place(const struct fab_topo *t, const struct fab_job_spec *spec, uint32_t ngpus, uint64_t seed,
		  uint64_t index, bool *server_used, uint32_t *gpus, struct fab_err *err)
{
	if (spec->placement != FAB_PLACE_LIST)
		return fab_place(t, spec->placement, ngpus, seed, index, server_used, gpus, err);
	for (uint32_t r = 0; r < ngpus; r++) {
		uint32_t g = spec->gpu_list[r];
		if (g >= t->ngpus)
			return fab_err_set(err, FAB_EINVAL, "gpu_list: GPU %u does not exist (0..%u)", g, t->ngpus - 1);
		if (server_used[fab_topo_gpu_server(t, g)])
			return fab_err_set(err, FAB_EINVAL, "gpu_list: GPU %u is on a server another job uses", g);
		gpus[r] = g;
	}
	for (uint32_t r = 0; r < ngpus; r++)
		server_used[fab_topo_gpu_server(t, gpus[r])] = true;
	return 0;
}

struct fab_comm *jb_group_comms(struct fab_job *j, struct fab_work *w, const char *tag, uint32_t size, uint32_t groups,
				uint32_t istride, uint32_t gstride, struct fab_err *err)
{
	const struct fab_job_spec *spec = &j->spec;
	uint32_t n = j->pp * groups * j->tp;
	struct fab_comm *cs = fab_xcalloc(n, sizeof *cs);
	uint32_t *g = fab_xcalloc(size, sizeof *g);
	char name[64];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = i / j->tp / groups, grp = i / j->tp % groups, x = i % j->tp;
		for (uint32_t r = 0; r < size; r++)
			g[r] = j->gpu[rank_of(j, s, grp * gstride + r * istride, x)];
		if (groups > 1)
			snprintf(name, sizeof name, "%s.%s%u.%u.%u", spec->name, tag, s, grp, x);
		else
			snprintf(name, sizeof name, "%s.%s%u.%u", spec->name, tag, s, x);
		struct fab_comm_params cp = {name,
					     size,
					     g,
					     spec->ring_order,
					     spec->channels,
					     0,
					     (uint8_t)spec->priority,
					     0,
					     spec->qps_per_conn,
					     spec->transport,
					     n};
		if (fab_comm_init(&cs[i], w, &cp, err)) {
			for (uint32_t k = 0; k <= i; k++)
				fab_comm_free(&cs[k]);
			free(cs);
			free(g);
			return NULL;
		}
		cs[i].user = j;
	}
	free(g);
	return cs;
}

int jb_check_algo(const struct fab_job *j, const struct fab_comm *cs, uint32_t n, struct fab_err *err)
{
	for (uint32_t i = 0; j->spec.algo != FAB_ALGO_AUTO && i < n; i++) {
		char why[160];
		if (!fab_coll_supported(FAB_OP_ALLREDUCE, j->spec.algo, cs[i].nranks, cs[i].ranks_per_server, why,
					sizeof why))
			return fab_err_set(err, FAB_EINVAL, "algo: %s", why);
		if (fab_comm_algo_available(&cs[i], j->spec.algo, err))
			return err->code;
	}
	return 0;
}

int fab_job_init(struct fab_job *j, struct fab_work *w, const struct fab_job_spec *spec, const uint32_t *gpus,
		 const double *slow, struct fab_err *err)
{
	memset(j, 0, sizeof *j);
	j->spec = *spec;
	j->spec.gpu_list = NULL;
	j->w = w;
	j->t = w->topo;
	j->tp = spec->tp ? spec->tp : 1;
	j->pp = spec->pp ? spec->pp : 1;
	j->M = spec->microbatches ? spec->microbatches : 1;
	j->v = spec->virtual_stages ? spec->virtual_stages : 1;
	j->n = spec->gpus;
	if (!j->n || j->n % (j->tp * j->pp))
		return fab_err_set(err, FAB_EINVAL, "gpus: %u GPUs do not divide into tp %u x pp %u", j->n, j->tp,
				   j->pp);
	j->dp = j->n / (j->tp * j->pp);
	if (spec->model.layers) {
		/* the model decides compute and volumes */
		if (fab_model_volumes(&spec->model, j->dp, j->tp, j->pp, j->M, &j->vol, err))
			return err->code;
		if (spec->model.layers % (j->pp * j->v))
			return fab_err_set(
				err, FAB_EINVAL,
				"model.layers: %u layers do not divide into pp %u x virtual_stages %u chunks",
				spec->model.layers, j->pp, j->v);
		j->has_model = true;
		j->M = j->vol.microbatches;
		j->spec.microbatches = j->M;
		j->spec.compute_ps = j->vol.compute_ps;
		j->spec.grad_bytes = FAB_MAX(j->vol.grad_bytes, 1);
		j->spec.tp_bytes = j->vol.tp_bytes;
		j->spec.tp_collectives = j->vol.tp_collectives;
		j->spec.pp_bytes = j->vol.pp_bytes;
	}
	if (j->v > 1 && (j->spec.schedule != FAB_SCHED_1F1B || j->pp < 2 || j->M % j->pp))
		return fab_err_set(err, FAB_EINVAL,
				   "virtual_stages: %u model chunks per stage need schedule 1f1b, pp of 2 or more and "
				   "micro-batches a multiple of pp (pp %u, %u micro-batches)",
				   j->v, j->pp, j->M);
	if (!j->spec.buckets)
		j->spec.buckets = 1;
	j->gpu = fab_xcalloc(j->n, sizeof *j->gpu);
	memcpy(j->gpu, gpus, j->n * sizeof *gpus);
	j->iters = fab_xcalloc(FAB_MAX(spec->iterations, 1), sizeof *j->iters);
	j->wk = fab_xcalloc((size_t)j->pp * j->dp, sizeof *j->wk);
	for (uint32_t s = 0; s < j->pp; s++)
		for (uint32_t d = 0; d < j->dp; d++) {
			struct fab_job_worker *wk = worker(j, s, d);
			wk->job = j;
			wk->s = s;
			wk->d = d;
			wk->slow = 1;
			for (uint32_t x = 0; slow && x < j->tp; x++)
				wk->slow = FAB_MAX(wk->slow, slow[gpus[rank_of(j, s, d, x)]]);
			wk->act_have = fab_xcalloc((size_t)j->v * j->M, sizeof *wk->act_have);
			wk->grad_have = fab_xcalloc((size_t)j->v * j->M, sizeof *wk->grad_have);
			build_passes(j, wk);
		}
	j->bucket_ready = fab_xcalloc((size_t)j->pp * j->spec.buckets, sizeof *j->bucket_ready);
	j->done_at = fab_xcalloc((size_t)j->pp * j->dp, sizeof *j->done_at);
	j->dp_next = fab_xcalloc((size_t)j->pp * j->tp, sizeof *j->dp_next);
	j->dp_busy = fab_xcalloc((size_t)j->pp * j->tp, sizeof *j->dp_busy);
	uint32_t *g = fab_xcalloc(FAB_MAX(j->dp, j->tp), sizeof *g);
	char name[64];
	if (!(j->dp_comm = jb_group_comms(j, w, "dp", j->dp, 1, 1, 0, err)))
		goto fail;
	if (jb_check_algo(j, j->dp_comm, j->pp * j->tp, err))
		goto fail;
	if (j->tp > 1) {
		j->tp_comm = fab_xcalloc((size_t)j->pp * j->dp, sizeof *j->tp_comm);
		for (uint32_t s = 0; s < j->pp; s++)
			for (uint32_t d = 0; d < j->dp; d++) {
				for (uint32_t x = 0; x < j->tp; x++)
					g[x] = j->gpu[rank_of(j, s, d, x)];
				snprintf(name, sizeof name, "%s.tp%u.%u", spec->name, s, d);
				struct fab_comm_params cp = {name,
							     j->tp,
							     g,
							     FAB_RING_TOPOLOGY,
							     0,
							     0,
							     (uint8_t)spec->priority,
							     0,
							     1,
							     spec->transport,
							     j->pp * j->dp};
				if (fab_comm_init(&j->tp_comm[s * j->dp + d], w, &cp, err))
					goto fail;
				j->tp_comm[s * j->dp + d].replay = spec->replay;
			}
	}
	if (jb_moe_init(j, w, err))
		goto fail;
	if (j->pp > 1) {
		/* boundaries s -> s + 1, and pp - 1 -> 0 when chunks wrap round */
		uint32_t nb = j->v > 1 ? j->pp : j->pp - 1;
		j->pp_conn = fab_xcalloc((size_t)nb * j->dp * j->tp * 2, sizeof *j->pp_conn);
		for (uint32_t s = 0; s < nb; s++)
			for (uint32_t d = 0; d < j->dp; d++)
				for (uint32_t x = 0; x < j->tp; x++) {
					uint32_t ga = j->gpu[rank_of(j, s, d, x)],
						 gb = j->gpu[rank_of(j, (s + 1) % j->pp, d, x)];
					uint32_t a = fab_topo_gpu_nic(j->t, ga), b = fab_topo_gpu_nic(j->t, gb);
					size_t ci = (((size_t)s * j->dp + d) * j->tp + x) * 2;
					if (fab_topo_gpu_server(j->t, ga) == fab_topo_gpu_server(j->t, gb)) {
						/* over NVLink, both ways */
						fab_work_nvl_use(w, ga);
						fab_work_nvl_use(w, gb);
					}
					if (a == b)
						continue; /* same NIC: the transfer stays in the server */
					/* 5-tuples from the job and the boundary, as a
					 * communicator's: not from the jobs before it */
					uint64_t who = fab_mix64(fab_name_hash(spec->name) ^
								 fab_mix64(0x70705ULL + ci));
					j->pp_conn[ci] = fab_sim_open_key(w->sim, a, b, (uint8_t)spec->priority,
									  spec->transport - 1, who | 1ULL << 63);
					j->pp_conn[ci + 1] = fab_sim_open_key(w->sim, b, a, (uint8_t)spec->priority,
									      spec->transport - 1,
									      (who + 1) | 1ULL << 63);
				}
	}
	free(g);
	fab_log_printf(&w->log,
		       "fabscope INFO %s: %u GPUs, dp %u x tp %u x pp %u, %u micro-batches, %u buckets, overlap %s\n",
		       spec->name, j->n, j->dp, j->tp, j->pp, j->M, j->spec.buckets, spec->overlap ? "on" : "off");
	return 0;
fail:
	free(g);
	return FAB_EINVAL;
}

void fab_job_free(struct fab_job *j)
{
	for (uint32_t i = 0; j->dp_comm && i < j->pp * j->tp; i++)
		fab_comm_free(&j->dp_comm[i]);
	for (uint32_t i = 0; j->tp_comm && i < j->pp * j->dp; i++)
		fab_comm_free(&j->tp_comm[i]);
	jb_moe_free(j);
	for (uint32_t i = 0; j->wk && i < j->pp * j->dp; i++) {
		free(j->wk[i].act_have);
		free(j->wk[i].grad_have);
		free(j->wk[i].ops);
	}
	free(j->dp_comm);
	free(j->tp_comm);
	free(j->pp_conn);
	free(j->wk);
	free(j->gpu);
	free(j->iters);
	free(j->bucket_ready);
	free(j->done_at);
	free(j->dp_next);
	free(j->dp_busy);
	memset(j, 0, sizeof *j);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void fab_job_stats(const struct fab_job *j, struct fab_job_stats *o)
{
	memset(o, 0, sizeof *o);
	if (!j->niters)
		return;
	uint64_t *t = fab_xcalloc(j->niters, sizeof *t);
	double sum = 0, exposed = 0;
	for (uint32_t i = 0; i < j->niters; i++) {
		t[i] = j->iters[i].end_ps - j->iters[i].start_ps;
		sum += (double)t[i];
		exposed += (double)j->iters[i].exposed_ps;
	}
	qsort(t, j->niters, sizeof *t, cmp_u64);
	size_t r50 = (size_t)(0.50 * j->niters + 0.999999), r99 = (size_t)(0.99 * j->niters + 0.999999);
	o->mean_ps = sum / j->niters;
	o->p50_ps = (double)t[FAB_MAX(r50, 1) - 1];
	o->p99_ps = (double)t[FAB_MIN(FAB_MAX(r99, 1), j->niters) - 1];
	o->max_ps = (double)t[j->niters - 1];
	o->min_ps = (double)t[0];
	o->idle_fraction = sum > 0 ? exposed / sum : 0;
	free(t);
}
