/*
 * InfiniBand in the packet engine (fabric.transport: ib; src/packet/credit.c)
 * against the specification and the closed forms of credit-based flow
 * control: the framing of IBA chapter 7, a lone flow at line rate x header
 * efficiency, an incast with no drop and no PAUSE and the port kept busy,
 * a link whose credits do not cover its round trip running at
 * credits x frame / (loop time x rate).  Every run also checks byte
 * conservation.
 */
#include <math.h>

#include "testutil.h"

#define LINE 400e9
#define IB_FRAME 26 /* LRH 8 + BTH 12 + ICRC 4 + VCRC 2 */

static void test_ib_framing(void **state)
{
	(void)state;
	const struct fab_wire *w = fab_wire_of(FAB_TRANSPORT_IB);
	assert_int_equal(w->data_overhead, IB_FRAME);
	assert_int_equal(w->ack_frame, IB_FRAME + 4);     /* AETH */
	assert_int_equal(w->notify_frame, IB_FRAME + 16); /* CNP */
	assert_int_equal(w->preamble_ifg, 0);
	assert_int_equal(fab_wire_data_bytes(w, 4096), 4122);
}

/* a lone 256 MiB flow: 400 Gbps x 4096/4122 = 397.48 Gbps within 0.5%; the
 * default 256 KiB of credits cover the 1 us links' loop (about 100 KB) */
static void test_ib_lone_flow_line_rate(void **state)
{
	(void)state;
	struct trun t = trun_yaml(ONE_LEAF(2) "fabric: {transport: ib}\n"
					      "traffic: {flows: [{src: 0, dst: 1, bytes: 256MiB}]}\n");
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	double goodput = 256.0 * (1 << 20) * 8 / ((double)st[0].finish_ps / 1e12), want = LINE * 4096 / 4122;
	print_message("goodput %.3f Gbps, line x 4096/4122 %.3f Gbps\n", goodput / 1e9, want / 1e9);
	assert_true(rel_err(goodput, want) < 0.005);
	struct fab_summary sm;
	fab_summary_compute(t.run->sim, &sm);
	assert_int_equal(sm.pause_frames, 0);
	assert_int_equal(sm.retx_pkts, 0);
	trun_free(&t);
}

/* the flow engine takes InfiniBand's framing: line x 4096/4122 within 0.2% */
static void test_ib_flow_engine(void **state)
{
	(void)state;
	const char *sets[] = {"engine=flow"};
	struct trun t = trun_yaml_sets(ONE_LEAF(2) "fabric: {transport: ib}\n"
						   "traffic: {flows: [{src: 0, dst: 1, bytes: 256MiB}]}\n",
				       sets, 1);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	double goodput = 256.0 * (1 << 20) * 8 / ((double)st[0].finish_ps / 1e12), want = LINE * 4096 / 4122;
	print_message("flow engine, InfiniBand: %.3f Gbps, line x 4096/4122 %.3f Gbps\n", goodput / 1e9, want / 1e9);
	assert_true(rel_err(goodput, want) < 0.002);
	trun_free(&t);
}

/* 16-to-1 incast of 8 MiB each, no congestion control, the default 256 KiB
 * of credits per port (they cover the 1 us links' loop, so the bottleneck
 * is not credit-bound): nothing is dropped however full the egress queue, no PAUSE
 * exists, every byte arrives, the bottleneck port is at least 97% busy
 * while all 16 send, and the senders' lanes wait for credits (the
 * backpressure reaches them) */
static void test_ib_incast_lossless(void **state)
{
	(void)state;
	char yaml[2048];
	size_t o = (size_t)snprintf(yaml, sizeof yaml,
				    ONE_LEAF(17) "fabric: {transport: ib, series_interval: 20us}\n"
						 "traffic:\n  flows:\n");
	for (int i = 1; i <= 16; i++)
		o += (size_t)snprintf(yaml + o, sizeof yaml - o, "    - {src: %d, dst: 0, bytes: 8MiB}\n", i);
	struct trun t = trun_yaml(yaml);
	struct fab_summary sm;
	fab_summary_compute(t.run->sim, &sm);
	assert_int_equal(sm.flows_done, 16);
	assert_int_equal(sm.drops, 0);
	assert_int_equal(sm.pause_frames, 0);
	assert_int_equal(sm.retx_pkts, 0);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	fab_time_ps first_done = FAB_TIME_NEVER;
	for (int i = 0; i < 16; i++) {
		assert_int_equal(st[i].delivered_bytes, 8 << 20);
		first_done = FAB_MIN(first_done, st[i].finish_ps);
	}
	size_t n;
	const struct fab_series_row *rows = fab_sim_series(t.run->sim, &n);
	uint32_t bott = port_between(t.run->topo, "leaf0", "server0.nic0");
	double wire = 0, last = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].port == bott && rows[i].t_ps <= first_done) {
			wire += (double)rows[i].tx_wire_bytes;
			last = (double)rows[i].t_ps;
		}
	double util = wire * 8 / (last / 1e12) / LINE;
	const struct fab_port_stats *ps = fab_sim_port_stats(t.run->sim);
	uint32_t up = port_between(t.run->topo, "server1.nic0", "leaf0");
	print_message("bottleneck %.2f%% busy; a sender's lane waited for credits %.3f ms\n", util * 100,
		      (double)ps[up].paused_ps[3] / 1e9);
	assert_true(util >= 0.97);
	assert_true(ps[up].paused_ps[3] > 0);
	trun_free(&t);
}

/* Links of 5 us with 64 KiB of credits per lane: the credit loop (a frame
 * out, its release, the credits back) is 2 x 5 us plus a frame's
 * serialisation, and at most floor(64 KiB / 4122) = 15 frames are out, so
 * the flow runs at 15 x 4122 x 8 / (loop x 400 Gbps) of the line (12.3%)
 * within 3%; with 2 MiB of credits, at line rate */
static void test_ib_credit_loop_limit(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1, "
			   "spines: 1, links_per_spine: 1, host_delay: 5us}\n"
			   "fabric: {transport: ib, ib: {vl_buffer: 64KiB}}\n"
			   "traffic: {flows: [{src: 0, dst: 1, bytes: 64MiB}]}\n";
	double frame = 4122, ser = frame * 8 / LINE, loop = 2 * 5e-6 + ser;
	double frames = floor(65536 / frame), share = fmin(1, frames * frame * 8 / (loop * LINE));
	double want = share * LINE * 4096 / 4122;
	struct trun t = trun_yaml(yaml);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	double goodput = 64.0 * (1 << 20) * 8 / ((double)st[0].finish_ps / 1e12);
	print_message("64 KiB credits on 5 us links: %.3f Gbps, closed form %.3f Gbps (%.1f%% of the line)\n",
		      goodput / 1e9, want / 1e9, share * 100);
	assert_true(rel_err(goodput, want) < 0.03);
	trun_free(&t);
	const char *sets[] = {"fabric.ib.vl_buffer=2MiB"};
	t = trun_yaml_sets(yaml, sets, 1);
	st = fab_sim_flow_stats(t.run->sim);
	goodput = 64.0 * (1 << 20) * 8 / ((double)st[0].finish_ps / 1e12);
	print_message("2 MiB credits: %.3f Gbps\n", goodput / 1e9);
	assert_true(goodput > 0.98 * LINE * 4096 / 4122);
	trun_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ib_framing),           cmocka_unit_test(test_ib_lone_flow_line_rate),
		cmocka_unit_test(test_ib_flow_engine),       cmocka_unit_test(test_ib_incast_lossless),
		cmocka_unit_test(test_ib_credit_loop_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
