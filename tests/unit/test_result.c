/* The result document: written straight from the run (the long tables:
 * flows, series, flow series, ports) it is byte for byte what jansson
 * writes of the document built whole; the flows read in place are the
 * tables copied out. */
#include <math.h>

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

/* A flow, 2 ms of nothing, another: the series keep, of the instants
 * where nothing moved, the first and the last, so the rows stay few and
 * a line drawn through them is the one every instant would draw */
static void series_still(const char *const *sets, size_t nsets, double tol)
{
	const fab_time_ps iv = 10 * FAB_PS_PER_US;
	const char *yaml = ONE_LEAF(3) "fabric: {series_interval: 10us}\n"
				       "traffic:\n"
				       "  flows:\n"
				       "    - {src: 1, dst: 0, bytes: 1MiB}\n"
				       "    - {src: 2, dst: 0, bytes: 1MiB, start: 2ms}\n";
	/* the first alone: what the ports send before 2 ms */
	const char *first = ONE_LEAF(3) "traffic:\n"
					"  flows:\n"
					"    - {src: 1, dst: 0, bytes: 1MiB}\n";
	struct trun t = trun_yaml_sets(yaml, sets, nsets), t1 = trun_yaml_sets(first, sets, nsets);
	size_t n;
	const struct fab_series_row *r = fab_sim_series(t.run->sim, &n);
	const struct fab_port_stats *ps = fab_sim_port_stats(t1.run->sim);
	const struct fab_topo *topo = t.run->topo;
	uint32_t sw = 0;
	for (uint32_t p = 0; p < topo->nports; p++)
		sw += topo->nodes[topo->ports[p].node].kind != FAB_NODE_NIC;
	assert_true(n > 0 && n % sw == 0); /* every switch port at every instant kept */
	size_t inst = n / sw, still_run = 0, nf, fi = 0, fprev = 0, fprev_n = 0;
	const struct fab_flow_series_row *fr = fab_sim_flow_series(t.run->sim, &nf);
	uint64_t *tx = calloc(topo->nports, sizeof *tx);
	for (size_t k = 0; k < inst; k++) {
		const struct fab_series_row *a = &r[k * sw];
		assert_int_equal(a->t_ps % iv, 0); /* on the grid */
		/* the flows' rows of this instant: none delivered, each as before */
		size_t f0 = fi;
		while (fi < nf && fr[fi].t_ps == a->t_ps)
			fi++;
		bool still = k && fi - f0 == fprev_n;
		for (size_t j = f0; still && j < fi; j++)
			still = !fr[j].delivered_bytes && fr[j].flow == fr[fprev + j - f0].flow &&
				fr[j].rate_bps == fr[fprev + j - f0].rate_bps;
		fprev = f0;
		fprev_n = fi - f0;
		for (uint32_t j = 0; j < sw; j++) {
			tx[a[j].port] += a->t_ps < 2 * FAB_PS_PER_MS ? a[j].tx_bytes : 0;
			still = still && !a[j].tx_bytes && !a[j].tx_wire_bytes && !a[j].drops && !a[j].pause_tx &&
				(k == 0 || a[j].queue_bytes == a[j - (long)sw].queue_bytes);
		}
		still_run = still ? still_run + 1 : 0;
		assert_true(still_run <= 2);               /* of still instants in a row, two at most */
		if (k && a->t_ps - a[-(long)sw].t_ps > iv) /* a gap: the rows on either side alike */
			for (uint32_t j = 0; j < sw; j++) {
				const struct fab_series_row *b = &a[j - (long)sw];
				assert_true(still && b->port == a[j].port && b->queue_bytes == a[j].queue_bytes &&
					    !b->tx_bytes && !b->drops && !b->pause_tx);
			}
	}
	assert_int_equal(fi, nf); /* every flow row at an instant of the ports' */
	fab_time_ps last = r[n - 1].t_ps;
	print_message("%zu instants kept of %llu, the last at %.0f us\n", inst, (unsigned long long)(last / iv + 1),
		      (double)last / 1e6);
	assert_true(last > 2 * FAB_PS_PER_MS);
	assert_true(inst < 20); /* of 200 and more */
	/* every byte a switch port sent before 2 ms is in its rows (the flow
	 * engine's rows round the fluid's bytes) */
	for (uint32_t p = 0; p < topo->nports; p++)
		if (topo->nodes[topo->ports[p].node].kind != FAB_NODE_NIC)
			assert_true(fabs((double)tx[p] - (double)ps[p].tx_bytes) <= tol * (double)ps[p].tx_bytes);
	free(tx);
	trun_free(&t);
	trun_free(&t1);
}

static void test_result_series_still_instants(void **state)
{
	(void)state;
	series_still(NULL, 0, 0);
	const char *const flow[] = {"engine=flow"};
	series_still(flow, 1, 1e-6);
	const char *const dcqcn[] = {"engine=flow", "flow.queues=dcqcn"};
	series_still(dcqcn, 2, 1e-6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_streamed_equals_built),
		cmocka_unit_test(test_result_series_still_instants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
