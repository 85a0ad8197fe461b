/*
 * fault.h - faults as a scenario writes them, resolved against the
 * topology into the engine's struct fab_fault.
 *
 * A link is named by a node and a peer ("server3.nic2" and "leaf1"), and
 * link_index when there are parallel links between them.
 */
#ifndef FAB_FAULT_H
#define FAB_FAULT_H

#include "../sim/sim.h"
#include "traffic.h"

struct fab_fault_spec {
	int kind; /* enum fab_fault_kind */
	char node[32], peer[32];
	uint32_t link_index;
	fab_rate_bps rate_bps;
	double drop;
	uint32_t drop_every;
	uint32_t priority;
	fab_bytes kmin_bytes, kmax_bytes;
	fab_time_ps convergence_ps;
	fab_time_ps delay_ps;
	uint32_t gpu;
	double factor;
	fab_time_ps start_ps, end_ps;
	struct fab_src_loc loc;
};

/* Fills out; an unknown node, a missing link or a wrong kind of node is an
 * error located at the fault's list item. */
int fab_fault_resolve(const struct fab_fault_spec *spec, const struct fab_topo *t, int engine, int transport,
		      struct fab_fault *out, struct fab_err *err);

#endif
