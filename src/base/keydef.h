/*
 * keydef.h - how a scenario key is described: its path, type, where its
 * value lives, default, range and meaning.
 *
 * The scenario layer's tables (src/scenario/keys.c) are made of these, and
 * so are the fragments a model brings with it (a congestion control's
 * parameters, src/cc/): a fragment's offsets are into the model's own
 * parameter struct, and the scenario layer places the fragment in the
 * configuration.
 */
#ifndef FAB_KEYDEF_H
#define FAB_KEYDEF_H

#include <stddef.h>

enum fab_key_type {
	K_U32,
	K_U64,
	K_RATE,
	K_TIME,
	K_BYTES,
	K_BOOL,
	K_DOUBLE,
	K_ENUM,
	K_RATIO,
	K_PRIOMASK,
	K_PATH,
	K_U8,
	K_STR32,
	K_U32LIST,
	/* not a key: in a table, where the congestion-control models' keys go
	 * (choices: the prefix of the one family placed here, or NULL for
	 * every family not placed elsewhere, in the registry's order) */
	K_MODEL_KEYS,
};

struct fab_key_def {
	const char *path;    /* "topology.spines" */
	int type;            /* enum fab_key_type */
	size_t off;          /* offset in struct fab_config (or in a list item, or a model's parameters) */
	const char *def;     /* default, as a user would write it */
	double min, max;     /* range for numbers (rates, times, bytes included) */
	const char *choices; /* K_ENUM: "spine-leaf|fat-tree|file" */
	const char *doc;
};

/* A named preset: keys and their values, applied where the scenario did
 * not give the key itself. */
struct fab_preset_value {
	const char *path, *value;
};

/* A model's parameters: its struct, its scenario keys (a fragment whose
 * offsets are into the struct) with their defaults, and its presets.
 * Models that read the same parameters share a family (DCQCN as the paper
 * has it and as NIC firmware runs it).  A registry places each family's
 * struct in a block of the fabric's parameters, and the scenario layer
 * places its keys in the key table. */
struct fab_param_family {
	const char *prefix;             /* its keys' common prefix: "fabric.dcqcn" */
	size_t size;                    /* its struct */
	const struct fab_key_def *keys; /* offsets into its struct */
	size_t nkeys;
	/* the values its preset key asks for (none: *n = 0); NULL: no presets */
	const struct fab_preset_value *(*preset)(const void *params, size_t *n);
};

#endif
