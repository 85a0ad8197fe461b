/*
 * fifo.c - `flow.queues: fifo`: first-come, first-served switch queues in
 * place of fair shares: a port's fluid FIFO queue, and the model's table.
 *
 * This is what a fabric without congestion control and with deep buffers
 * does.  A NIC sends its active queue pairs round robin at its line rate,
 * whatever lies ahead (fifo_rate.c).  Every switch egress port is a fluid
 * FIFO queue of capacity C (its payload rate, less the ACKs that cross it:
 * they go first, at strict priority).  Its backlog B grows at A - C while
 * the arriving rate A exceeds C, and drains at C - A after.  A byte that
 * arrives at t leaves at D(t) = t + B(t)/C, whoever sent it.
 *
 * The rates a port sends on are exact for such a queue: while it is backed
 * up, the bytes leaving at D(t) arrived at t, so transfer i leaves at
 * C a_i(t) / A(t), the mix of what arrived, at the queue's full rate.  A
 * port therefore keeps two views of its transfers' rates: the rates coming
 * in, and the rates of the bytes now leaving.  A change coming in at t
 * reaches the second view at D(t), once the B(t) bytes ahead of it have
 * left: the changes wait in a FIFO of their own, each with the count of
 * bytes the port will have sent by then (whatever rate it sends at
 * meanwhile: a pause, a fault), the head on a timer (fq_out_due); when the
 * queue is empty, at once.  How a change in what leaves reaches the next
 * port, and what is given up for speed on the way: fifo_rate.c.
 *
 * A message's last byte travels on its own (EV_FQ_MARK, a token:
 * fifo_tok.c): at each port it waits in the same FIFO as the changes,
 * leaves with the bytes that arrived with it, and the message is delivered
 * when it leaves the last (and its ACK is back).  With no queue anywhere
 * that is the fair-share engine's closed form to the picosecond.  Where
 * ACKs share the data's priority, a flow's last ACK waits behind the
 * backlog on its way back.
 *
 * With DCQCN, what waits behind the head of a queue's list goes with it
 * if due within FQ_EARLY of the backlog, a change of rate also within a
 * hop's latency (let_through).  `flow.queues: dcqcn` is these queues with
 * DCQCN at the sources (fifo_dcqcn.c) and fluid PFC pauses (fifo_pfc.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fifo.h"

/* ECN's kmin and kmax on a switch port, in proportion to its rate */
static void ecn_set(struct flsim *s, uint32_t port)
{
	const struct fab_ecn_params *e = &s->c.fp.ecn;
	double scale = e->ref_rate ? (double)s->ports[port].rate_bps / (double)e->ref_rate : 1;
	s->fl->fq[port].kmin = (double)e->kmin_bytes * scale;
	s->fl->fq[port].kmax = (double)e->kmax_bytes * scale;
}

void fq_init(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	fl->cc = fab_flow_runs_dcqcn(&s->c.fp);
	fl->tol = fl->cc ? FQ_TOL_CC : FQ_TOL;
	fl->fq = fab_xcalloc_aligned(64, s->c.topo->nports, sizeof *fl->fq);
	if (fl->series)
		fl->fq_came = fab_xcalloc(s->c.topo->nports, sizeof *fl->fq_came);
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		fl->fq[i].scale = fl->fq[i].scale_sent = 1;
		fl->fq[i].sw = s->c.topo->switch_index[s->c.topo->ports[i].node];
		cap_set(fl, i);
		ecn_set(s, i);
	}
	/* timers (fq_timer): a port's queue empties, the head of what waits
	 * in it leaves, a switch's thresholds are checked, a port's queue
	 * passes kmin, a queue pair's congestion control's timer */
	fl->tm_out = s->c.topo->nports;
	fl->tm_pfc = fl->tm_out + s->c.topo->nports;
	fl->tm_mark = fl->tm_pfc + s->c.topo->nswitches;
	fl->tm_cc = fl->tm_mark + s->c.topo->nports;
	fab_timers_init(&fl->timers, fl->tm_cc);
	fl->free_rec = UINT32_MAX;
	fl->agg_rec = fab_xcalloc(s->c.topo->nports, sizeof *fl->agg_rec);
	fl->agg_stamp = fab_xcalloc(s->c.topo->nports, sizeof *fl->agg_stamp);
	fq_pfc_init(s); /* PFC, where DCQCN runs and the fabric is lossless: fluid pauses */
}

