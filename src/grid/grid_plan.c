/*
 * grid_plan.c - the plan (JSON) that carries a design space to other
 * processes and machines, read back as hostile input; the merged table of
 * its points' result documents, as JSON, CSV and aligned text.
 */
#include <string.h>

#include "grid_int.h"

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
			      "command", fab_grid_cmd_name(g->command), "scenario",
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
		if (!strcmp(json_string_value(v), fab_grid_cmd_name(c)))
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
		if (!str_ok(key) || !grid_key_ok(json_string_value(key)) || !json_is_array(vals) ||
		    !json_array_size(vals) || json_array_size(vals) > GRID_MAX_VALUES) {
			pbad(err, origin, "vary: expected {key, values} with 1 to 10000 values");
			goto fail;
		}
		g->keys[k] = fab_xstrdup(json_string_value(key));
		g->nkeys++;
		g->vals[k] = fab_xcalloc(json_array_size(vals), sizeof *g->vals[k]);
		g->vpos[k] = fab_xcalloc(json_array_size(vals), sizeof *g->vpos[k]);
		for (size_t i = 0; i < json_array_size(vals); i++) {
			json_t *x = json_array_get(vals, i);
			if (!str_ok(x) || !grid_value_ok(json_string_value(x))) {
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
		if (!str_ok(n) || !grid_key_ok(json_string_value(n)) || !str_ok(p) ||
		    !grid_spec_ok(json_string_value(p))) {
			pbad(err, origin, "fields: expected {name, path}");
			goto fail;
		}
		grid_add_field(g, json_string_value(n), json_string_value(p));
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
	if (grid_expand(g, seeds, ns, err))
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
			json_t *v = docs[i] ? grid_field_value(docs[i], g->fpath[f]) : NULL;
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
			json_t *x = docs[i] ? grid_field_value(docs[i], g->fpath[f]) : NULL;
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
			 "fabscope.sweep/1", "command", fab_grid_cmd_name(g->command), "scenario",
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
