/* FCT slowdowns: the binning on hand-made lists, and the ideal FCT against
 * lone flows on the engine. */
#include <math.h>

#include "testutil.h"

/* 100 flows of sizes 1..100 with slowdown 1000 - size: 20 bins of 5; in bin
 * i the sizes 5i+1..5i+5, slowdowns sorted, p50 at index 2, p95 and p99 at
 * index 4 (int(5 x 0.95) = 4). */
static void test_slowdown_bins_of_five_percent(void **state)
{
	(void)state;
	uint64_t bytes[100];
	double sd[100];
	for (int i = 0; i < 100; i++) {
		bytes[i] = (uint64_t)(100 - i); /* given in reverse: the binning sorts */
		sd[i] = 1000.0 - (double)(100 - i);
	}
	struct fab_slowdown_bin b[FAB_SLOWDOWN_BINS];
	assert_int_equal(fab_slowdown_binning(bytes, sd, 100, b), 20);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(b[i].flows, 5);
		assert_int_equal(b[i].max_bytes, 5 * (i + 1));
		/* the bin's slowdowns: 1000 - (5i+5) .. 1000 - (5i+1), ascending */
		assert_true(b[i].p50 == 1000.0 - (5 * i + 3));
		assert_true(b[i].p95 == 1000.0 - (5 * i + 1) && b[i].p99 == b[i].p95);
	}
}

/* Ties in size are ordered by slowdown; with 10 flows each 5% is half a
 * flow: bins [b/2, (b+1)/2) hold one flow every other bin. */
static void test_slowdown_ties_and_small_lists(void **state)
{
	(void)state;
	uint64_t bytes[10] = {7, 7, 7, 7, 7, 3, 3, 3, 3, 3};
	double sd[10] = {5, 1, 4, 2, 3, 9, 6, 8, 7, 10};
	struct fab_slowdown_bin b[FAB_SLOWDOWN_BINS];
	assert_int_equal(fab_slowdown_binning(bytes, sd, 10, b), 10);
	double want[10] = {6, 7, 8, 9, 10, 1, 2, 3, 4, 5};
	for (int i = 0; i < 10; i++) {
		assert_int_equal(b[i].flows, 1);
		assert_true(b[i].p50 == want[i] && b[i].p99 == want[i]);
		assert_int_equal(b[i].max_bytes, i < 5 ? 3 : 7);
	}
}

/* A lone flow runs at its ideal: the ideal charges one full payload per
 * link (HPCC's base RTT) where the flow pays one store and forward per
 * switch plus headers and preamble, so a long flow is within 0.1% and a
 * one-packet flow within 10% (below: the floor at 1 takes it). */
static void test_slowdown_lone_flows_near_one(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 2, servers_per_leaf: 1, gpus_per_server: 1, nics_per_server: 1, "
			   "spines: 1, links_per_spine: 1}\n"
			   "traffic:\n"
			   "  flows:\n"
			   "    - {src: 0, dst: 1, bytes: 256MiB}\n"
			   "    - {src: 0, dst: 1, bytes: 4KiB, start: 1s}\n";
	struct trun t = trun_yaml(yaml);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(t.run->sim, &n);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	for (uint32_t i = 0; i < 2; i++) {
		double fct = (double)(st[i].finish_ps - fl[i].start_ps),
		       ideal = fab_ideal_fct_ps(t.run->sim, i, fl[i].bytes);
		print_message("flow %u: FCT %.0f ps, ideal %.0f ps, slowdown %.4f\n", i, fct, ideal, fct / ideal);
		double tol = i == 0 ? 0.001 : 0.10;
		assert_true(fabs(fct / ideal - 1) <= tol);
	}
	json_t *sd = fab_slowdown_json(t.run->sim);
	assert_non_null(sd);
	assert_int_equal(json_integer_value(json_object_get(sd, "flows")), 2);
	json_decref(sd);
	trun_free(&t);
}

/* The bins and the summary are derived once per finished run and kept
 * with it: a run that goes on gives new ones (fab_sim_memo is keyed on
 * its totals). */
static void test_slowdown_follows_a_run_that_goes_on(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 2, servers_per_leaf: 1, gpus_per_server: 1, nics_per_server: 1, "
			   "spines: 1, links_per_spine: 1}\n"
			   "traffic:\n"
			   "  flows:\n"
			   "    - {src: 0, dst: 1, bytes: 64KiB}\n"
			   "    - {src: 1, dst: 0, bytes: 64KiB, start: 1ms}\n";
	struct fab_err err = {0};
	struct fab_config *cfg = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, NULL, 0, &err);
	assert_non_null(cfg);
	struct fab_run *run = fab_run_new(cfg, &err);
	assert_non_null(run);
	assert_int_equal(fab_sim_run(run->sim, 500 * FAB_PS_PER_US), 0);
	json_t *sd = fab_slowdown_json(run->sim);
	assert_non_null(sd);
	assert_int_equal(json_integer_value(json_object_get(sd, "flows")), 1);
	json_decref(sd);
	struct fab_summary sm;
	fab_summary_compute(run->sim, &sm); /* (kept the same way) */
	assert_int_equal(sm.flows_done, 1);
	assert_int_equal(sm.bytes, 2 * 64 << 10);
	assert_int_equal(fab_sim_run(run->sim, 0), 0);
	sd = fab_slowdown_json(run->sim);
	assert_non_null(sd);
	assert_int_equal(json_integer_value(json_object_get(sd, "flows")), 2);
	json_decref(sd);
	fab_summary_compute(run->sim, &sm);
	assert_int_equal(sm.flows_done, 2);
	assert_true(sm.fct_max >= sm.fct_min && sm.fct_min > 0);
	fab_run_free(run);
	fab_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowdown_bins_of_five_percent),
		cmocka_unit_test(test_slowdown_ties_and_small_lists),
		cmocka_unit_test(test_slowdown_lone_flows_near_one),
		cmocka_unit_test(test_slowdown_follows_a_run_that_goes_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
