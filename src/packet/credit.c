/*
 * credit.c - InfiniBand's credit-based link-level flow control (llfc.h):
 * a sender transmits on a lane (virtual lane: the priority) only while the
 * receiver has advertised room for it, so nothing is ever dropped for want
 * of buffer and no PAUSE exists.
 *
 * Every port starts with credits for its peer's buffer per lane
 * (fabric.ib.vl_buffer: a switch port's ingress, or a NIC's receive
 * buffer).  Every frame sent on a lane (data, ACKs, notifications) spends
 * its bytes; a lane whose credits fall below one full frame holds (its bit
 * in paused_mask) until credits come back.  A switch returns a frame's
 * bytes when the frame leaves its buffer, a NIC when the frame arrives (it
 * drains into host memory at once); they are returned in flow-control
 * packets (8 bytes, in units of 64-byte blocks as InfiniBand counts them)
 * once a sixteenth of the buffer, or a full frame, is owed.  So a link
 * whose buffer is below its bandwidth-delay product (the credit loop:
 * frame out, frame released, credits back) runs at buffer / loop time, as
 * a credited link does.  A frame lost on the wire, or dropped, returns its
 * credits at once (InfiniBand's absolute counters resynchronise them).
 * Not modelled: the per-lane arbitration tables (lanes are strict
 * priorities here), the credit limit's periodic resend, a storming NIC
 * (there is no PAUSE to storm with).
 */
#include "../sim/tp_ib.h"
#include "llfc.h"

#define BLOCK 64 /* InfiniBand counts credits in 64-byte blocks */
#define FCP_FRAME 8

static fab_bytes vl_buffer(const struct psim *s)
{
	return ((const struct fab_ib_params *)fab_transport_params(&s->c.fp, FAB_TRANSPORT_IB))->vl_buffer_bytes;
}

/* a full frame: a lane with fewer credits holds */
static int64_t full_frame(const struct psim *s)
{
	return (int64_t)(s->c.fp.mtu + s->c.wire.data_overhead);
}

static uint8_t credit_lossless_mask(const struct psim *s)
{
	(void)s;
	return 0xFF; /* every lane */
}

static void credit_init_port(struct psim *s, struct sim_port *port)
{
	for (unsigned p = 0; p < FAB_NPRIO; p++)
		port->pq[p].credits = (int64_t)vl_buffer(s);
}

static void credit_port_thresholds(const struct psim *s, const struct sim_port *port, fab_bytes *headroom,
				   fab_bytes *xoff)
{
	(void)port;
	*headroom = 0;
	*xoff = vl_buffer(s);
}

static bool credit_room(const struct psim *s, const struct sim_port *in, unsigned prio, uint32_t size)
{
	/* a credited sender never overruns the lane */
	FAB_ASSERT(in->pq[prio].in_bytes + size <= vl_buffer(s));
	return in->pq[prio].in_bytes + size <= vl_buffer(s);
}

static void credit_admitted(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	(void)s;
	(void)in;
	(void)prio;
	(void)size;
}

/* `size` bytes of lane prio are free at port: owe them upstream */
static void owe(struct psim *s, struct sim_port *port, unsigned prio, uint32_t size)
{
	port->pq[prio].owed += size;
	uint64_t batch = FAB_MAX(vl_buffer(s) / 16, (uint64_t)full_frame(s));
	if (port->pq[prio].owed >= batch && !(port->cr_pending & (1u << prio))) {
		port->cr_pending |= (uint8_t)(1u << prio);
		sim_port_kick(s, port);
	}
}

static void credit_released(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	owe(s, in, prio, size);
}

static void credit_nic_received(struct psim *s, struct sim_nic *nic, const struct pkt *p)
{
	owe(s, &s->ports[nic->port], p->prio, p->frame_bytes);
}

static void credit_lost(struct psim *s, struct sim_port *in, const struct pkt *p)
{
	owe(s, in, p->prio, p->frame_bytes);
}

