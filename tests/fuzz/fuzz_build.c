/* libFuzzer target: scenario text through the loader and, when it loads
 * and is small (at most 512 GPUs, short Poisson traffic, no files), on to
 * the built run: topology, routes, traffic, jobs, the engine. */
#include <stddef.h>
#include <stdint.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool small(const struct fab_config *c)
{
	const struct fab_topo_params *t = &c->topo;
	uint64_t nics;
	if (t->kind == FAB_TOPO_FAT_TREE)
		nics = (uint64_t)t->k * t->k * t->k / 4;
	else if (t->kind == FAB_TOPO_SPINE_LEAF)
		nics = (uint64_t)t->leaves * t->servers_per_leaf * t->nics_per_server *
			(t->nic_ports ? t->nic_ports : 1);
	else
		return false; /* files */
	if (nics > 512 || t->leaves + t->spines > 256 || (uint64_t)t->spines * t->links_per_spine > 1024 ||
	    nics / t->nics_per_server * t->gpus_per_server > 512 || c->traffic.flows_csv || c->traffic.flows_ns3)
		return false;
	for (size_t i = 0; i < c->traffic.ngens; i++) {
		const struct fab_gen_spec *g = &c->traffic.gens[i];
		if (g->kind == FAB_GEN_POISSON && (g->duration_ps > FAB_PS_PER_MS || g->cdf))
			return false;
		if (g->kind == FAB_GEN_RANDOM_PAIRS && g->pairs > 100000)
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_err err;
	struct fab_config *c = fab_config_parse((const char *)data, size, "fuzz.yaml", NULL, NULL, 0, &err);
	if (c && small(c))
		fab_run_free(fab_run_new(c, &err));
	fab_config_free(c);
	return 0;
}
