/*
 * comm_run.c - an operation run on a communicator: its schedule executed
 * step by step on the engine (sends become messages on the connections
 * comm.c opens, or NVLink transfers inside a server), and the operations
 * run without a schedule: a ring aggregated on the flow engine, NVLink
 * SHARP, SHARP on the fabric.
 *
 * Protocols.  An operation runs with LL, LL128 or Simple: its steps move
 * 2x, 16/15 or 1x their bytes, wait for the protocol's step latency less
 * what the links they cross take, in chunks of the protocol's size; the
 * operation starts after the protocol's base latency.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm_int.h"

void comm_log_op(struct fab_comm *c, uint32_t channels, uint64_t chunk, uint32_t nsteps)
{
	if (!c->w->log.enabled)
		return;
	char a[32], b[32];
	fab_log_printf(&c->w->log,
		       "fabscope INFO %s: %s opCount %llu bytes %llu count %llu algo %s proto %s channels %u "
		       "chunk %llu steps %u start %s end %s time %.3f us\n",
		       c->name, fab_coll_op_title(c->res.op), (unsigned long long)c->res.op_count,
		       (unsigned long long)c->res.bytes, (unsigned long long)c->res.count,
		       fab_coll_algo_name(c->res.algo), fab_proto_name(c->res.proto), channels,
		       (unsigned long long)chunk, nsteps, fab_fmt_time(c->res.start_ps, a, sizeof a),
		       fab_fmt_time(c->res.end_ps, b, sizeof b), (double)(c->res.end_ps - c->res.start_ps) / 1e6);
}

static void finish_op(struct fab_comm *c)
{
	c->res.end_ps = fab_sim_now(c->w->sim);
	comm_replay_record(c);
	comm_log_op(c, c->sched.channels, c->cur_chunk, c->sched.nsteps);
	c->busy = false;
	free(c->sh_left);
	free(c->sh_stage);
	free(c->agg_arr);
	c->sh_left = c->sh_stage = NULL;
	c->agg_arr = NULL;
	fab_exec_free(&c->ex);
	if (c->aggregate)
		memset(&c->sched, 0, sizeof c->sched);
	fab_sched_free(&c->sched);
	free(c->parts);
	c->parts = NULL;
	fab_sim_hold(c->w->sim, -1);
	if (c->done)
		c->done(c->done_ctx, &c->res);
}

static void check_finished(struct fab_comm *c)
{
	if (c->busy && fab_exec_finished(&c->ex))
		finish_op(c);
}

static void on_delivered(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	if (c->parts && --c->parts[step])
		return; /* other stripes of this send still travel */
	fab_exec_delivered(&c->ex, step);
	fab_exec_pump(&c->ex);
	check_finished(c);
}

static void on_local_done(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	fab_exec_done(&c->ex, step);
	fab_exec_pump(&c->ex);
	check_finished(c);
}

/* a step's bytes on the wire under the running protocol */
uint64_t comm_wire_bytes(int proto, uint64_t b)
{
	return proto == FAB_PROTO_LL ? 2 * b : proto == FAB_PROTO_LL128 ? (b * 16 + 14) / 15 : b;
}

/* what a step costs under the running protocol on top of moving its
 * bytes: the protocol's step latency, less what the links already take
 * (NVLink's latency, or a network hop's as the cost model counts it: two
 * host links, two fabric links, two packets), which the engine simulates.
 * One value per kind of hop, so that sends posted together still start
 * together (the flow engine recomputes its shares at every start). */
fab_time_ps comm_step_overhead(const struct fab_comm *c, bool net)
{
	const struct fab_nccl_params *np = &c->w->nccl;
	int p = c->res.proto;
	fab_time_ps want = np->hop_ps[p] + (net ? np->net_ps[p] : 0);
	fab_time_ps links = net ? (fab_time_ps)(c->alpha_net_s * 1e12 + 0.5) : fab_sim_server(c->w->sim)->nvlink_lat_ps;
	return want > links ? want - links : 0;
}

/* the steps' connection slots of the last operation kept if this one asks
 * the same (the same schedule, the same connections), else forgotten */
