/*
 * probe_json.c - the probe's results in the JSON of the tools it stands in
 * for (probe -J FILE): nccl-tests' (format 3, as coll -J writes it) for a
 * collective sweep, iperf3's (-J, src/iperf_api.c's keys) for a bandwidth
 * test.  Both are read back from the probe's own result document, so the
 * three files always agree.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "nccl_json.h"
#include "probe_out.h"

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* the host of an endpoint "rankN@host" */
static const char *host_of(const json_t *doc, size_t rank)
{
	const char *e = json_string_value(
		json_array_get(json_object_get(json_object_get(doc, "probe"), "endpoints"), rank));
	const char *at = e ? strchr(e, '@') : NULL;
	return at ? at + 1 : "?";
}

int fab_probe_write_nccl_json(FILE *f, const json_t *doc, const struct fab_nccl_params_line *p, int argc,
			      char *const *argv, char *const *envp, const char *start)
{
	const json_t *c = json_object_get(doc, "collective"), *rows = json_object_get(c, "rows"), *r;
	size_t nr = json_array_size(json_object_get(json_object_get(doc, "probe"), "endpoints")), i;
	fab_nccl_json_head(f, argc, argv, envp, start, p);
	for (i = 0; i < nr; i++)
		fab_nccl_json_device(f, !i, (uint32_t)i, 0, host_of(doc, i), 0, "host memory (TCP)");
	fab_nccl_json_results(f);
	uint64_t wrong = 0;
	json_array_foreach(rows, i, r)
	{
		const json_t *in = json_object_get(r, "inplace");
		const json_t *w[2] = {json_object_get(r, "wrong"), json_object_get(in, "wrong")};
		struct fab_nccl_row row = {
			.bytes = (uint64_t)json_integer_value(json_object_get(r, "size_bytes")),
			.count = (uint64_t)json_integer_value(json_object_get(r, "count")),
			.type = json_string_value(json_object_get(r, "type")),
			.redop = json_string_value(json_object_get(r, "redop")),
			.root = (int)json_integer_value(json_object_get(r, "root")),
			.time_us = {num(r, "time_us"), num(in, "time_us")},
			.algbw_GBps = {num(r, "algbw_GBps"), num(in, "algbw_GBps")},
			.busbw_GBps = {num(r, "busbw_GBps"), num(in, "busbw_GBps")},
		};
		for (int k = 0; k < 2; k++) {
			row.checked[k] = json_is_integer(w[k]);
			row.wrong[k] = (uint64_t)json_integer_value(w[k]);
			wrong += row.wrong[k];
		}
		fab_nccl_json_row(f, !i, &row, p->iters);
	}
	char end[64];
	fab_nccl_json_time(end, sizeof end);
	fab_nccl_json_end(f, wrong, num(c, "avg_busbw_GBps"), fab_nccl_min_bw(), end);
	return ferror(f) ? FAB_EIO : 0;
}

/* ---- iperf3 ---- */

/* iperf3's interval or summary numbers (its iperf_json_printf keys) */
static json_t *span(double from, double to, double bytes, bool socket)
{
	double s = to - from;
	json_t *o = json_object();
	if (socket)
		json_object_set_new(o, "socket", json_integer(1));
	json_object_set_new(o, "start", json_real(from));
	json_object_set_new(o, "end", json_real(to));
	json_object_set_new(o, "seconds", json_real(s));
	json_object_set_new(o, "bytes", json_integer((json_int_t)llround(bytes)));
	json_object_set_new(o, "bits_per_second", json_real(s > 0 ? bytes * 8 / s : 0));
	return o;
}

