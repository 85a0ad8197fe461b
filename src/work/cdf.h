/*
 * cdf.h - flow-size distributions for the Poisson workload generator, in
 * the form HPCC's traffic generator reads them: points (size in bytes,
 * cumulative percent), the first at 0 %, the last at 100 %, both strictly
 * increasing; a size is drawn by linear interpolation between the points
 * around a uniform percentile.  Built in: WebSearch (DCTCP, SIGCOMM 2010)
 * and FB_Hadoop (Facebook, SIGCOMM 2015), as published with the HPCC
 * simulator (its traffic_gen folder).
 */
#ifndef FAB_CDF_H
#define FAB_CDF_H

#include "../base/base.h"
#include "../base/rng.h"

struct fab_cdf {
	size_t n;
	double *bytes;   /* point sizes */
	double *percent; /* cumulative percent at each size */
	char name[32];   /* websearch, fb_hadoop, or the file's base name */
};

/* "websearch", "fb_hadoop", or a file of "SIZE PERCENT" lines ('#'
 * comments); errors point at file:line:col. */
int fab_cdf_load(struct fab_cdf *c, const char *name_or_path, struct fab_err *err);
void fab_cdf_free(struct fab_cdf *c);

/* The mean size in bytes (the piecewise-linear distribution's). */
double fab_cdf_mean(const struct fab_cdf *c);

/* The size at a percentile in [0, 100]. */
double fab_cdf_at(const struct fab_cdf *c, double percent);

/* A size drawn from the distribution: whole bytes, at least 1. */
fab_bytes fab_cdf_draw(const struct fab_cdf *c, struct fab_rng *r);

#endif
