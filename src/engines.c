/*
 * engines.c - the choice of engine, above both: `engine: packet` or
 * `engine: flow` (fabric.engine) selects which one fab_sim_new builds.
 * Everything after that goes through sim.h.
 */
#include "engines.h"
#include "flow/flow.h"
#include "packet/packet.h"

struct fab_sim *fab_sim_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			    const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err)
{
	if (fp->engine == FAB_ENGINE_FLOW && fp->ecmp_adaptive) {
		fab_err_set(
			err, FAB_EINVAL,
			"fabric.ecmp.adaptive: the flow engine routes by hash only; adaptive routing needs the packet "
			"engine");
		return NULL;
	}
	if (fp->engine == FAB_ENGINE_FLOW)
		return fab_flow_new(topo, fp, seed, flows, nflows, err);
	return fab_packet_new(topo, fp, seed, flows, nflows, err);
}
