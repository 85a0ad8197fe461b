/*
 * fifo_dcqcn.c - `flow.queues: dcqcn`: the fluid FIFO queues (fifo.c) with
 * DCQCN at the sources, fed ECN marks drawn on the queues' depth, and
 * fluid PFC pauses between hops (fifo_pfc.c); its queue model's table.
 *
 * Each RoCE queue pair runs DCQCN's reaction point (src/cc, the paper's or
 * the NIC firmware's), its NIC shares no more than that rate to it
 * (fq_cc_share), and every 4 us (or once a packet at its rate, if longer)
 * it learns whether the queues on its path marked any of a window's
 * packets as they reached them (RED on their backlog, drawn from its own
 * stream), one path later: the notification (a token, fifo_tok.c) reaches
 * the sender when the marked bytes' ACK would.  Windows where no queue on
 * the path can mark and whose bytes change nothing go unseen (quiet)
 * until one passes kmin (fq_mark_watch, cc_wake).  A queue pair whose
 * flow has finished stops its timers (fq_retire).  Where DCQCN does not
 * run (fabric.dcqcn.enabled false, or a transport other than RoCE:
 * fab_flow_runs_dcqcn), this model is fifo's.
 */
#include <math.h>
#include <string.h>

#include "../cc/dcqcn.h"
#include "fifo.h"

/* the stream a queue pair's marks are drawn from: its identity (its ends,
 * priority and UDP source port, which come from who connects), not its
 * place among the queue pairs, which moves with what opened before it (a
 * collective's size after others in coll's sweep, a flow added in front) */
static uint64_t cc_stream(const struct sim_conn *k)
{
	return fab_rng_stream(FAB_RNG_FLUID_MARK,
			      fab_mix64(((uint64_t)k->src_nic << 32 | k->dst_nic) ^ (uint64_t)k->sport << 8 ^ k->prio));
}

/* a queue pair's congestion control, made when it first sends: DCQCN as
 * the packet engine's RoCE runs it (the paper's or the firmware's) */
static struct fl_cc *cc_of(struct flsim *s, uint32_t id)
{
	struct fl_qp *q = &s->fl->qps[id];
	if (q->cc)
		return q->cc;
	/* (a flow_model on a transport with fluid_cc: fab_flow_runs_dcqcn) */
	const struct fab_cc_ops *ops = fab_cc_of(&s->c.fp.cc, s->c.qps[id]->transport);
	const void *d = fab_cc_params(&s->c.fp.cc, ops);
	struct fl_cc *c = q->cc = fl_arena_alloc(s->fl, sizeof *q->cc + ops->state_size);
	c->ops = ops;
	c->ops->init(c->st, d, (double)s->ports[q->path[0]].rate_bps);
	c->tick_ps = FAB_TIME_NEVER;
	fab_timers_grow(&s->fl->timers, s->fl->tm_cc + s->fl->cap_qps);
	fab_rng_init(&c->rng, s->c.seed, cc_stream(s->c.qps[id]));
	return c;
}

/* its rate as payload bytes per ps (DCQCN paces frames) */
static double cc_cap(const struct flsim *s, const struct fl_cc *c)
{
	const struct fab_wire *w = fab_sim_wire(&s->c);
	double eff = (double)s->c.fp.mtu / (double)fab_wire_data_bytes(w, s->c.fp.mtu);
	return c->ops->rate_bps(c->st) / 8e12 * eff;
}

/* the NIC's payload rate c shared round robin, no queue pair above its
 * congestion control's rate: what one cannot use goes to the others */
void fq_cc_share(struct flsim *s, uint32_t port, double c)
{
	struct fl_state *fl = s->fl;
	struct fl_port *p = &fl->ports[port];
	uint32_t n = p->n, left = n;
	double rest = c;
	if (fl->cap_cc_done < n) { /* scratch, kept: this runs at every change of a NIC's transfers */
		fl->cap_cc_done = n + n / 2 + 16;
		fl->cc_done = fab_xrealloc(fl->cc_done, fl->cap_cc_done, sizeof *fl->cc_done);
	}
	bool *done = fl->cc_done;
	memset(done, 0, n * sizeof *done);
	for (bool moved = true; moved && left;) {
		moved = false;
		double fair = rest / left;
		for (uint32_t j = 0; j < n; j++) {
			struct fl_qp *q = &fl->qps[p->qp[j]];
			if (done[j] || !q->cc || q->cc->cap >= fair)
				continue;
			done[j] = true;
			left--;
			rest -= q->cc->cap;
			moved = true;
			fq_source_rate(s, p->qp[j], q->cc->cap);
		}
	}
	for (uint32_t j = 0; j < n; j++)
		if (!done[j])
			fq_source_rate(s, p->qp[j], left ? rest / left : 0);
}

