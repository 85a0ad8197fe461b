/*
 * topo.h - the cluster graph: NICs, switches, links, and routes over them.
 *
 * A node is a NIC (an endpoint) or a switch.  Every link is two directed
 * ports, one at each end; a port is the egress side of a node's interface and
 * knows its peer port.  GPUs are not nodes: GPU g of a server uses one of the
 * server's NICs (gpu -> nic map).  Routing is shortest-path with every
 * equal-cost next hop kept, so ECMP chooses among them per packet hash.
 */
#ifndef FAB_TOPO_H
#define FAB_TOPO_H

#include "../base/base.h"

enum fab_topo_kind { FAB_TOPO_SPINE_LEAF, FAB_TOPO_FAT_TREE, FAB_TOPO_FILE, FAB_TOPO_NS3 };

/* What the user asked for; the scenario layer fills it. */
struct fab_topo_params {
	int kind;                    /* enum fab_topo_kind */
	uint32_t gpus_per_server;    /* GPUs in a server */
	uint32_t nics_per_server;    /* NICs in a server, one switch port each */
	uint32_t leaves;             /* spine-leaf: leaf switches */
	uint32_t spines;             /* spine-leaf: spine switches */
	uint32_t servers_per_leaf;   /* spine-leaf: servers under a leaf (a rail group with rail wiring) */
	uint32_t links_per_spine;    /* spine-leaf: parallel links from each leaf to each spine */
	uint32_t pods;               /* spine-leaf: pods (0, 1: two tiers); leaves and spines are per pod */
	uint32_t super_spines;       /* pods > 1: super-spines in each plane (plane j: spine j of every pod) */
	uint32_t links_per_super;    /* pods > 1: parallel links from a spine to each super-spine of its plane */
	bool rail_optimized;         /* NIC k of each server goes to leaf k of its group */
	uint32_t nic_ports;          /* ports of a NIC (spine-leaf), each its own link (0: 1) */
	bool dual_tor;               /* spine-leaf: port j of every NIC to leaf j of the server's pair */
	uint32_t k;                  /* fat-tree arity (even) */
	fab_rate_bps host_bps;       /* NIC to leaf/edge links */
	fab_rate_bps fabric_bps;     /* leaf-spine, edge-aggregation links */
	fab_rate_bps core_bps;       /* aggregation-core (fat-tree), spine-super-spine links */
	fab_time_ps host_delay_ps;   /* propagation delay of host links */
	fab_time_ps fabric_delay_ps; /* propagation delay of switch-switch links */
	uint32_t oversub_num;        /* requested down:up ratio, 0 = not requested */
	uint32_t oversub_den;
	bool spines_given; /* the user set spines explicitly */
	bool links_given;  /* the user set links_per_spine explicitly */
	uint32_t radix;    /* switch port limit */
	const char *file;  /* FAB_TOPO_FILE: path of the edge list; FAB_TOPO_NS3: of HPCC's ns-3 file */
};

enum fab_node_kind { FAB_NODE_NIC, FAB_NODE_SWITCH };

struct fab_node {
	int kind;            /* enum fab_node_kind */
	uint32_t tier;       /* 0 NIC, 1 leaf/edge, 2 spine/aggregation, 3 core */
	uint32_t first_port; /* index of its first port in topo->ports */
	uint32_t nports;
	int32_t server; /* NIC: server index; switch: -1 */
	int32_t nic;    /* NIC: NIC index (0..nnics-1); switch: -1 */
	char name[32];
};

struct fab_port {
	uint32_t node;         /* owner */
	uint32_t peer;         /* the port at the other end of the link */
	fab_rate_bps rate_bps; /* the rate it runs at */
	fab_time_ps delay_ps;  /* propagation delay of the link */
};

/* Per tier: capacity toward the tier below and toward the tier above. */
struct fab_tier_report {
	uint32_t tier;
	char name[16];
	uint32_t switches;
	fab_rate_bps down_bps; /* sum over the tier's switches */
	fab_rate_bps up_bps;
};

/* a run of destination groups a switch reaches through the same ports */
struct fab_route_run {
	uint32_t g;   /* its first group */
	uint32_t off; /* its ports: route_ports[off .. off + cnt - 1] */
	uint32_t cnt; /* 0: unreachable (links down) */
};

