/*
 * registry.c - every congestion-control model, one line each.
 *
 * A model is its own files (its ops table, its parameter family with the
 * scenario keys, its tests) and one line in the list below (each line
 * ends with a backslash, so adding one touches no other).  The order is
 * the order of fabric.cc's choices and of the families' keys where the key
 * table does not place them itself (src/scenario/keys.c).
 */
#include <string.h>

#include "cc.h"

#define MODELS(X)                                                                                                      \
	X(none)                                                                                                        \
	X(dcqcn)                                                                                                       \
	X(dcqcn_nic)                                                                                                   \
	X(newreno)                                                                                                     \
	X(cubic)                                                                                                       \
	X(dctcp)                                                                                                       \
	X(hpcc)                                                                                                        \
	X(swift)                                                                                                       \
	/* one line a model, above */

#define DECLARE(n) extern const struct fab_cc_ops fab_cc_##n;
MODELS(DECLARE)
#define ENTRY(n) &fab_cc_##n,
static const struct fab_cc_ops *const models[] = {MODELS(ENTRY)};

size_t fab_cc_count(void)
{
	return FAB_ARRAY_LEN(models);
}

const struct fab_cc_ops *fab_cc_at(size_t i)
{
	FAB_ASSERT(i < FAB_ARRAY_LEN(models));
	return models[i];
}

const struct fab_cc_ops *fab_cc_find(const char *name)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(models); i++)
		if (!strcmp(models[i]->name, name))
			return models[i];
	return NULL;
}

int fab_cc_index(const struct fab_cc_ops *ops)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(models); i++)
		if (models[i] == ops)
			return (int)i;
	return -1;
}

/* model i names a family no model before it named */
static bool first_of_family(size_t i)
{
	if (!models[i]->family)
		return false;
	for (size_t j = 0; j < i; j++)
		if (models[j]->family == models[i]->family)
			return false;
	return true;
}

size_t fab_cc_family_count(void)
{
	size_t n = 0;
	for (size_t i = 0; i < FAB_ARRAY_LEN(models); i++)
		n += first_of_family(i);
	return n;
}

const struct fab_param_family *fab_cc_family_at(size_t k)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(models); i++)
		if (first_of_family(i) && k-- == 0)
			return models[i]->family;
	FAB_ASSERT(!"no such family");
	return NULL;
}

/* each family's struct at a multiple of 16 after the one before */
size_t fab_cc_family_offset(const struct fab_param_family *f)
{
	size_t off = 0;
	for (size_t i = 0; i < FAB_ARRAY_LEN(models); i++) {
		if (!first_of_family(i))
			continue;
		if (models[i]->family == f)
			break;
		off += (models[i]->family->size + 15) / 16 * 16;
	}
	FAB_ASSERT(off + f->size <= FAB_CC_PARAMS_BYTES);
	return off;
}
