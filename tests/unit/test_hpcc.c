/* HPCC (Li et al., SIGCOMM 2019) against its paper: the window law on
 * telemetry alone, and an incast held at the target utilisation eta with
 * a near-empty queue (the paper's Figure 9: DCQCN keeps a standing queue,
 * HPCC "near-zero queues" at 95% utilisation). */
#include <math.h>

#include "testutil.h"
#include "../../src/cc/hpcc.h"

static const struct fab_hpcc_params P = {
	.eta = 0.95,
	.max_stage = 0,
	.rai_bps = 50000000,
	.min_rate_bps = 100000000,
	.base_rtt_ps = 10 * FAB_PS_PER_US,
	.fast_react = true,
};

/* one hop at 100G whose samples, T apart, show a link busy at fraction
 * busy and a queue of q bytes */
static struct fab_cc_sample hop_sample(struct fab_int_hop *h, fab_time_ps t, double busy, uint32_t q, uint64_t acked,
				       uint64_t sent)
{
	h->ts_ps = t;
	h->tx_bytes = (uint64_t)(busy * 100e9 / 8 * ((double)t / 1e12));
	h->qlen_bytes = q;
	h->rate_bps = 100000000000ull;
	return (struct fab_cc_sample){.now_ps = t, .acked_seq = acked, .sent_seq = sent, .nhops = 1, .hops = h};
}

/* U from one hop: a link fully busy with a queue of B x T (u = 2) cuts
 * the window to Wc / (2 / eta) + W_AI; one at eta exactly keeps Wc + W_AI;
 * and the window in flight is the rate times T */
static void test_hpcc_window_law(void **state)
{
	(void)state;
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_hpcc;
	const double T = 10e-6, B = 100e9, bdp = B * T / 8; /* 125,000 bytes */
	cc->init(st, &P, B);
	assert_true(fabs(cc->rate_bps(st) - B) < 1);
	assert_true(fabs((double)cc->window_bytes(st) - bdp) <= 1);
	struct fab_int_hop h;
	struct fab_cc_sample s = hop_sample(&h, 0, 1.0, 0, 1000, 2000);
	cc->on_sample(st, &s); /* the first: a reference only */
	assert_true(fabs(cc->rate_bps(st) - B) < 1);
	s = hop_sample(&h, 10 * FAB_PS_PER_US, 1.0, (uint32_t)bdp, 3000, 5000);
	cc->on_sample(st, &s);
	/* tau = T: U = u = 1 + 1 = 2 (the queue: the smaller of 0 and bdp = 0 -> u = 1 first) */
	double want = B / (1.0 / 0.95) + 50e6;
	assert_true(fabs(cc->rate_bps(st) - want) < 1e3);
	/* the next round trip: the queue stood at bdp in both samples: u = 2 */
	s = hop_sample(&h, 20 * FAB_PS_PER_US, 1.0, (uint32_t)bdp, 6000, 9000);
	cc->on_sample(st, &s);
	double want2 = want / (2 / 0.95) + 50e6;
	assert_true(fabs(cc->rate_bps(st) - want2) < 1e3);
	assert_true(fabs((double)cc->window_bytes(st) - want2 * T / 8) <= 1);
	/* a link at eta with no queue: Wc + W_AI (additive, as max_stage allows
	 * none: U / eta = 1 takes the multiplicative branch, Wc / 1 + W_AI) */
	s = hop_sample(&h, 30 * FAB_PS_PER_US, 0.0, 0, 10000, 12000);
	h.tx_bytes = (uint64_t)(0.95 * B / 8 * 10e-6) + (uint64_t)(1.0 * 100e9 / 8 * 20e-6);
	cc->on_sample(st, &s);
	assert_true(fabs(cc->rate_bps(st) - (want2 + 50e6)) < 1e4);
	/* an ACK before the reference moves (acked 10000 <= last update 12000):
	 * the rate reacts, the reference does not */
	double before = cc->rate_bps(st);
	s = hop_sample(&h, 40 * FAB_PS_PER_US, 1.0, (uint32_t)(2 * bdp), 11000, 14000);
	h.tx_bytes += (uint64_t)(B / 8 * 10e-6);
	cc->on_sample(st, &s);
	assert_true(cc->rate_bps(st) < before);
}

