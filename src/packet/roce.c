/*
 * roce.c - the RoCEv2 transport: reliable-connected queue pairs with
 * go-back-N, ACK coalescing, CNPs, and a congestion control (the model the
 * registry chose for the transport: DCQCN by default, fabric.cc otherwise)
 * that sets the pace, and for a model that wants samples the window and the
 * per-ACK samples (round trip, telemetry) it reads.
 *
 * A flow's bytes are split evenly over its queue pairs; each QP segments its
 * share into MTU packets numbered by PSN.  The receiver accepts only the next
 * expected PSN: an out-of-order packet draws one NAK naming the expected PSN
 * (and no other until that PSN arrives), a duplicate draws an ACK.  The
 * sender goes back to the NAKed PSN, or to the oldest unacknowledged one
 * when no progress was made for a retransmission timeout (go-back-N).  With
 * go-back-0 the message is the unit: the receiver acknowledges only whole
 * messages, drops what it had of one when a packet is missing and NAKs its
 * first PSN, and the sender resends the message from its start.  A QP that
 * recovers (NAK or timeout) more than fabric.nic.retry_count times in a row
 * without progress fails, as InfiniBand's retry counter does: it sends
 * nothing more and its flow never finishes.  The notification
 * point sends at most one CNP per QP per interval for CE-marked packets
 * (dcqcn.h); the congestion control's rate spaces the QP's packets (a packet
 * of w wire bytes holds the QP for w at that rate, or at line rate when it
 * is not below it).  Framing: fab_wire_of(FAB_TRANSPORT_ROCE), with the
 * scenario's fabric.wire.* overrides.
 * Both ends of a QP live in one struct roce_qp: the sender fields are only
 * touched at the source NIC, the receiver fields only at the destination.
 */
#include <stdlib.h>

#include "../cc/cc.h"
#include "../cc/dcqcn.h"
#include "transport.h"

/* A message on a queue pair: its packets end (exclusive) at end_psn. */
struct roce_msg {
	uint32_t end_psn;
	uint16_t last_payload;
	uint32_t flow;   /* owning flow, or NO_FLOW for a posted message */
	uint32_t cookie; /* handed back when delivered (posted messages) */
};

/* how far ahead of the next expected PSN a reorder-tolerant receiver
 * holds packets (adaptive routing) */
#define OOO_WINDOW 4096u

struct roce_qp {
	struct sim_qp q;
	/* sender */
	uint32_t smsg, amsg; /* message cursors: sending, acknowledging */
	uint32_t snd_nxt, snd_una, snd_max;
	bool rto_armed;
	fab_time_ps next_send_ps; /* pacing */
	fab_time_ps last_progress_ps;
	uint32_t rto_gen, cc_gen;
	uint32_t retries; /* recoveries since the last progress */
	bool failed;      /* retries exceeded: the QP is in the error state */
	const struct fab_cc_ops *cc;
	uint32_t win_pkts; /* its congestion control's window in packets (UINT32_MAX: none, rate alone) */
	uint16_t cc_hdr;   /* bytes its congestion control adds to each data packet and ACK */
	_Alignas(16) unsigned char cc_state[FAB_CC_STATE_MAX];
	/* the messages, read at both ends (posted by the sender), and the
	 * receiver's state: each a cache line away from the other's writes */
	char gap_[FAB_GAP];
	uint32_t npkts; /* packets posted so far */
	struct roce_msg *msgs;
	uint32_t nmsgs, cap_msgs;
	char gap2_[FAB_GAP];
	/* receiver */
	uint32_t rmsg; /* message cursor: receiving */
	uint32_t rcv_nxt, unacked;
	uint64_t *ooo; /* adaptive routing: PSNs received ahead of rcv_nxt, bit psn mod OOO_WINDOW */
	bool nak_sent;
	bool echo_pending; /* a CE-marked packet arrived: the next ACK or NAK echoes it */
	struct fab_dcqcn_np np;
};

static inline struct roce_qp *RQ(struct sim_qp *q)
{
	return (struct roce_qp *)q;
}

static inline const struct roce_qp *CRQ(const struct sim_qp *q)
{
	return (const struct roce_qp *)q;
}

/* the queue pair's framing (RoCEv2's, or InfiniBand's on an IB fabric) as
 * the scenario set it */
static inline const struct fab_wire *wire(const struct psim *s, const struct roce_qp *qp)
{
	return &s->c.wires[qp->q.c.transport];
}

