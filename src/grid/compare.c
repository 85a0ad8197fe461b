/*
 * compare.c - fabscope plan --compare: a file of designs (a cluster, the
 * ways to build its fabric, prices, one workload), each planned, and the
 * table of cost, power and the workload's result side by side.
 */
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "../scenario/ydom.h"
#include "grid.h"

#define COMPARE_MAX_BYTES (1u << 20)
#define COMPARE_MAX_SEEDS 100 /* workload.seeds: runs a design */

void fab_compare_free(struct fab_compare *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->d[i].name);
	for (size_t i = 0; i < c->nsets; i++)
		free(c->sets[i]);
	free(c->sets);
	free(c->seeds);
	free(c->d);
	free(c->scenario);
	free(c->origin);
	free(c);
}

static int at(struct fab_err *err, const struct fab_compare *c, unsigned line, unsigned col, const char *fmt,
	      const char *a)
{
	return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s%s", c->origin, line, col, fmt, a ? a : "");
}

/* one of the plan's options, as in the cluster or a design */
/* one of the plan's options, as in the cluster or a design */
static int req_key(struct fab_compare *c, struct fab_plan_req *r, const char *k, const struct ynode *v,
		   const struct ynode *kat, struct fab_err *err)
{
	char why[200];
	if (v->kind != Y_SCALAR)
		return at(err, c, v->line, v->col, "expected a value for ", k);
	int rc = fab_plan_req_set(r, k, v->scalar, why, sizeof why);
	if (rc == 1)
		return at(err, c, kat->line, kat->col, "unknown key (expected " FAB_PLAN_OPTIONS "): ", k);
	if (rc)
		return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s: %s", c->origin, v->line, v->col, k, why);
	return 0;
}

static int req_map(struct fab_compare *c, struct fab_plan_req *r, const struct ynode *m, bool named,
		   struct fab_err *err)
{
	if (m->kind != Y_MAP)
		return at(err, c, m->line, m->col, "expected a mapping of plan options", NULL);
	for (size_t i = 0; i < m->n; i++) {
		if (named && !strcmp(m->keys[i], "name"))
			continue;
		struct ynode kat = {.line = m->key_line[i], .col = m->key_col[i]};
		if (req_key(c, r, m->keys[i], m->vals[i], &kat, err))
			return err->code;
	}
	return 0;
}

static int read_prices(struct fab_compare *c, const struct ynode *m, struct fab_err *err)
{
	if (m->kind != Y_MAP)
		return at(err, c, m->line, m->col, "prices: expected item: {usd: N, watts: N}", NULL);
	for (size_t i = 0; i < m->n; i++) {
		int item = -1;
		for (int k = 0; k < FAB_PI_N; k++)
			if (!strcmp(m->keys[i], fab_plan_item_names[k]))
				item = k;
		if (item < 0)
			return at(
				err, c, m->key_line[i], m->key_col[i],
				"prices: unknown item (nic, switch_port, switch, dac, aoc, sr8, dr4, fr4, lr4, fiber_m): ",
				m->keys[i]);
		const struct ynode *v = m->vals[i];
		if (v->kind != Y_MAP)
			return at(err, c, v->line, v->col, "prices: expected {usd: N, watts: N} for ", m->keys[i]);
		for (size_t j = 0; j < v->n; j++) {
			const struct ynode *x = v->vals[j];
			char *e = NULL;
			double d = x->kind == Y_SCALAR ? strtod(x->scalar, &e) : -1;
			bool usd = !strcmp(v->keys[j], "usd"), w = !strcmp(v->keys[j], "watts");
			if ((!usd && !w) || !e || e == x->scalar || *e || !(d >= 0) || d > 1e9)
				return at(err, c, x->line, x->col,
					  "prices: expected usd or watts, a number of at least 0: ", v->keys[j]);
			(usd ? c->prices.usd : c->prices.watts)[item] = d;
		}
	}
	return 0;
}

