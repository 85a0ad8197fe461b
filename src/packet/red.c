/*
 * red.c - RED marking, as DCQCN has it (Zhu et al., SIGCOMM 2015): an
 * ECN-capable packet is never marked at or under Kmin, always above Kmax,
 * and with probability Pmax x (q - Kmin) / (Kmax - Kmin) between, drawn
 * from the switch's own stream (fabric.ecn.kmin, kmax, pmax; a switch's
 * own thresholds under an ecn fault).
 */
#include "qdisc.h"

static bool red_mark(struct psim *s, struct sim_switch *sw, const struct sim_port *port, uint64_t q)
{
	double prob;
	int red = fab_red((double)q, (double)qdisc_scaled(port, sw->kmin_bytes),
			  (double)qdisc_scaled(port, sw->kmax_bytes), s->c.fp.ecn.pmax, &prob);
	return red == FAB_RED_MARK || (red == FAB_RED_DRAW && fab_rng_unit(&sw->rng) < prob);
}

const struct pkt_qdisc_ops pkt_qdisc_red = {
	.name = "red",
	.doc = "red: RED as DCQCN has it, kmin, kmax and pmax",
	.mark = red_mark,
};