/* a model with a window: the packets it lets be in flight */
static void window_update(struct psim *s, struct roce_qp *qp)
{
	if (!(qp->cc->wants & FAB_CC_WANTS_SAMPLE))
		return;
	uint64_t w = qp->cc->window_bytes(qp->cc_state);
	qp->win_pkts = w == UINT64_MAX
		? UINT32_MAX
		: (uint32_t)FAB_MAX(FAB_MIN((w + s->c.fp.mtu - 1) / s->c.fp.mtu, UINT32_MAX - 1), 1);
}

/* a full packet there and its ACK back through empty queues; *hops: the
 * switches on the way there */
static fab_time_ps base_rtt(struct psim *s, const struct roce_qp *qp, uint32_t *hops)
{
	return pkt_base_rtt(s, &qp->q.c, s->c.fp.mtu + wire(s, qp)->data_overhead + qp->cc_hdr,
			    wire(s, qp)->ack_frame + qp->cc_hdr, hops);
}

static void cc_start(struct psim *s, struct roce_qp *qp)
{
	double line = sim_nic_line_bps(&s->c, qp->q.c.src_nic);
	const void *params = fab_cc_params(&s->c.fp.cc, qp->cc);
	qp->cc->init(qp->cc_state, params, line);
	qp->cc_hdr = (uint16_t)(qp->cc->header_bytes ? qp->cc->header_bytes(params) : 0);
	if (qp->cc->attach) {
		uint32_t hops;
		fab_time_ps rtt = base_rtt(s, qp, &hops);
		struct fab_cc_env env = {
			.line_bps = line,
			.mss = s->c.fp.mtu,
			.frame_bytes = s->c.fp.mtu + wire(s, qp)->data_overhead + qp->cc_hdr,
			.base_rtt_ps = rtt,
			.hops = hops,
		};
		qp->cc->attach(qp->cc_state, &env);
	}
	qp->win_pkts = UINT32_MAX;
	window_update(s, qp);
}

static void roce_init(struct psim *s, struct sim_qp *q)
{
	struct roce_qp *qp = RQ(q);
	qp->cc = fab_cc_of(&s->c.fp.cc, q->c.transport);
	FAB_ASSERT(qp->cc->state_size <= sizeof qp->cc_state);
	cc_start(s, qp);
}

static void roce_line_changed(struct psim *s, struct sim_qp *q)
{
	cc_start(s, RQ(q));
}

/* rested (nothing outstanding): the congestion control starts again,
 * and its timers and the retransmission timer are forgotten, as on a
 * queue pair that never sent (the next send arms it) */
static void roce_rest(struct psim *s, struct sim_qp *q)
{
	struct roce_qp *qp = RQ(q);
	qp->cc_gen++;
	if (qp->snd_una >= qp->snd_max) {
		qp->rto_gen++;
		qp->rto_armed = false;
	}
	cc_start(s, qp);
}

static void roce_destroy(struct sim_qp *q)
{
	free(RQ(q)->msgs);
	free(RQ(q)->ooo);
}

static void send_ctrl(struct psim *s, struct roce_qp *qp, int kind, uint32_t psn)
{
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = (uint8_t)kind;
	p->qp = qp->q.c.id;
	p->psn = psn;
	p->src_nic = qp->q.c.dst_nic;
	p->dst_nic = qp->q.c.src_nic;
	p->hash = qp->q.c.hash_rev;
	p->prio = s->c.fp.ctrl_prio;
	p->frame_bytes = (uint16_t)(kind == PKT_NOTIFY ? wire(s, qp)->notify_frame
						       : wire(s, qp)->ack_frame + qp->cc_hdr);
	if (kind != PKT_NOTIFY && s->rx_tel) { /* the telemetry of the data packet it answers */
		p->tel = s->rx_tel;
		s->rx_tel = 0;
	}
	if (kind != PKT_NOTIFY && qp->echo_pending) {
		p->ecn = ECN_CE; /* the echo; control packets are not ECN-capable, so no switch marks them */
		qp->echo_pending = false;
	}
	struct sim_nic *nic = &s->nics[qp->q.c.dst_nic];
	sim_port_enqueue(s, &s->ports[nic->port], p);
}

static void rto_arm(struct psim *s, struct roce_qp *qp, fab_time_ps at)
{
	qp->rto_armed = true;
	qp->rto_gen++;
	fab_eq_push(&s->c.eq, at, EV_RTO, qp, qp->rto_gen);
}