static void keep_slots(struct fab_comm *c, const struct fab_coll_req *r)
{
	const struct fab_coll_req *k = &c->slot_req;
	bool same = c->step_slot_n == c->sched.nsteps && k->op == r->op && k->algo == r->algo && k->count == r->count &&
		k->elem_bytes == r->elem_bytes && k->root == r->root;
	if (same)
		return;
	c->step_slot = fab_xrealloc(c->step_slot, FAB_MAX(c->sched.nsteps, 1u), sizeof *c->step_slot);
	memset(c->step_slot, 0xff, (size_t)c->sched.nsteps * sizeof *c->step_slot);
	c->step_slot_n = c->sched.nsteps;
	c->slot_req = *r;
}

static void post_send(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	const struct fab_step *st = &c->ex.s->steps[step];
	uint32_t src = c->map[st->rank], dst = c->map[st->peer];
	uint64_t bytes = comm_wire_bytes(c->res.proto, st->bytes);
	if (fab_topo_gpu_server(c->topo, src) == fab_topo_gpu_server(c->topo, dst)) {
		if (c->parts)
			c->parts[step] = 1;
		fab_sim_post_local(c->w->sim, src, dst, bytes, fab_work_cookie(c->w, on_delivered, c, step));
		return;
	}
	uint32_t slot = step < c->step_slot_n ? c->step_slot[step] : UINT32_MAX;
	if (slot == UINT32_MAX) {
		slot = comm_send_slot(c, src, dst, st->channel);
		if (step < c->step_slot_n)
			c->step_slot[step] = slot;
	}
	uint32_t conn = c->conn_val[slot];
	/* NCCL's default (nccl.split_data_on_qps false): a message goes on one
	 * queue pair per NIC port, the connection's next in turn; split, it is
	 * striped over all of them */
	uint32_t P = c->topo->nic_ports ? c->topo->nic_ports : 1, Q = c->qps_per_conn, first = 0;
	if (!c->w->nccl.split_data_on_qps && Q > P) {
		first = (c->conn_rr[slot]++ % (Q / P)) * P;
		Q = P;
	}
	if (Q > bytes)
		Q = (uint32_t)FAB_MAX(bytes, 1);
	if (c->parts)
		c->parts[step] = Q;
	for (uint32_t q = 0; q < Q; q++)
		fab_sim_post(c->w->sim, conn + first + q, bytes / Q + (q < bytes % Q ? 1 : 0),
			     fab_work_cookie(c->w, on_delivered, c, step));
}

/* a send starts after its protocol's step overhead (a timer), then posts */
static void start_send(void *ctx, struct fab_exec *ex, uint32_t step)
{
	struct fab_comm *c = ctx;
	const struct fab_step *st = &ex->s->steps[step];
	uint32_t src = c->map[st->rank], dst = c->map[st->peer];
	fab_time_ps o = comm_step_overhead(c, fab_topo_gpu_server(c->topo, src) != fab_topo_gpu_server(c->topo, dst));
	if (o)
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + o, post_send, c, step);
	else
		post_send(c, step);
}

static void start_local(void *ctx, struct fab_exec *ex, uint32_t step)
{
	struct fab_comm *c = ctx;
	const struct fab_step *st = &ex->s->steps[step];
	if (st->kind == FAB_STEP_RECV_REDUCE && c->reduce_bps && st->bytes) {
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + fab_ser_ps(st->bytes, c->reduce_bps), on_local_done, c,
			       step);
		return;
	}
	fab_exec_done(ex, step); /* copies and plain receives take no time */
}

static const struct fab_exec_ops exec_ops = {start_send, start_local};

/* ---- a ring, aggregated (flow engine) ---- */

static void on_agg_done(void *obj, uint32_t arg)
{
	(void)arg;
	finish_op(obj);
}

void comm_agg_post(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch, uint64_t bytes, fab_work_fn fn,
		   uint32_t arg)
{
	if (fab_topo_gpu_server(c->topo, src) == fab_topo_gpu_server(c->topo, dst)) {
		c->agg_left++;
		fab_sim_post_local(c->w->sim, src, dst, bytes, fab_work_cookie(c->w, fn, c, arg));
		return;
	}
	uint32_t conn = comm_send_conn(c, src, dst, ch);
	uint32_t Q = (uint32_t)FAB_MIN((uint64_t)c->qps_per_conn, FAB_MAX(bytes, 1));
	for (uint32_t q = 0; q < Q; q++) {
		c->agg_left++;
		fab_sim_post(c->w->sim, conn + q, bytes / Q + (q < bytes % Q ? 1 : 0),
			     fab_work_cookie(c->w, fn, c, arg));
	}
}

