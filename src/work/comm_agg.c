/*
 * comm_agg.c - a tree collective run aggregated on the flow engine
 * (flow.tree): NCCL's trees (the double binary tree of AllReduce, the
 * rooted tree of Broadcast and Reduce, each with its chains through the
 * servers) without their millions of steps.
 *
 * Each tree edge of every channel carries all its slices' bytes as one
 * transfer (NVLink inside a server), every edge posted at once, so the
 * fabric shares its ports among them as it shares them among the slices
 * in flight (their rates are solved together within a 256th of the cost
 * model's time: fab_sim_flow_batch).  When the last has arrived, the
 * operation ends when its pipeline allows.  S slices through a tandem of
 * servers, each serving a slice in sigma and delaying it by d, leave the
 * last after sum(sigma + d) + (S - 1) x the largest sigma (max-plus
 * algebra: the last slice waits at one edge for every slice before it,
 * and for itself at each).  In a tree the longest such path counts: leaf
 * up to the top and down to a leaf, through the edge where the S - 1
 * slices wait.  The first slice goes alone (sigma at the edge's rate on
 * an idle path: the pipeline fills before its edges share their ports);
 * the S - 1 wait at the rate the edge's transfer got: sigma = slice /
 * bytes x (arrival - start - latency).  d is the edge's latency and the
 * protocol's step overhead.  Four sweeps of each channel's tree give the
 * longest path through every edge, one pass over the edges the largest.
 */
#include <math.h>
#include <stdlib.h>

#include "comm_int.h"

#define NONE UINT32_MAX

/* the schedule's steps a tree holds: per channel, tree and slice, a send
 * and a receive for each edge both ways and a join per rank */
static double tree_sched_steps(const struct fab_comm *c, int op, uint64_t size, uint64_t chunk)
{
	double trees = op == FAB_OP_ALLREDUCE ? 2 : 1, per = (double)size / trees / c->channels;
	double slices = chunk ? ceil(per / (double)chunk) : 1;
	return 5.0 * c->nranks * c->channels * trees * FAB_MAX(slices, 1.0);
}

bool comm_tree_aggregate(const struct fab_comm *c, int op, int algo, uint64_t size)
{
	const struct fab_fabric_params *fp = fab_sim_fabric(c->w->sim);
	if (fp->engine != FAB_ENGINE_FLOW || algo != FAB_ALGO_TREE || fp->flow_tree == FAB_FLOW_RING_STEPS ||
	    c->nranks < 2)
		return false;
	if (op != FAB_OP_ALLREDUCE && op != FAB_OP_BROADCAST && op != FAB_OP_REDUCE)
		return false;
	if (fp->flow_tree == FAB_FLOW_RING_AGGREGATE)
		return true;
	/* auto: when the steps, with those of the communicators alongside,
	 * times the servers they span pass 2^28: each step's start and end
	 * solves the rates of a component that grows with the servers (256
	 * GPUs' LL128 trees of 64 MiB, 2.6 M steps on 32 servers, still run
	 * every step, as tests/validate/flow.sh checks them) */
	return tree_sched_steps(c, op, size, c->cur_chunk) * c->siblings * c->nservers > 268435456.0;
}

/* the layout of one channel's tree t, as the schedule builds it */
struct agg_tree {
	uint32_t *parent, (*kids)[3], *topdown;
	double *cup, *cdn, *sup, *sdn; /* per rank: its edge up and the edge down to it, sigma + delay, sigma */
	double *U, *D, *toroot, *R;
};

/* an edge's slice: sigma, its share of what its transfer took less the
 * path's latency (no less than alone), and the first slice's cost, alone
 * on the path plus the delay (latency, the protocol's step overhead) */
static void edge_cost(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch, fab_time_ps arr, uint64_t first,
		      uint64_t total, double *sigma, double *cost)
{
	bool net = fab_topo_gpu_server(c->topo, src) != fab_topo_gpu_server(c->topo, dst);
	uint32_t conn = net ? comm_send_conn(c, src, dst, ch) : 0;
	fab_time_ps lat = net ? fab_sim_conn_latency(c->w->sim, conn) : fab_sim_server(c->w->sim)->nvlink_lat_ps;
	double alone = (double)first / (net ? fab_sim_conn_rate(c->w->sim, conn) : c->bw_nvl_Bps) * 1e12;
	double took = (double)arr - (double)c->agg_t0 - (double)lat;
	*sigma = FAB_MAX((double)first / (double)total * took, alone);
	*cost = alone + (double)lat + (double)comm_step_overhead(c, net);
}