void fq_free(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	if (!fl->fq)
		return;
	free(fl->fq_came);
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		free(fl->fq[i].pend);
		free(fl->fq[i].chg);
		free(fl->fq[i].in);
	}
	free(fl->fq);
	fab_timers_free(&fl->timers);
	fq_pfc_free(s);
	free(fl->agg_rec);
	free(fl->agg_stamp);
	free(fl->rec);
	free(fl->touch.v);
	free(fl->cc_done);
	fl->fq = NULL;
	fl->rec = NULL;
}

/* The ports' lists of what waits in their queues, where empty, go back to
 * the allocator when a run stops (a later run grows them again): the
 * tables the results are written from take their memory, not new pages
 * (on the incast run of HPCC's, 2.8 MB) */
void fq_rest(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct fq_port *f = &fl->fq[i];
		if (f->pn)
			continue;
		free(f->pend);
		f->pend = NULL;
		f->pcap = f->ph = 0;
	}
}

/* whether no transfer is active: a rest with nothing in flight (coll's
 * own, without background traffic, which runs through it) */
bool fq_idle(const struct flsim *s)
{
	const struct fl_state *fl = s->fl;
	for (uint32_t id = 0; id < fl->cap_qps; id++)
		if (fl->qps[id].active)
			return false;
	return true;
}

/* The fabric has rested (fab_sim_rest) and no transfer is active, so
 * every queue is empty.  What rounding left of the rates and bytes that
 * came and went (1e-16 of a byte per ps after a 16 MiB tree on 64 GPUs)
 * goes, and with it the records of the ingress ports that sent
 * (fifo_pfc.c): a size of coll's sweep starts from the queues a fresh run
 * starts from, and under DCQCN, whose rates follow their marks
 * chaotically, a trace of the sizes before moved its row by up to 28%.
 * Background traffic that runs through the rest keeps the queues as they
 * are. */
void fq_restart(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	if (!fq_idle(s))
		return;
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct fq_port *f = &fl->fq[i];
		FAB_ASSERT(!f->pn && !f->holding && !f->pfc_rate);
		f->backlog = f->ain = f->aout = f->served = f->ack = f->ack_used = 0;
		f->scale = f->scale_sent = 1;
		f->marking = false;
		for (uint32_t j = 0; j < f->nin; j++)
			f->in[j].rate = f->in[j].out = 0;
		fq_in_empty(s, f);
		cap_set(fl, i);
	}
	/* (and no timer of a port or a switch is due: a queue that empties,
	 * passes kmin, a switch's check) */
	for (uint32_t i = 0; i < fl->tm_cc; i++)
		fab_timers_set(&fl->timers, i, FAB_TIME_NEVER);
}

void fq_caps(struct flsim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		cap_set(s->fl, i);
}

/* when the head of what waits in the port's queue starts to leave, at
 * the rate it sends now: its timer (a pause held or let go, a fault, moves
 * it and everything behind it alike) */
void fq_out_due(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	const struct fq_port *f = &fl->fq[port];
	fab_time_ps t = FAB_TIME_NEVER;
	if (f->pn) {
		double left = FAB_MAX(f->pend[f->ph].at - f->served, 0.0), c = cap(fl, port);
		double dt = left > 0 ? ceil(left / c) : 0;
		if (dt < 1e16)
			t = s->c.now_ps + (fab_time_ps)dt;
	}
	fab_timers_set(&fl->timers, fl->tm_out + port, t);
}

/* transfer id's rates at hop h changed: it joins the port and its list of
 * changes */
static void changed(struct flsim *s, uint32_t id, struct fl_qp *q, uint32_t h)
{
	struct fq_port *f = &s->fl->fq[q->path[h]];
	if (q->pos[h] == NO_POS)
		fl_member_add(s, id, q, h);
	if (f->nchg == f->cap_chg) {
		f->cap_chg = f->cap_chg ? 2 * f->cap_chg : 16;
		f->chg = fab_xrealloc(f->chg, f->cap_chg, sizeof *f->chg);
	}
	f->chg[f->nchg++] = (uint64_t)id << 8 | h;
}

/* the bytes of transfer id at hop h now leave with rate r (of what came in) */
static void view_out(struct flsim *s, uint32_t id, uint32_t h, double r)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	struct fq_port *f = &fl->fq[q->path[h]];
	if (fl->pfc && h) {
		struct fq_in *in = in_of(s, f, s->ports[q->path[h - 1]].peer);
		in->out = FAB_MAX(in->out + r - q->fh[3 * h + 1], 0.0);
	}
	f->aout += r - q->fh[3 * h + 1];
	q->fh[3 * h + 1] = r;
	if (f->aout < 0)
		f->aout = 0;
	changed(s, id, q, h);
}

/* something waits in the port's queue: it leaves with the bytes that
 * arrive now (never before what waits ahead of it); fq_pend says what */