void comm_agg_finish(struct fab_comm *c, fab_time_ps at)
{
	fab_work_timer(c->w, FAB_MAX(fab_sim_now(c->w->sim), at), on_agg_done, c, 0);
}

static void on_agg_delivered(void *obj, uint32_t arg)
{
	(void)arg;
	struct fab_comm *c = obj;
	if (--c->agg_left)
		return;
	comm_agg_finish(c, c->agg_floor_ps);
}

/* ring steps of one rank for op (0: not a ring operation) */
uint32_t fab_comm_ring_steps(int op, uint32_t n)
{
	return op == FAB_OP_ALLREDUCE ? 2 * (n - 1) : op == FAB_OP_REDUCESCATTER || op == FAB_OP_ALLGATHER ? n - 1 : 0;
}

/* The pipelining unit of an operation, as NCCL sizes it when
 * collective.chunk is 0: a step of the protocol's buffer (Simple 512 KiB,
 * LL 32 KiB of data, LL128 562.5 KiB of data); a tree with LL128 halves
 * it until every channel has enough chunks to fill its depth. */
static uint64_t op_chunk(const struct fab_comm *c, int algo, int proto, uint64_t size)
{
	if (c->chunk_bytes)
		return c->chunk_bytes;
	uint64_t chunk = proto == FAB_PROTO_LL ? 32768 : proto == FAB_PROTO_LL128 ? 576000 : 524288;
	if (algo == FAB_ALGO_TREE && proto == FAB_PROTO_LL128) {
		double G = c->ranks_per_server ? c->ranks_per_server : 1, N = c->nservers, depth = 1 + 0.1 * G;
		for (double k = 2; k <= N; k *= 2)
			depth++;
		uint64_t per = size / FAB_MAX(2 * c->channels, 1u);
		while ((double)(per / chunk) < depth * 64 / G && chunk > 131072)
			chunk /= 2;
		while ((double)(per / chunk) < depth * 16 / G && chunk > 32768)
			chunk /= 2;
	}
	return chunk;
}

/* the steps a ring's schedule holds: sends and receives of every rank,
 * channel and chunk */
static double ring_sched_steps(const struct fab_comm *c, int op, int algo, int proto, uint64_t size)
{
	double per = (double)size / c->nranks / c->channels;
	double chunks = ceil(per / (double)op_chunk(c, algo, proto, size));
	return 2.0 * fab_comm_ring_steps(op, c->nranks) * c->nranks * c->channels * FAB_MAX(chunks, 1.0);
}

static bool use_aggregate(const struct fab_comm *c, int op, int algo, int proto, uint64_t size)
{
	const struct fab_fabric_params *fp = fab_sim_fabric(c->w->sim);
	uint32_t steps = fab_comm_ring_steps(op, c->nranks);
	if (fp->engine != FAB_ENGINE_FLOW || algo != FAB_ALGO_RING || !steps || fp->flow_ring == FAB_FLOW_RING_STEPS)
		return false;
	if (fp->flow_ring == FAB_FLOW_RING_AGGREGATE)
		return true;
	/* auto: when the communicator lies in one server (its edges are
	 * NVLink's alone, which the fabric cannot slow: within 1.5% of every
	 * step from 64 KiB to 1 GiB on 8 GPUs, and a training step's tensor
	 * parallel all-reduces are thousands of them), or when the schedule
	 * would hold more than 4M steps, with those of the communicators that
	 * run alongside it (a job's groups) */
	return c->nservers == 1 || ring_sched_steps(c, op, algo, proto, size) * c->siblings > 4e6;
}

/* A schedule of steps taking bytes is built only in fewer steps than an
 * index counts and within 80% of the memory available (0 unknown: it
 * fits); else refused with what it is (what), what was over (counts: the
 * step index's limit) and the way out (way). */
static int sched_refuse(const struct fab_comm *c, double steps, double bytes, const char *what, const char *counts,
			const char *way, struct fab_err *err)
{
	uint64_t avail = fab_mem_available();
	if (steps < 2e9 && (!avail || bytes < 0.8 * (double)avail))
		return 0;
	return fab_err_set(err, FAB_EINVAL,
			   "%s: %s (about %.1f GiB), more than this machine's %.1f GiB available%s; %s", c->name, what,
			   bytes / (1 << 30), (double)avail / (1 << 30), steps < 2e9 ? "" : counts, way);
}

