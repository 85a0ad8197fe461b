/*
 * tcp.c - the TCP transport: a byte stream over lossy Ethernet, segment by
 * segment, with a window-based congestion control (tcpcc.h).
 *
 * A queue pair is a TCP connection.  Its messages are cut into segments
 * of fabric.mtu payload bytes (a message's last segment is short: the
 * stream is modelled message by message), numbered in order.  The sender
 * keeps at most cwnd bytes in flight and sends at line rate within it.
 * The receiver holds out-of-order segments up to its window
 * (fabric.tcp.rcv_window, which also caps what is in flight) and
 * answers every segment with a cumulative ACK (or, with
 * fabric.tcp.delayed_ack, every second in-order one or after the delayed-
 * ACK timer; out of order at once), echoing ECN's CE on it (ECE).  Three
 * duplicate ACKs (fabric.tcp.dupack_threshold) start a fast retransmit and
 * NewReno's recovery (RFC 6582: each further duplicate lets one more
 * segment out, a partial ACK resends the next hole, recovery ends when
 * everything sent before it is acknowledged); without SACK.  The
 * retransmission timeout follows RFC 6298 (SRTT and RTTVAR from one timed
 * segment at a time, Karn's rule, fabric.tcp.min_rto as its floor, doubling
 * on each expiry up to 120 s) and resends from the oldest unacknowledged
 * segment; 15 expiries in a row without progress fail the connection (as
 * Linux's tcp_retries2).  A message leaves the host fabric.tcp.kernel_latency
 * after it is posted, and each segment or ACK costs fabric.tcp.cpu_per_packet
 * and each payload byte fabric.tcp.cpu_per_byte of CPU time at both ends
 * (summary.host_cpu_s).  Framing: fab_wire_of(FAB_TRANSPORT_TCP).
 *
 * A congestion control that wants samples (cc.h: Swift) gets one per ACK
 * that moves snd_una, after on_ack: the round trip of the segment that drew
 * the ACK, its send time carried beside it (telemetry.c) and echoed back as
 * RFC 7323's timestamps are; none for a resent segment (Karn's rule) or an
 * ACK the delayed-ACK timer sent.  It is told the path's base round trip
 * when it starts, and below a window of one segment it sets the pace
 * (rate_bps) between segments.  The other models see none of this.
 */
#include <stdlib.h>

#include "../cc/tcpcc.h"
#include "../sim/tp_tcp.h"
#include "transport.h"

struct tcp_msg {
	uint32_t end_seg; /* its segments end (exclusive) here */
	uint16_t last_payload;
	uint32_t flow, cookie;
	fab_time_ps ready_ps; /* the kernel hands it to the wire from then */
};

#define MAX_RTO_PS (120 * FAB_PS_PER_S)
#define MAX_RETRIES 15

struct tcp_qp {
	struct sim_qp q;
	uint32_t nsegs, mss;
	uint32_t rwnd; /* the receive window, segments: what the receiver holds out of order, and the most in flight */
	struct tcp_msg *msgs;
	uint32_t nmsgs, cap_msgs;
	uint32_t smsg, rmsg, amsg; /* message cursors: sending, receiving, acknowledging */
	/* sender */
	uint32_t snd_una, snd_nxt, snd_max;
	uint32_t dupacks, inflate; /* NewReno: duplicates seen; extra segments they let out */
	bool in_recovery, retx_pending;
	uint32_t recover, retx_seg;
	fab_time_ps next_send_ps;
	bool timing; /* RTT: one segment timed at a time */
	uint32_t rtt_seg;
	fab_time_ps rtt_start_ps;
	double srtt_ps, rttvar_ps;
	fab_time_ps rto_ps;
	bool rto_armed;
	uint32_t rto_gen, delack_gen, retries;
	bool failed;
	const struct fab_cc_ops *cc;
	_Alignas(16) unsigned char cc_state[FAB_CC_STATE_MAX];
	/* receiver */
	uint32_t rcv_nxt, unacked;
	bool ce_pending, delack_armed;
	uint64_t *ooo; /* segments held ahead of rcv_nxt, bit seg mod rwnd */
};

static inline struct tcp_qp *TQ(struct sim_qp *q)
{
	return (struct tcp_qp *)q;
}

static inline const struct tcp_qp *CTQ(const struct sim_qp *q)
{
	return (const struct tcp_qp *)q;
}

static const struct fab_tcp_params *P(const struct psim *s)
{
	return fab_transport_params(&s->c.fp, FAB_TRANSPORT_TCP);
}

