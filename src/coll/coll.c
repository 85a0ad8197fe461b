/*
 * coll.c - collective schedules: ring, double binary tree, hierarchical,
 * recursive halving-doubling and direct, for every operation they serve.
 *
 * Conventions.  Buffers are IN (the send buffer, never written), OUT (the
 * receive buffer) and TMP (scratch).  Offsets and lengths are computed in
 * elements and stored in bytes.  A region that does not divide evenly is
 * split so that parts differ by at most one element; a transfer of zero
 * elements is not created.  Channels split every region into independent
 * parts, each with its own connections.  Pipelining splits each ring
 * segment or tree half into slices of at most chunk_bytes.
 * A zero-byte COPY step is a join: it completes when its dependencies do,
 * and lets one later step wait for a whole phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define NONE UINT32_MAX

struct sb {
	struct fab_sched *s;
	const struct fab_coll_args *a;
	uint64_t eb; /* element bytes */
};

static uint32_t add_step(struct sb *b, uint32_t rank, int kind, uint32_t ch, int sbuf, uint64_t soff, int dbuf,
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
static void xfer(struct sb *b, uint32_t from, uint32_t to, uint32_t ch, int sbuf, uint64_t soff, int dbuf,
		 uint64_t doff, uint64_t elems, bool reduce, const uint32_t *sdeps, uint32_t nsd, const uint32_t *rdeps,
		 uint32_t nrd, uint32_t *send_id, uint32_t *recv_id)
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

static uint32_t copy_step(struct sb *b, uint32_t rank, int sbuf, uint64_t soff, int dbuf, uint64_t doff, uint64_t elems,
			  const uint32_t *deps, uint32_t nd)
{
	return add_step(b, rank, FAB_STEP_COPY, 0, sbuf, soff, dbuf, doff, elems, deps, nd);
}

static uint32_t join_step(struct sb *b, uint32_t rank, const uint32_t *deps, uint32_t nd)
{
	return add_step(b, rank, FAB_STEP_COPY, 0, FAB_BUF_OUT, 0, FAB_BUF_OUT, 0, 0, deps, nd);
}

/* Part i of n of len elements: parts differ by at most one. */
static void split(uint64_t len, uint64_t n, uint64_t i, uint64_t *off, uint64_t *part)
{
	uint64_t base = len / n, rem = len % n;
	*off = i * base + (i < rem ? i : rem);
	*part = base + (i < rem ? 1 : 0);
}

static uint64_t nslices(const struct sb *b, uint64_t elems)
{
	uint64_t bytes = elems * b->eb;
	if (!b->a->chunk_bytes || bytes <= b->a->chunk_bytes)
		return 1;
	return (bytes + b->a->chunk_bytes - 1) / b->a->chunk_bytes;
}

/* A growable list of step ids. */
struct ids {
	uint32_t *v;
	uint32_t n, cap;
};

static void ids_push(struct ids *l, uint32_t id)
{
	if (id == NONE)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = fab_xrealloc(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n++] = id;
}

/*
 * A ring over members m[0..k) (ring order) on buffer buf, in place.
 * Segment j (seg_off[j], seg_len[j] elements) belongs to position j: after
 * the reduce-scatter position p holds segment p reduced; the all-gather
 * starts from there.  At reduce-scatter step t position p sends segment
 * (p - t - 1) mod k; at all-gather step t it sends segment (p - t) mod k.
 * start[p]: what position p's first access waits for.  join[p] (out): a
 * step that completes when every send and receive of position p here has
 * (the last of each is not enough: a receive can end a chain).
 */
struct segs {
	bool by_block; /* segment j is block m[j] of blk elements (RS, AG) */
	uint64_t blk;
	uint64_t base, len; /* else: split [base, base + len) into k segments */
};

static void seg_of(const struct segs *sg, const uint32_t *m, uint32_t k, uint32_t j, uint64_t *off, uint64_t *len)
{
	if (sg->by_block) {
		*off = (uint64_t)m[j] * sg->blk;
		*len = sg->blk;
	} else {
		split(sg->len, k, j, off, len);
		*off += sg->base;
	}
}

/* Members are identified by rank; mc[c] is channel c's ring order of the
 * same members, start and join are indexed like mc[0]. */
static void ring_phase(struct sb *b, uint32_t k, const uint32_t *const *mc, int buf, const struct segs *sg, bool rs,
		       bool ag, const uint32_t *start, uint32_t *join)
{
	if (k == 1) {
		join[0] = start[0];
		return;
	}
	uint32_t C = b->a->channels;
	/* position of each member of mc[0] in channel c's order */
	uint32_t *slot = fab_xcalloc(k, sizeof *slot);
	uint32_t *prev = fab_xcalloc(k, sizeof *prev), *nprev = fab_xcalloc(k, sizeof *nprev);
	uint32_t *rs_send = fab_xcalloc((size_t)k * (k - 1), sizeof *rs_send);
	struct ids *fin = fab_xcalloc(k, sizeof *fin);
	uint32_t *st = fab_xcalloc(k, sizeof *st);
	uint64_t *seg_off = fab_xcalloc(k, sizeof *seg_off), *seg_len = fab_xcalloc(k, sizeof *seg_len);
	for (uint32_t c = 0; c < C; c++) {
		const uint32_t *m = mc[c];
		/* start[] and fin[] follow mc[0]'s numbering; st[] this channel's */
		for (uint32_t p = 0; p < k; p++)
			for (uint32_t i = 0; i < k; i++)
				if (mc[0][i] == m[p]) {
					slot[p] = i;
					st[p] = start[i];
				}
		for (uint32_t j = 0; j < k; j++)
			seg_of(sg, m, k, j, &seg_off[j], &seg_len[j]);
		uint64_t maxlen = 0;
		for (uint32_t j = 0; j < k; j++) {
			uint64_t o, l;
			split(seg_len[j], C, c, &o, &l);
			maxlen = FAB_MAX(maxlen, l);
		}
		uint64_t S = nslices(b, maxlen);
		for (uint64_t sl = 0; sl < S; sl++) {
			/* region of segment j for this channel and slice */
#define REGION(j, OFF, LEN)                                                                                            \
	do {                                                                                                           \
		uint64_t co_, cl_, so_;                                                                                \
		split(seg_len[j], C, c, &co_, &cl_);                                                                   \
		split(cl_, S, sl, &so_, &(LEN));                                                                       \
		(OFF) = seg_off[j] + co_ + so_;                                                                        \
	} while (0)
			for (uint32_t p = 0; p < k; p++)
				prev[p] = st[p];
			for (size_t i = 0; i < (size_t)k * (k - 1); i++)
				rs_send[i] = NONE;
			/* sends of step t wait for the receives of step t-1: nprev
			 * collects step t's receives */
			if (rs)
				for (uint32_t t = 0; t + 1 < k; t++) {
					memcpy(nprev, prev, k * sizeof *prev);
					for (uint32_t p = 0; p < k; p++) {
						uint32_t q = (p + 1) % k;
						uint32_t j = (uint32_t)((p + 2 * k - t - 1) % k);
						uint64_t off, len;
						REGION(j, off, len);
						if (!len)
							continue;
						uint32_t snd, rcv;
						xfer(b, m[p], m[q], c, buf, off, buf, off, len, true, &prev[p], 1,
						     &st[q], 1, &snd, &rcv);
						rs_send[(size_t)p * (k - 1) + t] = snd;
						ids_push(&fin[slot[p]], snd);
						ids_push(&fin[slot[q]], rcv);
						nprev[q] = rcv;
					}
					memcpy(prev, nprev, k * sizeof *prev);
				}
			if (ag)
				for (uint32_t t = 0; t + 1 < k; t++) {
					memcpy(nprev, prev, k * sizeof *prev);
					for (uint32_t p = 0; p < k; p++) {
						uint32_t q = (p + 1) % k;
						uint32_t j = (uint32_t)((p + k - t) % k);
						uint64_t off, len;
						REGION(j, off, len);
						if (!len)
							continue;
						uint32_t rdeps[2] = {st[q], rs_send[(size_t)q * (k - 1) + t]};
						uint32_t snd, rcv;
						xfer(b, m[p], m[q], c, buf, off, buf, off, len, false, &prev[p], 1,
						     rdeps, 2, &snd, &rcv);
						ids_push(&fin[slot[p]], snd);
						ids_push(&fin[slot[q]], rcv);
						nprev[q] = rcv;
					}
					memcpy(prev, nprev, k * sizeof *prev);
				}
#undef REGION
		}
	}
	for (uint32_t p = 0; p < k; p++) {
		ids_push(&fin[p], start[p]);
		join[p] = join_step(b, mc[0][p], fin[p].v, fin[p].n);
		free(fin[p].v);
	}
	free(fin);
	free(st);
	free(slot);
	free(seg_off);
	free(seg_len);
	free(prev);
	free(nprev);
	free(rs_send);
}

static const uint32_t *rank_order(const struct fab_coll_args *a, uint32_t *tmp)
{
	if (a->order)
		return a->order;
	for (uint32_t i = 0; i < a->nranks; i++)
		tmp[i] = i;
	return tmp;
}

static void build_ring(struct sb *b, uint64_t cnt, const uint32_t *m)
{
	const struct fab_coll_args *a = b->a;
	uint32_t n = a->nranks;
	uint32_t *start = fab_xcalloc(n, sizeof *start), *join = fab_xcalloc(n, sizeof *join);
	const uint32_t **mc = fab_xcalloc(a->channels, sizeof *mc);
	for (uint32_t c = 0; c < a->channels; c++)
		mc[c] = a->chan_order ? a->chan_order[c] : m;
	struct segs sg = {.by_block = a->op != FAB_OP_ALLREDUCE, .blk = cnt, .base = 0, .len = cnt};
	switch (a->op) {
	case FAB_OP_ALLREDUCE:
		for (uint32_t p = 0; p < n; p++)
			start[p] = copy_step(b, mc[0][p], FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0);
		ring_phase(b, n, mc, FAB_BUF_OUT, &sg, true, true, start, join);
		break;
	case FAB_OP_REDUCESCATTER:
		for (uint32_t p = 0; p < n; p++)
			start[p] = copy_step(b, mc[0][p], FAB_BUF_IN, 0, FAB_BUF_TMP, 0, cnt * n, NULL, 0);
		ring_phase(b, n, mc, FAB_BUF_TMP, &sg, true, false, start, join);
		for (uint32_t p = 0; p < n; p++)
			copy_step(b, mc[0][p], FAB_BUF_TMP, (uint64_t)mc[0][p] * cnt, FAB_BUF_OUT, 0, cnt, &join[p], 1);
		break;
	case FAB_OP_ALLGATHER:
		for (uint32_t p = 0; p < n; p++)
			start[p] = copy_step(b, mc[0][p], FAB_BUF_IN, 0, FAB_BUF_OUT, (uint64_t)mc[0][p] * cnt, cnt,
					     NULL, 0);
		ring_phase(b, n, mc, FAB_BUF_OUT, &sg, false, true, start, join);
		break;
	case FAB_OP_BROADCAST:
	case FAB_OP_REDUCE: {
		/* a pipelined chain: from the root (broadcast) or to it (reduce) */
		bool bc = a->op == FAB_OP_BROADCAST;
		uint32_t rp = 0;
		for (uint32_t p = 0; p < n; p++)
			if (m[p] == a->root)
				rp = p;
		uint32_t *chain = fab_xcalloc(n, sizeof *chain);
		for (uint32_t i = 0; i < n; i++)
			chain[i] = bc ? m[(rp + i) % n] : m[(rp + 1 + i) % n];
		uint32_t *init = fab_xcalloc(n, sizeof *init);
		for (uint32_t i = 0; i < n; i++)
			init[i] = bc
				? (i == 0 ? copy_step(b, chain[0], FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0) : NONE)
				: copy_step(b, chain[i], FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0);
		for (uint32_t c = 0; c < a->channels; c++) {
			uint64_t co, cl;
			split(cnt, a->channels, c, &co, &cl);
			uint64_t S = nslices(b, cl);
			for (uint64_t s = 0; s < S; s++) {
				uint64_t o, l;
				split(cl, S, s, &o, &l);
				if (!l)
					continue;
				uint32_t prev = init[0];
				for (uint32_t i = 0; i + 1 < n; i++) {
					uint32_t rcv;
					xfer(b, chain[i], chain[i + 1], c, FAB_BUF_OUT, co + o, FAB_BUF_OUT, co + o, l,
					     !bc, &prev, 1, &init[i + 1], 1, NULL, &rcv);
					prev = rcv;
				}
			}
		}
		free(chain);
		free(init);
		break;
	}
	}
	free(start);
	free(join);
	free(mc);
}

/* The parent of node v in the in-order binary tree over 0..N-1 that NCCL's
 * double binary tree starts from: node v's level is its lowest set bit,
 * the parent is the neighbour one level up, or, past the end, the node
 * that clears v's lowest bit; 0 is the top, with one child. */
static uint32_t btree_up(uint32_t N, uint32_t v)
{
	if (v == 0)
		return NONE;
	uint32_t lb = v & (~v + 1);
	uint32_t up = (v ^ lb) | (lb << 1);
	return up < N ? up : v ^ lb;
}

/* node v's parent in tree t: tree 1 mirrors tree 0 (N even) or shifts it
 * by one (N odd), so that a node inner in one tree is a leaf in the other */
static uint32_t dtree_up(uint32_t N, uint32_t t, uint32_t v)
{
	if (!t)
		return btree_up(N, v);
	if (N % 2 == 0) {
		uint32_t u = btree_up(N, N - 1 - v);
		return u == NONE ? NONE : N - 1 - u;
	}
	uint32_t u = btree_up(N, (v + N - 1) % N);
	return u == NONE ? NONE : (u + 1) % N;
}

void fab_coll_tree(uint32_t n, const uint32_t *order, uint32_t group, uint32_t t, uint32_t root, uint32_t *parent,
		   uint32_t (*kids)[3], uint32_t *topdown)
{
	uint32_t G = group && n % group == 0 ? group : 1, N = n / G;
	uint32_t rnode = 0, rhead = 0; /* a rooted tree: the root's server on top, the root its head */
	if (root != NONE)
		for (uint32_t p = 0; p < n; p++)
			if (order[p] == root) {
				rnode = p / G;
				rhead = p % G;
			}
	for (uint32_t r = 0; r < n; r++)
		kids[r][0] = kids[r][1] = kids[r][2] = NONE;
	for (uint32_t v = 0; v < N; v++) {
		uint32_t node = (v + rnode) % N, h = node == rnode ? rhead : 0;
		uint32_t up = dtree_up(N, t, v);
		for (uint32_t j = 0; j < G; j++) {
			uint32_t r = order[node * G + (h + j) % G];
			if (j)
				parent[r] = order[node * G + (h + j - 1) % G];
			else if (up == NONE)
				parent[r] = NONE;
			else {
				uint32_t pn = (up + rnode) % N;
				parent[r] = order[pn * G + (pn == rnode ? rhead : 0)];
			}
		}
	}
	uint32_t top = NONE;
	for (uint32_t r = 0; r < n; r++) {
		if (parent[r] == NONE) {
			top = r;
			continue;
		}
		uint32_t *k = kids[parent[r]];
		k[k[0] == NONE ? 0 : k[1] == NONE ? 1 : 2] = r;
	}
	/* parents before children: breadth first from the top */
	uint32_t head = 0, tail = 0;
	topdown[tail++] = top;
	while (head < tail) {
		uint32_t r = topdown[head++];
		for (uint32_t k = 0; k < 3; k++)
			if (kids[r][k] != NONE)
				topdown[tail++] = kids[r][k];
	}
}

/* Double binary tree (AllReduce), or one binary tree rooted at the root
 * (Broadcast, Reduce), as NCCL lays them out: a chain through each server
 * and a binary tree over servers between the chains' heads (fab_coll_tree). */
static void build_tree(struct sb *b, uint64_t cnt, const uint32_t *m)
{
	const struct fab_coll_args *a = b->a;
	uint32_t n = a->nranks;
	bool up = a->op != FAB_OP_BROADCAST, down = a->op != FAB_OP_REDUCE;
	uint32_t ntrees = a->op == FAB_OP_ALLREDUCE ? 2 : 1;
	uint32_t *init = fab_xcalloc(n, sizeof *init); /* by rank */
	uint32_t *parent = fab_xcalloc(n, sizeof *parent), *topdown = fab_xcalloc(n, sizeof *topdown);
	uint32_t(*kids)[3] = fab_xcalloc(n, sizeof *kids);
	uint32_t *join = fab_xcalloc(n, sizeof *join), *upsend = fab_xcalloc(n, sizeof *upsend);
	uint32_t *fromparent = fab_xcalloc(n, sizeof *fromparent);
	for (uint32_t r = 0; r < n; r++) {
		bool needs = a->op != FAB_OP_BROADCAST || r == a->root;
		init[r] = needs ? copy_step(b, r, FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0) : NONE;
	}
	for (uint32_t t = 0; t < ntrees; t++) {
		uint64_t to, tl;
		split(cnt, ntrees, t, &to, &tl);
		for (uint32_t c = 0; c < a->channels; c++) {
			fab_coll_tree(n, a->chan_order ? a->chan_order[c] : m, a->tree_group, t,
				      ntrees == 1 ? a->root : NONE, parent, kids, topdown);
			uint64_t co, cl;
			split(tl, a->channels, c, &co, &cl);
			uint64_t S = nslices(b, cl);
			for (uint64_t s = 0; s < S; s++) {
				uint64_t o, l;
				split(cl, S, s, &o, &l);
				if (!l)
					continue;
				uint64_t off = to + co + o;
				uint32_t ch = t * a->channels + c;
				for (uint32_t r = 0; r < n; r++)
					join[r] = upsend[r] = fromparent[r] = NONE;
				if (up)
					for (uint32_t i = n; i-- > 0;) {
						/* children come later top-down: their joins exist */
						uint32_t r = topdown[i];
						uint32_t deps[4] = {init[r], NONE, NONE, NONE};
						for (uint32_t k = 0; k < 3; k++) {
							uint32_t kid = kids[r][k];
							if (kid == NONE)
								continue;
							xfer(b, kid, r, ch, FAB_BUF_OUT, off, FAB_BUF_OUT, off, l, true,
							     &join[kid], 1, &init[r], 1, &upsend[kid], &deps[1 + k]);
						}
						/* what the rank's own up-send waits for: all its children */
						join[r] = join_step(b, r, deps, 4);
					}
				if (down)
					for (uint32_t i = 0; i < n; i++) {
						uint32_t r = topdown[i];
						uint32_t have = i == 0 ? (up ? join[r] : init[r]) : fromparent[r];
						for (uint32_t k = 0; k < 3; k++) {
							uint32_t kid = kids[r][k];
							if (kid == NONE)
								continue;
							uint32_t rdeps[2] = {upsend[kid], init[kid]};
							xfer(b, r, kid, ch, FAB_BUF_OUT, off, FAB_BUF_OUT, off, l,
							     false, &have, 1, rdeps, 2, NULL, &fromparent[kid]);
						}
					}
			}
		}
	}
	free(init);
	free(parent);
	free(topdown);
	free(kids);
	free(join);
	free(upsend);
	free(fromparent);
}

/* Intra-server reduce-scatter, per-rail ring all-reduce, intra-server all-gather. */
static void build_hier(struct sb *b, uint64_t cnt)
{
	const struct fab_coll_args *a = b->a;
	uint32_t n = a->nranks, G = a->ranks_per_node, N = n / G;
	uint32_t *start = fab_xcalloc(n, sizeof *start), *j1 = fab_xcalloc(n, sizeof *j1);
	uint32_t *j2 = fab_xcalloc(n, sizeof *j2), *j3 = fab_xcalloc(n, sizeof *j3);
	uint32_t *mem = fab_xcalloc(FAB_MAX(G, N), sizeof *mem);
	uint32_t *st = fab_xcalloc(FAB_MAX(G, N), sizeof *st), *jo = fab_xcalloc(FAB_MAX(G, N), sizeof *jo);
	const uint32_t **mc = fab_xcalloc(a->channels, sizeof *mc);
	for (uint32_t c = 0; c < a->channels; c++)
		mc[c] = mem;
	for (uint32_t r = 0; r < n; r++)
		start[r] = copy_step(b, r, FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0);
	for (int phase = 1; phase <= 3; phase++) {
		uint32_t groups = phase == 2 ? G : N, k = phase == 2 ? N : G;
		for (uint32_t g = 0; g < groups; g++) {
			for (uint32_t i = 0; i < k; i++) {
				uint32_t r = phase == 2 ? i * G + g : g * G + i;
				mem[i] = r;
				st[i] = phase == 1 ? start[r] : phase == 2 ? j1[r] : j2[r];
			}
			struct segs sg = {.by_block = false, .base = 0, .len = cnt};
			if (phase == 2) /* the rail's shard: segment g of the server-level split */
				split(cnt, G, g, &sg.base, &sg.len);
			ring_phase(b, k, mc, FAB_BUF_OUT, &sg, phase != 3, phase != 1, st, jo);
			for (uint32_t i = 0; i < k; i++)
				(phase == 1 ? j1 : phase == 2 ? j2 : j3)[mem[i]] = jo[i];
		}
	}
	free(start);
	free(j1);
	free(j2);
	free(j3);
	free(mem);
	free(st);
	free(jo);
	free(mc);
}

/* Rabenseifner: recursive-halving reduce-scatter, recursive-doubling
 * all-gather; ranks beyond the largest power of two fold into partners. */
static void build_rhd(struct sb *b, uint64_t cnt, const uint32_t *m)
{
	const struct fab_coll_args *a = b->a;
	uint32_t n = a->nranks, p2 = 1;
	while (p2 * 2 <= n)
		p2 *= 2;
	uint32_t extra = n - p2, levels = 0;
	while ((1u << levels) < p2)
		levels++;
	uint32_t *init = fab_xcalloc(n, sizeof *init), *last = fab_xcalloc(n, sizeof *last);
	uint32_t *fold = fab_xcalloc(n, sizeof *fold);
	uint32_t *rs_send = fab_xcalloc((size_t)p2 * (levels + 1), sizeof *rs_send);
	uint64_t *lo = fab_xcalloc(p2, sizeof *lo), *hi = fab_xcalloc(p2, sizeof *hi);
	for (uint32_t p = 0; p < n; p++)
		init[p] = copy_step(b, m[p], FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0);
	for (uint32_t c = 0; c < a->channels; c++) {
		uint64_t co, cl;
		split(cnt, a->channels, c, &co, &cl);
		if (!cl)
			continue;
		for (uint32_t p = 0; p < n; p++) {
			last[p] = init[p];
			fold[p] = NONE;
		}
		for (uint32_t i = 0; i < extra; i++)
			xfer(b, m[p2 + i], m[i], c, FAB_BUF_OUT, co, FAB_BUF_OUT, co, cl, true, &init[p2 + i], 1,
			     &init[i], 1, &fold[p2 + i], &last[i]);
		for (uint32_t i = 0; i < p2; i++) {
			lo[i] = co;
			hi[i] = co + cl;
		}
		for (size_t i = 0; i < (size_t)p2 * (levels + 1); i++)
			rs_send[i] = NONE;
		uint32_t *nlast = fab_xcalloc(p2, sizeof *nlast);
		for (uint32_t lv = 0; lv < levels; lv++) {
			uint32_t d = p2 >> (lv + 1);
			for (uint32_t i = 0; i < p2; i++)
				nlast[i] = last[i];
			for (uint32_t i = 0; i < p2; i++) {
				uint32_t q = i ^ d;
				uint64_t h0o, h0l;
				split(hi[i] - lo[i], 2, 0, &h0o, &h0l);
				bool keep_low = !(i & d);
				uint64_t so = keep_low ? lo[i] + h0l : lo[i];
				uint64_t sl = keep_low ? hi[i] - lo[i] - h0l : h0l;
				if (!sl)
					continue;
				uint32_t rcv;
				xfer(b, m[i], m[q], c, FAB_BUF_OUT, so, FAB_BUF_OUT, so, sl, true, &last[i], 1,
				     &last[q], 1, &rs_send[(size_t)i * (levels + 1) + lv], &rcv);
				nlast[q] = rcv;
			}
			for (uint32_t i = 0; i < p2; i++) {
				uint64_t h0o, h0l;
				split(hi[i] - lo[i], 2, 0, &h0o, &h0l);
				if (!(i & d))
					hi[i] = lo[i] + h0l;
				else
					lo[i] = lo[i] + h0l;
				last[i] = nlast[i];
			}
		}
		for (uint32_t lv = levels; lv-- > 0;) {
			uint32_t d = p2 >> (lv + 1);
			for (uint32_t i = 0; i < p2; i++)
				nlast[i] = last[i];
			for (uint32_t i = 0; i < p2; i++) {
				uint32_t q = i ^ d;
				if (hi[i] == lo[i])
					continue;
				uint32_t rdeps[2] = {last[q], rs_send[(size_t)q * (levels + 1) + lv]};
				uint32_t rcv;
				xfer(b, m[i], m[q], c, FAB_BUF_OUT, lo[i], FAB_BUF_OUT, lo[i], hi[i] - lo[i], false,
				     &last[i], 1, rdeps, 2, NULL, &rcv);
				nlast[q] = rcv;
			}
			uint64_t *nlo = fab_xcalloc(p2, sizeof *nlo), *nhi = fab_xcalloc(p2, sizeof *nhi);
			for (uint32_t i = 0; i < p2; i++) {
				uint32_t q = i ^ d;
				nlo[i] = FAB_MIN(lo[i], lo[q]);
				nhi[i] = FAB_MAX(hi[i], hi[q]);
				/* an empty partner region does not move the bounds */
				if (hi[q] == lo[q]) {
					nlo[i] = lo[i];
					nhi[i] = hi[i];
				} else if (hi[i] == lo[i]) {
					nlo[i] = lo[q];
					nhi[i] = hi[q];
				}
			}
			memcpy(lo, nlo, p2 * sizeof *lo);
			memcpy(hi, nhi, p2 * sizeof *hi);
			free(nlo);
			free(nhi);
			for (uint32_t i = 0; i < p2; i++)
				last[i] = nlast[i];
		}
		free(nlast);
		for (uint32_t i = 0; i < extra; i++)
			xfer(b, m[i], m[p2 + i], c, FAB_BUF_OUT, co, FAB_BUF_OUT, co, cl, false, &last[i], 1,
			     &fold[p2 + i], 1, NULL, NULL);
	}
	free(init);
	free(last);
	free(fold);
	free(rs_send);
	free(lo);
	free(hi);
}

static void build_direct(struct sb *b, uint64_t cnt)
{
	const struct fab_coll_args *a = b->a;
	uint32_t n = a->nranks;
	if (a->op == FAB_OP_SENDRECV) {
		for (uint32_t r = 0; r < n; r++) {
			if (n == 1) {
				copy_step(b, r, FAB_BUF_IN, 0, FAB_BUF_OUT, 0, cnt, NULL, 0);
				continue;
			}
			for (uint32_t c = 0; c < a->channels; c++) {
				uint64_t co, cl;
				split(cnt, a->channels, c, &co, &cl);
				if (cl)
					xfer(b, r, (r + 1) % n, c, FAB_BUF_IN, co, FAB_BUF_OUT, co, cl, false, NULL, 0,
					     NULL, 0, NULL, NULL);
			}
		}
		return;
	}
	/* AllToAll: block k of rank r's input goes to block r of rank k's output */
	for (uint32_t r = 0; r < n; r++)
		copy_step(b, r, FAB_BUF_IN, (uint64_t)r * cnt, FAB_BUF_OUT, (uint64_t)r * cnt, cnt, NULL, 0);
	for (uint32_t d = 1; d < n; d++)
		for (uint32_t r = 0; r < n; r++) {
			uint32_t k = (r + d) % n;
			for (uint32_t c = 0; c < a->channels; c++) {
				uint64_t co, cl;
				split(cnt, a->channels, c, &co, &cl);
				if (cl)
					xfer(b, r, k, c, FAB_BUF_IN, (uint64_t)k * cnt + co, FAB_BUF_OUT,
					     (uint64_t)r * cnt + co, cl, false, NULL, 0, NULL, 0, NULL, NULL);
			}
		}
}

static const char *op_names[] = {"allreduce", "reducescatter", "allgather", "broadcast",
				 "reduce",    "alltoall",      "sendrecv"};
static const char *op_titles[] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
				  "Reduce",    "AllToAll",      "SendRecv"};
