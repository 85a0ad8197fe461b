/*
 * grid.h - a design space: a base scenario, the keys to vary and their
 * values, seeds; the points it spans (every combination), each with an id
 * that names what it computes; the plan that carries them between processes
 * and machines (JSON); and the merged table of the points' result documents
 * with the swept keys as columns.
 *
 * Running the points is the caller's (fabscope sweep: processes, MPI ranks,
 * Slurm array tasks); this file only says what each point is and what the
 * results say together.
 */
#ifndef FAB_GRID_H
#define FAB_GRID_H

#include <jansson.h>
#include <stdio.h>

#include "../base/base.h"
#include "../topo/plan.h"

#define FAB_GRID_MAX_POINTS 1000000
#define FAB_GRID_MAX_KEYS 32
#define FAB_GRID_ID_LEN 16 /* hex digits */

enum fab_grid_cmd { FAB_GRID_SIM, FAB_GRID_COLL, FAB_GRID_MATRIX };

struct fab_grid_pos {
	unsigned line, col; /* in the grid file; 0: none (from a plan) */
};

struct fab_grid_point {
	uint32_t *vi; /* [nkeys]: the index of each key's value */
	uint64_t seed;
	char id[FAB_GRID_ID_LEN + 1];
};

struct fab_grid {
	char *origin;   /* the grid file, or the plan's */
	int command;    /* enum fab_grid_cmd */
	char *scenario; /* the base scenario's absolute path; NULL: the built-in one */
	char **fixed;   /* "key=value" for every point */
	size_t nfixed;
	char **keys; /* the swept keys */
	size_t nkeys;
	char ***vals; /* [key][value] */
	size_t *nvals;
	struct fab_grid_pos **vpos; /* [key][value]: where it was written */
	bool seeded;                /* seeds given: run.seed set per point */
	char **fname, **fpath;      /* result columns: a name, a path into the document */
	size_t nfields;
	bool default_fields; /* fields not given: a default field no point has is left out */
	struct fab_grid_point *pt;
	size_t npts;
};

/* GRID.yaml (see doc/sweep.md): NULL and err (file:line:column) on bad
 * input.  salt goes into every point's id (the program's version: a newer
 * build does not reuse an older one's results). */
struct fab_grid *fab_grid_load(const char *path, const char *salt, struct fab_err *err);
void fab_grid_free(struct fab_grid *g);
const char *fab_grid_cmd_name(int command);

/* point i's scenario overrides: the fixed ones, the swept ones, run.seed;
 * *n of them, pointers into g and buf (freed with fab_grid_sets_free) */
char **fab_grid_sets(const struct fab_grid *g, size_t i, size_t *n);
void fab_grid_sets_free(char **sets, size_t n);

/* The plan: everything a process needs to run any point of the grid (and
 * to merge), without the grid file.  fab_grid_from_plan checks it as
 * hostile input. */
json_t *fab_grid_plan_json(const struct fab_grid *g);
struct fab_grid *fab_grid_from_plan(const json_t *plan, const char *origin, struct fab_err *err);

/* The merged table: docs[i] point i's result document, or NULL with
 * errors[i] its failure (NULL: not run).  Swept keys, seed, status and the
 * fields, in grid order. */
json_t *fab_grid_merge(const struct fab_grid *g, json_t *const *docs, const char *const *errors);
/* the merged table as CSV (one header row, one row per point), or aligned
 * text */
int fab_grid_write_csv(FILE *f, const json_t *merged);
int fab_grid_write_text(FILE *f, const json_t *merged);

/* a value in a document by path: "summary.drops", "collective.rows[-1].time_us"
 * (a negative index counts from the end); NULL when absent */
json_t *fab_json_path(json_t *doc, const char *path);

/* ---- plan --compare: designs side by side on one workload ---- */

#define FAB_COMPARE_MAX 64

struct fab_compare_design {
	char *name;
	struct fab_plan_req req; /* the cluster's options, then the design's own */
	struct fab_plan plan;
};

struct fab_compare {
	char *origin;
	struct fab_plan_prices prices;
	struct fab_compare_design *d;
	size_t n;
	int command;    /* FAB_GRID_COLL or FAB_GRID_SIM: what runs on each design */
	char *scenario; /* the workload's base scenario (absolute), NULL: the built-in one */
	char **sets;    /* the workload's overrides, after the design's topology */
	size_t nsets;
	uint64_t *seeds; /* workload.seeds: each design runs at each (run.seed); NULL: once, as the scenario says */
	size_t nseeds;   /* 1 without seeds */
};

struct ynode;
/* a file's seeds: N (seeds 1 to N) or a list of distinct whole numbers, at
 * most max of them (sweep's `seeds`, plan --compare's `workload.seeds`).
 * 0, or -1 with what is wrong in why and *at the node it is wrong at */
int fab_seeds_read(const struct ynode *v, size_t max, uint64_t **seeds, size_t *n, const struct ynode **at, char *why,
		   size_t len);

/* COMPARE.yaml (doc/plan.md): the cluster, the designs, prices, the
 * workload; every design planned (a design that cannot be built is an
 * error at its place). */
struct fab_compare *fab_compare_load(const char *path, struct fab_err *err);
void fab_compare_free(struct fab_compare *c);
/* design i's scenario overrides at its run r (0 .. nseeds-1): its
 * topology, engine=flow, the workload's, and with seeds run.seed */
char **fab_compare_sets(const struct fab_compare *c, size_t i, size_t r, size_t *n);
/* the table: per design its plan (cost, power, switches, failure) and,
 * from its runs' documents docs[i * nseeds + r] (NULL: errors[...]),
 * busbw (coll) or step time (sim), the median over its seeds */
json_t *fab_compare_json(const struct fab_compare *c, json_t *const *docs, const char *const *errors);
int fab_compare_write_text(FILE *f, const json_t *cmp);
int fab_compare_write_csv(FILE *f, const json_t *cmp);

#endif
