/*
 * testutil.h - helpers shared by the unit tests: run a scenario given as
 * YAML text, check the conservation laws every run must obey, and read
 * ports by name.
 */
#ifndef FAB_TESTUTIL_H
#define FAB_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/analysis/diagnose.h"
#include "../../src/run.h"

/* run.threads as asked, whatever else the machine runs (a run keeps to its
 * free cores otherwise): the threaded runs' results are what is checked */
__attribute__((constructor)) static void testutil_exact_threads(void)
{
	setenv("FABSCOPE_THREADS_EXACT", "1", 0);
}

/* whether one of the suspect's evidence lines says text */
static inline bool suspect_says(const struct fab_suspect *s, const char *text)
{
	for (int k = 0; k < s->nevidence; k++)
		if (strstr(s->evidence[k], text))
			return true;
	return false;
}

/* RoCEv2 framing from the specification, not from the code: Ethernet 14 +
 * IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 beyond the payload, and the
 * preamble, start delimiter and inter-frame gap (20) on the wire. */
#define ROCE_FRAME 62
#define ROCE_WIRE (ROCE_FRAME + 20)

/* n servers of one GPU and one NIC under a single leaf */
#define ONE_LEAF(n)                                                                                                    \
	"topology: {leaves: 1, servers_per_leaf: " #n ", gpus_per_server: 1, "                                         \
	"nics_per_server: 1, spines: 1, links_per_spine: 1}\n"

struct trun {
	struct fab_config *cfg;
	struct fab_run *run;
};

/* Bytes sent = delivered + dropped + in flight, and every finished flow
 * delivered exactly its size, once. */
static inline void check_conservation(const struct fab_run *r)
{
	const struct fab_sim_totals *t = fab_sim_totals(r->sim);
	assert_int_equal(t->data_tx_bytes, t->data_rx_bytes + t->data_drop_bytes + t->data_inflight_bytes);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(r->sim, &n);
	const struct fab_flow_stats *st = fab_sim_flow_stats(r->sim);
	uint64_t delivered = 0;
	for (size_t i = 0; i < n; i++) {
		delivered += st[i].delivered_bytes;
		if (st[i].finish_ps != FAB_TIME_NEVER)
			assert_int_equal(st[i].delivered_bytes, fl[i].bytes);
		else
			assert_true(st[i].delivered_bytes < fl[i].bytes);
	}
	/* retransmitted duplicates reach the NIC but are not delivered twice */
	assert_true(delivered <= t->data_rx_bytes);
}

static inline struct trun trun_yaml_sets(const char *yaml, const char *const *sets, size_t nsets)
{
	struct trun t = {0};
	struct fab_err err = {0};
	t.cfg = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, sets, nsets, &err);
	if (!t.cfg)
		fail_msg("scenario: %s", err.msg);
	t.run = fab_run_new(t.cfg, &err);
	if (!t.run)
		fail_msg("run: %s", err.msg);
	assert_int_equal(fab_run_exec(t.run, NULL, NULL), 0);
	check_conservation(t.run);
	return t;
}

static inline struct trun trun_yaml(const char *yaml)
{
	return trun_yaml_sets(yaml, NULL, 0);
}

static inline void trun_free(struct trun *t)
{
	fab_run_free(t->run);
	fab_config_free(t->cfg);
}

/* the same scenario under two sets of overrides: every flow finishes at
 * the same picosecond (a run split over threads, or kept whole, is the
 * one thread's) */
static inline void check_same_finish_times(const char *yaml, const char *const *a_sets, size_t na,
					   const char *const *b_sets, size_t nb)
{
	struct trun a = trun_yaml_sets(yaml, a_sets, na), b = trun_yaml_sets(yaml, b_sets, nb);
	size_t n;
	fab_sim_flows(a.run->sim, &n);
	const struct fab_flow_stats *sa = fab_sim_flow_stats(a.run->sim), *sb = fab_sim_flow_stats(b.run->sim);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sa[i].finish_ps, sb[i].finish_ps);
	trun_free(&a);
	trun_free(&b);
}

/* A collective sweep (fabscope coll's path) from YAML text, run, checked
 * for conservation. */
struct crun {
	struct fab_config *cfg;
	struct fab_coll_run *r;
};

static inline struct crun coll_yaml(const char *yaml, const char *const *sets, size_t nsets)
{
	struct crun c = {0};
	struct fab_err err = {0};
	/* one operation a size (-w 0 -n 1) unless the test names iterations:
	 * the mechanisms are checked on one operation, the iterations by
	 * test_collsim_iterations */
	assert_true(nsets <= 30);
	const char *all[32] = {"collective.warmup=0", "collective.iters=1"};
	size_t n = 2;
	for (size_t i = 0; i < nsets && n < 32; i++)
		all[n++] = sets[i];
	bool named = strstr(yaml, "iters:") || strstr(yaml, "warmup:");
	c.cfg = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, named ? sets : all, named ? nsets : n, &err);
	if (!c.cfg)
		fail_msg("scenario: %s", err.msg);
	c.r = fab_coll_run_new(c.cfg, false, &err);
	if (!c.r)
		fail_msg("coll: %s", err.msg);
	if (fab_coll_run_exec(c.r, NULL, NULL, &err))
		fail_msg("exec: %s", err.msg);
	check_conservation(c.r->run);
	return c;
}

static inline void crun_free(struct crun *c)
{
	fab_coll_run_free(c->r);
	fab_config_free(c->cfg);
}

/* Global port id of node's port toward peer (first such port). */
static inline uint32_t port_between(const struct fab_topo *t, const char *node, const char *peer)
{
	for (uint32_t p = 0; p < t->nports; p++)
		if (!strcmp(t->nodes[t->ports[p].node].name, node) &&
		    !strcmp(t->nodes[t->ports[t->ports[p].peer].node].name, peer))
			return p;
	fail_msg("no port %s -> %s", node, peer);
	return 0;
}

static inline double rel_err(double got, double want)
{
	return got > want ? (got - want) / want : (want - got) / want;
}

#endif
