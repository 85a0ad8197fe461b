/*
 * probe_out.h - the probe's result document (kind "probe", the same schema
 * as the simulator's, read by fabscope diagnose) and its tables.  Each
 * function writes its text to f and its part of the document into doc.
 */
#ifndef FAB_PROBE_OUT_H
#define FAB_PROBE_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "../probe/probe.h"
#include "nccl_table.h"

struct fab_probe_doc_info {
	const char *test;      /* coll, latency, bw, matrix */
	const char *generator; /* the program and version */
	const char *launcher;  /* how the ranks were started */
	uint32_t nranks, conns;
	bool busy_poll;
};

json_t *fab_probe_doc_new(const struct fab_probe *pr, const struct fab_probe_doc_info *info);

/* latency and bandwidth: the header and section, then one row per peer and
 * size; samples: latency, `iters` one-way times (sorted here); bandwidth,
 * the time of all `iters` transfers */
void fab_probe_p2p_begin(FILE *f, json_t *doc, const struct fab_probe_doc_info *info, enum fab_probe_test kind);
/* a time-based bandwidth run's interval at rank 0 (iperf3's line) */
void fab_probe_bw_interval(FILE *f, json_t *doc, uint32_t peer, double from_s, double to_s, double bytes);
void fab_probe_p2p_row(FILE *f, json_t *doc, enum fab_probe_test kind, uint32_t peer, const char *endpoint,
		       fab_bytes bytes, uint32_t iters, double *samples);
/* perftest's closing line, then a "# row N: peer ..." line a row with what
 * its table has no column for (the peer, jitter; the time and GB/s) */
void fab_probe_p2p_end(FILE *f, const json_t *doc, enum fab_probe_test kind);

/* a collective sweep as nccl-tests prints it; end adds the average bus
 * bandwidth */
/* the parameters line: sizes, step, iterations, whether checked */
struct fab_probe_coll_sweep {
	uint64_t minb, maxb;
	uint32_t factor, warmup, iters;
	bool check;
};
/* nccl-tests' parameters line of the sweep (one thread, one GPU a rank) */
struct fab_nccl_params_line fab_probe_coll_params(const struct fab_coll_args *a, const struct fab_probe_coll_sweep *sw);
void fab_probe_coll_begin(FILE *f, json_t *doc, const struct fab_probe_doc_info *info, const struct fab_coll_args *a,
			  const struct fab_probe_coll_sweep *sw);
/* a size: its out-of-place time, and the same operation timed again for
 * the in-place columns (the probe keeps separate buffers); with checked,
 * the wrong elements of a checked run for each half */
void fab_probe_coll_row(FILE *f, json_t *doc, const struct fab_coll_args *a, uint64_t size, const double time_s[2],
			bool checked, const uint64_t wrong[2]);
/* the closing lines; true when nccl-tests' checks fail (wrong elements, or
 * the average bus bandwidth under 0.9 x NCCL_TESTS_MIN_BW) */
bool fab_probe_coll_end(FILE *f, json_t *doc, int op);

/* the matrix: summary, grid (up to 16 ranks), re-tests, failed pairs, the
 * slowest ranks, and the "matrix" section diagnose reads */
void fab_probe_matrix_out(FILE *f, json_t *doc, const struct fab_probe_doc_info *info,
			  const struct fab_probe_matrix_opts *mo, const struct fab_probe_matrix_res *m);

/* -J FILE: nccl-tests' JSON of the document's collective sweep (p: its
 * parameters line; argv, envp, start as fab_nccl_json_head) */
int fab_probe_write_nccl_json(FILE *f, const json_t *doc, const struct fab_nccl_params_line *p, int argc,
			      char *const *argv, char *const *envp, const char *start);
/* -J FILE: iperf3's JSON of the document's bandwidth test (its -J), one
 * object a test (a peer at a size), a list of them when there are several.
 * The pair's connections are one stream; with bidir the sums are both
 * ways together.  0, or FAB_EIO. */
struct fab_probe_iperf {
	const char *version; /* the program */
	double duration_s, interval_s;
	bool bidir;
	long long timesecs; /* when it began (seconds since 1970) */
};
int fab_probe_write_iperf_json(FILE *f, const json_t *doc, const struct fab_probe_iperf *ip);

#endif
