/*
 * nic.c - the NIC's side of the wire: egress scheduling of queue pairs,
 * per-QP rate limiting, PAUSE obedience, and NIC-side PAUSE generation.
 *
 * Egress order: a pending PFC frame, then priorities from 7 down to 0,
 * skipping paused ones; within a priority, control packets (ACK, NAK, CNP)
 * queued on the port before data, then ready queue pairs in round robin.  A
 * queue pair is ready when it has data and its rate limiter allows a packet
 * now; otherwise a wake-up event is set for the time it will.  The NIC pulls
 * packets from queue pairs one at a time, so nothing is queued inside the NIC
 * beyond the packet on the wire.
 * Data comes from the GPU over PCIe: where `topology.pcie_rate` is below
 * the line rate, a data packet (its wire bytes) is not sent before the
 * PCIe link has fed the one before, whichever queue pair it is from; ACKs,
 * NAKs and CNPs do not wait.
 * NIC-side PAUSE: data of lossless priorities fills a receive buffer that
 * drains toward the GPU at nic_rx_drain (PCIe); past nic_rx_buffer the NIC
 * pauses its leaf, and resumes at half of it.
 */
#include "transport.h"

static const struct fab_transport_ops *transport = &fab_roce_transport;

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

/* the time `wire` bytes take at `bps` */
static fab_time_ps pace_ps(uint32_t wire, double bps)
{
	return (fab_time_ps)((double)wire * 8.0 * (double)FAB_PS_PER_S / bps + 0.5);
}

static fab_time_ps qp_gap_ps(const struct sim_qp *qp, uint32_t wire, fab_rate_bps line)
{
	if (qp->cc.rc_bps >= (double)line)
		return fab_ser_ps(wire, line);
	return pace_ps(wire, qp->cc.rc_bps);
}

void nic_start_tx(struct psim *s, struct sim_nic *nic, struct sim_port *port)
{
	/* the PCIe link's rate, where it is below the port's (else 0) */
	double line = sim_pcie_cap(&s->c, (double)port->rate_bps), pcie = line < (double)port->rate_bps ? line : 0;
	bool data_held = pcie > 0 && nic->pcie_free_ps > s->c.now_ps;
	for (int prio = FAB_NPRIO - 1; prio >= 0; prio--) {
		if (port->paused_mask & (1u << prio))
			continue;
		struct pkt *p = port->head[prio];
		if (p) {
			port->head[prio] = p->next;
			if (!p->next)
				port->tail[prio] = NULL;
			p->next = NULL;
			port->qbytes[prio] -= p->frame_bytes;
			port->qbytes_total -= p->frame_bytes;
			sim_port_transmit(s, port, p);
			return;
		}
		if (data_held) { /* control packets of lower priorities may go */
			if (nic->ready_head[prio] && !nic->pcie_wake) {
				nic->pcie_wake = true;
				fab_eq_push(&s->c.eq, nic->pcie_free_ps, EV_NIC_PCIE, nic, 0);
			}
			continue;
		}
		struct sim_qp *qp;
		while ((qp = ready_pop(nic, (unsigned)prio))) {
			p = transport->next_packet(s, qp);
			if (!p)
				continue;
			sim_port_transmit(s, port, p);
			uint32_t wire = p->frame_bytes + FAB_WIRE_PREAMBLE_IFG;
			if (pcie > 0) {
				fab_time_ps base = FAB_MAX(nic->pcie_free_ps, s->c.now_ps);
				nic->pcie_free_ps = base + pace_ps(wire, pcie);
			}
			fab_time_ps base = qp->next_send_ps > s->c.now_ps ? qp->next_send_ps : s->c.now_ps;
			qp->next_send_ps = base + qp_gap_ps(qp, wire, port->rate_bps);
			if (transport->has_data(qp)) {
				if (qp->next_send_ps <= s->c.now_ps + fab_ser_ps(wire, port->rate_bps)) {
					ready_push(nic, qp);
				} else {
					qp->wake_pending = true;
					fab_eq_push(&s->c.eq, qp->next_send_ps, EV_QP_WAKE, qp, 0);
				}
			}
			return;
		}
	}
}

void nic_qp_make_ready(struct psim *s, struct sim_qp *qp)
{
	if (qp->in_ready || qp->wake_pending || !transport->has_data(qp))
		return;
	struct sim_nic *nic = &s->nics[qp->c.src_nic];
	if (qp->next_send_ps > s->c.now_ps) {
		qp->wake_pending = true;
		fab_eq_push(&s->c.eq, qp->next_send_ps, EV_QP_WAKE, qp, 0);
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

static bool nic_pause_enabled(const struct psim *s, unsigned prio)
{
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	return pfc->enabled && pfc->nic_rx_drain_bps && (pfc->prio_mask & (1u << prio));
}

static void rx_level_update(struct psim *s, struct sim_nic *nic)
{
	double drained = (double)(s->c.now_ps - nic->rx_level_ps) *
			 (double)s->c.fp.pfc.nic_rx_drain_bps / (8.0 * (double)FAB_PS_PER_S);
	nic->rx_level_bytes = nic->rx_level_bytes > drained ? nic->rx_level_bytes - drained : 0;
	nic->rx_level_ps = s->c.now_ps;
}

/* Next check: when the buffer reaches the resume point, or half a pause. */
static void rx_arm_drain(struct psim *s, struct sim_nic *nic)
{
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	double xon = (double)pfc->nic_rx_buffer_bytes / 2;
	double excess = nic->rx_level_bytes > xon ? nic->rx_level_bytes - xon : 0;
	fab_time_ps to_xon = (fab_time_ps)(excess * 8.0 * (double)FAB_PS_PER_S /
					   (double)pfc->nic_rx_drain_bps) + 1;
	struct sim_port *port = &s->ports[nic->port];
	fab_time_ps half = fab_ser_ps((uint64_t)pfc->quanta * 64u, port->rate_bps) / 2 + 1;
	nic->rx_gen++;
	fab_eq_push(&s->c.eq, s->c.now_ps + FAB_MIN(to_xon, half), EV_NIC_DRAIN, nic, nic->rx_gen);
}

void nic_rx_account(struct psim *s, struct sim_nic *nic, const struct pkt *p)
{
	if (p->kind != PKT_DATA || !nic_pause_enabled(s, p->prio))
		return;
	rx_level_update(s, nic);
	nic->rx_level_bytes += p->frame_bytes;
	uint8_t bit = (uint8_t)(1u << p->prio);
	if (nic->rx_level_bytes > (double)s->c.fp.pfc.nic_rx_buffer_bytes &&
	    !(nic->rx_xoff_sent & bit)) {
		nic->rx_xoff_sent |= bit;
		sim_port_send_pfc(s, &s->ports[nic->port], p->prio, (uint16_t)s->c.fp.pfc.quanta);
		rx_arm_drain(s, nic);
	}
}

void nic_on_drain(struct psim *s, struct sim_nic *nic, uint32_t gen)
{
	if (gen != nic->rx_gen || !nic->rx_xoff_sent)
		return;
	rx_level_update(s, nic);
	struct sim_port *port = &s->ports[nic->port];
	bool resume = nic->rx_level_bytes <= (double)s->c.fp.pfc.nic_rx_buffer_bytes / 2;
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++) {
		if (!(nic->rx_xoff_sent & (1u << prio)))
			continue;
		sim_port_send_pfc(s, port, prio, resume ? 0 : (uint16_t)s->c.fp.pfc.quanta);
	}
	if (resume)
		nic->rx_xoff_sent = 0;
	else
		rx_arm_drain(s, nic);
}
