/*
 * grid.c - a design space read from GRID.yaml, its points and their ids,
 * the plan (JSON) that carries it to other processes, and the merged table.
 */
#include "grid.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "../scenario/scenario.h"
#include "../scenario/ydom.h"

#define GRID_MAX_BYTES (1u << 20)
#define GRID_MAX_VALUES 10000
#define GRID_MAX_FIELDS 64
#define GRID_MAX_STR 4096

static const char *const cmd_names[] = {"sim", "coll", "matrix"};

const char *fab_grid_cmd_name(int command)
{
	return command >= 0 && command < 3 ? cmd_names[command] : "?";
}

struct dflt {
	int cmd;
	const char *name, *path;
};
/* the columns when the grid names none */
static const struct dflt dflt_fields[] = {
	{FAB_GRID_COLL, "busbw_GBps", "collective.avg_busbw_GBps"},
	{FAB_GRID_COLL, "time_us", "collective.rows[-1].time_us"},
	{FAB_GRID_SIM, "step_ms", "jobs[0].stats.mean_ps / 1e9"},
	{FAB_GRID_SIM, "fct_p50_us", "summary.fct_ps.p50 / 1e6"},
	{FAB_GRID_SIM, "fct_p99_us", "summary.fct_ps.p99 / 1e6"},
	{FAB_GRID_MATRIX, "theory_GBps", "matrix.theory_GBps"},
	{-1, "ecn_marks", "summary.ecn_marks"},
	{-1, "pause_frames", "summary.pause_frames"},
	{-1, "drops", "summary.drops"},
};

void fab_grid_free(struct fab_grid *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nfixed; i++)
		free(g->fixed[i]);
	for (size_t k = 0; k < g->nkeys; k++) {
		for (size_t v = 0; v < g->nvals[k]; v++)
			free(g->vals[k][v]);
		free(g->vals[k]);
		free(g->vpos[k]);
		free(g->keys[k]);
	}
	for (size_t i = 0; i < g->nfields; i++) {
		free(g->fname[i]);
		free(g->fpath[i]);
	}
	for (size_t i = 0; i < g->npts; i++)
		free(g->pt[i].vi);
	free(g->pt);
	free(g->fname);
	free(g->fpath);
	free(g->vals);
	free(g->nvals);
	free(g->vpos);
	free(g->keys);
	free(g->fixed);
	free(g->scenario);
	free(g->origin);
	free(g);
}

static char *cat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = fab_xcalloc(la + lb + lc + 1, 1);
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc);
	return s;
}

char **fab_grid_sets(const struct fab_grid *g, size_t i, size_t *n)
{
	const struct fab_grid_point *p = &g->pt[i];
	char **s = fab_xcalloc(g->nfixed + g->nkeys + 1, sizeof *s);
	size_t m = 0;
	for (size_t k = 0; k < g->nfixed; k++)
		s[m++] = fab_xstrdup(g->fixed[k]);
	for (size_t k = 0; k < g->nkeys; k++)
		s[m++] = cat3(g->keys[k], "=", g->vals[k][p->vi[k]]);
	if (g->seeded) {
		char b[40];
		snprintf(b, sizeof b, "%" PRIu64, p->seed);
		s[m++] = cat3("run.seed", "=", b);
	}
	*n = m;
	return s;
}

void fab_grid_sets_free(char **sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(sets[i]);
	free(sets);
}

/* FNV-1a, 64 bits, over a string and its terminating NUL */
static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;
	return h * 0x100000001b3ULL;
}

/* every point's id: what it computes (the salt, the command, the base
 * scenario's text, its overrides) */
static void make_ids(struct fab_grid *g, const char *salt, const char *scen_text, size_t scen_len)
{
	uint64_t h0 = 0xcbf29ce484222325ULL;
	h0 = fnv(h0, "fabscope-sweep-point/1", 22);
	h0 = fnv(h0, salt, strlen(salt));
	h0 = fnv(h0, cmd_names[g->command], strlen(cmd_names[g->command]));
	h0 = fnv(h0, scen_text, scen_len);
	for (size_t i = 0; i < g->npts; i++) {
		size_t n;
		char **s = fab_grid_sets(g, i, &n);
		uint64_t h = h0;
		for (size_t k = 0; k < n; k++)
			h = fnv(h, s[k], strlen(s[k]));
		fab_grid_sets_free(s, n);
		h ^= h >> 33; /* a finish that spreads every bit over the digits */
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
		h *= 0xc4ceb9fe1a85ec53ULL;
		h ^= h >> 33;
		snprintf(g->pt[i].id, sizeof g->pt[i].id, "%016" PRIx64, h);
	}
}

