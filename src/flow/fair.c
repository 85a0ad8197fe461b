/*
 * fair.c - `flow.queues: fair`: transfers at max-min fair shares of the
 * ports they cross, with no queues (the queue model's table: queue.h).
 *
 * Transfers share ports max-min fairly (maxmin.c), each port's capacity
 * being its payload rate: line rate (a NIC's capped by PCIe) x MTU / (MTU
 * + 82 bytes of headers, preamble and gap).  Their ACKs take their share
 * of the ports on the way back (86 wire bytes per `ack_every` data
 * packets, on the reverse 5-tuple's path): a port offers data its capacity
 * less the ACK load of the transfers whose ACKs cross it, at their current
 * rates.  That load is updated when their rates change, and re-solves a
 * port's component when one change moves it by more than 1% of the port's
 * payload rate: a fixed point reached in a round or two, which keeps ACK
 * paths out of components (with them, a ring would be one).  When
 * transfers start or finish, only the connected component of ports and
 * transfers they touch is recomputed, once per instant however many
 * changed at it (or, with flow.batch, within that time of each other: new
 * transfers wait that long for a rate, finished ones leave their share
 * unused that long).  With no queue on the way, a message's last byte
 * reaches the destination after the path's latencies (flow.c: on_done).
 *
 * Not modelled: queueing delay, PFC, ECN and DCQCN (fifo.c, fifo_dcqcn.c).
 * In the time series what a source sends crosses its whole path at once.
 */
#include <math.h>
#include <stdlib.h>

#include "flow_int.h"
#include "queue.h"

static void fair_init(struct flsim *s)
{
	fab_maxmin_init(&s->fl->mm);
}

static void fair_free(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	fab_maxmin_free(&fl->mm);
	free(fl->cports);
	free(fl->cqps);
	free(fl->off);
	free(fl->idx);
	free(fl->ccap);
	free(fl->crate);
	free(fl->pload);
	free(fl->pmax);
	free(fl->plvl);
	free(fl->cbott);
	free(fl->seed);
}

/* a transfer's rate changes to r: its ACKs load the reverse path so much */
static void set_ack_load(struct flsim *s, struct fl_qp *q, double r)
{
	double d = s->fl->ack_frac * (r - q->rate);
	if (d == 0)
		return;
	for (uint32_t h = q->nfwd; h < q->npath; h++) {
		struct fl_port *p = &s->fl->ports[q->path[h]];
		p->ack_load += d;
		if (p->ack_load < 0)
			p->ack_load = 0;
		/* (flow.solve local: what the load moved since the port was
		 * last solved, a port being solved only where a change reaches) */
		double moved = s->c.fp.flow_solve ? p->ack_load - p->ack_solved : d;
		if (fabs(moved) > 1e-2 * p->payload_per_ps)
			fl_mark_dirty(s, q->path[h]);
	}
}

static void port_add(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	for (uint32_t h = 0; h < q->nfwd; h++) {
		fl_member_add(s, id, q, h);
		fl_mark_dirty(s, q->path[h]);
	}
}

static void port_remove(struct flsim *s, struct fl_qp *q)
{
	set_ack_load(s, q, 0);
	for (uint32_t h = 0; h < q->nfwd; h++) {
		fl_member_remove(s, q, h);
		fl_mark_dirty(s, q->path[h]);
	}
}

/* a transfer's new rate: what it sent at the old one counted, its ACK
 * load and completion moved */
static void set_rate_as(struct flsim *s, uint32_t id, double r, bool again)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	q->rem -= q->rate * (double)(s->c.now_ps - q->t_last);
	if (q->rem < 0)
		q->rem = 0;
	q->t_last = s->c.now_ps;
	/* an unchanged rate keeps its completion time (unless again: its
	 * NIC's round robin moved) */
	if (r == q->rate && fl_done_due(fl, id) && !again)
		return;
	set_ack_load(s, q, r);
	q->rate = q->next_rate = r;
	if (r > 0)
		fl_done_set(fl, id, fl_finish_at(s, q));
	else
		fl_done_clear(fl, id);
}

