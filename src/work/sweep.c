/*
 * sweep.c - size sweeps (nccl-tests' -b -e -f -i -n -w) and rank placement.
 *
 * Timing follows nccl-tests: the warm-up iterations run first, then the
 * timed ones back to back; the row's time is the timed span divided by the
 * iterations.  algbw = size / time, busbw = algbw x the operation's factor
 * (GB/s = 1e9 bytes per second).  Between sizes the hosts synchronise, as
 * nccl-tests' do: the fabric rests SWEEP_REST_PS, long enough for what is
 * in flight to land, and every queue pair's congestion control starts
 * again (fab_sim_rest), so that a size's row does not depend on the sizes
 * before it.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "sweep.h"

static const struct {
	const char *name;
	uint32_t bytes;
} dtypes[FAB_DT_COUNT] = {
	[FAB_DT_INT8] = {"int8", 1},         [FAB_DT_UINT8] = {"uint8", 1}, [FAB_DT_INT32] = {"int32", 4},
	[FAB_DT_UINT32] = {"uint32", 4},     [FAB_DT_INT64] = {"int64", 8}, [FAB_DT_UINT64] = {"uint64", 8},
	[FAB_DT_HALF] = {"half", 2},         [FAB_DT_FLOAT] = {"float", 4}, [FAB_DT_DOUBLE] = {"double", 8},
	[FAB_DT_BFLOAT16] = {"bfloat16", 2},
};

uint32_t fab_dtype_bytes(int dt)
{
	return dt >= 0 && dt < FAB_DT_COUNT ? dtypes[dt].bytes : 1;
}

const char *fab_dtype_name(int dt)
{
	return dt >= 0 && dt < FAB_DT_COUNT ? dtypes[dt].name : "?";
}

int fab_place(const struct fab_topo *t, int placement, uint32_t nranks, uint64_t seed, uint64_t index, bool *used_in,
	      uint32_t *gpus, struct fab_err *err)
{
	uint32_t S = t->nservers, free_gpus = 0;
	for (uint32_t s = 0; s < S; s++)
		if (!used_in || !used_in[s])
			free_gpus += t->gpus_per_server;
	if (nranks > free_gpus)
		return fab_err_set(err, FAB_EINVAL, "gpus: %u GPUs asked, %u are free in the cluster", nranks,
				   free_gpus);
	uint32_t *order = fab_xcalloc(S, sizeof *order);
	for (uint32_t s = 0; s < S; s++)
		order[s] = s;
	if (placement == FAB_PLACE_SPREAD) {
		/* servers grouped by leaf, then one from each leaf in turn */
		uint32_t *leaf = fab_xcalloc(S, sizeof *leaf), n = 0;
		for (uint32_t s = 0; s < S; s++)
			leaf[s] = fab_topo_nic_leaf(t, s * t->nics_per_server);
		bool *used = fab_xcalloc(S, sizeof *used);
		while (n < S) {
			bool *leaf_taken = fab_xcalloc(t->nnodes, sizeof *leaf_taken);
			for (uint32_t s = 0; s < S; s++)
				if (!used[s] && !leaf_taken[leaf[s]]) {
					leaf_taken[leaf[s]] = true;
					used[s] = true;
					order[n++] = s;
				}
			free(leaf_taken);
		}
		free(leaf);
		free(used);
	} else if (placement == FAB_PLACE_RANDOM) {
		struct fab_rng r;
		fab_rng_init(&r, seed, fab_rng_stream(FAB_RNG_PLACEMENT, index));
		for (uint32_t i = S; i > 1; i--) {
			uint32_t j = (uint32_t)fab_rng_below(&r, i), tmp = order[i - 1];
			order[i - 1] = order[j];
			order[j] = tmp;
		}
	}
	/* drop the servers already taken, keep the order of the rest */
	uint32_t nfree = 0;
	for (uint32_t i = 0; i < S; i++)
		if (!used_in || !used_in[order[i]])
			order[nfree++] = order[i];
	uint32_t G = t->gpus_per_server, used = (nranks + G - 1) / G;
	for (uint32_t r = 0; r < nranks; r++)
		gpus[r] = placement == FAB_PLACE_SCATTER ? order[r % used] * G + r / used : order[r / G] * G + r % G;
	if (used_in)
		for (uint32_t i = 0; i < used; i++)
			used_in[order[i]] = true;
	free(order);
	return 0;
}