static const char *algo_names[] = {"ring", "tree", "hierarchical", "rhd", "direct", "nvls", "sharp", "auto"};

const char *fab_coll_op_name(int op)
{
	return op >= 0 && op < FAB_OP_COUNT ? op_names[op] : "?";
}

const char *fab_coll_op_title(int op)
{
	return op >= 0 && op < FAB_OP_COUNT ? op_titles[op] : "?";
}

const char *fab_coll_algo_name(int algo)
{
	return algo >= 0 && algo < FAB_ALGO_COUNT ? algo_names[algo] : "?";
}

int fab_coll_op_parse(const char *s)
{
	for (int i = 0; i < FAB_OP_COUNT; i++)
		if (!strcmp(s, op_names[i]))
			return i;
	return -1;
}

int fab_coll_algo_parse(const char *s)
{
	for (int i = 0; i < FAB_ALGO_COUNT; i++)
		if (!strcmp(s, algo_names[i]))
			return i;
	return -1;
}

static bool per_rank_block(int op)
{
	return op == FAB_OP_ALLGATHER || op == FAB_OP_REDUCESCATTER || op == FAB_OP_ALLTOALL;
}

void fab_coll_sizes(int op, uint64_t count, uint32_t elem_bytes, uint32_t nranks, uint64_t *size_bytes,
		    uint64_t *in_bytes, uint64_t *out_bytes)
{
	uint64_t total = per_rank_block(op) ? count / nranks * nranks : count;
	uint64_t block = per_rank_block(op) ? count / nranks : count;
	*size_bytes = total * elem_bytes;
	switch (op) {
	case FAB_OP_REDUCESCATTER:
		*in_bytes = total * elem_bytes;
		*out_bytes = block * elem_bytes;
		break;
	case FAB_OP_ALLGATHER:
		*in_bytes = block * elem_bytes;
		*out_bytes = total * elem_bytes;
		break;
	case FAB_OP_ALLTOALL:
		*in_bytes = *out_bytes = total * elem_bytes;
		break;
	default:
		*in_bytes = *out_bytes = count * elem_bytes;
	}
}

