/*
 * fifo_tok.c - tokens (flow.queues: fifo and dcqcn): a message's last byte
 * and a congestion notification, each carried through the fluid queues
 * (fifo.c) on its own (EV_FQ_MARK).
 *
 * A token travels its queue pair's path, forward hops then (where ACKs
 * share the data's priority and wait in its queues) the ACK's hops.  At a
 * hop where it waits behind the queue it joins the queue's list of what
 * waits (fq_pend_push): it leaves with the bytes that arrived with it, at
 * whatever rate the port runs meanwhile (a pause held or let go: out_due),
 * and the message is delivered when it leaves the last (and its ACK is
 * back).  An idle queue with no change of rate on its way to it is crossed
 * at once (fq_tok_leave).  With no queue anywhere a message is delivered
 * at the fair-share engine's closed form, to the picosecond.  A message of
 * a packet at most on an idle queue pair is an impulse: its bytes ride its
 * token (fq_impulse).
 */
#include <math.h>

#include "fifo.h"

/* from leaving ACK hop h to the next: propagation, and the ACK's frame */
static fab_time_ps ack_lat(const struct flsim *s, const struct fl_qp *q, uint32_t h)
{
	return s->ports[q->path[h]].ack_hop_ps;
}

/* its journey is over at t */
static void tok_end(struct flsim *s, const struct fq_rec *m, fab_time_ps t)
{
	if (m->kind == TOK_NOTE)
		fab_eq_push(&s->c.eq, t, EV_FQ_CC_NOTIFY, NULL, m->qp);
	else if (m->flow != NO_FLOW)
		fab_eq_push(&s->c.eq, t, EV_FL_DELIVER, sim_flow_at(&s->c, m->flow), 0);
	else
		fab_eq_push(&s->c.eq, t, EV_FL_DELIVER, NULL, m->cookie);
}

/* whether token m can find a queue to wait in at hop h: a switch's port,
 * forward for a message's last byte or a notification before its marking
 * hop, back where ACKs wait in the data's queues */
static bool tok_waits(const struct flsim *s, const struct fl_qp *q, const struct fq_rec *m, uint32_t h)
{
	if (!s->ports[q->path[h]].is_switch)
		return false;
	return h < q->nfwd ? m->kind == TOK_DATA || h < m->upto : q->acks_wait;
}

/* token i leaves hop m.hop at t: on to the next hop where it may wait
 * (passing the others at once), or home */
void fq_tok_leave(struct flsim *s, uint32_t i, fab_time_ps t)
{
	struct fl_state *fl = s->fl;
	struct fq_rec *m = &fl->rec[i];
	const struct fl_qp *q = &fl->qps[m->qp];
	bool fixed = t == s->c.now_ps; /* (an impulse leaves its NIC later) */
	for (uint32_t h = m->hop;; h++) {
		if (h < q->nfwd) {
			t += hop_lat(s, q, h);
			if (h + 1u == q->nfwd && ((m->kind == TOK_DATA && m->flow == NO_FLOW) || !q->acks_wait)) {
				/* at the receiver: a message of a collective is
				 * delivered; ACKs that go first are back at once */
				tok_end(s, m, m->flow == NO_FLOW && m->kind == TOK_DATA ? t : t + q->ack_ps);
				rec_free(fl, i);
				return;
			}
		} else {
			t += ack_lat(s, q, h);
		}
		if (h + 1u == q->npath) {
			tok_end(s, m, t);
			rec_free(fl, i);
			return;
		}
		if (tok_waits(s, q, m, h + 1)) {
			uint32_t np = q->path[h + 1];
			const struct fq_port *f = &fl->fq[np];
			if (f->backlog == 0 && f->ain <= f->c && !f->pn && f->in_due <= s->c.now_ps) {
				/* an idle queue with no change of rate on its way
				 * to it: the token crosses it now (one that a change
				 * sent after now builds before the token is there
				 * is missed) */
				if (fl->series && h + 1 < q->nfwd)
					fl->fq_came[np].bytes += m->rate;
				continue;
			}
			m->hop = h + 1;
			if (fixed) /* (a sum of hops' latencies) */
				fl_push(s, t, EV_FQ_MARK, i);
			else
				fab_eq_push(&s->c.eq, t, EV_FQ_MARK, NULL, i);
			return;
		}
	}
}

/* token i reaches hop m.hop: it waits behind the queue there, or goes on */
void fq_tok_arrive(struct flsim *s, uint32_t i)
{
	struct fl_state *fl = s->fl;
	const struct fq_rec *m = &fl->rec[i];
	const struct fl_qp *q = &fl->qps[m->qp];
	uint32_t port = q->path[m->hop];
	struct fq_port *f = &fl->fq[port];
	settle(s, port);
	if (fl->series && m->hop < q->nfwd) /* (an impulse's bytes come in) */
		fl->fq_came[port].bytes += m->rate;
	if (m->rate > 0 && m->hop < q->nfwd && f->backlog > 0) { /* an impulse's bytes join a queue */
		touch(s, port);
		f->backlog += m->rate;
		struct fab_port_stats *st = &s->ports[port].st;
		if ((uint64_t)f->backlog > st->max_queue_bytes)
			st->max_queue_bytes = (uint64_t)f->backlog;
		if (fl->pfc)
			in_of(s, f, s->ports[q->path[m->hop - 1]].peer)->bytes += m->rate;
	}
	if (f->backlog > 0) {
		fq_pend_push(s, port, i, PEND_TOK, 0);
		return;
	}
	fq_tok_leave(s, i, s->c.now_ps);
}

/* a token of queue pair id sets out from its NIC now */
void fq_tok_send(struct flsim *s, uint32_t id, uint8_t kind, uint8_t upto, uint32_t flow, uint32_t cookie)
{
	struct fl_state *fl = s->fl;
	uint32_t i = rec_new(fl);
	fl->rec[i] = (struct fq_rec){.qp = id, .hop = 0, .flow = flow, .cookie = cookie, .kind = kind, .upto = upto};
	fq_tok_leave(s, i, s->c.now_ps);
}

/* the last byte of a message leaves its NIC (a little early where the
 * NIC's round robin puts it ahead: fl_finish_at) */
bool fq_sent(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m)
{
	if (q->nfwd < 2)
		return false; /* (no switch on the way: the engine's closed form) */
	fq_tok_send(s, id, TOK_DATA, 0, m->flow, m->cookie);
	return true;
}

/* A message of at most a packet on an idle queue pair: it leaves its NIC
 * in the time its round robin's share gives it (an equal share of the
 * line, as the next in turn), and its bytes ride its token, joining each
 * queue it reaches, instead of being a transfer whose rate every queue on
 * the path and every other transfer of its NIC would follow for those few
 * nanoseconds and back (that was half of the events of HPCC's FB_Hadoop
 * run, whose flows are 60% of a packet or less).  The bytes in the queues
 * are the same; no rate moves. */
bool fq_impulse(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m)
{
	struct fl_state *fl = s->fl;
	if (q->nfwd < 2 || m->bytes > s->c.fp.mtu)
		return false;
	uint32_t nic = q->path[0];
	double share = cap(fl, nic) / (double)(fl->ports[nic].n + 1);
	fab_time_ps t = s->c.now_ps + (fab_time_ps)ceil((double)m->bytes / share);
	fl_books(s, q, m);
	uint32_t i = rec_new(fl);
	fl->rec[i] = (struct fq_rec){
		.qp = id, .hop = 0, .rate = (double)m->bytes, .flow = m->flow, .cookie = m->cookie, .kind = TOK_DATA};
	fq_tok_leave(s, i, t);
	return true;
}