/* The receiver looks at what arrives in windows of 4 us (the firmware's
 * decrease period, when marks are echoed on ACKs); with CNPs it sends one
 * at the first mark, then at most one an interval (the receiver's rule). */
#define CC_WINDOW_PS (4 * FAB_PS_PER_US)

static fab_time_ps cc_window(const struct flsim *s, const struct fl_cc *c)
{
	const struct fab_dcqcn_params *d = fab_cc_params(&s->c.fp.cc, c->ops);
	fab_time_ps w = c->ops->feedback == FAB_CC_FEEDBACK_ECHO ? d->decrease_period_ps : CC_WINDOW_PS;
	return w ? w : CC_WINDOW_PS;
}

/* RED on a switch port's backlog, kmin and kmax in proportion to its rate */
static double mark_prob(const struct flsim *s, uint32_t port)
{
	const struct fab_ecn_params *e = &s->c.fp.ecn;
	const struct fq_port *f = &s->fl->fq[port];
	double p = 0;
	int red = e->enabled ? fab_red(queue_now(s, f), f->kmin, f->kmax, e->pmax, &p) : FAB_RED_NONE;
	return red == FAB_RED_MARK ? 1 : red == FAB_RED_DRAW ? p : 0;
}

/* its rate changed: its NIC shares again (an idle queue pair's, when it
 * sends again) */
static void cc_changed(struct flsim *s, uint32_t id)
{
	struct fl_qp *q = &s->fl->qps[id];
	double cap = cc_cap(s, q->cc);
	if (cap != q->cc->cap) {
		q->cc->cap = cap;
		if (q->active)
			fl_mark_dirty(s, q->path[0]);
	}
}

/* its window ends at t (the usual window's in its delay line) */
static void cc_tick_at(struct flsim *s, uint32_t id, fab_time_ps t)
{
	struct fl_cc *c = s->fl->qps[id].cc;
	c->tick_ps = t;
	c->win_ps = t - s->c.now_ps;
	if (c->win_ps == cc_window(s, c))
		fl_push(s, t, EV_FQ_CC_TICK, id);
	else
		fab_eq_push(&s->c.eq, t, EV_FQ_CC_TICK, NULL, id);
}

/* a queue pair starts sending: its congestion control and its windows */
void fq_cc_start(struct flsim *s, uint32_t id)
{
	if (!s->fl->qps[id].fluid_cc)
		return; /* DCQCN is RoCE's: a TCP or InfiniBand queue pair keeps fifo's rate */
	struct fl_cc *c = cc_of(s, id);
	if (!c->cap)
		c->cap = cc_cap(s, c);
	if (c->tick_ps == FAB_TIME_NEVER)
		cc_tick_at(s, id, s->c.now_ps + cc_window(s, c));
}

/* A feedback window ends: the bytes it sent meet marks with the
 * probability the queues on its path give, each packet on its own; one
 * mark or more is congestion (a CNP, or an echo the firmware acts on once
 * a window). */
