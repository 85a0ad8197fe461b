/*
 * result.h - the result document and its renderings.
 *
 * One run, one document: a versioned JSON object (schema "fabscope.result/1")
 * with the seed, the effective configuration, the topology report, a
 * summary, per-flow and per-port tables, and optional time series.  CSV holds
 * the same tables with units in the column names; text is a summary for
 * people.  Nothing here reads a clock: same run, same bytes.
 */
#ifndef FAB_RESULT_H
#define FAB_RESULT_H

#include <jansson.h>
#include <stdio.h>

#include "../scenario/scenario.h"
#include "../sim/sim.h"

#define FAB_RESULT_SCHEMA "fabscope.result/1"

struct fab_summary {
	size_t flows, flows_done;
	fab_bytes bytes;
	fab_time_ps fct_min, fct_p50, fct_p99, fct_max;
	double fct_mean;
	double goodput_mean_bps;
	uint64_t drops, retx_pkts, cnps, timeouts, qp_errors, ecn_marks, pause_frames;
	double ecmp_max_over_mean; /* leaf uplinks (tier 1 -> tier 2), 0 if none */
	fab_rate_bps ecmp_up_max_bytes, ecmp_up_mean_bytes;
};

void fab_summary_compute(const struct fab_sim *s, struct fab_summary *out);

/* The whole document (caller json_decref's it). */
json_t *fab_result_json(const struct fab_config *c, const struct fab_sim *s);
/* The same with stand-ins for the long tables (flows, ports, series,
 * flow series), and the document written from it through the streaming
 * writer (jsonw.h), each stand-in's table from the run: the bytes of the
 * whole document at JSON_INDENT(2), without building the tables as
 * jansson values.  Members added to the lean document (jobs) are written
 * where they are. */
json_t *fab_result_json_lean(const struct fab_config *c, const struct fab_sim *s);
int fab_result_write_json(FILE *f, json_t *lean, const struct fab_sim *s);

int fab_result_write_flows_csv(FILE *f, const struct fab_sim *s);
int fab_result_write_ports_csv(FILE *f, const struct fab_sim *s);
int fab_result_write_series_csv(FILE *f, const struct fab_sim *s);
int fab_result_write_series_jsonl(FILE *f, const struct fab_sim *s);
int fab_result_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s);

/* Training jobs: per iteration and per job. */
json_t *fab_jobs_json(const struct fab_job *jobs, uint32_t n);
int fab_jobs_write_text(FILE *f, const struct fab_job *jobs, uint32_t n);

/* The matrix test: a "matrix" section (endpoints, GPUs behind each,
 * bandwidth and latency per ordered pair) and a text summary. */
json_t *fab_matrix_json(const struct fab_matrix *m);
int fab_matrix_write_text(FILE *f, const struct fab_matrix *m);
/* Each endpoint's median bandwidth to and from the others (bw: [n*n], row =
 * sender) into med[n], and ord[n]: the endpoints by it, slowest first.
 * The simulated matrix and the probe's rank their endpoints with it. */
void fab_matrix_endpoint_medians(uint32_t n, const double *bw, double *med, uint32_t *ord);

/* A collective sweep: the document gets kind "coll" and a "collective"
 * section; text is an nccl-tests table; CSV its rows. */
json_t *fab_coll_json(const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
		      const struct fab_sweep *sw);
int fab_coll_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			const struct fab_sweep *sw, bool algo_col, bool all_devices);
int fab_coll_write_csv(FILE *f, const struct fab_config *c, const struct fab_sweep *sw);
/* nccl-tests' JSON (its -J): argv the command line, envp the environment
 * (its NCCL_ and FABSCOPE_ variables listed), start the start time */
int fab_coll_write_nccl_json(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			     const struct fab_sweep *sw, int argc, char *const *argv, char *const *envp,
			     const char *start);
/* the text in parts: head, a row, end (fab_coll_write_text is all three);
 * all_devices: a "# Using devices" line for every rank, else for the first
 * FAB_NCCL_DEVICE_LINES and one line that counts the others */
void fab_coll_text_head(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			bool algo_col, bool all_devices);
void fab_coll_text_row(FILE *f, const struct fab_config *c, const struct fab_sweep *sw, uint32_t i, bool algo_col);
void fab_coll_text_end(FILE *f, const struct fab_config *c, const struct fab_sweep *sw);

#endif
