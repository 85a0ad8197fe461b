/*
 * fifo.c - `flow.queues: fifo`: the flow engine with first-come,
 * first-served switch queues in place of fair shares.
 *
 * This is what a fabric without congestion control and with deep buffers
 * does.  A NIC sends its active queue pairs round robin at its line rate,
 * whatever lies ahead (the rate is the NIC's payload rate, less the ACKs it
 * sends, shared equally).  Every switch egress port is a fluid FIFO queue
 * of capacity C (its payload rate, less the ACKs that cross it: they go
 * first, at strict priority).  Its backlog B grows at A - C while the
 * arriving rate A exceeds C, and drains at C - A after.  A byte that arrives
 * at t leaves at D(t) = t + B(t)/C, whoever sent it.
 *
 * The rates a port sends on are exact for such a queue: while it is backed
 * up, the bytes leaving at D(t) arrived at t, so transfer i leaves at
 * C a_i(t) / A(t), the mix of what arrived, at the queue's full rate.  A
 * port therefore keeps two views of its transfers' rates: the rates coming
 * in, and the rates of the bytes now leaving.  A change coming in at t
 * reaches the second view at D(t), once the B(t) bytes ahead of it have
 * left: the changes wait in a FIFO of their own, each with the count of
 * bytes the port will have sent by then (whatever rate it sends at
 * meanwhile: a pause, a fault), the head on a timer (out_due); when the
 * queue is empty, at once.
 * A change in what leaves reaches the next port of each transfer after the
 * link's propagation delay and one packet's store-and-forward (EV_FQ_IN:
 * the changes one port passes on at once ride one event, in order).  A
 * last hop (facing the receiving NIC) passes nothing on and keeps only
 * the sums (send_last): the changes one port passes on to it at once are
 * one change of that sum.
 *
 * A message's last byte travels on its own (EV_FQ_MARK, a token:
 * fifo_tok.c): at each port it waits in the same FIFO as the changes,
 * leaves with the bytes that arrived with it, and the message is delivered
 * when it leaves the last (and its ACK is back).  With no queue anywhere
 * that is the fair-share engine's closed form to the picosecond.
 *
 * What it gives up for speed: a change at a backed-up port moves every
 * transfer through it, and all of theirs further on.  A rate is passed on
 * when it starts, stops or moves by more than FQ_TOL of itself; a port
 * passes on all of its transfers only when its scale moved by more than
 * half fl->tol since it last did (else only those whose rates changed); ACK
 * loads move a capacity in steps of 1e-4 of the line.  Changes reaching a
 * port at one instant are passed on once, at the end of it (touch); with
 * flow.batch, once within that time, as a NIC's shares after a transfer
 * leaves (a new transfer gets its share at once: fl->urgent).  A change
 * or a token passed on to an idle queue with nothing on its way to it
 * crosses it at once (pass_idle, tok_leave), a hop's latency early.
 * With DCQCN, what waits behind the head of a queue's list goes with it
 * if due within FQ_EARLY of the backlog, a change of rate also within a
 * hop's latency (let_through).
 *
 * `flow.queues: dcqcn` adds congestion control: each queue pair runs
 * DCQCN's reaction point (src/cc), its NIC shares no more than that rate
 * to it, and every 4 us (or once a packet at its rate, if longer) it
 * learns whether the queues on its path marked
 * any of a window's packets as they reached them (RED on their backlog,
 * drawn from its own stream), one path later; windows where no queue on
 * the path can mark and whose bytes change nothing go unseen (quiet)
 * until one passes kmin (mark_watch, cc_wake).  Where ACKs share the data's priority, a flow's
 * last ACK waits behind the backlog on its way back (fifo as well).  With
 * PFC, an ingress port whose bytes in its switch's queues reach XOFF
 * holds its upstream port to the rate its bytes drain at (fifo_pfc.c): the
 * upstream queue builds, and the link's other traffic waits in it.
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

void fq_caps(struct flsim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		cap_set(s->fl, i);
}

/* when the head of what waits in the port's queue starts to leave, at
 * the rate it sends now: its timer (a pause held or let go, a fault, moves
 * it and everything behind it alike) */
static void out_due(struct flsim *s, uint32_t port)
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
		out_due(s, port);
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

/* A rate passed on changes when it starts, stops or moves by more than
 * FQ_TOL of itself: a port's change of rate moves every transfer through
 * it, and all of theirs further on. */
static bool moved(double sent, double r)
{
	return r != sent && (r == 0 || sent == 0 || fabs(r - sent) > FQ_TOL * sent);
}

/* the batch's event, if it holds any change */
static void batch_flush(struct flsim *s, struct fq_batch *b)
{
	if (b->head != NO_POS)
		fl_push(s, b->t, EV_FQ_IN, b->head);
	b->head = NO_POS;
}