double fab_coll_busbw_factor(int op, uint32_t n)
{
	switch (op) {
	case FAB_OP_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case FAB_OP_REDUCESCATTER:
	case FAB_OP_ALLGATHER:
	case FAB_OP_ALLTOALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

bool fab_coll_supported(int op, int algo, uint32_t n, uint32_t rpn, char *why, size_t wl)
{
	static const bool ok[FAB_OP_COUNT][FAB_ALGO_AUTO] = {
		/*                 ring   tree   hier   rhd    direct nvls   sharp */
		[FAB_OP_ALLREDUCE] = {true, true, true, true, false, true, true},
		[FAB_OP_REDUCESCATTER] = {true, false, false, false, false, false, false},
		[FAB_OP_ALLGATHER] = {true, false, false, false, false, false, false},
		[FAB_OP_BROADCAST] = {true, true, false, false, false, false, false},
		[FAB_OP_REDUCE] = {true, true, false, false, false, false, false},
		[FAB_OP_ALLTOALL] = {false, false, false, false, true, false, false},
		[FAB_OP_SENDRECV] = {false, false, false, false, true, false, false},
	};
	if (op < 0 || op >= FAB_OP_COUNT || algo < 0 || algo >= FAB_ALGO_AUTO || !ok[op][algo]) {
		if (why)
			snprintf(why, wl, "algorithm %s does not implement %s", fab_coll_algo_name(algo),
				 fab_coll_op_title(op));
		return false;
	}
	if (algo == FAB_ALGO_NVLS && rpn != n) {
		if (why && !rpn)
			snprintf(why, wl, "nvls reduces in one server's NVSwitch: the %u ranks are not all in one", n);
		else if (why)
			snprintf(why, wl, "nvls reduces in one server's NVSwitch: %u ranks, %u in each server", n, rpn);
		return false;
	}
	if (algo == FAB_ALGO_SHARP && (!rpn || n % rpn || rpn == n)) {
		if (why)
			snprintf(why, wl,
				 "sharp reduces in the fabric's switches: whole servers, more than one (%u ranks, %u "
				 "per server)",
				 n, rpn);
		return false;
	}
	if (algo == FAB_ALGO_HIER && (!rpn || n % rpn)) {
		if (why)
			snprintf(why, wl, "hierarchical needs whole servers: %u ranks, %u per server", n, rpn);
		return false;
	}
	return true;
}

int fab_coll_build(const struct fab_coll_args *a, struct fab_sched *out, struct fab_err *err)
{
	char why[160];
	memset(out, 0, sizeof *out);
	if (!a->nranks || !a->elem_bytes || !a->channels || a->channels > 64)
		return fab_err_set(err, FAB_EINVAL, "collective: ranks, element size and 1..64 channels needed");
	if (!fab_coll_supported(a->op, a->algo, a->nranks, a->ranks_per_node, why, sizeof why))
		return fab_err_set(err, FAB_EINVAL, "collective: %s", why);
	if (a->algo == FAB_ALGO_NVLS || a->algo == FAB_ALGO_SHARP)
		return fab_err_set(err, FAB_EINVAL,
				   "collective: %s reduces in switches; it is not a schedule of sends between ranks",
				   fab_coll_algo_name(a->algo));
	if ((a->op == FAB_OP_BROADCAST || a->op == FAB_OP_REDUCE) && a->root >= a->nranks)
		return fab_err_set(err, FAB_EINVAL, "collective: root %u is not a rank (0..%u)", a->root,
				   a->nranks - 1);
	uint64_t cnt = per_rank_block(a->op) ? a->count / a->nranks : a->count;
	if (!cnt)
		return fab_err_set(err, FAB_EINVAL, "collective: %s of %llu elements over %u ranks moves nothing",
				   fab_coll_op_title(a->op), (unsigned long long)a->count, a->nranks);
	uint64_t size;
	fab_coll_sizes(a->op, a->count, a->elem_bytes, a->nranks, &size, &out->buf_bytes[FAB_BUF_IN],
		       &out->buf_bytes[FAB_BUF_OUT]);
	out->buf_bytes[FAB_BUF_TMP] = a->op == FAB_OP_REDUCESCATTER ? out->buf_bytes[FAB_BUF_IN] : 0;
	out->nranks = a->nranks;
	out->channels = a->algo == FAB_ALGO_TREE && a->op == FAB_OP_ALLREDUCE ? 2 * a->channels : a->channels;
	struct sb b = {out, a, a->elem_bytes};
	uint32_t *tmp = fab_xcalloc(a->nranks, sizeof *tmp);
	const uint32_t *m = rank_order(a, tmp);
	switch (a->algo) {
	case FAB_ALGO_RING:
		build_ring(&b, cnt, m);
		break;
	case FAB_ALGO_TREE:
		build_tree(&b, cnt, m);
		break;
	case FAB_ALGO_HIER:
		build_hier(&b, cnt);
		break;
	case FAB_ALGO_RHD:
		build_rhd(&b, cnt, m);
		break;
	case FAB_ALGO_DIRECT:
		build_direct(&b, cnt);
		break;
	}
	free(tmp);
	return 0;
}

void fab_sched_free(struct fab_sched *s)
{
	free(s->steps);
	free(s->deps);
	memset(s, 0, sizeof *s);
}
