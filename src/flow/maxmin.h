/*
 * maxmin.h - max-min fair rates by progressive filling.
 *
 * Links 0..nl-1 with capacities cap[l]; flow f crosses the links
 * idx[off[f] .. off[f+1]).  Every flow's rate rises together until a link
 * is full; the flows through it are frozen at that share, and the others
 * go on rising.  The result: no flow can get more without taking from a flow
 * that has no more (Bertsekas & Gallager).  A flow that crosses no link
 * gets rate 0.
 */
#ifndef FAB_MAXMIN_H
#define FAB_MAXMIN_H

#include "../base/base.h"

struct fab_maxmin {
	/* scratch, reused between calls: grows to the largest problem */
	double *res;
	uint32_t *cnt, *lf_off, *lf_idx, *fill;
	uint8_t *frozen;
	struct fab_mm_ent *heap;
	size_t cap_l, cap_f, cap_e, cap_h;
	uint32_t *bott; /* when set: each flow's bottleneck, the link it froze at (UINT32_MAX: none) */
};

void fab_maxmin_init(struct fab_maxmin *m);
void fab_maxmin_free(struct fab_maxmin *m);
void fab_maxmin_solve(struct fab_maxmin *m, uint32_t nl, const double *cap, uint32_t nf, const uint32_t *off,
		      const uint32_t *idx, double *rate);

#endif
