/*
 * base.c - a scenario written on top of another: "base: FILE".
 *
 * The base is read first; the file's own keys then override it, section by
 * section, and its lists (flows, generators, jobs, faults) are added after
 * the base's.  A calibrated scenario (fabscope calibrate) is such a file:
 * the design it starts from, and only what was measured.  A base has no
 * base of its own.  The base's relative paths (topology file, flow lists,
 * CDFs) stay relative to the base's folder.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "scenario.h"
#include "ydom.h"

char *fab_scenario_path(const char *base_dir, const char *p)
{
	if (!p || p[0] == '/' || !base_dir || !*base_dir || !strcmp(base_dir, "."))
		return p ? fab_xstrdup(p) : NULL;
	size_t n = strlen(base_dir) + strlen(p) + 2;
	char *out = fab_xcalloc(1, n);
	snprintf(out, n, "%s/%s", base_dir, p);
	return out;
}

/* the base's path at key in map made absolute (dir: the base's folder,
 * absolute) */
static void absolute(struct ynode *map, const char *key, const char *dir)
{
	struct ynode *v = map ? fab_ydom_get(map, key) : NULL;
	if (!v || v->kind != Y_SCALAR || !v->scalar || !*v->scalar || v->scalar[0] == '/' ||
	    !strcmp(v->scalar, "websearch") || !strcmp(v->scalar, "fb_hadoop"))
		return;
	char *p = fab_scenario_path(dir, v->scalar);
	free(v->scalar);
	v->scalar = p;
}

static void absolute_paths(struct ynode *root, const char *dir)
{
	struct ynode *topo = fab_ydom_get(root, "topology"), *tr = fab_ydom_get(root, "traffic");
	if (topo && topo->kind == Y_MAP)
		absolute(topo, "file", dir);
	if (!tr || tr->kind != Y_MAP)
		return;
	absolute(tr, "flows_csv", dir);
	absolute(tr, "flows_ns3", dir);
	struct ynode *gens = fab_ydom_get(tr, "generators");
	for (size_t i = 0; gens && gens->kind == Y_SEQ && i < gens->n; i++)
		if (gens->vals[i]->kind == Y_MAP)
			absolute(gens->vals[i], "cdf", dir);
}

/* the lists a file adds to its base's; any other value replaces */
static bool appended(const char *path)
{
	return !strcmp(path, "traffic.flows") || !strcmp(path, "traffic.generators") || !strcmp(path, "jobs") ||
		!strcmp(path, "faults");
}

/* over's keys onto into (at path prefix): mappings merged, the lists of
 * appended() appended, the rest replaced; over's nodes move (over is left
 * empty) */
static void merge(struct ynode *into, struct ynode *over, const char *prefix)
{
	for (size_t i = 0; i < over->n; i++) {
		struct ynode *v = over->vals[i], *old = fab_ydom_get(into, over->keys[i]);
		char path[160];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", over->keys[i]);
		if (old && old->kind == Y_MAP && v->kind == Y_MAP) {
			merge(old, v, path);
			continue;
		}
		if (old && old->kind == Y_SEQ && v->kind == Y_SEQ && appended(path)) {
			for (size_t k = 0; k < v->n; k++)
				fab_ydom_append(old, v->vals[k]);
			v->n = 0;
			continue;
		}
		fab_ydom_put(into, over->keys[i], v, over->key_line[i], over->key_col[i]);
		over->vals[i] = NULL;
	}
}

int fab_scenario_rebase(struct ynode **root, const char *base_dir, char **origin, struct fab_err *err)
{
	struct ynode *b = fab_ydom_get(*root, "base");
	if (!b)
		return 0;
	if (b->kind != Y_SCALAR || !b->scalar || !*b->scalar)
		return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: base: expected the path of a scenario file", b->origin,
				   b->line, b->col);
	char *path = fab_scenario_path(base_dir, b->scalar), *text = NULL, real[PATH_MAX];
	size_t len;
	int rc = fab_read_text(path, "base scenario", FAB_SCENARIO_MAX_BYTES, false, &text, &len, err);
	if (rc && err) {
		char why[sizeof err->msg];
		snprintf(why, sizeof why, "%s", err->msg);
		fab_err_set(err, rc, "%s:%u:%u: base: %s", b->origin, b->line, b->col, why);
	}
	if (!rc && !realpath(path, real))
		rc = fab_err_set(err, FAB_EIO, "%s:%u:%u: base: %s: cannot resolve the path", b->origin, b->line,
				 b->col, path);
	struct ynode *base = NULL;
	if (!rc) {
		*origin = path;
		path = NULL;
		base = fab_ydom_parse(text, len, *origin, "a base scenario is a mapping, as a scenario is", err);
		rc = base ? 0 : FAB_EINVAL;
	}
	struct ynode *bb = base ? fab_ydom_get(base, "base") : NULL;
	if (bb)
		rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: base: a base scenario cannot have a base of its own",
				 bb->origin, bb->line, bb->col);
	if (!rc) {
		char *slash = strrchr(real, '/');
		*slash = 0;
		absolute_paths(base, slash == real ? "/" : real);
		/* "base" itself is not a key of the merged scenario */
		for (size_t i = 0; i < (*root)->n; i++)
			if (!strcmp((*root)->keys[i], "base")) {
				fab_ydom_free((*root)->vals[i]);
				free((*root)->keys[i]);
				memmove(&(*root)->keys[i], &(*root)->keys[i + 1],
					((*root)->n - i - 1) * sizeof *(*root)->keys);
				memmove(&(*root)->vals[i], &(*root)->vals[i + 1],
					((*root)->n - i - 1) * sizeof *(*root)->vals);
				memmove(&(*root)->key_line[i], &(*root)->key_line[i + 1],
					((*root)->n - i - 1) * sizeof *(*root)->key_line);
				memmove(&(*root)->key_col[i], &(*root)->key_col[i + 1],
					((*root)->n - i - 1) * sizeof *(*root)->key_col);
				(*root)->n--;
				break;
			}
		merge(base, *root, "");
		fab_ydom_free(*root);
		*root = base;
		base = NULL;
	}
	fab_ydom_free(base);
	free(path);
	free(text);
	return rc;
}
