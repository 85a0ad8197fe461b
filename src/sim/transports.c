/*
 * transports.c - the registry of transports (transports.h): the list is
 * FAB_TRANSPORTS, each entry a struct fab_transport_info in its own file
 * (tp_<name>.c).
 */
#include <pthread.h>
#include <string.h>

#include "sim.h"

#define DECLARE(E, n) extern const struct fab_transport_info fab_tp_##n;
FAB_TRANSPORTS(DECLARE)
#define ENTRY(E, n) [FAB_TRANSPORT_##E] = &fab_tp_##n,
static const struct fab_transport_info *const all[FAB_TRANSPORT_COUNT] = {FAB_TRANSPORTS(ENTRY)};

/* a congestion control says which transports it runs on by these bits */
_Static_assert(FAB_CC_ON_ROCE == 1 << FAB_TRANSPORT_ROCE && FAB_CC_ON_TCP == 1 << FAB_TRANSPORT_TCP &&
		       FAB_CC_ON_IB == 1 << FAB_TRANSPORT_IB,
	       "cc.h's transport bits follow the registry's order");

const struct fab_transport_info *fab_transport_at(int kind)
{
	FAB_ASSERT(kind >= 0 && kind < FAB_TRANSPORT_COUNT);
	return all[kind];
}

int fab_transport_find(const char *name)
{
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++)
		if (!strcmp(all[k]->name, name))
			return k;
	return -1;
}

static char choices[FAB_TRANSPORT_COUNT * 16];
static pthread_once_t choices_once = PTHREAD_ONCE_INIT;

static void make_choices(void)
{
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		FAB_ASSERT(strlen(choices) + strlen(all[k]->name) + 2 <= sizeof choices);
		if (k)
			strcat(choices, "|");
		strcat(choices, all[k]->name);
	}
}

const char *fab_transport_choices(void)
{
	pthread_once(&choices_once, make_choices);
	return choices;
}

/* each transport's place in the block, worked out once (the per-packet
 * paths of TCP and InfiniBand's credits read their parameters) */
static size_t offsets[FAB_TRANSPORT_COUNT];
static pthread_once_t offsets_once = PTHREAD_ONCE_INIT;

static void make_offsets(void)
{
	size_t off = 0;
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		offsets[k] = off;
		if (all[k]->family)
			off += (all[k]->family->size + 15) / 16 * 16;
	}
	FAB_ASSERT(off <= FAB_TP_PARAMS_BYTES);
}

size_t fab_transport_params_offset(int kind)
{
	FAB_ASSERT(kind >= 0 && kind < FAB_TRANSPORT_COUNT);
	pthread_once(&offsets_once, make_offsets);
	return offsets[kind];
}

const struct fab_wire *fab_wire_of(int transport)
{
	return &fab_transport_at(transport)->wire;
}