/* every combination, the first key outermost, seeds innermost */
static int expand(struct fab_grid *g, const uint64_t *seeds, size_t nseeds, struct fab_err *err)
{
	uint64_t n = nseeds;
	for (size_t k = 0; k < g->nkeys; k++) {
		n *= g->nvals[k];
		if (n > FAB_GRID_MAX_POINTS)
			break;
	}
	if (n > FAB_GRID_MAX_POINTS)
		return fab_err_set(err, FAB_EINVAL, "%s: the grid has more than %d points", g->origin,
				   FAB_GRID_MAX_POINTS);
	g->npts = (size_t)n;
	g->pt = fab_xcalloc(g->npts ? g->npts : 1, sizeof *g->pt);
	for (size_t i = 0; i < g->npts; i++) {
		struct fab_grid_point *p = &g->pt[i];
		p->vi = fab_xcalloc(g->nkeys ? g->nkeys : 1, sizeof *p->vi);
		size_t r = i;
		p->seed = seeds[r % nseeds];
		r /= nseeds;
		for (size_t k = g->nkeys; k-- > 0;) {
			p->vi[k] = (uint32_t)(r % g->nvals[k]);
			r /= g->nvals[k];
		}
	}
	return 0;
}

static int bad(struct fab_err *err, const struct fab_grid *g, const struct ynode *n, const char *fmt, const char *a,
	       const char *b)
{
	return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s%s%s", g->origin, n ? n->line : 0, n ? n->col : 0, fmt, a,
			   b ? b : "");
}

static bool key_ok(const char *k)
{
	if (!*k || strlen(k) > 200)
		return false;
	for (const char *c = k; *c; c++)
		if (!(*c == '.' || *c == '_' || *c == '[' || *c == ']' || *c == '-' || (*c >= '0' && *c <= '9') ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
	return true;
}

static bool value_ok(const char *v)
{
	return strlen(v) <= GRID_MAX_STR && !strchr(v, '\n');
}

/* a key's values: a sequence of scalars, or one scalar */
static int read_values(struct fab_grid *g, size_t k, const struct ynode *v, struct fab_err *err)
{
	size_t n = v->kind == Y_SEQ ? v->n : 1;
	if (v->kind == Y_MAP)
		return bad(err, g, v, "vary: ", g->keys[k], ": expected a list of values");
	if (!n)
		return bad(err, g, v, "vary: ", g->keys[k], ": the list of values is empty");
	if (n > GRID_MAX_VALUES)
		return bad(err, g, v, "vary: ", g->keys[k], ": more than 10000 values");
	g->vals[k] = fab_xcalloc(n, sizeof *g->vals[k]);
	g->vpos[k] = fab_xcalloc(n, sizeof *g->vpos[k]);
	for (size_t i = 0; i < n; i++) {
		const struct ynode *s = v->kind == Y_SEQ ? v->vals[i] : v;
		if (s->kind != Y_SCALAR || !value_ok(s->scalar))
			return bad(err, g, s, "vary: ", g->keys[k], ": expected a value (a scalar on one line)");
		g->vals[k][i] = fab_xstrdup(s->scalar);
		g->vpos[k][i] = (struct fab_grid_pos){s->line, s->col};
		g->nvals[k]++;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(g->vals[k][j], s->scalar))
				return bad(err, g, s, "vary: ", g->keys[k], ": a value given twice");
	}
	return 0;
}

int fab_seeds_read(const struct ynode *v, size_t max, uint64_t **seeds, size_t *n, const struct ynode **at, char *why,
		   size_t len)
{
	char w[160];
	uint64_t x;
	*seeds = NULL;
	*n = 0;
	*at = v;
	if (v->kind == Y_SCALAR) { /* seeds: N -> 1..N */
		if (fab_parse_uint(v->scalar, &x, w, sizeof w) || !x || x > max) {
			snprintf(why, len, "expected a count from 1 to %zu, or a list of seeds", max);
			return -1;
		}
		*seeds = fab_xcalloc(x, sizeof **seeds);
		for (uint64_t i = 0; i < x; i++)
			(*seeds)[i] = i + 1;
		*n = x;
		return 0;
	}
	if (v->kind != Y_SEQ || !v->n || v->n > max) {
		snprintf(why, len, "expected a count, or a list of 1 to %zu seeds", max);
		return -1;
	}
	*seeds = fab_xcalloc(v->n, sizeof **seeds);
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *s = v->vals[i];
		const char *wrong = NULL;
		if (s->kind != Y_SCALAR || fab_parse_uint(s->scalar, &x, w, sizeof w))
			wrong = "expected a whole number";
		for (size_t j = 0; !wrong && j < i; j++)
			if ((*seeds)[j] == x)
				wrong = "a seed given twice";
		if (wrong) {
			snprintf(why, len, "%s", wrong);
			free(*seeds);
			*seeds = NULL;
			*n = 0;
			*at = s;
			return -1;
		}
		(*seeds)[(*n)++] = x;
	}
	return 0;
}

