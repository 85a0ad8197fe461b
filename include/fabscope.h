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
#include "../src/work/comm.h"
#include "../src/work/job.h"
#include "../src/work/matrix.h"
#include "../src/work/sweep.h"
#include "../src/work/work.h"

#define FABSCOPE_VERSION "0.1.0"

struct fab_run {
	const struct fab_config *config;
	struct fab_topo *topo;
	struct fab_sim *sim;
	struct fab_work *work;  /* when the scenario has jobs */
	struct fab_job *jobs;
	uint32_t njobs;
};

/* Builds the topology, expands the traffic, places the jobs and prepares
 * the engine.  NULL and err (pointing into the scenario) on bad input.
 * log: keep the communicators' and jobs' log (fab_run->work->log). */
struct fab_run *fab_run_new(const struct fab_config *c, struct fab_err *err);
struct fab_run *fab_run_new_log(const struct fab_config *c, bool log, struct fab_err *err);
int fab_run_exec(struct fab_run *r, fab_progress_fn progress, void *ctx);
void fab_run_free(struct fab_run *r);

/* A collective sweep (fabscope coll): the scenario's cluster, one
 * communicator over collective.gpus GPUs, one operation over a size range. */
struct fab_coll_run {
	struct fab_run *run;
	struct fab_work work;
	struct fab_comm comm;
	struct fab_sweep sweep;
	uint32_t *gpus; /* rank -> GPU */
};

struct fab_coll_run *fab_coll_run_new(const struct fab_config *c, bool log, struct fab_err *err);
int fab_coll_run_exec(struct fab_coll_run *r, fab_progress_fn progress, void *ctx,
		      struct fab_err *err);
void fab_coll_run_free(struct fab_coll_run *r);

/* The matrix test (fabscope matrix) on the scenario's cluster, with its
 * traffic, jobs and faults running alongside. */
struct fab_matrix_run {
	struct fab_run *run;
	struct fab_work work;
	struct fab_matrix m;
};

struct fab_matrix_run *fab_matrix_run_new(const struct fab_config *c, struct fab_err *err);
int fab_matrix_run_exec(struct fab_matrix_run *r, fab_progress_fn progress, void *ctx,
			struct fab_err *err);
void fab_matrix_run_free(struct fab_matrix_run *r);

/* "fabscope 0.1.0 (libyaml 0.2.5, jansson 2.14)" */
const char *fab_version_string(void);

#endif