/* a message in the queue pair's list, as both ends read it */
static void roce_record(struct psim *s, struct roce_qp *qp, fab_bytes bytes, uint32_t flow, uint32_t cookie)
{
	if (qp->nmsgs == qp->cap_msgs) {
		qp->cap_msgs = qp->cap_msgs ? 2 * qp->cap_msgs : 4;
		qp->msgs = fab_xrealloc(qp->msgs, qp->cap_msgs, sizeof *qp->msgs);
	}
	uint32_t npk = (uint32_t)((bytes + s->c.fp.mtu - 1) / s->c.fp.mtu);
	if (!npk)
		npk = 1; /* an empty message still carries one packet */
	qp->npkts += npk;
	qp->msgs[qp->nmsgs++] = (struct roce_msg){
		.end_psn = qp->npkts,
		.last_payload = (uint16_t)(bytes - (uint64_t)(npk - 1) * s->c.fp.mtu),
		.flow = flow,
		.cookie = cookie,
	};
}

static void roce_expect(struct psim *s, struct sim_qp *q, fab_bytes bytes, uint32_t flow, fab_time_ps at_ps)
{
	(void)at_ps;
	roce_record(s, RQ(q), bytes, flow, 0);
}

static void roce_post(struct psim *s, struct sim_qp *q, fab_bytes bytes, uint32_t flow, uint32_t cookie)
{
	struct roce_qp *qp = RQ(q);
	roce_record(s, qp, bytes, flow, cookie);
	if (qp->next_send_ps < s->c.now_ps)
		qp->next_send_ps = s->c.now_ps;
	nic_qp_make_ready(s, q);
}

/* the flow whose message the sender is waiting on, if any */
static struct fab_flow_stats *acked_flow(struct psim *s, const struct roce_qp *qp)
{
	if (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW)
		return &sim_flow_at(&s->c, qp->msgs[qp->amsg].flow)->st;
	return NULL;
}

static bool roce_has_data(const struct sim_qp *q)
{
	const struct roce_qp *qp = CRQ(q);
	return !qp->failed && qp->snd_nxt < qp->npkts && qp->snd_nxt - qp->snd_una < qp->win_pkts;
}

/* the first PSN of message m */
static uint32_t msg_first(const struct roce_qp *qp, uint32_t m)
{
	return m ? qp->msgs[m - 1].end_psn : 0;
}

static bool go_back_0(const struct psim *s)
{
	return s->c.fp.nic.retransmit == FAB_RETX_GO_BACK_0;
}

/* A loss is being recovered; false when that would exceed the retry count,
 * and the QP has failed (the flow waiting on it never finishes). */
static bool retry(struct psim *s, struct roce_qp *qp)
{
	if (++qp->retries <= s->c.fp.nic.retry_count)
		return true;
	qp->failed = true;
	qp->rto_gen++; /* its timer is void */
	if (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW)
		sim_flow_qp_failed(&s->c, sim_flow_at(&s->c, qp->msgs[qp->amsg].flow));
	s->c.tot.qp_errors++;
	return false;
}

static fab_time_ps roce_earliest(const struct sim_qp *q)
{
	return CRQ(q)->next_send_ps;
}

static fab_time_ps roce_sent(struct psim *s, struct sim_qp *q, uint32_t wire_bytes, fab_rate_bps line)
{
	struct roce_qp *qp = RQ(q);
	double rate = qp->cc->rate_bps(qp->cc_state);
	fab_time_ps gap = rate >= (double)line ? fab_ser_ps(wire_bytes, line) : fab_pace_ps(wire_bytes, rate);
	qp->next_send_ps = FAB_MAX(qp->next_send_ps, s->c.now_ps) + gap;
	return qp->next_send_ps;
}

static double roce_rate(const struct sim_qp *q)
{
	return CRQ(q)->cc->rate_bps(CRQ(q)->cc_state);
}