static void set_rate(struct flsim *s, uint32_t id, double r)
{
	set_rate_as(s, id, r, false);
}

/* the round robins of the problem's NIC ports at the new rates: those
 * solved (stamp st) at crate, the others at their own (flow.solve local;
 * a component holds every transfer of its ports) */
static void rank_nics(struct flsim *s, uint32_t np, uint32_t st)
{
	struct fl_state *fl = s->fl;
	for (uint32_t i = 0; i < np; i++) {
		const struct fl_port *p = &fl->ports[fl->cports[i]];
		if (s->ports[fl->cports[i]].is_switch)
			continue;
		double sum = 0;
		for (uint32_t j = 0; j < p->n; j++) {
			const struct fl_qp *t = &fl->qps[p->qp[j]];
			sum += t->stamp == st ? fl->crate[t->local] : t->rate;
		}
		fl_rank_nic(s, fl->cports[i], sum);
	}
}

static void grow_u32(uint32_t **p, size_t *cap, size_t need)
{
	if (*cap >= need)
		return;
	*cap = need + need / 2 + 64;
	*p = fab_xrealloc(*p, *cap, sizeof **p);
}

/* a port joins the component being gathered (once) */
static void comp_port(struct fl_state *fl, uint32_t port, uint32_t st, uint32_t *np, size_t *cap_p)
{
	struct fl_port *p = &fl->ports[port];
	if (p->stamp == st)
		return;
	p->stamp = st;
	grow_u32(&fl->cports, cap_p, *np + 1);
	p->local = *np;
	fl->cports[(*np)++] = port;
}

/* ---- flow.solve: local ----
 * A change re-solves the transfers it reaches, not its whole component.
 * The problem starts with the transfers that started and the ports that
 * changed (a transfer left, a capacity or ACK load moved); the transfers
 * outside it that cross its ports count at their rates as load.  Solved,
 * every transfer outside is checked on the problem's ports: max-min fair
 * rates are those where every transfer has a bottleneck, a full port
 * where no other transfer gets more.  One joins the problem (with its
 * ports) when a port it crosses is over its capacity, when it gets more
 * than a transfer of the problem that froze at a port they share, or when
 * its bottleneck was one of the problem's ports and no port of the
 * problem is one any more.  Solved again until none joins: the component's
 * shares, but for the ACKs' load (a port re-solved only once it moved 1%
 * of the port's rate since its last solve), re-solving only where the
 * change reaches. */
#define LOCAL_EPS 1e-9
#define LOCAL_TINY 1e-15 /* bytes per ps */

static void local_seed(struct flsim *s, uint32_t id)
{
	struct fl_state *fl = s->fl;
	grow_u32(&fl->seed, &fl->cap_seed, fl->nseed + 1);
	fl->seed[fl->nseed++] = id;
}

/* transfer id joins the problem, and its ports */
static void local_join(struct fl_state *fl, uint32_t id, uint32_t st, uint32_t *np, uint32_t *nq)
{
	struct fl_qp *q = &fl->qps[id];
	if (q->stamp == st)
		return;
	q->stamp = st;
	grow_u32(&fl->cqps, &fl->cap_cq, *nq + 1);
	q->local = *nq;
	fl->cqps[(*nq)++] = id;
	for (uint32_t h = 0; h < q->nfwd; h++)
		comp_port(fl, q->path[h], st, np, &fl->cap_cp);
}

static void grow_d(double **p, size_t need)
{
	*p = fab_xrealloc(*p, need, sizeof **p);
}

