/*
 * probe_out.c - the real-network probe's result document and tables:
 * perftest-style latency (min, average, percentiles, jitter) and bandwidth
 * rows, the nccl-tests table of a collective sweep (nccl_table.c, shared
 * with the simulator), the matrix summary.  Rank 0 builds them as results
 * come in; the command prints what is written to f.
 */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "nccl_table.h"
#include "probe_out.h"
#include "result.h"

json_t *fab_probe_doc_new(const struct fab_probe *pr, const struct fab_probe_doc_info *info)
{
	json_t *doc = json_object(), *p = json_object(), *ep = json_array();
	json_object_set_new(doc, "schema", json_string(FAB_RESULT_SCHEMA));
	json_object_set_new(doc, "kind", json_string("probe"));
	json_object_set_new(doc, "generator", json_string(info->generator));
	json_object_set_new(p, "test", json_string(info->test));
	json_object_set_new(p, "ranks", json_integer(info->nranks));
	json_object_set_new(p, "transport", json_string("tcp"));
	json_object_set_new(p, "conns", json_integer(info->conns));
	json_object_set_new(p, "launcher", json_string(info->launcher));
	json_object_set_new(p, "busy_poll", json_boolean(info->busy_poll));
	for (uint32_t i = 0; i < info->nranks; i++) {
		char name[64];
		fab_probe_rank_name(pr, i, name, sizeof name);
		json_array_append_new(ep, json_string(name));
	}
	json_object_set_new(p, "endpoints", ep);
	json_object_set_new(doc, "probe", p);
	return doc;
}

/* ---- latency and bandwidth ---- */

#define PERF_LINE "---------------------------------------------------------------------------------------\n"

static const char *poll_mode(const struct fab_probe_doc_info *info)
{
	return info->busy_poll ? "busy-poll" : "poll";
}

void fab_probe_p2p_begin(FILE *f, json_t *doc, const struct fab_probe_doc_info *info, enum fab_probe_test kind)
{
	bool lat = kind == FAB_PROBE_LATENCY, bidir = kind == FAB_PROBE_BW_BIDIR;
	const char *mode = poll_mode(info);
	if (lat)
		fprintf(f, "# fabscope probe: latency, rank 0 to each rank in turn, half the round trip, TCP, %s\n",
			mode);
	else
		fprintf(f, "# fabscope probe: bandwidth, rank 0 to each rank in turn, %s, TCP, %u connection%s, %s\n",
			bidir ? "both ways at once (sum)" : "one way", info->conns, info->conns == 1 ? "" : "s", mode);
	/* perftest's table as ib_send_lat or ib_write_bw --report_gbits print it
	 * (src/perftest_parameters.h: RESULT_LINE, RESULT_FMT_LAT, RESULT_FMT_G),
	 * a row a peer; the peer, jitter and time follow the table */
	fputs(PERF_LINE, f);
	fputs(lat ? " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		    "99% percentile[usec]   99.9% percentile[usec] \n"
		  : " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n",
	      f);
	json_t *sec = json_object();
	json_object_set_new(sec, "mode", json_string(mode));
	if (!lat)
		json_object_set_new(sec, "direction", json_string(bidir ? "bidirectional" : "unidirectional"));
	json_object_set_new(sec, "rows", json_array());
	json_object_set_new(doc, lat ? "latency" : "bandwidth", sec);
}

/* min, mean, p50, p99, p99.9, max, jitter (the mean difference of
 * consecutive samples, RFC 3550's idea) and the standard deviation of
 * x[0..n), in seconds; sorts x */