static int read_workload(struct fab_compare *c, const struct ynode *m, const char *dir, struct fab_err *err)
{
	if (m->kind != Y_MAP)
		return at(err, c, m->line, m->col, "workload: expected command, scenario and set", NULL);
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->keys[i];
		const struct ynode *v = m->vals[i];
		if (!strcmp(k, "command")) {
			if (v->kind != Y_SCALAR || (strcmp(v->scalar, "coll") && strcmp(v->scalar, "sim")))
				return at(err, c, v->line, v->col, "workload.command: expected coll or sim", NULL);
			c->command = !strcmp(v->scalar, "coll") ? FAB_GRID_COLL : FAB_GRID_SIM;
		} else if (!strcmp(k, "scenario")) {
			if (v->kind != Y_SCALAR || !*v->scalar)
				return at(err, c, v->line, v->col, "workload.scenario: expected a path", NULL);
			char p[PATH_MAX], real[PATH_MAX];
			snprintf(p, sizeof p, "%s%s%s", v->scalar[0] == '/' ? "" : dir, v->scalar[0] == '/' ? "" : "/",
				 v->scalar);
			if (!realpath(p, real))
				return fab_err_set(err, FAB_EIO, "%s:%u:%u: workload.scenario: %s: cannot open",
						   c->origin, v->line, v->col, v->scalar);
			c->scenario = fab_xstrdup(real);
		} else if (!strcmp(k, "set")) {
			if (v->kind != Y_MAP)
				return at(err, c, v->line, v->col, "workload.set: expected keys and values", NULL);
			c->sets = fab_xcalloc(v->n + 1, sizeof *c->sets);
			for (size_t j = 0; j < v->n; j++) {
				const struct ynode *x = v->vals[j];
				if (x->kind != Y_SCALAR || strchr(x->scalar, '\n'))
					return at(err, c, x->line, x->col, "workload.set: expected a value for ",
						  v->keys[j]);
				size_t l = strlen(v->keys[j]) + strlen(x->scalar) + 2;
				c->sets[c->nsets] = fab_xcalloc(l, 1);
				snprintf(c->sets[c->nsets++], l, "%s=%s", v->keys[j], x->scalar);
			}
		} else if (!strcmp(k, "seeds")) {
			const struct ynode *bad;
			char why[96];
			free(c->seeds);
			if (fab_seeds_read(v, COMPARE_MAX_SEEDS, &c->seeds, &c->nseeds, &bad, why, sizeof why))
				return at(err, c, bad->line, bad->col, "workload.seeds: ", why);
		} else {
			return at(err, c, m->key_line[i], m->key_col[i],
				  "workload: unknown key (expected command, scenario, set, seeds): ", k);
		}
	}
	for (size_t i = 0; c->seeds && i < c->nsets; i++)
		if (!strncmp(c->sets[i], "run.seed=", 9))
			return at(err, c, m->line, m->col,
				  "workload: run.seed under set and seeds: give the seeds in one place", NULL);
	return 0;
}

