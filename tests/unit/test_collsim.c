/*
 * Collectives on the simulated cluster, against closed forms: the ring's
 * alpha-beta time and bus bandwidth, the tree/ring crossover and the cost
 * model's choice, and the hierarchical algorithm's NIC bytes.
 */
#include "testutil.h"

static double row_time_us(const struct crun *c, uint32_t i)
{
	assert_true(i < c->r->sweep.nrows);
	return c->r->sweep.rows[i].time_us;
}

static void test_collsim_ring_alpha_beta(void **state)
{
	(void)state;
	/* 8 single-GPU servers on one leaf: every ring hop is NIC-leaf-NIC */
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 8, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 1, links_per_spine: 1}\n"
			   "collective: {algo: ring, min_bytes: 256MiB, max_bytes: 256MiB}\n";
	struct crun c = coll_yaml(yaml, NULL, 0);
	double n = 8, S = 256.0 * (1 << 20);
	double B = 400e9 / 8 * 4096.0 / 4178; /* bytes/s a NIC moves as payload */
	double busbw = c.r->sweep.rows[0].busbw_GBps * 1e9;
	double alpha = 2 * (1e-6 + 4178 * 8 / 400e9); /* first packet, NIC to NIC */
	double model_us = (2 * (n - 1) / n * S / B + 2 * (n - 1) * alpha) * 1e6;
	print_message("busbw %.2f GB/s vs %.2f; time %.1f us vs alpha-beta %.1f us\n", busbw / 1e9, B / 1e9,
		      row_time_us(&c, 0), model_us);
	assert_true(busbw <= B * 1.001 && busbw >= B * 0.97);
	assert_true(rel_err(row_time_us(&c, 0), model_us) < 0.05);
	crun_free(&c);
}

static void test_collsim_tree_ring_crossover_and_auto(void **state)
{
	(void)state;
	/* the built-in cluster: 64 GPUs, 8 servers on 4 leaves */
	const char *yaml = "collective: {min_bytes: 4KiB, max_bytes: 16MiB, step_bytes: 16380KiB}\n";
	const char *algo_ring[] = {"collective.algo=ring"};
	const char *algo_tree[] = {"collective.algo=tree"};
	struct crun ring = coll_yaml(yaml, algo_ring, 1);
	struct crun tree = coll_yaml(yaml, algo_tree, 1);
	struct crun autom = coll_yaml(yaml, NULL, 0);
	assert_int_equal(ring.r->sweep.nrows, 2);
	for (uint32_t i = 0; i < 2; i++)
		print_message("%llu B: ring %.1f us, tree %.1f us, auto (%s) %.1f us\n",
			      (unsigned long long)ring.r->sweep.rows[i].bytes, row_time_us(&ring, i),
			      row_time_us(&tree, i), fab_coll_algo_name(autom.r->sweep.rows[i].algo),
			      row_time_us(&autom, i));
	/* small: the tree's log(n) depth wins by far; at 16 MiB the ring's
	 * bandwidth has caught up: they cross in between */
	assert_true(row_time_us(&tree, 0) < row_time_us(&ring, 0) / 2);
	assert_true(row_time_us(&ring, 1) < row_time_us(&tree, 1));
	/* auto does at least as well as the better of the two, on both sides */
	for (uint32_t i = 0; i < 2; i++) {
		double best = FAB_MIN(row_time_us(&ring, i), row_time_us(&tree, i));
		assert_true(row_time_us(&autom, i) <= best * 1.05);
	}
	crun_free(&ring);
	crun_free(&tree);
	crun_free(&autom);
}

static double nic_tx_bytes(const struct crun *c)
{
	const struct fab_topo *t = c->r->run->topo;
	const struct fab_port_stats *ps = fab_sim_port_stats(c->r->run->sim);
	double sum = 0;
	for (uint32_t i = 0; i < t->nnics; i++)
		sum += (double)ps[t->nodes[t->nic_node[i]].first_port].tx_data_pkts;
	return sum;
}

