/*
 * flow.c - the flow-level engine behind the same interface as the packet
 * engine (sim.h): `fabric.engine: flow`.
 *
 * The topology, the queue pairs, their 5-tuple hashes and so their ECMP
 * paths are the packet engine's (fab_sim_qp_path).  A queue pair carries
 * its messages in order; the message at its head is a transfer that crosses
 * the egress ports of its path, at the rate its queue model gives it
 * (flow.queues, behind the table in queue.h, chosen once in fl_init):
 * max-min fair shares of the ports it crosses (fair.c), or its NIC's
 * round robin at line rate into first-come first-served switch queues
 * (fifo.c), with DCQCN at the sources and fluid PFC pauses between hops
 * (flow.queues: dcqcn).  This file keeps what every model shares: the
 * queue pairs, their paths and messages, the transfer at each one's head,
 * its NIC's round robin (fl_finish_at, fl_rank_nic), the completions, the
 * books (fl_books), degraded links, the engine's table, and the run loop:
 * what is due next of the event queue, the completions, the model's timers
 * and the delay lines (lines.c).
 * A message's last byte, where the model does not carry it through queues,
 * reaches the destination after the path's propagation delays plus the
 * store-and-forward of its last packet at every switch; a flow finishes
 * when its ACK is back.
 *
 * Not modelled: drops and retransmission (and, with fair shares, queues,
 * PFC, ECN and DCQCN).  Faults: link degradation only (the run refuses the
 * others).  The time series (fabric.series_interval) are sampled from the
 * fluid (sample.c: fl_sample); the blocks that live as long as the engine
 * come from its arena (arena.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "flow_int.h"
#include "queue.h"

static double payload_rate(const struct flsim *s, uint32_t port)
{
	const struct fl_link *p = &s->ports[port];
	double bps = p->is_switch ? (double)p->rate_bps : sim_pcie_cap(&s->c, (double)p->rate_bps);
	double eff = fab_wire_efficiency(fab_sim_wire(&s->c), s->c.fp.mtu);
	return bps * eff / 8 / 1e12;
}

/* the ports' payload rates (again when the server's PCIe cap is set) */
static void fl_set_rates(struct flsim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		s->fl->ports[i].payload_per_ps = payload_rate(s, i);
}

/* the queue model flow.queues names: the one place it is chosen */
static void fl_init(struct flsim *s)
{
	struct fl_state *fl = fab_xcalloc(1, sizeof *fl);
	fl->ports = fab_xcalloc(s->c.topo->nports, sizeof *fl->ports);
	s->fl = fl;
	fl_set_rates(s);
	fl->batch_ps = s->c.fp.flow_batch_ps;
	if (s->c.fp.flow_solve == FL_SOLVE_AUTO) /* local where the fabric is large */
		s->c.fp.flow_solve = s->c.topo->nnics >= FL_SOLVE_LOCAL_NICS;
	fl->series = s->c.fp.series_interval_ps > 0;
	fl->ops = fl_queue_model(s->c.fp.flow_queues);
	if (fl->ops->init)
		fl->ops->init(s);
	const struct fab_wire *w = fab_sim_wire(&s->c);
	fl->ack_frac = (double)(w->ack_frame + w->preamble_ifg) /
		((double)FAB_MAX(s->c.fp.nic.ack_every, 1u) * (double)fab_wire_data_bytes(w, s->c.fp.mtu));
}

static void fl_free(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	if (!fl)
		return;
	for (uint32_t i = 0; i < fl->cap_qps; i++)
		if (fl->qps[i].qcap > FL_Q_FIRST) /* (its first FIFO is the arena's) */
			free(fl->qps[i].q);
	fl_arena_free(&fl->arena); /* paths, first FIFOs, congestion controls */
	if (fl->ops->free)
		fl->ops->free(s);
	free(fl->qps);
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		free(fl->ports[i].qp);
		free(fl->ports[i].hop);
	}
	free(fl->ports);
	free(fl->dirty.v);
	fab_timers_free(&fl->done);
	fl_lines_free(fl);
	free(fl->rrkey);
	free(fl->ser);
	free(fl);
	s->fl = NULL;
}

