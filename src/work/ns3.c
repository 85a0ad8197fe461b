/*
 * ns3.c - HPCC's ns-3 flow file (its simulation/mix/flow.txt), so that one
 * file gives both simulators the same flows:
 *
 *   N
 *   SRC DST PG DPORT BYTES START      N times, e.g. 2 1 3 100 200000 2.000000067
 *
 * SRC and DST are ns-3 node ids: host hID of the topology (an ns3 topology
 * names its hosts so, and so may an edge list), or GPU indices when the
 * topology has no node named hID.  PG is the priority; DPORT is read and
 * not used; START is in seconds, read as ns-3 reads it: a double,
 * truncated to whole nanoseconds (so 2.0000001, whose double is a hair
 * below, starts at 2000000099 ns, as in HPCC's runs).  What follows the N-th flow is not read (as ns-3 does
 * not); the flows need not be sorted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "traffic.h"

/* seconds as a double, truncated to whole ns exactly (the double's value
 * times 10^9, rounded down) */
static int seconds_to_ns(double s, uint64_t *ns)
{
	if (!(s >= 0) || s > 1e6)
		return FAB_EINVAL;
	if (s == 0) {
		*ns = 0;
		return 0;
	}
	int e;
	double f = frexp(s, &e);                      /* s = f x 2^e, f in [0.5, 1) */
	uint64_t m = (uint64_t)ldexp(f, 53);          /* s = m x 2^(e - 53) exactly */
	__uint128_t p = (__uint128_t)m * 1000000000u; /* s x 1e9 = p x 2^(e - 53) */
	*ns = e >= 53 ? (uint64_t)(p << (e - 53)) : (uint64_t)(p >> (53 - e));
	return 0;
}

/* the id of a NIC named hID, or false */
static bool host_id(const char *name, uint64_t *id)
{
	char *end;
	if (name[0] != 'h' || name[1] < '0' || name[1] > '9')
		return false;
	*id = strtoull(name + 1, &end, 10);
	return !*end && *id <= 100000000u;
}

/* host id -> NIC, from the names hID of the topology's NICs; NULL if none */
static uint32_t *host_map(const struct fab_topo *t, uint64_t *nmap)
{
	uint64_t max = 0, id;
	bool any = false;
	for (uint32_t k = 0; k < t->nnics; k++)
		if (host_id(t->nodes[t->nic_node[k]].name, &id)) {
			any = true;
			max = FAB_MAX(max, id);
		}
	if (!any)
		return NULL;
	uint32_t *map = fab_xcalloc(max + 1, sizeof *map);
	for (uint64_t i = 0; i <= max; i++)
		map[i] = UINT32_MAX;
	for (uint32_t k = 0; k < t->nnics; k++)
		if (host_id(t->nodes[t->nic_node[k]].name, &id))
			map[id] = k;
	*nmap = max + 1;
	return map;
}

/* the first GPU that sends through NIC k */
static uint32_t nic_gpu(const struct fab_topo *t, uint32_t k)
{
	uint32_t server = k / t->nics_per_server;
	for (uint32_t g = server * t->gpus_per_server; g < (server + 1) * t->gpus_per_server; g++)
		if (fab_topo_gpu_nic(t, g) == k)
			return g;
	return UINT32_MAX; /* more NICs than GPUs: this NIC carries no GPU's traffic */
}

/* an ns-3 node id as a GPU */
static int endpoint(struct fab_tok *tk, const char *what, const struct fab_topo *t, const uint32_t *map, uint64_t nmap,
		    uint32_t *gpu, struct fab_err *err)
{
	uint64_t id;
	int rc = fab_tok_uint(tk, what, 0, UINT32_MAX, &id, err);
	if (rc)
		return rc;
	if (!map) {
		*gpu = (uint32_t)id; /* checked against the cluster with the other flows */
		return 0;
	}
	if (id >= nmap || map[id] == UINT32_MAX)
		return fab_tok_err(tk, err, "%s: node %llu is not a host of the topology (no NIC named h%llu)", what,
				   (unsigned long long)id, (unsigned long long)id);
	*gpu = nic_gpu(t, map[id]);
	if (*gpu == UINT32_MAX)
		return fab_tok_err(tk, err, "%s: host h%llu is a NIC no GPU uses", what, (unsigned long long)id);
	return 0;
}

int fab_traffic_read_ns3(const char *path, const struct fab_topo *t, struct fab_flow_spec **flows, size_t *n,
			 struct fab_err *err)
{
	struct fab_tok tk;
	*flows = NULL;
	*n = 0;
	int rc = fab_tok_open(&tk, path, err);
	if (rc)
		return rc;
	uint64_t nmap = 0, count;
	uint32_t *map = host_map(t, &nmap);
	if ((rc = fab_tok_uint(&tk, "the number of flows", 0, FAB_MAX_FLOWS, &count, err)))
		goto out;
	/* the array grows with the flows read: the count line alone does not
	 * make this allocate (a file that claims 10 M flows and holds one) */
	size_t cap = 0;
	for (uint64_t i = 0; i < count; i++) {
		if (i == cap) {
			cap = cap ? 2 * cap : 1024;
			*flows = fab_xrealloc(*flows, cap, sizeof **flows);
		}
		struct fab_flow_spec *fs = &(*flows)[i];
		memset(fs, 0, sizeof *fs);
		uint64_t pg, dport, ns;
		char why[160];
		double start;
		if ((rc = endpoint(&tk, "src", t, map, nmap, &fs->src, err)))
			goto out;
		fs->loc = (struct fab_src_loc){.origin = path, .line = tk.tok_line, .col = tk.tok_col};
		snprintf(fs->loc.what, sizeof fs->loc.what, "flow %llu", (unsigned long long)i);
		if ((rc = endpoint(&tk, "dst", t, map, nmap, &fs->dst, err)) ||
		    (rc = fab_tok_uint(&tk, "pg (the priority)", 0, FAB_NPRIO - 1, &pg, err)) ||
		    (rc = fab_tok_uint(&tk, "dport", 0, 65535, &dport, err)) ||
		    (rc = fab_tok_uint(&tk, "the size in bytes", 0, 1000000000000000ull, &fs->bytes, err)))
			goto out;
		if (!fs->bytes) {
			rc = fab_tok_err(&tk, err, "the size in bytes must be at least 1");
			goto out;
		}
		if ((rc = fab_tok_need(&tk, "the start time in seconds", err)))
			goto out;
		if (fab_parse_double(tk.tok, &start, why, sizeof why) || seconds_to_ns(start, &ns)) {
			rc = fab_tok_err(&tk, err, "start: expected seconds from 0 to 1000000, got '%s'", tk.tok);
			goto out;
		}
		fs->start_ps = ns * FAB_PS_PER_NS;
		fs->priority = (uint32_t)pg;
		fs->qps = 1;
		(*n)++;
	}
	if (!*flows) /* none: an array all the same, as before */
		*flows = fab_xcalloc(1, sizeof **flows);
out:
	free(map);
	fab_tok_close(&tk);
	if (rc) {
		free(*flows);
		*flows = NULL;
		*n = 0;
	}
	return rc;
}