static struct pkt *roce_next_packet(struct psim *s, struct sim_qp *q)
{
	struct roce_qp *qp = RQ(q);
	if (!roce_has_data(q))
		return NULL;
	/* the message holding snd_nxt (go-back-N can move it backwards) */
	while (qp->smsg > 0 && qp->msgs[qp->smsg - 1].end_psn > qp->snd_nxt)
		qp->smsg--;
	while (qp->msgs[qp->smsg].end_psn <= qp->snd_nxt)
		qp->smsg++;
	const struct roce_msg *m = &qp->msgs[qp->smsg];
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_DATA;
	p->qp = q->c.id;
	p->psn = qp->snd_nxt;
	p->src_nic = q->c.src_nic;
	p->dst_nic = q->c.dst_nic;
	p->hash = q->c.hash_fwd;
	p->prio = q->c.prio;
	p->ecn = ECN_ECT0;
	p->payload = p->psn + 1 == m->end_psn ? m->last_payload : (uint16_t)s->c.fp.mtu;
	p->frame_bytes = (uint16_t)(p->payload + wire(s, qp)->data_overhead + qp->cc_hdr);
	struct fab_flow_stats *fst = m->flow != NO_FLOW ? &sim_flow_at(&s->c, m->flow)->st : NULL;
	if (qp->cc->wants & FAB_CC_WANTS_SAMPLE) {
		p->tel = pkt_tel_new(s, qp->cc->wants & FAB_CC_WANTS_INT);
		pkt_tel_at(s, p->tel)->resent = qp->snd_nxt < qp->snd_max;
	}
	if (qp->snd_nxt < qp->snd_max) {
		if (fst)
			fst->retx_pkts++;
		s->c.tot.retx_pkts++;
	}
	qp->snd_nxt++;
	if (qp->snd_nxt > qp->snd_max) {
		qp->snd_max = qp->snd_nxt;
		if (!q->c.used) /* written once: the receiver reads this line */
			q->c.used = true;
	}
	if (fst)
		fst->data_pkts++;
	s->c.tot.data_pkts++;
	s->c.tot.data_tx_bytes += p->payload;
	s->live_data_payload += p->payload;
	if (!qp->rto_armed) {
		qp->last_progress_ps = s->c.now_ps;
		rto_arm(s, qp, s->c.now_ps + s->c.fp.nic.rto_ps);
	}
	qp->cc->on_sent(qp->cc_state, p->payload);
	return p;
}

/* Messages fully acknowledged: a flow is done when all its QPs' are. */
static void sender_ack(struct psim *s, struct roce_qp *qp, uint32_t psn)
{
	FAB_ASSERT(psn <= qp->snd_max); /* nothing is acknowledged before it is sent */
	if (psn > qp->snd_una) {
		if (qp->cc->on_ack)
			qp->cc->on_ack(qp->cc_state, (fab_bytes)(psn - qp->snd_una) * s->c.fp.mtu, s->c.now_ps);
		qp->snd_una = psn;
		qp->retries = 0;
		qp->last_progress_ps = s->c.now_ps;
		if (qp->snd_nxt < qp->snd_una)
			qp->snd_nxt = qp->snd_una;
	}
	while (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].end_psn <= qp->snd_una) {
		const struct roce_msg *m = &qp->msgs[qp->amsg++];
		if (m->flow != NO_FLOW)
			sim_flow_qp_done(&s->c, sim_flow_at(&s->c, m->flow));
	}
}

/* go-back-0: the receiver drops what it had of the message it is receiving */
static void drop_partial_message(struct psim *s, struct roce_qp *qp)
{
	if (qp->rmsg >= qp->nmsgs)
		return;
	uint32_t first = msg_first(qp, qp->rmsg);
	uint32_t flow = qp->msgs[qp->rmsg].flow;
	if (flow != NO_FLOW)
		*sim_flow_rx(&s->c, flow) -= (fab_bytes)(qp->rcv_nxt - first) * s->c.fp.mtu;
	qp->rcv_nxt = first;
	qp->unacked = 0;
}

/* the next expected PSN arrived (or was held): deliver it, complete its
 * message at the boundary, acknowledge every ack_every packets */
static void accept_next(struct psim *s, struct roce_qp *qp, uint32_t payload)
{
	FAB_ASSERT(qp->rcv_nxt < qp->npkts);
	qp->rcv_nxt++;
	qp->nak_sent = false;
	bool boundary = false;
	const struct roce_msg *m = &qp->msgs[qp->rmsg];
	if (m->flow != NO_FLOW)
		*sim_flow_rx(&s->c, m->flow) += payload;
	if (m->end_psn == qp->rcv_nxt) {
		boundary = true;
		qp->rmsg++;
		if (m->flow == NO_FLOW)
			s->c.hooks.delivered(s->c.hooks.ctx, m->cookie);
	}
	if ((++qp->unacked >= s->c.fp.nic.ack_every && !go_back_0(s)) || boundary) {
		qp->unacked = 0;
		send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt);
	}
}