static bool pass_idle(struct flsim *s, uint32_t id, uint32_t h, double r, fab_time_ps t);
static bool pass_idle_last(struct flsim *s, uint32_t port, uint32_t ingress, double d);

/* a change due at t for the port: its record, new, joins the batch (one
 * due at another time flushes it first) */
static uint32_t batch_add(struct flsim *s, struct fq_batch *b, uint32_t port, fab_time_ps t)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	f->in_due = FAB_MAX(f->in_due, t); /* (a change is on its way to it until then) */
	if (b->head != NO_POS && b->t != t)
		batch_flush(s, b);
	uint32_t i = rec_new(fl);
	if (b->head == NO_POS) {
		b->head = i;
		b->t = t;
		b->stamp = ++fl->batch_stamp;
	} else {
		fl->rec[b->tail].next = i;
	}
	b->tail = i;
	return i;
}

/* transfer id's rate into its last hop h moves from old to r at t: it is
 * in the port's list while it sends there; the change joins the batch's
 * change of the sum into that port (every transfer one refresh moves
 * there, at once), or goes through an idle port at once */
static void send_last(struct flsim *s, struct fq_batch *b, uint32_t id, uint32_t h, double old, double r, fab_time_ps t)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	uint32_t port = q->path[h], ingress = s->ports[q->path[h - 1]].peer;
	if (r > 0 && q->pos[h] == NO_POS)
		fl_member_add(s, id, q, h);
	else if (r == 0 && q->pos[h] != NO_POS)
		fl_member_remove(s, q, h);
	double d = r - old;
	if (pass_idle_last(s, port, ingress, d))
		return;
	if (b->head != NO_POS && b->t == t && fl->agg_stamp[port] == b->stamp) {
		struct fq_rec *m = &fl->rec[fl->agg_rec[port]];
		FAB_ASSERT(m->qp == port && m->hop == REC_LAST);
		if (m->cookie == ingress) {
			m->rate += d;
			return;
		}
	}
	uint32_t i = batch_add(s, b, port, t);
	fl->rec[i] = (struct fq_rec){.qp = port, .hop = REC_LAST, .rate = d, .cookie = ingress, .next = NO_POS};
	fl->agg_rec[port] = i;
	fl->agg_stamp[port] = b->stamp;
}

/* transfer id's rate into hop h moves from old to r at t: a change that
 * joins the batch, or goes through an idle port at once (pass_idle).  One
 * transfer's changes reach a hop in the order they were sent (fh + 3 nfwd
 * holds when the last one sent to each hop is due): one passed on through
 * idle ports, due some hops later, is not overtaken by the next, passed on
 * from a queue a hop away (a hop would end at the older rate; a last
 * hop's sum, which takes differences, would be off) */
static void send_rate(struct flsim *s, struct fq_batch *b, uint32_t id, uint32_t h, double old, double r, fab_time_ps t)
{
	struct fl_state *fl = s->fl;
	const struct fl_qp *q = &fl->qps[id];
	double *due = q->fh + 3 * q->nfwd + h;
	if ((double)t < *due)
		t = (fab_time_ps)*due;
	*due = (double)t;
	if (h + 1u == q->nfwd) {
		send_last(s, b, id, h, old, r, t);
		return;
	}
	if (pass_idle(s, id, h, r, t))
		return;
	uint32_t i = batch_add(s, b, q->path[h], t);
	fl->rec[i] = (struct fq_rec){.qp = id, .hop = h, .rate = r, .next = NO_POS};
}

/* transfer id at hop h leaves at its share of what the port sends: passed
 * on to its next port if that moved */
static void pass_on(struct flsim *s, struct fq_batch *b, struct fq_port *f, uint32_t id, uint32_t h)
{
	struct fl_qp *q = &s->fl->qps[id];
	double *fh = q->fh + 3 * h, out = fh[1] * f->scale;
	if (h + 1 < q->nfwd && moved(fh[2], out)) {
		double old = fh[2];
		fh[2] = out;
		send_rate(s, b, id, h + 1, old, out, s->c.now_ps + hop_lat(s, q, h));
	}
	if (fh[0] == 0 && fh[1] == 0)
		fl_member_remove(s, q, h);
}

/* A change of transfer id's rate into hop h, due at t, where that port is
 * idle and stays so with it (no queue, nothing waiting or to pass on, no
 * change of rate on its way to it): it takes effect now, and goes on
 * (rate_in, refresh and pass_on for an idle port, as they would at t, a
 * hop's latency early).  Most changes cross idle ports: this saves an
 * event and a refresh each (a queue that a change sent after now would
 * build there before t is missed). */
