/*
 * diagnose.h - from result documents to ranked suspects with evidence.
 *
 * Reads what any producer wrote (fabscope sim, coll, matrix, and the
 * real-network probe): the matrix, port counters, ECMP balance, job
 * iterations.  Robust statistics (median and MAD) decide what stands out.
 */
#ifndef FAB_DIAGNOSE_H
#define FAB_DIAGNOSE_H

#include <jansson.h>
#include <stdio.h>

#include "../base/base.h"

struct fab_diag_params {
	double slow_fraction;      /* an endpoint slower than (1 - this) x the median: 0.15 */
	double mad_k;              /* and this many scaled MADs below it: 5 */
	double bad_pair_share;     /* share of an endpoint's pairs under half the median: 0.1 */
	double pause_factor;       /* PAUSE frames sent above this x the NICs' median (+1): 10 */
	uint64_t pause_min;        /* and at least this many: 100 */
	double ecmp_max_over_mean; /* 3.0, or a quarter of a tier's uplinks idle */
	double iter_jump;          /* an iteration above this x its job's median: 1.3 */
	double baseline_drop;      /* worse than the baseline by this fraction: 0.2 */
};

void fab_diag_defaults(struct fab_diag_params *p);

struct fab_suspect {
	char kind[24]; /* "link", "nic", "pfc-storm", "ecmp", "congestion", "job", "baseline" */
	char target[160];
	double score; /* ranks suspects: higher first */
	char evidence[6][240];
	int nevidence;
};

struct fab_diagnosis {
	struct fab_suspect *s;
	int n, cap;
	int documents;
};

/* A matrix in a document has at most this many endpoints. */
#define FAB_DIAG_MAX_ENDPOINTS 65536u

/* The parts of a result document diagnosis reads, checked for the types and
 * shapes fabscope writes: FAB_EINVAL with "doc: path: expected ..., got
 * ..." when one is not. */
int fab_diag_validate(const json_t *d, const char *doc, struct fab_err *err);

/* docs: parsed result documents, each checked by fab_diag_validate (the
 * error names "document N"); baseline may be NULL. */
int fab_diagnose(json_t *const *docs, int ndocs, json_t *baseline, const struct fab_diag_params *p,
		 struct fab_diagnosis *out, struct fab_err *err);
void fab_diagnosis_free(struct fab_diagnosis *d);
json_t *fab_diagnosis_json(const struct fab_diagnosis *d);
void fab_diagnosis_write_text(FILE *f, const struct fab_diagnosis *d);
/* A heatmap of the matrix bandwidth in the first document that has one,
 * suspect endpoints outlined. */
int fab_diagnosis_write_svg(FILE *f, json_t *const *docs, int ndocs, const struct fab_diagnosis *d);

#endif
