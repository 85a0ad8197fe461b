/*
 * schema.c - a document checked against the JSON Schema that describes it
 * (doc/schema/, compiled in): what fabscope writes is what its readers
 * accept, and a hand-edited or foreign document is refused with the place
 * that is wrong ("r.json: collective.rows[3].busbw_GBps: expected a number
 * of at least 0, got -5").
 *
 * The keywords doc/schema/ uses, with JSON Schema's meaning: type (one or
 * a list), const, enum, properties, required, additionalProperties (false
 * or a schema), propertyNames, items, minItems, maxItems, minimum,
 * maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
 * pattern (a POSIX extended expression), $ref into the same schema's
 * $defs, allOf, anyOf, oneOf, not, if/then/else.  Other keywords are
 * ignored (description, title, $id, $schema).  Numbers are finite here
 * whatever the schema says (the report would draw inf%).
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"

/* the schemas, from doc/schema/NAME.schema.json (build/gen/schemas.c) */
extern const char *const fab_schema_names[];
extern const char *const fab_schema_texts[];

/* a schema object's keywords, looked up once (a matrix of 36 M cells is
 * checked against one items schema 36 M times) */
enum { T_OBJECT = 1, T_ARRAY = 2, T_STRING = 4, T_INTEGER = 8, T_NUMBER = 16, T_BOOLEAN = 32, T_NULL = 64 };
struct node {
	const json_t *s;
	unsigned types; /* 0: any */
	const json_t *ref, *cnst, *enm, *props, *req, *extra, *names, *items;
	const json_t *all, *any, *one, *not, *iff, *then, *els;
	double min, max, xmin, xmax;                      /* NAN: none */
	long long min_len, max_len, min_items, max_items; /* -1: none */
	bool has_re;
	regex_t re;
	const char *pattern;
};

#define CACHE_SLOTS 4096 /* a power of two, above the schemas' objects */

struct ctx {
	const json_t *root; /* the schema, for $ref */
	const char *doc;
	struct fab_err *err;
	char path[512];
	struct node *cache; /* [CACHE_SLOTS], open addressing by s */
};

const char *fab_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int fail(struct ctx *c, const char *fmt, const char *a, const json_t *v)
{
	char want[300];
	snprintf(want, sizeof want, fmt, a);
	return fab_err_set(c->err, FAB_EINVAL, "%s: %s: expected %s, got %s", c->doc,
			   *c->path ? c->path : "(the document)", want, v ? fab_json_kind(v) : "nothing");
}

/* a number's value in words, for a message */
static int fail_num(struct ctx *c, const char *what, double bound, const json_t *v)
{
	char want[96];
	snprintf(want, sizeof want, "a number %s %.10g", what, bound);
	return fab_err_set(c->err, FAB_EINVAL, "%s: %s: expected %s, got %.10g", c->doc,
			   *c->path ? c->path : "(the document)", want, json_number_value(v));
}

static int check(struct ctx *c, const json_t *s, const json_t *v, int depth);

/* the schema a "$ref": "#/$defs/name" names (NULL: none) */
static const json_t *deref(const struct ctx *c, const char *ref)
{
	if (!strncmp(ref, "#/$defs/", 8))
		return json_object_get(json_object_get(c->root, "$defs"), ref + 8);
	if (!strncmp(ref, "#/definitions/", 14))
		return json_object_get(json_object_get(c->root, "definitions"), ref + 14);
	return NULL;
}

/* a quiet check: whether v matches s (for anyOf, oneOf, not, if) */
static bool matches(struct ctx *c, const json_t *s, const json_t *v, int depth)
{
	struct fab_err e = {0};
	struct ctx q = *c;
	q.err = &e;
	return !check(&q, s, v, depth);
}

