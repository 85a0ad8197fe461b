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
 * diagnose checks it (FAB_EINVAL and err on a bad one) */
/* only: one section's id (documents, suspects, busbw, sim-N, matrix-N,
 * job-N-K), the page otherwise */
int fab_report_write(FILE *f, json_t *const *docs, const char *const *names, int ndocs, const char *only,
		     struct fab_err *err);

/* plan --compare's table (fab_compare_json) as a page of one section,
 * id "plan-compare": the table and bars of cost, power and the workload's
 * result per design */
int fab_report_compare(FILE *f, const json_t *cmp);

#endif