static bool credit_send_pending(struct psim *s, struct sim_port *port)
{
	if (!port->cr_pending)
		return false;
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_PFC; /* the link-level control frame */
	p->frame_bytes = FCP_FRAME;
	p->pfc_mask = port->cr_pending;
	for (unsigned i = 0; i < FAB_NPRIO; i++) {
		if (!(port->cr_pending & (1u << i)))
			continue;
		uint64_t blocks = FAB_MIN(port->pq[i].owed / BLOCK, 65535);
		p->pfc_quanta[i] = (uint16_t)blocks;
		port->pq[i].owed -= blocks * BLOCK;
	}
	port->cr_pending = 0;
	uint64_t batch = FAB_MAX(vl_buffer(s) / 16, (uint64_t)full_frame(s));
	for (unsigned i = 0; i < FAB_NPRIO; i++) /* more than one update carries */
		if (port->pq[i].owed >= batch)
			port->cr_pending |= (uint8_t)(1u << i);
	sim_port_transmit(s, port, p);
	return true;
}

static void unblock(struct psim *s, struct sim_port *port, unsigned prio)
{
	port->paused_mask &= (uint8_t) ~(1u << prio);
	port->st.paused_ps[prio] += s->c.now_ps - port->pq[prio].blocked_since;
}

/* credits arrived at port: its lanes may go on */
static void credit_receive(struct psim *s, struct sim_port *port, const struct pkt *p)
{
	bool go = false;
	for (unsigned i = 0; i < FAB_NPRIO; i++) {
		if (!(p->pfc_mask & (1u << i)))
			continue;
		port->pq[i].credits += (int64_t)p->pfc_quanta[i] * BLOCK;
		if ((port->paused_mask & (1u << i)) && port->pq[i].credits >= full_frame(s)) {
			unblock(s, port, i);
			go = true;
		}
	}
	if (go)
		sim_port_kick(s, port);
}

static void credit_sent(struct psim *s, struct sim_port *port, const struct pkt *p)
{
	unsigned i = p->prio;
	port->pq[i].credits -= p->frame_bytes;
	FAB_ASSERT(port->pq[i].credits >= 0);
	if (port->pq[i].credits < full_frame(s) && !(port->paused_mask & (1u << i))) {
		port->paused_mask |= (uint8_t)(1u << i);
		port->pq[i].blocked_since = s->c.now_ps;
	}
}

static void credit_on_event(struct psim *s, const struct fab_ev *ev)
{
	(void)s;
	(void)ev;
}

static void credit_finish(struct psim *s, struct sim_port *port)
{
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++)
		if (port->paused_mask & (1u << prio)) {
			port->st.paused_ps[prio] += s->c.now_ps - port->pq[prio].blocked_since;
			port->pq[prio].blocked_since = s->c.now_ps;
		}
}

static void credit_send(struct psim *s, struct sim_port *port, unsigned prio, uint16_t quanta)
{
	(void)s; /* no PAUSE on InfiniBand: the storm fault does not apply */
	(void)port;
	(void)prio;
	(void)quanta;
}

/* at rest (nothing in flight): what each port owes its peer goes back, as
 * the credit limit's periodic resend would have resynchronised it */
static void credit_rest(struct psim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct sim_port *port = &s->ports[i], *peer = &s->ports[port->peer];
		for (unsigned k = 0; k < FAB_NPRIO; k++) {
			peer->pq[k].credits += (int64_t)port->pq[k].owed;
			port->pq[k].owed = 0;
		}
		port->cr_pending = 0;
	}
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		for (unsigned k = 0; k < FAB_NPRIO; k++)
			if ((s->ports[i].paused_mask & (1u << k)) && s->ports[i].pq[k].credits >= full_frame(s))
				unblock(s, &s->ports[i], k);
}

const struct pkt_llfc_ops pkt_credit = {
	.name = "credit",
	.lossless_mask = credit_lossless_mask,
	.init_port = credit_init_port,
	.port_thresholds = credit_port_thresholds,
	.room = credit_room,
	.admitted = credit_admitted,
	.released = credit_released,
	.nic_received = credit_nic_received,
	.send_pending = credit_send_pending,
	.receive = credit_receive,
	.on_event = credit_on_event,
	.finish = credit_finish,
	.send = credit_send,
	.sent = credit_sent,
	.lost = credit_lost,
	.rest = credit_rest,
};
