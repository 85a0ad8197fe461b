/*
 * fault.c - faults as the packet engine applies them (their specs are
 * resolved in src/work/fault.c, scheduled by src/sim/core.c): a link
 * degraded to a lower rate (its ports still report their configured
 * speed), a lossy link (each frame lost with a probability), a link down
 * (what hashes onto it is lost until routing converges around it, after
 * `convergence`), a NIC storming PAUSE (every 2 us, as a stuck NIC floods
 * its port), a switch with other ECN thresholds.
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
	case FAB_FAULT_ECN: {
		struct sim_switch *sw = &s->switches[s->c.topo->switch_index[f->node]];
		sw->kmin_bytes = end ? s->c.fp.ecn.kmin_bytes : f->kmin_bytes;
		sw->kmax_bytes = end ? s->c.fp.ecn.kmax_bytes : f->kmax_bytes;
		break;
	}
	}
}
