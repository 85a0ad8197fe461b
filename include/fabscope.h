/*
 * fabscope.h - the library's front door.
 *
 * libfabscope models, measures and diagnoses the network of an AI training
 * cluster.  A run goes: scenario (fab_config_load) -> fab_run_new (topology,
 * traffic, engine) -> fab_run_exec -> result document (fab_run_result_json)
 * or the CSV and text renderings in src/out/result.h.  The library never
 * prints and never exits: errors come back as values with a message that
 * points at the input.
 */
#ifndef FABSCOPE_H
#define FABSCOPE_H

#include "../src/base/base.h"
#include "../src/out/result.h"
#include "../src/scenario/scenario.h"
#include "../src/sim/sim.h"

#define FABSCOPE_VERSION "0.1.0"

struct fab_run {
	const struct fab_config *config;
	struct fab_topo *topo;
	struct fab_sim *sim;
};

/* Builds the topology, expands the traffic and prepares the engine.
 * NULL and err (pointing into the scenario) on bad input. */
struct fab_run *fab_run_new(const struct fab_config *c, struct fab_err *err);
int fab_run_exec(struct fab_run *r, fab_progress_fn progress, void *ctx);
void fab_run_free(struct fab_run *r);

/* "fabscope 0.1.0 (libyaml 0.2.5, jansson 2.14)" */
const char *fab_version_string(void);

#endif