static void latency_stats(double *x, uint32_t n, double q[8])
{
	double sum = 0, jit = 0, var = 0;
	for (uint32_t i = 1; i < n; i++)
		jit += fabs(x[i] - x[i - 1]);
	jit = n > 1 ? jit / (n - 1) : 0;
	qsort(x, n, sizeof *x, fab_cmp_double);
	for (uint32_t i = 0; i < n; i++)
		sum += x[i];
	q[0] = x[0];
	q[1] = sum / n;
	q[2] = x[fab_nearest_rank(n, 0.5)];
	q[3] = x[fab_nearest_rank(n, 0.99)];
	q[4] = x[fab_nearest_rank(n, 0.999)];
	q[5] = x[n - 1];
	q[6] = jit;
	for (uint32_t i = 0; i < n; i++)
		var += (x[i] - q[1]) * (x[i] - q[1]);
	q[7] = sqrt(var / n);
}

/* iperf3's unit_snprintf, adaptive: v bytes in binary units ("1.75
 * GByte"), or v bytes a second as bits a second in decimal units ("29.2
 * Gbit"); the caller adds the "s" as iperf3 does */
static void iperf_units(char *s, size_t len, double v, bool bits)
{
	static const char *const byte[] = {"Byte", "KByte", "MByte", "GByte", "TByte"},
				 *const bit[] = {"bit", "Kbit", "Mbit", "Gbit", "Tbit"};
	double base = bits ? 1000 : 1024;
	int c = 0;
	if (bits)
		v *= 8;
	while (v >= base && c < 4) {
		v /= base;
		c++;
	}
	snprintf(s, len, v < 9.995 ? "%4.2f %s" : v < 99.95 ? "%4.1f %s" : "%4.0f %s", v, bits ? bit[c] : byte[c]);
}

/* an iperf3 report line (report_bw_format): role "" or "sender" or
 * "receiver" */
static void iperf_line(FILE *f, uint32_t peer, double from_s, double to_s, double bytes, const char *role)
{
	char tr[32], bw[32];
	iperf_units(tr, sizeof tr, bytes, false);
	iperf_units(bw, sizeof bw, to_s > from_s ? bytes / (to_s - from_s) : 0, true);
	fprintf(f, "[%3u] %6.2f-%-6.2f sec  %ss  %ss/sec                  %s\n", peer, from_s, to_s, tr, bw, role);
}

void fab_probe_bw_interval(FILE *f, json_t *doc, uint32_t peer, double from_s, double to_s, double bytes)
{
	json_t *sec = json_object_get(doc, "bandwidth"), *iv = json_object_get(sec, "intervals");
	if (!iv) {
		/* iperf3's interval report */
		fprintf(f, "[ ID] Interval           Transfer     Bitrate\n");
		if (sec) /* (set_new frees what it cannot place) */
			json_object_set_new(sec, "intervals", iv = json_array());
	}
	double bps = to_s > from_s ? bytes * 8 / (to_s - from_s) : 0;
	iperf_line(f, peer, from_s, to_s, bytes, "");
	if (iv)
		json_array_append_new(iv,
				      json_pack("{s:i,s:f,s:f,s:f,s:f}", "peer", peer, "from_s", from_s, "to_s", to_s,
						"bytes", bytes, "Gbps", bps / 1e9));
}

