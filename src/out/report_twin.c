/*
 * report_twin.c - fabscope twin's document (--format json, schema
 * fabscope.calibration/1) as a page: the fit (the cluster's factor, its
 * latency, the fitted keys), the departures worst first, every pair
 * measured against expected and predicted (a chart, pairs in order of what
 * they measured, and the pairs that depart), and each collective's rows.
 * Checked against doc/schema/ first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/schema.h"
#include "report_int.h"

#define PAIR_ROWS 200u /* the pairs' table: the ones furthest from their prediction, this many */

static void fit_section(FILE *f, const json_t *d, const char *name)
{
	const json_t *lat = json_object_get(d, "latency"), *k;
	size_t i;
	fputs("<section id=\"fit\"><h2>The fit: ", f);
	rep_esc(f, name);
	fprintf(f,
		"</h2>\n<p>%lld hosts, %lld bytes a pair; %lld of %lld pairs under %.2f x the cluster's factor.  "
		"The factor: <b>%.3f</b> of the rate the design's simulation gives each pair.",
		(long long)json_integer_value(json_object_get(d, "ranks")),
		(long long)json_integer_value(json_object_get(d, "bytes")),
		(long long)json_integer_value(json_object_get(d, "low_pairs")),
		(long long)json_integer_value(json_object_get(d, "pairs")), rep_jnum(d, "tolerance"),
		rep_jnum(d, "factor"));
	if (json_is_number(json_object_get(lat, "measured_us")))
		fprintf(f, "  One-way latency, the hosts' median: %.2f us measured, %.2f us in the design.",
			rep_jnum(lat, "measured_us"), rep_jnum(lat, "expected_us"));
	fputs("</p>\n", f);
	if (json_array_size(json_object_get(d, "keys"))) {
		fputs("<table><tr><th>key</th><th>fitted</th><th>design</th><th>why</th></tr>\n", f);
		json_array_foreach(json_object_get(d, "keys"), i, k)
		{
			fputs("<tr><td>", f);
			rep_esc(f, rep_jstr(k, "key"));
			fputs("</td><td>", f);
			rep_esc(f, rep_jstr(k, "value"));
			fputs("</td><td>", f);
			rep_esc(f, rep_jstr(k, "design"));
			fputs("</td><td style=\"text-align:left\">", f);
			rep_esc(f, rep_jstr(k, "why"));
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("</section>\n", f);
}

static void departures_section(FILE *f, const json_t *d)
{
	const json_t *deps = json_object_get(d, "departures"), *x;
	size_t i;
	fprintf(f, "<section id=\"departures\"><h2>Departures (%zu)</h2>\n", json_array_size(deps));
	if (!json_array_size(deps)) {
		fputs("<p class=\"ok\">Every pair within the tolerance of the cluster's factor, every host's latency "
		      "within 3 times the hosts' median (or 50 us of it).</p>\n</section>\n",
		      f);
		return;
	}
	fputs("<table><tr><th>#</th><th>what</th><th>kind</th><th>measured</th><th>expected</th><th>of expected</th>"
	      "<th>pairs low</th><th>in the calibrated scenario</th></tr>\n",
	      f);
	json_array_foreach(deps, i, x)
	{
		bool host = !strcmp(rep_jstr(x, "kind"), "host");
		const json_t *flt = json_object_get(x, "fault");
		fprintf(f, "<tr><td>%zu</td><td style=\"text-align:left\">", i + 1);
		rep_esc(f, rep_jstr(x, "target"));
		fprintf(f, "</td><td>%s</td>", rep_jstr(x, "kind"));
		if (host)
			fprintf(f, "<td>%.1f us</td><td>%.1f us</td><td>%.1fx</td><td></td>",
				rep_jnum(x, "measured_us"), rep_jnum(x, "expected_us"), rep_jnum(x, "ratio"));
		else
			fprintf(f, "<td>%.4g GB/s</td><td>%.4g GB/s</td><td>%.2f</td><td>%lld of %lld</td>",
				rep_jnum(x, "measured_GBps"), rep_jnum(x, "expected_GBps"), rep_jnum(x, "ratio"),
				(long long)json_integer_value(json_object_get(x, "low_pairs")),
				(long long)json_integer_value(json_object_get(x, "pairs")));
		fputs("<td>", f);
		if (flt) {
			fprintf(f, "%s to ", rep_jstr(flt, "kind"));
			rep_esc(f, rep_jstr(flt, json_object_get(flt, "rate") ? "rate" : "delay"));
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static int by_measured(const void *a, const void *b)
{
	double x = rep_jnum(*(json_t *const *)a, "measured_GBps"), y = rep_jnum(*(json_t *const *)b, "measured_GBps");
	return (x > y) - (x < y);
}

/* how far from its prediction, either way */
static double off(const json_t *p)
{
	double m = rep_jnum(p, "measured_GBps"), q = rep_jnum(p, "predicted_GBps");
	return m > 0 && q > 0 ? fabs(log(m / q)) : INFINITY;
}

static int by_off(const void *a, const void *b)
{
	double x = off(*(json_t *const *)a), y = off(*(json_t *const *)b);
	return (x < y) - (x > y);
}

static void pairs_section(FILE *f, const json_t *pairs)
{
	size_t n = json_array_size(pairs), i;
	if (!n)
		return;
	const json_t **v = fab_xcalloc(n, sizeof *v);
	double *x = fab_xcalloc(n + 1, sizeof *x);
	for (i = 0; i < n; i++)
		v[i] = json_array_get(pairs, i);
	qsort(v, n, sizeof *v, by_measured);
	static const char *const what[3] = {"measured_GBps", "expected_GBps", "predicted_GBps"};
	struct series s[3] = {{"measured", x, NULL, n},
			      {"expected (the design at the factor)", x, NULL, n},
			      {"predicted (the calibrated scenario)", x, NULL, n}};
	double *ys = fab_xcalloc(3 * n + 1, sizeof *ys);
	for (i = 0; i < n; i++)
		x[i] = (double)i;
	for (int k = 0; k < 3; k++) {
		for (i = 0; i < n; i++)
			ys[(size_t)k * n + i] = rep_jnum(v[i], what[k]);
		s[k].y = ys + (size_t)k * n;
	}
	fputs("<section id=\"pairs\"><h2>Pairs: measured, expected, predicted</h2>\n", f);
	rep_chart(f, "Every pair's bandwidth, one direction a point, in order of what it measured",
		  "pair (in order of what it measured)", "GB/s", false, s, 3);
	qsort(v, n, sizeof *v, by_off);
	fprintf(f,
		"<table><tr><th>from</th><th>to</th><th>measured GB/s</th><th>expected</th><th>predicted</th>"
		"<th>measured / predicted</th></tr>\n");
	for (i = 0; i < n && i < PAIR_ROWS; i++)
		fprintf(f, "<tr><td>%lld</td><td>%lld</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.2f</td></tr>\n",
			(long long)json_integer_value(json_object_get(v[i], "from")),
			(long long)json_integer_value(json_object_get(v[i], "to")), rep_jnum(v[i], "measured_GBps"),
			rep_jnum(v[i], "expected_GBps"), rep_jnum(v[i], "predicted_GBps"),
			rep_jnum(v[i], "predicted_GBps") > 0
				? rep_jnum(v[i], "measured_GBps") / rep_jnum(v[i], "predicted_GBps")
				: NAN);
	fputs("</table>\n", f);
	if (n > PAIR_ROWS)
		fprintf(f, "<p>The %u pairs furthest from their prediction of %zu.</p>\n", PAIR_ROWS, n);
	fputs("</section>\n", f);
	free(ys);
	free(x);
	free(v);
}

static void colls_section(FILE *f, const json_t *colls)
{
	size_t i, k;
	const json_t *c, *r;
	if (!json_array_size(colls))
		return;
	fputs("<section id=\"collectives\"><h2>Collectives: measured, expected, predicted</h2>\n", f);
	json_array_foreach(colls, i, c)
	{
		fputs("<p>", f);
		rep_esc(f, rep_jstr(c, "op"));
		fputs(" ", f);
		rep_esc(f, rep_jstr(c, "algo"));
		fprintf(f, ", %lld ranks (", (long long)json_integer_value(json_object_get(c, "ranks")));
		rep_esc(f, rep_jstr(c, "document"));
		fputs(")</p>\n<table><tr><th>size</th><th>measured busbw GB/s</th><th>expected</th><th>predicted</th>"
		      "<th>measured / predicted</th></tr>\n",
		      f);
		json_array_foreach(json_object_get(c, "rows"), k, r)
		{
			double m = rep_jnum(r, "measured_busbw_GBps"), p = rep_jnum(r, "predicted_busbw_GBps");
			fputs("<tr><td>", f);
			rep_bytes(f, rep_jnum(r, "size_bytes"));
			fprintf(f, "</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.2f</td></tr>\n", m,
				rep_jnum(r, "expected_busbw_GBps"), p, p > 0 ? m / p : NAN);
		}
		fputs("</table>\n", f);
	}
	fputs("</section>\n", f);
}

int fab_report_twin(FILE *f, const json_t *d, const char *name, struct fab_err *err)
{
	if (fab_schema_check(d, name, err))
		return FAB_EINVAL;
	if (!fab_schema_of(d) || strcmp(fab_schema_of(d), "calibration"))
		return fab_err_set(err, FAB_EINVAL, "%s: not a twin's document (schema fabscope.calibration/1)", name);
	rep_page_head(f);
	fit_section(f, d, name);
	departures_section(f, d);
	pairs_section(f, json_object_get(json_object_get(d, "twin"), "pairs"));
	colls_section(f, json_object_get(json_object_get(d, "twin"), "collectives"));
	fputs("</body></html>\n", f);
	return ferror(f) ? FAB_EIO : 0;
}
