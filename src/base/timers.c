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
	tm->pos = fab_xrealloc(tm->pos, n, sizeof *tm->pos);
	for (uint32_t i = tm->nitems; i < n; i++) {
		tm->t[i] = FAB_TIME_NEVER;
		tm->pos[i] = NOT_SET;
	}
	tm->nitems = n;
}

void fab_timers_free(struct fab_timers *tm)
{
	free(tm->heap);
	free(tm->t);
	free(tm->pos);
	memset(tm, 0, sizeof *tm);
}

static bool before(const struct fab_timer_slot *a, const struct fab_timer_slot *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void put(struct fab_timers *tm, uint32_t k, struct fab_timer_slot e)
{
	tm->heap[k] = e;
	tm->pos[e.item] = k;
}

static void up(struct fab_timers *tm, uint32_t k)
{
	struct fab_timer_slot e = tm->heap[k];
	while (k) {
		uint32_t p = (k - 1) / 2;
		if (!before(&e, &tm->heap[p]))
			break;
		put(tm, k, tm->heap[p]);
		k = p;
	}
	put(tm, k, e);
}

static void down(struct fab_timers *tm, uint32_t k)
{
	struct fab_timer_slot e = tm->heap[k];
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= tm->n)
			break;
		if (c + 1 < tm->n && before(&tm->heap[c + 1], &tm->heap[c]))
			c++;
		if (!before(&tm->heap[c], &e))
			break;
		put(tm, k, tm->heap[c]);
		k = c;
	}
	put(tm, k, e);
}

/* takes item i out of the heap */
static void unset(struct fab_timers *tm, uint32_t i)
{
	uint32_t k = tm->pos[i];
	tm->pos[i] = NOT_SET;
	tm->t[i] = FAB_TIME_NEVER;
	struct fab_timer_slot last = tm->heap[--tm->n];
	if (k == tm->n)
		return;
	put(tm, k, last);
	up(tm, k);
	down(tm, tm->pos[last.item]);
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
	struct fab_timer_slot e = {t, tm->next_seq++, i};
	if (tm->pos[i] == NOT_SET) {
		put(tm, tm->n++, e);
		up(tm, tm->n - 1);
		return;
	}
	uint32_t k = tm->pos[i];
	bool earlier = before(&e, &tm->heap[k]);
	tm->heap[k] = e;
	if (earlier)
		up(tm, k);
	else
		down(tm, k);
}

uint32_t fab_timers_pop(struct fab_timers *tm)
{
	FAB_ASSERT(tm->n > 0);
	uint32_t i = tm->heap[0].item;
	unset(tm, i);
	return i;
}