/* 4-to-1 incast at 100G: HPCC holds the bottleneck at eta (0.95 and 0.8)
 * and its mean queue under 4 KB, far below DCQCN's standing queue */
static const char *incast = "topology: {kind: spine-leaf, leaves: 1, servers_per_leaf: 5, gpus_per_server: 1, "
			    "nics_per_server: 1, spines: 1, links_per_spine: 1, host_rate: 100Gbps, "
			    "fabric_rate: 100Gbps}\n"
			    "fabric: {mtu: 1000}\n"
			    "traffic:\n  generators:\n    - {kind: incast, senders: 4, dst: 0, bytes: 8MiB}\n";

static const struct fab_port_stats *bottleneck(const struct fab_run *r, const struct fab_config *c)
{
	(void)c;
	const struct fab_topo *t = r->topo;
	for (uint32_t i = 0; i < t->nports; i++) {
		const struct fab_node *peer = &t->nodes[t->ports[t->ports[i].peer].node];
		if (t->nodes[t->ports[i].node].kind == FAB_NODE_SWITCH && peer->kind == FAB_NODE_NIC && peer->nic == 0)
			return &fab_sim_port_stats(r->sim)[i];
	}
	fail_msg("no bottleneck port");
	return NULL;
}

static uint64_t pauses(const struct fab_run *r)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < r->topo->nports; i++)
		for (int p = 0; p < FAB_NPRIO; p++)
			n += fab_sim_port_stats(r->sim)[i].pause_tx[p];
	return n;
}

static void test_hpcc_incast_at_eta(void **state)
{
	(void)state;
	const double etas[] = {0.95, 0.8};
	for (int k = 0; k < 2; k++) {
		char eta[64];
		snprintf(eta, sizeof eta, "fabric.hpcc.eta=%g", etas[k]);
		const char *sets[] = {"fabric.cc=hpcc", eta};
		struct trun h = trun_yaml_sets(incast, sets, 2);
		const struct fab_sim_totals *tot = fab_sim_totals(h.run->sim);
		const struct fab_port_stats *b = bottleneck(h.run, h.cfg);
		/* the link's busy share over the run: its frames and 20 bytes of
		 * preamble and gap each, from the first byte to the last */
		double wire = ((double)b->tx_bytes + 20.0 * (double)b->tx_pkts) * 8;
		double util = wire / (100e9 * (double)tot->end_ps / 1e12);
		double mean_q = b->queue_area / (double)tot->end_ps;
		print_message("HPCC eta %.2f: bottleneck %.3f busy, mean queue %.0f B, max %llu B, PAUSE %llu\n",
			      etas[k], util, mean_q, (unsigned long long)b->max_queue_bytes,
			      (unsigned long long)pauses(h.run));
		assert_true(util > etas[k] - 0.02 && util < etas[k] + 0.03);
		assert_true(mean_q < 4096);
		assert_int_equal(pauses(h.run), 0);
		trun_free(&h);
	}
	const char *dc[] = {"fabric.cc=dcqcn"};
	struct trun d = trun_yaml_sets(incast, dc, 1);
	const struct fab_port_stats *b = bottleneck(d.run, d.cfg);
	double mean_q = b->queue_area / (double)fab_sim_totals(d.run->sim)->end_ps;
	print_message("DCQCN: mean queue %.0f B\n", mean_q);
	assert_true(mean_q > 10 * 4096);
	trun_free(&d);
}

/* a run whose model wants samples keeps its records whole: on 2 threads it
 * runs on one, the same flows finishing at the same picoseconds */
static void test_hpcc_threads_same(void **state)
{
	(void)state;
	const char *one[] = {"fabric.cc=hpcc"}, *two[] = {"fabric.cc=hpcc", "run.threads=2"};
	check_same_finish_times(incast, one, 1, two, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hpcc_window_law),
		cmocka_unit_test(test_hpcc_incast_at_eta),
		cmocka_unit_test(test_hpcc_threads_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
