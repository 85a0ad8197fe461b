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

static void test_faults_pfc_watchdog_breaks_a_storm(void **state)
{
	(void)state;
	/* server1.nic0 storms for 5 ms; a 1 MiB flow to it waits for the storm
	 * unless the watchdog stops the leaf from obeying */
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 1, links_per_spine: 1}\n"
			   "traffic:\n"
			   "  flows: [{src: 0, dst: 1, bytes: 1MiB, start: 10us}]\n"
			   "faults: [{kind: pfc-storm, node: server1.nic0, start: 0, end: 5ms}]\n";
	const char *wd[] = {"fabric.pfc.watchdog=100us"};
	struct trun a = trun_yaml(yaml);
	struct trun b = trun_yaml_sets(yaml, wd, 1);
	fab_time_ps fa = fab_sim_flow_stats(a.run->sim)[0].finish_ps;
	fab_time_ps fb = fab_sim_flow_stats(b.run->sim)[0].finish_ps;
	uint32_t p = port_between(b.run->topo, "leaf0", "server1.nic0");
	print_message("flow done at %.1f us in the storm, %.1f us with the watchdog (%llu trips)\n", fa / 1e6, fb / 1e6,
		      (unsigned long long)fab_sim_port_stats(b.run->sim)[p].watchdog_trips);
	assert_true(fa >= 5 * FAB_PS_PER_MS);
	assert_true(fb < 1 * FAB_PS_PER_MS);
	assert_true(fab_sim_port_stats(b.run->sim)[p].watchdog_trips > 0);
	trun_free(&a);
	trun_free(&b);
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
		cmocka_unit_test(test_faults_pfc_watchdog_breaks_a_storm),
		cmocka_unit_test(test_faults_slow_gpu_stretches_every_step),
		cmocka_unit_test(test_faults_ecn_misconfiguration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