void fq_pend_push(struct flsim *s, uint32_t port, uint32_t qp, uint32_t hop, double rate)
{
	struct fq_port *f = &s->fl->fq[port];
	if (f->pn == f->pcap) {
		/* twice the room, in place where the allocator can (a fresh
		 * block a doubling cost new pages: on a virtual machine a
		 * millisecond a megabyte to clear); the part that had wrapped
		 * round to the front moves up behind the rest */
		uint32_t n = f->pcap ? 2 * f->pcap : 16;
		f->pend = fab_xrealloc(f->pend, n, sizeof *f->pend);
		if (f->ph)
			memcpy(f->pend + f->pcap, f->pend, f->ph * sizeof *f->pend);
		f->pcap = n;
	}
	double at = f->served + f->backlog;
	if (f->pn && f->pend[(f->ph + f->pn - 1) & (f->pcap - 1)].at > at)
		at = f->pend[(f->ph + f->pn - 1) & (f->pcap - 1)].at;
	/* (the fields one by one: a struct passed by value was built on the
	 * stack and read back in wider loads than its stores, which stalls) */
	struct fq_pend *e = &f->pend[(f->ph + f->pn) & (f->pcap - 1)];
	e->at = at;
	e->rate = rate;
	e->qp = qp;
	e->hop = hop;
	if (!f->pn++)
		fq_out_due(s, port);
}

/* the changes waiting in the port's queue whose bytes have left (all of
 * them) reach what leaves, and with DCQCN those due within FQ_EARLY of
 * the backlog after them, or, a change of rate, within what the port
 * sends in a hop's latency (a change crossing an idle port takes effect
 * that early too: pass_idle); a token, whose time is its message's, only
 * within FQ_EARLY.  True if any did. */
static bool let_through(struct flsim *s, uint32_t port, bool all)
{
	struct fq_port *f = &s->fl->fq[port];
	bool any = false;
	double ahead = FQ_EMPTY, ahead_rate = FQ_EMPTY;
	if (s->fl->cc) {
		ahead = FAB_MAX(FQ_EMPTY, FQ_EARLY * f->backlog);
		ahead_rate = FAB_MAX(ahead, f->c * (double)s->ports[port].data_hop_ps);
	}
	for (; f->pn; any = true) {
		struct fq_pend e = f->pend[f->ph];
		if (!all && e.at > f->served + (e.hop == PEND_TOK ? ahead : ahead_rate))
			break;
		f->ph = (f->ph + 1) & (f->pcap - 1);
		f->pn--;
		if (e.hop == PEND_TOK)
			fq_tok_leave(s, e.qp, s->c.now_ps);
		else if (e.hop == PEND_LAST)
			last_moved(s, port, e.qp, e.rate, LAST_OUT);
		else
			view_out(s, e.qp, e.hop, e.rate);
	}
	return any;
}

/* the port's queue is empty: what waited in it goes through (and the port
 * is refreshed at the end of the instant) */
static void emptied(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	if (f->pn) {
		let_through(s, port, true);
		fab_timers_set(&fl->timers, fl->tm_out + port, FAB_TIME_NEVER);
		touch(s, port);
	}
	f->served = 0;
}

void fq_settle_queue(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	fab_time_ps dt = s->c.now_ps - f->t_backlog;
	double c = f->c;
	if (dt) {
		double b0 = f->backlog, b1 = b0 + (f->ain - c) * (double)dt;
		if (b1 < FQ_EMPTY)
			b1 = 0;
		struct fab_port_stats *st = &s->ports[port].st;
		st->queue_area += 0.5 * (b0 + b1) * (double)dt;
		if ((uint64_t)b1 > st->max_queue_bytes)
			st->max_queue_bytes = (uint64_t)b1;
		f->served += b0 + f->ain * (double)dt - b1;
		f->backlog = b1;
		f->t_backlog = s->c.now_ps;
		if (f->nin && (b0 > 0 || b1 > 0)) /* (an empty queue holds nobody's bytes) */
			fq_in_settle(s, port, b0, (double)dt);
	}
	if (f->backlog == 0)
		emptied(s, port);
}

/* the payload bytes the port has sent, and its queue, now: what came in
 * less what is queued.  Read, not settled (settle_queue's arithmetic on a
 * copy): a run with series gives the same bytes as one without. */
double fq_port_sent(const struct flsim *s, uint32_t port, double *queue)
{
	const struct fq_port *f = &s->fl->fq[port];
	const struct fq_came *in = &s->fl->fq_came[port];
	*queue = queue_now(s, f);
	return in->bytes + f->ain * (double)(s->c.now_ps - in->t) - *queue;
}