static struct fl_qp *fq(struct flsim *s, uint32_t qp)
{
	struct fl_state *fl = s->fl;
	if (qp >= fl->cap_qps) {
		/* the run's queue pairs at first (not the core's room for more:
		 * a third again, on HPCC's runs); those opened later, half again */
		uint32_t n = FAB_MAX(FAB_MAX(s->c.nqps, qp + 1), fl->cap_qps + fl->cap_qps / 2);
		fl->qps = fab_xrealloc(fl->qps, n, sizeof *fl->qps);
		memset(fl->qps + fl->cap_qps, 0, (n - fl->cap_qps) * sizeof *fl->qps);
		fab_timers_grow(&fl->done, n);
		fl->cap_qps = n;
	}
	return &fl->qps[qp];
}

static fab_time_ps done_next(const struct fl_state *fl)
{
	return fab_timers_next(&fl->done);
}

/* when the next completion, timer and delayed event (flow.queues fifo)
 * are due; the return: the earliest of them and the event queue's */
struct next_at {
	fab_time_ps done, timer, line;
};

static fab_time_ps next_at(const struct flsim *s, struct next_at *at)
{
	const struct fl_state *fl = s->fl;
	at->done = done_next(fl);
	at->timer = fab_timers_next(&fl->timers);
	at->line = fl_line_next(fl);
	return FAB_MIN(FAB_MIN(fab_eq_peek_time(&s->c.eq), at->done), FAB_MIN(at->timer, at->line));
}

/* its ports there and back (the flow engine's routes do not change) */
static void walk(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	uint32_t path[FL_MAX_PATH];
	const struct sim_conn *sq = s->c.qps[id]; /* (its ACKs: the reverse 5-tuple) */
	q->acks_wait = s->c.fp.ctrl_prio == sq->prio;
	q->fluid_cc = fab_transport_at(sq->transport)->flags & FAB_TP_FLUID_CC;
	q->nfwd = (uint8_t)sim_path(&s->c, sq->src_nic, sq->dst_nic, sq->hash_fwd, path, FL_MAX_PATH / 2);
	q->npath = (uint8_t)(q->nfwd +
			     sim_path(&s->c, sq->dst_nic, sq->src_nic, sq->hash_rev, path + q->nfwd, FL_MAX_PATH / 2));
	/* sized to the path (an all-to-all has hundreds of thousands of queue
	 * pairs): path, then pos, in one allocation; with fifo queues pos
	 * comes with fh when the queue pair first has a rate (fifo.c: a
	 * message of one packet never has one) */
	bool pos = s->fl->ops->pos_with_path;
	size_t nu = (size_t)q->npath + (pos ? q->nfwd : 0);
	q->path = fl_arena_alloc(s->fl, nu * sizeof *q->path);
	memcpy(q->path, path, q->npath * sizeof *path);
	if (pos)
		q->pos = q->path + q->npath;
}

/* The queue pairs the run starts with are walked at once, one after the
 * other: walked at each one's first message, each walk found the routing
 * tables out of the cache (on HPCC's runs 4-5% of the time, for 1% of the
 * instructions). */
static void walk_all(struct flsim *s)
{
	for (uint32_t id = 0; id < s->c.nqps; id++)
		walk(s, id, fq(s, id));
}

/* the paths and latencies, at the first message (routes as they are) */
static void route(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	if (!q->path)
		walk(s, id, q);
	q->tail_ps = q->ack_ps = 0;
	for (uint32_t h = 0; h < q->npath; h++) {
		const struct fl_link *p = &s->ports[q->path[h]];
		if (h < q->nfwd)
			q->tail_ps += h ? p->data_hop_ps : p->delay_ps;
		else
			q->ack_ps += p->ack_hop_ps;
	}
	q->routed = true;
}