static bool wants_samples(const struct tcp_qp *qp)
{
	return qp->cc->wants & FAB_CC_WANTS_SAMPLE;
}

/* a full segment there and its ACK back through empty queues; *hops: the
 * switches on the way there */
static fab_time_ps base_rtt(struct psim *s, const struct tcp_qp *qp, uint32_t *hops)
{
	return pkt_base_rtt(s, &qp->q.c, P(s)->mss + s->c.wires[FAB_TRANSPORT_TCP].data_overhead,
			    s->c.wires[FAB_TRANSPORT_TCP].ack_frame, hops);
}

static void cc_start(struct psim *s, struct tcp_qp *qp)
{
	double line = sim_nic_line_bps(&s->c, qp->q.c.src_nic);
	qp->cc->init(qp->cc_state, fab_cc_params(&s->c.fp.cc, qp->cc), line);
	if (qp->cc->attach) {
		uint32_t hops;
		fab_time_ps rtt = base_rtt(s, qp, &hops);
		struct fab_cc_env env = {
			.line_bps = line,
			.mss = P(s)->mss,
			.frame_bytes = P(s)->mss + s->c.wires[FAB_TRANSPORT_TCP].data_overhead,
			.init_cwnd = P(s)->init_cwnd,
			.base_rtt_ps = rtt,
			.hops = hops,
		};
		qp->cc->attach(qp->cc_state, &env);
	}
}

static void tcp_init(struct psim *s, struct sim_qp *q)
{
	struct tcp_qp *qp = TQ(q);
	qp->cc = fab_cc_of(&s->c.fp.cc, FAB_TRANSPORT_TCP);
	FAB_ASSERT(qp->cc->state_size <= sizeof qp->cc_state);
	qp->mss = P(s)->mss;
	qp->rwnd = (uint32_t)FAB_MAX(P(s)->rwnd_bytes / qp->mss, 4);
	qp->rwnd = (qp->rwnd + 63) / 64 * 64;
	qp->rto_ps = P(s)->min_rto_ps;
	cc_start(s, qp);
}

static void tcp_line_changed(struct psim *s, struct sim_qp *q)
{
	cc_start(s, TQ(q));
}

static void tcp_destroy(struct sim_qp *q)
{
	free(TQ(q)->msgs);
	free(TQ(q)->ooo);
}

/* CPU time at a host: segments or ACKs, and payload bytes (counted, and
 * priced when the books close: integer sums add up alike in any order) */
static void cpu(struct psim *s, uint64_t pkts, uint64_t bytes)
{
	s->host_pkts += pkts;
	s->host_bytes += bytes;
}

static void send_ack(struct psim *s, struct tcp_qp *qp)
{
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_ACK;
	p->qp = qp->q.c.id;
	p->psn = qp->rcv_nxt;
	p->src_nic = qp->q.c.dst_nic;
	p->dst_nic = qp->q.c.src_nic;
	p->hash = qp->q.c.hash_rev;
	p->prio = qp->q.c.prio; /* TCP's ACKs share the connection's queue */
	p->frame_bytes = (uint16_t)s->c.wires[FAB_TRANSPORT_TCP].ack_frame;
	if (qp->ce_pending) {
		p->ecn = ECN_CE; /* ECE; ACKs are not ECN-capable, so no switch marks them */
		qp->ce_pending = false;
	}
	if (s->rx_tel) { /* the send time of the segment it answers, echoed */
		p->tel = s->rx_tel;
		s->rx_tel = 0;
	}
	qp->unacked = 0;
	qp->delack_gen++;
	qp->delack_armed = false;
	cpu(s, 1, 0);
	struct sim_nic *nic = &s->nics[qp->q.c.dst_nic];
	sim_port_enqueue(s, &s->ports[nic->port], p);
}

static void rto_arm(struct psim *s, struct tcp_qp *qp)
{
	qp->rto_armed = true;
	qp->rto_gen++;
	fab_eq_push(&s->c.eq, s->c.now_ps + qp->rto_ps, EV_RTO, qp, qp->rto_gen);
}

