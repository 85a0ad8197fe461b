/*
 * ydom.c - build a struct ynode tree from libyaml events.
 *
 * Anchors and aliases are refused (a scenario has no use for them and they
 * make locations ambiguous); duplicate mapping keys are an error.
 */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ydom.h"

struct ynode *fab_ydom_new(int kind, const char *origin, unsigned line, unsigned col)
{
	struct ynode *n = fab_xcalloc(1, sizeof *n);
	n->kind = kind;
	n->origin = origin;
	n->line = line;
	n->col = col;
	return n;
}

void fab_ydom_free(struct ynode *n)
{
	if (!n)
		return;
	free(n->scalar);
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			free(n->keys[i]);
		fab_ydom_free(n->vals[i]);
	}
	free(n->keys);
	free(n->key_line);
	free(n->key_col);
	free(n->vals);
	free(n);
}

static void grow(struct ynode *n)
{
	if (n->n < n->cap)
		return;
	n->cap = n->cap ? 2 * n->cap : 8;
	n->vals = fab_xrealloc(n->vals, n->cap, sizeof *n->vals);
	if (n->kind == Y_MAP) {
		n->keys = fab_xrealloc(n->keys, n->cap, sizeof *n->keys);
		n->key_line = fab_xrealloc(n->key_line, n->cap, sizeof *n->key_line);
		n->key_col = fab_xrealloc(n->key_col, n->cap, sizeof *n->key_col);
	}
}

struct ynode *fab_ydom_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key))
			return map->vals[i];
	return NULL;
}

void fab_ydom_put(struct ynode *map, const char *key, struct ynode *val, unsigned line, unsigned col)
{
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key)) {
			fab_ydom_free(map->vals[i]);
			map->vals[i] = val;
			return;
		}
	grow(map);
	map->keys[map->n] = fab_xstrdup(key);
	map->key_line[map->n] = line;
	map->key_col[map->n] = col;
	map->vals[map->n++] = val;
}

void fab_ydom_append(struct ynode *seq, struct ynode *item)
{
	grow(seq);
	seq->vals[seq->n++] = item;
}

struct builder {
	yaml_parser_t parser;
	const char *origin;
	struct fab_err *err;
	unsigned depth;
};

static struct ynode *parse_node(struct builder *b, yaml_event_t *ev);

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev)) {
		yaml_mark_t m = b->parser.problem_mark;
		return fab_err_set(b->err, FAB_EINVAL, "%s:%zu:%zu: YAML syntax error: %s", b->origin, m.line + 1,
				   m.column + 1, b->parser.problem ? b->parser.problem : "unknown");
	}
	return 0;
}

static struct ynode *parse_collection(struct builder *b, yaml_event_t *start)
{
	bool is_map = start->type == YAML_MAPPING_START_EVENT;
	if (b->depth == FAB_YAML_MAX_DEPTH) {
		fab_err_set(b->err, FAB_EINVAL, "%s:%zu:%zu: nested deeper than %u levels", b->origin,
			    start->start_mark.line + 1, start->start_mark.column + 1, FAB_YAML_MAX_DEPTH);
		return NULL;
	}
	b->depth++;
	struct ynode *n = fab_ydom_new(is_map ? Y_MAP : Y_SEQ, b->origin, (unsigned)start->start_mark.line + 1,
				       (unsigned)start->start_mark.column + 1);
	for (;;) {
		yaml_event_t ev;
		if (next_event(b, &ev))
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			b->depth--;
			return n;
		}
		if (!is_map) {
			struct ynode *item = parse_node(b, &ev);
			if (!item)
				goto fail;
			fab_ydom_append(n, item);
			continue;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			fab_err_set(b->err, FAB_EINVAL, "%s:%zu:%zu: a mapping key must be a plain name", b->origin,
				    ev.start_mark.line + 1, ev.start_mark.column + 1);
			yaml_event_delete(&ev);
			goto fail;
		}
		char *key = fab_xstrdup((const char *)ev.data.scalar.value);
		unsigned kl = (unsigned)ev.start_mark.line + 1, kc = (unsigned)ev.start_mark.column + 1;
		yaml_event_delete(&ev);
		if (fab_ydom_get(n, key)) {
			fab_err_set(b->err, FAB_EINVAL, "%s:%u:%u: %s: duplicate key", b->origin, kl, kc, key);
			free(key);
			goto fail;
		}
		yaml_event_t vev;
		if (next_event(b, &vev)) {
			free(key);
			goto fail;
		}
		struct ynode *val = parse_node(b, &vev);
		if (!val) {
			free(key);
			goto fail;
		}
		fab_ydom_put(n, key, val, kl, kc);
		free(key);
	}
fail:
	fab_ydom_free(n);
	return NULL;
}

/* Takes ownership of ev. */
static struct ynode *parse_node(struct builder *b, yaml_event_t *ev)
{
	struct ynode *n = NULL;
	unsigned line = (unsigned)ev->start_mark.line + 1, col = (unsigned)ev->start_mark.column + 1;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor)
			goto anchor;
		n = fab_ydom_new(Y_SCALAR, b->origin, line, col);
		n->scalar = fab_xstrdup((const char *)ev->data.scalar.value);
		break;
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if ((ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor) ||
		    (ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor))
			goto anchor;
		n = parse_collection(b, ev);
		break;
	case YAML_ALIAS_EVENT:
		goto anchor;
	default:
		fab_err_set(b->err, FAB_EINVAL, "%s:%u:%u: unexpected YAML content", b->origin, line, col);
		break;
	}
	yaml_event_delete(ev);
	return n;
anchor:
	fab_err_set(b->err, FAB_EINVAL, "%s:%u:%u: YAML anchors and aliases are not supported", b->origin, line, col);
	yaml_event_delete(ev);
	return NULL;
}

struct ynode *fab_ydom_parse(const char *text, size_t len, const char *origin, const char *root_what,
			     struct fab_err *err)
{
	struct builder b = {.origin = origin, .err = err};
	struct ynode *root = NULL;
	yaml_parser_initialize(&b.parser);
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	yaml_event_t ev;
	/* stream start, document start */
	for (;;) {
		if (next_event(&b, &ev))
			goto out;
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			root = fab_ydom_new(Y_MAP, origin, 1, 1); /* empty file */
			goto out;
		}
		break;
	}
	root = parse_node(&b, &ev);
	if (!root)
		goto out;
	if (root->kind != Y_MAP) {
		fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s", origin, root->line, root->col, root_what);
		fab_ydom_free(root);
		root = NULL;
		goto out;
	}
	if (next_event(&b, &ev)) {
		fab_ydom_free(root);
		root = NULL;
		goto out;
	}
	if (ev.type != YAML_DOCUMENT_END_EVENT) {
		fab_err_set(err, FAB_EINVAL, "%s:%zu:%zu: only one YAML document is allowed", origin,
			    ev.start_mark.line + 1, ev.start_mark.column + 1);
		fab_ydom_free(root);
		root = NULL;
	}
	yaml_event_delete(&ev);
	if (root) {
		/* anything after the first document is refused */
		if (next_event(&b, &ev)) {
			fab_ydom_free(root);
			root = NULL;
		} else {
			if (ev.type != YAML_STREAM_END_EVENT) {
				fab_err_set(err, FAB_EINVAL, "%s:%zu:%zu: only one YAML document is allowed", origin,
					    ev.start_mark.line + 1, ev.start_mark.column + 1);
				fab_ydom_free(root);
				root = NULL;
			}
			yaml_event_delete(&ev);
		}
	}
out:
	yaml_parser_delete(&b.parser);
	return root;
}