static bool pass_idle(struct flsim *s, uint32_t id, uint32_t h, double r, fab_time_ps t)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	uint32_t port = q->path[h];
	struct fq_port *f = &fl->fq[port];
	double *fh = q->fh + 3 * h;
	if (f->in_due > s->c.now_ps || f->touched || f->ain - fh[0] + r > f->c || !refresh_moot(s, port))
		return false;
	f->t_backlog = s->c.now_ps;
	came_to_now(s, port);
	if (fl->pfc) {
		struct fq_in *in = in_of(s, f, s->ports[q->path[h - 1]].peer);
		in->rate = FAB_MAX(in->rate + r - fh[0], 0.0);
		in->out = FAB_MAX(in->out + r - fh[1], 0.0);
	}
	f->ain = FAB_MAX(f->ain + r - fh[0], 0.0);
	f->aout = FAB_MAX(f->aout + r - fh[1], 0.0);
	fh[0] = fh[1] = r;
	if (q->pos[h] == NO_POS)
		fl_member_add(s, id, q, h);
	if (h + 1u < q->nfwd && moved(fh[2], r)) {
		struct fq_batch b = {.head = NO_POS};
		double old = fh[2];
		fh[2] = r;
		send_rate(s, &b, id, h + 1, old, r, t + hop_lat(s, q, h));
		batch_flush(s, &b);
	}
	if (r == 0)
		fl_member_remove(s, q, h);
	return true;
}

/* pass_idle for a change of d in the rate into a last hop from an ingress
 * port */
static bool pass_idle_last(struct flsim *s, uint32_t port, uint32_t ingress, double d)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	if (f->in_due > s->c.now_ps || f->touched || f->ain + d > f->c || !refresh_moot(s, port))
		return false;
	f->t_backlog = s->c.now_ps;
	came_to_now(s, port);
	last_moved(s, port, ingress, d, LAST_IN | LAST_OUT);
	return true;
}

/* The port's transfers leave at their share of what it sends.  When its
 * scale moved (by more than half the tolerance since they were all last
 * passed on), every one of them moves; otherwise only those that changed. */
static void refresh(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	struct fl_port *p = &fl->ports[port];
	double c = cap(fl, port);
	bool backed_up = f->backlog > 0 || f->ain > c;
	f->scale = backed_up && f->aout > 0 ? c / f->aout : 1;
	/* (a port that faces a NIC is its transfers' last hop: they have no
	 * next port to pass a rate on to, only their lists to leave) */
	bool last = !s->ports[s->ports[port].peer].is_switch;
	struct fq_batch b = {.head = NO_POS};
	if (!last &&
	    ((f->scale == 1) != (f->scale_sent == 1) ||
	     fabs(f->scale - f->scale_sent) > 0.5 * fl->tol * f->scale_sent)) {
		f->scale_sent = f->scale;
		for (uint32_t j = p->n; j-- > 0;)
			pass_on(s, &b, f, p->qp[j], p->hop[j]);
	} else {
		for (uint32_t i = 0; i < f->nchg; i++) {
			uint32_t id = (uint32_t)(f->chg[i] >> 8), h = f->chg[i] & 0xff;
			if (fl->qps[id].pos[h] != NO_POS) /* (not gone already) */
				pass_on(s, &b, f, id, h);
		}
	}
	batch_flush(s, &b);
	f->nchg = 0;
	/* when it empties, if nothing changes */
	double dt = f->backlog > 0 && f->ain < c ? ceil(f->backlog / (c - f->ain)) : INFINITY;
	fab_time_ps t = dt < 1e16 ? s->c.now_ps + (fab_time_ps)dt : FAB_TIME_NEVER; /* (ain a hair under c: never) */
	fab_timers_set(&fl->timers, port, t);
	if (f->pn) /* (its capacity may have moved) */
		out_due(s, port);
	if (fl->cc && s->c.fp.ecn.enabled && s->ports[port].is_switch)
		fq_mark_watch(s, port, c);
	if (fl->pfc && f->sw != UINT32_MAX)
		fq_pfc_watch(s, port);
}

