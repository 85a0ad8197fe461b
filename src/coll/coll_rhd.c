/*
 * coll_rhd.c - schedules of exchanges between partners: Rabenseifner's
 * recursive halving-doubling AllReduce, and direct sends from every rank
 * to every other (AllToAll) or to the next (SendRecv).
 */
#include <stdlib.h>

#include "coll_int.h"

/* Rabenseifner: recursive-halving reduce-scatter, recursive-doubling
 * all-gather; ranks beyond the largest power of two fold into partners. */
void coll_build_rhd(struct sb *b, uint64_t cnt, const uint32_t *m)
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

void coll_build_direct(struct sb *b, uint64_t cnt)
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