void fab_probe_p2p_row(FILE *f, json_t *doc, enum fab_probe_test kind, uint32_t peer, const char *endpoint,
		       fab_bytes bytes, uint32_t iters, double *samples)
{
	bool lat = kind == FAB_PROBE_LATENCY;
	json_t *rows = json_object_get(json_object_get(doc, lat ? "latency" : "bandwidth"), "rows");
	json_t *row = json_pack("{s:i,s:s,s:I,s:i}", "peer", peer, "endpoint", endpoint, "size_bytes",
				(json_int_t)bytes, "iters", iters);
	if (lat) {
		static const char *keys[] = {"t_min_us",  "t_avg_us", "t_p50_us",  "t_p99_us",
					     "t_p999_us", "t_max_us", "jitter_us", "t_stdev_us"};
		double q[8];
		latency_stats(samples, iters, q);
		/* REPORT_FMT_LAT: min, max, typical (the median), average, stdev, 99%, 99.9% */
		fprintf(f,
			" %-7llu %u          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
			(unsigned long long)bytes, iters, q[0] * 1e6, q[5] * 1e6, q[2] * 1e6, q[1] * 1e6, q[7] * 1e6,
			q[3] * 1e6, q[4] * 1e6);
		for (size_t i = 0; i < FAB_ARRAY_LEN(q); i++)
			json_object_set_new(row, keys[i], json_real(q[i] * 1e6));
	} else {
		/* samples: the time, the peak rate, the messages timed */
		double t = samples[0], n = samples[2];
		double bw = (double)bytes * n * (kind == FAB_PROBE_BW_BIDIR ? 2 : 1) / t;
		double rate = n * (kind == FAB_PROBE_BW_BIDIR ? 2 : 1) / t; /* messages per second */
		if (json_object_get(json_object_get(doc, "bandwidth"), "intervals")) {
			/* iperf3's summary after its intervals: both lines by rank 0's
			 * clock, to the receiver's acknowledgement of the last byte */
			fputs("- - - - - - - - - - - - - - - - - - - - - - - - -\n[ ID] Interval           Transfer     "
			      "Bitrate\n",
			      f);
			iperf_line(f, peer, 0, t, bw * t, "sender");
			iperf_line(f, peer, 0, t, bw * t, "receiver");
		}
		/* REPORT_FMT: #bytes, #iterations, BW peak, BW average, MsgRate */
		fprintf(f, " %-7llu    %-10llu       %-7.2f            %-7.2f\t\t     %-7.6f\n",
			(unsigned long long)bytes, (unsigned long long)n, samples[1] * 8 / 1e9, bw * 8 / 1e9,
			rate / 1e6);
		json_object_set_new(row, "iters", json_integer((json_int_t)n));
		json_object_set_new(row, "time_us", json_real(t * 1e6));
		json_object_set_new(row, "GBps", json_real(bw / 1e9));
		json_object_set_new(row, "Gbps", json_real(bw * 8 / 1e9));
		json_object_set_new(row, "peak_Gbps", json_real(samples[1] * 8 / 1e9));
		json_object_set_new(row, "msg_rate_Mpps", json_real(rate / 1e6));
	}
	json_array_append_new(rows, row);
}

void fab_probe_p2p_end(FILE *f, const json_t *doc, enum fab_probe_test kind)
{
	bool lat = kind == FAB_PROBE_LATENCY;
	const json_t *rows = json_object_get(json_object_get(doc, lat ? "latency" : "bandwidth"), "rows"), *r;
	size_t i;
	fputs(PERF_LINE, f);
	/* what perftest's table has no column for, a line a row, in its order */
	json_array_foreach(rows, i, r)
	{
		fprintf(f, "# row %zu: peer %lld (%s)", i + 1,
			(long long)json_integer_value(json_object_get(r, "peer")),
			json_string_value(json_object_get(r, "endpoint")));
		if (lat)
			fprintf(f, ", jitter %.2f usec\n", json_real_value(json_object_get(r, "jitter_us")));
		else
			fprintf(f, ", time %.1f usec, %.3f GB/s\n", json_real_value(json_object_get(r, "time_us")),
				json_real_value(json_object_get(r, "GBps")));
	}
}

/* ---- collectives ---- */

struct fab_nccl_params_line fab_probe_coll_params(const struct fab_coll_args *a, const struct fab_probe_coll_sweep *sw)
{
	return (struct fab_nccl_params_line){
		.op = a->op,
		.nthreads = 1,
		.ngpus = 1,
		.minb = sw->minb,
		.maxb = sw->maxb,
		.step = sw->factor,
		.step_factor = true,
		.warmup = sw->warmup,
		.iters = sw->iters,
		.check = sw->check,
	};
}

