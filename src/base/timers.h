/*
 * timers.h - a set of timers, one per item, earliest first.
 *
 * Each item (a port, a switch, a queue pair: numbered by its owner) has at
 * most one time at which it is due.  Setting it again moves it: nothing
 * stale is left behind to be taken and thrown away, as a timer cancelled
 * lazily in the event queue would be (a queue's drain time moves at every
 * change of its rates).  Items due at the same picosecond come in the
 * order their times were set (set again to the same time, an item keeps
 * its place).  A binary min-heap of (time, order of setting, item), the
 * keys in place to compare without a lookup, with each item's place in it.
 */
#ifndef FAB_TIMERS_H
#define FAB_TIMERS_H

#include "base.h"

struct fab_timer_slot {
	fab_time_ps t; /* when due */
	uint64_t seq;  /* when set, for ties */
	uint32_t item;
};

struct fab_timers {
	struct fab_timer_slot *heap; /* keys in place: no indirection to compare */
	uint32_t n;                  /* items set */
	uint32_t cap;                /* the heap's room (grown as items are set: few are at once) */
	uint32_t nitems;             /* items 0 .. nitems - 1 */
	fab_time_ps *t;              /* per item: when due (FAB_TIME_NEVER: not set) */
	uint32_t *pos;               /* per item: its place in the heap */
	uint64_t next_seq;
};

void fab_timers_init(struct fab_timers *tm, uint32_t nitems);
/* items nitems .. n - 1 join, not set */
void fab_timers_grow(struct fab_timers *tm, uint32_t n);
void fab_timers_free(struct fab_timers *tm);
/* item i is due at t from now on (fab_timers_set below), and behind every
 * other item due at t even where it was due at t already (as if set for
 * the first time) */
void fab_timers_requeue(struct fab_timers *tm, uint32_t i, fab_time_ps t);
/* removes the earliest item and returns it (there must be one) */
uint32_t fab_timers_pop(struct fab_timers *tm);

/* when the earliest item is due; FAB_TIME_NEVER when none is set */
static inline fab_time_ps fab_timers_next(const struct fab_timers *tm)
{
	return tm->n ? tm->heap[0].t : FAB_TIME_NEVER;
}

static inline fab_time_ps fab_timers_at(const struct fab_timers *tm, uint32_t i)
{
	return tm->t[i];
}

/* item i is due at t from now on (FAB_TIME_NEVER: not at all); set again
 * to its time, it keeps its place.  Inline: two in three calls of the
 * flow engine's find it so (mostly an item not set, set to never), and
 * return without a call. */
static inline void fab_timers_set(struct fab_timers *tm, uint32_t i, fab_time_ps t)
{
	FAB_ASSERT(i < tm->nitems);
	if (tm->t[i] != t) /* (an item not set is due never) */
		fab_timers_requeue(tm, i, t);
}

/* the earliest item (there must be one) */
static inline uint32_t fab_timers_top(const struct fab_timers *tm)
{
	return tm->heap[0].item;
}

#endif