/* the problem's scratch for np ports and nq transfers */
static void local_room(struct fl_state *fl, uint32_t np, uint32_t nq)
{
	if (fl->cap_pl < np) {
		fl->cap_pl = np + np / 2 + 64;
		grow_d(&fl->pload, fl->cap_pl), grow_d(&fl->pmax, fl->cap_pl), grow_d(&fl->plvl, fl->cap_pl);
		grow_d(&fl->ccap, fl->cap_pl);
	}
	if (fl->cap_cb < (size_t)nq + 1) {
		fl->cap_cb = nq + nq / 2 + 64;
		fl->cbott = fab_xrealloc(fl->cbott, fl->cap_cb, sizeof *fl->cbott);
		fl->off = fab_xrealloc(fl->off, fl->cap_cb, sizeof *fl->off);
		grow_d(&fl->crate, fl->cap_cb);
	}
}

static double port_cap(const struct fl_port *p)
{
	return FAB_MAX(p->payload_per_ps - p->ack_load, 0.0);
}

/* the problem's ports and transfers solved, the outsiders as load */
static void local_round(struct fl_state *fl, uint32_t st, uint32_t np, uint32_t nq)
{
	local_room(fl, np, nq);
	for (uint32_t i = 0; i < np; i++) {
		const struct fl_port *p = &fl->ports[fl->cports[i]];
		double bg = 0, mx = 0;
		for (uint32_t k = 0; k < p->n; k++) {
			const struct fl_qp *t = &fl->qps[p->qp[k]];
			if (t->stamp != st) {
				bg += t->rate;
				mx = FAB_MAX(mx, t->rate);
			}
		}
		fl->ports[fl->cports[i]].ack_solved = p->ack_load;
		fl->pload[i] = bg;
		fl->pmax[i] = mx;
		fl->plvl[i] = -1;
		fl->ccap[i] = FAB_MAX(port_cap(p) - bg, 0.0);
	}
	size_t ne = 0;
	for (uint32_t k = 0; k < nq; k++) {
		const struct fl_qp *q = &fl->qps[fl->cqps[k]];
		fl->off[k] = (uint32_t)ne;
		grow_u32(&fl->idx, &fl->cap_ci, ne + q->nfwd);
		for (uint32_t h = 0; h < q->nfwd; h++)
			fl->idx[ne++] = fl->ports[q->path[h]].local;
	}
	fl->off[nq] = (uint32_t)ne;
	fl->mm.bott = fl->cbott;
	fab_maxmin_solve(&fl->mm, np, fl->ccap, nq, fl->off, fl->idx, fl->crate);
	fl->mm.bott = NULL;
	for (uint32_t k = 0; k < nq; k++) {
		double r = fl->crate[k];
		for (uint32_t e = fl->off[k]; e < fl->off[k + 1]; e++) {
			fl->pload[fl->idx[e]] += r;
			fl->pmax[fl->idx[e]] = FAB_MAX(fl->pmax[fl->idx[e]], r);
		}
		if (fl->cbott[k] != UINT32_MAX)
			fl->plvl[fl->cbott[k]] = FAB_MAX(fl->plvl[fl->cbott[k]], r);
	}
}

/* port i of the problem (its first np0) is full, and t gets the most there */
static bool local_bottleneck(const struct fl_state *fl, uint32_t i, double rate)
{
	const struct fl_port *p = &fl->ports[fl->cports[i]];
	double cap = port_cap(p);
	return fl->pload[i] >= cap * (1 - LOCAL_EPS) - LOCAL_TINY && rate >= fl->pmax[i] * (1 - LOCAL_EPS) - LOCAL_TINY;
}