void fab_probe_coll_begin(FILE *f, json_t *doc, const struct fab_probe_doc_info *info, const struct fab_coll_args *a,
			  const struct fab_probe_coll_sweep *sw)
{
	struct fab_nccl_params_line p = fab_probe_coll_params(a, sw);
	fab_nccl_table_params(f, &p);
	fprintf(f,
		"# fabscope probe: %s, %u ranks, algorithm %s, %u channels, TCP, %u connection%s per pair; in place: "
		"the operation timed again\n",
		fab_coll_op_title(a->op), a->nranks, fab_coll_algo_name(a->algo), a->channels, info->conns,
		info->conns == 1 ? "" : "s");
	fab_nccl_table_devices(f);
	json_t *ep = json_object_get(json_object_get(doc, "probe"), "endpoints"), *e;
	size_t k;
	json_array_foreach(ep, k, e)
	{
		const char *name = json_string_value(e), *at = name ? strchr(name, '@') : NULL;
		fab_nccl_table_device(f, (uint32_t)k, 0, at ? at + 1 : "?", 0, "host memory (TCP)");
	}
	fab_nccl_table_head(f, false);
	json_t *c = json_object();
	json_object_set_new(c, "op", json_string(fab_coll_op_name(a->op)));
	json_object_set_new(c, "algo", json_string(fab_coll_algo_name(a->algo)));
	json_object_set_new(c, "ranks", json_integer(a->nranks));
	json_object_set_new(c, "channels", json_integer(a->channels));
	json_object_set_new(c, "datatype", json_string("float"));
	json_object_set_new(c, "busbw_factor", json_real(fab_coll_busbw_factor(a->op, a->nranks)));
	json_object_set_new(c, "checked", json_boolean(sw->check));
	json_object_set_new(c, "rows", json_array());
	json_object_set_new(doc, "collective", c);
}

void fab_probe_coll_row(FILE *f, json_t *doc, const struct fab_coll_args *a, uint64_t size, const double time_s[2],
			bool checked, const uint64_t wrong[2])
{
	double algbw[2], busbw[2];
	for (int k = 0; k < 2; k++) {
		algbw[k] = (double)size / time_s[k] / 1e9;
		busbw[k] = algbw[k] * fab_coll_busbw_factor(a->op, a->nranks);
	}
	int root = a->op == FAB_OP_BROADCAST || a->op == FAB_OP_REDUCE ? 0 : -1;
	fab_nccl_table_row(f,
			   &(struct fab_nccl_row){
				   .bytes = size,
				   .count = size / 4,
				   .type = "float",
				   .redop = fab_redop_name(a->op),
				   .root = root,
				   .time_us = {time_s[0] * 1e6, time_s[1] * 1e6},
				   .algbw_GBps = {algbw[0], algbw[1]},
				   .busbw_GBps = {busbw[0], busbw[1]},
				   .checked = {checked, checked}, /* a checked run for each half */
				   .wrong = {wrong[0], wrong[1]},
			   });
	json_t *rows = json_object_get(json_object_get(doc, "collective"), "rows");
	json_t *row = json_pack("{s:I,s:I,s:s,s:s,s:i,s:s,s:f,s:f,s:f,s:o}", "size_bytes", (json_int_t)size, "count",
				(json_int_t)(size / 4), "type", "float", "redop", fab_redop_name(a->op), "root", root,
				"algo", fab_coll_algo_name(a->algo), "time_us", time_s[0] * 1e6, "algbw_GBps", algbw[0],
				"busbw_GBps", busbw[0], "wrong",
				checked ? json_integer((json_int_t)wrong[0]) : json_null());
	json_object_set_new(row, "inplace",
			    json_pack("{s:f,s:f,s:f,s:o}", "time_us", time_s[1] * 1e6, "algbw_GBps", algbw[1],
				      "busbw_GBps", busbw[1], "wrong",
				      checked ? json_integer((json_int_t)wrong[1]) : json_null()));
	json_array_append_new(rows, row);
}