static void test_collsim_hierarchical_nic_bytes(void **state)
{
	(void)state;
	/* 4 servers x 8 GPUs; a flat ring (every hop between servers) against
	 * the hierarchical algorithm, counted in data packets leaving NICs */
	const char *yaml = "topology: {leaves: 2, servers_per_leaf: 2, gpus_per_server: 8, nics_per_server: 8,\n"
			   "           spines: 4, links_per_spine: 4}\n"
			   "collective: {min_bytes: 64MiB, max_bytes: 64MiB}\n";
	const char *flat[] = {"collective.algo=ring", "collective.placement=scatter", "collective.ring_order=flat"};
	const char *hier[] = {"collective.algo=hierarchical"};
	struct crun f = coll_yaml(yaml, flat, 3);
	struct crun h = coll_yaml(yaml, hier, 1);
	double n = 32, N = 4, G = 8;
	double want = (N - 1) / N * n / (G * (n - 1)); /* 2(N-1)/N S/G per GPU vs 2(n-1)/n S */
	double got = nic_tx_bytes(&h) / nic_tx_bytes(&f);
	print_message("NIC packets: hierarchical / flat ring = %.4f (closed form %.4f, 1/G = %.4f)\n", got, want,
		      1 / G);
	assert_true(rel_err(got, want) < 0.02);
	assert_true(got < 1.1 / G);
	crun_free(&f);
	crun_free(&h);
}

/* Rings as NCCL builds them on rail-optimized and single-leaf fabrics: a
 * channel enters and leaves every server on one rail and the channels
 * rotate over the NICs, so a large AllReduce's bus bandwidth is the sum of
 * a server's NICs (8 x the payload rate of one), and every NIC sends the
 * same bytes.  With nccl.cross_nic a channel changes rail at every server
 * and crosses the spines, where ECMP collides it with others. */
static void test_collsim_rails(void **state)
{
	(void)state;
	static const char *const fabrics[3] = {
		"topology: {rail_optimized: true, leaves: 8, servers_per_leaf: 2}\n",
		"topology: {rail_optimized: true, leaves: 8, servers_per_leaf: 4}\n",
		"topology: {leaves: 1, servers_per_leaf: 2, spines: 1, links_per_spine: 1}\n",
	};
	static const uint32_t gpus[3] = {16, 32, 16};
	double B = 400e9 / 8 * 4096.0 / 4178; /* bytes/s a NIC moves as payload */
	for (int f = 0; f < 3; f++)
		for (int e = 0; e < 2; e++) {
			char yaml[512], g[32];
			snprintf(yaml, sizeof yaml,
				 "%scollective: {algo: ring, min_bytes: 256MiB, max_bytes: 256MiB}\n", fabrics[f]);
			snprintf(g, sizeof g, "collective.gpus=%u", gpus[f]);
			const char *sets[] = {g, e ? "engine=flow" : "engine=packet"};
			struct crun c = coll_yaml(yaml, sets, 2);
			const struct fab_topo *t = c.r->run->topo;
			const struct fab_port_stats *ps = fab_sim_port_stats(c.r->run->sim);
			double lo = 1e300, hi = 0, busbw = c.r->sweep.rows[0].busbw_GBps * 1e9;
			for (uint32_t i = 0; i < gpus[f] / 8 * 8; i++) {
				double b = (double)ps[t->nodes[t->nic_node[i]].first_port].tx_bytes;
				lo = FAB_MIN(lo, b);
				hi = FAB_MAX(hi, b);
			}
			print_message("%u GPUs, fabric %d, %s: busbw %.1f GB/s vs 8 NICs %.1f; NIC bytes %.4g..%.4g\n",
				      gpus[f], f, e ? "flow" : "packet", busbw / 1e9, 8 * B / 1e9, lo, hi);
			assert_true(busbw >= 0.95 * 8 * B && busbw <= 1.001 * 8 * B);
			assert_true(lo > 0 && hi <= 1.01 * lo);
			crun_free(&c);
		}
	/* the same 32 GPUs with channels that change rail at each server */
	const char *cross[] = {"collective.gpus=32", "nccl.cross_nic=true"};
	char yaml[512];
	snprintf(yaml, sizeof yaml, "%scollective: {algo: ring, min_bytes: 64MiB, max_bytes: 64MiB}\n", fabrics[1]);
	struct crun a = coll_yaml(yaml, cross, 1), x = coll_yaml(yaml, cross, 2);
	print_message("32 GPUs, 64 MiB: rail-aligned %.1f GB/s, cross_nic %.1f GB/s\n", a.r->sweep.rows[0].busbw_GBps,
		      x.r->sweep.rows[0].busbw_GBps);
	assert_true(x.r->sweep.rows[0].busbw_GBps < 0.8 * a.r->sweep.rows[0].busbw_GBps);
	crun_free(&a);
	crun_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collsim_ring_alpha_beta),
		cmocka_unit_test(test_collsim_tree_ring_crossover_and_auto),
		cmocka_unit_test(test_collsim_hierarchical_nic_bytes),
		cmocka_unit_test(test_collsim_rails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
