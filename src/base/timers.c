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

/* (time, order of setting) as one 128-bit key: one comparison, no branch
 * (a sift's comparisons go either way: as branches they mispredict) */
static inline __uint128_t key(const struct fab_timer_slot *a)
{
	return (__uint128_t)a->t << 64 | a->seq;
}

static bool before(const struct fab_timer_slot *a, const struct fab_timer_slot *b)
{
	return key(a) < key(b);
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
	__uint128_t ke = key(&e);
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= tm->n)
			break;
		/* the lesser child, chosen without a branch */
		__uint128_t kc = key(&tm->heap[c]);
		if (c + 1 < tm->n) {
			__uint128_t k1 = key(&tm->heap[c + 1]);
			bool right = k1 < kc;
			c += right;
			kc = right ? k1 : kc;
		}
		if (kc >= ke)
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
		if (tm->n == tm->cap) {
			tm->cap = tm->cap ? 2 * tm->cap : 64;
			tm->heap = fab_xrealloc(tm->heap, tm->cap, sizeof *tm->heap);
		}
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

/* The earliest goes: the hole it leaves sinks along the lesser children
 * to a leaf (one comparison a level, not two: the last item, put in at the
 * top, would sink nearly as far anyway), and the last item fills it from
 * there, rising if it must.  Keys are unique (the order of setting breaks
 * ties), so the order items come out in is the same as any other sift's. */
uint32_t fab_timers_pop(struct fab_timers *tm)
{
	FAB_ASSERT(tm->n > 0);
	uint32_t i = tm->heap[0].item;
	tm->pos[i] = NOT_SET;
	tm->t[i] = FAB_TIME_NEVER;
	struct fab_timer_slot last = tm->heap[--tm->n];
	if (tm->n == 0)
		return i;
	uint32_t k = 0;
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= tm->n)
			break;
		if (c + 1 < tm->n)
			c += key(&tm->heap[c + 1]) < key(&tm->heap[c]);
		put(tm, k, tm->heap[c]);
		k = c;
	}
	put(tm, k, last);
	up(tm, k);
	return i;
}
