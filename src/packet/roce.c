/*
 * roce.c - the RoCEv2 transport: reliable-connected queue pairs with
 * go-back-N, ACK coalescing, CNP generation and the DCQCN reaction point.
 *
 * A flow's bytes are split evenly over its queue pairs; each QP segments its
 * share into MTU packets numbered by PSN.  The receiver accepts only the next
 * expected PSN: an out-of-order packet draws one NAK naming the expected PSN
 * (and no other until that PSN arrives), a duplicate draws an ACK.  The
 * sender goes back to the NAKed PSN, or to the oldest unacknowledged one
 * when no progress was made for a retransmission timeout.  The notification
 * point sends at most one CNP per QP per interval for CE-marked packets; the
 * reaction point (dcqcn.c) sets the QP's rate, which nic.c enforces.
 * Both ends of a QP live in one struct sim_qp: the sender fields are only
 * touched at the source NIC, the receiver fields only at the destination.
 */
#include "transport.h"


static void send_ctrl(struct psim *s, struct sim_qp *qp, int kind, uint32_t psn)
{
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = (uint8_t)kind;
	p->qp = qp->c.id;
	p->psn = psn;
	p->src_nic = qp->c.dst_nic;
	p->dst_nic = qp->c.src_nic;
	p->hash = qp->c.hash_rev;
	p->prio = s->c.fp.ctrl_prio;
	p->frame_bytes = (uint16_t)(kind == PKT_CNP ? fab_sim_wire(&s->c)->notify_frame : fab_sim_wire(&s->c)->ack_frame);
	struct sim_nic *nic = &s->nics[qp->c.dst_nic];
	sim_port_enqueue(s, &s->ports[nic->port], p);
}

static void rto_arm(struct psim *s, struct sim_qp *qp, fab_time_ps at)
{
	qp->rto_armed = true;
	qp->rto_gen++;
	fab_eq_push(&s->c.eq, at, EV_RTO, qp, qp->rto_gen);
}

void sim_qp_post(struct psim *s, struct sim_qp *qp, fab_bytes bytes, uint32_t flow,
		 uint32_t cookie)
{
	if (qp->nmsgs == qp->cap_msgs) {
		qp->cap_msgs = qp->cap_msgs ? 2 * qp->cap_msgs : 4;
		qp->msgs = fab_xrealloc(qp->msgs, qp->cap_msgs, sizeof *qp->msgs);
	}
	uint32_t npk = (uint32_t)((bytes + s->c.fp.mtu - 1) / s->c.fp.mtu);
	if (!npk)
		npk = 1; /* an empty message still carries one packet */
	qp->npkts += npk;
	qp->msgs[qp->nmsgs++] = (struct sim_msg){
		.end_psn = qp->npkts,
		.last_payload = (uint16_t)(bytes - (uint64_t)(npk - 1) * s->c.fp.mtu),
		.flow = flow,
		.cookie = cookie,
	};
	if (qp->next_send_ps < s->c.now_ps)
		qp->next_send_ps = s->c.now_ps;
	nic_qp_make_ready(s, qp);
}

static bool roce_has_data(const struct sim_qp *qp)
{
	return qp->snd_nxt < qp->npkts;
}

static struct pkt *roce_next_packet(struct psim *s, struct sim_qp *qp)
{
	if (!roce_has_data(qp))
		return NULL;
	/* the message holding snd_nxt (go-back-N can move it backwards) */
	while (qp->smsg > 0 && qp->msgs[qp->smsg - 1].end_psn > qp->snd_nxt)
		qp->smsg--;
	while (qp->msgs[qp->smsg].end_psn <= qp->snd_nxt)
		qp->smsg++;
	const struct sim_msg *m = &qp->msgs[qp->smsg];
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_DATA;
	p->qp = qp->c.id;
	p->psn = qp->snd_nxt;
	p->src_nic = qp->c.src_nic;
	p->dst_nic = qp->c.dst_nic;
	p->hash = qp->c.hash_fwd;
	p->prio = qp->c.prio;
	p->ecn = ECN_ECT0;
	p->payload = p->psn + 1 == m->end_psn ? m->last_payload : (uint16_t)s->c.fp.mtu;
	p->frame_bytes = (uint16_t)(p->payload + fab_sim_wire(&s->c)->data_overhead);
	struct fab_flow_stats *fst = m->flow != NO_FLOW ? &s->c.flows[m->flow].st : NULL;
	if (qp->snd_nxt < qp->snd_max) {
		if (fst)
			fst->retx_pkts++;
		s->c.tot.retx_pkts++;
	}
	qp->snd_nxt++;
	if (qp->snd_nxt > qp->snd_max) {
		qp->snd_max = qp->snd_nxt;
		qp->c.used = true;
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
	if (s->c.fp.dcqcn.enabled)
		fab_dcqcn_on_bytes(&qp->cc, &s->c.fp.dcqcn, p->payload);
	return p;
}

/* Messages fully acknowledged: a flow is done when all its QPs' are. */
static void sender_ack(struct psim *s, struct sim_qp *qp, uint32_t psn)
{
	if (psn > qp->snd_una) {
		qp->snd_una = psn;
		qp->last_progress_ps = s->c.now_ps;
		if (qp->snd_nxt < qp->snd_una)
			qp->snd_nxt = qp->snd_una;
	}
	while (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].end_psn <= qp->snd_una) {
		const struct sim_msg *m = &qp->msgs[qp->amsg++];
		if (m->flow == NO_FLOW)
			continue;
		struct sim_flow *f = &s->c.flows[m->flow];
		if (++f->qps_done == f->nqps) {
			f->st.finish_ps = s->c.now_ps;
			s->c.tot.flows_done++;
		}
	}
}

