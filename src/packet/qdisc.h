/*
 * qdisc.h - a switch egress's queue disciplines in the packet engine: what
 * happens to a data packet on its way through an egress queue beyond
 * waiting its turn.
 *
 * An ECN-marking discipline (fabric.ecn.marking) decides, from the depth
 * of the queue the packet joins or leaves (fabric.ecn.mark_at says which),
 * whether to mark an ECN-capable packet CE: RED as DCQCN has it (red.c),
 * DCTCP's single threshold (step.c).  A stamping discipline writes the
 * port's state into the packet's in-band telemetry as it leaves (int in
 * telemetry.c, for a congestion control that wants it: HPCC).  Each is one
 * ops table and one line in models.c.
 */
#ifndef FAB_QDISC_H
#define FAB_QDISC_H

#include "packet_int.h"

struct pkt_qdisc_ops {
	const char *name; /* fabric.ecn.marking's value: "red" */
	const char *doc;  /* its line in that key's meaning */
	/* marking: whether a packet meeting a queue of q bytes at port of
	 * switch sw is marked (NULL: it does not mark) */
	bool (*mark)(struct psim *s, struct sim_switch *sw, const struct sim_port *port, uint64_t q);
	/* stamping: the packet leaves port (NULL: it does not stamp) */
	void (*stamp)(struct psim *s, const struct sim_port *port, struct pkt *p);
};

extern const struct pkt_qdisc_ops pkt_qdisc_red;
extern const struct pkt_qdisc_ops pkt_qdisc_step;
extern const struct pkt_qdisc_ops pkt_qdisc_int;

/* a discipline by name (models.c, one line each), NULL if none */
const struct pkt_qdisc_ops *pkt_qdisc_find(const char *name);

/* a port's thresholds as a switch of kmin, kmax gives them to it (scaled
 * to its rate with fabric.ecn.ref_rate) */
static inline fab_bytes qdisc_scaled(const struct sim_port *port, fab_bytes k)
{
	return port->ecn_scale != 1.0 ? (fab_bytes)((double)k * port->ecn_scale) : k;
}

#endif
