/*
 * fabscope.h - the library's public interface: what a program that uses
 * libfabscope needs, and no more.
 *
 * libfabscope models, measures and diagnoses the network of an AI training
 * cluster.  Simulation: a scenario (fab_config_load) -> a run (fab_run_new,
 * or fab_coll_run_new for an nccl-tests-style sweep, fab_matrix_run_new for
 * the all-pairs test) -> exec -> the result document (JSON) and its text and
 * CSV renderings.  Diagnosis: result documents -> ranked suspects
 * (fab_diagnose).  The real network: fab_probe_* (TCP between the job's
 * ranks) and its documents (fab_probe_doc_new and the tables after it).  The
 * library never prints and never exits: errors come back as values with a
 * message that points at the input (file:line:column, the key).
 * Types, units and errors: src/base/base.h; collective operations and
 * algorithms: src/coll/coll.h.
 */
#ifndef FABSCOPE_H
#define FABSCOPE_H

#include <jansson.h>
#include <stdio.h>

#include "../src/analysis/diagnose.h"
#include "../src/analysis/schema.h"
#include "../src/analysis/twin.h"
#include "../src/base/base.h"
#include "../src/coll/coll.h"
#include "../src/grid/grid.h"
#include "../src/out/nccl_table.h"
#include "../src/out/probe_out.h"
#include "../src/out/report.h"
#include "../src/probe/probe.h"
#include "../src/topo/plan.h"

#define FABSCOPE_VERSION "0.2.0"

/* "fabscope 0.2.0 (libyaml 0.2.5, jansson 2.14)" */
const char *fab_version_string(void);

/* ---- scenarios ---- */

struct fab_config;

/* path NULL: the built-in scenario; sets: "key=value" overrides.  NULL and
 * err (file:line:col, the key, what was expected) on bad input. */
struct fab_config *fab_config_load(const char *path, const char *const *sets, size_t nsets, struct fab_err *err);
void fab_config_free(struct fab_config *c);
/* the built-in scenario's YAML */
extern const char fab_default_scenario[];
/* every key, its default, range and meaning, as a Markdown table */
int fab_config_write_keys(FILE *f);

/* ---- simulation ---- */

struct fab_run;        /* a scenario's run: its flows and jobs */
struct fab_coll_run;   /* a collective sweep (fabscope coll) */
struct fab_matrix_run; /* the all-pairs matrix test (fabscope matrix) */

/* What a run writes besides its document. */
enum fab_output {
	FAB_OUT_TEXT,         /* a summary for people (sim: and jobs; coll: the nccl-tests table) */
	FAB_OUT_FLOWS_CSV,    /* sim: one row per flow */
	FAB_OUT_PORTS_CSV,    /* every port's counters */
	FAB_OUT_SERIES_CSV,   /* sim with fabric.series_interval: switch ports over time */
	FAB_OUT_SERIES_JSONL, /* the same, and flows, one JSON object a line */
	FAB_OUT_ROWS_CSV,     /* coll: the sweep's rows */
	FAB_OUT_LOG,          /* the communicators' and jobs' log (NCCL_DEBUG=INFO-like) */
	FAB_OUT_SLOWDOWN_CSV, /* sim: FCT slowdowns per 5% size bin */
	FAB_OUT_TEXT_ALGO,    /* coll: the nccl-tests table with the algorithm each size ran */
	FAB_OUT_JSON,         /* sim: the result document as JSON_INDENT(2) writes fab_run_json's,
			       * written without building its long tables */
};

/* Builds the topology, expands the traffic, places the jobs and prepares
 * the engine.  NULL and err (pointing into the scenario) on bad input.
 * log: keep the communicators' and jobs' log (FAB_OUT_LOG). */
struct fab_run *fab_run_new(const struct fab_config *c, struct fab_err *err);
struct fab_run *fab_run_new_log(const struct fab_config *c, bool log, struct fab_err *err);
/* Splits the run over the processes a launcher started (mpirun, srun,
 * RANK and WORLD_SIZE in the environment), before fab_run_exec: the ranks
 * meet at master ("HOST:PORT"; NULL: MASTER_ADDR and MASTER_PORT, or under
 * srun the step's first node) with the launcher's job id as their token
 * (or FABSCOPE_TOKEN), and each runs one partition of the fabric; rank 0
 * ends with the whole run's results, byte for byte those of one process.
 * Gives *rank and *nranks (1: nothing to split).  FAB_EUSAGE: no launcher,
 * no master address or token, a master not HOST:PORT; FAB_EINVAL: a
 * scenario that cannot be split (jobs, faults, series, the flow engine),
 * more ranks than NICs; FAB_EIO: the ranks did not meet in timeout_s. */
int fab_run_join_ranks(struct fab_run *r, const char *master, double timeout_s, uint32_t *rank, uint32_t *nranks,
		       struct fab_err *err);
/* why a split run's fab_run_exec failed (a rank lost, a message refused);
 * NULL when it did not */
const char *fab_run_rank_error(const struct fab_run *r);
/* What makes the scenario's numbers doubtful as it stands (NULL: nothing):
 * a switch buffer that does not cover its ports' PFC headroom and reserves
 * at dynamic thresholds, whose every ingress port then pauses at its first
 * byte. */