static int start_iteration(struct fab_sweep *sw);

/* the rest between two sizes */
#define SWEEP_REST_PS (100 * FAB_PS_PER_US)

static void rested(void *obj, uint32_t unused)
{
	(void)unused;
	struct fab_sweep *sw = obj;
	fab_sim_rest(sw->comm->w->sim);
	if (start_iteration(sw)) {
		sw->rc = sw->err.code;
		sw->finished = true;
	}
	fab_sim_hold(sw->comm->w->sim, -1);
}

/* For progress: a row's cost, its events in an iteration, about: every
 * rank's messages (one a step on each channel, at least a frame each) and
 * the frames of its share of the bus bytes on the wire (4 KiB).  A latency-bound row
 * on many ranks (a 4 KiB ring on 512 GPUs: a million messages) costs as
 * much as a large one, and no bytes-based weight says so. */
static double row_weight(const struct fab_comm *c, const struct fab_coll_params *p, uint64_t bytes, double *model_s)
{
	int algo = p->algo, proto = c->w->nccl.proto;
	fab_comm_select(c, p->op, bytes, &algo, &proto);
	*model_s = fab_comm_model(c, p->op, algo, proto, bytes);
	double n = c->nranks, N = FAB_MAX(1u, c->nservers), G = n / N, log2N = 0, log2n = 0;
	for (double k = 2; k <= N; k *= 2)
		log2N++;
	for (double k = 2; k <= n; k *= 2)
		log2n++;
	bool ar = p->op == FAB_OP_ALLREDUCE;
	uint32_t ring = fab_comm_ring_steps(p->op, c->nranks);
	double steps = algo == FAB_ALGO_RING ? (ring ? ring : n - 1)
		: algo == FAB_ALGO_TREE      ? (ar ? 2 : 1) * (G - 1 + log2N)
		: algo == FAB_ALGO_HIER      ? (ar ? 2 : 1) * (G - 1 + N - 1)
		: algo == FAB_ALGO_RHD       ? 2 * log2n
		: algo == FAB_ALGO_DIRECT    ? n - 1
					     : 2;
	/* LL carries a flag with every 8 bytes, LL128 8 bytes in 128 */
	double wire = proto == FAB_PROTO_LL ? 2 : proto == FAB_PROTO_LL128 ? 128.0 / 120 : 1;
	double ch = FAB_MAX(1u, c->channels);
	return n * (ch * FAB_MAX(steps, 1.0) + wire * fab_coll_busbw_factor(p->op, c->nranks) * (double)bytes / 4096);
}

/* Two iterations take the same time when they differ by under this part
 * of it; three in a row and the fabric repeats itself (every flow done,
 * congestion control back where it was): the iterations left would take
 * the same, and are counted without being simulated, unless something is
 * still due to change (a fault to start or end, background traffic). */
#define SWEEP_SAME 1e-4

static bool same_time(fab_time_ps a, fab_time_ps b)
{
	fab_time_ps d = a > b ? a - b : b - a;
	return (double)d <= SWEEP_SAME * (double)FAB_MAX(a, b);
}

static void row_finish(struct fab_sweep *sw, struct fab_sweep_row *row, fab_time_ps end, fab_time_ps last)
{
	uint32_t timed = sw->iter > sw->p.warmup ? sw->iter - sw->p.warmup : 0;
	double span = timed ? (double)(end - sw->timed_start) : 0;
	double secs = (span + (double)(sw->p.iters - timed) * (double)last) / 1e12 / sw->p.iters;
	row->iters_run = sw->iter;
	row->time_us = secs * 1e6;
	row->start_ps = timed ? sw->timed_start : end - last;
	row->end_ps = end;
	row->algbw_GBps = secs > 0 ? (double)row->bytes / secs / 1e9 : 0;
	row->busbw_GBps = row->algbw_GBps * fab_coll_busbw_factor(sw->p.op, sw->comm->nranks);
}

