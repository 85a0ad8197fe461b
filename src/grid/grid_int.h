/*
 * grid_int.h - what a design space's files share: grid.c (the grid file,
 * its points, the columns) with grid_plan.c (the plan, the merged table).
 */
#ifndef FAB_GRID_INT_H
#define FAB_GRID_INT_H

#include "grid.h"

#define GRID_MAX_VALUES 10000
#define GRID_MAX_FIELDS 64
#define GRID_MAX_STR 4096

/* a key to vary or set, a value on one line, a column (PATH, PATH / N or
 * PATH * N) */
bool grid_key_ok(const char *k);
bool grid_value_ok(const char *v);
bool grid_spec_ok(const char *spec);
/* adds a column: its name and its path */
void grid_add_field(struct fab_grid *g, const char *name, const char *path);
/* every combination of the keys' values and the seeds, the first key
 * outermost, seeds innermost: g->pt, g->npts */
int grid_expand(struct fab_grid *g, const uint64_t *seeds, size_t nseeds, struct fab_err *err);
/* the value of column spec in doc, scaled when it is a number; NULL: none */
json_t *grid_field_value(json_t *doc, const char *spec);

#endif