static void tree_layout(const struct fab_comm *c, struct agg_tree *g, uint32_t t, uint32_t ch, uint32_t root)
{
	fab_coll_tree(c->nranks, c->chan_order[ch], comm_tree_group(c), t, root, g->parent, g->kids, g->topdown);
}

static uint32_t edge_id(const struct fab_comm *c, uint32_t tc, uint32_t r, uint32_t dir)
{
	return (tc * c->nranks + r) * 2 + dir;
}

static void tree_done(struct fab_comm *c);

static void on_edge(void *obj, uint32_t e)
{
	struct fab_comm *c = obj;
	c->agg_arr[e] = fab_sim_now(c->w->sim);
	if (!--c->agg_left)
		tree_done(c);
}

/* the slices of a channel's tree: how many, the first's bytes on the wire
 * (the largest) and all their bytes on the wire */
static void tree_slices(const struct fab_comm *c, uint64_t elems, uint64_t *S, uint64_t *first, uint64_t *total)
{
	uint64_t bytes = elems * c->agg_eb, chunk = c->cur_chunk;
	*S = chunk && bytes > chunk ? (bytes + chunk - 1) / chunk : 1;
	*first = *total = 0;
	uint64_t base = elems / *S, rem = elems % *S;
	/* slices differ by one element at most: two sizes */
	uint64_t big = comm_wire_bytes(c->res.proto, (base + 1) * c->agg_eb),
		 small = comm_wire_bytes(c->res.proto, base * c->agg_eb);
	*first = rem ? big : small;
	*total = rem * big + (*S - rem) * small;
}

/* channel tree tc's elements: tree t's share of count, then channel ch's */
static uint64_t tc_elems(const struct fab_comm *c, uint64_t count, uint32_t trees, uint32_t t, uint32_t ch)
{
	uint64_t tl = count / trees + (t < count % trees ? 1 : 0);
	return tl / c->channels + (ch < tl % c->channels ? 1 : 0);
}

void comm_tree_aggregate_start(struct fab_comm *c, int op, uint64_t count, uint32_t root)
{
	uint32_t n = c->nranks, C = c->channels, T = op == FAB_OP_ALLREDUCE ? 2 : 1;
	bool up = op != FAB_OP_BROADCAST, down = op != FAB_OP_REDUCE;
	struct agg_tree g = {
		.parent = fab_xcalloc(n, sizeof *g.parent),
		.kids = fab_xcalloc(n, sizeof *g.kids),
		.topdown = fab_xcalloc(n, sizeof *g.topdown),
	};
	c->aggregate = true;
	c->agg_left = 1; /* held until every edge is posted */
	c->agg_floor_ps = 0;
	c->agg_root = T == 1 ? root : NONE;
	c->agg_t0 = fab_sim_now(c->w->sim);
	c->agg_arr = fab_xcalloc((size_t)T * C * n * 2, sizeof *c->agg_arr);
	c->sched.channels = T * C;
	c->sched.nsteps = 0;
	/* the edges end one by one, each a new solution of the rates of all
	 * that share ports with it: solved together within a 256th of the
	 * modelled time */
	double model_s = fab_comm_model(c, op, FAB_ALGO_TREE, c->res.proto, c->res.bytes);
	fab_sim_flow_batch(c->w->sim, +1, (fab_time_ps)(FAB_MAX(model_s, 0.0) * 1e12 / 256));
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t ch = 0; ch < C; ch++) {
			uint64_t S, first, total;
			tree_slices(c, tc_elems(c, count, T, t, ch), &S, &first, &total);
			if (!total)
				continue;
			c->sched.nsteps += (uint32_t)FAB_MIN(5.0 * n * S, 4e9 - c->sched.nsteps);
			tree_layout(c, &g, t, ch, c->agg_root);
			uint32_t tc = t * C + ch;
			for (uint32_t r = 0; r < n; r++) {
				uint32_t p = g.parent[r];
				if (p == NONE)
					continue;
				if (up)
					comm_agg_post(c, c->gpu[r], c->gpu[p], tc, total, on_edge,
						      edge_id(c, tc, r, 0));
				if (down)
					comm_agg_post(c, c->gpu[p], c->gpu[r], tc, total, on_edge,
						      edge_id(c, tc, r, 1));
			}
		}
	free(g.parent);
	free(g.kids);
	free(g.topdown);
	c->agg_count = count;
	c->agg_op = op;
	if (!--c->agg_left) /* the hold */
		tree_done(c);
}

