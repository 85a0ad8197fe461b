/*
 * coll_tree.c - tree schedules as NCCL lays them out: the double binary
 * tree over servers (two trees, a node inner in one a leaf in the other)
 * with a chain through each server (fab_coll_tree), for AllReduce, and
 * one tree rooted at the root for Broadcast and Reduce.
 */
#include <stdlib.h>

#include "coll_int.h"

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
void coll_build_tree(struct sb *b, uint64_t cnt, const uint32_t *m)
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