bool fab_probe_coll_end(FILE *f, json_t *doc, int op)
{
	json_t *c = json_object_get(doc, "collective"), *rows = json_object_get(c, "rows");
	size_t n = json_array_size(rows);
	double sum = 0;
	uint64_t wrong = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(rows, i);
		sum += json_real_value(json_object_get(r, "busbw_GBps"));
		wrong += (uint64_t)json_integer_value(json_object_get(r, "wrong")) +
			(uint64_t)json_integer_value(json_object_get(json_object_get(r, "inplace"), "wrong"));
	}
	double avg = n ? sum / (double)n : 0;
	json_object_set_new(c, "avg_busbw_GBps", json_real(avg));
	return fab_nccl_table_end(f, wrong, avg, fab_nccl_min_bw(), op);
}

/* ---- the all-pairs matrix ---- */

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static void matrix_json(json_t *doc, const struct fab_probe_matrix_opts *mo, uint32_t n,
			const struct fab_probe_matrix_res *m)
{
	json_t *x = json_object(), *gp = json_array(), *jb = json_array(), *jl = json_array();
	json_object_set_new(x, "mode", json_string(mo->serial ? "serial" : "rounds"));
	json_object_set_new(x, "transport", json_string("tcp"));
	json_object_set_new(x, "rounds", json_integer(m->stages));
	json_object_set_new(x, "bytes", json_integer((json_int_t)mo->bytes));
	json_object_set_new(x, "latency_bytes", json_integer(8));
	json_object_set_new(x, "endpoints",
			    json_deep_copy(json_object_get(json_object_get(doc, "probe"), "endpoints")));
	for (uint32_t i = 0; i < n; i++) {
		json_array_append_new(gp, json_array());
		json_t *rb = json_array(), *rl = json_array();
		for (uint32_t j = 0; j < n; j++) {
			double b = m->bw_GBps[(size_t)i * n + j], l = m->lat_us[(size_t)i * n + j];
			/* a failed pair has no bandwidth: null, as on the diagonal */
			bool f = m->failed[(size_t)i * n + j];
			json_array_append_new(rb, i == j || f ? json_null() : json_real(b));
			json_array_append_new(rl, i == j || isnan(l) ? json_null() : json_real(l));
		}
		json_array_append_new(jb, rb);
		json_array_append_new(jl, rl);
	}
	json_object_set_new(x, "gpus", gp);
	json_object_set_new(x, "bw_GBps", jb);
	json_object_set_new(x, "lat_us", jl);
	json_t *fp = json_array(), *rt = json_array();
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (m->failed[(size_t)i * n + j])
				json_array_append_new(fp, json_pack("[ii]", i, j));
	for (uint32_t k = 0; k < m->nretest; k++) {
		const struct fab_probe_retest *t = &m->retest[k];
		json_t *x2 = json_pack("{s:[ii]}", "pair", t->a, t->b);
		json_object_set_new(x2, "before_GBps",
				    json_pack("[oo]", num_or_null(t->before[0]), num_or_null(t->before[1])));
		json_object_set_new(x2, "after_GBps",
				    json_pack("[oo]", num_or_null(t->after[0]), num_or_null(t->after[1])));
		json_array_append_new(rt, x2);
	}
	json_object_set_new(x, "failed_pairs", fp);
	json_object_set_new(x, "retested", rt);
	json_object_set_new(x, "retest_skipped", json_integer(m->retest_skipped));
	json_object_set_new(doc, "matrix", x);
}

/* the matrix itself (up to 16 ranks), row = sender */
static void matrix_grid(FILE *f, uint32_t n, const struct fab_probe_matrix_res *m)
{
	fprintf(f, "bandwidth GB/s, row = sender:\n%6s", "");
	for (uint32_t j = 0; j < n; j++)
		fprintf(f, " %7u", j);
	fprintf(f, "\n");
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%6u", i);
		for (uint32_t j = 0; j < n; j++) {
			size_t ij = (size_t)i * n + j;
			if (i == j)
				fprintf(f, " %7s", "-");
			else if (m->failed[ij])
				fprintf(f, " %7s", "failed");
			else
				fprintf(f, " %7.3f", m->bw_GBps[ij]);
		}
		fprintf(f, "\n");
	}
}