void fq_cc_tick(struct flsim *s, uint32_t id)
{
	struct fl_qp *q = &s->fl->qps[id];
	struct fl_cc *c = q->cc;
	if (!c || c->tick_ps != s->c.now_ps)
		return; /* stale */
	fab_time_ps w = c->win_ps;
	double bytes = q->rate * (double)w;
	if (!q->active || bytes <= 0) {
		c->tick_ps = FAB_TIME_NEVER; /* idle: it ticks again when it sends */
		return;
	}
	c->ops->on_sent(c->st, (fab_bytes)bytes);
	/* a window's worth of its packets as they reach each hop (at the rate
	 * coming in there: none yet where its bytes have not arrived, few
	 * behind a pause), each marked with the hop's probability: the log of
	 * the chance that none is.  A hop that a pause holds and that marks
	 * packets as they leave (fabric.ecn.mark_at dequeue, dequeue-after)
	 * marks only those it lets go. */
	bool on_leaving = s->c.fp.ecn.mark_at != FAB_ECN_ENQUEUE;
	double clear = 0, top = 0;
	uint32_t marker = 0; /* the hop likeliest to mark */
	for (uint32_t h = 1; h < q->nfwd; h++) {
		const struct fq_port *f = &s->fl->fq[q->path[h]];
		double rate = h + 1 == q->nfwd          ? q->fh[3 * h - 1] /* (a last hop: what was sent it) */
			: on_leaving && f->pfc_rate > 0 ? q->fh[3 * h + 1] * f->scale
							: q->fh[3 * h];
		double pm = mark_prob(s, q->path[h]), pkts = rate * (double)w / (double)s->c.fp.mtu;
		if (pm > 0 && pkts > 0)
			clear += pm >= 1 ? -INFINITY : pkts * log1p(-pm);
		if (pm > top) {
			top = pm;
			marker = h;
		}
	}
	/* the notification reaches the sender when the marked bytes' ACK
	 * would: through the queues ahead of them to the receiver, and back
	 * (behind the queues there too where ACKs share the data's priority) */
	bool cnp = c->ops->feedback == FAB_CC_FEEDBACK_CNP;
	if (clear < 0 && (!cnp || !c->noted || s->c.now_ps - c->last_note >= s->c.fp.nic.cnp_interval_ps) &&
	    fab_rng_unit(&c->rng) < -expm1(clear)) {
		c->noted = true;
		c->last_note = s->c.now_ps;
		/* marked bytes are those that reach the marking hop: behind the
		 * queues before it (a paused hop holds them there), and with
		 * marking at enqueue behind its own queue too; the rest of the
		 * way without waiting, and back */
		uint32_t upto = marker + (s->c.fp.ecn.mark_at == FAB_ECN_ENQUEUE);
		fq_tok_send(s, id, TOK_NOTE, (uint8_t)upto, NO_FLOW, 0);
	}
	cc_changed(s, id);
	if (top == 0 && c->ops->sent_ignored && c->ops->sent_ignored(c->st)) {
		/* no queue on its path can mark and its windows change nothing
		 * else: they go unseen until one can (cc_wake) */
		c->quiet = true;
		c->win_ps = cc_window(s, c);
		c->tick_ps = s->c.now_ps + c->win_ps;
		return;
	}
	/* the next window holds one packet at least: a window without one
	 * has no packet to mark (a queue pair that sends a packet every 10 us
	 * behind a queue past kmax is cut once a packet, not once in 4 us);
	 * at most 256 usual windows (a rate near zero: 1 ms at 4 us), so a
	 * queue pair that speeds up is heard from again soon */
	double wn = (double)cc_window(s, c), one = (double)s->c.fp.mtu / c->cap;
	cc_tick_at(s, id, s->c.now_ps + (fab_time_ps)ceil(FAB_MAX(wn, FAB_MIN(one, 256.0 * wn))));
}

/* The switch port's queue can mark now: the quiet queue pairs through it
 * tick again, at the next end of a window as they would have */
static void cc_wake(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	const struct fl_port *p = &fl->ports[port];
	for (uint32_t j = 0; j < p->n; j++) {
		struct fl_qp *q = &fl->qps[p->qp[j]];
		struct fl_cc *c = q->cc;
		if (!c || !c->quiet || p->hop[j] == 0 || p->hop[j] >= q->nfwd)
			continue;
		c->quiet = false;
		fab_time_ps w = cc_window(s, c), t = c->tick_ps;
		if (t < s->c.now_ps)
			t += (s->c.now_ps - t + w - 1) / w * w;
		c->tick_ps = t; /* (not a window from now: the event queue's) */
		c->win_ps = w;
		fab_eq_push(&s->c.eq, t, EV_FQ_CC_TICK, NULL, p->qp[j]);
	}
}

void fq_cc_notify(struct flsim *s, uint32_t id)
{
	struct fl_state *fl = s->fl;
	const struct fl_qp *q = &fl->qps[id];
	struct fl_cc *c = q->cc;
	/* (the flow it sends, as the packet engine counts: its message's when
	 * that leaves, fl_books) */
	if (q->qh < q->qn && q->flow_msgs)
		c->cnps++;
	s->c.tot.cnps++;
	if (c->retired)
		return; /* (counted: it reached the NIC) */
	fab_time_ps delay = c->ops->on_congestion(c->st, s->c.now_ps);
	if (delay)
		fab_timers_set(&fl->timers, fl->tm_cc + id, s->c.now_ps + delay);
	cc_changed(s, id);
}

void fq_cc_timer(struct flsim *s, uint32_t id)
{
	struct fl_cc *c = s->fl->qps[id].cc;
	fab_time_ps delay = c->ops->on_timer(c->st, s->c.now_ps);
	fab_timers_set(&s->fl->timers, s->fl->tm_cc + id, delay ? s->c.now_ps + delay : FAB_TIME_NEVER);
	cc_changed(s, id);
}

/* A queue pair of a flow that has finished never sends again, and its
 * congestion control's rate is read only to share its NIC among active
 * queue pairs: its timers stop (DCQCN's rate recovery would go on firing
 * them for milliseconds: on HPCC's incast run 30,000 of 91,000) and the
 * notifications that reach it later are only counted. */
