/*
 * plan.h - fabric design from a cluster's size and its switches: how many
 * leaves and spines (or a k-ary fat tree), links per tier, the
 * oversubscription reached and the bisection bandwidth; the scenario's
 * topology keys that build it.
 */
#ifndef FAB_PLAN_H
#define FAB_PLAN_H

#include <stdio.h>

#include "../base/base.h"

struct fab_plan_req {
	uint32_t gpus, gpus_per_server, nics_per_server;
	uint32_t radix;                     /* ports per switch */
	fab_rate_bps nic_rate, fabric_rate; /* NIC-leaf, switch-switch links */
	uint32_t over_num, over_den;        /* leaf down:up wanted, e.g. 2:1 */
	bool rail_optimized;
	int tiers; /* 2, 3, or 0: as few as will do */
};

struct fab_plan {
	int tiers;
	uint32_t servers, nic_ports;       /* built (at least those asked for) */
	uint32_t leaves, servers_per_leaf; /* two tiers */
	uint32_t spines, links_per_spine;
	uint32_t leaf_down, leaf_up; /* ports of a leaf in use */
	uint32_t k;                  /* three tiers: the fat tree's arity */
	uint32_t switches[3];        /* per tier: leaf/edge, spine/aggregation, core */
	uint64_t links[3];           /* per tier: NIC-leaf, leaf-spine, aggregation-core */
	double oversubscription;     /* leaf down capacity over up capacity, reached */
	double bisection_bps;        /* the smaller of NIC capacity / 2 and the top tier's cut */
	uint64_t max_nic_ports;      /* the most NIC ports this many tiers of this radix serve at 1:1 */
};

/* The design, or FAB_EINVAL with what cannot be built (a radix too small
 * for one server's NICs, a cluster beyond three tiers of this radix). */
int fab_plan_design(const struct fab_plan_req *req, struct fab_plan *p, struct fab_err *err);
/* The scenario (YAML) whose topology is the design */
void fab_plan_write_yaml(FILE *f, const struct fab_plan_req *req, const struct fab_plan *p);
/* The design in words and a table */
void fab_plan_write_text(FILE *f, const struct fab_plan_req *req, const struct fab_plan *p);

#endif
