/*
 * packet.h - the packet-level engine (`engine: packet`), behind sim.h.
 */
#ifndef FAB_PACKET_H
#define FAB_PACKET_H

#include "../sim/sim.h"

struct fab_sim *fab_packet_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			       const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err);

/* the switches' ECN-marking disciplines, i from 0 (NULL past the last):
 * fabric.ecn.marking's choices, each with its line of meaning */
const char *fab_packet_marking(size_t i, const char **doc);

#endif