/* a message in the connection's list, as both ends read it */
static void tcp_record(struct psim *s, struct tcp_qp *qp, fab_bytes bytes, uint32_t flow, uint32_t cookie,
		       fab_time_ps at_ps)
{
	uint32_t mss = P(s)->mss;
	if (qp->nmsgs == qp->cap_msgs) {
		qp->cap_msgs = qp->cap_msgs ? 2 * qp->cap_msgs : 4;
		qp->msgs = fab_xrealloc(qp->msgs, qp->cap_msgs, sizeof *qp->msgs);
	}
	uint32_t n = (uint32_t)((bytes + mss - 1) / mss);
	if (!n)
		n = 1;
	qp->nsegs += n;
	qp->msgs[qp->nmsgs++] = (struct tcp_msg){
		.end_seg = qp->nsegs,
		.last_payload = (uint16_t)(bytes - (uint64_t)(n - 1) * mss),
		.flow = flow,
		.cookie = cookie,
		.ready_ps = at_ps + P(s)->kernel_ps,
	};
}

static void tcp_expect(struct psim *s, struct sim_qp *q, fab_bytes bytes, uint32_t flow, fab_time_ps at_ps)
{
	tcp_record(s, TQ(q), bytes, flow, 0, at_ps);
}

static void tcp_post(struct psim *s, struct sim_qp *q, fab_bytes bytes, uint32_t flow, uint32_t cookie)
{
	tcp_record(s, TQ(q), bytes, flow, cookie, s->c.now_ps);
	nic_qp_make_ready(s, q);
}

/* the message segment `seg` belongs to, from cursor *m (moved) */
static const struct tcp_msg *msg_of(const struct tcp_qp *qp, uint32_t *m, uint32_t seg)
{
	while (*m > 0 && qp->msgs[*m - 1].end_seg > seg)
		(*m)--;
	while (qp->msgs[*m].end_seg <= seg)
		(*m)++;
	return &qp->msgs[*m];
}

static uint32_t seg_payload(const struct psim *s, const struct tcp_msg *m, uint32_t seg)
{
	return seg + 1 == m->end_seg ? m->last_payload : P(s)->mss;
}

/* segments the window lets out beyond snd_una */
static uint32_t window_segs(const struct tcp_qp *qp)
{
	uint64_t w = FAB_MAX(qp->cc->window_bytes(qp->cc_state) / qp->mss, 1) + qp->inflate;
	return (uint32_t)FAB_MIN(w, (uint64_t)qp->rwnd); /* never more than the receiver holds */
}

static bool tcp_has_data(const struct sim_qp *q)
{
	const struct tcp_qp *qp = CTQ(q);
	if (qp->failed)
		return false;
	return qp->retx_pending || (qp->snd_nxt < qp->nsegs && qp->snd_nxt - qp->snd_una < window_segs(qp));
}

/* the kernel's latency holds a message's first send */
static fab_time_ps tcp_earliest(const struct sim_qp *q)
{
	const struct tcp_qp *qp = CTQ(q);
	fab_time_ps t = qp->next_send_ps;
	if (!qp->retx_pending && qp->snd_nxt < qp->nsegs) {
		uint32_t m = qp->smsg;
		t = FAB_MAX(t, msg_of(qp, &m, qp->snd_nxt)->ready_ps);
	}
	return t;
}

static fab_time_ps tcp_sent(struct psim *s, struct sim_qp *q, uint32_t wire_bytes, fab_rate_bps line)
{
	struct tcp_qp *qp = TQ(q);
	fab_time_ps gap = fab_ser_ps(wire_bytes, line);
	if (wants_samples(qp)) { /* a window below a segment is paced (Swift) */
		double rate = qp->cc->rate_bps(qp->cc_state);
		if (rate < (double)line)
			gap = fab_pace_ps(wire_bytes, rate);
	}
	qp->next_send_ps = FAB_MAX(qp->next_send_ps, s->c.now_ps) + gap;
	return FAB_MAX(qp->next_send_ps, tcp_earliest(q));
}

static double tcp_rate(const struct sim_qp *q)
{
	const struct tcp_qp *qp = CTQ(q);
	/* cwnd over the smoothed RTT, at most the line */
	double line = qp->cc->rate_bps(qp->cc_state);
	if (qp->srtt_ps <= 0)
		return line;
	return FAB_MIN(line, (double)qp->cc->window_bytes(qp->cc_state) * 8e12 / qp->srtt_ps);
}

