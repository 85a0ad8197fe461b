/*
 * maxmin.c - progressive filling with a min-heap of links keyed by their
 * fair share (residual capacity over unfrozen flows).  Freezing a flow at
 * the smallest share can only raise the other links' shares, so a key in
 * the heap is a lower bound, corrected when it comes out.
 * O((L + E) log L) for L links and E flow-link incidences.
 */
#include <stdlib.h>
#include <string.h>

#include "maxmin.h"

struct fab_mm_ent {
	double share;
	uint32_t link;
};

void fab_maxmin_init(struct fab_maxmin *m)
{
	memset(m, 0, sizeof *m);
}

void fab_maxmin_free(struct fab_maxmin *m)
{
	free(m->res);
	free(m->cnt);
	free(m->lf_off);
	free(m->lf_idx);
	free(m->fill);
	free(m->frozen);
	free(m->heap);
	memset(m, 0, sizeof *m); /* (bott is the caller's) */
}

static void grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (*cap >= need)
		return;
	*cap = need + need / 2 + 16;
	free(*p);
	*p = fab_xcalloc(*cap, elem);
}

static void heap_push(struct fab_maxmin *m, size_t *len, struct fab_mm_ent e)
{
	if (*len == m->cap_h) {
		m->cap_h = m->cap_h ? 2 * m->cap_h : 64;
		m->heap = fab_xrealloc(m->heap, m->cap_h, sizeof *m->heap);
	}
	size_t i = (*len)++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (m->heap[p].share < e.share || (m->heap[p].share == e.share && m->heap[p].link <= e.link))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = e;
}

static struct fab_mm_ent heap_pop(struct fab_maxmin *m, size_t *len)
{
	struct fab_mm_ent top = m->heap[0], last = m->heap[--(*len)];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *len)
			break;
		if (c + 1 < *len &&
		    (m->heap[c + 1].share < m->heap[c].share ||
		     (m->heap[c + 1].share == m->heap[c].share && m->heap[c + 1].link < m->heap[c].link)))
			c++;
		if (last.share < m->heap[c].share || (last.share == m->heap[c].share && last.link <= m->heap[c].link))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (*len)
		m->heap[i] = last;
	return top;
}

/* the rate at which link l fills if its unfrozen flows all rise together */
static double level(const struct fab_maxmin *m, uint32_t l)
{
	return m->cnt[l] && m->res[l] > 0 ? m->res[l] / m->cnt[l] : 0;
}

void fab_maxmin_solve(struct fab_maxmin *m, uint32_t nl, const double *cap, uint32_t nf, const uint32_t *off,
		      const uint32_t *idx, double *rate)
{
	size_t ne = off[nf];
	if (m->cap_l < (size_t)nl + 1) {
		/* the per-link arrays share cap_l: they grow together */
		m->cap_l = nl + nl / 2 + 16;
		free(m->res), free(m->cnt), free(m->lf_off), free(m->fill);
		m->res = fab_xcalloc(m->cap_l, sizeof *m->res);
		m->cnt = fab_xcalloc(m->cap_l, sizeof *m->cnt);
		m->lf_off = fab_xcalloc(m->cap_l + 1, sizeof *m->lf_off);
		m->fill = fab_xcalloc(m->cap_l, sizeof *m->fill);
	}
	memset(m->cnt, 0, nl * sizeof *m->cnt);
	memset(m->fill, 0, nl * sizeof *m->fill);
	m->lf_off[0] = 0;
	grow((void **)&m->lf_idx, &m->cap_e, ne + 1, sizeof *m->lf_idx);
	grow((void **)&m->frozen, &m->cap_f, nf + 1, sizeof *m->frozen);
	memset(m->frozen, 0, nf);
	/* link -> flows, in CSR form */
	for (size_t e = 0; e < ne; e++)
		m->cnt[idx[e]]++;
	for (uint32_t l = 0; l < nl; l++) {
		m->lf_off[l + 1] = m->lf_off[l] + m->cnt[l];
		m->res[l] = cap[l];
	}
	for (uint32_t f = 0; f < nf; f++) {
		rate[f] = 0;
		if (m->bott)
			m->bott[f] = UINT32_MAX;
		for (uint32_t e = off[f]; e < off[f + 1]; e++)
			m->lf_idx[m->lf_off[idx[e]] + m->fill[idx[e]]++] = f;
	}
	size_t len = 0;
	for (uint32_t l = 0; l < nl; l++)
		if (m->cnt[l])
			heap_push(m, &len, (struct fab_mm_ent){level(m, l), l});
	/* A link's level only rises as flows elsewhere freeze (below it), so a
	 * key in the heap is a lower bound: a link popped with a stale key goes
	 * back with its level now, and one popped with its level now is the
	 * lowest.  Links are not pushed again at every flow that touches them. */
	while (len) {
		struct fab_mm_ent e = heap_pop(m, &len);
		uint32_t l = e.link;
		if (!m->cnt[l])
			continue;
		double share = level(m, l);
		if (share > e.share) {
			heap_push(m, &len, (struct fab_mm_ent){share, l});
			continue;
		}
		for (uint32_t k = m->lf_off[l]; k < m->lf_off[l + 1]; k++) {
			uint32_t f = m->lf_idx[k];
			if (m->frozen[f])
				continue;
			m->frozen[f] = 1;
			rate[f] = share;
			if (m->bott)
				m->bott[f] = l;
			for (uint32_t x = off[f]; x < off[f + 1]; x++) {
				uint32_t l2 = idx[x];
				m->res[l2] -= share;
				if (m->res[l2] < 0)
					m->res[l2] = 0;
				m->cnt[l2]--;
			}
		}
	}
}