/* The longest path of channel tree tc through each edge, with S - 1 more
 * slices at that edge: the tree's time, in ps. */
static double tree_time(struct fab_comm *c, struct agg_tree *g, uint32_t t, uint32_t ch, uint64_t elems)
{
	uint32_t n = c->nranks, tc = t * c->channels + ch;
	bool up = c->agg_op != FAB_OP_BROADCAST, down = c->agg_op != FAB_OP_REDUCE;
	uint64_t S, first, total;
	tree_slices(c, elems, &S, &first, &total);
	if (!total)
		return 0;
	tree_layout(c, g, t, ch, c->agg_root);
	double red = c->reduce_bps ? (double)fab_ser_ps(first, c->reduce_bps) : 0; /* a slice's reduction */
	uint32_t top = g->topdown[0];
	for (uint32_t r = 0; r < n; r++) {
		g->cup[r] = g->cdn[r] = g->sup[r] = g->sdn[r] = 0;
		uint32_t p = g->parent[r];
		if (p == NONE)
			continue;
		if (up) {
			edge_cost(c, c->gpu[r], c->gpu[p], tc, c->agg_arr[edge_id(c, tc, r, 0)], first, total,
				  &g->sup[r], &g->cup[r]);
			g->sup[r] += red;
			g->cup[r] += red;
		}
		if (down)
			edge_cost(c, c->gpu[p], c->gpu[r], tc, c->agg_arr[edge_id(c, tc, r, 1)], first, total,
				  &g->sdn[r], &g->cdn[r]);
	}
	/* bottom up: the longest way up from a leaf to each rank (U), down
	 * from it to a leaf (D) */
	for (uint32_t i = n; i-- > 0;) {
		uint32_t r = g->topdown[i];
		double u = 0, d = 0;
		for (uint32_t k = 0; k < 3; k++) {
			uint32_t kid = g->kids[r][k];
			if (kid == NONE)
				continue;
			u = FAB_MAX(u, g->U[kid] + g->cup[kid]);
			d = FAB_MAX(d, g->cdn[kid] + g->D[kid]);
		}
		g->U[r] = u;
		g->D[r] = d;
	}
	/* top down: from each rank up to the top (toroot), from the top down
	 * to it (R) */
	double head = up ? g->U[top] : 0, tail = down ? g->D[top] : 0, best = head + tail;
	g->toroot[top] = g->R[top] = 0;
	for (uint32_t i = 1; i < n; i++) {
		uint32_t r = g->topdown[i], p = g->parent[r];
		g->toroot[r] = g->cup[r] + g->toroot[p];
		g->R[r] = g->R[p] + g->cdn[r];
		double more = (double)(S - 1);
		if (up)
			best = FAB_MAX(best, g->U[r] + g->cup[r] + g->toroot[p] + tail + more * g->sup[r]);
		if (down)
			best = FAB_MAX(best, head + g->R[p] + g->cdn[r] + g->D[r] + more * g->sdn[r]);
	}
	return best;
}

/* every edge has arrived: the operation ends when the slowest channel's
 * tree allows */
static void tree_done(struct fab_comm *c)
{
	uint32_t n = c->nranks, T = c->agg_op == FAB_OP_ALLREDUCE ? 2 : 1;
	struct agg_tree g = {
		.parent = fab_xcalloc(n, sizeof *g.parent),
		.kids = fab_xcalloc(n, sizeof *g.kids),
		.topdown = fab_xcalloc(n, sizeof *g.topdown),
	};
	double *v = fab_xcalloc((size_t)8 * n, sizeof *v);
	g.cup = v, g.cdn = v + n, g.sup = v + 2 * n, g.sdn = v + 3 * n;
	g.U = v + 4 * n, g.D = v + 5 * n, g.toroot = v + 6 * n, g.R = v + 7 * n;
	double worst = 0;
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t ch = 0; ch < c->channels; ch++)
			worst = FAB_MAX(worst, tree_time(c, &g, t, ch, tc_elems(c, c->agg_count, T, t, ch)));
	free(v);
	free(g.parent);
	free(g.kids);
	free(g.topdown);
	fab_sim_flow_batch(c->w->sim, -1, 0);
	comm_agg_finish(c, c->agg_t0 + (fab_time_ps)(worst + 0.5));
}