static struct pkt *tcp_next_packet(struct psim *s, struct sim_qp *q)
{
	struct tcp_qp *qp = TQ(q);
	if (!tcp_has_data(q))
		return NULL;
	uint32_t seg;
	if (qp->retx_pending) {
		seg = qp->retx_seg;
		qp->retx_pending = false;
	} else {
		seg = qp->snd_nxt++;
	}
	const struct tcp_msg *m = msg_of(qp, &qp->smsg, seg);
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_DATA;
	p->qp = q->c.id;
	p->psn = seg;
	p->src_nic = q->c.src_nic;
	p->dst_nic = q->c.dst_nic;
	p->hash = q->c.hash_fwd;
	p->prio = q->c.prio;
	p->ecn = P(s)->ecn || qp->cc->wants & FAB_CC_WANTS_ECT ? ECN_ECT0 : ECN_NOT_ECT;
	p->payload = (uint16_t)seg_payload(s, m, seg);
	p->frame_bytes = (uint16_t)(p->payload + s->c.wires[FAB_TRANSPORT_TCP].data_overhead);
	struct fab_flow_stats *fst = m->flow != NO_FLOW ? &sim_flow_at(&s->c, m->flow)->st : NULL;
	if (wants_samples(qp)) {
		p->tel = pkt_tel_new(s, qp->cc->wants & FAB_CC_WANTS_INT);
		pkt_tel_at(s, p->tel)->resent = seg < qp->snd_max;
	}
	if (seg < qp->snd_max) {
		if (fst)
			fst->retx_pkts++;
		s->c.tot.retx_pkts++;
		if (qp->timing && seg <= qp->rtt_seg)
			qp->timing = false; /* Karn: no sample across a retransmission */
	} else {
		qp->snd_max = seg + 1;
		if (!q->c.used)
			q->c.used = true;
		if (!qp->timing) {
			qp->timing = true;
			qp->rtt_seg = seg;
			qp->rtt_start_ps = s->c.now_ps;
		}
	}
	if (fst)
		fst->data_pkts++;
	s->c.tot.data_pkts++;
	s->c.tot.data_tx_bytes += p->payload;
	s->live_data_payload += p->payload;
	cpu(s, 1, p->payload);
	if (!qp->rto_armed)
		rto_arm(s, qp);
	qp->cc->on_sent(qp->cc_state, p->payload);
	return p;
}

/* RFC 6298 from one sample */
static void rtt_sample(struct psim *s, struct tcp_qp *qp, double r)
{
	if (qp->srtt_ps <= 0) {
		qp->srtt_ps = r;
		qp->rttvar_ps = r / 2;
	} else {
		qp->rttvar_ps = 0.75 * qp->rttvar_ps + 0.25 * (qp->srtt_ps > r ? qp->srtt_ps - r : r - qp->srtt_ps);
		qp->srtt_ps = 0.875 * qp->srtt_ps + 0.125 * r;
	}
	qp->rto_ps = FAB_MAX((fab_time_ps)(qp->srtt_ps + 4 * qp->rttvar_ps), P(s)->min_rto_ps);
}

/* bytes of segments [a, b) */
static fab_bytes seg_bytes(const struct psim *s, const struct tcp_qp *qp, uint32_t a, uint32_t b)
{
	fab_bytes n = 0;
	uint32_t m = qp->amsg;
	for (uint32_t seg = a; seg < b; seg++)
		n += seg_payload(s, msg_of(qp, &m, seg), seg);
	return n;
}

static fab_bytes new_ack(struct psim *s, struct tcp_qp *qp, uint32_t ack, bool ece)
{
	fab_bytes acked = seg_bytes(s, qp, qp->snd_una, ack);
	if (qp->timing && ack > qp->rtt_seg) {
		rtt_sample(s, qp, (double)(s->c.now_ps - qp->rtt_start_ps));
		qp->timing = false;
	}
	if (qp->in_recovery) {
		if (ack >= qp->recover) {
			qp->in_recovery = false; /* everything sent before the loss is in */
			qp->inflate = 0;
		} else {
			/* a partial ACK: the next hole, and deflate by what it covered */
			qp->retx_seg = ack;
			qp->retx_pending = true;
			uint32_t d = ack - qp->snd_una;
			qp->inflate = qp->inflate > d ? qp->inflate - d + 1 : 1;
		}
	} else {
		if (qp->cc->on_ack)
			qp->cc->on_ack(qp->cc_state, acked, s->c.now_ps);
		if (ece)
			qp->cc->on_congestion(qp->cc_state, s->c.now_ps);
	}
	qp->snd_una = ack;
	qp->dupacks = 0;
	qp->retries = 0;
	if (qp->snd_nxt < ack)
		qp->snd_nxt = ack;
	while (qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].end_seg <= qp->snd_una) {
		const struct tcp_msg *m = &qp->msgs[qp->amsg++];
		if (m->flow != NO_FLOW)
			sim_flow_qp_done(&s->c, sim_flow_at(&s->c, m->flow));
	}
	/* RFC 6298 5.3: restart the timer for what is still out */
	qp->rto_gen++;
	qp->rto_armed = false;
	if (qp->snd_una < qp->snd_max)
		rto_arm(s, qp);
	return acked;
}