/* transfer id joins the list of the port at its hop h */
void fl_member_add(struct flsim *s, uint32_t id, struct fl_qp *q, uint32_t h)
{
	struct fl_port *p = &s->fl->ports[q->path[h]];
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4;
		p->qp = fab_xrealloc(p->qp, p->cap, sizeof *p->qp);
		p->hop = fab_xrealloc(p->hop, p->cap, sizeof *p->hop);
	}
	q->pos[h] = p->n;
	p->qp[p->n] = id;
	p->hop[p->n++] = h;
}

void fl_member_remove(struct flsim *s, struct fl_qp *q, uint32_t h)
{
	struct fl_port *p = &s->fl->ports[q->path[h]];
	uint32_t i = q->pos[h], last = --p->n;
	if (i != last) {
		p->qp[i] = p->qp[last];
		p->hop[i] = p->hop[last];
		s->fl->qps[p->qp[i]].pos[p->hop[i]] = i;
	}
	q->pos[h] = NO_POS;
}

/* When the head message's last byte leaves.  The NIC serves its queue
 * pairs round robin, a packet each: of transfers that share it and would
 * end together, each one served before another ends a packet earlier, a
 * packet at the pace the NIC sends them all together (the sum of their
 * rates: the line rate, or less where they are held back further on).
 * Fair shares alone would end them at one instant, forever in step; the
 * packets' order is what lets channels that share a NIC drift apart and
 * hide each other's latency, as they do in the packet engine. */
fab_time_ps fl_finish_at(const struct flsim *s, const struct fl_qp *q)
{
	fab_time_ps t = (fab_time_ps)ceil(q->rem / q->rate);
	fab_time_ps ahead = q->nic_sum > 0 ? (fab_time_ps)((double)q->behind * s->c.fp.mtu / q->nic_sum) : 0;
	return s->c.now_ps + t - FAB_MIN(ahead, t);
}

/* the round-robin order at the NIC ports of a component: how many
 * transfers each one's NIC serves after it.  Only for transfers that have
 * never shared their NIC with more than RR_MAX (channels, times the queue
 * pairs a connection is striped over): an all-to-all's hundreds of queue
 * pairs are not in step anyway, and ending each apart costs a
 * recomputation each, also as their numbers dwindle at the end.  (A limit
 * of 16 on the NIC's count alone left a 128-GPU ring of 8 channels with 4
 * queue pairs each in step, 42% slower than the packet engine; 32 or 64
 * made a 256-GPU AllToAll at 2:1 take minutes.) */
/* the round robin of NIC port `port` whose transfers go at `sum` together */
void fl_rank_nic(struct flsim *s, uint32_t port, double sum)
{
	struct fl_state *fl = s->fl;
	const struct fl_port *p = &fl->ports[port];
	for (uint32_t j = 0; j < p->n; j++) {
		struct fl_qp *q = &fl->qps[p->qp[j]];
		q->behind = 0;
		if (q->crowd < p->n)
			q->crowd = p->n;
	}
	if (p->n < 2 || p->n > RR_MAX)
		return;
	if (fl->cap_rr < p->n) {
		fl->cap_rr = 2 * p->n;
		fl->rrkey = fab_xrealloc(fl->rrkey, fl->cap_rr, sizeof *fl->rrkey);
	}
	for (uint32_t j = 0; j < p->n; j++) /* (a NIC's port is the first hop of all) */
		fl->rrkey[j] = fl->qps[p->qp[j]].rr << 24 | j;
	/* insertion: at most RR_MAX keys, mostly in order already (a NIC's
	 * transfers join its list in the order they start) */
	for (uint32_t j = 1; j < p->n; j++) {
		uint64_t k = fl->rrkey[j];
		uint32_t i = j;
		for (; i && fl->rrkey[i - 1] > k; i--)
			fl->rrkey[i] = fl->rrkey[i - 1];
		fl->rrkey[i] = k;
	}
	for (uint32_t r = 0; r < p->n; r++) {
		struct fl_qp *q = &fl->qps[p->qp[fl->rrkey[r] & 0xffffff]];
		q->behind = q->crowd <= RR_MAX ? p->n - 1 - r : 0;
		q->nic_sum = sum;
	}
}

