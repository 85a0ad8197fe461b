/* Scenario loading: defaults, overrides, and errors that point at the input. */
#include "testutil.h"
#include "../../src/cc/dcqcn.h"

/* the DCQCN parameters of a scenario */
static const struct fab_dcqcn_params *dcqcn_of(const struct fab_config *c)
{
	return fab_cc_params(&c->fabric.cc, &fab_cc_dcqcn);
}

static struct fab_config *load(const char *yaml, const char *const *sets, size_t n, struct fab_err *err)
{
	return fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, sets, n, err);
}

static void test_scenario_builtin_defaults(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_config *c = fab_config_load(NULL, NULL, 0, &err);
	assert_non_null(c);
	assert_int_equal(c->fabric.mtu, 4096);
	assert_int_equal(c->topo.host_bps, 400000000000ULL);
	assert_int_equal(c->fabric.pfc.prio_mask, 1u << 3);
	assert_true(c->fabric.pfc.enabled && c->fabric.ecn.enabled && dcqcn_of(c)->enabled);
	assert_true(dcqcn_of(c)->g == 1.0 / 256);
	assert_int_equal(dcqcn_of(c)->alpha_period_ps, 55 * FAB_PS_PER_US);
	assert_int_equal(c->traffic.ngens, 2);
	assert_int_equal(c->traffic.gens[0].kind, FAB_GEN_INCAST);
	assert_int_equal(c->traffic.gens[1].kind, FAB_GEN_PERMUTATION);
	assert_int_equal(c->traffic.gens[1].scope, FAB_SCOPE_CROSS_LEAF);
	fab_config_free(c);
}

static void test_scenario_set_overrides(void **state)
{
	(void)state;
	const char *sets[] = {"topology.spines=8", "fabric.pfc.priorities=[3,4]", "traffic.generators.0.bytes=2MiB",
			      "fabric.ecn.enabled=off", "run.seed=9"};
	struct fab_err err = {0};
	struct fab_config *c = fab_config_load(NULL, sets, FAB_ARRAY_LEN(sets), &err);
	assert_non_null(c);
	assert_int_equal(c->topo.spines, 8);
	assert_true(c->topo.spines_given);
	assert_int_equal(c->fabric.pfc.prio_mask, (1u << 3) | (1u << 4));
	assert_int_equal(c->traffic.gens[0].bytes, 2u << 20);
	assert_false(c->fabric.ecn.enabled);
	assert_int_equal(c->run.seed, 9);
	fab_config_free(c);
	/* a section that the file does not have is created */
	const char *sets2[] = {"fabric.nic.ack_every=4"};
	c = load("topology: {leaves: 2}\n", sets2, 1, &err);
	assert_non_null(c);
	assert_int_equal(c->fabric.nic.ack_every, 4);
	fab_config_free(c);
}

struct bad_case {
	const char *yaml;
	const char *set;
	const char *want; /* substring of the message */
};

