/*
 * nic.c - the NIC's side of the wire: egress scheduling of queue pairs
 * under their transports' pacing, PAUSE obedience, the PCIe link's pace.
 *
 * Egress order: a pending PFC frame, then priorities from 7 down to 0,
 * skipping paused ones; within a priority, control packets (ACK, NAK, CNP)
 * queued on the port before data, then ready queue pairs in round robin.  A
 * queue pair is ready when it has data and its transport's pacing
 * (transport.h: earliest, sent) allows a packet now; otherwise a wake-up
 * event is set for the time it will.  The NIC pulls
 * packets from queue pairs one at a time, so nothing is queued inside the NIC
 * beyond the packet on the wire.
 * Data comes from the GPU over PCIe: where `topology.pcie_rate` is below
 * the line rate, a data packet (its wire bytes) is not sent before the
 * PCIe link has fed the one before, whichever queue pair it is from; ACKs,
 * NAKs and CNPs do not wait.
 * NIC-side PAUSE is the link-level flow control's (pfc.c).
 */
#include "transport.h"

static void ready_push(struct sim_nic *nic, struct sim_qp *qp)
{
	qp->in_ready = true;
	qp->ready_next = NULL;
	if (nic->ready_tail[qp->c.prio])
		nic->ready_tail[qp->c.prio]->ready_next = qp;
	else
		nic->ready_head[qp->c.prio] = qp;
	nic->ready_tail[qp->c.prio] = qp;
}

static struct sim_qp *ready_pop(struct sim_nic *nic, unsigned prio)
{
	struct sim_qp *qp = nic->ready_head[prio];
	if (!qp)
		return NULL;
	nic->ready_head[prio] = qp->ready_next;
	if (!qp->ready_next)
		nic->ready_tail[prio] = NULL;
	qp->in_ready = false;
	qp->ready_next = NULL;
	return qp;
}

void nic_qp_move(struct psim *s, struct sim_qp *qp, uint32_t src_nic, uint32_t dst_nic)
{
	if (qp->in_ready) {
		/* out of the old port's ready list */
		struct sim_nic *nic = &s->nics[qp->c.src_nic];
		struct sim_qp *prev = NULL, *x = nic->ready_head[qp->c.prio];
		while (x && x != qp) {
			prev = x;
			x = x->ready_next;
		}
		FAB_ASSERT(x == qp);
		if (prev)
			prev->ready_next = qp->ready_next;
		else
			nic->ready_head[qp->c.prio] = qp->ready_next;
		if (nic->ready_tail[qp->c.prio] == qp)
			nic->ready_tail[qp->c.prio] = prev;
		qp->in_ready = false;
		qp->ready_next = NULL;
	}
	qp->c.src_nic = src_nic;
	qp->c.dst_nic = dst_nic;
	nic_qp_make_ready(s, qp);
}

void nic_start_tx(struct psim *s, struct sim_nic *nic, struct sim_port *port)
{
	/* the PCIe link's rate, where it is below the port's (else 0) */
	double line = sim_pcie_cap(&s->c, (double)port->rate_bps), pcie = line < (double)port->rate_bps ? line : 0;
	bool data_held = pcie > 0 && nic->pcie_free_ps > s->c.now_ps;
	for (int prio = FAB_NPRIO - 1; prio >= 0; prio--) {
		struct pkt *p = port->queued_mask >> prio & 1 ? port->pq[prio].head : NULL;
		bool held = port->paused_mask & (1u << prio);
		if (held && !(p && s->c.fp.nic.acks_ignore_pause))
			continue;
		if (p) {
			port->pq[prio].head = p->next;
			if (!p->next) {
				port->pq[prio].tail = NULL;
				port->queued_mask &= (uint8_t) ~(1u << prio);
			}
			p->next = NULL;
			port->pq[prio].qbytes -= p->frame_bytes;
			port->qbytes_total -= p->frame_bytes;
			sim_port_transmit(s, port, p);
			return;
		}
		if (held)
			continue;
		if (data_held) { /* control packets of lower priorities may go */
			if (nic->ready_head[prio] && !nic->pcie_wake) {
				nic->pcie_wake = true;
				fab_eq_push(&s->c.eq, nic->pcie_free_ps, EV_NIC_PCIE, nic, 0);
			}
			continue;
		}
		struct sim_qp *qp;
		while ((qp = ready_pop(nic, (unsigned)prio))) {
			const struct fab_transport_ops *tp = qp_transport(qp);
			p = tp->next_packet(s, qp);
			if (!p)
				continue;
			sim_port_transmit(s, port, p);
			uint32_t wire = p->frame_bytes + s->c.wire.preamble_ifg;
			if (pcie > 0) {
				fab_time_ps base = FAB_MAX(nic->pcie_free_ps, s->c.now_ps);
				nic->pcie_free_ps = base + fab_pace_ps(wire, pcie);
			}
			fab_time_ps next = tp->sent(s, qp, wire, port->rate_bps);
			if (tp->has_data(qp)) {
				if (next <= s->c.now_ps + fab_ser_ps(wire, port->rate_bps)) {
					ready_push(nic, qp);
				} else {
					qp->wake_pending = true;
					fab_eq_push(&s->c.eq, next, EV_QP_WAKE, qp, 0);
				}
			}
			return;
		}
	}
}

void nic_qp_make_ready(struct psim *s, struct sim_qp *qp)
{
	if (qp->in_ready || qp->wake_pending || !qp_transport(qp)->has_data(qp))
		return;
	struct sim_nic *nic = &s->nics[qp->c.src_nic];
	fab_time_ps earliest = qp_transport(qp)->earliest(qp);
	if (earliest > s->c.now_ps) {
		qp->wake_pending = true;
		fab_eq_push(&s->c.eq, earliest, EV_QP_WAKE, qp, 0);
		return;
	}
	ready_push(nic, qp);
	sim_port_kick(s, &s->ports[nic->port]);
}

void nic_on_wake(struct psim *s, struct sim_qp *qp)
{
	qp->wake_pending = false;
	nic_qp_make_ready(s, qp);
}

void nic_on_pcie(struct psim *s, struct sim_nic *nic)
{
	nic->pcie_wake = false;
	sim_port_kick(s, &s->ports[nic->port]);
}