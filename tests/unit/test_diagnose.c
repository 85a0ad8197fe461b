/*
 * fabscope diagnose against injected faults: the matrix test runs on a
 * cluster with one fault, diagnose must put that component first; on a
 * healthy cluster it must find nothing.  Includes the randomized suite.
 */
#include "testutil.h"
#include "../../src/analysis/diagnose.h"
#include "../../src/base/rng.h"

#define CLUSTER                                                                                                        \
	"topology: {leaves: 2, servers_per_leaf: 2, gpus_per_server: 8, nics_per_server: 8,\n"                         \
	"           spines: 4, links_per_spine: 4}\n"

/* diagnoses one document with the default parameters */
static void diag_doc(json_t *doc, struct fab_diagnosis *d)
{
	struct fab_diag_params p;
	fab_diag_defaults(&p);
	struct fab_err err = {0};
	assert_int_equal(fab_diagnose(&doc, 1, NULL, &p, d, &err), 0);
}

/* Runs the scenario (the matrix test, or with sim its traffic and jobs)
 * and diagnoses it. */
static void diagnose_run(const char *yaml, const char *const *sets, size_t n, bool sim, struct fab_diagnosis *d)
{
	struct fab_err err = {0};
	struct fab_config *c = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, sets, n, &err);
	if (!c)
		fail_msg("%s", err.msg);
	json_t *doc;
	if (sim) {
		struct fab_run *run = fab_run_new(c, &err);
		if (!run || fab_run_exec(run, NULL, NULL))
			fail_msg("%s", err.msg);
		doc = fab_result_json(c, run->sim);
		json_object_set_new(doc, "jobs", fab_jobs_json(run->jobs, run->njobs));
		fab_run_free(run);
	} else {
		struct fab_matrix_run *r = fab_matrix_run_new(c, &err);
		if (!r || fab_matrix_run_exec(r, NULL, NULL, &err))
			fail_msg("%s", err.msg);
		doc = fab_result_json(c, r->run->sim);
		json_object_set_new(doc, "matrix", fab_matrix_json(&r->m));
		fab_matrix_run_free(r);
	}
	/* through text, as the CLI hands documents over */
	char *text = json_dumps(doc, 0);
	json_decref(doc);
	doc = json_loads(text, 0, NULL);
	free(text);
	diag_doc(doc, d);
	json_decref(doc);
	fab_config_free(c);
}

static void diagnose(const char *yaml, const char *const *sets, size_t n, struct fab_diagnosis *d)
{
	diagnose_run(yaml, sets, n, false, d);
}

static void link_name(char *buf, size_t len, const char *a, const char *b)
{
	if (strcmp(a, b) > 0) {
		const char *t = a;
		a = b;
		b = t;
	}
	snprintf(buf, len, "link %s <-> %s", a, b);
}

static void test_diagnose_healthy_cluster(void **state)
{
	(void)state;
	struct fab_diagnosis d;
	diagnose(CLUSTER, NULL, 0, &d);
	assert_int_equal(d.n, 0);
	fab_diagnosis_free(&d);
}

static void test_diagnose_names_lossy_cable(void **state)
{
	(void)state;
	const char *yaml = CLUSTER "faults: [{kind: lossy, node: server2.nic5, peer: leaf1, drop: 0.01}]\n";
	struct fab_diagnosis d;
	diagnose(yaml, NULL, 0, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "link leaf1 <-> server2.nic5");
	fab_diagnosis_free(&d);
}

static void test_diagnose_names_downgraded_link_from_measurement(void **state)
{
	(void)state;
	/* 100G instead of 400G: no counter shows it, the matrix does */
	const char *yaml = CLUSTER "faults: [{kind: degrade, node: server1.nic3, peer: leaf0, rate: 100Gbps}]\n";
	struct fab_diagnosis d;
	diagnose(yaml, NULL, 0, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "link leaf0 <-> server1.nic3");
	assert_non_null(strstr(d.s[0].evidence[0], "GPUs 11"));
	fab_diagnosis_free(&d);
}

