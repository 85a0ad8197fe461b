/*
 * eq.h - the event queue of the packet engine.
 *
 * Events are ordered by (time, insertion sequence), so two events at the same
 * picosecond always run in the order they were scheduled: the same scenario
 * and seed give the same run.  The queue is a 4-ary min-heap of 32-byte
 * entries held by value in one growable array: scheduling allocates nothing
 * once the array has grown to the run's peak.  Timers are cancelled lazily:
 * the owner keeps a generation number and ignores stale events.
 */
#ifndef FAB_EQ_H
#define FAB_EQ_H

#include "../base/base.h"

struct fab_ev {
	fab_time_ps t_ps;
	uint64_t seq;
	void *obj;     /* what the event acts on (a port, a queue pair) */
	uint32_t type; /* engine-defined event type */
	uint32_t arg;  /* engine-defined argument (priority, generation) */
};

struct fab_eq {
	struct fab_ev *heap;
	size_t len, cap;
	uint64_t next_seq;
	uint64_t popped; /* events processed so far */
};

void fab_eq_init(struct fab_eq *q);
void fab_eq_free(struct fab_eq *q);

static inline size_t fab_eq_len(const struct fab_eq *q)
{
	return q->len;
}

/* (time, sequence) as one 128-bit key: one branch-free comparison */
static inline __uint128_t fab_ev_key(const struct fab_ev *e)
{
	return ((__uint128_t)e->t_ps << 64) | e->seq;
}

static inline bool fab_ev_before(const struct fab_ev *a, const struct fab_ev *b)
{
	return fab_ev_key(a) < fab_ev_key(b);
}

void fab_eq_push(struct fab_eq *q, fab_time_ps t_ps, uint32_t type, void *obj, uint32_t arg);

/* Removes the earliest event into *out; false when the queue is empty. */
bool fab_eq_pop(struct fab_eq *q, struct fab_ev *out);

/* Time of the earliest event, FAB_TIME_NEVER when empty. */
static inline fab_time_ps fab_eq_peek_time(const struct fab_eq *q)
{
	return q->len ? q->heap[0].t_ps : FAB_TIME_NEVER;
}

#endif
