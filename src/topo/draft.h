/*
 * draft.h - a topology under construction, inside the topology layer: the
 * builders (topo.c) and the file readers (topo.c's edge list, ns3.c) add
 * nodes and links to a draft (draft.c), and finishing it lays out the
 * ports and computes the routes (routes.c).
 */
#ifndef FAB_TOPO_DRAFT_H
#define FAB_TOPO_DRAFT_H

#include "topo.h"

struct draft_link {
	uint32_t a, b;
	fab_rate_bps rate_bps;
	fab_time_ps delay_ps;
};

struct draft {
	struct fab_node *nodes;
	uint32_t nnodes, cap_nodes;
	struct draft_link *links;
	uint32_t nlinks, cap_links;
};

uint32_t fab_draft_add_node(struct draft *d, int kind, uint32_t tier, const char *name);
void fab_draft_add_link(struct draft *d, uint32_t a, uint32_t b, fab_rate_bps rate, fab_time_ps delay);
void fab_draft_free(struct draft *d);
/* the topology (NULL and err set when it is impossible); the draft keeps
 * what it did not hand over, and is freed by the caller */
struct fab_topo *fab_draft_finish(struct draft *d, const struct fab_topo_params *p, struct fab_err *err);
/* frees what routing computed (routes.c): before routing again, or with the topology */
void fab_topo_free_routes(struct fab_topo *t);

/* ns3.c: HPCC's ns-3 topology file into a draft */
int fab_topo_read_ns3(const char *path, struct draft *d, struct fab_err *err);

#endif