/* Adaptive routing reorders packets: the NIC places one that arrives
 * ahead of the next expected PSN (within OOO_WINDOW) and delivers it when
 * the gap before it fills; a duplicate draws an ACK, and a loss is found
 * by the sender's timeout (no NAK: a gap is most often a packet still on
 * a longer path). */
static void receive_any_order(struct psim *s, struct roce_qp *qp, struct pkt *p)
{
	uint32_t psn = p->psn;
	if (psn < qp->rcv_nxt || psn >= qp->rcv_nxt + OOO_WINDOW) {
		if (psn < qp->rcv_nxt)
			send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt);
		return;
	}
	if (!qp->ooo)
		qp->ooo = fab_xcalloc(OOO_WINDOW / 64, sizeof *qp->ooo);
	if (psn > qp->rcv_nxt) {
		uint32_t b = psn % OOO_WINDOW;
		if (qp->ooo[b / 64] & (1ull << (b % 64))) {
			send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt); /* a duplicate */
			return;
		}
		qp->ooo[b / 64] |= 1ull << (b % 64);
		s->c.tot.reordered++;
		return;
	}
	accept_next(s, qp, p->payload);
	for (;;) { /* what was held behind it */
		uint32_t b = qp->rcv_nxt % OOO_WINDOW;
		if (qp->rcv_nxt >= qp->npkts || !(qp->ooo[b / 64] & (1ull << (b % 64))))
			break;
		qp->ooo[b / 64] &= ~(1ull << (b % 64));
		const struct roce_msg *m = &qp->msgs[qp->rmsg];
		accept_next(s, qp, qp->rcv_nxt + 1 == m->end_psn ? m->last_payload : (uint32_t)s->c.fp.mtu);
	}
}

static void receive_data(struct psim *s, struct roce_qp *qp, struct pkt *p)
{
	if (p->ecn == ECN_CE && qp->cc->feedback == FAB_CC_FEEDBACK_CNP &&
	    fab_dcqcn_np_on_ce(&qp->np, s->c.fp.nic.cnp_interval_ps, s->c.now_ps))
		send_ctrl(s, qp, PKT_NOTIFY, 0);
	else if (p->ecn == ECN_CE && qp->cc->feedback == FAB_CC_FEEDBACK_ECHO)
		qp->echo_pending = true;
	/* go-back-0: the sender has restarted the message (after a timeout) */
	if (go_back_0(s) && p->psn < qp->rcv_nxt && qp->rmsg < qp->nmsgs && p->psn == msg_first(qp, qp->rmsg))
		drop_partial_message(s, qp);
	if (s->c.fp.ecmp_adaptive && !go_back_0(s)) {
		receive_any_order(s, qp, p);
		return;
	}
	if (p->psn == qp->rcv_nxt) {
		accept_next(s, qp, p->payload);
	} else if (p->psn > qp->rcv_nxt) {
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			if (go_back_0(s))
				drop_partial_message(s, qp);
			send_ctrl(s, qp, PKT_NAK, qp->rcv_nxt);
		}
	} else {
		send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt);
	}
}

static void receive_cnp(struct psim *s, struct roce_qp *qp)
{
	struct fab_flow_stats *fst = acked_flow(s, qp);
	if (fst)
		fst->cnps++;
	s->c.tot.cnps++;
	fab_time_ps delay = qp->cc->on_congestion(qp->cc_state, s->c.now_ps);
	if (delay) {
		qp->cc_gen++;
		fab_eq_push(&s->c.eq, s->c.now_ps + delay, EV_CC_TIMER, qp, qp->cc_gen);
	}
}

/* what an ACK or NAK tells a model that wants samples */
static void sample(struct psim *s, struct roce_qp *qp, const struct pkt *p, uint32_t una_before)
{
	const struct pkt_tel *r = pkt_tel_at(s, p->tel);
	fab_bytes acked = (fab_bytes)(qp->snd_una - una_before) * s->c.fp.mtu;
	struct fab_cc_sample smp = {
		.now_ps = s->c.now_ps,
		.rtt_ps = r->resent ? 0 : s->c.now_ps - r->sent_ps,
		.acked_bytes = acked,
		.marked_bytes = p->ecn == ECN_CE ? acked : 0,
		.acked_seq = (uint64_t)qp->snd_una * s->c.fp.mtu,
		.sent_seq = (uint64_t)qp->snd_nxt * s->c.fp.mtu,
		.nhops = r->nhops,
		.hops = r->hop,
	};
	qp->cc->on_sample(qp->cc_state, &smp);
	uint32_t before = qp->win_pkts;
	window_update(s, qp);
	if (qp->win_pkts > before || qp->snd_una > una_before)
		nic_qp_make_ready(s, &qp->q); /* the window opened */
}

