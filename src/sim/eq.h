/*
 * eq.h - the event queue of the packet engine.
 *
 * Events are ordered by (time, key).  An event's key is derived from the
 * event that scheduled it: the parent's key mixed, plus the number of
 * events the parent scheduled before it.  So the order of two events at the
 * same picosecond depends only on their ancestry, never on which queue
 * holds them or what else was scheduled meanwhile: a run split over several
 * queues (the parallel packet engine, one queue per partition) takes every
 * event in the same order as one queue does, and the same scenario and seed
 * give the same run.  Events scheduled by one parent keep the order they
 * were scheduled in (up to 4,096 of them).  The queue is a 4-ary min-heap of 32-byte
 * entries held by value in one growable array: scheduling allocates nothing
 * once the array has grown to the run's peak.  Timers are cancelled lazily:
 * the owner keeps a generation number and ignores stale events.
 *
 * Beside the heaps, a delay line (fab_eq_line): an event due exactly the
 * line's delay after the last one taken joins its FIFO instead.  The last
 * event's time never goes back, so the line's events come due in the
 * order they joined it; those due at one picosecond are put in key order
 * as they join.  A pop takes the earlier of the heaps' top and the line's
 * head: the order is exactly the heaps' alone.  The packet engine gives a
 * full data frame's serialisation at its commonest link rate: frames sent
 * back to back end, and arrive, one serialisation apart, and more than
 * half of what it schedules is due just that long after.
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

/* ev[0] is the root; the four children of ev[i] are ev[4i + 1 .. 4i + 4],
 * placed (3 slots into a 128-byte aligned block) on two cache lines */
struct fab_heap {
	struct fab_ev *ev;
	size_t len, cap;
	struct fab_ev *mem; /* the block: ev - 3 */
};

/* events due `delay` after the one that scheduled them, first due first:
 * v[(head + i) & (cap - 1)], i < n */
struct fab_eq_line {
	struct fab_ev *v;
	uint32_t head, n, cap;
	fab_time_ps delay; /* 0: none */
};

struct fab_eq {
	struct fab_heap near, far; /* due within FAR_PS of the last event taken, and after */
	struct fab_eq_line line;
	uint64_t base;       /* the running event's children: keys from base, base + 1, ... (fab_eq_key) */
	uint64_t popped;     /* events processed so far */
	fab_time_ps last_ps; /* the last event's time */
	uint64_t last_seq;   /* and its key */
};

void fab_eq_init(struct fab_eq *q);
void fab_eq_free(struct fab_eq *q);

/* Events due `delay_ps` after the last one taken go to the delay line
 * (one only: a second scan on every pop cost more than the heap saved).
 * It changes no order: it saves the heap's sifting.  0: none. */
void fab_eq_line(struct fab_eq *q, fab_time_ps delay_ps);

static inline size_t fab_eq_len(const struct fab_eq *q)
{
	return q->near.len + q->far.len + q->line.n;
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
/* The key of an event due at t_ps that the running event schedules (its
 * next child): the earlier an event was scheduled (the longer its delay),
 * the earlier among those due at the same time, as a single queue in
 * order of scheduling would have it; then the parent's key mixed, then
 * the child's place.  The delay is coded in 24 bits (6 of exponent, 18 of
 * mantissa: delays within 2^-18 of each other tie), the rest in 40. */
static inline uint64_t fab_eq_key(struct fab_eq *q, fab_time_ps t_ps)
{
	uint64_t d = t_ps > q->last_ps ? t_ps - q->last_ps : 0, code = 0;
	if (d) {
		unsigned e = 63u - (unsigned)__builtin_clzll(d); /* d's leading bit */
		uint64_t m = e >= 18 ? (d >> (e - 18)) & 0x3ffff : (d << (18 - e)) & 0x3ffff;
		code = ((uint64_t)(e + 1) << 18) | m;
	}
	return ((0xffffffull - code) << 40) | (q->base++ & 0xffffffffffull);
}

/* The keys of the run's first events, before any event ran (the root's
 * children) */
#define FAB_EQ_ROOT_BASE (fab_mix64(0x6a09e667f3bcc909ull) & 0xfffffff000ull)

/* The running event's children take the keys the run's first events
 * took: a run begun again on purpose (fab_sim_rest) orders its events as
 * it would have alone. */
static inline void fab_eq_rebase(struct fab_eq *q)
{
	q->base = FAB_EQ_ROOT_BASE;
}

/* Whether an event due at (t_ps, seq) comes before the last one taken:
 * one held outside the queue (see port.c) that would have run by now. */
static inline bool fab_eq_passed(const struct fab_eq *q, fab_time_ps t_ps, uint64_t seq)
{
	return t_ps < q->last_ps || (t_ps == q->last_ps && seq < q->last_seq);
}

/* An event at (t_ps, seq) that was never queued counts as run: one held
 * outside the queue that had nothing to do.  The last event taken is the
 * later of the two, as if it had been queued. */
void fab_eq_ran(struct fab_eq *q, fab_time_ps t_ps, uint64_t seq);

/* Removes the earliest event into *out; false when the queue is empty. */
bool fab_eq_pop(struct fab_eq *q, struct fab_ev *out);

/* The earliest event, or NULL when empty (to prefetch what it will touch). */
static inline const struct fab_ev *fab_eq_top(const struct fab_eq *q)
{
	const struct fab_ev *a = q->near.len ? &q->near.ev[0] : NULL, *b = q->far.len ? &q->far.ev[0] : NULL;
	a = !a || (b && fab_ev_before(b, a)) ? b : a;
	if (q->line.n) {
		b = &q->line.v[q->line.head];
		a = !a || fab_ev_before(b, a) ? b : a;
	}
	return a;
}

/* Time of the earliest event, FAB_TIME_NEVER when empty. */
static inline fab_time_ps fab_eq_peek_time(const struct fab_eq *q)
{
	fab_time_ps a = q->near.len ? q->near.ev[0].t_ps : FAB_TIME_NEVER;
	fab_time_ps b = q->far.len ? q->far.ev[0].t_ps : FAB_TIME_NEVER;
	a = a < b ? a : b;
	b = q->line.n ? q->line.v[q->line.head].t_ps : FAB_TIME_NEVER;
	return a < b ? a : b;
}

#endif
