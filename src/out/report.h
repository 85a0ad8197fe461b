/*
 * report.h - one self-contained HTML page from result documents (fabscope
 * report): no network, no scripts, no fonts to fetch; inline SVG pictures
 * with <title> tooltips.  Same documents, same bytes.
 */
#ifndef FAB_REPORT_H
#define FAB_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "../base/base.h"

/* docs[i] named names[i] (its file); every document is first checked as
 * diagnose checks it (FAB_EINVAL and err on a bad one).  Each is labelled
 * labels[i] where labels and it are not NULL, else by its name and what
 * differs in its scenario from the others' ("transport=ib, seed=2").
 * only: one section's id (documents, suspects, busbw, sim-N, matrix-N,
 * job-N-K), the page otherwise, with a table of contents */
int fab_report_write(FILE *f, json_t *const *docs, const char *const *names, const char *const *labels, int ndocs,
		     const char *only, struct fab_err *err);

/* plan --compare's table (fab_compare_json) as a page of one section,
 * id "plan-compare": the table and bars of cost, power and the workload's
 * result per design */
int fab_report_compare(FILE *f, const json_t *cmp);

/* a sweep's table (sweep.json, named name) as a page of one section, id
 * "sweep": result y (default: the sweep's first) against swept key x
 * (default: the first that varies), a line for each combination of the
 * other swept keys, the mean over seeds; then the points.  The document
 * is checked first (FAB_EINVAL and err: the place, what was expected). */
int fab_report_sweep(FILE *f, const json_t *sw, const char *name, const char *x, const char *y, struct fab_err *err);
/* fab_report_compare, the document (named name) checked first */
int fab_report_compare_checked(FILE *f, const json_t *cmp, const char *name, struct fab_err *err);
/* fabscope twin's document (schema fabscope.calibration/1) as a page of
 * its own (report_twin.c): the fit, the departures, every pair and
 * collective row measured, expected and predicted.  0, or an error. */
int fab_report_twin(FILE *f, const json_t *d, const char *name, struct fab_err *err);

#endif