static void on_done(void *ctx, const struct fab_op_result *r)
{
	struct fab_sweep *sw = ctx;
	struct fab_sweep_row *row = &sw->rows[sw->cur];
	row->algo = r->algo;
	row->proto = r->proto;
	fab_time_ps took = r->end_ps - sw->iter_start;
	if (row->model_s > 0) /* the last iteration's time against the model's */
		sw->time_per_model = (double)took / 1e12 / row->model_s;
	sw->same = sw->iter > 0 && same_time(took, sw->last_ps) ? sw->same + 1 : 0;
	sw->last_ps = took;
	if (sw->iter + 1 == sw->p.warmup)
		sw->timed_start = r->end_ps; /* the timed span starts after the warm-up */
	sw->iter++;
	/* repeats count while nothing is due to change: no fault yet to start
	 * or end, no background traffic */
	bool repeats = sw->same >= 2 && !sw->p.every_iteration && !sw->p.background &&
		r->end_ps >= fab_sim_settled_from(sw->comm->w->sim);
	if (sw->iter == sw->p.warmup + sw->p.iters || repeats) {
		row_finish(sw, row, r->end_ps, took);
		sw->expect = sw->iter; /* the next rows: as many as this one ran */
		sw->cur++;
		if (sw->row_done)
			sw->row_done(sw->row_ctx, sw->cur - 1);
		sw->iter = 0;
		sw->same = 0;
		if (sw->cur == sw->nrows) {
			sw->finished = true;
			return;
		}
		fab_sim_hold(sw->comm->w->sim, +1);
		fab_work_timer(sw->comm->w, r->end_ps + SWEEP_REST_PS, rested, sw, 0);
		return;
	}
	if (start_iteration(sw)) {
		sw->rc = sw->err.code;
		sw->finished = true;
	}
}

static int start_iteration(struct fab_sweep *sw)
{
	struct fab_sweep_row *row = &sw->rows[sw->cur];
	sw->iter_start = fab_sim_now(sw->comm->w->sim);
	if (sw->iter == 0 && sw->p.warmup == 0)
		sw->timed_start = sw->iter_start;
	struct fab_coll_req req = {sw->p.op, sw->p.algo, row->count, fab_dtype_bytes(sw->p.dtype), sw->p.root};
	return fab_comm_start(sw->comm, &req, on_done, sw, &sw->err);
}

