/*
 * comm_replay.c - operations inside one server, run once and then
 * repeated.
 *
 * NVLink is modelled per GPU: one serialising egress (when it is free next)
 * and the link's latency, nothing shared with the fabric.  So an operation
 * whose ranks all sit in one server, started while their GPUs' NVLink is
 * idle, takes a time that hangs only on the request, as long as nothing
 * else sends over those GPUs' NVLink meanwhile.  Every poster of NVLink
 * transfers says beforehand which GPUs it may use (fab_work_nvl_use:
 * communicators with two ranks or more in a server, all of a
 * communicator's GPUs where NVLink SHARP or SHARP can run, pipeline sends
 * inside a server); a communicator that is the only user of its GPUs runs
 * each distinct request once, keeps its time and the instant each GPU's
 * NVLink is free again, and repeats them: the same times to the
 * picosecond, without the events.  A training job's tensor-parallel
 * all-reduces, millions a step at scale, run so (the job's `replay` key).
 */
#include <stdlib.h>
#include <string.h>

#include "comm_int.h"

#define REPLAY_MAX 8 /* distinct requests kept a communicator */

struct replay_entry {
	struct fab_coll_req req;
	fab_time_ps dur_ps;
	int algo, proto;
	uint64_t bytes, chunk;
	uint32_t channels, nsteps;
	int64_t *free_at; /* per rank: its NVLink free again this long after the start; -1: untouched */
};

struct comm_replay {
	struct replay_entry e[REPLAY_MAX];
	uint32_t n;
	int rec; /* the entry the running operation records; -1: none */
};

void fab_work_nvl_use(struct fab_work *w, uint32_t gpu)
{
	if (!w->nvl_users)
		w->nvl_users = fab_xcalloc(w->topo->ngpus, sizeof *w->nvl_users);
	w->nvl_users[gpu]++;
}

/* a communicator sends over NVLink where two of its ranks share a server,
 * and from every GPU where SHARP can run, or NVLink SHARP (one server) */
void comm_nvl_register(struct fab_comm *c)
{
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	bool all = sp->sharp || (sp->nvls && c->nservers == 1);
	uint32_t *per = fab_xcalloc(c->topo->nservers, sizeof *per);
	for (uint32_t r = 0; r < c->nranks; r++)
		per[fab_topo_gpu_server(c->topo, c->gpu[r])]++;
	for (uint32_t r = 0; r < c->nranks; r++)
		if (all || per[fab_topo_gpu_server(c->topo, c->gpu[r])] > 1) {
			fab_work_nvl_use(c->w, c->gpu[r]);
			c->nvl_reg = true;
		}
	free(per);
}

/* whether c may replay at all: one server, its GPUs' NVLink its own */
static bool eligible(struct fab_comm *c)
{
	if (c->replay_ok)
		return c->replay_ok > 0;
	bool ok = c->replay && c->nservers == 1;
	for (uint32_t r = 0; ok && r < c->nranks; r++)
		ok = (c->w->nvl_users ? c->w->nvl_users[c->gpu[r]] : 0) == (c->nvl_reg ? 1u : 0u);
	c->replay_ok = ok ? 1 : -1;
	if (ok)
		c->rp = fab_xcalloc(1, sizeof *c->rp);
	return ok;
}

static bool same_req(const struct fab_coll_req *a, const struct fab_coll_req *b)
{
	return a->op == b->op && a->algo == b->algo && a->count == b->count && a->elem_bytes == b->elem_bytes &&
		a->root == b->root;
}

static void replay_done(void *obj, uint32_t idx)
{
	struct fab_comm *c = obj;
	const struct replay_entry *e = &c->rp->e[idx];
	c->res.end_ps = fab_sim_now(c->w->sim);
	comm_log_op(c, e->channels, e->chunk, e->nsteps);
	c->busy = false;
	fab_sim_hold(c->w->sim, -1);
	if (c->done)
		c->done(c->done_ctx, &c->res);
}

bool comm_replay_start(struct fab_comm *c, const struct fab_coll_req *r, int algo, fab_comm_done_fn done, void *ctx)
{
	if (!eligible(c))
		return false;
	struct comm_replay *rp = c->rp;
	rp->rec = -1;
	if (algo == FAB_ALGO_SHARP)
		return false; /* it crosses the fabric */
	fab_time_ps now = fab_sim_now(c->w->sim);
	for (uint32_t k = 0; k < c->nranks; k++)
		if (fab_sim_local_free(c->w->sim, c->gpu[k]) > now)
			return false; /* not idle: the time would differ */
	for (uint32_t i = 0; i < rp->n; i++) {
		const struct replay_entry *e = &rp->e[i];
		if (!same_req(&e->req, r))
			continue;
		c->res = (struct fab_op_result){.op = r->op,
						.algo = e->algo,
						.proto = e->proto,
						.bytes = e->bytes,
						.count = r->count,
						.start_ps = now,
						.op_count = c->ops++};
		c->cur_chunk = e->chunk;
		c->done = done;
		c->done_ctx = ctx;
		c->busy = true;
		fab_sim_hold(c->w->sim, +1);
		for (uint32_t k = 0; k < c->nranks; k++)
			if (e->free_at[k] >= 0)
				fab_sim_local_set_free(c->w->sim, c->gpu[k], now + (fab_time_ps)e->free_at[k]);
		fab_work_timer(c->w, now + e->dur_ps, replay_done, c, i);
		return true;
	}
	if (rp->n < REPLAY_MAX) {
		rp->rec = (int)rp->n;
		rp->e[rp->n].req = *r;
	}
	return false;
}

void comm_replay_record(struct fab_comm *c)
{
	struct comm_replay *rp = c->rp;
	if (!rp || rp->rec < 0)
		return;
	struct replay_entry *e = &rp->e[rp->rec];
	rp->rec = -1;
	e->dur_ps = c->res.end_ps - c->res.start_ps;
	e->algo = c->res.algo;
	e->proto = c->res.proto;
	e->bytes = c->res.bytes;
	e->chunk = c->cur_chunk;
	e->channels = c->sched.channels;
	e->nsteps = c->sched.nsteps;
	e->free_at = fab_xcalloc(c->nranks, sizeof *e->free_at);
	for (uint32_t k = 0; k < c->nranks; k++) {
		fab_time_ps f = fab_sim_local_free(c->w->sim, c->gpu[k]);
		e->free_at[k] = f > c->res.start_ps ? (int64_t)(f - c->res.start_ps) : -1;
	}
	rp->n++;
}

void comm_replay_free(struct fab_comm *c)
{
	if (!c->rp)
		return;
	for (uint32_t i = 0; i < c->rp->n; i++)
		free(c->rp->e[i].free_at);
	free(c->rp);
	c->rp = NULL;
}
