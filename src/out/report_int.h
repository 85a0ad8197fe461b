/*
 * report_int.h - what the HTML report's files share: report.c (the page
 * and its sections) with report_chart.c (the pictures) and report_sweep.c
 * (a sweep's page).
 */
#ifndef FAB_REPORT_INT_H
#define FAB_REPORT_INT_H

#include "../analysis/diagnose.h"
#include "report.h"

/* the most cells a side a matrix's heatmap draws: past it, blocks of pairs
 * (the slowest of each) */
#define REP_MATRIX_CELLS 256
/* the most points a chart's series draws as they are: past it, each pixel
 * column's first, lowest, highest and last */
#define REP_CHART_POINTS 2000

/* Okabe and Ito's colours, one a line */
extern const char *const rep_colours[8];
/* viridis at t in [0, 1], as "#rrggbb" */
void rep_viridis(double t, char out[8]);

/* the page's head: its style, up to its title (report.c) */
void rep_page_head(FILE *f);
/* text for HTML and SVG */
void rep_esc(FILE *f, const char *s);
/* o's member k: a string ("" when it is none), a number (0) */
const char *rep_jstr(const json_t *o, const char *k);
double rep_jnum(const json_t *o, const char *k);

/* a size in bytes as people read it ("3.03 MiB"), the bytes on hover */
void rep_bytes(FILE *f, double b);
/* a line chart's series: n points (x, y) */
struct series {
	const char *label;
	const double *x, *y;
	size_t n;
};

/* a line chart of ns series, x on a log2 scale (logx) or linear, y linear
 * from 0, with its title as caption */
void rep_chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, bool logx, const struct series *s,
	       size_t ns);
/* PAUSE frames sent, ECN marks and drops per interval, summed over the
 * switch ports of the time series ser */
void rep_pause_ecn_series(FILE *f, const json_t *ser);
/* FCT slowdown by flow size (the document's slowdown section) */
void rep_slowdown_chart(FILE *f, const json_t *sd);
/* the topology from the ports table, links coloured by utilisation and
 * marked where diagnose's suspects name them */
void rep_topology_map(FILE *f, const json_t *ports, const struct fab_diagnosis *d);
/* horizontal bars, one per design of ds: its member key over div; with
 * ranges, a design run over seeds has its min to max as a whisker */
void rep_bars(FILE *f, const char *title, const char *unit, const json_t *ds, const char *key, double div, bool ranges);

#endif