static void add_field(struct fab_grid *g, const char *name, const char *path)
{
	g->fname = fab_xrealloc(g->fname, g->nfields + 1, sizeof *g->fname);
	g->fpath = fab_xrealloc(g->fpath, g->nfields + 1, sizeof *g->fpath);
	g->fname[g->nfields] = fab_xstrdup(name);
	g->fpath[g->nfields] = fab_xstrdup(path);
	g->nfields++;
}

/* a column: PATH, or PATH / N or PATH * N (a number scaled: ps to us);
 * the path into buf, the operator and N */
static bool field_split(const char *spec, char *buf, size_t len, char *op, double *n)
{
	const char *o = strpbrk(spec, "/*");
	*op = 0;
	*n = 1;
	size_t pl = o ? (size_t)(o - spec) : strlen(spec);
	while (pl && spec[pl - 1] == ' ')
		pl--;
	if (pl >= len)
		return false;
	memcpy(buf, spec, pl);
	buf[pl] = 0;
	if (o) {
		char *e;
		*op = *o;
		*n = strtod(o + 1, &e);
		while (*e == ' ')
			e++;
		if (e == o + 1 || *e || !isfinite(*n) || *n == 0)
			return false;
	}
	return true;
}

/* the value of column spec in doc: scaled when it is a number */
static json_t *field_value(json_t *doc, const char *spec)
{
	char path[512], op;
	double n;
	if (!field_split(spec, path, sizeof path, &op, &n))
		return NULL;
	json_t *x = fab_json_path(doc, path);
	if (!x || json_is_object(x) || json_is_array(x))
		return NULL;
	if (!op || !json_is_number(x))
		return json_incref(x);
	double v = json_number_value(x);
	return json_real(op == '/' ? v / n : v * n);
}

static bool path_ok(const char *p)
{
	/* name(.name|[int])* */
	if (!*p || strlen(p) > 400)
		return false;
	const char *c = p;
	while (*c) {
		if (*c == '[') {
			c++;
			if (*c == '-')
				c++;
			if (!(*c >= '0' && *c <= '9'))
				return false;
			while (*c >= '0' && *c <= '9')
				c++;
			if (*c++ != ']')
				return false;
		} else if (*c == '.' && c != p && c[1] && c[1] != '.' && c[1] != '[') {
			c++;
		} else if (*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			   (*c >= '0' && *c <= '9') || *c == '-') {
			c++;
		} else {
			return false;
		}
	}
	return true;
}

static bool spec_ok(const char *spec)
{
	char path[512], op;
	double n;
	return field_split(spec, path, sizeof path, &op, &n) && path_ok(path);
}

/* each value alone (with the fixed overrides) must make a scenario: a
 * typo in a key or a value out of range is told at its place now, not
 * once per point later */
static int check_values(struct fab_grid *g, struct fab_err *err)
{
	const char **sets = fab_xcalloc(g->nfixed + 1, sizeof *sets);
	int rc = 0;
	for (size_t i = 0; i < g->nfixed; i++)
		sets[i] = g->fixed[i];
	struct fab_err e = {0};
	struct fab_config *c = fab_config_load(g->scenario, sets, g->nfixed, &e);
	if (!c) {
		rc = fab_err_set(err, e.code, "%s: scenario and set: %s", g->origin, e.msg);
		goto out;
	}
	fab_config_free(c);
	for (size_t k = 0; k < g->nkeys && !rc; k++)
		for (size_t v = 0; v < g->nvals[k] && !rc; v++) {
			char *s = cat3(g->keys[k], "=", g->vals[k][v]);
			sets[g->nfixed] = s;
			c = fab_config_load(g->scenario, sets, g->nfixed + 1, &e);
			if (!c)
				rc = fab_err_set(err, e.code, "%s:%u:%u: vary: %s: %s", g->origin, g->vpos[k][v].line,
						 g->vpos[k][v].col, s, e.msg);
			fab_config_free(c);
			free(s);
		}
out:
	free(sets);
	return rc;
}