static void matrix_failures(FILE *f, uint32_t n, const struct fab_probe_matrix_opts *mo,
			    const struct fab_probe_matrix_res *m, size_t nfailed)
{
	if (m->nretest) {
		fprintf(f, "re-tested alone (under %g x the median, or failed), GB/s each way:\n", mo->retest_below);
		for (uint32_t i = 0; i < m->nretest; i++) {
			const struct fab_probe_retest *t = &m->retest[i];
			if (isnan(t->before[0]))
				fprintf(f, "  %u <-> %u  failed -> ", t->a, t->b);
			else
				fprintf(f, "  %u <-> %u  %.4g / %.4g -> ", t->a, t->b, t->before[0], t->before[1]);
			if (m->failed[(size_t)t->a * n + t->b])
				fprintf(f, "failed\n");
			else
				fprintf(f, "%.4g / %.4g\n", t->after[0], t->after[1]);
		}
		if (m->retest_skipped)
			fprintf(f, "  (%u more suspicious pairs not re-tested)\n", m->retest_skipped);
	}
	if (nfailed) {
		fprintf(f, "failed pairs (broken or over --pair-timeout):");
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = i + 1; j < n; j++)
				if (m->failed[(size_t)i * n + j])
					fprintf(f, " %u<->%u", i, j);
		fprintf(f, "\n");
	}
}

void fab_probe_matrix_out(FILE *f, json_t *doc, const struct fab_probe_doc_info *info,
			  const struct fab_probe_matrix_opts *mo, const struct fab_probe_matrix_res *m)
{
	uint32_t n = info->nranks;
	size_t k = 0, nl = 0, nf = 0;
	double *v = fab_xcalloc((size_t)n * n + 1, sizeof *v), *l = fab_xcalloc((size_t)n * n + 1, sizeof *l);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			size_t ij = (size_t)i * n + j;
			if (i == j)
				continue;
			if (m->failed[ij]) {
				nf++;
				continue;
			}
			v[k++] = m->bw_GBps[ij];
			l[nl++] = m->lat_us[ij];
		}
	qsort(v, k, sizeof *v, fab_cmp_double);
	qsort(l, nl, sizeof *l, fab_cmp_double);
	fprintf(f, "# fabscope probe: matrix, %u ranks, %u %s, %llu B each way, TCP, %u connection%s per pair\n", n,
		m->stages,
		mo->serial               ? "pairs one at a time"
			: m->stages == 1 ? "round of disjoint pairs"
					 : "rounds of disjoint pairs",
		(unsigned long long)mo->bytes, info->conns, info->conns == 1 ? "" : "s");
	if (k) {
		fprintf(f, "bandwidth GB/s: min %.4g  median %.4g  max %.4g\n", v[0], v[(k - 1) / 2], v[k - 1]);
		fprintf(f, "latency us:     min %.2f  median %.2f  max %.2f\n", l[0], l[(nl - 1) / 2], l[nl - 1]);
	}
	if (n <= 16)
		matrix_grid(f, n, m);
	matrix_failures(f, n, mo, m, nf);
	double *med = fab_xcalloc(n, sizeof *med);
	uint32_t *ord = fab_xcalloc(n, sizeof *ord);
	fab_matrix_endpoint_medians(n, m->bw_GBps, med, ord);
	fprintf(f, "slowest ranks (median GB/s to and from the others):\n");
	for (uint32_t i = 0; i < n && i < 5; i++)
		fprintf(f, "  rank %-6u %.4g\n", ord[i], med[ord[i]]);
	matrix_json(doc, mo, n, m);
	free(v);
	free(l);
	free(med);
	free(ord);
}