static int parse(struct fab_compare *c, const struct ynode *root, const char *dir, struct fab_err *err)
{
	if (root->kind != Y_MAP)
		return at(err, c, root->line, root->col, "expected cluster, designs, prices, workload", NULL);
	struct fab_plan_req base;
	fab_plan_req_default(&base);
	const struct ynode *designs = NULL;
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->keys[i];
		const struct ynode *v = root->vals[i];
		int rc = 0;
		if (!strcmp(k, "cluster"))
			rc = req_map(c, &base, v, false, err);
		else if (!strcmp(k, "designs"))
			designs = v;
		else if (!strcmp(k, "prices"))
			rc = read_prices(c, v, err);
		else if (!strcmp(k, "workload"))
			rc = read_workload(c, v, dir, err);
		else
			rc = at(err, c, root->key_line[i], root->key_col[i],
				"unknown key (expected cluster, designs, prices, workload): ", k);
		if (rc)
			return rc;
	}
	if (!base.gpus)
		return at(err, c, root->line, root->col, "cluster.gpus: the number of GPUs is needed", NULL);
	if (!designs || designs->kind != Y_SEQ || !designs->n || designs->n > FAB_COMPARE_MAX)
		return at(err, c, designs ? designs->line : root->line, designs ? designs->col : root->col,
			  "designs: expected a list of 1 to 64 designs, each a name and plan options", NULL);
	c->d = fab_xcalloc(designs->n, sizeof *c->d);
	for (size_t i = 0; i < designs->n; i++) {
		const struct ynode *m = designs->vals[i], *name = m->kind == Y_MAP ? fab_ydom_get(m, "name") : NULL;
		if (!name || name->kind != Y_SCALAR || !*name->scalar || strlen(name->scalar) > 64)
			return at(err, c, m->line, m->col, "designs: each needs a name (at most 64 characters)", NULL);
		/* a name goes into a table, a CSV and a YAML comment: one line of
		 * printable characters */
		for (const unsigned char *p = (const unsigned char *)name->scalar; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				return at(err, c, name->line, name->col,
					  "designs: a name is one line of printable characters (no newline, tab or "
					  "control character)",
					  NULL);
		for (size_t j = 0; j < c->n; j++)
			if (!strcmp(c->d[j].name, name->scalar))
				return at(err, c, name->line, name->col, "designs: a name given twice: ", name->scalar);
		struct fab_compare_design *d = &c->d[c->n];
		d->name = fab_xstrdup(name->scalar);
		c->n++;
		d->req = base;
		if (req_map(c, &d->req, m, true, err))
			return err->code;
		if (!d->req.fabric_rate)
			d->req.fabric_rate = d->req.nic_rate;
		d->req.prices = &c->prices;
		struct fab_err e = {0};
		if (fab_plan_design(&d->req, &d->plan, &e))
			return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: design %s: %s", c->origin, m->line, m->col,
					   d->name, e.msg);
	}
	return 0;
}

struct fab_compare *fab_compare_load(const char *path, struct fab_err *err)
{
	char *text = NULL;
	size_t len;
	struct fab_compare *c = fab_xcalloc(1, sizeof *c);
	c->origin = fab_xstrdup(path);
	c->command = FAB_GRID_COLL;
	c->nseeds = 1;
	fab_plan_prices_default(&c->prices);
	struct ynode *root = NULL;
	if (fab_read_text(path, "designs", COMPARE_MAX_BYTES, true, &text, &len, err) ||
	    !(root = fab_ydom_parse(text, len, c->origin,
				    "a design comparison is a mapping with keys cluster, designs and workload "
				    "(doc/plan.md)",
				    err)))
		goto fail;
	char *dup = fab_xstrdup(path);
	int rc = parse(c, root, dirname(dup), err);
	free(dup);
	if (rc)
		goto fail;
	/* the designs point at c->prices, which is final now */
	for (size_t i = 0; i < c->n; i++)
		fab_plan_design(&c->d[i].req, &c->d[i].plan, err);
	free(text);
	fab_ydom_free(root);
	return c;
fail:
	free(text);
	fab_ydom_free(root);
	fab_compare_free(c);
	return NULL;
}

