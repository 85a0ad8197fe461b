/*
 * sort.h - radix sorts of unsigned 64-bit keys, for tables of every flow
 * of a run (percentiles, slowdown bins): linear in the rows, no calls
 * through a comparison.  Non-negative doubles sort as their bits do
 * (fab_dbits).
 */
#ifndef FAB_SORT_H
#define FAB_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* a row ordered by a, then b */
struct fab_key2 {
	uint64_t a, b;
};

/* the bits of a non-negative double, in the double's order */
static inline uint64_t fab_dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

static inline double fab_bitsd(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

void fab_sort_u64(uint64_t *v, size_t n);
void fab_sort_key2(struct fab_key2 *v, size_t n);

#endif
