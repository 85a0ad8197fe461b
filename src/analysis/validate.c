/*
 * validate.c - a result document checked before diagnosis: the parts the
 * checks read must have the types and shapes fabscope writes (names are
 * strings, counters finite non-negative numbers, the matrix square with as
 * many rows as endpoints, pairs inside it), so that a hand-edited or
 * foreign document is refused with the place that is wrong instead of
 * giving suspects named "(null)", "-nan" times or an n x n allocation
 * sized by a claim.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose.h"
#include "schema.h"

/* a field's expected type: a string, a finite number >= 0, an integer >= 0,
 * a finite number (any sign), an array, an object */
enum { V_STR, V_NUM, V_UINT, V_REAL, V_ARR, V_OBJ };

struct field {
	const char *key;
	int type;
};

static const char *type_name(int type)
{
	static const char *n[] = {
		"a string", "a number (0 or more)", "a whole number (0 or more)", "a number", "an array", "an object"};
	return n[type];
}

static bool has_type(const json_t *v, int type)
{
	switch (type) {
	case V_STR:
		return json_is_string(v);
	case V_NUM:
		return json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0;
	case V_UINT:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case V_REAL:
		return json_is_number(v) && isfinite(json_number_value(v));
	case V_ARR:
		return json_is_array(v);
	default:
		return json_is_object(v);
	}
}

static int bad(struct fab_err *err, const char *doc, const char *path, const json_t *v, const char *want)
{
	return fab_err_set(err, FAB_EINVAL, "%s: %s: expected %s, got %s", doc, path, want,
			   v ? fab_json_kind(v) : "nothing");
}

/* o must be an object; each field present must have its type */
static int check_obj(const json_t *o, const struct field *f, size_t nf, const char *doc, const char *path,
		     struct fab_err *err)
{
	char p[256];
	if (!json_is_object(o))
		return bad(err, doc, path, o, "an object");
	for (size_t i = 0; i < nf; i++) {
		json_t *v = json_object_get(o, f[i].key);
		if (!v)
			continue;
		if (!has_type(v, f[i].type)) {
			snprintf(p, sizeof p, "%s.%s", path, f[i].key);
			return bad(err, doc, p, v, type_name(f[i].type));
		}
	}
	return 0;
}

/* an optional array member of o, each element checked against f */
static int check_list(const json_t *o, const char *key, const struct field *f, size_t nf, const char *doc,
		      const char *path, struct fab_err *err)
{
	json_t *a = json_object_get(o, key), *x;
	char p[256];
	size_t i;
	if (!a)
		return 0;
	snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
	if (!json_is_array(a))
		return bad(err, doc, p, a, "an array");
	json_array_foreach(a, i, x)
	{
		char q[300];
		snprintf(q, sizeof q, "%s[%zu]", p, i);
		if (check_obj(x, f, nf, doc, q, err))
			return FAB_EINVAL;
	}
	return 0;
}

#define LIST(o, key, f, path) check_list(o, key, f, FAB_ARRAY_LEN(f), doc, path, err)

static const struct field port_f[] = {
	{"node", V_STR},     {"peer", V_STR},      {"port", V_UINT}, {"rx_errors", V_NUM}, {"rx_pkts", V_NUM},
	{"pause_tx", V_NUM}, {"paused_ps", V_NUM}, {"drops", V_NUM}, {"ecn_marks", V_NUM}, {"max_queue_bytes", V_NUM},
};
static const struct field ecmp_f[] = {
	{"tier", V_UINT},         {"uplinks", V_NUM},      {"unused", V_NUM},  {"max_over_mean", V_NUM},
	{"mean_tx_bytes", V_NUM}, {"max_tx_bytes", V_NUM}, {"busiest", V_OBJ},
};
static const struct field busiest_f[] = {{"node", V_STR}, {"peer", V_STR}, {"port", V_UINT}};
static const struct field group_f[] = {{"switch", V_STR}, {"max_over_mean", V_NUM}, {"colliding", V_ARR}};
static const struct field job_f[] = {{"name", V_STR}, {"iterations", V_ARR}, {"stats", V_OBJ}};
static const struct field iter_f[] = {
	{"time_ps", V_NUM}, {"start_ps", V_NUM},   {"end_ps", V_NUM},
	{"lag_ps", V_NUM},  {"compute_ps", V_NUM}, {"last_gpus", V_ARR},
};
static const struct field stats_f[] = {{"mean_ps", V_NUM}};
static const struct field series_f[] = {
	{"t_ps", V_NUM}, {"node", V_STR}, {"port", V_UINT}, {"pause_tx", V_NUM}, {"drops", V_NUM}, {"ecn_marks", V_NUM},
};
static const struct field link_f[] = {{"switch", V_STR}, {"switch_port", V_UINT}};
static const struct field summary_f[] = {{"drops", V_NUM}};

