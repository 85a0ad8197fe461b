/*
 * schema.h - documents checked against doc/schema/ (schema.c).
 */
#ifndef FAB_SCHEMA_H
#define FAB_SCHEMA_H

#include <jansson.h>

#include "../base/base.h"

/* doc (named name in messages) against the schema its "schema" key names
 * (a probe's result by its "kind"): 0, or FAB_EINVAL and err with the
 * place ("name: path.to.field: expected ..., got ...") */
int fab_schema_check(const json_t *doc, const char *name, struct fab_err *err);
/* which of doc/schema/'s schemas doc's "schema" key names ("result",
 * "probe" for a result whose kind is probe, "sweep", "compare",
 * "diagnosis", "plan"); NULL: none */
const char *fab_schema_of(const json_t *doc);
/* what a JSON value is, in words: "an object", "a number", "null" */
const char *fab_json_kind(const json_t *v);

#endif
