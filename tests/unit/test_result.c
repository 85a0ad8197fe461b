/* The result document: written straight from the run (the long tables:
 * flows, series, flow series, ports) it is byte for byte what jansson
 * writes of the document built whole; the flows read in place are the
 * tables copied out. */
#include "testutil.h"
#include "../../src/out/result.h"

/* both ways, on runs whose tables have every kind of value: pauses per
 * priority, switch ports' PFC fields, a real (utilization), series rows,
 * and a flow that has not finished (nulls) */
static void streamed_equals_built(const char *yaml, const char *const *sets, size_t nsets, bool unfinished)
{
	struct trun t = trun_yaml_sets(yaml, sets, nsets);
	const struct fab_sim *s = t.run->sim;
	json_t *whole = fab_result_json(t.cfg, s);
	/* (what the tables hold: a pause, and a flow still running or not) */
	json_t *ports = json_object_get(whole, "ports"), *flows = json_object_get(whole, "flows");
	uint64_t pauses = 0;
	for (size_t i = 0; i < json_array_size(ports); i++)
		pauses += (uint64_t)json_integer_value(json_object_get(json_array_get(ports, i), "pause_tx"));
	assert_true(pauses > 0);
	assert_int_equal(json_is_null(json_object_get(json_array_get(flows, 0), "finish_ps")), unfinished);
	/* the flows read in place, as the writers now read them, are the
	 * tables copied out (a flow cut short: its bytes delivered so far) */
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(s, &n);
	const struct fab_flow_stats *st = fab_sim_flow_stats(s);
	assert_int_equal(fab_sim_nflows(s), n);
	assert_true(n >= 3);
	for (size_t i = 0; i < n; i++) {
		const struct fab_sim_flow *a = fab_sim_flow_spec(s, i);
		struct fab_flow_stats b = fab_sim_flow_stat(s, i);
		assert_int_equal(a->id, fl[i].id);
		assert_int_equal(a->src_nic, fl[i].src_nic);
		assert_int_equal(a->bytes, fl[i].bytes);
		assert_int_equal(a->start_ps, fl[i].start_ps);
		assert_int_equal(b.finish_ps, st[i].finish_ps);
		assert_int_equal(b.delivered_bytes, st[i].delivered_bytes);
		assert_true(b.delivered_bytes <= a->bytes);
		assert_int_equal(b.delivered_bytes == a->bytes, b.finish_ps != FAB_TIME_NEVER);
		assert_int_equal(b.data_pkts, st[i].data_pkts);
		assert_int_equal(b.cnps, st[i].cnps);
		assert_int_equal(b.qp_errors, st[i].qp_errors);
	}
	char *want = json_dumps(whole, JSON_INDENT(2));
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);
	assert_non_null(f);
	json_t *lean = fab_result_json_lean(t.cfg, s);
	assert_int_equal(fab_result_write_json(f, lean, s), 0);
	fclose(f);
	assert_non_null(want);
	assert_true(strlen(want) > 1000);
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(lean);
	json_decref(whole);
	trun_free(&t);
}

static void test_result_streamed_equals_built(void **state)
{
	(void)state;
	/* four senders into one receiver: pauses */
	const char *yaml = ONE_LEAF(5) "fabric: {buffer: 4MiB, series_interval: 20us}\n"
				       "traffic:\n"
				       "  flows:\n"
				       "    - {src: 1, dst: 0, bytes: 1MiB}\n"
				       "    - {src: 2, dst: 0, bytes: 1MiB}\n"
				       "    - {src: 3, dst: 0, bytes: 1MiB}\n"
				       "    - {src: 4, dst: 0, bytes: 1MiB}\n";
	streamed_equals_built(yaml, NULL, 0, false);
	/* on 2 threads (the flows' records kept apart by gaps; no series) */
	const char *const two[] = {"run.threads=2"};
	streamed_equals_built(ONE_LEAF(5) "fabric: {buffer: 4MiB}\n"
					  "traffic:\n"
					  "  flows:\n"
					  "    - {src: 1, dst: 0, bytes: 1MiB}\n"
					  "    - {src: 2, dst: 0, bytes: 1MiB}\n"
					  "    - {src: 3, dst: 0, bytes: 1MiB}\n"
					  "    - {src: 4, dst: 0, bytes: 1MiB}\n",
			      two, 1, false);
	/* the flow engine, fluid pauses, a run stopped before its flows end */
	const char *const sets[] = {"engine=flow", "flow.queues=dcqcn", "run.end=60us"};
	streamed_equals_built(ONE_LEAF(5) "fabric: {buffer: 4MiB}\n"
					  "traffic:\n"
					  "  flows:\n"
					  "    - {src: 1, dst: 0, bytes: 4MiB}\n"
					  "    - {src: 2, dst: 0, bytes: 4MiB}\n"
					  "    - {src: 3, dst: 0, bytes: 4MiB}\n",
			      sets, 3, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_streamed_equals_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