static void dup_ack(struct psim *s, struct tcp_qp *qp)
{
	if (qp->snd_una >= qp->snd_max)
		return;
	qp->dupacks++;
	if (qp->in_recovery) {
		qp->inflate++; /* a segment has left the network */
	} else if (qp->dupacks == P(s)->dupack_threshold && qp->snd_una >= qp->recover) {
		qp->in_recovery = true;
		qp->recover = qp->snd_max;
		qp->cc->on_loss(qp->cc_state, s->c.now_ps);
		qp->inflate = P(s)->dupack_threshold;
		qp->retx_seg = qp->snd_una;
		qp->retx_pending = true;
	}
}

/* what an ACK that moved snd_una tells a model that wants samples: the
 * round trip of the segment that drew it (none when that was a resend,
 * Karn's rule, or when a timer sent it) */
static void sample(struct psim *s, struct tcp_qp *qp, const struct pkt *p, fab_bytes acked)
{
	const struct pkt_tel *r = p->tel ? pkt_tel_at(s, p->tel) : NULL;
	struct fab_cc_sample smp = {
		.now_ps = s->c.now_ps,
		.rtt_ps = r && !r->resent ? s->c.now_ps - r->sent_ps : 0,
		.acked_bytes = acked,
		.marked_bytes = p->ecn == ECN_CE ? acked : 0,
		.acked_seq = (uint64_t)qp->snd_una * qp->mss,
		.sent_seq = (uint64_t)qp->snd_nxt * qp->mss,
		.nhops = r ? r->nhops : 0,
		.hops = r ? r->hop : NULL,
	};
	qp->cc->on_sample(qp->cc_state, &smp);
}

static void receive_ack(struct psim *s, struct tcp_qp *qp, struct pkt *p)
{
	cpu(s, 1, 0);
	if (p->psn > qp->snd_una && p->psn <= qp->snd_max) {
		fab_bytes acked = new_ack(s, qp, p->psn, p->ecn == ECN_CE);
		if (wants_samples(qp))
			sample(s, qp, p, acked);
	} else if (p->psn == qp->snd_una)
		dup_ack(s, qp);
	if (p->ecn == ECN_CE) {
		struct fab_flow_stats *fst = qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW
			? &sim_flow_at(&s->c, qp->msgs[qp->amsg].flow)->st
			: NULL;
		if (fst)
			fst->cnps++; /* echoes count where RoCE counts CNPs */
		s->c.tot.cnps++;
	}
	nic_qp_make_ready(s, &qp->q);
}

/* the in-order segment rcv_nxt is here: deliver it, and what was held */
static void deliver(struct psim *s, struct tcp_qp *qp)
{
	for (;;) {
		const struct tcp_msg *m = &qp->msgs[qp->rmsg];
		uint32_t pay = seg_payload(s, m, qp->rcv_nxt);
		if (m->flow != NO_FLOW)
			*sim_flow_rx(&s->c, m->flow) += pay;
		qp->rcv_nxt++;
		qp->unacked++;
		if (m->end_seg == qp->rcv_nxt) {
			qp->rmsg++;
			if (m->flow == NO_FLOW)
				s->c.hooks.delivered(s->c.hooks.ctx, m->cookie);
		}
		uint32_t b = qp->rcv_nxt % qp->rwnd;
		if (qp->rcv_nxt >= qp->nsegs || !qp->ooo || !(qp->ooo[b / 64] & (1ull << (b % 64))))
			break;
		qp->ooo[b / 64] &= ~(1ull << (b % 64));
	}
}

