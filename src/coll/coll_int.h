/*
 * coll_int.h - what the schedules' files share: the schedule under
 * construction and the steps that build it (coll.c's conventions), and
 * each algorithm family's builder (coll_ring.c, coll_tree.c, coll_rhd.c),
 * which fab_coll_build (coll.c) chooses among.
 */
#ifndef FAB_COLL_INT_H
#define FAB_COLL_INT_H

#include <string.h>

#include "coll.h"

#define NONE UINT32_MAX

/* a schedule under construction for args a: offsets and lengths given in
 * elements of eb bytes */
struct sb {
	struct fab_sched *s;
	const struct fab_coll_args *a;
	uint64_t eb; /* element bytes */
};

/* a step of rank's, waiting for deps[0..nd) (NONE: none): its id */
static inline uint32_t add_step(struct sb *b, uint32_t rank, int kind, uint32_t ch, int sbuf, uint64_t soff, int dbuf,
				uint64_t doff, uint64_t elems, const uint32_t *deps, uint32_t nd)
{
	struct fab_sched *s = b->s;
	if (s->nsteps == s->cap_steps) {
		s->cap_steps = s->cap_steps ? 2 * s->cap_steps : 256;
		s->steps = fab_xrealloc(s->steps, s->cap_steps, sizeof *s->steps);
	}
	if (s->ndeps + nd > s->cap_deps) {
		while (s->ndeps + nd > s->cap_deps)
			s->cap_deps = s->cap_deps ? 2 * s->cap_deps : 512;
		s->deps = fab_xrealloc(s->deps, s->cap_deps, sizeof *s->deps);
	}
	struct fab_step *st = &s->steps[s->nsteps];
	memset(st, 0, sizeof *st);
	st->rank = rank;
	st->peer = rank;
	st->match = NONE;
	st->kind = (uint8_t)kind;
	st->channel = (uint8_t)ch;
	st->src_buf = (uint8_t)sbuf;
	st->dst_buf = (uint8_t)dbuf;
	st->src_off = soff * b->eb;
	st->dst_off = doff * b->eb;
	st->bytes = elems * b->eb;
	st->dep_off = s->ndeps;
	for (uint32_t i = 0; i < nd; i++)
		if (deps[i] != NONE)
			s->deps[s->ndeps + st->ndeps++] = deps[i];
	s->ndeps += st->ndeps;
	return s->nsteps++;
}

/* A send and the receive that takes it. */
static inline void xfer(struct sb *b, uint32_t from, uint32_t to, uint32_t ch, int sbuf, uint64_t soff, int dbuf,
			uint64_t doff, uint64_t elems, bool reduce, const uint32_t *sdeps, uint32_t nsd,
			const uint32_t *rdeps, uint32_t nrd, uint32_t *send_id, uint32_t *recv_id)
{
	uint32_t snd = add_step(b, from, FAB_STEP_SEND, ch, sbuf, soff, sbuf, soff, elems, sdeps, nsd);
	uint32_t rcv = add_step(b, to, reduce ? FAB_STEP_RECV_REDUCE : FAB_STEP_RECV, ch, dbuf, doff, dbuf, doff, elems,
				rdeps, nrd);
	b->s->steps[snd].peer = to;
	b->s->steps[snd].match = rcv;
	b->s->steps[rcv].peer = from;
	b->s->steps[rcv].match = snd;
	if (send_id)
		*send_id = snd;
	if (recv_id)
		*recv_id = rcv;
}

static inline uint32_t copy_step(struct sb *b, uint32_t rank, int sbuf, uint64_t soff, int dbuf, uint64_t doff,
				 uint64_t elems, const uint32_t *deps, uint32_t nd)
{
	return add_step(b, rank, FAB_STEP_COPY, 0, sbuf, soff, dbuf, doff, elems, deps, nd);
}

static inline uint32_t join_step(struct sb *b, uint32_t rank, const uint32_t *deps, uint32_t nd)
{
	return add_step(b, rank, FAB_STEP_COPY, 0, FAB_BUF_OUT, 0, FAB_BUF_OUT, 0, 0, deps, nd);
}

/* Part i of n of len elements: parts differ by at most one. */
static inline void split(uint64_t len, uint64_t n, uint64_t i, uint64_t *off, uint64_t *part)
{
	uint64_t base = len / n, rem = len % n;
	*off = i * base + (i < rem ? i : rem);
	*part = base + (i < rem ? 1 : 0);
}

static inline uint64_t nslices(const struct sb *b, uint64_t elems)
{
	uint64_t bytes = elems * b->eb;
	if (!b->a->chunk_bytes || bytes <= b->a->chunk_bytes)
		return 1;
	return (bytes + b->a->chunk_bytes - 1) / b->a->chunk_bytes;
}

/* one builder a family: cnt elements a rank (or a rank's block), m the
 * rank order (NULL where the family takes none) */
void coll_build_ring(struct sb *b, uint64_t cnt, const uint32_t *m);
/* intra-server reduce-scatter, per-rail ring all-reduce, intra-server all-gather */
void coll_build_hier(struct sb *b, uint64_t cnt);
void coll_build_tree(struct sb *b, uint64_t cnt, const uint32_t *m);
void coll_build_rhd(struct sb *b, uint64_t cnt, const uint32_t *m);
void coll_build_direct(struct sb *b, uint64_t cnt);

#endif
