/*
 * report_sweep.c - a sweep's table (fabscope sweep's sweep.json) as a page:
 * one result against one swept key, a line for each combination of the
 * other swept keys (the mean over seeds where the sweep has several), and
 * the points' table; and plan --compare's table (compare.json) checked
 * before report.c draws it.  The documents are checked against doc/schema/
 * (src/analysis/schema.c) before anything is drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/schema.h"
#include "report_int.h"

#define SWEEP_MAX_POINTS 100000u /* a sweep's points, as the grid allows */
#define TABLE_ROWS 2000u         /* the table shows this many points, then says how many more */

/* the document against doc/schema/ (fab_schema_check), then what the page
 * can draw: at most SWEEP_MAX_POINTS points */
static int check(const json_t *sw, const char *name, struct fab_err *err)
{
	if (fab_schema_check(sw, name, err))
		return FAB_EINVAL;
	if (!fab_schema_of(sw) || strcmp(fab_schema_of(sw), "sweep"))
		return fab_err_set(err, FAB_EINVAL, "%s: not a sweep's table (schema fabscope.sweep/1)", name);
	if (json_array_size(json_object_get(sw, "points")) > SWEEP_MAX_POINTS)
		return fab_err_set(err, FAB_EINVAL, "%s: points: more than %u, more than a page draws", name,
				   SWEEP_MAX_POINTS);
	return 0;
}

/* the keys whose values differ between points, in the order they come */
static size_t varied(const json_t *pts, const char **keys, size_t cap)
{
	size_t n = 0;
	const json_t *p0 = json_array_get(pts, 0);
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(p0, "values"), k, v)
	{
		size_t i;
		const json_t *p;
		json_array_foreach(pts, i, p)
		{
			const char *s = rep_jstr(json_object_get(p, "values"), k);
			if (strcmp(s, json_string_value(v))) {
				if (n < cap)
					keys[n++] = k;
				break;
			}
		}
	}
	return n;
}

/* a value as a number: "2:1" is 2, "400Gbps" 400; false when it is none */
static bool as_number(const char *s, double *x)
{
	char *e;
	double a = strtod(s, &e);
	if (e == s || !isfinite(a))
		return false;
	if (*e == ':') {
		double b = strtod(e + 1, &e);
		if (!(b > 0))
			return false;
		a /= b;
	}
	*x = a;
	return true;
}

/* distinct strings, in order */
struct names {
	const char *v[64];
	size_t n;
};

static size_t name_at(struct names *ns, const char *s)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return i;
	if (ns->n == FAB_ARRAY_LEN(ns->v))
		return ns->n;
	ns->v[ns->n] = s;
	return ns->n++;
}

/* a point's series: the other varied keys' values, "k=v, k=v" */
static void series_label(const json_t *vals, const char *const *keys, size_t nk, const char *x, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t k = 0; k < nk && at < len; k++)
		if (strcmp(keys[k], x))
			at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", at ? ", " : "", keys[k],
					       rep_jstr(vals, keys[k]));
	if (!at)
		snprintf(buf, len, "%s", "all points");
}

static void chart(FILE *f, const json_t *pts, const char *const *keys, size_t nk, const char *x, const char *y)
{
	struct names xs = {.n = 0}, ss = {.n = 0};
	char labels[64][256];
	size_t i;
	const json_t *p;
	json_array_foreach(pts, i, p)
	{
		const json_t *vals = json_object_get(p, "values");
		name_at(&xs, rep_jstr(vals, x));
		char lab[256];
		series_label(vals, keys, nk, x, lab, sizeof lab);
		size_t k = 0;
		while (k < ss.n && strcmp(labels[k], lab))
			k++;
		if (k == ss.n && ss.n < 64) {
			snprintf(labels[ss.n], sizeof labels[0], "%s", lab);
			ss.v[ss.n] = labels[ss.n];
			ss.n++;
		}
	}
	bool numeric = true;
	double xv[64];
	for (size_t k = 0; k < xs.n; k++)
		numeric = numeric && as_number(xs.v[k], &xv[k]);
	for (size_t k = 0; !numeric && k < xs.n; k++)
		xv[k] = (double)(k + 1);
	/* the mean of y over each series' points (its seeds) at each x */
	double sum[64][64] = {{0}}, cnt[64][64] = {{0}};
	json_array_foreach(pts, i, p)
	{
		const json_t *vals = json_object_get(p, "values"),
			     *r = json_object_get(json_object_get(p, "results"), y);
		if (strcmp(rep_jstr(p, "status"), "ok") || !json_is_number(r))
			continue;
		char lab[256];
		series_label(vals, keys, nk, x, lab, sizeof lab);
		size_t s = 0, xi = name_at(&xs, rep_jstr(vals, x));
		while (s < ss.n && strcmp(labels[s], lab))
			s++;
		if (s < 64 && xi < 64) {
			sum[s][xi] += json_number_value(r);
			cnt[s][xi]++;
		}
	}
	struct series ser[64];
	double sx[64][64], sy[64][64];
	size_t nser = 0;
	for (size_t s = 0; s < ss.n; s++) {
		size_t n = 0;
		for (size_t k = 0; k < xs.n; k++)
			if (cnt[s][k] > 0) {
				sx[s][n] = xv[k];
				sy[s][n++] = sum[s][k] / cnt[s][k];
			}
		if (n)
			ser[nser++] = (struct series){ss.v[s], sx[s], sy[s], n};
	}
	char title[300];
	snprintf(title, sizeof title, "%s against %s", y, x);
	rep_chart(f, title, x, y, false, ser, nser);
	if (!numeric) {
		fputs("<p class=\"note\">", f);
		rep_esc(f, x);
		fputs(" along the axis: ", f);
		for (size_t k = 0; k < xs.n; k++) {
			fprintf(f, "%s%zu = ", k ? ", " : "", k + 1);
			rep_esc(f, xs.v[k]);
		}
		fputs("</p>\n", f);
	}
}