static void roce_on_receive(struct psim *s, struct sim_nic *nic, struct pkt *p)
{
	(void)nic;
	struct roce_qp *qp = RQ(pkt_qp(s, p->qp));
	uint32_t una_before = p->kind == PKT_DATA ? 0 : qp->snd_una; /* (data: the sender's line unread) */
	if (p->kind != PKT_DATA &&
	    qp->failed) {           /* (the kind first: data at the receiver never reads the sender's line) */
		sim_pkt_free(s, p); /* a failed sender hears nothing */
		return;
	}
	switch (p->kind) {
	case PKT_DATA:
		s->rx_tel = p->tel; /* for the ACK it draws (send_ctrl), if any */
		p->tel = 0;
		receive_data(s, qp, p);
		if (s->rx_tel) {
			pkt_tel_free(s, s->rx_tel);
			s->rx_tel = 0;
		}
		break;
	case PKT_ACK:
		sender_ack(s, qp, p->psn);
		if (p->ecn == ECN_CE)
			receive_cnp(s, qp); /* an echo counts as a CNP */
		break;
	case PKT_NAK:
		sender_ack(s, qp, p->psn);
		if (p->ecn == ECN_CE)
			receive_cnp(s, qp);
		if (p->psn < qp->snd_nxt && retry(s, qp)) {
			qp->snd_nxt = p->psn;
			nic_qp_make_ready(s, &qp->q);
		}
		break;
	case PKT_NOTIFY:
		receive_cnp(s, qp);
		break;
	}
	if (p->tel && p->kind != PKT_DATA && !qp->failed)
		sample(s, qp, p, una_before);
	sim_pkt_free(s, p);
}

static void on_rto(struct psim *s, struct roce_qp *qp, uint32_t gen)
{
	if (gen != qp->rto_gen)
		return;
	qp->rto_armed = false;
	if (qp->snd_una >= qp->snd_max)
		return; /* nothing outstanding; re-armed by the next send */
	fab_time_ps due = qp->last_progress_ps + s->c.fp.nic.rto_ps;
	if (s->c.now_ps < due) {
		rto_arm(s, qp, due);
		return;
	}
	struct fab_flow_stats *fst = acked_flow(s, qp);
	if (fst)
		fst->timeouts++;
	s->c.tot.timeouts++;
	if (!retry(s, qp))
		return;
	if (qp->cc->on_loss)
		qp->cc->on_loss(qp->cc_state, s->c.now_ps);
	qp->snd_nxt = go_back_0(s) ? msg_first(qp, qp->amsg) : qp->snd_una;
	qp->last_progress_ps = s->c.now_ps;
	rto_arm(s, qp, s->c.now_ps + s->c.fp.nic.rto_ps);
	nic_qp_make_ready(s, &qp->q);
}

static void roce_on_timer(struct psim *s, const struct fab_ev *ev)
{
	struct roce_qp *qp = ev->obj;
	if (ev->type == EV_RTO) {
		on_rto(s, qp, ev->arg);
		return;
	}
	/* EV_CC_TIMER */
	if (ev->arg != qp->cc_gen)
		return;
	fab_time_ps delay = qp->cc->on_timer(qp->cc_state, s->c.now_ps);
	if (delay)
		fab_eq_push(&s->c.eq, s->c.now_ps + delay, EV_CC_TIMER, qp, qp->cc_gen);
}

const struct fab_transport_ops fab_roce_transport = {
	.name = "roce",
	.qp_size = sizeof(struct roce_qp),
	.init = roce_init,
	.line_changed = roce_line_changed,
	.rest = roce_rest,
	.destroy = roce_destroy,
	.post = roce_post,
	.expect = roce_expect,
	.has_data = roce_has_data,
	.earliest = roce_earliest,
	.next_packet = roce_next_packet,
	.sent = roce_sent,
	.on_receive = roce_on_receive,
	.on_timer = roce_on_timer,
	.rate_bps = roce_rate,
};
