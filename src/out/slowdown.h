/*
 * slowdown.h - FCT slowdowns as congestion-control papers report them
 * (HPCC, SIGCOMM 2019, and its analysis scripts): each finished flow's FCT
 * over its ideal FCT, floored at 1; flows sorted by size (ties by
 * slowdown) into 20 bins of 5% of the flows; per bin its largest size and
 * the median, p95 and p99.
 */
#ifndef FAB_SLOWDOWN_H
#define FAB_SLOWDOWN_H

#include <jansson.h>
#include <stdio.h>

#include "../sim/sim.h"

#define FAB_SLOWDOWN_BINS 20

struct fab_slowdown_bin {
	uint64_t max_bytes;
	uint32_t flows;
	double p50, p95, p99;
};

/* The binning alone: n flows' sizes and slowdowns (non-negative; sorted
 * here, together);
 * bin i holds sorted flows [5i n / 100, 5(i+1) n / 100) and percentile p is
 * the bin's sorted slowdowns at index int(count p).  Returns the bins
 * filled (those with a flow). */
size_t fab_slowdown_binning(uint64_t *bytes, double *slowdown, size_t n, struct fab_slowdown_bin *bins);

/* A flow's ideal FCT: the base RTT of its first queue pair's path (twice
 * the propagation delays, plus one full payload's serialisation per link)
 * plus its bytes with their headers (the framing's overhead and preamble
 * per packet) at the path's slowest link; bytes: the flow's. */
double fab_ideal_fct_ps(const struct fab_sim *s, uint32_t flow, fab_bytes bytes);

/* The section of the result document ("slowdown"; NULL without finished
 * flows) and slowdown.csv. */
json_t *fab_slowdown_json(const struct fab_sim *s);
int fab_result_write_slowdown_csv(FILE *f, const struct fab_sim *s);

#endif