struct fab_topo {
	struct fab_node *nodes;
	uint32_t nnodes;
	struct fab_port *ports;
	uint32_t nports;
	uint32_t *nic_node; /* NIC index -> node id */
	uint32_t nnics;
	uint32_t nservers, gpus_per_server, nics_per_server; /* nics_per_server: NIC ports (nodes) */
	uint32_t nic_ports;                                  /* ports of a NIC: consecutive NIC nodes */
	uint32_t ngpus;
	/* routes.  NICs that hang off the same switch are reached the same way
	 * from every other switch: they form a destination group (a fat-tree of
	 * k-port switches: k^2/2 groups, not k^3/4 NICs).  A topology whose
	 * NICs do not all hang off one switch has a group per NIC and no
	 * attach switch.  Switch s's table is run-length coded over the groups
	 * (consecutive groups reached through the same ports share a run):
	 * its runs are route_runs[run_first[s] .. run_first[s + 1] - 1], a run
	 * covers the groups from its g up to the next run's, and its ECMP
	 * next-hop ports are route_ports[off .. off + cnt - 1]; at the switch
	 * a group hangs off, a NIC's own port.  A fat-tree's edge switch has 3
	 * runs, an aggregation switch k/2 + 2, a core switch k: a few cache
	 * lines a switch, where a dense table has a row of every group. */
	uint32_t *switch_index; /* node id -> switch index, UINT32_MAX for NICs */
	uint32_t nswitches;
	uint32_t ngroups;
	uint32_t *nic_group;    /* [nnics] */
	uint32_t *group_attach; /* [ngroups]: the switch index its NICs hang off, UINT32_MAX: none */
	uint32_t *nic_port;     /* [nnics]: the attach switch's port toward the NIC */
	uint8_t *nic_cut;       /* [nnics]: bit 0: no route to it from afar, bit 1: nor from its switch (links out) */
	uint32_t *run_first;    /* [nswitches + 1] */
	struct fab_route_run *route_runs;
	size_t nruns;
	uint32_t *route_ports;
	size_t nroute_ports;
	struct fab_tier_report tiers[4];
	uint32_t ntiers;
};

/* Builds and routes; returns NULL and fills err on an impossible request. */
struct fab_topo *fab_topo_build(const struct fab_topo_params *p, struct fab_err *err);
void fab_topo_free(struct fab_topo *t);
/* Routes again without the ports marked in down (both ends of a link):
 * what the fabric's routing converges to after a link failure. */
void fab_topo_reroute(struct fab_topo *t, const uint8_t *down);

/* NIC index used by GPU g. */
static inline uint32_t fab_topo_gpu_nic(const struct fab_topo *t, uint32_t gpu)
{
	/* the GPU's NIC's first port: NIC k of a server is ports k P .. k P + P - 1 */
	uint32_t server = gpu / t->gpus_per_server;
	uint32_t local = gpu % t->gpus_per_server, P = t->nic_ports ? t->nic_ports : 1;
	uint32_t nics = t->nics_per_server / P;
	return server * t->nics_per_server + (uint32_t)((uint64_t)local * nics / t->gpus_per_server) * P;
}

static inline uint32_t fab_topo_gpu_server(const struct fab_topo *t, uint32_t gpu)
{
	return gpu / t->gpus_per_server;
}

/* The switch a NIC's single port connects to (its leaf / edge). */
static inline uint32_t fab_topo_nic_leaf(const struct fab_topo *t, uint32_t nic)
{
	const struct fab_node *n = &t->nodes[t->nic_node[nic]];
	return t->ports[t->ports[n->first_port].peer].node;
}

/* Equal-cost next hops toward NIC dst from the switch of index si
 * (switch_index: the table's row). */
static inline const uint32_t *fab_topo_routes_at(const struct fab_topo *t, uint32_t si, uint32_t dst_nic,
						 uint32_t *count)
{
	uint32_t g = t->nic_group[dst_nic];
	if (t->group_attach[g] == si) { /* the last hop */
		*count = !(t->nic_cut[dst_nic] & 2);
		return &t->nic_port[dst_nic];
	}
	/* the last run that starts at or before g (a switch's first run starts at 0) */
	const struct fab_route_run *r = t->route_runs;
	uint32_t lo = t->run_first[si], hi = t->run_first[si + 1];
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r[mid].g <= g)
			lo = mid;
		else
			hi = mid;
	}
	*count = t->nic_cut[dst_nic] & 1 ? 0 : r[lo].cnt;
	return &t->route_ports[r[lo].off];
}

/* Equal-cost next hops from switch node sw toward NIC dst. */
static inline const uint32_t *fab_topo_routes(const struct fab_topo *t, uint32_t sw, uint32_t dst_nic, uint32_t *count)
{
	return fab_topo_routes_at(t, t->switch_index[sw], dst_nic, count);
}

/* "2:1", "1.5:1" */
char *fab_topo_fmt_ratio(fab_rate_bps down, fab_rate_bps up, char *buf, size_t len);

/* Bytes a topology of this size takes (routing tables, nodes, ports with
 * their engine state), estimated; fab_draft_finish refuses one that would
 * not fit in 80% of the available memory. */
uint64_t fab_topo_estimate_bytes(uint64_t nswitches, uint64_t ngroups, uint64_t nnics, uint64_t nnodes,
				 uint64_t nlinks);

/* Limits on topology files (edge list and ns-3), and the ranges of a file
 * link's rate and delay: those of the scenario's link keys. */
#define FAB_TOPO_MAX_NODES (1u << 22)
#define FAB_TOPO_MAX_LINKS (1u << 24)
#define FAB_LINK_MIN_BPS 1000000ULL
#define FAB_LINK_MAX_BPS 1600000000000ULL
#define FAB_LINK_MAX_DELAY_PS FAB_PS_PER_S
/* 0, or -1 with why: a rate or delay outside those ranges */
int fab_topo_check_link(fab_rate_bps rate, fab_time_ps delay, char *why, size_t len);

#endif