/* the head message becomes the transfer in progress */
static void activate(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	q->rem = (double)q->q[q->qh].bytes;
	q->rate = 0;
	q->t_last = s->c.now_ps;
	if (!q->active) {
		q->active = true;
		q->crowd = 0;
		q->rr = s->fl->rr_next++;
		s->fl->ops->start(s, id, q);
	} else {
		/* the next message of a busy queue pair: nothing else changes */
		q->rate = q->next_rate;
		if (q->rate > 0)
			fl_done_set(s->fl, id, fl_finish_at(s, q));
	}
}

static void fl_post(struct fab_sim *sim, struct sim_conn *sq, fab_bytes bytes, uint32_t flow, uint32_t cookie)
{
	struct flsim *s = (struct flsim *)sim;
	struct fl_qp *q = fq(s, sq->id);
	if (!q->routed)
		route(s, sq->id, q);
	if (q->qn == q->qcap) {
		if (q->qh) { /* slide the FIFO down before growing it */
			memmove(q->q, q->q + q->qh, (q->qn - q->qh) * sizeof *q->q);
			q->qn -= q->qh;
			q->qh = 0;
		}
		if (!q->qcap) { /* the first FIFO from the arena, longer ones from the heap */
			q->qcap = FL_Q_FIRST;
			q->q = fl_arena_alloc(s->fl, FL_Q_FIRST * sizeof *q->q);
		} else if (q->qn == q->qcap) {
			struct fl_msg *v = q->qcap == FL_Q_FIRST ? NULL : q->q;
			q->qcap *= 2;
			v = fab_xrealloc(v, q->qcap, sizeof *v);
			if (q->qcap == 2 * FL_Q_FIRST)
				memcpy(v, q->q, q->qn * sizeof *v);
			q->q = v;
		}
	}
	if (bytes)
		sq->used = true;
	FAB_ASSERT(!q->qn || q->flow_msgs == (flow != NO_FLOW)); /* (a flow's queue pairs carry only its messages) */
	q->flow_msgs = flow != NO_FLOW;
	/* a message of at most a packet on an idle queue pair goes out as an
	 * impulse: its bytes ride its last byte's token (fifo_tok.c) */
	const struct fl_queue_ops *ops = s->fl->ops;
	if (ops->impulse && q->qn == q->qh && !q->active && bytes &&
	    ops->impulse(s, sq->id, q, &(struct fl_msg){bytes, flow, cookie}))
		return;
	q->q[q->qn++] = (struct fl_msg){bytes, flow, cookie};
	if (q->qn - q->qh == 1)
		activate(s, sq->id, q);
}

/* a message has left its NIC whole: the counters the packet engine keeps
 * per frame, per message here */
void fl_books(struct flsim *s, struct fl_qp *q, const struct fl_msg *mp)
{
	struct fl_msg m = *mp;
	q->sent += (double)m.bytes;
	uint64_t pkts = (m.bytes + s->c.fp.mtu - 1) / s->c.fp.mtu;
	uint64_t frames = m.bytes + pkts * fab_sim_wire(&s->c)->data_overhead;
	for (uint32_t h = 0; h < q->nfwd; h++) {
		struct fl_link *p = &s->ports[q->path[h]], *peer = &s->ports[p->peer];
		p->st.tx_bytes += frames;
		p->st.tx_wire_bytes += frames + pkts * s->c.wire.preamble_ifg;
		p->st.tx_pkts += pkts;
		p->st.tx_data_pkts += pkts;
		peer->st.rx_bytes += frames;
		peer->st.rx_pkts += pkts;
	}
	s->c.tot.data_tx_bytes += m.bytes;
	s->c.tot.data_rx_bytes += m.bytes;
	s->c.tot.data_pkts += pkts;
	if (m.flow != NO_FLOW) {
		struct sim_flow *f = sim_flow_at(&s->c, m.flow);
		f->st.delivered_bytes += m.bytes;
		f->st.data_pkts += pkts;
		if (q->cc && q->cc->cnps) { /* (what reached it while m was its head: m leaves) */
			f->st.cnps += q->cc->cnps;
			q->cc->cnps = 0;
		}
	}
}