static int parse_grid(struct fab_grid *g, const struct ynode *root, const char *dir, char **scen_text, size_t *scen_len,
		      uint64_t **seeds, size_t *nseeds, struct fab_err *err)
{
	if (root->kind != Y_MAP)
		return bad(err, g, root, "expected a mapping (scenario, command, set, vary, seeds, results)", "", NULL);
	const struct ynode *vary = NULL, *results = NULL, *seedn = NULL;
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->keys[i];
		const struct ynode *v = root->vals[i];
		struct ynode at = {.line = root->key_line[i], .col = root->key_col[i]};
		if (!strcmp(k, "scenario")) {
			if (v->kind != Y_SCALAR || !*v->scalar)
				return bad(err, g, v, "scenario: expected the base scenario's path", "", NULL);
			char *p = v->scalar[0] == '/' ? fab_xstrdup(v->scalar) : cat3(dir, "/", v->scalar);
			char real[PATH_MAX];
			if (!realpath(p, real)) {
				int e = errno;
				free(p);
				return fab_err_set(err, FAB_EIO, "%s:%u:%u: scenario: %s: %s", g->origin, v->line,
						   v->col, v->scalar, strerror(e));
			}
			free(p);
			g->scenario = fab_xstrdup(real);
			if (fab_read_text(real, "scenario", FAB_SCENARIO_MAX_BYTES, false, scen_text, scen_len, err))
				return err->code;
		} else if (!strcmp(k, "command")) {
			int c = -1;
			for (int j = 0; j < 3 && v->kind == Y_SCALAR; j++)
				if (!strcmp(v->scalar, cmd_names[j]))
					c = j;
			if (c < 0)
				return bad(err, g, v, "command: expected sim, coll or matrix", "", NULL);
			g->command = c;
		} else if (!strcmp(k, "set")) {
			if (v->kind != Y_MAP)
				return bad(err, g, v, "set: expected a mapping of keys to values", "", NULL);
			g->fixed = fab_xcalloc(v->n ? v->n : 1, sizeof *g->fixed);
			for (size_t j = 0; j < v->n; j++) {
				struct ynode kat = {.line = v->key_line[j], .col = v->key_col[j]};
				if (!key_ok(v->keys[j]))
					return bad(err, g, &kat, "set: not a key: ", v->keys[j], NULL);
				if (v->vals[j]->kind != Y_SCALAR || !value_ok(v->vals[j]->scalar))
					return bad(err, g, v->vals[j], "set: ", v->keys[j],
						   ": expected a value (a scalar on one line)");
				g->fixed[g->nfixed++] = cat3(v->keys[j], "=", v->vals[j]->scalar);
			}
		} else if (!strcmp(k, "vary")) {
			if (v->kind != Y_MAP || !v->n)
				return bad(err, g, v, "vary: expected a mapping of keys to lists of values", "", NULL);
			if (v->n > FAB_GRID_MAX_KEYS)
				return bad(err, g, v, "vary: more than 32 keys", "", NULL);
			vary = v;
		} else if (!strcmp(k, "seeds")) {
			seedn = v;
		} else if (!strcmp(k, "results")) {
			if (v->kind != Y_MAP || !v->n || v->n > GRID_MAX_FIELDS)
				return bad(err, g, v, "results: expected a mapping of 1 to 64 column names to paths",
					   "", NULL);
			results = v;
		} else {
			return bad(err, g, &at, "unknown key \"", k,
				   "\" (expected scenario, command, set, vary, seeds, results)");
		}
	}
	if (!vary && !seedn)
		return bad(err, g, root, "nothing to sweep: expected vary (keys and their values) or seeds", "", NULL);
	if (vary) {
		g->keys = fab_xcalloc(vary->n, sizeof *g->keys);
		g->vals = fab_xcalloc(vary->n, sizeof *g->vals);
		g->nvals = fab_xcalloc(vary->n, sizeof *g->nvals);
		g->vpos = fab_xcalloc(vary->n, sizeof *g->vpos);
		for (size_t j = 0; j < vary->n; j++) {
			struct ynode kat = {.line = vary->key_line[j], .col = vary->key_col[j]};
			if (!key_ok(vary->keys[j]))
				return bad(err, g, &kat, "vary: not a key: ", vary->keys[j], NULL);
			if (!strcmp(vary->keys[j], "run.seed"))
				return bad(err, g, &kat, "vary: run.seed: give seeds instead", "", NULL);
			g->keys[j] = fab_xstrdup(vary->keys[j]);
			g->nkeys++;
			if (read_values(g, j, vary->vals[j], err))
				return err->code;
		}
	}
	if (seedn) {
		g->seeded = true;
		const struct ynode *at;
		char why[96];
		if (fab_seeds_read(seedn, GRID_MAX_VALUES, seeds, nseeds, &at, why, sizeof why))
			return bad(err, g, at, "seeds: ", why, NULL);
	} else {
		*seeds = fab_xcalloc(1, sizeof **seeds);
		*nseeds = 1;
	}
	if (results) {
		for (size_t j = 0; j < results->n; j++) {
			const struct ynode *p = results->vals[j];
			struct ynode kat = {.line = results->key_line[j], .col = results->key_col[j]};
			if (!key_ok(results->keys[j]) || strchr(results->keys[j], '[') || strchr(results->keys[j], ']'))
				return bad(err, g, &kat, "results: not a column name: ", results->keys[j], NULL);
			if (p->kind != Y_SCALAR || !spec_ok(p->scalar))
				return bad(err, g, p, "results: ", results->keys[j],
					   ": expected a path into the result document, such as "
					   "collective.rows[-1].busbw_GBps");
			add_field(g, results->keys[j], p->scalar);
		}
	} else {
		g->default_fields = true;
		for (size_t j = 0; j < sizeof dflt_fields / sizeof *dflt_fields; j++)
			if (dflt_fields[j].cmd < 0 || dflt_fields[j].cmd == g->command)
				add_field(g, dflt_fields[j].name, dflt_fields[j].path);
	}
	return 0;
}