static const struct bad_case bad[] = {
	{"topology:\n  spins: 4\n", NULL, "test.yaml:2:3: topology.spins: unknown key (did you mean 'spines'?)"},
	{"topology:\n  spines: four\n", NULL,
	 "test.yaml:2:11: topology.spines: expected a non-negative integer, got \"four\""},
	{"fabric:\n  mtu: 9001\n", NULL, "test.yaml:2:8: fabric.mtu: expected an integer from 64 to 9000, got 9001"},
	{"fabric:\n  mtu: 32\n", NULL, "test.yaml:2:8: fabric.mtu: expected an integer from 64 to 9000, got 32"},
	{"topology:\n  host_rate: 400\n", NULL, "test.yaml:2:14: topology.host_rate: expected a rate with a unit"},
	{"run:\n  end: soon\n", NULL, "test.yaml:2:8: run.end: expected a time with a unit"},
	{"fabric: 3\n", NULL, "test.yaml:1:9: fabric: expected a section (a mapping)"},
	{"topology:\n  spines: {a: 1}\n", NULL,
	 "test.yaml:2:11: topology.spines: expected a single value, got a mapping"},
	{"traffic:\n  flows:\n    - {src: 0, bytes: 1MiB}\n", NULL,
	 "test.yaml:3:7: traffic.flows[0]: missing key 'dst'"},
	{"traffic:\n  generators:\n    - {kind: broadcast, bytes: 1MiB}\n", NULL,
	 "test.yaml:3:14: traffic.generators[0].kind: expected one of "
	 "permutation|all-to-all|incast|random-pairs|poisson, got \"broadcast\""},
	{"traffic:\n  flows:\n    - {src: 0, dst: 1, bytes: 1MiB, prio: 3}\n", NULL,
	 "test.yaml:3:37: traffic.flows[0].prio: unknown key (did you mean 'priority'?)"},
	{"topology:\n  spines: [1, 2\n", NULL, "YAML syntax error"},
	{"run:\n  seed: 1\n  seed: 2\n", NULL, "test.yaml:3:3: seed: duplicate key"},
	{"fabric:\n  ecn: {kmin: 1MiB, kmax: 100KiB}\n", NULL, "test.yaml:2:15: fabric.ecn.kmin: must not exceed kmax"},
	{"topology:\n  oversubscription: two\n", NULL,
	 "test.yaml:2:21: topology.oversubscription: expected a ratio such as 2:1, got \"two\""},
	{"fabric:\n  pfc: {priorities: [3, 9]}\n", NULL,
	 "test.yaml:2:21: fabric.pfc.priorities: expected a list of priorities 0..7"},
	{"- a\n- b\n", NULL, "test.yaml:1:1: a scenario is a mapping"},
	{"topology: {kind: ring}\n", NULL,
	 "test.yaml:1:18: topology.kind: expected one of spine-leaf|fat-tree|file|ns3, got \"ring\""},
	{"run: {}\n", "topology.spinez=3", "--set topology.spinez: unknown key (did you mean 'spines'?)"},
	{"run: {}\n", "topology.spines", "--set topology.spines: expected key=value"},
	{"run: {}\n", "topology.spines=-2", "--set topology.spines: expected a non-negative integer, got \"-2\""},
	{"run: {}\n", "traffic.generators.3.bytes=1MiB", "is not an index of the list"},
	{"fabric:\n  buffer: 1KiB\n", NULL, "test.yaml:2:11: fabric.buffer: expected a value from 64KiB to"},
	{"topology:\n  kind: file\n", NULL, "test.yaml:2:9: topology.kind: kind file needs topology.file"},
	{"topology:\n  kind: ns3\n", NULL, "test.yaml:2:9: topology.kind: kind ns3 needs topology.file"},
	{"traffic:\n  generators:\n    - {kind: incast, dst: 0}\n", NULL,
	 "test.yaml:3:7: traffic.generators[0]: missing key 'bytes'"},
	{"traffic:\n  generators:\n    - {kind: poisson, load: 0.3, duration: 1ms}\n", NULL,
	 "test.yaml:3:7: traffic.generators[0]: a poisson generator needs cdf"},
	{"traffic:\n  generators:\n    - {kind: poisson, cdf: websearch, duration: 1ms}\n", NULL,
	 "test.yaml:3:7: traffic.generators[0]: a poisson generator needs load"},
	{"traffic:\n  generators:\n    - {kind: poisson, cdf: websearch, load: 0.3}\n", NULL,
	 "test.yaml:3:7: traffic.generators[0]: a poisson generator needs a duration"},
	{"traffic:\n  generators:\n    - {kind: poisson, cdf: websearch, load: 1.5, duration: 1ms}\n", NULL,
	 "test.yaml:3:45: traffic.generators[0].load: expected a number from 0 to 1, got 1.5"},
	{"traffic:\n  generators:\n    - {kind: poisson, cdf: websearch, duration: 1ms, incast_load: 0.1}\n", NULL,
	 "test.yaml:3:7: traffic.generators[0]: incast_load needs incast_senders and incast_bytes"},
	{"key: &a 1\n", NULL, "anchors and aliases are not supported"},
};

static void test_scenario_bad_input_points_at_it(void **state)
{
	(void)state;
	for (size_t i = 0; i < FAB_ARRAY_LEN(bad); i++) {
		struct fab_err err = {0};
		const char *sets[] = {bad[i].set};
		struct fab_config *c = load(bad[i].yaml, sets, bad[i].set ? 1 : 0, &err);
		if (c || !strstr(err.msg, bad[i].want))
			fail_msg("case %zu: want \"%s\", got \"%s\"", i, bad[i].want, c ? "(loaded)" : err.msg);
		assert_int_equal(fab_err_exit_code(err.code), FAB_EXIT_INPUT);
	}
}