static void receive_data(struct psim *s, struct tcp_qp *qp, struct pkt *p)
{
	uint32_t seg = p->psn;
	cpu(s, 1, p->payload);
	if (p->ecn == ECN_CE)
		qp->ce_pending = true;
	if (seg == qp->rcv_nxt) {
		bool held = false;
		uint32_t b = (seg + 1) % qp->rwnd;
		held = qp->ooo && seg + 1 < qp->nsegs && (qp->ooo[b / 64] & (1ull << (b % 64)));
		deliver(s, qp);
		/* RFC 5681 4.2: at once when it fills a gap, a CE mark is to be
		 * echoed with DCTCP, or delayed ACKs are off */
		if (!P(s)->delayed_ack || held || qp->unacked >= 2 || qp->ce_pending) {
			send_ack(s, qp);
		} else if (!qp->delack_armed) {
			qp->delack_armed = true;
			fab_eq_push(&s->c.eq, s->c.now_ps + P(s)->delack_ps, EV_CC_TIMER, qp, qp->delack_gen);
		}
		return;
	}
	if (seg > qp->rcv_nxt && seg < qp->rcv_nxt + qp->rwnd) {
		if (!qp->ooo)
			qp->ooo = fab_xcalloc(qp->rwnd / 64, sizeof *qp->ooo);
		uint32_t b = seg % qp->rwnd;
		if (!(qp->ooo[b / 64] & (1ull << (b % 64)))) {
			qp->ooo[b / 64] |= 1ull << (b % 64);
			s->c.tot.reordered++;
		}
	}
	send_ack(s, qp); /* a duplicate ACK: out of order, or old */
}

static void tcp_on_receive(struct psim *s, struct sim_nic *nic, struct pkt *p)
{
	(void)nic;
	struct tcp_qp *qp = TQ(pkt_qp(s, p->qp));
	if (p->kind == PKT_DATA && p->tel) {
		s->rx_tel = p->tel; /* for the ACK it draws (send_ack), if any */
		p->tel = 0;
		receive_data(s, qp, p);
		if (s->rx_tel) { /* none (a delayed ACK): no round trip from it */
			pkt_tel_free(s, s->rx_tel);
			s->rx_tel = 0;
		}
	} else if (p->kind == PKT_DATA) {
		receive_data(s, qp, p);
	} else if (!qp->failed) {
		receive_ack(s, qp, p);
	}
	sim_pkt_free(s, p);
}

static void on_rto(struct psim *s, struct tcp_qp *qp, uint32_t gen)
{
	if (gen != qp->rto_gen || qp->failed)
		return;
	qp->rto_armed = false;
	if (qp->snd_una >= qp->snd_max)
		return;
	struct fab_flow_stats *fst = qp->amsg < qp->nmsgs && qp->msgs[qp->amsg].flow != NO_FLOW
		? &sim_flow_at(&s->c, qp->msgs[qp->amsg].flow)->st
		: NULL;
	if (fst)
		fst->timeouts++;
	s->c.tot.timeouts++;
	if (++qp->retries > MAX_RETRIES) {
		qp->failed = true;
		if (fst)
			sim_flow_qp_failed(&s->c, sim_flow_at(&s->c, qp->msgs[qp->amsg].flow));
		s->c.tot.qp_errors++;
		return;
	}
	if (qp->cc->on_rto)
		qp->cc->on_rto(qp->cc_state, s->c.now_ps);
	qp->rto_ps = FAB_MIN(2 * qp->rto_ps, MAX_RTO_PS);
	qp->recover = qp->snd_max;
	qp->in_recovery = false;
	qp->inflate = 0;
	qp->dupacks = 0;
	qp->retx_pending = false;
	qp->timing = false;
	qp->snd_nxt = qp->snd_una; /* go back: the receiver holds what came after the hole */
	rto_arm(s, qp);
	nic_qp_make_ready(s, &qp->q);
}

static void tcp_on_timer(struct psim *s, const struct fab_ev *ev)
{
	struct tcp_qp *qp = ev->obj;
	if (ev->type == EV_RTO) {
		on_rto(s, qp, ev->arg);
		return;
	}
	/* EV_CC_TIMER: the delayed ACK */
	if (ev->arg == qp->delack_gen && qp->delack_armed)
		send_ack(s, qp);
}

const struct fab_transport_ops fab_tcp_transport = {
	.name = "tcp",
	.qp_size = sizeof(struct tcp_qp),
	.init = tcp_init,
	.line_changed = tcp_line_changed,
	.destroy = tcp_destroy,
	.post = tcp_post,
	.expect = tcp_expect,
	.has_data = tcp_has_data,
	.earliest = tcp_earliest,
	.next_packet = tcp_next_packet,
	.sent = tcp_sent,
	.on_receive = tcp_on_receive,
	.on_timer = tcp_on_timer,
	.rate_bps = tcp_rate,
};
