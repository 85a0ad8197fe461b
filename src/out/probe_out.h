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
void fab_probe_p2p_row(FILE *f, json_t *doc, enum fab_probe_test kind, uint32_t peer, const char *endpoint,
		       fab_bytes bytes, uint32_t iters, double *samples);

/* a collective sweep as nccl-tests prints it; end adds the average bus
 * bandwidth */
void fab_probe_coll_begin(FILE *f, json_t *doc, const struct fab_probe_doc_info *info, const struct fab_coll_args *a,
			  bool check);
void fab_probe_coll_row(FILE *f, json_t *doc, const struct fab_coll_args *a, uint64_t size, double time_s, bool checked,
			uint64_t wrong);
void fab_probe_coll_end(FILE *f, json_t *doc);

/* the matrix: summary, grid (up to 16 ranks), re-tests, failed pairs, the
 * slowest ranks, and the "matrix" section diagnose reads */
void fab_probe_matrix_out(FILE *f, json_t *doc, const struct fab_probe_doc_info *info,
			  const struct fab_probe_matrix_opts *mo, const struct fab_probe_matrix_res *m);

#endif