/* Errors found after loading (topology, traffic) still point into the file. */
static void test_scenario_late_errors_are_located(void **state)
{
	(void)state;
	const struct bad_case late[] = {
		{"topology:\n  oversubscription: 3:1\n", NULL,
		 "test.yaml:2:21: topology.oversubscription: 3:1 is impossible"},
		{"topology: {leaves: 1, servers_per_leaf: 2}\ntraffic:\n  flows:\n"
		 "    - {src: 0, dst: 999, bytes: 1MiB}\n",
		 NULL, "test.yaml:4:7: traffic.flows[0]: dst: GPU 999 does not exist; the cluster has GPUs 0..15"},
		{"topology: {leaves: 1, servers_per_leaf: 2, nics_per_server: 1}\ntraffic:\n  flows:\n"
		 "    - {src: 0, dst: 1, bytes: 1MiB}\n",
		 NULL,
		 "test.yaml:4:7: traffic.flows[0]: a flow must cross the fabric: GPUs 0 and 1 share NIC server0.nic0"},
		{"topology: {leaves: 1, servers_per_leaf: 2}\ntraffic:\n  generators:\n"
		 "    - {kind: incast, senders: 20, dst: 0, bytes: 1MiB}\n",
		 NULL, "test.yaml:4:7: traffic.generators[0]: senders: 20 asked, 8 GPUs can send to GPU 0"},
		{"topology: {leaves: 2, servers_per_leaf: 2, radix: 8}\n", NULL,
		 "test.yaml:1:51: topology.radix: switch leaf0 needs 32 ports but the radix is 8"},
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(late); i++) {
		struct fab_err err = {0};
		struct fab_config *c = load(late[i].yaml, NULL, 0, &err);
		assert_non_null(c);
		struct fab_run *r = fab_run_new(c, &err);
		if (r || !strstr(err.msg, late[i].want))
			fail_msg("late case %zu: want \"%s\", got \"%s\"", i, late[i].want, r ? "(built)" : err.msg);
		assert_int_equal(fab_err_exit_code(err.code), FAB_EXIT_INPUT);
		fab_config_free(c);
	}
}

/* Every key's default parses, and its canonical text parses back to itself. */
static void test_scenario_every_key_round_trips(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_config *c = fab_config_load(NULL, NULL, 0, &err);
	assert_non_null(c);
	size_t n;
	const struct fab_key_def *k = fab_config_keys(&n);
	assert_true(n > 40);
	for (size_t i = 0; i < n; i++) {
		char text[256], set[320], again[256];
		fab_config_value_text(&k[i], c, text, sizeof text);
		if (!text[0])
			continue;
		snprintf(set, sizeof set, "%s=%s", k[i].path, text);
		const char *sets[] = {set};
		struct fab_config *c2 = fab_config_load(NULL, sets, 1, &err);
		if (!c2)
			fail_msg("%s: %s", set, err.msg);
		fab_config_value_text(&k[i], c2, again, sizeof again);
		assert_string_equal(text, again);
		fab_config_free(c2);
	}
	fab_config_free(c);
}

/* A DCQCN preset sets every key of its published configuration; a key given
 * in the file or by --set wins, before or after the preset. */
static void test_scenario_dcqcn_presets(void **state)
{
	(void)state;
	struct fab_err err = {0};
	const char *yaml = "fabric:\n  dcqcn: {rai: 50Mbps}\n";
	const char *sets[] = {"fabric.dcqcn.preset=firmware", "fabric.nic.ack_every=4"};
	struct fab_config *c = load(yaml, sets, 2, &err);
	assert_non_null(c);
	const struct fab_dcqcn_params *d = dcqcn_of(c);
	assert_int_equal(d->variant, FAB_DCQCN_FIRMWARE);
	assert_int_equal(d->rate_period_ps, 300 * FAB_PS_PER_US);
	assert_int_equal(d->alpha_period_ps, FAB_PS_PER_US);
	assert_int_equal(d->decrease_period_ps, 4 * FAB_PS_PER_US);
	assert_int_equal(d->rhai_bps, 200000000);
	assert_int_equal(d->min_rate_bps, 1000000000);
	assert_int_equal(d->byte_counter, 0);
	assert_int_equal(d->rai_bps, 50000000);       /* the file's */
	assert_int_equal(c->fabric.nic.ack_every, 4); /* --set's */
	fab_config_free(c);
	const char *paper[] = {"fabric.dcqcn.preset=paper"};
	c = load("", paper, 1, &err);
	assert_non_null(c);
	d = dcqcn_of(c);
	assert_int_equal(d->variant, FAB_DCQCN_PAPER);
	assert_int_equal(d->fast_recovery_steps, 5);
	assert_true(d->clamp_target);
	assert_int_equal(d->rai_bps, 40000000);
	fab_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenario_builtin_defaults),
		cmocka_unit_test(test_scenario_set_overrides),
		cmocka_unit_test(test_scenario_bad_input_points_at_it),
		cmocka_unit_test(test_scenario_late_errors_are_located),
		cmocka_unit_test(test_scenario_every_key_round_trips),
		cmocka_unit_test(test_scenario_dcqcn_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