/* transfer id's rate into hop h is r from now */
static void rate_in(struct flsim *s, uint32_t id, uint32_t h, double r)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	uint32_t port = q->path[h];
	struct fq_port *f = &fl->fq[port];
	settle(s, port);
	came_to_now(s, port);
	if (fl->pfc && h) {
		struct fq_in *in = in_of(s, f, s->ports[q->path[h - 1]].peer);
		in->rate = FAB_MAX(in->rate + r - q->fh[3 * h], 0.0);
	}
	f->ain += r - q->fh[3 * h];
	if (f->ain < 0)
		f->ain = 0;
	q->fh[3 * h] = r;
	if (f->backlog == 0) {
		view_out(s, id, h, r); /* (which lists the change) */
	} else {
		/* it leaves with the bytes that arrive now */
		changed(s, id, q, h);
		fq_pend_push(s, port, id, h, r);
	}
	touch(s, port);
}

/* the rate into the last hop `port` from ingress port `ingress` moved by d
 * now */
static void rate_in_last(struct flsim *s, uint32_t port, uint32_t ingress, double d)
{
	settle(s, port);
	came_to_now(s, port);
	last_moved(s, port, ingress, d, LAST_IN);
	if (s->fl->fq[port].backlog == 0)
		last_moved(s, port, ingress, d, LAST_OUT);
	else
		fq_pend_push(s, port, ingress, PEND_LAST, d); /* it leaves with the bytes that arrive now */
	touch(s, port);
}

/* a degraded link: the port's payload rate is r from now */
void fq_port_rate(struct flsim *s, uint32_t port, double r)
{
	if (!s->ports[port].is_switch) {
		s->fl->ports[port].payload_per_ps = r;
		cap_set(s->fl, port);
		fl_mark_dirty(s, port); /* its rates are set again */
		return;
	}
	settle(s, port); /* the queue so far at the old rate */
	s->fl->ports[port].payload_per_ps = r;
	cap_set(s->fl, port);
	ecn_set(s, port);
	touch(s, port); /* (refresh: what waits in it moves, out_due) */
}

void fq_event(struct flsim *s, const struct fab_ev *ev)
{
	struct fl_state *fl = s->fl;
	switch (ev->type) {
	case EV_FQ_IN: /* a batch of changes, each counted as an event */
		for (uint32_t i = ev->arg; i != NO_POS;) {
			struct fq_rec r = fl->rec[i];
			rec_free(fl, i);
			if (r.hop == REC_LAST)
				rate_in_last(s, r.qp, r.cookie, r.rate);
			else
				rate_in(s, r.qp, r.hop, r.rate);
			if ((i = r.next) != NO_POS)
				s->c.eq.popped++;
		}
		break;
	case EV_FQ_MARK:
		fq_tok_arrive(s, ev->arg);
		break;
	case EV_FQ_CC_TICK:
		fq_cc_tick(s, ev->arg);
		break;
	case EV_FQ_CC_NOTIFY:
		fq_cc_notify(s, ev->arg);
		break;
	default:
		break;
	}
}

/* timer i is due now (fl->timers) */
void fq_timer(struct flsim *s, uint32_t i)
{
	struct fl_state *fl = s->fl;
	if (i < fl->tm_out) { /* port i's queue empties */
		struct fq_port *f = &fl->fq[i];
		settle(s, i);
		f->backlog = 0; /* (what rounding left) */
		fq_in_empty(s, f);
		emptied(s, i);
		touch(s, i);
	} else if (i < fl->tm_pfc) { /* what waits at the head of a port's queue leaves */
		uint32_t port = i - fl->tm_out;
		settle(s, port); /* (an emptied queue let them all through) */
		let_through(s, port, false);
		fq_out_due(s, port); /* the new head's turn */
		touch(s, port);
	} else if (i < fl->tm_mark) { /* a switch's thresholds */
		fq_pfc_check(s, fl->pfc_node[i - fl->tm_pfc]);
	} else if (i < fl->tm_cc) { /* a port's queue reaches kmin */
		settle(s, i - fl->tm_mark);
		touch(s, i - fl->tm_mark); /* (refresh: mark_watch) */
	} else {
		fq_cc_timer(s, i - fl->tm_cc);
	}
}

const struct fl_queue_ops fl_queues_fifo = {
	.name = "fifo",
	.doc = "fifo: NICs send at line rate and switch ports are first-come first-served queues without limit (no "
	       "congestion control, deep buffers)",
	FQ_QUEUE_OPS,
	.rest = fq_rest,
	.restart = fq_restart,
};