const char *fab_run_warning(const struct fab_run *r);
/* why the run would do nothing (no flow, no job, no fault, no run.end), or
 * NULL: fabscope sim refuses such a scenario unless asked for its document
 * (the topology alone) */
const char *fab_run_idle(const struct fab_run *r);
/* progress, if not NULL, is called every 2^20 events */
int fab_run_exec(struct fab_run *r, fab_progress_fn progress, void *ctx);
void fab_run_free(struct fab_run *r);
/* the result document (caller json_decref's it) */
json_t *fab_run_json(const struct fab_run *r);
/* FAB_EINVAL when this run has no such output (series without an interval) */
int fab_run_write(FILE *f, const struct fab_run *r, enum fab_output what);
bool fab_run_has_series(const struct fab_run *r);
uint64_t fab_run_events(const struct fab_run *r);
/* the threads its packet engine ran on (1 where it ran whole) */
uint32_t fab_run_threads(const struct fab_run *r);

/* The scenario's cluster, one communicator over collective.gpus GPUs, one
 * operation over a size range. */
struct fab_coll_run *fab_coll_run_new(const struct fab_config *c, bool log, struct fab_err *err);
int fab_coll_run_exec(struct fab_coll_run *r, fab_progress_fn progress, void *ctx, struct fab_err *err);
void fab_coll_run_free(struct fab_coll_run *r);
const char *fab_coll_run_warning(const struct fab_coll_run *r); /* as fab_run_warning */
json_t *fab_coll_run_json(const struct fab_coll_run *r);
int fab_coll_run_write(FILE *f, const struct fab_coll_run *r, enum fab_output what);
/* The nccl-tests table in parts, so that a row can be printed as soon as
 * its size is done (nccl-tests does): the head (before exec), a row, the
 * end; together the bytes FAB_OUT_TEXT (algo_col: FAB_OUT_TEXT_ALGO) writes. */
void fab_coll_run_set_row_hook(struct fab_coll_run *r, void (*fn)(void *ctx, uint32_t row), void *ctx);
/* The table's "# Using devices": a line for every rank (all), or for the
 * first 64 and one that counts the rest (the default). */
void fab_coll_run_list_devices(struct fab_coll_run *r, bool all);
int fab_coll_run_write_head(FILE *f, const struct fab_coll_run *r, bool algo_col);
int fab_coll_run_write_row(FILE *f, const struct fab_coll_run *r, uint32_t row, bool algo_col);
int fab_coll_run_write_end(FILE *f, const struct fab_coll_run *r);
/* nccl-tests' JSON output (its -J FILE.json, format version 3): argv the
 * command line, envp the environment (only its NCCL_ and FABSCOPE_
 * variables are listed), start the time the run began
 * ("%Y-%m-%d %H:%M:%S") */
int fab_coll_run_write_nccl_json(FILE *f, const struct fab_coll_run *r, int argc, char *const *argv, char *const *envp,
				 const char *start);
/* How much of the work is done, 0 to 1: the sizes done (coll: events, the
 * engine's count so far, measure the size under way); else the simulated
 * time against run.end, or the flows' bytes delivered, or the jobs'
 * iterations; -1 when it cannot tell */
double fab_coll_run_done(struct fab_coll_run *r, uint64_t events);
double fab_run_done(const struct fab_run *r);
uint64_t fab_coll_run_events(const struct fab_coll_run *r);

/* The matrix test on the scenario's cluster, with its traffic, jobs and
 * faults running alongside. */
struct fab_matrix_run *fab_matrix_run_new(const struct fab_config *c, struct fab_err *err);
int fab_matrix_run_exec(struct fab_matrix_run *r, fab_progress_fn progress, void *ctx, struct fab_err *err);
void fab_matrix_run_free(struct fab_matrix_run *r);
const char *fab_matrix_run_warning(const struct fab_matrix_run *r); /* as fab_run_warning */
json_t *fab_matrix_run_json(const struct fab_matrix_run *r);
int fab_matrix_run_write(FILE *f, const struct fab_matrix_run *r, enum fab_output what);

/* What a run will cost (--estimate; src/estimate.c): the scenario run on
 * the flow engine (packet: the packet engine's configuration, built and
 * measured, not run; flow: the same scenario with engine: flow), as sim
 * runs it or, coll, as a collective sweep. */
struct fab_estimate {
	bool coll;
	uint64_t flow_events; /* the flow engine: its run */
	double flow_cpu_s;
	uint64_t flow_mem_bytes;  /* resident, above what the process held before */
	uint64_t flow_end_ps;     /* simulated time */
	uint64_t work_bytes;      /* of flow_mem_bytes, the workload's (schedules, messages): either engine's */
	uint64_t pkt_build_bytes; /* the packet engine: the model built */
	double pkt_build_s;
	uint64_t pkt_frames_bytes; /* and its frames in flight, at most */
	uint32_t ports;
	double data_frame_links; /* data frames x the links they cross (the flow engine's books) */
	double ack_frame_links;  /* and the acknowledgements they draw */
	double pkt_events, pkt_us_per_event, pkt_cpu_s;
	uint64_t pilot_events; /* the packet engine's cost per event timed over this many (0: not timed) */
};
int fab_estimate(const struct fab_config *packet, const struct fab_config *flow, bool coll, struct fab_estimate *e,
		 struct fab_err *err);
/* a table for people */
int fab_estimate_write(FILE *f, const struct fab_estimate *e);

#endif