void fq_refresh(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	do {
		for (uint32_t i = 0; i < fl->touch.n; i++) {
			fl->fq[fl->touch.v[i]].touched = false;
			settle(s, fl->touch.v[i]); /* (later than the change, with flow.batch) */
			refresh(s, fl->touch.v[i]);
		}
		fl->touch.n = 0;
		/* then their switches' thresholds, once each (a pause they
		 * change touches its upstream port: round again) */
		if (fl->npfc_due)
			fq_pfc_checks(s);
	} while (fl->touch.n);
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

/* the ACKs crossing a port changed by d: its capacity (a NIC's: its queue
 * pairs' rates) */
static void ack_changed(struct flsim *s, uint32_t port, double d)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	f->ack = FAB_MAX(f->ack + d, 0.0);
	/* changes under 1e-4 of the line wait for more (the ACK load of every
	 * transfer would otherwise ripple through every queue it crosses) */
	if (fabs(f->ack - f->ack_used) <= 1e-4 * fl->ports[port].payload_per_ps)
		return;
	if (!s->ports[port].is_switch) { /* a NIC: its queue pairs' rates */
		fl_mark_dirty(s, port);
		return;
	}
	settle(s, port);
	f->ack_used = f->ack;
	cap_set(fl, port);
	if (!refresh_moot(s, port))
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

/* the source sends queue pair id at r: its ACKs come back at that rate */
void fq_source_rate(struct flsim *s, uint32_t id, double r)
{
	struct fl_state *fl = s->fl;
	struct fl_qp *q = &fl->qps[id];
	FAB_ASSERT(q->fh); /* (it was made active) */
	if (fl->cc && r > 0)
		fq_cc_start(s, id);
	q->rem -= q->rate * (double)(s->c.now_ps - q->t_last);
	if (q->rem < 0)
		q->rem = 0;
	q->t_last = s->c.now_ps;
	if (r == q->rate && (r == 0 || fl_done_due(fl, id)))
		return;
	double d = fl->ack_frac * (r - q->rate);
	for (uint32_t h = q->nfwd; h < q->npath; h++)
		ack_changed(s, q->path[h], d);
	q->rate = q->next_rate = r;
	if (r > 0)
		fl_done_set(fl, id, fl_finish_at(s, q));
	else
		fl_done_clear(fl, id);
	if (q->nfwd > 1 && moved(q->fh[2], r)) {
		double old = q->fh[2];
		q->fh[2] = r;
		struct fq_batch b = {.head = NO_POS};
		send_rate(s, &b, id, 1, old, r, s->c.now_ps + hop_lat(s, q, 0));
		batch_flush(s, &b);
	}
}

/* The NICs whose queue pairs changed: each sends its active ones round
 * robin, an equal share of its payload rate less the ACKs it sends.  A
 * rate changes the ACKs other NICs send, and so theirs: those join the
 * list (changes under 1e-4 of the line are let be). */
void fq_nics(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	for (uint32_t i = 0; i < fl->dirty.n; i++) {
		uint32_t port = fl->dirty.v[i];
		struct fl_port *p = &fl->ports[port];
		p->dirty = false;
		if (s->ports[port].is_switch)
			continue;
		fl->fq[port].ack_used = fl->fq[port].ack;
		cap_set(fl, port);
		double c = cap(fl, port), r = p->n ? c / p->n : 0;
		fl_rank_nic(s, port, c);
		if (fl->cc) {
			fq_cc_share(s, port, c);
		} else {
			for (uint32_t j = 0; j < p->n; j++)
				fq_source_rate(s, p->qp[j], r);
		}
		fl->recomputes++;
		fl->comp_qps += p->n;
	}
	fl->dirty.n = 0;
}

/* flow.queues fifo: its place in each forward hop's list (none yet), at
 * an even count of uint32_t (aligned for doubles), its rates there (fh:
 * none yet) and when the last change of them sent there is due (fh + 3
 * nfwd: none yet), in one allocation */
static void fl_rates_of(struct flsim *s, struct fl_qp *q)
{
	size_t nu = ((size_t)q->nfwd + 1) & ~(size_t)1;
	double *block = fl_arena_alloc(s->fl, (nu / 2 + 4 * (size_t)q->nfwd) * sizeof *block);
	q->pos = (uint32_t *)block;
	for (uint32_t h = 0; h < q->nfwd; h++)
		q->pos[h] = NO_POS;
	q->fh = block + nu / 2;
}

/* a queue pair's transfer starts: its NIC shares its rate again, at once */
void fq_start(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	if (!q->fh)
		fl_rates_of(s, q);
	fl_member_add(s, id, q, 0);
	fl_mark_dirty(s, q->path[0]);
	s->fl->urgent = true;
}

/* its last transfer has ended: it leaves its NIC, which shares again */
void fq_stop(struct flsim *s, uint32_t id, struct fl_qp *q)
{
	fl_member_remove(s, q, 0);
	fl_mark_dirty(s, q->path[0]);
	fq_source_rate(s, id, 0);
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
		out_due(s, port); /* the new head's turn */
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
	.init = fq_init,
	.free = fq_free,
	.caps = fq_caps,
	.start = fq_start,
	.stop = fq_stop,
	.impulse = fq_impulse,
	.sent = fq_sent,
	.rates = fq_nics,
	.refresh = fq_refresh,
	.event = fq_event,
	.timer = fq_timer,
	.port_rate = fq_port_rate,
	.port_sent = fq_port_sent,
	.port_pfc = fq_port_pfc,
	.rest = fq_rest,
};