/* the head message's last byte has left the source */
static void on_done(struct flsim *s, uint32_t id)
{
	struct fl_qp *q = &s->fl->qps[id];
	fl_done_clear(s->fl, id);
	struct fl_msg m = q->q[q->qh++];
	fl_books(s, q, &m);
	const struct fl_queue_ops *ops = s->fl->ops;
	if (ops->sent && ops->sent(s, id, q, &m))
		; /* its last byte goes through the queues */
	else if (m.flow != NO_FLOW)
		fab_eq_push(&s->c.eq, s->c.now_ps + q->tail_ps + q->ack_ps, EV_FL_DELIVER, sim_flow_at(&s->c, m.flow),
			    0);
	else
		fab_eq_push(&s->c.eq, s->c.now_ps + q->tail_ps, EV_FL_DELIVER, NULL, m.cookie);
	if (q->qh < q->qn) {
		activate(s, id, q);
	} else {
		q->active = false;
		ops->stop(s, id, q);
		q->qh = q->qn = 0;
	}
}

static void on_deliver(struct flsim *s, struct sim_flow *f, uint32_t cookie)
{
	if (!f) {
		if (s->c.hooks.delivered)
			s->c.hooks.delivered(s->c.hooks.ctx, cookie);
		return;
	}
	sim_flow_qp_done(&s->c, f);
	if (s->fl->ops->flow_done && f->st.finish_ps != FAB_TIME_NEVER)
		s->fl->ops->flow_done(s, f);
}

/* port i runs at r from now: a packet's and an ACK's time across it */
static void fl_link_rate(struct flsim *s, uint32_t i, fab_rate_bps r)
{
	const struct fab_wire *w = fab_sim_wire(&s->c);
	struct fl_link *p = &s->ports[i];
	p->rate_bps = r;
	p->data_hop_ps = p->delay_ps + fab_ser_ps(fab_wire_data_bytes(w, s->c.fp.mtu), r);
	p->ack_hop_ps = p->delay_ps + fab_ser_ps(w->ack_frame + w->preamble_ifg, r);
}

static void on_fault(struct flsim *s, const struct fab_fault *f, int what)
{
	if (f->kind != FAB_FAULT_DEGRADE || what == 2)
		return;
	fab_rate_bps r = what == 1 ? s->c.topo->ports[f->port].rate_bps : f->rate_bps;
	uint32_t a = f->port, b = s->ports[a].peer;
	fl_link_rate(s, a, r);
	fl_link_rate(s, b, r);
	s->fl->ops->port_rate(s, a, payload_rate(s, a));
	s->fl->ops->port_rate(s, b, payload_rate(s, b));
}

/* how long changes wait for the rates: flow.batch, a hold's, or, while
 * the recomputations are large, flow.batch_large */
static fab_time_ps batch_window(const struct flsim *s)
{
	const struct fl_state *fl = s->fl;
	if (fl->last_comp >= FL_LARGE_COMPONENT)
		return FAB_MAX(fl->batch_ps, s->c.fp.flow_batch_large_ps);
	return fl->batch_ps;
}