char **fab_compare_sets(const struct fab_compare *c, size_t i, size_t r, size_t *n)
{
	size_t nt;
	char **t = fab_plan_sets(&c->d[i].req, &c->d[i].plan, &nt);
	char **s = fab_xcalloc(nt + c->nsets + 3, sizeof *s);
	memcpy(s, t, nt * sizeof *s);
	free(t);
	s[nt] = fab_xstrdup("engine=flow"); /* the workload's set may say packet */
	for (size_t k = 0; k < c->nsets; k++)
		s[nt + 1 + k] = fab_xstrdup(c->sets[k]);
	*n = nt + 1 + c->nsets;
	if (c->seeds) {
		char b[40];
		snprintf(b, sizeof b, "run.seed=%llu", (unsigned long long)c->seeds[r]);
		s[(*n)++] = fab_xstrdup(b);
	}
	return s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

json_t *fab_compare_json(const struct fab_compare *c, json_t *const *docs, const char *const *errors)
{
	json_t *ds = json_array();
	for (size_t i = 0; i < c->n; i++) {
		const struct fab_plan *p = &c->d[i].plan;
		uint64_t optics = p->count[FAB_PI_SR] + p->count[FAB_PI_DR] + p->count[FAB_PI_FR] + p->count[FAB_PI_LR];
		json_t *d = json_pack(
			"{s:s, s:i, s:I, s:I, s:f, s:f, s:f, s:f, s:o}", "name", c->d[i].name, "tiers", p->tiers,
			"switches", (json_int_t)p->switches[0] + p->switches[1] + p->switches[2], "transceivers",
			(json_int_t)optics, "oversubscription", p->oversubscription, "bisection_bps", p->bisection_bps,
			"usd", p->usd_total, "watts", p->watts_total, "plan", fab_plan_json(&c->d[i].req, p));
		/* the workload's number at each seed; the design's, their median */
		const char *metric = c->command == FAB_GRID_COLL ? "busbw_GBps" : "step_ms";
		double *val = fab_xcalloc(c->nseeds, sizeof *val);
		const char *status = "ok", *error = NULL;
		for (size_t r = 0; r < c->nseeds; r++) {
			json_t *doc = docs[i * c->nseeds + r], *v = NULL;
			if (!doc) {
				status = "failed";
				error = errors[i * c->nseeds + r];
				break;
			}
			v = c->command == FAB_GRID_COLL ? fab_json_path(doc, "collective.avg_busbw_GBps")
							: fab_json_path(doc, "jobs[0].stats.mean_ps");
			if (!v || !json_is_number(v)) {
				status = "no result";
				break;
			}
			val[r] = c->command == FAB_GRID_COLL ? json_number_value(v) : json_number_value(v) / 1e9;
		}
		if (!strcmp(status, "ok") && c->seeds) { /* each seed and its number, in the file's order */
			json_t *ss = json_array(), *vs = json_array();
			for (size_t r = 0; r < c->nseeds; r++) {
				json_array_append_new(ss, json_integer((json_int_t)c->seeds[r]));
				json_array_append_new(vs, json_real(val[r]));
			}
			json_object_set_new(d, "seeds", ss);
			json_object_set_new(d, "values", vs);
		}
		if (!strcmp(status, "ok")) {
			qsort(val, c->nseeds, sizeof *val, cmp_double);
			size_t h = c->nseeds / 2;
			json_object_set_new(d, metric, json_real(c->nseeds % 2 ? val[h] : (val[h - 1] + val[h]) / 2));
			if (c->seeds) {
				json_object_set_new(d, "min", json_real(val[0]));
				json_object_set_new(d, "max", json_real(val[c->nseeds - 1]));
			}
		}
		free(val);
		json_object_set_new(d, "status", json_string(status));
		if (error)
			json_object_set_new(d, "error", json_string(error));
		json_array_append_new(ds, d);
	}
	json_t *sets = json_array();
	for (size_t i = 0; i < c->nsets; i++)
		json_array_append_new(sets, json_string(c->sets[i]));
	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "schema", "fabscope.plan-compare/1", "workload",
			 c->command == FAB_GRID_COLL ? "coll" : "sim", "scenario",
			 c->scenario ? json_string(c->scenario) : json_null(), "set", sets, "designs", ds);
}

