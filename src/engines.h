/*
 * engines.h - the choice of engine (engines.c), in the facade layer: the
 * packet and flow engines are one layer down and never include each
 * other, so the one function that knows both lives above them.  Only the
 * facade's own files, directly in src/, include this.
 */
#ifndef FAB_ENGINES_H
#define FAB_ENGINES_H

#include "sim/sim.h"

/* A simulator of the engine fp->engine names (packet or flow), built over
 * topo; NULL and err when the parameters ask for what that engine lacks.
 * Copies what it needs from flows; topo must outlive the sim. */
struct fab_sim *fab_sim_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			    const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err);

#endif