static void fq_retire(struct flsim *s, uint32_t id)
{
	struct fl_cc *c = s->fl->qps[id].cc;
	if (!c)
		return;
	c->retired = true;
	fab_timers_set(&s->fl->timers, s->fl->tm_cc + id, FAB_TIME_NEVER);
}

/* flow.queues dcqcn: a switch port whose queue is past kmin (it can mark)
 * wakes the quiet queue pairs through it; one short of it, growing, is
 * due to then */
void fq_mark_watch(struct flsim *s, uint32_t port, double c)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	double kmin = f->kmin;
	fab_time_ps t = FAB_TIME_NEVER;
	if (f->backlog > kmin) {
		if (!f->marking) {
			f->marking = true;
			cc_wake(s, port);
		}
	} else {
		f->marking = false;
		if (f->ain > c) {
			double dt = floor((kmin - f->backlog) / (f->ain - c)) + 1;
			if (dt < 1e16)
				t = s->c.now_ps + (fab_time_ps)dt;
		}
	}
	fab_timers_set(&fl->timers, fl->tm_mark + port, t);
}

/* flow f has finished: its queue pairs' congestion controls stop their
 * timers */
static void dcqcn_flow_done(struct flsim *s, const struct sim_flow *f)
{
	for (uint32_t k = 0; k < f->nqps; k++)
		fq_retire(s, f->first_qp + k);
}

/* the time series' rate of queue pair q: DCQCN's (the line rate before it
 * first sends, as the packet engine's) */
static double dcqcn_qp_rate_bps(const struct flsim *s, const struct fl_qp *q)
{
	return q->cc                     ? q->cc->ops->rate_bps(q->cc->st)
		: s->fl->cc && q->routed ? (double)s->ports[q->path[0]].rate_bps /* (DCQCN starts there) */
					 : q->rate * 8e12;
}

/* a run stops: the notifications counted for messages still at their
 * queue pairs' heads go to their flows (once a stop: a pass over them
 * all), and fifo's rest */
static void dcqcn_rest(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	for (uint32_t i = 0; fl->cc && i < fl->cap_qps; i++) {
		const struct fl_qp *q = &fl->qps[i];
		if (!q->cc || !q->cc->cnps)
			continue;
		FAB_ASSERT(q->qh < q->qn);
		sim_flow_at(&s->c, q->q[q->qh].flow)->st.cnps += q->cc->cnps;
		q->cc->cnps = 0;
	}
	fq_rest(s);
}

/* The fabric has rested, nothing in flight (fab_sim_rest: between the
 * sizes of coll's sweep): each queue pair's DCQCN starts again as on one
 * that never sent, its timers and windows forgotten and its marks drawn
 * from the start of its stream, so a size's row is the one it gives
 * alone (the packet engine's roce_rest).  With background traffic that
 * runs through the rest, every queue pair keeps its state. */
static void dcqcn_restart(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	if (!fq_idle(s))
		return;
	for (uint32_t id = 0; fl->cc && id < fl->cap_qps; id++) {
		struct fl_qp *q = &fl->qps[id];
		struct fl_cc *c = q->cc;
		if (!c)
			continue;
		const struct fab_cc_ops *ops = c->ops;
		uint32_t cnps = c->cnps;
		memset(c, 0, sizeof *c + ops->state_size);
		c->ops = ops;
		c->cnps = cnps;
		ops->init(c->st, fab_cc_params(&s->c.fp.cc, ops), (double)s->ports[q->path[0]].rate_bps);
		c->tick_ps = FAB_TIME_NEVER;
		c->cap = cc_cap(s, c); /* (its NIC shares it that much; fq_cc_start, at its first send) */
		fab_rng_init(&c->rng, s->c.seed, cc_stream(s->c.qps[id]));
		fab_timers_set(&fl->timers, fl->tm_cc + id, FAB_TIME_NEVER);
	}
	fq_restart(s);
}

const struct fl_queue_ops fl_queues_dcqcn = {
	.name = "dcqcn",
	.doc = "dcqcn: those queues, and each queue pair's rate set by DCQCN from ECN marks drawn on the queues' "
	       "depth (RoCE; on TCP and InfiniBand fabrics the queues alone; experimental, doc/flow.md)",
	FQ_QUEUE_OPS,
	.flow_done = dcqcn_flow_done,
	.qp_rate_bps = dcqcn_qp_rate_bps,
	.rest = dcqcn_rest,
	.restart = dcqcn_restart,
};
