/*
 * coll_ring.c - ring schedules, every channel its own ring order, for
 * AllReduce, ReduceScatter, AllGather, and Broadcast and Reduce as
 * pipelined chains; the hierarchical AllReduce, rings inside servers and
 * across them.
 */
#include <stdlib.h>

#include "coll_int.h"

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

void coll_build_ring(struct sb *b, uint64_t cnt, const uint32_t *m)
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

/* Intra-server reduce-scatter, per-rail ring all-reduce, intra-server all-gather. */
void coll_build_hier(struct sb *b, uint64_t cnt)
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
