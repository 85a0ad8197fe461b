/*
 * grid.c - a design space read from GRID.yaml: the grid file, its points
 * and their ids, the columns of their results.  The plan that carries it
 * to other processes and the merged table are grid_plan.c's.
 */
#include "grid_int.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/tok.h"
#include "../scenario/scenario.h"
#include "../scenario/ydom.h"

#define GRID_MAX_BYTES (1u << 20)

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
int grid_expand(struct fab_grid *g, const uint64_t *seeds, size_t nseeds, struct fab_err *err)
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

bool grid_key_ok(const char *k)
{
	if (!*k || strlen(k) > 200)
		return false;
	for (const char *c = k; *c; c++)
		if (!(*c == '.' || *c == '_' || *c == '[' || *c == ']' || *c == '-' || (*c >= '0' && *c <= '9') ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
	return true;
}

bool grid_value_ok(const char *v)
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
		if (s->kind != Y_SCALAR || !grid_value_ok(s->scalar))
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

void grid_add_field(struct fab_grid *g, const char *name, const char *path)
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
json_t *grid_field_value(json_t *doc, const char *spec)
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

bool grid_spec_ok(const char *spec)
{
	char path[512], op;
	double n;
	return field_split(spec, path, sizeof path, &op, &n) && path_ok(path);
}

/* the scenario bytes a sweep parses to check its values, at most */
#define GRID_CHECK_BYTES (64.0 * 1024 * 1024)

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
	/* each value with the whole scenario while that costs less than
	 * parsing GRID_CHECK_BYTES; past that (a 15 MB scenario swept over
	 * 10,000 values) each value alone, its key and range, but for each
	 * key's first and last (a point whose value fails a check across keys
	 * then fails when it runs, and says so) */
	struct stat st;
	double each = g->scenario && !stat(g->scenario, &st) ? (double)st.st_size : 4096;
	size_t nv = 0;
	for (size_t k = 0; k < g->nkeys; k++)
		nv += g->nvals[k];
	bool whole = each * (double)nv <= GRID_CHECK_BYTES;
	for (size_t k = 0; k < g->nkeys && !rc; k++)
		for (size_t v = 0; v < g->nvals[k] && !rc; v++) {
			char *s = cat3(g->keys[k], "=", g->vals[k][v]);
			sets[g->nfixed] = s;
			const char *one = s;
			int vrc = 0;
			/* (the first and last of each key with the whole scenario
			 * all the same: where ranges cross, as kmin and kmax) */
			if (whole || v == 0 || v + 1 == g->nvals[k]) {
				c = fab_config_load(g->scenario, sets, g->nfixed + 1, &e);
				vrc = c ? 0 : FAB_EINVAL;
				fab_config_free(c);
			} else {
				vrc = fab_config_check_sets(&one, 1, &e);
			}
			if (vrc)
				rc = fab_err_set(err, e.code, "%s:%u:%u: vary: %s: %s", g->origin, g->vpos[k][v].line,
						 g->vpos[k][v].col, s, e.msg);
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
				if (!grid_key_ok(v->keys[j]))
					return bad(err, g, &kat, "set: not a key: ", v->keys[j], NULL);
				if (v->vals[j]->kind != Y_SCALAR || !grid_value_ok(v->vals[j]->scalar))
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
			if (!grid_key_ok(vary->keys[j]))
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
			if (!grid_key_ok(results->keys[j]) || strchr(results->keys[j], '[') ||
			    strchr(results->keys[j], ']'))
				return bad(err, g, &kat, "results: not a column name: ", results->keys[j], NULL);
			if (p->kind != Y_SCALAR || !grid_spec_ok(p->scalar))
				return bad(err, g, p, "results: ", results->keys[j],
					   ": expected a path into the result document, such as "
					   "collective.rows[-1].busbw_GBps");
			grid_add_field(g, results->keys[j], p->scalar);
		}
	} else {
		g->default_fields = true;
		for (size_t j = 0; j < sizeof dflt_fields / sizeof *dflt_fields; j++)
			if (dflt_fields[j].cmd < 0 || dflt_fields[j].cmd == g->command)
				grid_add_field(g, dflt_fields[j].name, dflt_fields[j].path);
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
	root = fab_ydom_parse(
		text, len, g->origin,
		"a sweep grid is a mapping with keys scenario, command, set, vary, seeds and results (doc/sweep.md)",
		err);
	if (!root)
		goto fail;
	char *dup = fab_xstrdup(path);
	int rc = parse_grid(g, root, dirname(dup), &scen, &slen, &seeds, &nseeds, err);
	free(dup);
	if (rc || grid_expand(g, seeds, nseeds, err) || check_values(g, err))
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
