/* Swift (Kumar et al., SIGCOMM 2020) against its paper: the window law on
 * round-trip samples alone, and an incast held at its target delay over
 * RoCE and over TCP: the bottleneck busy and its queue near target x rate
 * (the paper's Figure 4: Swift keeps delay at the target at near line
 * rate); below a packet's window a TCP sender is paced. */
#include <math.h>

#include "testutil.h"
#include "../../src/cc/swift.h"

static const struct fab_swift_params P = {
	.target_ps = 5 * FAB_PS_PER_US,
	.ai = 1,
	.beta = 0.8,
	.max_mdf = 0.5,
	.min_cwnd = 0.001,
	.fs_min_cwnd = 0.1,
	.fs_max_cwnd = 100,
};

static struct fab_cc_sample rtt_sample(fab_time_ps now, fab_time_ps rtt, fab_bytes acked)
{
	return (struct fab_cc_sample){.now_ps = now, .rtt_ps = rtt, .acked_bytes = acked};
}

static void test_swift_window_law(void **state)
{
	(void)state;
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_swift;
	const double mss = 1000;
	cc->init(st, &P, 100e9);
	/* base 10 us, 100G, 1124-byte frames: BDP 111.2 packets */
	cc->attach(st,
		   &(struct fab_cc_env){
			   .line_bps = 100e9, .mss = 1000, .frame_bytes = 1124, .base_rtt_ps = 10 * FAB_PS_PER_US});
	double w0 = (double)cc->window_bytes(st) / mss;
	assert_true(fabs(w0 - 111.2) < 1);
	/* below the target (15 us): + ai / cwnd per packet acknowledged; the
	 * window is at its ceiling (the BDP): it stays */
	fab_time_ps now = 100 * FAB_PS_PER_US;
	struct fab_cc_sample s = rtt_sample(now, 12 * FAB_PS_PER_US, 1000);
	cc->on_sample(st, &s);
	assert_true(fabs((double)cc->window_bytes(st) / mss - w0) < 1);
	/* above it at 30 us: cwnd x max(1 - 0.8 x (30 - 15) / 30, 0.5) = 0.6 cwnd */
	now += 30 * FAB_PS_PER_US;
	s = rtt_sample(now, 30 * FAB_PS_PER_US, 1000);
	cc->on_sample(st, &s);
	double w1 = (double)cc->window_bytes(st) / mss;
	assert_true(fabs(w1 - 0.6 * 111.2) < 1);
	/* once a round trip: a second high sample at once cuts nothing */
	s = rtt_sample(now + 1, 30 * FAB_PS_PER_US, 1000);
	cc->on_sample(st, &s);
	assert_true(fabs((double)cc->window_bytes(st) / mss - w1) < 0.01);
	/* a huge delay, a round trip (its own) after the last cut, cuts by
	 * max_mdf at most */
	now += 1000 * FAB_PS_PER_US;
	s = rtt_sample(now, 1000 * FAB_PS_PER_US, 1000);
	cc->on_sample(st, &s);
	double w2 = (double)cc->window_bytes(st) / mss;
	assert_true(fabs(w2 - 0.5 * w1) < 1);
	/* below target again: one round trip of ACKs (w2 packets) adds ai = 1 */
	now += 2000 * FAB_PS_PER_US;
	for (int i = 0; i < (int)w2; i++) {
		s = rtt_sample(now, 11 * FAB_PS_PER_US, 1000);
		cc->on_sample(st, &s);
	}
	assert_true(fabs((double)cc->window_bytes(st) / mss - (w2 + 1)) < 1.01);
	/* below one packet the queue pair is paced: cwnd packets a round trip */
	for (int i = 0; i < 20; i++) {
		now += 2000 * FAB_PS_PER_US;
		s = rtt_sample(now, 1000 * FAB_PS_PER_US, 1000);
		cc->on_sample(st, &s);
	}
	assert_true(cc->rate_bps(st) < 100e9);
}

