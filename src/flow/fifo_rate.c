/*
 * fifo_rate.c - the rates of the fluid FIFO queues' transfers (flow.queues:
 * fifo and dcqcn): set at their sources, passed on from port to port.
 *
 * A NIC sends its active queue pairs round robin, an equal share each of
 * its payload rate less the ACKs it sends (fq_nics; with DCQCN none above
 * its congestion control's rate: fq_cc_share).  A change in what leaves a
 * port (fifo.c) reaches the next port of each transfer after the link's
 * propagation delay and one packet's store-and-forward (EV_FQ_IN: the
 * changes one port passes on at once ride one event, in order).  A last
 * hop (facing the receiving NIC) passes nothing on and keeps only the
 * sums (send_last): the changes one port passes on to it at once are one
 * change of that sum.
 *
 * What it gives up for speed: a change at a backed-up port moves every
 * transfer through it, and all of theirs further on.  A rate is passed on
 * when it starts, stops or moves by more than FQ_TOL of itself; a port
 * passes on all of its transfers only when its scale moved by more than
 * half fl->tol since it last did (else only those whose rates changed);
 * ACK loads move a capacity in steps of 1e-4 of the line.  Changes
 * reaching a port at one instant are passed on once, at the end of it
 * (touch, fq_refresh); with flow.batch, once within that time, as a NIC's
 * shares after a transfer leaves (a new transfer gets its share at once:
 * fl->urgent).  A change or a token passed on to an idle queue with
 * nothing on its way to it crosses it at once (pass_idle, fq_tok_leave), a
 * hop's latency early.
 */
#include <math.h>

#include "fifo.h"

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
		fq_out_due(s, port);
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
