/*
 * timers.c - one timer per item in a binary min-heap keyed by (time, the
 * order of setting); see timers.h.
 */
#include <stdlib.h>
#include <string.h>

#include "timers.h"

#define NOT_SET UINT32_MAX

void fab_timers_init(struct fab_timers *tm, uint32_t nitems)
{
	memset(tm, 0, sizeof *tm);
	fab_timers_grow(tm, nitems);
}

void fab_timers_grow(struct fab_timers *tm, uint32_t n)
{
	if (n <= tm->nitems)
		return;
	tm->heap = fab_xrealloc(tm->heap, n, sizeof *tm->heap);
	tm->t = fab_xrealloc(tm->t, n, sizeof *tm->t);
	tm->seq = fab_xrealloc(tm->seq, n, sizeof *tm->seq);
	tm->pos = fab_xrealloc(tm->pos, n, sizeof *tm->pos);
	for (uint32_t i = tm->nitems; i < n; i++) {
		tm->t[i] = FAB_TIME_NEVER;
		tm->seq[i] = 0;
		tm->pos[i] = NOT_SET;
	}
	tm->nitems = n;
}

void fab_timers_free(struct fab_timers *tm)
{
	free(tm->heap);
	free(tm->t);
	free(tm->seq);
	free(tm->pos);
	memset(tm, 0, sizeof *tm);
}

static bool before(const struct fab_timers *tm, uint32_t a, uint32_t b)
{
	return tm->t[a] < tm->t[b] || (tm->t[a] == tm->t[b] && tm->seq[a] < tm->seq[b]);
}

static void put(struct fab_timers *tm, uint32_t k, uint32_t i)
{
	tm->heap[k] = i;
	tm->pos[i] = k;
}

static void up(struct fab_timers *tm, uint32_t k)
{
	uint32_t i = tm->heap[k];
	while (k) {
		uint32_t p = (k - 1) / 2;
		if (!before(tm, i, tm->heap[p]))
			break;
		put(tm, k, tm->heap[p]);
		k = p;
	}
	put(tm, k, i);
}

static void down(struct fab_timers *tm, uint32_t k)
{
	uint32_t i = tm->heap[k];
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= tm->n)
			break;
		if (c + 1 < tm->n && before(tm, tm->heap[c + 1], tm->heap[c]))
			c++;
		if (!before(tm, tm->heap[c], i))
			break;
		put(tm, k, tm->heap[c]);
		k = c;
	}
	put(tm, k, i);
}

/* takes item i out of the heap */
static void unset(struct fab_timers *tm, uint32_t i)
{
	uint32_t k = tm->pos[i];
	tm->pos[i] = NOT_SET;
	tm->t[i] = FAB_TIME_NEVER;
	uint32_t last = tm->heap[--tm->n];
	if (k == tm->n)
		return;
	put(tm, k, last);
	up(tm, k);
	down(tm, tm->pos[last]);
}

void fab_timers_set(struct fab_timers *tm, uint32_t i, fab_time_ps t)
{
	if (tm->t[i] == t && t != FAB_TIME_NEVER) /* (set already: it keeps its place) */
		return;
	fab_timers_requeue(tm, i, t);
}

void fab_timers_requeue(struct fab_timers *tm, uint32_t i, fab_time_ps t)
{
	FAB_ASSERT(i < tm->nitems);
	if (t == FAB_TIME_NEVER) {
		if (tm->pos[i] != NOT_SET)
			unset(tm, i);
		return;
	}
	tm->t[i] = t;
	tm->seq[i] = tm->next_seq++;
	if (tm->pos[i] == NOT_SET) {
		put(tm, tm->n++, i);
		up(tm, tm->n - 1);
		return;
	}
	up(tm, tm->pos[i]);
	down(tm, tm->pos[i]);
}

uint32_t fab_timers_pop(struct fab_timers *tm)
{
	FAB_ASSERT(tm->n > 0);
	uint32_t i = tm->heap[0];
	unset(tm, i);
	return i;
}