/* whether outsider t, crossing port i of the problem, keeps its rate */
static bool local_keeps(struct fl_state *fl, struct fl_qp *t, uint32_t i, uint32_t st, uint32_t np0)
{
	const struct fl_port *p = &fl->ports[fl->cports[i]];
	double cap = port_cap(p);
	if (fl->pload[i] > cap * (1 + LOCAL_EPS) + LOCAL_TINY)
		return false; /* the port is over its capacity */
	if (fl->plvl[i] >= 0 && t->rate > fl->plvl[i] * (1 + LOCAL_EPS) + LOCAL_TINY)
		return false; /* it gets more than one that froze here */
	if (t->bott == UINT32_MAX)
		return false;
	if (t->bott != fl->cports[i] || local_bottleneck(fl, i, t->rate))
		return true;
	/* its bottleneck was here and is not: another of the problem's ports? */
	for (uint32_t h = 0; h < t->nfwd; h++) {
		const struct fl_port *q = &fl->ports[t->path[h]];
		if (q->stamp == st && q->local < np0 && local_bottleneck(fl, q->local, t->rate)) {
			t->bott = t->path[h];
			return true;
		}
	}
	return false;
}

static void local_solve(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	uint32_t st = ++fl->stamp, np = 0, nq = 0;
	for (uint32_t i = 0; i < fl->dirty.n; i++) {
		fl->ports[fl->dirty.v[i]].dirty = false;
		comp_port(fl, fl->dirty.v[i], st, &np, &fl->cap_cp);
	}
	fl->dirty.n = 0;
	for (uint32_t i = 0; i < fl->nseed; i++)
		if (fl->qps[fl->seed[i]].active)
			local_join(fl, fl->seed[i], st, &np, &nq);
	fl->nseed = 0;
	for (;;) {
		local_round(fl, st, np, nq);
		uint32_t np0 = np, nq0 = nq;
		for (uint32_t i = 0; i < np0; i++) {
			const struct fl_port *p = &fl->ports[fl->cports[i]];
			for (uint32_t k = 0; k < p->n; k++) {
				struct fl_qp *t = &fl->qps[p->qp[k]];
				if (t->stamp != st && !local_keeps(fl, t, i, st, np0))
					local_join(fl, p->qp[k], st, &np, &nq);
			}
		}
		if (nq == nq0)
			break;
	}
	fl->recomputes++;
	fl->comp_qps += nq;
	/* what it cost: the transfers it read at its ports (flow.batch_large) */
	uint64_t read = 0;
	for (uint32_t i = 0; i < np; i++)
		read += fl->ports[fl->cports[i]].n;
	fl->last_comp = (uint32_t)FAB_MIN(read, (uint64_t)UINT32_MAX);
	rank_nics(s, np, st);
	for (uint32_t k = 0; k < nq; k++) {
		struct fl_qp *q = &fl->qps[fl->cqps[k]];
		q->bott = fl->cbott[k] == UINT32_MAX ? UINT32_MAX : fl->cports[fl->cbott[k]];
		set_rate(s, fl->cqps[k], fl->crate[k]);
	}
	/* the others at those NICs: their place in the round robin moved */
	for (uint32_t i = 0; i < np; i++) {
		const struct fl_port *p = &fl->ports[fl->cports[i]];
		if (s->ports[fl->cports[i]].is_switch)
			continue;
		for (uint32_t j = 0; j < p->n; j++) {
			const struct fl_qp *t = &fl->qps[p->qp[j]];
			if (t->stamp != st && t->rate > 0)
				set_rate_as(s, p->qp[j], t->rate, true);
		}
	}
}

/* New rates for the component of the dirty ports: the ports and transfers
 * reachable from them through shared ports. */