/* An all-to-all connects every pair of ranks on every channel, each
 * connection with its send and receive steps and its queue pair: measured
 * on 1,024 GPUs of 8 channels (8.4 M connections), 5.4 GiB of peak memory
 * on the flow engine and 10.1 GiB on the packet engine, about 680 and 1,300
 * bytes a connection.  One that would not fit is refused before it is
 * built, as a ring's is (ring_fits). */
static int alltoall_fits(const struct fab_comm *c, int op, int algo, uint64_t count, struct fab_err *err)
{
	if (algo != FAB_ALGO_DIRECT || op != FAB_OP_ALLTOALL)
		return 0;
	double n = c->nranks, ch = (double)FAB_MIN((uint64_t)c->channels, FAB_MAX(count, 1));
	double conns = n * (n - 1) * ch, steps = n + 2 * conns;
	bool flow = fab_sim_fabric(c->w->sim)->engine == FAB_ENGINE_FLOW;
	char what[160];
	snprintf(
		what, sizeof what,
		"an all-to-all of %u ranks on %.0f channels would open %.3g connections, each with its send and receive",
		c->nranks, ch, conns);
	return sched_refuse(
		c, steps, conns * (flow ? 680.0 : 1300.0), what, " (and more steps than a schedule can count)",
		"fewer ranks (a job's mixture-of-experts all-to-alls run within groups of model.ep replicas) or "
		"fewer channels (collective.channels)",
		err);
}

/* A ring's schedule that would not fit (in this machine's memory, or in a
 * step index) is refused before it is built, with the way out. */
static int ring_fits(const struct fab_comm *c, int op, int algo, int proto, uint64_t size, struct fab_err *err)
{
	if (algo != FAB_ALGO_RING || !fab_comm_ring_steps(op, c->nranks))
		return 0;
	double steps = ring_sched_steps(c, op, algo, proto, size);
	char what[160];
	snprintf(what, sizeof what, "a ring of %u ranks, %u channels, %s: its schedule would hold %.3g steps",
		 c->nranks, c->channels, fab_coll_op_title(op), steps);
	return sched_refuse(
		c, steps, steps * (sizeof(struct fab_step) + 2 * sizeof(uint32_t)), /* a step and its dependencies */
		what, " (and more steps than it can count)",
		"use the flow engine (engine: flow, which aggregates a ring), fewer ranks or a smaller size", err);
}

/* a schedule that would not fit, refused: a ring's or an all-to-all's */
static int sched_check(const struct fab_comm *c, int op, int algo, int proto, uint64_t size, uint64_t count,
		       struct fab_err *err)
{
	int rc = ring_fits(c, op, algo, proto, size, err);
	return rc ? rc : alltoall_fits(c, op, algo, count, err);
}

int fab_comm_fits(const struct fab_comm *c, const struct fab_coll_req *r, struct fab_err *err)
{
	uint64_t size, in, out;
	fab_coll_sizes(r->op, r->count, r->elem_bytes, c->nranks, &size, &in, &out);
	int algo = r->algo, proto = c->w->nccl.proto;
	fab_comm_select(c, r->op, size, &algo, &proto);
	/* (aggregated, no schedule is built; a tree's is never refused) */
	if (use_aggregate(c, r->op, algo, proto, size) || algo == FAB_ALGO_NVLS || algo == FAB_ALGO_SHARP)
		return 0;
	return sched_check(c, r->op, algo, proto, size, r->count, err);
}