static void receive_data(struct psim *s, struct sim_qp *qp, struct pkt *p)
{
	if (p->ecn == ECN_CE && s->c.fp.dcqcn.enabled &&
	    (!qp->cnp_sent_once || s->c.now_ps - qp->last_cnp_ps >= s->c.fp.nic.cnp_interval_ps)) {
		qp->cnp_sent_once = true;
		qp->last_cnp_ps = s->c.now_ps;
		send_ctrl(s, qp, PKT_CNP, 0);
	}
	if (p->psn == qp->rcv_nxt) {
		qp->rcv_nxt++;
		qp->nak_sent = false;
		bool boundary = false;
		const struct sim_msg *m = &qp->msgs[qp->rmsg];
		if (m->flow != NO_FLOW)
			s->c.flows[m->flow].st.delivered_bytes += p->payload;
		if (m->end_psn == qp->rcv_nxt) {
			boundary = true;
			qp->rmsg++;
			if (m->flow == NO_FLOW)
				s->c.hooks.delivered(s->c.hooks.ctx, m->cookie);
		}
		if (++qp->unacked >= s->c.fp.nic.ack_every || boundary) {
			qp->unacked = 0;
			send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt);
		}
	} else if (p->psn > qp->rcv_nxt) {
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			send_ctrl(s, qp, PKT_NAK, qp->rcv_nxt);
		}
	} else {
		send_ctrl(s, qp, PKT_ACK, qp->rcv_nxt);
	}
}

static void roce_on_receive(struct psim *s, struct sim_nic *nic, struct pkt *p)
{
	(void)nic;
	struct sim_qp *qp = pkt_qp(s, p->qp);
	switch (p->kind) {
	case PKT_DATA:
		receive_data(s, qp, p);
		break;
	case PKT_ACK:
		sender_ack(s, qp, p->psn);
		break;
	case PKT_NAK:
		sender_ack(s, qp, p->psn);
		if (p->psn < qp->snd_nxt) {
			qp->snd_nxt = p->psn;
			nic_qp_make_ready(s, qp);
		}
		break;
	case PKT_CNP:
		if (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW)
			s->c.flows[qp->msgs[qp->amsg].flow].st.cnps++;
		s->c.tot.cnps++;
		if (s->c.fp.dcqcn.enabled) {
			fab_dcqcn_on_cnp(&qp->cc, &s->c.fp.dcqcn, s->c.now_ps);
			qp->cc_gen++;
			fab_eq_push(&s->c.eq, s->c.now_ps + s->c.fp.dcqcn.rate_period_ps, EV_CC_TIMER, qp,
				    qp->cc_gen);
		}
		break;
	}
	sim_pkt_free(s, p);
}

static void roce_on_timer(struct psim *s, const struct fab_ev *ev)
{
	struct sim_qp *qp = ev->obj;
	if (ev->type == EV_CC_TIMER) {
		if (ev->arg != qp->cc_gen)
			return;
		fab_dcqcn_on_rate_timer(&qp->cc, &s->c.fp.dcqcn);
		if (fab_dcqcn_limited(&qp->cc))
			fab_eq_push(&s->c.eq, s->c.now_ps + s->c.fp.dcqcn.rate_period_ps, EV_CC_TIMER, qp,
				    qp->cc_gen);
		return;
	}
	/* EV_RTO */
	if (ev->arg != qp->rto_gen)
		return;
	qp->rto_armed = false;
	if (qp->snd_una >= qp->snd_max)
		return; /* nothing outstanding; re-armed by the next send */
	fab_time_ps due = qp->last_progress_ps + s->c.fp.nic.rto_ps;
	if (s->c.now_ps >= due) {
		if (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW)
			s->c.flows[qp->msgs[qp->amsg].flow].st.timeouts++;
		s->c.tot.timeouts++;
		qp->snd_nxt = qp->snd_una;
		qp->last_progress_ps = s->c.now_ps;
		rto_arm(s, qp, s->c.now_ps + s->c.fp.nic.rto_ps);
		nic_qp_make_ready(s, qp);
	} else {
		rto_arm(s, qp, due);
	}
}

const struct fab_transport_ops fab_roce_transport = {
	.name = "roce",
	.next_packet = roce_next_packet,
	.has_data = roce_has_data,
	.on_receive = roce_on_receive,
	.on_timer = roce_on_timer,
};
