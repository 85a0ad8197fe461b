/* Faults in the engine: what each one does to the network. */
#include "testutil.h"

static void test_faults_link_down_reroutes_after_convergence(void **state)
{
	(void)state;
	/* leaf0's first uplink to spine0 goes down at 0; switches route
	 * around it after 50 us; meanwhile what hashes onto it is lost */
	const char *yaml = "topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 4, links_per_spine: 1}\n"
			   "fabric: {nic: {rto: 100us}, series_interval: 25us}\n"
			   "traffic:\n"
			   "  generators: [{kind: permutation, bytes: 4MiB, qps: 16, scope: cross-leaf}]\n"
			   "faults: [{kind: down, node: leaf0, peer: spine0, convergence: 50us}]\n";
	struct trun t = trun_yaml(yaml);
	struct fab_summary sm;
	fab_summary_compute(t.run->sim, &sm);
	uint32_t p = port_between(t.run->topo, "leaf0", "spine0");
	const struct fab_sim_totals *tot = fab_sim_totals(t.run->sim);
	print_message("lost %llu frames before routing converged around the link\n",
		      (unsigned long long)tot->wire_losses);
	assert_int_equal(sm.flows_done, 8); /* everything delivered, around the link */
	assert_true(tot->wire_losses > 0);  /* blackholed before convergence */
	/* after convergence nothing chooses it: it carried only the first 50 us */
	size_t n;
	const struct fab_series_row *rows = fab_sim_series(t.run->sim, &n);
	uint64_t late = 0, early = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].port == p)
			*(rows[i].t_ps > 75 * FAB_PS_PER_US ? &late : &early) += rows[i].tx_bytes;
	assert_true(early > 0);
	assert_int_equal(late, 0);
	trun_free(&t);
}

/*
 * A stuck NIC (server2.nic0 storms PAUSE from t = 0 on) and the watchdogs
 * that confine it.  Flow A (GPU 0 -> 2, 4 MiB) goes to the stuck NIC; B
 * (0 -> 1, 4 MiB at 10 us) only shares NIC 0 with it, and D (0 -> 1 at
 * 5 ms) comes later.  Without watchdogs A's packets fill the leaf, the leaf
 * pauses NIC 0, and B waits behind the storm: the damage spreads.  The
 * switch watchdog (200 us) turns the leaf's queue toward the stuck NIC
 * lossy (its packets dropped, PAUSE ignored): B and D finish as if nothing
 * were wrong, and the queue stays lossy while the storm goes on (one trip).
 * With the storm over at 1 ms, the queue is lossless again after the
 * restore time (300 us) and E (0 -> 2 at 2 ms) arrives without a loss.
 * The NIC watchdog (300 us) makes the stuck NIC send RESUME and pause no
 * more: A finishes after it, and the NIC sent one PAUSE per 2 us until then.
 */
