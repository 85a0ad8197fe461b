/*
 * flow.h - the flow-level engine (`engine: flow`), behind sim.h.
 */
#ifndef FAB_FLOW_H
#define FAB_FLOW_H

#include "../sim/sim.h"

struct fab_sim *fab_flow_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			     const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err);

#endif