static double num_or_nan(const json_t *s, const char *k)
{
	const json_t *v = json_object_get(s, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long int_or_none(const json_t *s, const char *k)
{
	const json_t *v = json_object_get(s, k);
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static unsigned type_bits(const json_t *t)
{
	static const char *const names[] = {"object", "array", "string", "integer", "number", "boolean", "null"};
	unsigned m = 0;
	for (size_t k = 0; k < FAB_ARRAY_LEN(names); k++) {
		bool in = json_is_string(t) && !strcmp(json_string_value(t), names[k]);
		size_t i;
		const json_t *x;
		json_array_foreach(t, i, x) in |= json_is_string(x) && !strcmp(json_string_value(x), names[k]);
		m |= in ? 1u << k : 0;
	}
	return m;
}

/* s's keywords, from the cache or looked up now */
static const struct node *compile(struct ctx *c, const json_t *s)
{
	size_t h = ((uintptr_t)s >> 4) & (CACHE_SLOTS - 1);
	while (c->cache[h].s && c->cache[h].s != s)
		h = (h + 1) & (CACHE_SLOTS - 1);
	struct node *n = &c->cache[h];
	if (n->s)
		return n;
	n->s = s;
	n->types = type_bits(json_object_get(s, "type"));
	const json_t *r = json_object_get(s, "$ref");
	n->ref = json_is_string(r) ? deref(c, json_string_value(r)) : NULL;
	n->cnst = json_object_get(s, "const");
	n->enm = json_object_get(s, "enum");
	n->props = json_object_get(s, "properties");
	n->req = json_object_get(s, "required");
	n->extra = json_object_get(s, "additionalProperties");
	n->names = json_object_get(s, "propertyNames");
	n->items = json_object_get(s, "items");
	n->all = json_object_get(s, "allOf");
	n->any = json_object_get(s, "anyOf");
	n->one = json_object_get(s, "oneOf");
	n->not = json_object_get(s, "not");
	n->iff = json_object_get(s, "if");
	n->then = json_object_get(s, "then");
	n->els = json_object_get(s, "else");
	n->min = num_or_nan(s, "minimum");
	n->max = num_or_nan(s, "maximum");
	n->xmin = num_or_nan(s, "exclusiveMinimum");
	n->xmax = num_or_nan(s, "exclusiveMaximum");
	n->min_len = int_or_none(s, "minLength");
	n->max_len = int_or_none(s, "maxLength");
	n->min_items = int_or_none(s, "minItems");
	n->max_items = int_or_none(s, "maxItems");
	n->pattern = json_string_value(json_object_get(s, "pattern"));
	n->has_re = n->pattern && !regcomp(&n->re, n->pattern, REG_EXTENDED | REG_NOSUB);
	return n;
}

static void cache_free(struct node *cache)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (cache[i].s && cache[i].has_re)
			regfree(&cache[i].re);
	free(cache);
}

/* v is none of the types t names ("number", or a list of them) */
static int wrong_type(struct ctx *c, const json_t *t, const json_t *v)
{
	if (json_is_string(t))
		return fail(c, "%s", json_string_value(t), v);
	size_t i;
	const json_t *x;
	char want[160] = "";
	json_array_foreach(t, i, x) snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? " or " : "",
					     json_string_value(x) ? json_string_value(x) : "?");
	return fail(c, "%s", want, v);
}

static int check_number(struct ctx *c, const struct node *n, const json_t *v)
{
	if (!json_is_number(v))
		return 0;
	double x = json_number_value(v);
	if (!isfinite(x))
		return fail(c, "%s", "a finite number", v);
	if (x < n->min) /* (false with NAN: no bound) */
		return fail_num(c, "of at least", n->min, v);
	if (x > n->max)
		return fail_num(c, "of at most", n->max, v);
	if (x <= n->xmin)
		return fail_num(c, "above", n->xmin, v);
	if (x >= n->xmax)
		return fail_num(c, "below", n->xmax, v);
	return 0;
}

static int check_string(struct ctx *c, const struct node *n, const json_t *v)
{
	if (!json_is_string(v))
		return 0;
	long long len = (long long)json_string_length(v);
	if (n->min_len >= 0 && len < n->min_len)
		return fail(c, "%s", "a longer string", v);
	if (n->max_len >= 0 && len > n->max_len)
		return fail(c, "%s", "a shorter string", v);
	/* (a string holding a NUL never matches) */
	if (n->has_re &&
	    ((size_t)len != strlen(json_string_value(v)) || regexec(&n->re, json_string_value(v), 0, NULL, 0)))
		return fail(c, "a string that matches %s", n->pattern, v);
	return 0;
}

/* path += suffix for the length of a call */
static size_t push(struct ctx *c, const char *fmt, const char *key, size_t idx)
{
	size_t at = strlen(c->path);
	if (key)
		snprintf(c->path + at, sizeof c->path - at, fmt, at ? "." : "", key);
	else
		snprintf(c->path + at, sizeof c->path - at, fmt, idx);
	return at;
}

static int check_object(struct ctx *c, const struct node *n, const json_t *v, int depth)
{
	if (!json_is_object(v))
		return 0;
	const json_t *x;
	const char *k;
	size_t i;
	json_array_foreach(n->req, i, x) if (json_is_string(x) && !json_object_get(v, json_string_value(x)))
	{
		size_t at = push(c, "%s%s", json_string_value(x), 0);
		int rc = fail(c, "%s", "this key (it is required)", NULL);
		c->path[at] = 0;
		return rc;
	}
	json_object_foreach((json_t *)v, k, x)
	{
		const json_t *ps = json_object_get(n->props, k);
		size_t at = push(c, "%s%s", k, 0);
		int rc = 0;
		if (n->names) {
			json_t *ks = json_string(k);
			rc = ks ? check(c, n->names, ks, depth + 1) : 0;
			json_decref(ks);
		}
		if (!rc && ps)
			rc = check(c, ps, x, depth + 1);
		else if (!rc && json_is_false(n->extra))
			rc = fail(c, "%s", "no such key here", x);
		else if (!rc && json_is_object(n->extra))
			rc = check(c, n->extra, x, depth + 1);
		c->path[at] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int check_array(struct ctx *c, const struct node *n, const json_t *v, int depth)
{
	if (!json_is_array(v))
		return 0;
	const json_t *x;
	long long len = (long long)json_array_size(v);
	size_t i;
	if (n->min_items >= 0 && len < n->min_items)
		return fail(c, "%s", "more items", v);
	if (n->max_items >= 0 && len > n->max_items)
		return fail(c, "%s", "fewer items", v);
	if (!json_is_object(n->items))
		return 0;
	json_array_foreach(v, i, x)
	{
		size_t at = push(c, "[%zu]", NULL, i);
		int rc = check(c, n->items, x, depth + 1);
		c->path[at] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* allOf, anyOf, oneOf, not, if/then/else */
static int check_logic(struct ctx *c, const struct node *n, const json_t *v, int depth)
{
	const json_t *x;
	size_t i;
	json_array_foreach(n->all, i, x) if (check(c, x, v, depth + 1)) return FAB_EINVAL;
	if (json_array_size(n->any)) {
		bool any = false;
		json_array_foreach(n->any, i, x) any = any || matches(c, x, v, depth + 1);
		if (!any)
			return fail(c, "%s", "one of the forms doc/schema/ allows here", v);
	}
	if (json_array_size(n->one)) {
		size_t k = 0;
		json_array_foreach(n->one, i, x) k += matches(c, x, v, depth + 1);
		if (k != 1)
			return fail(c, "%s", "exactly one of the forms doc/schema/ allows here", v);
	}
	if (n->not &&matches(c, n->not, v, depth + 1))
		return fail(c, "%s", "not this form", v);
	if (n->iff) {
		const json_t *then = matches(c, n->iff, v, depth + 1) ? n->then : n->els;
		if (then && check(c, then, v, depth + 1))
			return FAB_EINVAL;
	}
	return 0;
}

static unsigned bits_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return T_OBJECT;
	case JSON_ARRAY:
		return T_ARRAY;
	case JSON_STRING:
		return T_STRING;
	case JSON_INTEGER:
		return T_INTEGER | T_NUMBER;
	case JSON_REAL:
		return T_NUMBER |
			(isfinite(json_real_value(v)) && json_real_value(v) == floor(json_real_value(v)) ? T_INTEGER
													 : 0);
	case JSON_TRUE:
	case JSON_FALSE:
		return T_BOOLEAN;
	default:
		return T_NULL;
	}
}

static int check_enum(struct ctx *c, const struct node *n, const json_t *v)
{
	if (n->cnst && !json_equal((json_t *)n->cnst, (json_t *)v)) {
		char want[200] = "a constant";
		if (json_is_string(n->cnst))
			snprintf(want, sizeof want, "\"%s\"", json_string_value(n->cnst));
		return fail(c, "%s", want, v);
	}
	if (!n->enm)
		return 0;
	const json_t *e;
	size_t i;
	json_array_foreach(n->enm, i, e) if (json_equal((json_t *)e, (json_t *)v)) return 0;
	char want[300] = "one of";
	json_array_foreach(n->enm, i, e) if (json_is_string(e))
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s %s", i ? "," : "", json_string_value(e));
	return fail(c, "%s", want, v);
}

static int check(struct ctx *c, const json_t *s, const json_t *v, int depth)
{
	if (depth > 64)
		return fab_err_set(c->err, FAB_EINVAL, "%s: %s: nested deeper than the schema allows", c->doc, c->path);
	if (json_is_false(s))
		return fail(c, "%s", "nothing here", v);
	if (!json_is_object(s))
		return 0;
	const struct node *n = compile(c, s);
	if (n->ref && check(c, n->ref, v, depth + 1))
		return FAB_EINVAL;
	if (n->types && !(bits_of(v) & n->types))
		return wrong_type(c, json_object_get(s, "type"), v);
	if (check_enum(c, n, v) || check_number(c, n, v) || check_string(c, n, v) || check_object(c, n, v, depth) ||
	    check_array(c, n, v, depth) || check_logic(c, n, v, depth))
		return FAB_EINVAL;
	return 0;
}

const char *fab_schema_of(const json_t *doc)
{
	const char *s = json_string_value(json_object_get(doc, "schema"));
	const char *k = json_string_value(json_object_get(doc, "kind"));
	if (!s)
		return NULL;
	if (!strcmp(s, "fabscope.result/1"))
		return k && !strcmp(k, "probe") ? "probe" : "result";
	static const char *const other[][2] = {{"fabscope.sweep/1", "sweep"},
					       {"fabscope.plan-compare/1", "compare"},
					       {"fabscope.diagnosis/1", "diagnosis"},
					       {"fabscope.plan/1", "plan"},
					       {"fabscope.calibration/1", "calibration"}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(other); i++)
		if (!strcmp(s, other[i][0]))
			return other[i][1];
	return NULL;
}

int fab_schema_check(const json_t *doc, const char *name, struct fab_err *err)
{
	if (!json_is_object(doc))
		return fab_err_set(err, FAB_EINVAL, "%s: not a fabscope document (not a JSON object)", name);
	const char *which = fab_schema_of(doc);
	if (!which) {
		const char *s = json_string_value(json_object_get(doc, "schema"));
		if (s && !strncmp(s, "fabscope.", 9))
			return fab_err_set(
				err, FAB_EINVAL,
				"%s: schema: \"%.80s\" is not a format this fabscope reads (fabscope.result/1, "
				"fabscope.sweep/1, fabscope.plan-compare/1, fabscope.diagnosis/1, "
				"fabscope.plan/1, fabscope.calibration/1)",
				name, s);
		return fab_err_set(err, FAB_EINVAL, "%s: not a fabscope document (schema missing)", name);
	}
	/* a result's kind picks its schema: say so when it is none of them */
	const json_t *kind = json_object_get(doc, "kind");
	const char *k = json_string_value(kind);
	if (!strcmp(which, "result") && kind &&
	    !(k && (!strcmp(k, "sim") || !strcmp(k, "coll") || !strcmp(k, "matrix")))) {
		if (k)
			return fab_err_set(err, FAB_EINVAL,
					   "%s: kind: expected one of sim, coll, matrix, probe, got \"%.60s\"", name,
					   k);
		return fab_err_set(err, FAB_EINVAL, "%s: kind: expected one of sim, coll, matrix, probe, got %s", name,
				   fab_json_kind(kind));
	}
	for (size_t i = 0; fab_schema_names[i]; i++) {
		if (strcmp(fab_schema_names[i], which))
			continue;
		json_error_t je;
		json_t *s = json_loads(fab_schema_texts[i], 0, &je);
		if (!s)
			return fab_err_set(err, FAB_EINTERNAL, "schema %s: %s", which, je.text);
		struct ctx c = {s, name, err, "", fab_xcalloc(CACHE_SLOTS, sizeof(struct node))};
		int rc = check(&c, s, doc, 0);
		cache_free(c.cache);
		json_decref(s);
		return rc;
	}
	return fab_err_set(err, FAB_EINTERNAL, "schema %s: not compiled in", which);
}