struct fab_grid *fab_grid_load(const char *path, const char *salt, struct fab_err *err)
{
	char *text = NULL, *scen = NULL;
	size_t len = 0, slen = 0, nseeds = 0;
	uint64_t *seeds = NULL;
	struct ynode *root = NULL;
	struct fab_grid *g = fab_xcalloc(1, sizeof *g);
	g->origin = fab_xstrdup(path);
	g->command = FAB_GRID_SIM;
	if (fab_read_text(path, "grid", GRID_MAX_BYTES, true, &text, &len, err))
		goto fail;
	root = fab_ydom_parse(text, len, g->origin, err);
	if (!root)
		goto fail;
	char *dup = fab_xstrdup(path);
	int rc = parse_grid(g, root, dirname(dup), &scen, &slen, &seeds, &nseeds, err);
	free(dup);
	if (rc || expand(g, seeds, nseeds, err) || check_values(g, err))
		goto fail;
	if (scen)
		make_ids(g, salt, scen, slen);
	else
		make_ids(g, salt, "<built-in>", 10);
	free(seeds);
	free(scen);
	free(text);
	fab_ydom_free(root);
	return g;
fail:
	free(seeds);
	free(scen);
	free(text);
	fab_ydom_free(root);
	fab_grid_free(g);
	return NULL;
}

/* ---- the plan ---- */

static json_t *strs(char *const *s, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(s[i]));
	return a;
}

json_t *fab_grid_plan_json(const struct fab_grid *g)
{
	json_t *keys = json_array(), *fields = json_array(), *pts = json_array();
	for (size_t k = 0; k < g->nkeys; k++)
		json_array_append_new(
			keys, json_pack("{s:s, s:o}", "key", g->keys[k], "values", strs(g->vals[k], g->nvals[k])));
	for (size_t i = 0; i < g->nfields; i++)
		json_array_append_new(fields, json_pack("{s:s, s:s}", "name", g->fname[i], "path", g->fpath[i]));
	for (size_t i = 0; i < g->npts; i++)
		json_array_append_new(pts, json_string(g->pt[i].id));
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:b, s:o, s:b, s:o}", "schema", "fabscope.sweep-plan/1",
			      "command", cmd_names[g->command], "scenario",
			      g->scenario ? json_string(g->scenario) : json_null(), "set", strs(g->fixed, g->nfixed),
			      "vary", keys, "seeded", g->seeded, "fields", fields, "default_fields", g->default_fields,
			      "ids", pts);
	json_t *seeds = json_array();
	if (g->seeded) {
		/* the seeds in order: the innermost loop */
		size_t per = g->npts;
		for (size_t k = 0; k < g->nkeys; k++)
			per /= g->nvals[k];
		for (size_t i = 0; i < per; i++)
			json_array_append_new(seeds, json_integer((json_int_t)g->pt[i].seed));
	}
	json_object_set_new(o, "seeds", seeds);
	return o;
}

static int pbad(struct fab_err *err, const char *origin, const char *what)
{
	return fab_err_set(err, FAB_EINVAL, "%s: %s", origin, what);
}

static bool str_ok(const json_t *s)
{
	return json_is_string(s) && json_string_length(s) <= GRID_MAX_STR &&
		strlen(json_string_value(s)) == json_string_length(s);
}