static void table(FILE *f, const json_t *sw, const json_t *pts, const char *const *keys, size_t nk)
{
	const json_t *fields = json_object_get(sw, "fields"), *fl;
	size_t i, j;
	fputs("<table><tr><th>point</th>", f);
	for (size_t k = 0; k < nk; k++) {
		fputs("<th>", f);
		rep_esc(f, keys[k]);
		fputs("</th>", f);
	}
	fputs("<th>status</th>", f);
	json_array_foreach(fields, j, fl)
	{
		fputs("<th>", f);
		rep_esc(f, rep_jstr(fl, "name"));
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	const json_t *p;
	json_array_foreach(pts, i, p)
	{
		if (i == TABLE_ROWS) {
			fprintf(f,
				"<tr><td colspan=\"%zu\">... and %zu more points (sweep.csv has them all)</td></tr>\n",
				nk + 2 + json_array_size(fields), json_array_size(pts) - TABLE_ROWS);
			break;
		}
		fprintf(f, "<tr><td>%lld</td>", (long long)json_integer_value(json_object_get(p, "point")));
		for (size_t k = 0; k < nk; k++) {
			fputs("<td>", f);
			rep_esc(f, rep_jstr(json_object_get(p, "values"), keys[k]));
			fputs("</td>", f);
		}
		fputs("<td>", f);
		rep_esc(f, rep_jstr(p, "status"));
		fputs("</td>", f);
		json_array_foreach(fields, j, fl)
		{
			const json_t *r = json_object_get(json_object_get(p, "results"), rep_jstr(fl, "name"));
			if (json_is_number(r))
				fprintf(f, "<td>%.6g</td>", json_number_value(r));
			else
				fputs("<td>-</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int fab_report_sweep(FILE *f, const json_t *sw, const char *name, const char *x, const char *y, struct fab_err *err)
{
	if (check(sw, name, err))
		return FAB_EINVAL;
	const json_t *pts = json_object_get(sw, "points");
	const char *keys[32];
	size_t nk = json_array_size(pts) ? varied(pts, keys, FAB_ARRAY_LEN(keys)) : 0;
	const char *y0 = rep_jstr(json_array_get(json_object_get(sw, "fields"), 0), "name");
	if (x) {
		size_t k = 0;
		while (k < nk && strcmp(keys[k], x))
			k++;
		if (k == nk)
			return fab_err_set(err, FAB_EINVAL, "%s: --x %s: not a key the sweep varies", name, x);
	}
	if (y && !json_object_get(json_object_get(json_array_get(pts, 0), "results"), y))
		return fab_err_set(err, FAB_EINVAL, "%s: --y %s: not among the sweep's results", name, y);
	rep_page_head(f);
	fputs("<section id=\"sweep\"><h2>Sweep: ", f);
	rep_esc(f, name);
	fprintf(f, "</h2>\n<p>%s over %zu points of ", rep_jstr(sw, "command"), json_array_size(pts));
	rep_esc(f, rep_jstr(sw, "scenario"));
	fputs("</p>\n", f);
	if (nk && (y || *y0))
		chart(f, pts, keys, nk, x ? x : keys[0], y ? y : y0);
	table(f, sw, pts, keys, nk);
	fputs("</section>\n</body></html>\n", f);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_report_compare_checked(FILE *f, const json_t *cmp, const char *name, struct fab_err *err)
{
	if (fab_schema_check(cmp, name, err))
		return FAB_EINVAL;
	if (!fab_schema_of(cmp) || strcmp(fab_schema_of(cmp), "compare"))
		return fab_err_set(err, FAB_EINVAL, "%s: not plan --compare's table (schema fabscope.plan-compare/1)",
				   name);
	return fab_report_compare(f, cmp);
}
