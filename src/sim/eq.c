/*
 * eq.c - the event queue: two 4-ary min-heaps keyed by (time, sequence)
 * and a delay line.
 *
 * A 4-ary heap halves the depth of a binary one and keeps the four children
 * of a node in two cache lines (the root 3 slots into an aligned block);
 * sifting moves a hole instead of swapping.
 * Events due more than FAR_PS after the last one taken go to a second heap:
 * retransmission timers (one per queue pair, most of them never due: the
 * queue pair finishes first) would otherwise make most of one large heap,
 * and every pop would sift through them.  The earliest of the two tops is
 * taken, so the order is exactly the one heap's.  Events due a delay
 * line's delay after the last one taken skip both (eq.h).
 * Hot: every simulated packet hop passes through push and pop twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "eq.h"

/* far: beyond the DCQCN and pacing timers, short of retransmission timers */
#define FAR_PS (200 * FAB_PS_PER_US)

#define HEAP_PAD 3 /* slots before the root: each node's children start a 128-byte block */

/* room for cap events, the old ones kept */
static void heap_alloc(struct fab_heap *h, size_t cap)
{
	void *m = NULL;
	if (posix_memalign(&m, 128, (cap + HEAP_PAD) * sizeof *h->ev)) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	struct fab_ev *mem = m;
	if (h->len)
		memcpy(mem + HEAP_PAD, h->ev, h->len * sizeof *h->ev);
	free(h->mem);
	h->mem = mem;
	h->ev = mem + HEAP_PAD;
	h->cap = cap;
}

static void heap_init(struct fab_heap *h)
{
	memset(h, 0, sizeof *h);
	heap_alloc(h, 1024);
}

void fab_eq_init(struct fab_eq *q)
{
	heap_init(&q->near);
	heap_init(&q->far);
	memset(&q->line, 0, sizeof q->line);
	q->base = FAB_EQ_ROOT_BASE; /* before any event: the root */
	q->popped = 0;
	q->last_ps = 0;
	q->last_seq = 0;
}

void fab_eq_free(struct fab_eq *q)
{
	free(q->near.mem);
	free(q->far.mem);
	free(q->line.v);
	memset(&q->line, 0, sizeof q->line);
	q->near.ev = q->far.ev = q->near.mem = q->far.mem = NULL;
	q->near.len = q->near.cap = q->far.len = q->far.cap = 0;
}

static void heap_push(struct fab_heap *h, const struct fab_ev *ev)
{
	if (h->len == h->cap)
		heap_alloc(h, 2 * h->cap);
	size_t i = h->len++;
	__uint128_t key = fab_ev_key(ev);
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (key >= fab_ev_key(&h->ev[parent]))
			break;
		h->ev[i] = h->ev[parent];
		i = parent;
	}
	h->ev[i] = *ev;
}

static void heap_pop(struct fab_heap *h, struct fab_ev *out)
{
	*out = h->ev[0];
	struct fab_ev last = h->ev[--h->len];
	size_t n = h->len, i = 0;
	if (!n)
		return;
	__uint128_t last_key = fab_ev_key(&last);
	for (;;) {
		size_t c = 4 * i + 1;
		if (c >= n)
			break;
		size_t best = c, end = FAB_MIN(c + 4, n);
		__uint128_t best_key = fab_ev_key(&h->ev[c]);
		for (size_t k = c + 1; k < end; k++) {
			__uint128_t kk = fab_ev_key(&h->ev[k]);
			if (kk < best_key) {
				best_key = kk;
				best = k;
			}
		}
		if (best_key >= last_key)
			break;
		h->ev[i] = h->ev[best];
		i = best;
	}
	h->ev[i] = last;
}

void fab_eq_line(struct fab_eq *q, fab_time_ps delay_ps)
{
	struct fab_eq_line *l = &q->line;
	FAB_ASSERT(!l->n);
	if (delay_ps && !l->v) {
		l->cap = 256;
		l->v = fab_xcalloc(l->cap, sizeof *l->v);
	}
	l->delay = delay_ps;
}

static void line_grow(struct fab_eq_line *l)
{
	struct fab_ev *v = fab_xcalloc(2 * (size_t)l->cap, sizeof *v);
	for (uint32_t i = 0; i < l->n; i++)
		v[i] = l->v[(l->head + i) & (l->cap - 1)];
	free(l->v);
	l->v = v;
	l->head = 0;
	l->cap *= 2;
}

/* ev joins the line behind those due before it (those due at its time
 * with a later key, scheduled by another parent at this instant, go
 * behind it) */
static void line_push(struct fab_eq_line *l, const struct fab_ev *ev)
{
	if (l->n == l->cap)
		line_grow(l);
	uint32_t m = l->cap - 1, k = l->n++;
	__uint128_t key = fab_ev_key(ev);
	for (; k > 0; k--) {
		const struct fab_ev *p = &l->v[(l->head + k - 1) & m];
		if (fab_ev_key(p) <= key)
			break;
		l->v[(l->head + k) & m] = *p;
	}
	l->v[(l->head + k) & m] = *ev;
}

void fab_eq_push(struct fab_eq *q, fab_time_ps t_ps, uint32_t type, void *obj, uint32_t arg)
{
	fab_eq_push_seq(q, t_ps, fab_eq_key(q, t_ps), type, obj, arg);
}

void fab_eq_push_seq(struct fab_eq *q, fab_time_ps t_ps, uint64_t seq, uint32_t type, void *obj, uint32_t arg)
{
	struct fab_ev ev = {t_ps, seq, obj, type, arg};
	if (t_ps - q->last_ps == q->line.delay && t_ps > q->last_ps) {
		line_push(&q->line, &ev);
		return;
	}
	heap_push(t_ps - q->last_ps > FAR_PS && t_ps > q->last_ps ? &q->far : &q->near, &ev);
}

/* the event at (t_ps, seq) is the last one taken: its children's keys are
 * its ancestry mixed (not its time nor its delay: a run shifted in time
 * runs alike), room for 4,096 in order */
static void took(struct fab_eq *q, fab_time_ps t_ps, uint64_t seq)
{
	q->base = fab_mix64(seq & 0xffffffffffull) & 0xfffffff000ull;
	q->last_ps = t_ps;
	q->last_seq = seq;
}

void fab_eq_ran(struct fab_eq *q, fab_time_ps t_ps, uint64_t seq)
{
	q->popped++;
	if (t_ps > q->last_ps || (t_ps == q->last_ps && seq > q->last_seq))
		took(q, t_ps, seq);
}

bool fab_eq_pop(struct fab_eq *q, struct fab_ev *out)
{
	struct fab_heap *h = &q->near;
	if (!q->far.len) {
		if (!h->len)
			h = NULL;
	} else if (!h->len || fab_ev_before(&q->far.ev[0], &h->ev[0])) {
		h = &q->far;
	}
	struct fab_eq_line *l = &q->line;
	if (l->n && (!h || fab_ev_before(&l->v[l->head], &h->ev[0]))) {
		*out = l->v[l->head];
		l->head = (l->head + 1) & (l->cap - 1);
		l->n--;
		h = NULL;
	} else if (!h) {
		return false;
	}
	if (h)
		heap_pop(h, out);
	q->popped++;
	took(q, out->t_ps, out->seq);
	return true;
}