static void test_diagnose_names_pfc_storm(void **state)
{
	(void)state;
	const char *yaml = CLUSTER "faults: [{kind: pfc-storm, node: server3.nic0, start: 0, end: 500us}]\n";
	struct fab_diagnosis d;
	diagnose(yaml, NULL, 0, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "NIC server3.nic0 (PFC storm)");
	fab_diagnosis_free(&d);
}

/* One random fault on a random component, many times. */
static void test_diagnose_randomized_fault_suite(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_config *c = fab_config_parse(CLUSTER, strlen(CLUSTER), "t", NULL, NULL, 0, &err);
	struct fab_topo *t = fab_topo_build(&c->topo, &err);
	assert_non_null(t);
	struct fab_rng r;
	fab_rng_init(&r, 2026, 1);
	/* under `make asan` (FAB_DEBUG) the first 20 faults, every kind among
	 * them, and 6 fault-free runs: the same code paths at a third of the
	 * time (130 s of its 9 minutes); the rates are the plain build's claim */
#ifdef FAB_DEBUG
	int runs = 20, clean = 6;
#else
	int runs = 60, clean = 20;
#endif
	int hits = 0;
	for (int i = 0; i < runs; i++) {
		char fault[256], want[200], seed[32];
		int kind = (int)fab_rng_below(&r, 6);
		bool sim = false;
		uint32_t nic = (uint32_t)fab_rng_below(&r, t->nnics);
		const char *nicname = t->nodes[t->nic_node[nic]].name;
		const char *leaf = t->nodes[fab_topo_nic_leaf(t, nic)].name;
		if (kind == 0) {
			/* lossy: any link, fabric links included */
			uint32_t p = (uint32_t)fab_rng_below(&r, t->nports);
			const char *a = t->nodes[t->ports[p].node].name;
			const char *b = t->nodes[t->ports[t->ports[p].peer].node].name;
			uint32_t idx = 0;
			for (uint32_t q = t->nodes[t->ports[p].node].first_port; q < p; q++)
				idx += t->ports[t->ports[q].peer].node == t->ports[t->ports[p].peer].node;
			snprintf(fault, sizeof fault,
				 "faults: [{kind: lossy, node: %s, peer: %s, link_index: %u, drop: 0.01}]", a, b, idx);
			link_name(want, sizeof want, a, b);
		} else if (kind == 1) {
			snprintf(fault, sizeof fault, "faults: [{kind: degrade, node: %s, peer: %s, rate: 100Gbps}]",
				 nicname, leaf);
			link_name(want, sizeof want, nicname, leaf);
		} else if (kind == 2) {
			snprintf(fault, sizeof fault, "faults: [{kind: pfc-storm, node: %s, end: 500us}]", nicname);
			snprintf(want, sizeof want, "NIC %s (PFC storm)", nicname);
		} else if (kind == 3) {
			/* a leaf-spine link goes down; routing converges after 20 us */
			uint32_t sw = t->nnics + (uint32_t)fab_rng_below(&r, 2); /* a leaf */
			const struct fab_node *ln = &t->nodes[sw];
			uint32_t hosts = 0;
			for (uint32_t q = ln->first_port; q < ln->first_port + ln->nports; q++)
				hosts += t->nodes[t->ports[t->ports[q].peer].node].kind == FAB_NODE_NIC;
			uint32_t p = ln->first_port + hosts + (uint32_t)fab_rng_below(&r, ln->nports - hosts);
			const char *a = ln->name, *b = t->nodes[t->ports[t->ports[p].peer].node].name;
			uint32_t idx = 0;
			for (uint32_t q = ln->first_port; q < p; q++)
				idx += t->ports[t->ports[q].peer].node == t->ports[t->ports[p].peer].node;
			snprintf(fault, sizeof fault,
				 "faults: [{kind: down, node: %s, peer: %s, link_index: %u, convergence: 20us}]", a, b,
				 idx);
			link_name(want, sizeof want, a, b);
		} else if (kind == 4) {
			/* a slow GPU in a data-parallel job over the whole cluster */
			uint32_t g = (uint32_t)fab_rng_below(&r, t->ngpus);
			snprintf(fault, sizeof fault,
				 "jobs: [{gpus: 32, iterations: 3, compute: 2ms, gradient_bytes: 4MiB}]\n"
				 "faults: [{kind: slow-gpu, gpu: %u, factor: 1.3}]",
				 g);
			snprintf(want, sizeof want, "GPU %u (straggler in job job0)", g);
			sim = true;
		} else {
			/* ECN thresholds set far too high on the leaf of an incast's target */
			snprintf(fault, sizeof fault,
				 "traffic: {generators: [{kind: incast, senders: 8, dst: %u, bytes: 2MiB}]}\n"
				 "faults: [{kind: ecn, node: %s, kmin: 64MiB, kmax: 64MiB}]",
				 nic, leaf);
			snprintf(want, sizeof want, "ECN thresholds on %s", leaf);
			sim = true;
		}
		char yaml[1024];
		snprintf(yaml, sizeof yaml, "%s%s\n", CLUSTER, fault);
		snprintf(seed, sizeof seed, "run.seed=%d", i + 1);
		const char *sets[] = {seed};
		struct fab_diagnosis d;
		if (getenv("FAB_TEST_VERBOSE"))
			print_message("run %d: %s\n", i, fault);
		diagnose_run(yaml, sets, 1, sim, &d);
		bool hit = d.n >= 1 && !strcmp(d.s[0].target, want);
		hits += hit;
		if (!hit)
			print_message("missed: %s -> %s\n", fault, d.n ? d.s[0].target : "(no suspect)");
		fab_diagnosis_free(&d);
	}
	int healthy = 0;
	for (int i = 0; i < clean; i++) {
		char seed[32];
		snprintf(seed, sizeof seed, "run.seed=%d", 100 + i);
		const char *sets[] = {seed};
		struct fab_diagnosis d;
		diagnose(CLUSTER, sets, 1, &d);
		healthy += d.n == 0;
		if (d.n)
			print_message("false alarm (seed %d): %s\n", 100 + i, d.s[0].target);
		fab_diagnosis_free(&d);
	}
	print_message(
		"faults: top suspect right in %d of %d runs (%.0f%%); fault-free: no suspect in %d of %d (%.0f%%)\n",
		hits, runs, 100.0 * hits / runs, healthy, clean, 100.0 * healthy / clean);
	assert_true(hits * 100 >= 90 * runs);
	assert_true(healthy * 100 >= 95 * clean);
	fab_topo_free(t);
	fab_config_free(c);
}