static void ring_aggregate_start(struct fab_comm *c, int op, uint64_t size)
{
	uint32_t n = c->nranks, steps = fab_comm_ring_steps(op, n);
	uint64_t per_step = comm_wire_bytes(c->res.proto, size / n / c->channels), bytes = per_step * steps;
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	double lap_s = 0; /* the slowest channel's lap: every edge's chunk alone plus its latency */
	c->aggregate = true;
	c->agg_left = 1; /* held until every edge is posted */
	c->sched.channels = c->channels;
	c->sched.nsteps = 2 * steps * n * c->channels;
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		double lap = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t src = c->gpu[c->chan_order[ch][i]], dst = c->gpu[c->chan_order[ch][(i + 1) % n]];
			if (fab_topo_gpu_server(c->topo, src) == fab_topo_gpu_server(c->topo, dst)) {
				lap += (double)(sp->nvlink_lat_ps + comm_step_overhead(c, false)) / 1e12 +
					(double)per_step / c->bw_nvl_Bps;
				comm_agg_post(c, src, dst, ch, bytes, on_agg_delivered, 0);
				continue;
			}
			uint32_t conn = comm_send_conn(c, src, dst, ch);
			fab_time_ps lat = fab_sim_conn_latency(c->w->sim, conn);
			lap += (double)(lat + comm_step_overhead(c, true)) / 1e12 +
				(double)per_step / fab_sim_conn_rate(c->w->sim, conn);
			comm_agg_post(c, src, dst, ch, bytes, on_agg_delivered, 0);
		}
		lap_s = FAB_MAX(lap_s, lap);
	}
	c->agg_floor_ps = fab_sim_now(c->w->sim) + (fab_time_ps)((double)steps / n * lap_s * 1e12);
	on_agg_delivered(c, 0); /* the hold */
}

/* NVLink SHARP: each GPU pushes its buffer into the NVSwitch, which
 * reduces and multicasts the result; a GPU's NVLink carries S out and S in
 * at nvls_efficiency of its rate, and the operation ends when the last
 * GPU is done */
static void nvls_start(struct fab_comm *c, uint64_t size)
{
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	double nvl = sp->nvlink_eff > 0 ? sp->nvlink_eff : 1, eff = sp->nvls_eff > 0 ? sp->nvls_eff : 1;
	uint64_t bytes = (uint64_t)((double)size * nvl / eff + 0.5); /* the copies' pace is nvlink_efficiency */
	c->aggregate = true;
	c->agg_left = 1;
	c->sched.channels = c->channels;
	c->sched.nsteps = c->nranks;
	c->agg_floor_ps = 0;
	for (uint32_t r = 0; r < c->nranks; r++) {
		c->agg_left++;
		fab_sim_post_local(c->w->sim, c->gpu[r], c->gpu[r], bytes,
				   fab_work_cookie(c->w, on_agg_delivered, c, 0));
	}
	on_agg_delivered(c, 0); /* the hold */
}

/* In-network reduction (SHARP, NCCL's CollNet): the buffer goes in parts
 * of G x 512 KiB through three stages, a part entering the first when the
 * one before has left it: a reduce-scatter inside each server (each GPU
 * sends (G-1)/G of the part over NVLink); the switches' reduction (each
 * GPU's NIC sends its 1/G shard up and receives the reduced shard back,
 * emulated as one message from it to the NIC of the same rail in the next
 * server, so every NIC link carries the shard once each way, and a link
 * between switches one shard per crossing where SHARP's tree would carry
 * one per switch); an all-gather inside each server. */
static void sharp_stage(struct fab_comm *c, uint32_t p);

static void on_sharp(void *obj, uint32_t p)
{
	struct fab_comm *c = obj;
	if (--c->sh_left[p])
		return;
	if (++c->sh_stage[p] == 3) {
		on_agg_delivered(c, 0); /* the part is done */
		return;
	}
	if (c->sh_stage[p] == 1 && c->sh_next < c->sh_parts) {
		uint32_t q = c->sh_next++;
		sharp_stage(c, q);
	}
	sharp_stage(c, p);
}

static void sharp_stage(struct fab_comm *c, uint32_t p)
{
	uint32_t n = c->nranks, G = c->ranks_per_server, N = n / G;
	c->sh_left[p] = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g = c->hier_gpu[i];
		uint32_t cookie = fab_work_cookie(c->w, on_sharp, c, p);
		if (c->sh_stage[p] != 1) { /* reduce-scatter or all-gather: (G-1)/G of the part over NVLink */
			fab_sim_post_local(c->w->sim, g, g, c->sh_bytes * (G - 1) / G, cookie);
			continue;
		}
		uint32_t peer = c->hier_gpu[((i / G + 1) % N) * G + i % G];
		uint32_t slot = comm_conn_slot(c, g, peer, false, fab_topo_gpu_nic(c->topo, g),
					       fab_topo_gpu_nic(c->topo, peer), 0);
		fab_sim_post(c->w->sim, c->conn_val[slot], FAB_MAX(c->sh_bytes / G, 1), cookie);
	}
}