static void test_faults_pfc_watchdogs_confine_a_stuck_nic(void **state)
{
	(void)state;
	const char *yaml =
		"topology: {leaves: 1, servers_per_leaf: 3, gpus_per_server: 1, nics_per_server: 1,\n"
		"           spines: 1, links_per_spine: 1}\n"
		"fabric: {pfc: {nic_watchdog: 0}}\n"
		"run: {end: 20ms}\n"
		"traffic:\n"
		"  flows: [{src: 0, dst: 2, bytes: 4MiB}, {src: 0, dst: 1, bytes: 4MiB, start: 10us},\n"
		"          {src: 0, dst: 1, bytes: 4MiB, start: 5ms}, {src: 0, dst: 2, bytes: 1MiB, start: 2ms}]\n"
		"faults: [{kind: pfc-storm, node: server2.nic0, start: 0}]\n";
	const char *sw[] = {"fabric.pfc.watchdog=200us"};
	const char *restore[] = {"fabric.pfc.watchdog=200us", "fabric.pfc.watchdog_restore=300us", "faults.0.end=1ms"};
	const char *nic[] = {"fabric.pfc.nic_watchdog=300us"};
	struct trun none = trun_yaml(yaml), s = trun_yaml_sets(yaml, sw, 1), r = trun_yaml_sets(yaml, restore, 3),
		    n = trun_yaml_sets(yaml, nic, 1);
	uint32_t leaf = port_between(s.run->topo, "leaf0", "server2.nic0");
	uint32_t stuck = port_between(s.run->topo, "server2.nic0", "leaf0");
	const struct fab_flow_stats *f0 = fab_sim_flow_stats(none.run->sim), *fs = fab_sim_flow_stats(s.run->sim),
				    *fr = fab_sim_flow_stats(r.run->sim), *fn = fab_sim_flow_stats(n.run->sim);
	const struct fab_port_stats *ps = fab_sim_port_stats(s.run->sim), *pn = fab_sim_port_stats(n.run->sim);
	print_message("no watchdog: B %s; switch watchdog: B done at %.1f us, D's FCT %.1f us, %llu trips, %llu "
		      "dropped; NIC watchdog: A done at %.1f us, %llu PAUSE\n",
		      f0[1].finish_ps == FAB_TIME_NEVER ? "never done" : "done", fs[1].finish_ps / 1e6,
		      (fs[2].finish_ps - 5 * FAB_PS_PER_MS) / 1e6, (unsigned long long)ps[leaf].watchdog_trips,
		      (unsigned long long)ps[leaf].drops, fn[0].finish_ps / 1e6,
		      (unsigned long long)pn[stuck].pause_tx[3]);
	/* the damage spreads without a watchdog */
	assert_true(f0[1].finish_ps == FAB_TIME_NEVER);
	/* confined by the switch watchdog, and it stays confined */
	assert_true(fs[1].finish_ps < 500 * FAB_PS_PER_US);
	/* (at most sharing NIC 0 with A's retransmissions toward the stuck NIC) */
	assert_true(fs[2].finish_ps - 5 * FAB_PS_PER_MS < 250 * FAB_PS_PER_US);
	assert_true(fs[0].finish_ps == FAB_TIME_NEVER && fs[3].finish_ps == FAB_TIME_NEVER);
	assert_int_equal(ps[leaf].watchdog_trips, 1);
	assert_true(ps[leaf].drops > 0);
	/* restored after the storm: E goes through losslessly */
	assert_true(fr[3].finish_ps != FAB_TIME_NEVER);
	assert_int_equal(fr[3].timeouts + fr[3].retx_pkts, 0);
	assert_int_equal(fab_sim_port_stats(r.run->sim)[leaf].watchdog_trips, 1);
	/* the NIC watchdog: one PAUSE every 2 us for 300 us, then a RESUME and no more */
	assert_int_equal(pn[stuck].watchdog_trips, 1);
	assert_true(pn[stuck].pause_tx[3] >= 150 && pn[stuck].pause_tx[3] <= 152);
	assert_true(fn[0].finish_ps > 300 * FAB_PS_PER_US && fn[0].finish_ps != FAB_TIME_NEVER);
	assert_true(fn[1].finish_ps != FAB_TIME_NEVER && fn[3].finish_ps != FAB_TIME_NEVER);
	trun_free(&none);
	trun_free(&s);
	trun_free(&r);
	trun_free(&n);
}

static void test_faults_slow_gpu_stretches_every_step(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 4, spines: 1, links_per_spine: 1}\n"
			   "jobs: [{gpus: 32, iterations: 2, compute: 4ms, gradient_bytes: 4KiB, overlap: false}]\n"
			   "faults: [{kind: slow-gpu, gpu: 17, factor: 1.5}]\n";
	struct trun t = trun_yaml(yaml);
	const struct fab_job *j = &t.run->jobs[0];
	double step = (double)(j->iters[1].end_ps - j->iters[1].start_ps);
	print_message("step %.1f us with one GPU 1.5x slower (compute 4000 us)\n", step / 1e6);
	/* everyone waits for the straggler at the all-reduce */
	assert_true(step >= 6e9 && step < 6.2e9);
	trun_free(&t);
}

static void test_faults_ecn_misconfiguration(void **state)
{
	(void)state;
	/* leaf0 never marks (thresholds far above any queue); the incast's
	 * queue is there, so only PFC holds it */
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 9, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 1, links_per_spine: 1}\n"
			   "traffic:\n"
			   "  generators: [{kind: incast, senders: 8, dst: 0, bytes: 2MiB}]\n";
	const char *bad[] = {"faults.0.kind=ecn", "faults.0.node=leaf0", "faults.0.kmin=64MiB", "faults.0.kmax=64MiB"};
	struct trun good = trun_yaml(yaml);
	char y2[1024];
	snprintf(y2, sizeof y2, "%sfaults: [{kind: ecn, node: leaf0, kmin: 64MiB, kmax: 64MiB}]\n", yaml);
	(void)bad;
	struct trun mis = trun_yaml(y2);
	struct fab_summary a, b;
	fab_summary_compute(good.run->sim, &a);
	fab_summary_compute(mis.run->sim, &b);
	print_message("ECN marks %llu with the fabric's thresholds, %llu misconfigured; PAUSE %llu vs %llu\n",
		      (unsigned long long)a.ecn_marks, (unsigned long long)b.ecn_marks,
		      (unsigned long long)a.pause_frames, (unsigned long long)b.pause_frames);
	assert_true(a.ecn_marks > 0);
	assert_int_equal(b.ecn_marks, 0);
	assert_true(b.pause_frames >= a.pause_frames);
	trun_free(&good);
	trun_free(&mis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faults_link_down_reroutes_after_convergence),
		cmocka_unit_test(test_faults_pfc_watchdogs_confine_a_stuck_nic),
		cmocka_unit_test(test_faults_slow_gpu_stretches_every_step),
		cmocka_unit_test(test_faults_ecn_misconfiguration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