struct fab_grid *fab_grid_from_plan(const json_t *j, const char *origin, struct fab_err *err)
{
	struct fab_grid *g = fab_xcalloc(1, sizeof *g);
	uint64_t *seeds = NULL;
	g->origin = fab_xstrdup(origin);
	json_t *v;
	const char *s;
	if (!json_is_object(j) || !(v = json_object_get(j, "schema")) || !json_is_string(v) ||
	    strcmp(json_string_value(v), "fabscope.sweep-plan/1")) {
		pbad(err, origin, "not a sweep plan (schema fabscope.sweep-plan/1)");
		goto fail;
	}
	g->command = -1;
	v = json_object_get(j, "command");
	for (int c = 0; c < 3 && json_is_string(v); c++)
		if (!strcmp(json_string_value(v), cmd_names[c]))
			g->command = c;
	if (g->command < 0) {
		pbad(err, origin, "command: expected sim, coll or matrix");
		goto fail;
	}
	v = json_object_get(j, "scenario");
	if (str_ok(v) && (s = json_string_value(v))[0] == '/')
		g->scenario = fab_xstrdup(s);
	else if (!json_is_null(v)) {
		pbad(err, origin, "scenario: expected an absolute path or null");
		goto fail;
	}
	v = json_object_get(j, "set");
	if (!json_is_array(v) || json_array_size(v) > 10000) {
		pbad(err, origin, "set: expected a list");
		goto fail;
	}
	g->fixed = fab_xcalloc(json_array_size(v) + 1, sizeof *g->fixed);
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *x = json_array_get(v, i);
		if (!str_ok(x) || !strchr(json_string_value(x), '=')) {
			pbad(err, origin, "set: expected key=value strings");
			goto fail;
		}
		g->fixed[g->nfixed++] = fab_xstrdup(json_string_value(x));
	}
	v = json_object_get(j, "vary");
	if (!json_is_array(v) || json_array_size(v) > FAB_GRID_MAX_KEYS) {
		pbad(err, origin, "vary: expected a list of at most 32 keys");
		goto fail;
	}
	size_t nk = json_array_size(v);
	g->keys = fab_xcalloc(nk + 1, sizeof *g->keys);
	g->vals = fab_xcalloc(nk + 1, sizeof *g->vals);
	g->nvals = fab_xcalloc(nk + 1, sizeof *g->nvals);
	g->vpos = fab_xcalloc(nk + 1, sizeof *g->vpos);
	for (size_t k = 0; k < nk; k++) {
		json_t *e = json_array_get(v, k), *key = json_object_get(e, "key"),
		       *vals = json_object_get(e, "values");
		if (!str_ok(key) || !key_ok(json_string_value(key)) || !json_is_array(vals) || !json_array_size(vals) ||
		    json_array_size(vals) > GRID_MAX_VALUES) {
			pbad(err, origin, "vary: expected {key, values} with 1 to 10000 values");
			goto fail;
		}
		g->keys[k] = fab_xstrdup(json_string_value(key));
		g->nkeys++;
		g->vals[k] = fab_xcalloc(json_array_size(vals), sizeof *g->vals[k]);
		g->vpos[k] = fab_xcalloc(json_array_size(vals), sizeof *g->vpos[k]);
		for (size_t i = 0; i < json_array_size(vals); i++) {
			json_t *x = json_array_get(vals, i);
			if (!str_ok(x) || !value_ok(json_string_value(x))) {
				pbad(err, origin, "vary: a value is not a string on one line");
				goto fail;
			}
			g->vals[k][i] = fab_xstrdup(json_string_value(x));
			g->nvals[k]++;
		}
	}
	v = json_object_get(j, "fields");
	if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > GRID_MAX_FIELDS) {
		pbad(err, origin, "fields: expected a list of 1 to 64 columns");
		goto fail;
	}
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *e = json_array_get(v, i), *n = json_object_get(e, "name"), *p = json_object_get(e, "path");
		if (!str_ok(n) || !key_ok(json_string_value(n)) || !str_ok(p) || !spec_ok(json_string_value(p))) {
			pbad(err, origin, "fields: expected {name, path}");
			goto fail;
		}
		add_field(g, json_string_value(n), json_string_value(p));
	}
	g->seeded = json_is_true(json_object_get(j, "seeded"));
	g->default_fields = json_is_true(json_object_get(j, "default_fields"));
	v = json_object_get(j, "seeds");
	size_t ns = g->seeded ? json_array_size(v) : 1;
	if (!json_is_array(v) || !ns || ns > GRID_MAX_VALUES) {
		pbad(err, origin, "seeds: expected a list of 1 to 10000 seeds");
		goto fail;
	}
	seeds = fab_xcalloc(ns, sizeof *seeds);
	for (size_t i = 0; g->seeded && i < ns; i++) {
		json_t *x = json_array_get(v, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0) {
			pbad(err, origin, "seeds: expected whole numbers");
			goto fail;
		}
		seeds[i] = (uint64_t)json_integer_value(x);
	}
	if (expand(g, seeds, ns, err))
		goto fail;
	v = json_object_get(j, "ids");
	if (!json_is_array(v) || json_array_size(v) != g->npts) {
		pbad(err, origin, "ids: expected one per point");
		goto fail;
	}
	for (size_t i = 0; i < g->npts; i++) {
		json_t *x = json_array_get(v, i);
		s = json_is_string(x) ? json_string_value(x) : "";
		if (strlen(s) != FAB_GRID_ID_LEN || strspn(s, "0123456789abcdef") != FAB_GRID_ID_LEN) {
			pbad(err, origin, "ids: expected 16 hex digits each");
			goto fail;
		}
		memcpy(g->pt[i].id, s, FAB_GRID_ID_LEN + 1);
	}
	free(seeds);
	return g;