static void sharp_start(struct fab_comm *c, uint64_t size)
{
	uint64_t G = c->ranks_per_server, part = G * 524288;
	c->sh_parts = (uint32_t)FAB_MAX((size + part - 1) / part, 1);
	c->sh_bytes = (size + c->sh_parts - 1) / c->sh_parts;
	c->sh_left = fab_xcalloc(c->sh_parts, sizeof *c->sh_left);
	c->sh_stage = fab_xcalloc(c->sh_parts, sizeof *c->sh_stage);
	c->aggregate = true;
	c->agg_left = c->sh_parts;
	c->agg_floor_ps = 0;
	c->sched.channels = 1;
	c->sched.nsteps = 3 * c->sh_parts * c->nranks;
	c->sh_next = 1;
	sharp_stage(c, 0);
}

/* the operation begins once its protocol's base latency has passed */
static void begin_op(void *obj, uint32_t agg)
{
	struct fab_comm *c = obj;
	if (c->res.algo == FAB_ALGO_NVLS) {
		nvls_start(c, c->res.bytes);
		return;
	}
	if (c->res.algo == FAB_ALGO_SHARP) {
		sharp_start(c, c->res.bytes);
		return;
	}
	if (agg == 2) {
		comm_tree_aggregate_start(c, c->res.op, c->res.count, c->agg_root);
		return;
	}
	if (agg) {
		ring_aggregate_start(c, c->res.op, c->res.bytes);
		return;
	}
	fab_exec_init(&c->ex, &c->sched, &exec_ops, c);
	fab_exec_start(&c->ex);
	check_finished(c);
}

int fab_comm_start(struct fab_comm *c, const struct fab_coll_req *r, fab_comm_done_fn done, void *ctx,
		   struct fab_err *err)
{
	if (c->busy)
		return fab_err_set(err, FAB_EINTERNAL, "%s: an operation is already running", c->name);
	uint64_t size, in, out;
	fab_coll_sizes(r->op, r->count, r->elem_bytes, c->nranks, &size, &in, &out);
	int algo = r->algo, proto = c->w->nccl.proto;
	fab_comm_select(c, r->op, size, &algo, &proto);
	if (comm_replay_start(c, r, algo, done, ctx))
		return 0;
	struct fab_coll_args a = {
		.op = r->op,
		.algo = algo,
		.nranks = c->nranks,
		.count = r->count,
		.elem_bytes = r->elem_bytes,
		.root = r->root,
		.channels = c->channels,
		.chunk_bytes = c->cur_chunk = op_chunk(c, algo, proto, size),
		.ranks_per_node = c->ranks_per_server,
		.chan_order = (const uint32_t *const *)c->chan_order,
		.order = c->chan_order[0],
		.tree_group = comm_tree_group(c),
	};
	if (algo == FAB_ALGO_HIER)
		a.order = NULL, a.chan_order = NULL;
	/* no schedule to build */
	uint32_t agg = comm_tree_aggregate(c, r->op, algo, size)
		? 2
		: use_aggregate(c, r->op, algo, proto, size) || algo == FAB_ALGO_NVLS || algo == FAB_ALGO_SHARP;
	c->agg_eb = r->elem_bytes;
	c->agg_root = r->root;
	int rc = agg ? 0 : sched_check(c, r->op, algo, proto, size, r->count, err);
	if (!rc && !agg)
		rc = fab_coll_build(&a, &c->sched, err);
	if (rc)
		return rc;
	if (!agg)
		keep_slots(c, r);
	c->map = algo == FAB_ALGO_HIER ? c->hier_gpu : c->gpu;
	c->res = (struct fab_op_result){.op = r->op,
					.algo = algo,
					.proto = proto,
					.bytes = size,
					.count = r->count,
					.start_ps = fab_sim_now(c->w->sim),
					.op_count = c->ops++};
	c->done = done;
	c->done_ctx = ctx;
	c->busy = true;
	c->aggregate = false;
	if (!agg && c->qps_per_conn > 1)
		c->parts = fab_xcalloc(c->sched.nsteps ? c->sched.nsteps : 1, sizeof *c->parts);
	fab_sim_hold(c->w->sim, +1);
	fab_time_ps base = algo == FAB_ALGO_NVLS ? c->w->nccl.nvls_ps
		: algo == FAB_ALGO_SHARP         ? c->w->nccl.sharp_ps
						 : c->w->nccl.base_ps[proto];
	if (base)
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + base, begin_op, c, agg);
	else
		begin_op(c, agg);
	return 0;
}
