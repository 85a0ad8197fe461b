/*
 * flow.h - the flow-level engine (`engine: flow`), behind sim.h.
 */
#ifndef FAB_FLOW_H
#define FAB_FLOW_H

#include "../sim/sim.h"

struct fab_sim *fab_flow_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			     const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err);

/* the queue models, i from 0 (NULL past the last): flow.queues' choices,
 * each with its line of meaning */
const char *fab_flow_queue_model(size_t i, const char **doc);

#endif