static void recompute(struct flsim *s)
{
	if (s->c.fp.flow_solve) {
		local_solve(s);
		return;
	}
	struct fl_state *fl = s->fl;
	uint32_t st = ++fl->stamp, np = 0, nq = 0;
	size_t cap_p = fl->cap_cp, cap_q = fl->cap_cq;
	for (uint32_t i = 0; i < fl->dirty.n; i++) {
		fl->ports[fl->dirty.v[i]].dirty = false;
		comp_port(fl, fl->dirty.v[i], st, &np, &cap_p);
	}
	fl->dirty.n = 0;
	/* breadth first over ports: their transfers, those transfers' ports */
	for (uint32_t i = 0; i < np; i++) {
		struct fl_port *p = &fl->ports[fl->cports[i]];
		for (uint32_t k = 0; k < p->n; k++) {
			struct fl_qp *q = &fl->qps[p->qp[k]];
			if (q->stamp == st)
				continue;
			q->stamp = st;
			grow_u32(&fl->cqps, &cap_q, nq + 1);
			q->local = nq;
			fl->cqps[nq++] = p->qp[k];
			for (uint32_t h = 0; h < q->nfwd; h++)
				comp_port(fl, q->path[h], st, &np, &cap_p);
		}
	}
	fl->cap_cp = cap_p;
	fl->cap_cq = cap_q;
	fl->recomputes++;
	fl->comp_qps += nq;
	fl->last_comp = nq;
	if (!nq)
		return;
	/* the problem in local indices */
	size_t ne = 0;
	fl->off = fab_xrealloc(fl->off, nq + 1, sizeof *fl->off);
	fl->crate = fab_xrealloc(fl->crate, nq, sizeof *fl->crate);
	fl->ccap = fab_xrealloc(fl->ccap, np, sizeof *fl->ccap);
	for (uint32_t i = 0; i < np; i++) {
		const struct fl_port *p = &fl->ports[fl->cports[i]];
		fl->ccap[i] = FAB_MAX(p->payload_per_ps - p->ack_load, 0.0);
	}
	for (uint32_t k = 0; k < nq; k++) {
		struct fl_qp *q = &fl->qps[fl->cqps[k]];
		fl->off[k] = (uint32_t)ne;
		grow_u32(&fl->idx, &fl->cap_ci, ne + q->nfwd);
		for (uint32_t h = 0; h < q->nfwd; h++)
			fl->idx[ne++] = fl->ports[q->path[h]].local;
	}
	fl->off[nq] = (uint32_t)ne;
	fab_maxmin_solve(&fl->mm, np, fl->ccap, nq, fl->off, fl->idx, fl->crate);
	rank_nics(s, np, st);
	for (uint32_t k = 0; k < nq; k++)
		set_rate(s, fl->cqps[k], fl->crate[k]);
}

/* a queue pair's transfer starts: it joins every port of its path */
static void fair_start(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	port_add(s, id, q);
	q->bott = UINT32_MAX;
	if (s->c.fp.flow_solve)
		local_seed(s, id);
}

/* its last transfer has ended */
static void fair_stop(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	(void)id;
	port_remove(s, q); /* (its ACK load goes with its rate) */
	q->rate = q->next_rate = 0;
}

/* a degraded link: the port's capacity is r from now, its component
 * solved again */
static void fair_port_rate(struct flsim *s, uint32_t port, double r)
{
	s->fl->ports[port].payload_per_ps = r;
	fl_mark_dirty(s, port);
}

/* no queues: what a source sends crosses its path at once */
static void fair_sample(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	for (uint32_t id = 0; id < fl->cap_qps; id++) {
		struct fl_qp *q = &fl->qps[id];
		if (!q->routed)
			continue;
		double sent = fl_qp_sent(s, q), d = sent - q->series_mark;
		q->series_mark = sent;
		for (uint32_t h = 0; d > 0 && h < q->nfwd; h++)
			fl->ser[q->path[h]].tx += d;
	}
}

static double fair_port_sent(const struct flsim *s, uint32_t port, double *queue)
{
	*queue = 0;
	return s->fl->ser[port].tx;
}

const struct fl_queue_ops fl_queues_fair = {
	.name = "fair",
	.doc = "fair: transfers share each port max-min fairly",
	.pos_with_path = true,
	.init = fair_init,
	.free = fair_free,
	.start = fair_start,
	.stop = fair_stop,
	.rates = recompute,
	.port_rate = fair_port_rate,
	.sample = fair_sample,
	.port_sent = fair_port_sent,
};
