/*
 * slowdown.c - FCT slowdowns per size bin (slowdown.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/sort.h"
#include "slowdown.h"

size_t fab_slowdown_binning(uint64_t *bytes, double *slowdown, size_t n, struct fab_slowdown_bin *bins)
{
	/* (slowdowns are at least 1: their bits sort as they do) */
	struct fab_key2 *f = fab_xcalloc(n ? n : 1, sizeof *f);
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fab_key2){bytes[i], fab_dbits(slowdown[i])};
	fab_sort_key2(f, n);
	for (size_t i = 0; i < n; i++) {
		bytes[i] = f[i].a;
		slowdown[i] = fab_bitsd(f[i].b);
	}
	free(f);
	size_t nb = 0;
	uint64_t *sd = fab_xcalloc(n ? n : 1, sizeof *sd);
	for (size_t b = 0; b < FAB_SLOWDOWN_BINS; b++) {
		size_t lo = b * 5 * n / 100, hi = (b + 1) * 5 * n / 100;
		if (hi <= lo)
			continue;
		size_t k = hi - lo;
		for (size_t i = 0; i < k; i++)
			sd[i] = fab_dbits(slowdown[lo + i]);
		fab_sort_u64(sd, k);
		bins[nb++] = (struct fab_slowdown_bin){
			.max_bytes = bytes[hi - 1],
			.flows = (uint32_t)k,
			.p50 = fab_bitsd(sd[(size_t)((double)k * 0.5)]),
			.p95 = fab_bitsd(sd[(size_t)((double)k * 0.95)]),
			.p99 = fab_bitsd(sd[(size_t)((double)k * 0.99)]),
		};
	}
	free(sd);
	return nb;
}

double fab_ideal_fct_ps(const struct fab_sim *s, uint32_t flow, fab_bytes bytes)
{
	const struct fab_topo *t = fab_sim_topo(s);
	uint32_t path[64], n = fab_sim_qp_path(s, fab_sim_flow_first_qp(s, flow), path, 64);
	uint32_t mtu = fab_sim_mtu(s);
	const struct fab_wire *w = fab_sim_wire(s);
	double rtt = 0, slowest = 1e300;
	for (uint32_t h = 0; h < n; h++) {
		const struct fab_port *p = &t->ports[path[h]];
		rtt += 2.0 * (double)p->delay_ps + (double)mtu * 8e12 / (double)p->rate_bps;
		slowest = FAB_MIN(slowest, (double)p->rate_bps);
	}
	double pkts = ceil((double)bytes / mtu);
	double wire = (double)bytes + pkts * (double)(w->data_overhead + w->preamble_ifg);
	return rtt + wire * 8e12 / slowest;
}

/* every finished flow's size and slowdown; n set */
static void flows_slowdown(const struct fab_sim *s, uint64_t **bytes, double **sd, size_t *n)
{
	size_t nf = fab_sim_nflows(s);
	*bytes = fab_xcalloc(nf ? nf : 1, sizeof **bytes);
	*sd = fab_xcalloc(nf ? nf : 1, sizeof **sd);
	*n = 0;
	for (size_t i = 0; i < nf; i++) {
		fab_time_ps finish = fab_sim_flow_stat(s, i).finish_ps;
		if (finish == FAB_TIME_NEVER)
			continue;
		const struct fab_sim_flow *fl = fab_sim_flow_spec(s, i);
		double fct = (double)(finish - fl->start_ps);
		(*bytes)[*n] = fl->bytes;
		(*sd)[(*n)++] = FAB_MAX(1.0, fct / fab_ideal_fct_ps(s, (uint32_t)i, fl->bytes));
	}
}

struct memo {
	size_t nflows, nb;
	struct fab_slowdown_bin bins[FAB_SLOWDOWN_BINS];
};

/* the bins of the finished flows; their number in *nflows.  Kept with the
 * simulation until it runs on (the document and slowdown.csv both ask). */
static size_t slowdown_bins(const struct fab_sim *s, struct fab_slowdown_bin *bins, size_t *nflows)
{
	bool stale;
	struct memo *k = fab_sim_memo(s, FAB_MEMO_SLOWDOWN, sizeof *k, &stale);
	if (stale) {
		uint64_t *bytes;
		double *sd;
		flows_slowdown(s, &bytes, &sd, &k->nflows);
		k->nb = fab_slowdown_binning(bytes, sd, k->nflows, k->bins);
		free(bytes);
		free(sd);
	}
	memcpy(bins, k->bins, k->nb * sizeof *bins);
	*nflows = k->nflows;
	return k->nb;
}

json_t *fab_slowdown_json(const struct fab_sim *s)
{
	struct fab_slowdown_bin bins[FAB_SLOWDOWN_BINS];
	size_t n, nb = slowdown_bins(s, bins, &n);
	json_t *o = NULL;
	if (n) {
		json_t *arr = json_array();
		for (size_t i = 0; i < nb; i++)
			json_array_append_new(arr,
					      json_pack("{s:I,s:i,s:f,s:f,s:f}", "max_bytes",
							(json_int_t)bins[i].max_bytes, "flows", bins[i].flows, "p50",
							bins[i].p50, "p95", bins[i].p95, "p99", bins[i].p99));
		o = json_pack("{s:i,s:o}", "flows", (int)n, "bins", arr);
	}
	return o;
}

int fab_result_write_slowdown_csv(FILE *f, const struct fab_sim *s)
{
	struct fab_slowdown_bin bins[FAB_SLOWDOWN_BINS];
	size_t n, nb = slowdown_bins(s, bins, &n);
	fprintf(f, "bin,max_bytes,flows,p50,p95,p99\n");
	for (size_t i = 0; i < nb; i++)
		fprintf(f, "%zu,%llu,%u,%.4f,%.4f,%.4f\n", i, (unsigned long long)bins[i].max_bytes, bins[i].flows,
			bins[i].p50, bins[i].p95, bins[i].p99);
	return ferror(f) ? FAB_EIO : 0;
}