/* healthy hosts at about 1 GB/s */
static double bw_even(size_t i, size_t j)
{
	return 1.0 + 0.01 * (double)((i + j) % 3);
}

/* a probe's matrix of n hosts, pair bandwidth bw(i, j), 10 us apart, with
 * the given failed pairs (null bandwidth, as the probe writes them) */
static json_t *probe_matrix_doc(size_t n, double (*bw_of)(size_t, size_t), const int (*failed)[2], size_t nf)
{
	json_t *ep = json_array(), *bw = json_array(), *lat = json_array(), *fp = json_array();
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "rank%zu@10.0.0.%zu", i, i + 1);
		json_array_append_new(ep, json_string(name));
		json_t *rb = json_array(), *rl = json_array();
		for (size_t j = 0; j < n; j++) {
			bool f = false;
			for (size_t k = 0; k < nf; k++)
				f |= ((size_t)failed[k][0] == i && (size_t)failed[k][1] == j) ||
					((size_t)failed[k][0] == j && (size_t)failed[k][1] == i);
			json_array_append_new(rb, i == j || f ? json_null() : json_real(bw_of(i, j)));
			json_array_append_new(rl, i == j || f ? json_null() : json_real(10.0));
		}
		json_array_append_new(bw, rb);
		json_array_append_new(lat, rl);
	}
	for (size_t k = 0; k < nf; k++)
		json_array_append_new(fp, json_pack("[ii]", failed[k][0], failed[k][1]));
	return json_pack("{s:s,s:s,s:{s:o,s:o,s:o,s:o}}", "schema", "fabscope.result/1", "kind", "probe", "matrix",
			 "endpoints", ep, "bw_GBps", bw, "lat_us", lat, "failed_pairs", fp);
}

/* one pair that fails while both ends work with everyone else: the path
 * between them; one host that fails with most peers: its link */