static int fl_run(struct fab_sim *sim, fab_time_ps end_ps)
{
	struct flsim *s = (struct flsim *)sim;
	struct fl_state *fl = s->fl;
	struct fab_ev ev;
	uint64_t next_progress = 1u << 20;
	for (;;) {
		/* every change at this instant is in: new rates, once */
		struct next_at at;
		fab_time_ps next = next_at(s, &at);
		if (fl->dirty.n && next > FAB_MAX(s->c.now_ps, fl->dirty.since + (fl->urgent ? 0 : batch_window(s)))) {
			fl->urgent = false;
			fl->ops->rates(s);
			next = next_at(s, &at);
		}
		if (fl->touch.n && next > FAB_MAX(s->c.now_ps, fl->touch.since + fl->batch_ps)) {
			fl->ops->refresh(s);
			next = next_at(s, &at);
		}
		if (!sim_busy(&s->c))
			break;
		/* the series' rows, each once all that happens at its instant
		 * has; outside the event queue, they change nothing: a batch
		 * ends, and what a refresh left is done, when it would be
		 * without them */
		while (fl->sample_at < next && (!end_ps || fl->sample_at <= end_ps)) {
			s->c.now_ps = fl->sample_at;
			s->c.eq.popped++; /* counted as an event */
			fl_sample(s);
			/* (nothing else will ever happen: sampling stops too) */
			fl->sample_at = next != FAB_TIME_NEVER ? s->c.now_ps + s->c.fp.series_interval_ps
							       : FAB_TIME_NEVER;
		}
		if (next == FAB_TIME_NEVER)
			break;
		if (end_ps && next > end_ps) {
			s->c.now_ps = end_ps;
			s->c.tot.stopped_by_end_time = true;
			break;
		}
		FAB_ASSERT(next >= s->c.now_ps);
		s->c.now_ps = next;
		/* a transfer ending at the same time as an event goes first */
		if (at.done == next) {
			s->c.eq.popped++; /* counted as an event */
			on_done(s, fab_timers_top(&fl->done));
			sim_report_progress(&s->c, &next_progress);
			continue;
		}
		/* then a timer, then what the delay lines hold */
		if (at.timer == next) {
			s->c.eq.popped++;
			fl->ops->timer(s, fab_timers_pop(&fl->timers));
			sim_report_progress(&s->c, &next_progress);
			continue;
		}
		if (at.line == next) {
			s->c.eq.popped++;
			fl_line_pop(fl, &ev);
			fl->ops->event(s, &ev);
			sim_report_progress(&s->c, &next_progress);
			continue;
		}
		fab_eq_pop(&s->c.eq, &ev);
		if (sim_workload_event(&s->c, &ev)) {
			sim_report_progress(&s->c, &next_progress);
			continue;
		}
		switch (ev.type) {
		case EV_FLOW_START:
			sim_flow_start(&s->c, ev.obj);
			break;
		case EV_FAULT:
			on_fault(s, ev.obj, (int)ev.arg);
			break;
		case EV_FL_DELIVER:
			on_deliver(s, ev.obj, ev.arg);
			break;
		default:
			if (fl->ops->event)
				fl->ops->event(s, &ev);
			break;
		}
		sim_report_progress(&s->c, &next_progress);
	}
	if (fl->ops->rest)
		fl->ops->rest(s);
	/* bytes are counted when a message has left whole: nothing is in
	 * flight in the books */
	s->c.tot.events = s->c.eq.popped;
	s->c.tot.end_ps = s->c.now_ps;
	s->c.tot.data_inflight_bytes = 0;
	return 0;
}

static void fl_stats(const struct fab_sim *sim, uint64_t *recomputes, double *mean_component)
{
	const struct fl_state *fl = ((const struct flsim *)sim)->fl;
	*recomputes = fl->recomputes;
	*mean_component = fl->recomputes ? (double)fl->comp_qps / (double)fl->recomputes : 0;
}

static void fl_server_changed(struct fab_sim *sim)
{
	struct flsim *s = (struct flsim *)sim;
	fl_set_rates(s);
	if (s->fl->ops->caps)
		s->fl->ops->caps(s);
}

static void fl_port_stats(const struct fab_sim *sim, struct fab_port_stats *out)
{
	const struct flsim *s = (const struct flsim *)sim;
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		out[i] = s->ports[i].st;
}