/* an n x n matrix: n rows of n numbers (>= 0) or nulls */
static int check_square(const json_t *m, const char *key, size_t n, const char *doc, struct fab_err *err)
{
	json_t *a = json_object_get(m, key), *row, *v;
	char p[96];
	size_t i, j;
	snprintf(p, sizeof p, "matrix.%s", key);
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) != n)
		return fab_err_set(err, FAB_EINVAL, "%s: %s: expected %zu rows (one per endpoint), got %s", doc, p, n,
				   json_is_array(a) ? "another count" : fab_json_kind(a));
	json_array_foreach(a, i, row)
	{
		if (!json_is_array(row) || json_array_size(row) != n)
			return fab_err_set(err, FAB_EINVAL,
					   "%s: %s[%zu]: expected %zu entries (one per endpoint), got %zu", doc, p, i,
					   n, json_is_array(row) ? json_array_size(row) : 0);
		json_array_foreach(row, j, v) if (!json_is_null(v) && !has_type(v, V_NUM))
		{
			char q[128];
			snprintf(q, sizeof q, "%s[%zu][%zu]", p, i, j);
			return bad(err, doc, q, v, "a number (0 or more) or null");
		}
	}
	return 0;
}

static int check_matrix(const json_t *m, const char *doc, struct fab_err *err)
{
	json_t *ep = json_object_get(m, "endpoints"), *v, *x;
	size_t i, k, n;
	if (!json_is_object(m))
		return bad(err, doc, "matrix", m, "an object");
	if (!json_is_array(ep))
		return bad(err, doc, "matrix.endpoints", ep, "an array of names");
	n = json_array_size(ep);
	if (n < 2)
		return fab_err_set(err, FAB_EINVAL, "%s: matrix.endpoints: %zu endpoint%s: a matrix needs at least 2",
				   doc, n, n == 1 ? "" : "s");
	if (n > FAB_DIAG_MAX_ENDPOINTS)
		return fab_err_set(err, FAB_EINVAL, "%s: matrix.endpoints: %zu endpoints, at most %u", doc, n,
				   FAB_DIAG_MAX_ENDPOINTS);
	json_array_foreach(ep, i, v) if (!json_is_string(v))
	{
		char q[64];
		snprintf(q, sizeof q, "matrix.endpoints[%zu]", i);
		return bad(err, doc, q, v, "a name");
	}
	if (check_square(m, "bw_GBps", n, doc, err) || check_square(m, "lat_us", n, doc, err))
		return FAB_EINVAL;
	json_t *g = json_object_get(m, "gpus"), *l = json_object_get(m, "links"),
	       *fp = json_object_get(m, "failed_pairs");
	if (g && (!json_is_array(g) || json_array_size(g) != n))
		return fab_err_set(err, FAB_EINVAL, "%s: matrix.gpus: expected %zu lists (one per endpoint)", doc, n);
	json_array_foreach(g, i, x)
	{
		char q[64];
		snprintf(q, sizeof q, "matrix.gpus[%zu]", i);
		if (!json_is_array(x))
			return bad(err, doc, q, x, "an array of GPU numbers");
		json_array_foreach(x, k, v) if (!has_type(v, V_UINT)) return bad(err, doc, q, v, "GPU numbers");
	}
	if (l && (!json_is_array(l) || json_array_size(l) != n))
		return fab_err_set(err, FAB_EINVAL, "%s: matrix.links: expected %zu links (one per endpoint)", doc, n);
	if (LIST(m, "links", link_f, "matrix"))
		return FAB_EINVAL;
	if (fp && !json_is_array(fp))
		return bad(err, doc, "matrix.failed_pairs", fp, "an array of pairs");
	json_array_foreach(fp, i, x)
	{
		json_t *a = json_array_get(x, 0), *b = json_array_get(x, 1);
		if (!json_is_array(x) || json_array_size(x) != 2 || !has_type(a, V_UINT) || !has_type(b, V_UINT) ||
		    (size_t)json_integer_value(a) >= n || (size_t)json_integer_value(b) >= n ||
		    json_integer_value(a) == json_integer_value(b))
			return fab_err_set(err, FAB_EINVAL,
					   "%s: matrix.failed_pairs[%zu]: expected a pair [a, b] of two endpoints "
					   "0..%zu",
					   doc, i, n - 1);
	}
	return 0;
}

