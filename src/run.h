/*
 * run.h - the facade's structs (include/fabscope.h keeps them opaque): what
 * a run, a collective sweep and a matrix test hold.  For the library's own
 * files and its white-box tests.
 */
#ifndef FAB_RUN_H
#define FAB_RUN_H

#include "../include/fabscope.h"
#include "out/result.h"
#include "out/slowdown.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "work/comm.h"
#include "work/job.h"
#include "work/matrix.h"
#include "work/sweep.h"
#include "work/work.h"

struct fab_run {
	const struct fab_config *config;
	struct fab_topo *topo;
	struct fab_sim *sim;
	struct fab_work *work; /* when the scenario has jobs */
	struct fab_job *jobs;
	uint32_t njobs;
	struct fab_rank_link *ranks; /* split over processes (ranks.c); NULL: not */
	char warning[256];           /* fab_run_warning ("": none) */
};

/* ranks.c: the connections to the other ranks, closed */
void fab_run_ranks_free(struct fab_run *r);

/* A collective sweep (fabscope coll): the scenario's cluster, one
 * communicator over collective.gpus GPUs, one operation over a size range. */
struct fab_coll_run {
	struct fab_run *run;
	struct fab_work work;
	struct fab_comm comm;
	struct fab_sweep sweep;
	uint32_t *gpus;   /* rank -> GPU */
	bool all_devices; /* the text lists every rank's device (fab_coll_run_list_devices) */
};

/* The matrix test (fabscope matrix) on the scenario's cluster, with its
 * traffic, jobs and faults running alongside. */
struct fab_matrix_run {
	struct fab_run *run;
	struct fab_work work;
	struct fab_matrix m;
};

#endif
