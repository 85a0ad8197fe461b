/*
 * traffic.h - what a scenario asks the network to carry: explicit flows, a
 * CSV flow list, and generators (permutation, all-to-all, incast, random
 * pairs), expanded into the engine's NIC-to-NIC flows.
 *
 * Endpoints are GPU indices (server * gpus_per_server + local GPU); each GPU
 * sends through the NIC the topology assigns it.  Two GPUs that share a NIC
 * cannot exchange traffic over the fabric, so generators never pair them.
 */
#ifndef FAB_TRAFFIC_H
#define FAB_TRAFFIC_H

#include "../base/base.h"
#include "../sim/sim.h"
#include "../topo/topo.h"

enum fab_gen_kind { FAB_GEN_PERMUTATION, FAB_GEN_ALL_TO_ALL, FAB_GEN_INCAST, FAB_GEN_RANDOM_PAIRS, FAB_GEN_POISSON };
enum fab_scope { FAB_SCOPE_ANY, FAB_SCOPE_CROSS_SERVER, FAB_SCOPE_CROSS_LEAF };

struct fab_src_loc {
	const char *origin; /* file name (not owned) */
	unsigned line, col;
	char what[64]; /* "traffic.flows[2]" */
};

struct fab_flow_spec {
	uint32_t src, dst; /* GPUs */
	fab_bytes bytes;
	fab_time_ps start_ps;
	uint32_t priority;
	uint32_t qps;
	int transport; /* 0: the fabric's; else enum fab_transport_kind + 1 */
	struct fab_src_loc loc;
};

struct fab_gen_spec {
	int kind;        /* enum fab_gen_kind */
	fab_bytes bytes; /* per flow */
	fab_time_ps start_ps;
	uint32_t priority;
	uint32_t qps;     /* per flow */
	int transport;    /* 0: the fabric's; else enum fab_transport_kind + 1 */
	uint32_t senders; /* incast: how many GPUs send */
	uint32_t dst;     /* incast: the receiving GPU */
	uint32_t pairs;   /* random-pairs: how many flows */
	int scope;        /* enum fab_scope: which pairs are allowed */
	/* poisson: each GPU starts flows at Poisson arrivals, sizes from the
	 * CDF, destinations uniform, at load x its NIC share; incast events on
	 * top at incast_load of the fabric's NIC capacity */
	char *cdf; /* websearch, fb_hadoop or a path */
	double load;
	fab_time_ps duration_ps;
	double incast_load;
	uint32_t incast_senders;
	fab_bytes incast_bytes;
	struct fab_src_loc loc;
};

struct fab_traffic_params {
	struct fab_flow_spec *flows;
	size_t nflows;
	struct fab_gen_spec *gens;
	size_t ngens;
	char *flows_csv; /* path, or NULL */
	char *flows_ns3; /* HPCC's ns-3 flow file: path, or NULL */
};

/* Reads "src,dst,bytes[,start][,priority][,qps]" rows; appends to *flows. */
int fab_traffic_read_csv(const char *path, struct fab_flow_spec **flows, size_t *n, struct fab_err *err);

/* Reads HPCC's ns-3 flow file (ns3.c); its node ids are the topology's
 * hosts hID, or GPUs when it has none. */
int fab_traffic_read_ns3(const char *path, const struct fab_topo *t, struct fab_flow_spec **flows, size_t *n,
			 struct fab_err *err);

/* A run's flows, from every source together, are at most this many (each
 * costs about 3.3 KB with its results; fab_run_new also checks memory). */
#define FAB_MAX_FLOWS 10000000u

/* Expands everything into engine flows (caller frees *out). */
int fab_traffic_expand(const struct fab_traffic_params *tp, const struct fab_topo *t, uint64_t seed,
		       struct fab_sim_flow **out, size_t *nout, struct fab_err *err);

void fab_traffic_free(struct fab_traffic_params *tp);

#endif