int fab_sweep_start(struct fab_sweep *sw, struct fab_comm *c, const struct fab_coll_params *p, struct fab_err *err)
{
	memset(sw, 0, sizeof *sw);
	sw->comm = c;
	sw->p = *p;
	if (!sw->p.iters)
		sw->p.iters = 1;
	uint32_t eb = fab_dtype_bytes(p->dtype);
	char why[160];
	if (p->algo != FAB_ALGO_AUTO &&
	    !fab_coll_supported(p->op, p->algo, c->nranks, c->ranks_per_server, why, sizeof why))
		return fab_err_set(err, FAB_EINVAL, "collective.algo: %s", why);
	if (fab_comm_algo_available(c, p->algo, err)) {
		char msg[sizeof err->msg];
		snprintf(msg, sizeof msg, "collective.%s", err->msg);
		return fab_err_set(err, FAB_EINVAL, "%s", msg);
	}
	if ((p->op == FAB_OP_BROADCAST || p->op == FAB_OP_REDUCE) && p->root >= c->nranks)
		return fab_err_set(err, FAB_EINVAL, "collective.root: rank %u does not exist (0..%u)", p->root,
				   c->nranks - 1);
	if (p->min_bytes > p->max_bytes)
		return fab_err_set(err, FAB_EINVAL, "collective.min_bytes: larger than max_bytes");
	for (uint64_t b = p->min_bytes;;) {
		uint64_t count = b / eb;
		bool block = p->op == FAB_OP_ALLGATHER || p->op == FAB_OP_REDUCESCATTER || p->op == FAB_OP_ALLTOALL;
		if (block)
			count = count / c->nranks * c->nranks;
		if (count) {
			sw->rows = fab_xrealloc(sw->rows, sw->nrows + 1, sizeof *sw->rows);
			struct fab_sweep_row *row = &sw->rows[sw->nrows++];
			memset(row, 0, sizeof *row);
			row->count = count;
			row->bytes = count * eb;
			row->weight = row_weight(c, p, row->bytes, &row->model_s);
		}
		uint64_t next = p->step_bytes ? b + p->step_bytes : b * (p->factor > 1 ? p->factor : 2);
		if (next > p->max_bytes || next <= b)
			break;
		b = next;
	}
	if (!sw->nrows)
		return fab_err_set(err, FAB_EINVAL,
				   "collective.max_bytes: no size in the range holds a whole element per rank");
	/* every size's schedule can be built, or the sweep is refused before
	 * anything runs or is printed */
	for (uint32_t i = 0; i < sw->nrows; i++) {
		struct fab_coll_req req = {p->op, p->algo, sw->rows[i].count, eb, p->root};
		if (fab_comm_fits(c, &req, err))
			return err->code;
	}
	sw->expect = sw->p.warmup + sw->p.iters;
	/* every size, the first too, begins at rest (rested) */
	fab_sim_hold(c->w->sim, +1);
	fab_work_timer(c->w, fab_sim_now(c->w->sim), rested, sw, 0);
	return 0;
}

void fab_sweep_free(struct fab_sweep *sw)
{
	free(sw->rows);
	memset(sw, 0, sizeof *sw);
}

double fab_sweep_avg_busbw(const struct fab_sweep *sw)
{
	double sum = 0;
	for (uint32_t i = 0; i < sw->nrows; i++)
		sum += sw->rows[i].busbw_GBps;
	return sw->nrows ? sum / sw->nrows : 0;
}

double fab_sweep_done(struct fab_sweep *sw, uint64_t events)
{
	if (sw->finished)
		return 1;
	double all = 0, work = 0, w = 0;
	for (uint32_t i = 0; i < sw->nrows; i++) {
		double wi = sw->rows[i].weight;
		if (i < sw->cur) {
			work += wi * sw->rows[i].iters_run;
			all += wi * sw->rows[i].iters_run;
		} else if (i == sw->cur) {
			work += wi * FAB_MIN(sw->iter, sw->expect);
			all += wi * FAB_MAX(sw->expect, sw->iter + 1);
			w = wi;
		} else {
			all += wi * sw->expect;
		}
	}
	/* an iteration ended since the last call: the events per weight of
	 * all the work so far (the cost of the rows to come) */
	if (work > sw->seen_work) {
		sw->seen_work = work;
		sw->seen_events = events;
		sw->events_per_weight = (double)events / work;
	}
	/* The iteration under way, the larger of two measures (each falls
	 * behind where the other does not): its events so far against what
	 * its weight costs (behind after rows whose events were mostly timers
	 * and rests), and its simulated time against the cost model's, scaled
	 * by the last iteration's time against the model's (behind while a
	 * large size starts: every queue fills, and a microsecond costs many
	 * more events than later) */
	double part = 0;
	const struct fab_sweep_row *row = &sw->rows[sw->cur];
	if (sw->events_per_weight > 0)
		part = (double)(events - sw->seen_events) / (sw->events_per_weight * w);
	if (row->model_s > 0)
		part = FAB_MAX(part,
			       (double)(fab_sim_now(sw->comm->w->sim) - sw->iter_start) / 1e12 /
				       (row->model_s * (sw->time_per_model > 0 ? sw->time_per_model : 1)));
	double done = work + w * FAB_MIN(part, 0.99);
	return all > 0 ? FAB_MIN(done / all, 0.999) : -1;
}