fail:
	free(seeds);
	fab_grid_free(g);
	return NULL;
}

/* ---- results ---- */

json_t *fab_json_path(json_t *doc, const char *path)
{
	const char *c = path;
	json_t *v = doc;
	char name[128];
	while (*c && v) {
		if (*c == '.')
			c++;
		if (*c == '[') {
			char *end;
			long i = strtol(c + 1, &end, 10);
			if (*end != ']' || !json_is_array(v))
				return NULL;
			long n = (long)json_array_size(v);
			if (i < 0)
				i += n;
			if (i < 0 || i >= n)
				return NULL;
			v = json_array_get(v, (size_t)i);
			c = end + 1;
			continue;
		}
		size_t l = strcspn(c, ".[");
		if (!l || l >= sizeof name || !json_is_object(v))
			return NULL;
		memcpy(name, c, l);
		name[l] = 0;
		v = json_object_get(v, name);
		c += l;
	}
	return v;
}

json_t *fab_grid_merge(const struct fab_grid *g, json_t *const *docs, const char *const *errors)
{
	bool *keep = fab_xcalloc(g->nfields ? g->nfields : 1, sizeof *keep);
	for (size_t f = 0; f < g->nfields; f++)
		for (size_t i = 0; i < g->npts && !keep[f]; i++) {
			json_t *v = docs[i] ? field_value(docs[i], g->fpath[f]) : NULL;
			keep[f] = !g->default_fields || v;
			json_decref(v);
		}
	json_t *fields = json_array(), *pts = json_array();
	for (size_t f = 0; f < g->nfields; f++)
		if (keep[f])
			json_array_append_new(fields,
					      json_pack("{s:s, s:s}", "name", g->fname[f], "path", g->fpath[f]));
	size_t ok = 0, failed = 0, missing = 0;
	for (size_t i = 0; i < g->npts; i++) {
		json_t *vals = json_object(), *res = json_object();
		for (size_t k = 0; k < g->nkeys; k++)
			json_object_set_new(vals, g->keys[k], json_string(g->vals[k][g->pt[i].vi[k]]));
		const char *status = docs[i] ? "ok" : errors[i] ? "failed" : "missing";
		ok += docs[i] != NULL;
		failed += !docs[i] && errors[i];
		missing += !docs[i] && !errors[i];
		for (size_t f = 0; f < g->nfields; f++) {
			if (!keep[f])
				continue;
			json_t *x = docs[i] ? field_value(docs[i], g->fpath[f]) : NULL;
			json_object_set_new(res, g->fname[f], x ? x : json_null());
		}
		json_t *p = json_pack("{s:I, s:s, s:o}", "point", (json_int_t)i, "id", g->pt[i].id, "values", vals);
		if (g->seeded)
			json_object_set_new(p, "seed", json_integer((json_int_t)g->pt[i].seed));
		json_object_set_new(p, "status", json_string(status));
		if (!docs[i] && errors[i])
			json_object_set_new(p, "error", json_string(errors[i]));
		json_object_set_new(p, "results", res);
		json_array_append_new(pts, p);
	}
	free(keep);
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:b, s:o, s:o, s:{s:I, s:I, s:I, s:I}}", "schema",
			 "fabscope.sweep/1", "command", cmd_names[g->command], "scenario",
			 g->scenario ? json_string(g->scenario) : json_null(), "set", strs(g->fixed, g->nfixed), "keys",
			 strs(g->keys, g->nkeys), "seeded", g->seeded, "fields", fields, "points", pts, "summary",
			 "points", (json_int_t)g->npts, "ok", (json_int_t)ok, "failed", (json_int_t)failed, "missing",
			 (json_int_t)missing);
}

/* a cell's text: CSV keeps 10 significant digits, the text table 4 */
static void cell(const json_t *v, bool csv, char *buf, size_t len)
{
	if (!v || json_is_null(v))
		snprintf(buf, len, "%s", csv ? "" : "-");
	else if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, csv ? "%.10g" : "%.4g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		snprintf(buf, len, "%s", csv ? "" : "-");
}

