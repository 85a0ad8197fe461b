/*
 * plan.h - fabric design from a cluster's size and its switches: how many
 * leaves and spines (or a k-ary fat tree), links per tier, the
 * oversubscription reached and the bisection bandwidth; the scenario's
 * topology keys that build it.
 */
#ifndef FAB_PLAN_H
#define FAB_PLAN_H

#include <jansson.h>
#include <stdio.h>

#include "../base/base.h"

/* What a design is made of, each with a price and a power (at 400G; other
 * rates scale both in proportion): NICs, switch ports and each switch's
 * base, and per link either a copper or active optical cable, or two
 * transceivers of a reach class and fibre by the metre. */
enum fab_plan_item {
	FAB_PI_NIC,         /* a NIC port */
	FAB_PI_SWITCH_PORT, /* a switch port (its share of the ASIC, SerDes, fans) */
	FAB_PI_SWITCH,      /* a switch's base (chassis, CPU, supplies) */
	FAB_PI_DAC,         /* a passive copper cable, both ends */
	FAB_PI_AOC,         /* an active optical cable, both ends */
	FAB_PI_SR,          /* a multimode transceiver (SR8), 100 m */
	FAB_PI_DR,          /* a single-mode parallel transceiver (DR4), 500 m */
	FAB_PI_FR,          /* a single-mode CWDM transceiver (FR4), 2 km */
	FAB_PI_LR,          /* LR4, 10 km */
	FAB_PI_FIBER_M,     /* a metre of fibre */
	FAB_PI_N
};
extern const char *const fab_plan_item_names[FAB_PI_N];

struct fab_plan_prices {
	double usd[FAB_PI_N], watts[FAB_PI_N];
};
/* the defaults (doc/plan.md says where they come from) */
void fab_plan_prices_default(struct fab_plan_prices *pr);

/* the rates a plan's links may have: topology.fabric_rate's range */
#define FAB_PLAN_MIN_RATE 1000000ULL
#define FAB_PLAN_MAX_RATE 1600000000000ULL

struct fab_plan_req {
	uint32_t gpus, gpus_per_server, nics_per_server;
	uint32_t radix;                     /* ports per switch */
	fab_rate_bps nic_rate, fabric_rate; /* NIC-leaf, switch-switch links */
	uint32_t over_num, over_den;        /* leaf down:up wanted, e.g. 2:1 */
	uint32_t over2_num, over2_den;      /* three tiers: spine down:up wanted (0: 1:1) */
	bool rail_optimized;
	bool dual_tor; /* each NIC's two ports (at half its rate) to the two leaves of a pair */
	int tiers;     /* 2, 3, or 0: as few as will do */
	/* cable lengths per tier (NIC-leaf, leaf-spine, aggregation-core), m;
	 * 0: the defaults (3 m in the rack, 20 m to a rail group's leaf at the
	 * end of the row; 50 m; 300 m) */
	double length_m[3];
	const struct fab_plan_prices *prices; /* NULL: the defaults */
};

/* what one switch or link down takes away */
struct fab_plan_failure {
	uint32_t leaf_servers_cut; /* servers left with no port (no rails: the leaf's) */
	uint32_t leaf_nics_cut;    /* NIC ports that lose their only link */
	double leaf_share;         /* of the cluster's NIC ports */
	uint32_t upper_up_left;    /* a spine down: uplinks each of its pod's leaves keeps */
	uint32_t upper_up_of;      /* of so many */
	double upper_oversub;      /* that leaf's oversubscription then */
	double upper_bisection;    /* a spine down: bisection left, share */
	double link_oversub;       /* a leaf's uplink down: its oversubscription */
	uint32_t nic_left, nic_of; /* a NIC's link down: its server keeps nic_left of nic_of */
	double core_bisection;     /* three tiers: a super-spine down, bisection left */
};

struct fab_plan {
	int tiers;
	uint32_t servers, nic_ports;       /* built (at least those asked for); nic_ports: NICs */
	uint32_t leaves, servers_per_leaf; /* leaves: per pod with three tiers */
	uint32_t spines, links_per_spine;  /* spines: per pod with three tiers */
	uint32_t leaf_down, leaf_up;       /* ports of a leaf in use */
	uint32_t k;                        /* unused (0) */
	uint32_t pods;                     /* three tiers: pods, each leaves and spines as above */
	uint32_t super_spines;             /* three tiers: super-spines a plane (plane j: spine j of every pod) */
	uint32_t links_per_super;          /* three tiers: links from a spine to each super-spine of its plane */
	uint32_t switches[3];              /* per tier: leaf, spine, super-spine (all pods) */
	uint64_t links[3];                 /* per tier: NIC-leaf, leaf-spine, spine-super-spine */
	double oversubscription;           /* leaf down capacity over up capacity, reached */
	double spine_oversubscription;     /* three tiers: a spine's down over up, reached */
	double bisection_bps;              /* the smaller of NIC capacity / 2 and the top tier's cut */
	uint64_t max_nic_ports;            /* the most NIC ports this many tiers of this radix serve at 1:1 */
	/* optics and cables */
	double length_m[3];
	int reach[3];                          /* per tier: FAB_PI_DAC .. FAB_PI_LR */
	uint64_t count[FAB_PI_N];              /* the bill of materials (fibre: metres) */
	double usd[FAB_PI_N], watts[FAB_PI_N]; /* per item: count x price */
	double usd_total, watts_total;
	struct fab_plan_failure fail;
};

/* The defaults: 8 GPUs and 8 NICs of 400G a server, radix 64, 1:1, the
 * default prices */
void fab_plan_req_default(struct fab_plan_req *r);
/* One option by its name (gpus, gpus_per_server, nics_per_server, nic_rate,
 * fabric_rate, radix, oversubscription, spine_oversubscription,
 * rail_optimized, dual_tor, tiers, length_leaf, length_spine, length_core)
 * from its text: 0, FAB_EINVAL with why, or 1 for a name it does not know
 * (the command line and plan --compare's files both set them so). */
int fab_plan_req_set(struct fab_plan_req *r, const char *key, const char *val, char *why, size_t len);
#define FAB_PLAN_OPTIONS                                                                                               \
	"gpus, gpus_per_server, nics_per_server, nic_rate, fabric_rate, radix, oversubscription, "                     \
	"spine_oversubscription, rail_optimized, dual_tor, tiers, length_leaf, length_spine, length_core"

/* The design, or FAB_EINVAL with what cannot be built (a radix too small
 * for one server's NICs, a cluster beyond three tiers of this radix). */
int fab_plan_design(const struct fab_plan_req *req, struct fab_plan *p, struct fab_err *err);
/* The scenario (YAML) whose topology is the design */
void fab_plan_write_yaml(FILE *f, const struct fab_plan_req *req, const struct fab_plan *p);
/* The design in words and tables */
void fab_plan_write_text(FILE *f, const struct fab_plan_req *req, const struct fab_plan *p);
/* The design as a JSON object (plan's --format json, --compare) */
json_t *fab_plan_json(const struct fab_plan_req *req, const struct fab_plan *p);
/* The scenario keys that build the design, "topology.KEY=VALUE", *n of
 * them (free each and the array) */
char **fab_plan_sets(const struct fab_plan_req *req, const struct fab_plan *p, size_t *n);

#endif
