/*
 * scenario.h - a scenario file (YAML) as typed configuration.
 *
 * One table lists every key: its path, type, unit, default, range and
 * meaning.  Defaults, parsing, range checks, --set overrides, the effective
 * configuration in result documents and the reference in doc/scenario.md
 * (`fabscope sim --keys`) all come from that table, so they cannot disagree.
 */
#ifndef FAB_SCENARIO_H
#define FAB_SCENARIO_H

#include <stdio.h>

#include "../base/base.h"
#include "../base/keydef.h"
#include "../sim/sim.h"
#include "../topo/topo.h"
#include "../work/fault.h"
#include "../work/job.h"
#include "../work/matrix.h"
#include "../work/sweep.h"
#include "../work/traffic.h"

struct fab_run_params {
	uint64_t seed;
	fab_time_ps end_ps; /* 0 = until every flow is done */
};

struct fab_key_loc {
	const char *origin;
	unsigned line, col;
	bool given;
};

struct fab_config {
	int cc_choice; /* fabric.cc: 0 auto, else 1 + the model's index in the registry */
	struct fab_topo_params topo;
	struct fab_fabric_params fabric;
	struct fab_traffic_params traffic;
	struct fab_run_params run;
	struct fab_server_params server;
	struct fab_coll_params coll;
	struct fab_job_spec *jobs;
	size_t njobs;
	struct fab_fault_spec *faults;
	size_t nfaults;
	struct fab_matrix_params matrix;
	struct fab_nccl_params nccl;
	char *origin;            /* the scenario's name in messages */
	char *base_origin;       /* its base's (base.c), or NULL */
	char *topo_file;         /* owned; topo.file points here */
	struct fab_key_loc *loc; /* per key of the table */
};

/* Loads a scenario: path NULL means the built-in default.  sets are
 * "key=value" overrides applied after the file.  Returns NULL and fills err
 * (file:line:col: key: message) on bad input. */
/* a scenario file is at most this big (its YAML nested at most
 * FAB_YAML_MAX_DEPTH deep, ydom.h) */
#define FAB_SCENARIO_MAX_BYTES (16u << 20)
struct fab_config *fab_config_load(const char *path, const char *const *sets, size_t nsets, struct fab_err *err);
/* Parses scenario text held in memory; origin names it in messages and
 * relative paths resolve against base_dir (may be NULL). */
/* sets checked alone (key known, value of its type and range), against no
 * scenario: what a sweep checks of each value when parsing the base
 * scenario once per value would cost too much.  0, or an error. */
int fab_config_check_sets(const char *const *sets, size_t nsets, struct fab_err *err);
struct fab_config *fab_config_parse(const char *text, size_t len, const char *origin, const char *base_dir,
				    const char *const *sets, size_t nsets, struct fab_err *err);
void fab_config_free(struct fab_config *c);
/* base.c: "base: FILE" read and the tree merged onto it (root replaced;
 * origin: the base's name, for the config to keep); 0, or an error.  A
 * relative path p against base_dir (owned). */
struct ynode;
int fab_scenario_rebase(struct ynode **root, const char *base_dir, char **origin, struct fab_err *err);
char *fab_scenario_path(const char *base_dir, const char *p);

/* The built-in default scenario's YAML text. */
extern const char fab_default_scenario[];

/* The key table, for the effective configuration and the reference
 * (struct fab_key_def: base/keydef.h). */
const struct fab_key_def *fab_config_keys(size_t *n);
/* whether the effective configuration shows key i: every key, but a
 * congestion-control family's that the table lists with the rest only
 * where one of its models runs or one of its keys was given */
bool fab_config_key_shown(const struct fab_config *c, size_t i);
/* every key, its default, range and meaning, as a Markdown table */
int fab_config_write_keys(FILE *f);
const struct fab_key_def *fab_config_flow_keys(size_t *n);
const struct fab_key_def *fab_config_gen_keys(size_t *n);
const struct fab_key_def *fab_config_job_keys(size_t *n);
const struct fab_key_def *fab_config_fault_keys(size_t *n);
/* Parses text into k's field of the struct at base (a config or a list
 * item); FAB_EINVAL with the reason in why. */
int fab_config_parse_value(const struct fab_key_def *k, void *base, const char *text, char *why, size_t wl);
/* Canonical text of a key's value in cfg (or a list item when base given). */
void fab_config_value_text(const struct fab_key_def *k, const void *base, char *buf, size_t len);
/* Was a key (by path) given in the file or by --set? */
bool fab_config_given(const struct fab_config *c, const char *path);
/* The location prefix for a key ("file:line:col: " or "--set "), "" if unknown. */
void fab_config_where(const struct fab_config *c, const char *path, char *buf, size_t len);

#endif
