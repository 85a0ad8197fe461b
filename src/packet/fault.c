/*
 * fault.c - faults as the packet engine applies them (their specs are
 * resolved in src/work/fault.c, scheduled by src/sim/core.c): a link
 * degraded to a lower rate (its ports still report their configured
 * speed), a lossy link (each frame lost with a probability), a link down
 * (what hashes onto it is lost until routing converges around it, after
 * `convergence`), a NIC storming PAUSE (every 2 us, as a stuck NIC floods
 * its port), a switch with other ECN thresholds.  A NIC with several ports
 * moves the queue pairs of a port that goes down, or is degraded below
 * another of its ports, to its best surviving port (and so does the NIC
 * at the other end of each), as bonded RoCE ports fail over; what was lost
 * on the way is resent by the transport.
 */
#include <stdlib.h>

#include "llfc.h"

/* A storming NIC sends PAUSE every 2 us, as a stuck NIC floods its port. */
static void storm_arm(struct psim *s, struct sim_port *port, uint8_t prio)
{
	fab_eq_push(&s->c.eq, s->c.now_ps + 2 * FAB_PS_PER_US, EV_STORM, port, prio | (port->storm_gen << 3));
}

void fault_storm(struct psim *s, struct sim_port *port, uint32_t arg)
{
	if ((arg >> 3) != port->storm_gen)
		return;
	s->llfc->send(s, port, arg & 7, 65535);
	storm_arm(s, port, (uint8_t)(arg & 7));
}

static void set_link_rate(struct psim *s, uint32_t port, fab_rate_bps rate)
{
	s->ports[port].rate_bps = rate;
	s->ports[s->ports[port].peer].rate_bps = rate;
}

/* Routing converges: routes without the links down now. */
static void reroute(struct psim *s)
{
	uint8_t *down = fab_xcalloc(s->c.topo->nports, 1);
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		down[i] = s->ports[i].down;
	/* the routes are the fabric's state: a failure changes them */
	fab_topo_reroute((struct fab_topo *)s->c.topo, down);
	free(down);
}

/* the best port of NIC port `nic`'s NIC other than itself: up, fastest */
static uint32_t twin_port(const struct psim *s, uint32_t nic)
{
	const struct fab_topo *t = s->c.topo;
	uint32_t P = t->nic_ports, base = nic - nic % P, best = nic;
	fab_rate_bps best_rate = 0;
	for (uint32_t j = 0; j < P; j++) {
		uint32_t k = base + j;
		const struct sim_port *pt = &s->ports[t->nodes[t->nic_node[k]].first_port];
		if (k == nic || pt->down || pt->rate_bps <= best_rate)
			continue;
		best = k;
		best_rate = pt->rate_bps;
	}
	return best;
}

/* NIC port `nic` failed or slowed: its queue pairs, at either end, move
 * to the NIC's best other port when that one is faster */
static void fail_over(struct psim *s, uint32_t nic)
{
	const struct fab_topo *t = s->c.topo;
	if (t->nic_ports < 2)
		return;
	const struct sim_port *pt = &s->ports[t->nodes[t->nic_node[nic]].first_port];
	uint32_t twin = twin_port(s, nic);
	if (twin == nic || (!pt->down && s->ports[t->nodes[t->nic_node[twin]].first_port].rate_bps <= pt->rate_bps))
		return;
	for (uint32_t i = 0; i < s->c.nqps; i++) {
		struct sim_qp *qp = pkt_qp(s, i);
		uint32_t src = qp->c.src_nic, dst = qp->c.dst_nic;
		if (src != nic && dst != nic)
			continue;
		/* the other end moves to its port of the same index: the same ToR */
		uint32_t j = twin % t->nic_ports;
		uint32_t src2 = src == nic ? twin : src - src % t->nic_ports + j;
		uint32_t dst2 = dst == nic ? twin : dst - dst % t->nic_ports + j;
		nic_qp_move(s, qp, src2, dst2);
		s->c.tot.failovers++;
	}
}

/* the NIC port at one end of the link of port p, or -1 */
static int32_t link_nic(const struct psim *s, uint32_t p)
{
	const struct fab_topo *t = s->c.topo;
	int32_t a = t->nodes[s->ports[p].node].nic, b = t->nodes[s->ports[s->ports[p].peer].node].nic;
	return a >= 0 ? a : b;
}

void fault_apply(struct psim *s, const struct fab_fault *f, int what)
{
	bool end = what == 1;
	struct sim_port *a = &s->ports[f->port], *b = &s->ports[a->peer];
	if (what == 2) {
		reroute(s);
		return;
	}
	switch (f->kind) {
	case FAB_FAULT_DEGRADE:
		set_link_rate(s, f->port, end ? s->c.topo->ports[f->port].rate_bps : f->rate_bps);
		if (!end && link_nic(s, f->port) >= 0)
			fail_over(s, (uint32_t)link_nic(s, f->port));
		break;
	case FAB_FAULT_LOSSY:
		a->loss = b->loss = end ? 0 : f->drop;
		a->drop_every = b->drop_every = end ? 0 : f->drop_every;
		break;
	case FAB_FAULT_DOWN:
		a->down = b->down = !end;
		a->down_since = b->down_since = s->c.now_ps;
		if (end) {
			reroute(s);
			sim_port_kick(s, a);
			sim_port_kick(s, b);
		} else {
			/* until routing converges, what hashes onto the link is lost */
			fab_eq_push(&s->c.eq, s->c.now_ps + f->convergence_ps, EV_FAULT, (void *)f, 2);
			if (link_nic(s, f->port) >= 0)
				fail_over(s, (uint32_t)link_nic(s, f->port));
		}
		break;
	case FAB_FAULT_PFC_STORM:
		a->storm_gen++;
		if (end) {
			s->llfc->send(s, a, f->prio, 0);
		} else {
			s->llfc->send(s, a, f->prio, 65535);
			storm_arm(s, a, f->prio);
		}
		break;
	case FAB_FAULT_DELAY:
		/* frames already on the wire keep their arrival; a later one
		 * never arrives before them (sim_port_transmit) */
		a->delay_ps = end ? a->delay_ps - f->delay_ps : a->delay_ps + f->delay_ps;
		b->delay_ps = end ? b->delay_ps - f->delay_ps : b->delay_ps + f->delay_ps;
		a->delay_cut |= end;
		b->delay_cut |= end;
		if (s->llfc->delay_changed) {
			s->llfc->delay_changed(s, a);
			s->llfc->delay_changed(s, b);
		}
		break;
	case FAB_FAULT_ECN: {
		struct sim_switch *sw = &s->switches[s->c.topo->switch_index[f->node]];
		sw->kmin_bytes = end ? s->c.fp.ecn.kmin_bytes : f->kmin_bytes;
		sw->kmax_bytes = end ? s->c.fp.ecn.kmax_bytes : f->kmax_bytes;
		break;
	}
	}
}