static void test_diagnose_failed_pairs(void **state)
{
	(void)state;
	struct fab_diagnosis d;
	static const int one[][2] = {{1, 3}};
	json_t *doc = probe_matrix_doc(6, bw_even, one, 1);
	diag_doc(doc, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].kind, "path");
	assert_string_equal(d.s[0].target, "path between rank1@10.0.0.2 and rank3@10.0.0.4");
	fab_diagnosis_free(&d);
	json_decref(doc);
	static const int host[][2] = {{4, 0}, {4, 1}, {2, 4}, {4, 5}};
	doc = probe_matrix_doc(6, bw_even, host, 4);
	diag_doc(doc, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "link of rank4@10.0.0.5");
	for (int i = 1; i < d.n; i++) /* its pairs are not named again as paths */
		assert_null(strstr(d.s[i].target, "path"));
	fab_diagnosis_free(&d);
	json_decref(doc);
	doc = probe_matrix_doc(6, bw_even, NULL, 0);
	diag_doc(doc, &d);
	assert_int_equal(d.n, 0);
	fab_diagnosis_free(&d);
	json_decref(doc);
}

/* four hosts, host 2 at a quarter of the others' bandwidth, host 3's
 * pairs twice as fast as the rest: one uneven healthy host among so few
 * inflates the MAD past 5 of host 2's deviation, and half the median
 * still names it (a probe's matrix between namespaces, 2 cores, ASan) */
static double bw_few(size_t i, size_t j)
{
	return i == 2 || j == 2 ? 0.012 : i == 3 || j == 3 ? 0.1 : 0.05;
}

static void test_diagnose_slow_host_among_few(void **state)
{
	(void)state;
	json_t *doc = probe_matrix_doc(4, bw_few, NULL, 0);
	struct fab_diagnosis d;
	diag_doc(doc, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.s[0].target, "link of rank2@10.0.0.3");
	fab_diagnosis_free(&d);
	json_decref(doc);
}

/* a probe's matrix between namespaces under load (2 cores, ASan, unit
 * tests beside it): host 2's link at 100 Mbit/s, the others at 1 Gbit/s but
 * starved of CPU, so hosts 0 and 1 move under twice host 2's median and
 * the median over hosts sits close to it; the pairs without host 2 run
 * three times as fast */
static const double bw_ci[4][4] = {
	{0, 0.016, 0.009, 0.044},
	{0.018, 0, 0.010, 0.026},
	{0.009, 0.010, 0, 0.007},
	{0.066, 0.030, 0.010, 0},
};

static double bw_loaded(size_t i, size_t j)
{
	return bw_ci[i][j];
}

/* the same hosts, host 2's link at 1 Gbit/s too, as unevenly starved */
static const double bw_ci_even[4][4] = {
	{0, 0.016, 0.024, 0.044},
	{0.018, 0, 0.030, 0.026},
	{0.022, 0.027, 0, 0.019},
	{0.066, 0.030, 0.025, 0},
};

static double bw_loaded_even(size_t i, size_t j)
{
	return bw_ci_even[i][j];
}

static void test_diagnose_slow_host_loaded(void **state)
{
	(void)state;
	struct fab_diagnosis d;
	json_t *doc = probe_matrix_doc(4, bw_loaded, NULL, 0);
	diag_doc(doc, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.s[0].target, "link of rank2@10.0.0.3");
	assert_true(suspect_says(&d.s[0], "the pairs without rank2@10.0.0.3 run at 0.028 GB/s"));
	fab_diagnosis_free(&d);
	json_decref(doc);
	doc = probe_matrix_doc(4, bw_loaded_even, NULL, 0);
	diag_doc(doc, &d);
	assert_int_equal(d.n, 0);
	fab_diagnosis_free(&d);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diagnose_healthy_cluster),
		cmocka_unit_test(test_diagnose_names_lossy_cable),
		cmocka_unit_test(test_diagnose_names_downgraded_link_from_measurement),
		cmocka_unit_test(test_diagnose_names_pfc_storm),
		cmocka_unit_test(test_diagnose_randomized_fault_suite),
		cmocka_unit_test(test_diagnose_failed_pairs),
		cmocka_unit_test(test_diagnose_slow_host_among_few),
		cmocka_unit_test(test_diagnose_slow_host_loaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
