/*
 * step.c - DCTCP's marking (Alizadeh et al., SIGCOMM 2010; RFC 8257): an
 * ECN-capable packet is marked when the queue is above one threshold K
 * (fabric.ecn.kmin; a switch's own under an ecn fault), never below, with
 * no draw.
 */
#include "qdisc.h"

static bool step_mark(struct psim *s, struct sim_switch *sw, const struct sim_port *port, uint64_t q)
{
	(void)s;
	return q > qdisc_scaled(port, sw->kmin_bytes);
}

const struct pkt_qdisc_ops pkt_qdisc_step = {
	.name = "step",
	.doc = "step: DCTCP's, every packet above kmin (K)",
	.mark = step_mark,
};
