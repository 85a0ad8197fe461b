/*
 * twin.h - the simulated cluster fitted to the measured one.
 *
 * fab_twin_fit compares a probe's all-pairs matrix (what the real network
 * did) with the same test simulated on the cluster's design scenario (what
 * the fabric allows) and returns the fit as a JSON object (schema
 * fabscope.calibration/1, doc/twin.md): the values every host shares
 * (achievable rate, per-message latency) as scenario keys with where they
 * came from, and the departures (a host's link, the fabric between two
 * switches, one path, a host's latency) ranked, each with its measured and
 * expected figures and, where one link explains it, a degrade fault.
 */
#ifndef FAB_TWIN_H
#define FAB_TWIN_H

#include <jansson.h>

#include "../base/base.h"

struct fab_twin_params {
	double tolerance;  /* a pair below this x the cluster's factor is low: 0.8 */
	double share;      /* a link explains its pairs when this share of them is low: 0.75 */
	double lat_factor; /* a host's latency above this x the cluster's median: 3 */
	double lat_min_us; /* and at least this much above it: 50 us (noise on a loaded host: 20 us and more) */
};

void fab_twin_defaults(struct fab_twin_params *p);

/* probe: a probe document with a matrix section; design: fabscope matrix's
 * document of the design scenario with the same message sizes; map[i]: the
 * design endpoint of probe rank i (NULL: rank i is endpoint i).  NULL and
 * err when the two cannot be compared (sizes, endpoints, no pair measured). */
json_t *fab_twin_fit(const json_t *probe, const json_t *design, const uint32_t *map, const struct fab_twin_params *p,
		     struct fab_err *err);

/* One step of the fit against the simulation: each departure's fault rate
 * scaled by the median, over the low pairs it explains, of measured over
 * pred (fabscope matrix's document of the calibrated scenario), when the
 * largest scale is tol or more away from 1.  That distance. */
double fab_twin_refine(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map, double tol);

/* Every measured pair (a re-tested one from its round) beside exp's (the
 * design with the fitted keys, at the fit's factor) and pred's (the
 * calibrated scenario): from, to, measured_GBps, expected_GBps,
 * predicted_GBps. */
json_t *fab_twin_pairs(const json_t *fit, const json_t *probe, const json_t *exp, const json_t *pred,
		       const uint32_t *map);

/* The departures without a fault of their own (a path, a fabric between
 * switches that no one link joins) whose every pair runs within tolerance
 * of what pred (the calibrated scenario's matrix) gives it: the congestion
 * the other departures cause, not departures; removed.  How many. */
size_t fab_twin_prune(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map);

/* The calibrated scenario against what was measured, pair by pair (pred:
 * its matrix): residuals.median_ratio_off (the median of |measured over
 * predicted| away from 1, as a ratio), worst_ratio and worst_pair. */
void fab_twin_residuals(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map);

#endif