/* the table's rows, for text and CSV */
static int rows(FILE *f, const json_t *cmp, bool csv)
{
	json_t *ds = json_object_get(cmp, "designs"), *d;
	bool coll = !strcmp(json_string_value(json_object_get(cmp, "workload")), "coll");
	const char *metric = coll ? "busbw_GBps" : "step_ms";
	double first = NAN;
	size_t i;
	int w = 6;
	bool seeds = false; /* the workload ran at several seeds: its number is their median, with their range */
	json_array_foreach(ds, i, d)
	{
		w = FAB_MAX(w, (int)strlen(json_string_value(json_object_get(d, "name"))));
		seeds |= json_object_get(d, "seeds") != NULL;
	}
	if (csv)
		fprintf(f,
			"design,tiers,switches,transceivers,oversubscription,bisection_Tbps,usd,kw,usd_per_gpu,%s,"
			"vs_first,status,runs,min,max\n",
			metric);
	else
		fprintf(f, "%-*s %5s %8s %12s %7s %10s %14s %9s %9s %10s %8s%s\n", w, "design", "tiers", "switches",
			"transceivers", "over", "bisection", "cost (USD)", "power kW", "USD/GPU",
			coll ? "busbw GB/s" : "step ms", "vs 1st", seeds ? "  range over seeds" : "");
	json_array_foreach(ds, i, d)
	{
		json_t *plan = json_object_get(d, "plan"), *m = json_object_get(d, metric);
		double gpus = (double)json_integer_value(json_object_get(plan, "gpus"));
		double usd = json_number_value(json_object_get(d, "usd")),
		       kw = json_number_value(json_object_get(d, "watts")) / 1e3;
		double val = m ? json_number_value(m) : NAN;
		if (!i)
			first = val;
		double rel = val / first;
		char vs[32], vb[32];
		snprintf(vb, sizeof vb, csv ? "%.6g" : "%.4g", val);
		snprintf(vs, sizeof vs, csv ? "%.4f" : "%.3f", rel);
		if (!m)
			snprintf(vb, sizeof vb, "%s", csv ? "" : "-");
		if (!m || !isfinite(rel))
			snprintf(vs, sizeof vs, "%s", csv ? "" : "-");
		const char *name = json_string_value(json_object_get(d, "name"));
		json_t *lo = json_object_get(d, "min"), *hi = json_object_get(d, "max");
		size_t runs = json_array_size(json_object_get(d, "seeds"));
		char range[64] = "";
		if (seeds && lo && hi)
			snprintf(range, sizeof range, "  %.4g to %.4g", json_number_value(lo), json_number_value(hi));
		if (csv) {
			bool q = strpbrk(name, ",\"") != NULL;
			fprintf(f, "%s%s%s", q ? "\"" : "", name, q ? "\"" : "");
			fprintf(f, ",%lld,%lld,%lld,%.4g,%.6g,%.0f,%.3f,%.0f,%s,%s,%s,%zu,",
				(long long)json_integer_value(json_object_get(d, "tiers")),
				(long long)json_integer_value(json_object_get(d, "switches")),
				(long long)json_integer_value(json_object_get(d, "transceivers")),
				json_number_value(json_object_get(d, "oversubscription")),
				json_number_value(json_object_get(d, "bisection_bps")) / 1e12, usd, kw, usd / gpus, vb,
				vs, json_string_value(json_object_get(d, "status")), runs ? runs : 1);
			if (lo && hi)
				fprintf(f, "%.6g,%.6g\n", json_number_value(lo), json_number_value(hi));
			else
				fprintf(f, "%s,%s\n", vb, vb);
		} else {
			char over[24], bis[24];
			snprintf(over, sizeof over, "%.3g:1",
				 json_number_value(json_object_get(d, "oversubscription")));
			snprintf(bis, sizeof bis, "%.4g Tbps",
				 json_number_value(json_object_get(d, "bisection_bps")) / 1e12);
			fprintf(f, "%-*s %5lld %8lld %12lld %7s %10s %14.0f %9.1f %9.0f %10s %8s%s\n", w, name,
				(long long)json_integer_value(json_object_get(d, "tiers")),
				(long long)json_integer_value(json_object_get(d, "switches")),
				(long long)json_integer_value(json_object_get(d, "transceivers")), over, bis, usd, kw,
				usd / gpus, vb, vs, range);
		}
	}
	return ferror(f) ? FAB_EIO : 0;
}

int fab_compare_write_text(FILE *f, const json_t *cmp)
{
	return rows(f, cmp, false);
}

int fab_compare_write_csv(FILE *f, const json_t *cmp)
{
	return rows(f, cmp, true);
}