static const char *incast = "topology: {kind: spine-leaf, leaves: 1, servers_per_leaf: 5, gpus_per_server: 1, "
			    "nics_per_server: 1, spines: 1, links_per_spine: 1, host_rate: 100Gbps, "
			    "fabric_rate: 100Gbps}\n"
			    "fabric: {mtu: 1000, cc: swift}\n"
			    "traffic:\n  generators:\n    - {kind: incast, senders: 4, dst: 0, bytes: 8MiB}\n";

/* the switch port toward NIC 0: the incasts' bottleneck */
static const struct fab_port_stats *bottleneck(const struct trun *h)
{
	const struct fab_topo *t = h->run->topo;
	for (uint32_t i = 0; i < t->nports; i++) {
		const struct fab_node *peer = &t->nodes[t->ports[t->ports[i].peer].node];
		if (t->nodes[t->ports[i].node].kind == FAB_NODE_SWITCH && peer->kind == FAB_NODE_NIC && peer->nic == 0)
			return &fab_sim_port_stats(h->run->sim)[i];
	}
	fail_msg("no bottleneck port");
	return NULL;
}

/* the share of the run the bottleneck spent sending (its frames and their
 * 20 bytes of preamble and gap), and its mean queue in bytes */
static double busy(const struct trun *h, const struct fab_port_stats *b)
{
	fab_time_ps end = fab_sim_totals(h->run->sim)->end_ps;
	return ((double)b->tx_bytes + 20.0 * (double)b->tx_pkts) * 8 / (100e9 * (double)end / 1e12);
}

static double mean_queue(const struct trun *h, const struct fab_port_stats *b)
{
	return b->queue_area / (double)fab_sim_totals(h->run->sim)->end_ps;
}

/* 4-to-1 incast at 100G, over RoCE and over TCP: the bottleneck stays busy
 * (> 95%), nothing is dropped or resent, and its mean queue sits at target
 * x rate (62.5 KB at 5 us; 250 KB at 20 us with room for the windows),
 * within 15%; with windows held to the path's bandwidth-delay product (the
 * default), a 20 us target is out of reach: the queue stops at what three
 * extra windows hold.  The paper's topology scaling adds hop_scale per
 * switch on the path (one here): 5 us + 15 us a hop is a 20 us target. */
static void test_swift_incast_at_target(void **state)
{
	(void)state;
	static const struct {
		const char *transport;
		int target_us, hop_us;
		const char *max_cwnd;
		double lo, hi; /* the mean queue over target x rate */
	} cases[] = {
		{"roce", 5, 0, "0", 0.85, 1.15},     {"roce", 20, 0, "1000", 0.85, 1.15},
		{"roce", 20, 0, "0", 0.3, 0.7},      {"tcp", 5, 0, "0", 0.85, 1.15},
		{"tcp", 20, 0, "1000", 0.85, 1.15},  {"tcp", 20, 0, "0", 0.3, 0.7},
		{"roce", 5, 15, "1000", 0.85, 1.15}, {"tcp", 5, 15, "1000", 0.85, 1.15},
	};
	for (size_t k = 0; k < FAB_ARRAY_LEN(cases); k++) {
		char tr[64], tg[64], mc[64], hs[64];
		snprintf(tr, sizeof tr, "fabric.transport=%s", cases[k].transport);
		snprintf(tg, sizeof tg, "fabric.swift.target=%dus", cases[k].target_us);
		snprintf(mc, sizeof mc, "fabric.swift.max_cwnd=%s", cases[k].max_cwnd);
		snprintf(hs, sizeof hs, "fabric.swift.hop_scale=%dus", cases[k].hop_us);
		const char *sets[] = {tr, tg, mc, hs};
		struct trun h = trun_yaml_sets(incast, sets, 4);
		const struct fab_port_stats *b = bottleneck(&h);
		const struct fab_sim_totals *tot = fab_sim_totals(h.run->sim);
		double util = busy(&h, b), mean_q = mean_queue(&h, b),
		       want = (cases[k].target_us + cases[k].hop_us) * 1e-6 * 100e9 / 8;
		print_message(
			"Swift on %s, target %d us + %d us a hop, max_cwnd %s: bottleneck %.3f busy, mean queue %.0f B "
			"(target x rate %.0f B), %llu drops, %llu resent, %llu timeouts\n",
			cases[k].transport, cases[k].target_us, cases[k].hop_us, cases[k].max_cwnd, util, mean_q, want,
			(unsigned long long)b->drops, (unsigned long long)tot->retx_pkts,
			(unsigned long long)tot->timeouts);
		assert_true(util > 0.95);
		assert_true(mean_q > cases[k].lo * want && mean_q < cases[k].hi * want);
		assert_int_equal(b->drops, 0);
		assert_int_equal(tot->retx_pkts, 0);
		assert_int_equal(tot->timeouts, 0);
		trun_free(&h);
	}
}

