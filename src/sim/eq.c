/*
 * eq.c - 4-ary min-heap keyed by (time, sequence).
 *
 * A 4-ary heap halves the depth of a binary one and keeps the four children
 * of a node in two cache lines; sifting moves a hole instead of swapping.
 * Hot: every simulated packet hop passes through push and pop twice.
 */
#include <stdlib.h>

#include "eq.h"

void fab_eq_init(struct fab_eq *q)
{
	q->cap = 1024;
	q->len = 0;
	q->heap = fab_xcalloc(q->cap, sizeof *q->heap);
	q->next_seq = 0;
	q->popped = 0;
}

void fab_eq_free(struct fab_eq *q)
{
	free(q->heap);
	q->heap = NULL;
	q->len = q->cap = 0;
}

void fab_eq_push(struct fab_eq *q, fab_time_ps t_ps, uint32_t type, void *obj, uint32_t arg)
{
	if (q->len == q->cap) {
		q->cap *= 2;
		q->heap = fab_xrealloc(q->heap, q->cap, sizeof *q->heap);
	}
	struct fab_ev ev = {t_ps, q->next_seq++, obj, type, arg};
	size_t i = q->len++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!fab_ev_before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
}

bool fab_eq_pop(struct fab_eq *q, struct fab_ev *out)
{
	if (!q->len)
		return false;
	*out = q->heap[0];
	q->popped++;
	struct fab_ev last = q->heap[--q->len];
	size_t n = q->len, i = 0;
	if (!n)
		return true;
	__uint128_t last_key = fab_ev_key(&last);
	for (;;) {
		size_t c = 4 * i + 1;
		if (c >= n)
			break;
		size_t best = c, end = FAB_MIN(c + 4, n);
		__uint128_t best_key = fab_ev_key(&q->heap[c]);
		for (size_t k = c + 1; k < end; k++) {
			__uint128_t kk = fab_ev_key(&q->heap[k]);
			if (kk < best_key) {
				best_key = kk;
				best = k;
			}
		}
		if (best_key >= last_key)
			break;
		q->heap[i] = q->heap[best];
		i = best;
	}
	q->heap[i] = last;
	return true;
}
