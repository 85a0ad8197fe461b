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

struct fab_heap {
	struct fab_ev *ev;
	size_t len, cap;
};

struct fab_eq {
	struct fab_heap near, far; /* due within FAR_PS of the last event taken, and after */
	uint64_t next_seq;
	uint64_t popped;     /* events processed so far */
	fab_time_ps last_ps; /* the last event's time */
};

void fab_eq_init(struct fab_eq *q);
void fab_eq_free(struct fab_eq *q);

static inline size_t fab_eq_len(const struct fab_eq *q)
{
	return q->near.len + q->far.len;
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
/* The same with a sequence number taken before (fab_eq_reserve): an event
 * held outside the queue until it may be next keeps its place among those
 * at its time. */
void fab_eq_push_seq(struct fab_eq *q, fab_time_ps t_ps, uint64_t seq, uint32_t type, void *obj, uint32_t arg);
/* n sequence numbers for events pushed later with fab_eq_push_seq: the first */
static inline uint64_t fab_eq_reserve(struct fab_eq *q, uint64_t n)
{
	uint64_t first = q->next_seq;
	q->next_seq += n;
	return first;
}

/* Removes the earliest event into *out; false when the queue is empty. */
bool fab_eq_pop(struct fab_eq *q, struct fab_ev *out);

/* The earliest event, or NULL when empty (to prefetch what it will touch). */
static inline const struct fab_ev *fab_eq_top(const struct fab_eq *q)
{
	const struct fab_ev *a = q->near.len ? &q->near.ev[0] : NULL, *b = q->far.len ? &q->far.ev[0] : NULL;
	return !a || (b && fab_ev_before(b, a)) ? b : a;
}

/* Time of the earliest event, FAB_TIME_NEVER when empty. */
static inline fab_time_ps fab_eq_peek_time(const struct fab_eq *q)
{
	fab_time_ps a = q->near.len ? q->near.ev[0].t_ps : FAB_TIME_NEVER;
	fab_time_ps b = q->far.len ? q->far.ev[0].t_ps : FAB_TIME_NEVER;
	return a < b ? a : b;
}

#endif