/* 256-to-1 over TCP, windows from one segment down (max_cwnd 1): the fair
 * share of the 100G port is below a segment a round trip, so each sender is
 * paced (one segment every rtt / cwnd).  Without the pacing, 256 windows of
 * a segment would hold 256 x 1070 B less a bandwidth-delay product in the
 * queue (222 KB); paced, the mean queue stays near target x rate.  The
 * paper's flow scaling (more target for small windows, fabric.swift.fs_range
 * 30 us) then holds the port busy, the windows still below a segment, where
 * a target of 5 us alone leaves it idle at times (the windows cut together,
 * then paced a long round trip apart). */
static void test_swift_tcp_below_one_packet(void **state)
{
	(void)state;
	const char *yaml = "topology: {kind: spine-leaf, leaves: 1, servers_per_leaf: 257, gpus_per_server: 1, "
			   "nics_per_server: 1, spines: 1, links_per_spine: 1, radix: 512, host_rate: 100Gbps, "
			   "fabric_rate: 100Gbps}\n"
			   "fabric: {mtu: 1000, transport: tcp, cc: swift, swift: {max_cwnd: 1}}\n"
			   "traffic:\n  generators:\n    - {kind: incast, senders: 256, dst: 0, bytes: 512KiB}\n";
	const char *fs[] = {"fabric.swift.fs_range=0", "fabric.swift.fs_range=30us"};
	double util[2], mean_q[2];
	for (int k = 0; k < 2; k++) {
		struct trun h = trun_yaml_sets(yaml, &fs[k], 1);
		const struct fab_port_stats *b = bottleneck(&h);
		const struct fab_sim_totals *tot = fab_sim_totals(h.run->sim);
		util[k] = busy(&h, b);
		mean_q[k] = mean_queue(&h, b);
		print_message("Swift on TCP, 256 senders, %s: bottleneck %.3f busy, mean queue %.0f B, max %llu B, "
			      "%llu drops, %llu timeouts\n",
			      fs[k], util[k], mean_q[k], (unsigned long long)b->max_queue_bytes,
			      (unsigned long long)b->drops, (unsigned long long)tot->timeouts);
		assert_int_equal(b->drops, 0);
		assert_int_equal(tot->timeouts, 0);
		trun_free(&h);
	}
	double unpaced = 256 * 1070.0 - 100e9 / 8 * 4.2e-6, want = 5e-6 * 100e9 / 8;
	assert_true(mean_q[0] > 0.85 * want && mean_q[0] < 1.15 * want);
	assert_true(util[1] > 0.95 && mean_q[1] < 0.8 * unpaced);
}

/* fabric.cc: swift runs on a TCP fabric; a run of it on 2 threads runs on
 * one (its records are the run's), the same flows finishing at the same
 * picoseconds */
static void test_swift_on_tcp_accepted(void **state)
{
	(void)state;
	struct fab_err err = {0};
	const char *yaml = "fabric:\n  transport: tcp\n  cc: swift\n";
	struct fab_config *c = fab_config_parse(yaml, strlen(yaml), "s.yaml", NULL, NULL, 0, &err);
	assert_non_null(c);
	assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_TCP)->name, "swift");
	fab_config_free(c);
	const char *one[] = {"fabric.transport=tcp"}, *two[] = {"fabric.transport=tcp", "run.threads=2"};
	check_same_finish_times(incast, one, 1, two, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swift_window_law),
		cmocka_unit_test(test_swift_incast_at_target),
		cmocka_unit_test(test_swift_tcp_below_one_packet),
		cmocka_unit_test(test_swift_on_tcp_accepted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