int fab_diag_validate(const json_t *d, const char *doc, struct fab_err *err)
{
	json_t *x, *its, *it;
	size_t i, k;
	if (!json_is_object(d))
		return fab_err_set(err, FAB_EINVAL, "%s: not a fabscope result (not a JSON object)", doc);
	const char *schema = json_string_value(json_object_get(d, "schema"));
	if (!schema || strncmp(schema, "fabscope.result/", 16))
		return fab_err_set(err, FAB_EINVAL, "%s: not a fabscope result (schema missing)", doc);
	if (LIST(d, "ports", port_f, "") || LIST(d, "ecmp", ecmp_f, "") || LIST(d, "ecmp_groups", group_f, "") ||
	    LIST(d, "jobs", job_f, "") || LIST(d, "series", series_f, ""))
		return FAB_EINVAL;
	json_t *sum = json_object_get(d, "summary");
	if (sum && check_obj(sum, summary_f, FAB_ARRAY_LEN(summary_f), doc, "summary", err))
		return FAB_EINVAL;
	json_array_foreach(json_object_get(d, "ecmp"), i, x)
	{
		char p[64];
		snprintf(p, sizeof p, "ecmp[%zu].busiest", i);
		json_t *b = json_object_get(x, "busiest");
		if (b && check_obj(b, busiest_f, FAB_ARRAY_LEN(busiest_f), doc, p, err))
			return FAB_EINVAL;
	}
	json_array_foreach(json_object_get(d, "ecmp_groups"), i, x)
	{
		json_t *v;
		json_array_foreach(json_object_get(x, "colliding"), k, v) if (!json_is_string(v))
		{
			char p[64];
			snprintf(p, sizeof p, "ecmp_groups[%zu].colliding[%zu]", i, k);
			return bad(err, doc, p, v, "a string");
		}
	}
	json_array_foreach(json_object_get(d, "jobs"), i, x)
	{
		char p[64];
		snprintf(p, sizeof p, "jobs[%zu]", i);
		its = json_object_get(x, "iterations");
		json_array_foreach(its, k, it)
		{
			char q[96];
			snprintf(q, sizeof q, "%s.iterations[%zu]", p, k);
			if (check_obj(it, iter_f, FAB_ARRAY_LEN(iter_f), doc, q, err))
				return FAB_EINVAL;
			json_t *g, *lg = json_object_get(it, "last_gpus");
			size_t m;
			json_array_foreach(lg, m, g) if (!has_type(g, V_UINT)) return bad(err, doc, q, g,
											  "GPU numbers");
		}
		json_t *st = json_object_get(x, "stats");
		snprintf(p, sizeof p, "jobs[%zu].stats", i);
		if (st && check_obj(st, stats_f, FAB_ARRAY_LEN(stats_f), doc, p, err))
			return FAB_EINVAL;
	}
	json_t *m = json_object_get(d, "matrix");
	if (m && check_matrix(m, doc, err))
		return FAB_EINVAL;
	json_t *ecn = json_object_get(json_object_get(json_object_get(d, "config"), "fabric"), "ecn");
	json_t *kmax = json_object_get(ecn, "kmax");
	if (kmax && !json_is_string(kmax))
		return bad(err, doc, "config.fabric.ecn.kmax", kmax, "a size such as \"400KiB\"");
	return 0;
}
