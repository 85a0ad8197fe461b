/*
 * ydom.h - a small YAML document tree that remembers where each node was.
 *
 * libyaml's event parser feeds it; every scalar, mapping and sequence keeps
 * its file, line and column, so any later check can say
 * "scenario.yaml:12:9: topology.spines: ...".  Nodes made by --set carry the
 * origin "--set" instead of a file.
 */
#ifndef FAB_YDOM_H
#define FAB_YDOM_H

#include "../base/base.h"

/* collections nested deeper than this are refused (the reader recurses) */
#define FAB_YAML_MAX_DEPTH 64

enum ynode_kind { Y_SCALAR, Y_MAP, Y_SEQ };

struct ynode {
	int kind;
	const char *origin; /* file name, or "--set" (not owned) */
	unsigned line, col; /* 1-based */
	char *scalar;       /* Y_SCALAR */
	size_t n, cap;      /* Y_MAP: pairs; Y_SEQ: items */
	char **keys;        /* Y_MAP */
	unsigned *key_line, *key_col;
	struct ynode **vals; /* Y_MAP values, Y_SEQ items */
};

/* Parses text (named origin in messages).  NULL and err on a syntax error. */
/* root: what the document is, for the message when its root is not a
 * mapping ("a scenario is a mapping with sections ...") */
struct ynode *fab_ydom_parse(const char *text, size_t len, const char *origin, const char *root, struct fab_err *err);
void fab_ydom_free(struct ynode *n);
struct ynode *fab_ydom_new(int kind, const char *origin, unsigned line, unsigned col);
/* Mapping lookup; NULL if absent. */
struct ynode *fab_ydom_get(const struct ynode *map, const char *key);
/* Sets map[key] = val (replacing and freeing an old value). */
void fab_ydom_put(struct ynode *map, const char *key, struct ynode *val, unsigned line, unsigned col);
void fab_ydom_append(struct ynode *seq, struct ynode *item);

#endif