/* iperf3's "start": who, when, what test */
static json_t *iperf_start(const json_t *doc, const json_t *row, const struct fab_probe_iperf *ip)
{
	struct utsname u;
	char sys[400] = "", when[64] = "";
	if (!uname(&u))
		snprintf(sys, sizeof sys, "%s %s %s %s %s", u.sysname, u.nodename, u.release, u.version, u.machine);
	time_t t = (time_t)ip->timesecs;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	size_t peer = (size_t)json_integer_value(json_object_get(row, "peer"));
	json_t *conn = json_pack("{s:i,s:s,s:i,s:s,s:i}", "socket", 1, "local_host", host_of(doc, 0), "local_port", 0,
				 "remote_host", host_of(doc, peer), "remote_port", 0);
	json_t *test = json_pack("{s:s,s:i,s:I,s:i,s:i,s:i,s:I,s:i,s:i,s:i,s:i,s:i,s:f}", "protocol", "TCP",
				 "num_streams", 1, "blksize", json_integer_value(json_object_get(row, "size_bytes")),
				 "omit", 0, "duration", (int)ceil(ip->duration_s), "bytes", 0, "blocks",
				 ip->duration_s > 0 ? (json_int_t)0 : json_integer_value(json_object_get(row, "iters")),
				 "reverse", 0, "tos", 0, "target_bitrate", 0, "bidir", ip->bidir, "fqrate", 0,
				 "interval", ip->interval_s);
	return json_pack("{s:[o],s:s,s:s,s:{s:s,s:I},s:{s:s,s:i},s:s,s:o}", "connected", conn, "version", ip->version,
			 "system_info", sys, "timestamp", "time", when, "timesecs", (json_int_t)ip->timesecs,
			 "connecting_to", "host", host_of(doc, peer), "port", 0, "cookie", "", "test_start", test);
}

/* one test: a row, and its intervals [*k, ...) up to the next run's */
static json_t *iperf_test(const json_t *doc, const json_t *row, const json_t *ivs, size_t *k,
			  const struct fab_probe_iperf *ip)
{
	json_t *list = json_array();
	for (bool first = true; *k < json_array_size(ivs); first = false) {
		const json_t *iv = json_array_get(ivs, *k);
		if (!first && num(iv, "from_s") == 0)
			break; /* the next run's */
		json_t *s = span(num(iv, "from_s"), num(iv, "to_s"), num(iv, "bytes"), true);
		json_object_set_new(s, "omitted", json_false());
		json_object_set_new(s, "sender", json_true());
		json_t *sum = json_deep_copy(s);
		json_object_del(sum, "socket");
		json_array_append_new(list, json_pack("{s:[o],s:o}", "streams", s, "sum", sum));
		(*k)++;
	}
	double t = num(row, "time_us") / 1e6, bytes = num(row, "GBps") * 1e9 * t;
	json_t *end = json_object();
	json_t *snd = span(0, t, bytes, true), *rcv = span(0, t, bytes, true);
	json_object_set_new(snd, "sender", json_true());
	json_object_set_new(rcv, "sender", json_true());
	json_object_set_new(end, "streams", json_pack("[{s:o,s:o}]", "sender", snd, "receiver", rcv));
	json_t *ss = span(0, t, bytes, false), *sr = span(0, t, bytes, false);
	json_object_set_new(ss, "sender", json_true());
	json_object_set_new(sr, "sender", json_true());
	json_object_set_new(end, "sum_sent", ss);
	json_object_set_new(end, "sum_received", sr);
	return json_pack("{s:o,s:o,s:o}", "start", iperf_start(doc, row, ip), "intervals", list, "end", end);
}

int fab_probe_write_iperf_json(FILE *f, const json_t *doc, const struct fab_probe_iperf *ip)
{
	const json_t *bw = json_object_get(doc, "bandwidth"), *rows = json_object_get(bw, "rows"), *r;
	const json_t *ivs = json_object_get(bw, "intervals");
	json_t *all = json_array();
	size_t i, k = 0;
	json_array_foreach(rows, i, r) json_array_append_new(all, iperf_test(doc, r, ivs, &k, ip));
	/* one test: iperf3's object; several (peers, sizes): a list of them */
	json_t *out = json_array_size(all) == 1 ? json_incref(json_array_get(all, 0)) : json_incref(all);
	int rc = json_dumpf(out, f, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) || fputc('\n', f) == EOF;
	json_decref(out);
	json_decref(all);
	return rc || ferror(f) ? FAB_EIO : 0;
}