static void fl_port_pfc(const struct fab_sim *sim, uint32_t port, fab_bytes *headroom, fab_bytes *xoff)
{
	const struct flsim *s = (const struct flsim *)sim;
	*headroom = *xoff = 0;
	if (s->fl->ops->port_pfc)
		s->fl->ops->port_pfc(s, port, headroom, xoff);
}

static fab_rate_bps fl_port_rate(const struct fab_sim *sim, uint32_t port)
{
	return ((const struct flsim *)sim)->ports[port].rate_bps;
}

static void fl_engine_free(struct fab_sim *sim)
{
	struct flsim *s = (struct flsim *)sim;
	fl_free(s);
	free(s->ports);
	sim_core_free(&s->c);
	free(s);
}

/* the forward path route() took (the engine never reroutes): the output's
 * ECMP groups and ideal completion times ask for every flow's */
static uint32_t fl_kept_path(const struct fab_sim *sim, uint32_t qp, uint32_t *ports, uint32_t max)
{
	const struct fl_state *fl = ((const struct flsim *)sim)->fl;
	if (qp >= fl->cap_qps || !fl->qps[qp].routed)
		return UINT32_MAX;
	const struct fl_qp *q = &fl->qps[qp];
	if (q->nfwd >= FL_MAX_PATH / 2 || q->nfwd > max) /* (perhaps cut short) */
		return UINT32_MAX;
	memcpy(ports, q->path, q->nfwd * sizeof *ports);
	return q->nfwd;
}

static void fl_batch(struct fab_sim *sim, int hold, fab_time_ps ps)
{
	struct fl_state *fl = ((struct flsim *)sim)->fl;
	if (hold > 0) {
		fl->holds++;
		fl->hold_ps = FAB_MAX(fl->hold_ps, ps);
	} else if (fl->holds && !--fl->holds)
		fl->hold_ps = 0;
	fl->batch_ps = FAB_MAX(sim->fp.flow_batch_ps, fl->hold_ps);
}

/* fab_sim_rest: the queue model's memory of the past starts again */
static void fl_sim_rest(struct fab_sim *sim)
{
	struct flsim *s = (struct flsim *)sim;
	if (s->fl->ops->restart)
		s->fl->ops->restart(s);
}

static const struct sim_engine_ops flow_ops = {
	.name = "flow",
	.conn_alloc = NULL, /* a bare struct sim_conn from the core's slabs (one transport per fabric) */
	.post = fl_post,
	.server_changed = fl_server_changed,
	.run = fl_run,
	.free = fl_engine_free,
	.port_stats = fl_port_stats,
	.port_rate = fl_port_rate,
	.port_pfc = fl_port_pfc,
	.engine_stats = fl_stats,
	.batch = fl_batch,
	.kept_path = fl_kept_path,
	.rest = fl_sim_rest,
};

struct fab_sim *fab_flow_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			     const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err)
{
	struct flsim *s = fab_xcalloc(1, sizeof *s);
	s->ports = fab_xcalloc(topo->nports, sizeof *s->ports);
	for (uint32_t i = 0; i < topo->nports; i++) {
		const struct fab_port *tp = &topo->ports[i];
		s->ports[i].rate_bps = tp->rate_bps;
		s->ports[i].delay_ps = tp->delay_ps;
		s->ports[i].peer = tp->peer;
		s->ports[i].is_switch = topo->nodes[tp->node].kind == FAB_NODE_SWITCH;
	}
	if (!sim_core_init(&s->c, &flow_ops, topo, fp, seed, flows, nflows, err)) {
		free(s->ports);
		sim_core_free(&s->c);
		free(s);
		return NULL;
	}
	for (uint32_t i = 0; i < topo->nports; i++)
		fl_link_rate(s, i, s->ports[i].rate_bps);
	fl_init(s);
	s->fl->sample_at = fp->series_interval_ps ? 0 : FAB_TIME_NEVER;
	walk_all(s);
	return &s->c;
}