static void csv_put(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	if (strpbrk(s, ",\"\n\r")) {
		fputc('"', f);
		for (const char *c = s; *c; c++) {
			if (*c == '"')
				fputc('"', f);
			fputc(*c, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
}

/* the table's columns and each row's cells, for both renderings */
struct table {
	size_t ncol, nrow;
	char **cell; /* [(nrow + 1) * ncol], row 0 the header */
};

static struct table make_table(const json_t *m, bool csv)
{
	json_t *keys = json_object_get(m, "keys"), *fields = json_object_get(m, "fields"),
	       *pts = json_object_get(m, "points");
	bool seeded = json_is_true(json_object_get(m, "seeded"));
	size_t nk = json_array_size(keys), nf = json_array_size(fields);
	struct table t = {1 + nk + seeded + 1 + nf + 1, json_array_size(pts), NULL};
	t.cell = fab_xcalloc((t.nrow + 1) * t.ncol, sizeof *t.cell);
	size_t c = 0;
	t.cell[c++] = fab_xstrdup("point");
	for (size_t k = 0; k < nk; k++)
		t.cell[c++] = fab_xstrdup(json_string_value(json_array_get(keys, k)));
	if (seeded)
		t.cell[c++] = fab_xstrdup("seed");
	t.cell[c++] = fab_xstrdup("status");
	for (size_t f = 0; f < nf; f++)
		t.cell[c++] = fab_xstrdup(json_string_value(json_object_get(json_array_get(fields, f), "name")));
	t.cell[c++] = fab_xstrdup("id");
	char b[GRID_MAX_STR + 64];
	for (size_t r = 0; r < t.nrow; r++) {
		json_t *p = json_array_get(pts, r), *vals = json_object_get(p, "values"),
		       *res = json_object_get(p, "results");
		cell(json_object_get(p, "point"), csv, b, sizeof b);
		t.cell[c++] = fab_xstrdup(b);
		for (size_t k = 0; k < nk; k++) {
			cell(json_object_get(vals, json_string_value(json_array_get(keys, k))), csv, b, sizeof b);
			t.cell[c++] = fab_xstrdup(b);
		}
		if (seeded) {
			cell(json_object_get(p, "seed"), csv, b, sizeof b);
			t.cell[c++] = fab_xstrdup(b);
		}
		cell(json_object_get(p, "status"), csv, b, sizeof b);
		t.cell[c++] = fab_xstrdup(b);
		for (size_t f = 0; f < nf; f++) {
			const char *name = json_string_value(json_object_get(json_array_get(fields, f), "name"));
			cell(json_object_get(res, name), csv, b, sizeof b);
			t.cell[c++] = fab_xstrdup(b);
		}
		cell(json_object_get(p, "id"), csv, b, sizeof b);
		t.cell[c++] = fab_xstrdup(b);
	}
	return t;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < (t->nrow + 1) * t->ncol; i++)
		free(t->cell[i]);
	free(t->cell);
}

int fab_grid_write_csv(FILE *f, const json_t *m)
{
	struct table t = make_table(m, true);
	for (size_t r = 0; r <= t.nrow; r++) {
		for (size_t c = 0; c < t.ncol; c++)
			csv_put(f, t.cell[r * t.ncol + c], c == 0);
		fputc('\n', f);
	}
	table_free(&t);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_grid_write_text(FILE *f, const json_t *m)
{
	struct table t = make_table(m, false);
	size_t *w = fab_xcalloc(t.ncol, sizeof *w);
	for (size_t r = 0; r <= t.nrow; r++)
		for (size_t c = 0; c < t.ncol; c++)
			w[c] = FAB_MAX(w[c], strlen(t.cell[r * t.ncol + c]));
	for (size_t r = 0; r <= t.nrow; r++) {
		/* the id is for files, not for reading: left out of the text */
		for (size_t c = 0; c + 1 < t.ncol; c++)
			fprintf(f, "%s%-*s", c ? "  " : "", c + 2 < t.ncol ? (int)w[c] : 0, t.cell[r * t.ncol + c]);
		fputc('\n', f);
	}
	json_t *s = json_object_get(m, "summary");
	fprintf(f,
		"%" JSON_INTEGER_FORMAT " points: %" JSON_INTEGER_FORMAT " ok, %" JSON_INTEGER_FORMAT
		" failed, %" JSON_INTEGER_FORMAT " not run\n",
		json_integer_value(json_object_get(s, "points")), json_integer_value(json_object_get(s, "ok")),
		json_integer_value(json_object_get(s, "failed")), json_integer_value(json_object_get(s, "missing")));
	free(w);
	table_free(&t);
	return ferror(f) ? FAB_EIO : 0;
}
