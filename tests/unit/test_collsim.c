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

/* NCCL's tuning model as doc/collectives.md writes it, computed by hand
 * for 64 GPUs in 8 servers with 8 NICs each: the (algorithm, protocol)
 * with the least time for AllReduce of S bytes. */
static void model_choice(double S, int *algo, int *proto)
{
	static const double base[3] = {6.6e-6, 14e-6, 8.4e-6}, hop[3] = {0.6e-6, 1.9e-6, 3.4e-6},
			    net[3] = {2.1e-6, 2.1e-6, 10.6e-6};
	static const double ring_f[3] = {0.5, 0.92, 1}, tree_f[3] = {1 / 3.8, 120.0 / 128, 1};
	double n = 64, N = 8, G = 8, bus = FAB_MIN(450e9, 8 * 400e9 / 8 * 4096.0 / 4178), best = 1e300;
	for (int p = 0; p < 3; p++) {
		double ring = base[p] + (2 * (n - 1) - 2 * (N - 1)) * hop[p] + 2 * (N - 1) * (hop[p] + net[p]) +
			S / (bus * ring_f[p] * n / (2 * (n - 1)));
		double tree = base[p] + 2 * ((G - 1) * hop[p] + 3 * (hop[p] + net[p])) +
			S / (bus * 0.92 * 0.85 * tree_f[p] * 0.5);
		if (ring < best)
			best = ring, *algo = FAB_ALGO_RING, *proto = p;
		if (tree < best)
			best = tree, *algo = FAB_ALGO_TREE, *proto = p;
	}
}

/* Rail-optimized, 64 GPUs: the tree wins small messages, the ring large
 * ones, and auto makes the choice NCCL's model makes at every size. */
static void test_collsim_tree_ring_crossover_and_auto(void **state)
{
	(void)state;
	const char *yaml = "topology: {rail_optimized: true, leaves: 8, servers_per_leaf: 8}\n"
			   "engine: flow\n"
			   "collective: {min_bytes: 4KiB, max_bytes: 256MiB, step_factor: 4}\n";
	const char *algo_ring[] = {"collective.algo=ring"};
	const char *algo_tree[] = {"collective.algo=tree"};
	struct crun ring = coll_yaml(yaml, algo_ring, 1);
	struct crun tree = coll_yaml(yaml, algo_tree, 1);
	struct crun autom = coll_yaml(yaml, NULL, 0);
	uint32_t rows = ring.r->sweep.nrows;
	assert_int_equal(rows, 9);
	for (uint32_t i = 0; i < rows; i++) {
		const struct fab_sweep_row *a = &autom.r->sweep.rows[i];
		int algo = -1, proto = -1;
		model_choice((double)a->bytes, &algo, &proto);
		print_message("%9llu B: ring %7.1f us, tree %7.1f us, auto %s/%s %7.1f us (model: %s/%s)\n",
			      (unsigned long long)a->bytes, row_time_us(&ring, i), row_time_us(&tree, i),
			      fab_coll_algo_name(a->algo), fab_proto_name(a->proto), row_time_us(&autom, i),
			      fab_coll_algo_name(algo), fab_proto_name(proto));
		assert_int_equal(a->algo, algo);
		assert_int_equal(a->proto, proto);
	}
	/* small: the tree's depth wins by far; 256 MiB: the ring's bandwidth */
	assert_true(row_time_us(&tree, 0) < row_time_us(&ring, 0) / 2);
	assert_true(row_time_us(&ring, rows - 1) < row_time_us(&tree, rows - 1));
	/* at both ends the model's choice is the faster; in between, NCCL's
	 * model adds every ring step's latency to the transfer time where the
	 * pipeline hides most of it, and keeps the tree up to 64 MiB, where the
	 * ring is 1.6x faster (doc/collectives.md) */
	for (uint32_t i = 0; i < rows; i += rows - 1)
		assert_true(row_time_us(&autom, i) <= 1.05 * FAB_MIN(row_time_us(&ring, i), row_time_us(&tree, i)));
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
	const char *flat[] = {"collective.algo=ring", "collective.placement=scatter", "collective.ring_order=flat",
			      "nccl.proto=simple"};
	const char *hier[] = {"collective.algo=hierarchical", "nccl.proto=simple"};
	struct crun f = coll_yaml(yaml, flat, 4);
	struct crun h = coll_yaml(yaml, hier, 2);
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
			const char *sets[] = {g, e ? "engine=flow" : "engine=packet", "nccl.proto=simple"};
			struct crun c = coll_yaml(yaml, sets, 3);
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

/* NCCL's protocols: LL puts 4 bytes of data and a 4-byte flag in every 8,
 * LL128 120 of every 128, Simple all; a step costs at least the
 * protocol's latency (NCCL's hop latencies), the links' own included.
 * Two single-GPU servers on one leaf: an AllReduce of 64 bytes is two
 * network steps, base + 2 x max(path, hop + net); 64 MiB on two 8-GPU
 * servers sends 2x (LL) and 16/15 (LL128) the bytes of Simple. */
static void test_collsim_protocols(void **state)
{
	(void)state;
	static const char *const protos[3] = {"nccl.proto=ll", "nccl.proto=ll128", "nccl.proto=simple"};
	static const double base[3] = {6.6, 14.0, 8.4}, step[3] = {2.7, 4.0, 14.0};
	const char *small = "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1,\n"
			    "           spines: 1, links_per_spine: 1}\n"
			    "collective: {algo: ring, min_bytes: 64, max_bytes: 64}\n";
	double path_us = 2.0 + 4178 * 8 / 400e9 * 1e6; /* two host links and a packet at the leaf */
	for (int p = 0; p < 3; p++) {
		const char *sets[] = {protos[p]};
		struct crun c = coll_yaml(small, sets, 1);
		double want = base[p] + 2 * FAB_MAX(path_us, step[p]);
		print_message("64 B, %s: %.2f us, model %.2f us\n", protos[p], row_time_us(&c, 0), want);
		assert_int_equal(c.r->sweep.rows[0].proto, p);
		assert_true(rel_err(row_time_us(&c, 0), want) < 0.03);
		crun_free(&c);
	}
	const char *big = "topology: {rail_optimized: true, leaves: 8, servers_per_leaf: 2}\n"
			  "collective: {algo: ring, gpus: 16, min_bytes: 64MiB, max_bytes: 64MiB}\n";
	double bytes[3], busbw[3];
	for (int p = 0; p < 3; p++) {
		const char *sets[] = {protos[p]};
		struct crun c = coll_yaml(big, sets, 1);
		const struct fab_topo *t = c.r->run->topo;
		const struct fab_port_stats *ps = fab_sim_port_stats(c.r->run->sim);
		bytes[p] = 0;
		for (uint32_t i = 0; i < t->nnics; i++)
			bytes[p] += (double)ps[t->nodes[t->nic_node[i]].first_port].tx_bytes;
		busbw[p] = c.r->sweep.rows[0].busbw_GBps;
		crun_free(&c);
	}
	print_message("64 MiB: NIC bytes LL/Simple %.4f, LL128/Simple %.4f; busbw %.1f %.1f %.1f GB/s\n",
		      bytes[0] / bytes[2], bytes[1] / bytes[2], busbw[0], busbw[1], busbw[2]);
	assert_true(rel_err(bytes[0] / bytes[2], 2.0) < 0.01);
	assert_true(rel_err(bytes[1] / bytes[2], 16.0 / 15) < 0.01);
	assert_true(rel_err(busbw[1] / busbw[2], 15.0 / 16) < 0.03);
	assert_true(rel_err(busbw[0] / busbw[2], 0.5) < 0.1); /* Simple pays its longer steps */
}

static double spine_bytes(const struct crun *c)
{
	const struct fab_topo *t = c->r->run->topo;
	const struct fab_port_stats *ps = fab_sim_port_stats(c->r->run->sim);
	double up = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct fab_node *a = &t->nodes[t->ports[p].node], *b = &t->nodes[t->ports[t->ports[p].peer].node];
		if (a->kind == FAB_NODE_SWITCH && b->kind == FAB_NODE_SWITCH && a->tier < b->tier)
			up += (double)ps[p].tx_bytes;
	}
	return up;
}

/* NICs with two ports on two ToRs (non-stacked dual ToR), 2 x 200G: a
 * ring carries the sum of every port, each the same bytes, none through
 * the spine.  A port that goes down at t0 hands its queue pairs to the
 * NIC's other port: the collective finishes with no queue pair failed and
 * every byte delivered, and as that NIC now has half its rate, the rest of
 * the ring takes twice as long: t0 + 2 (T - t0).  A ninth NIC in a server
 * of 8 GPUs gets its own channel and its share. */
static void test_collsim_nic_ports(void **state)
{
	(void)state;
	const char *dual =
		"topology: {nic_ports: 2, dual_tor: true, leaves: 2, servers_per_leaf: 2, host_rate: 200Gbps}\n"
		"collective: {algo: ring, gpus: 16, min_bytes: 256MiB, max_bytes: 256MiB}\n"
		"nccl: {proto: simple}\n";
	double B = 400e9 / 8 * 4096.0 / 4178, T = 0;
	for (int e = 0; e < 2; e++) {
		const char *sets[] = {e ? "engine=flow" : "engine=packet"};
		struct crun c = coll_yaml(dual, sets, 1);
		const struct fab_topo *t = c.r->run->topo;
		const struct fab_port_stats *ps = fab_sim_port_stats(c.r->run->sim);
		double lo = 1e300, hi = 0, busbw = c.r->sweep.rows[0].busbw_GBps * 1e9;
		assert_int_equal(t->nnics, 32); /* 2 servers x 8 NICs x 2 ports */
		for (uint32_t i = 0; i < 32; i++) {
			double b = (double)ps[t->nodes[t->nic_node[i]].first_port].tx_bytes;
			lo = FAB_MIN(lo, b);
			hi = FAB_MAX(hi, b);
		}
		print_message("dual ToR, %s: busbw %.1f GB/s vs 8 NICs of 2 x 200G %.1f; port bytes %.4g..%.4g\n",
			      e ? "flow" : "packet", busbw / 1e9, 8 * B / 1e9, lo, hi);
		assert_true(busbw >= 0.95 * 8 * B && busbw <= 1.001 * 8 * B);
		assert_true(lo > 0 && hi <= 1.01 * lo);
		assert_true(spine_bytes(&c) == 0);
		if (!e)
			T = row_time_us(&c, 0);
		crun_free(&c);
	}
	char yaml[640];
	snprintf(yaml, sizeof yaml, "%sfaults:\n  - {kind: down, node: server0.nic0.p0, start: 300us}\n", dual);
	struct crun f = coll_yaml(yaml, NULL, 0);
	const struct fab_sim_totals *tot = fab_sim_totals(f.r->run->sim);
	double want = 300 + 2 * (T - 300);
	print_message("port down at 300 us: %.1f us (healthy %.1f, closed form %.1f), %llu queue pairs moved, "
		      "%llu frames lost, %llu resent, %llu failed\n",
		      row_time_us(&f, 0), T, want, (unsigned long long)tot->failovers,
		      (unsigned long long)tot->wire_losses, (unsigned long long)tot->retx_pkts,
		      (unsigned long long)tot->qp_errors);
	assert_true(tot->failovers > 0);
	assert_int_equal(tot->qp_errors, 0);
	assert_true(rel_err(row_time_us(&f, 0), want) < 0.05);
	crun_free(&f);
	/* 8 and 9 NICs of 400G for 8 GPUs, two servers on one leaf (NVLink at
	 * its full rate, so the NICs set the pace) */
	double bw[2];
	for (int n = 0; n < 2; n++) {
		char y[512];
		snprintf(
			y, sizeof y,
			"topology: {nics_per_server: %d, leaves: 1, servers_per_leaf: 2, spines: 1, links_per_spine: 1,\n"
			"           nvlink_efficiency: 1}\n"
			"collective: {algo: ring, gpus: 16, min_bytes: 256MiB, max_bytes: 256MiB}\n"
			"nccl: {proto: simple}\n",
			8 + n);
		struct crun c = coll_yaml(y, NULL, 0);
		const struct fab_topo *t = c.r->run->topo;
		const struct fab_port_stats *ps = fab_sim_port_stats(c.r->run->sim);
		double lo = 1e300, hi = 0;
		for (uint32_t i = 0; i < t->nnics; i++) {
			double b = (double)ps[t->nodes[t->nic_node[i]].first_port].tx_bytes;
			lo = FAB_MIN(lo, b);
			hi = FAB_MAX(hi, b);
		}
		bw[n] = c.r->sweep.rows[0].busbw_GBps;
		print_message("%d NICs: busbw %.1f GB/s, %u channels, NIC bytes %.4g..%.4g\n", 8 + n, bw[n],
			      c.r->comm.channels, lo, hi);
		assert_int_equal(c.r->comm.channels, 8 + n);
		assert_true(lo > 0 && hi <= 1.01 * lo);
		crun_free(&c);
	}
	assert_true(rel_err(bw[1] / bw[0], 9.0 / 8) < 0.02);
}

/* Adaptive routing: 16 GPUs on two leaves, every NIC of a server on its
 * leaf, so every ring channel crosses the spine.  Hashed, ECMP puts some
 * channels on the same uplink and the ring runs at the slowest; adaptive,
 * each packet takes the least queued uplink, the NICs place what arrives
 * out of order, and the ring gets the 8 NICs' bandwidth with nothing
 * resent.  The flow engine refuses it. */
static void test_collsim_adaptive_routing(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 2, servers_per_leaf: 1}\n"
			   "collective: {algo: ring, gpus: 16, min_bytes: 256MiB, max_bytes: 256MiB}\n"
			   "nccl: {proto: simple}\n";
	double B = 400e9 / 8 * 4096.0 / 4178, bw[2];
	uint64_t reordered = 0, retx = 0;
	for (int a = 0; a < 2; a++) {
		const char *sets[] = {a ? "fabric.ecmp.adaptive=true" : "fabric.ecmp.adaptive=false"};
		struct crun c = coll_yaml(yaml, sets, 1);
		bw[a] = c.r->sweep.rows[0].busbw_GBps * 1e9;
		if (a) {
			reordered = fab_sim_totals(c.r->run->sim)->reordered;
			retx = fab_sim_totals(c.r->run->sim)->retx_pkts;
		}
		crun_free(&c);
	}
	print_message("ring across the spine: hashed %.1f GB/s, adaptive %.1f GB/s (8 NICs %.1f); %llu packets "
		      "reordered, %llu resent\n",
		      bw[0] / 1e9, bw[1] / 1e9, 8 * B / 1e9, (unsigned long long)reordered, (unsigned long long)retx);
	assert_true(bw[0] < 0.8 * 8 * B);
	assert_true(bw[1] >= 0.95 * 8 * B && bw[1] <= 1.001 * 8 * B);
	assert_true(reordered > 0);
	assert_int_equal(retx, 0);
	/* by flowlets, with a gap no ring step leaves: each flow keeps the port
	 * that was least queued when it began, and nothing is reordered */
	const char *flowlet[] = {"fabric.ecmp.adaptive=true", "fabric.ecmp.flowlet_gap=1ms"};
	struct crun fc = coll_yaml(yaml, flowlet, 2);
	double bwf = fc.r->sweep.rows[0].busbw_GBps * 1e9;
	uint64_t ro = fab_sim_totals(fc.r->run->sim)->reordered;
	print_message("flowlets (1 ms gap): %.1f GB/s, %llu reordered\n", bwf / 1e9, (unsigned long long)ro);
	assert_int_equal(ro, 0);
	assert_true(bwf > 1.5 * bw[0]);
	crun_free(&fc);
	struct fab_err err = {0};
	const char *flow[] = {"fabric.ecmp.adaptive=true", "engine=flow"};
	struct fab_config *cfg = fab_config_parse(yaml, strlen(yaml), "t.yaml", NULL, flow, 2, &err);
	assert_non_null(cfg);
	struct fab_coll_run *r = fab_coll_run_new(cfg, false, &err);
	assert_null(r);
	assert_non_null(strstr(err.msg, "fabric.ecmp.adaptive"));
	fab_config_free(cfg);
}

/* One 8-GPU H100 server against what NCCL's maintainers give for it
 * (nccl-tests issue 212): a ring's bus bandwidth 370 GB/s of NVLink's 450
 * (the copies' overhead, topology.nvlink_efficiency), and NVLink SHARP
 * 480 GB/s of bus bandwidth, 275 of algorithm bandwidth.  auto takes the
 * ring for small sizes and NVLS for large ones; NVLS across servers is
 * refused. */
static void test_collsim_one_server_nvls(void **state)
{
	(void)state;
	const char *yaml = "collective: {gpus: 8, min_bytes: 1KiB, max_bytes: 1GiB, step_factor: 1024}\n";
	static const char *const algos[3] = {"collective.algo=ring", "collective.algo=nvls", "collective.algo=auto"};
	const char *simple = "nccl.proto=simple";
	double busbw[3], algbw[3];
	int big_algo = -1, small_algo = -1;
	for (int a = 0; a < 3; a++) {
		const char *sets[] = {algos[a], simple};
		struct crun c = coll_yaml(yaml, sets, a == 2 ? 1 : 2);
		assert_int_equal(c.r->sweep.nrows, 3);
		busbw[a] = c.r->sweep.rows[2].busbw_GBps;
		algbw[a] = c.r->sweep.rows[2].algbw_GBps;
		if (a == 2) {
			small_algo = c.r->sweep.rows[0].algo;
			big_algo = c.r->sweep.rows[2].algo;
		}
		crun_free(&c);
	}
	print_message("1 GiB in one server: ring busbw %.1f GB/s (370), nvls busbw %.1f (480) algbw %.1f (275); auto "
		      "%s at 1 KiB, %s at 1 GiB\n",
		      busbw[0], busbw[1], algbw[1], fab_coll_algo_name(small_algo), fab_coll_algo_name(big_algo));
	assert_true(rel_err(busbw[0], 370) < 0.05);
	assert_true(rel_err(busbw[1], 480) < 0.05);
	assert_true(rel_err(algbw[1], 275) < 0.05);
	assert_int_equal(small_algo, FAB_ALGO_RING);
	assert_int_equal(big_algo, FAB_ALGO_NVLS);
	struct fab_err err = {0};
	const char *sets[] = {"collective.algo=nvls", "collective.gpus=16"};
	struct fab_config *cfg = fab_config_parse(yaml, strlen(yaml), "t.yaml", NULL, sets, 2, &err);
	assert_non_null(cfg);
	struct fab_coll_run *r = fab_coll_run_new(cfg, false, &err);
	assert_null(r);
	assert_non_null(strstr(err.msg, "nvls"));
	fab_config_free(cfg);
}

/* Connections of 4 queue pairs: NCCL sends each message on the next one in
 * turn (nccl.split_data_on_qps false), so two messages per connection use
 * two of the four; split, every message uses all four.  Two single-GPU
 * servers, a ring of two ranks: two messages per connection and channel. */
static void test_collsim_qps_in_turn(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 1, links_per_spine: 1}\n"
			   "collective: {algo: ring, min_bytes: 4MiB, max_bytes: 4MiB, chunk: 1GiB, channels: 2,\n"
			   "             qps_per_connection: 4}\n";
	uint32_t used[2];
	for (int split = 0; split < 2; split++) {
		const char *sets[] = {split ? "nccl.split_data_on_qps=true" : "nccl.split_data_on_qps=false"};
		struct crun c = coll_yaml(yaml, sets, 1);
		used[split] = 0;
		for (uint32_t q = 0; q < 16; q++) /* 2 ranks x 2 channels x 4 queue pairs */
			used[split] += fab_sim_qp_used(c.r->run->sim, q);
		crun_free(&c);
	}
	print_message("queue pairs that carried data: %u in turn, %u split (of 16)\n", used[0], used[1]);
	assert_int_equal(used[0], 8);
	assert_int_equal(used[1], 16);
}

/* In-network reduction (topology.sharp): each GPU's NIC sends its 1/G
 * shard once and gets the reduced shard back, where a ring sends 2(n-1)/n
 * of it, so the NICs carry n/(2(n-1)) of the ring's bytes; with NVLink
 * fast enough not to matter, the time is SHARP's latency plus the shard at
 * a NIC's rate.  32 GPUs on 4 rail-optimized servers, 256 MiB. */
static void test_collsim_sharp(void **state)
{
	(void)state;
	const char *yaml = "topology: {rail_optimized: true, leaves: 8, servers_per_leaf: 4, sharp: true,\n"
			   "           nvlink_rate: 14400Gbps, nvlink_efficiency: 1}\n"
			   "collective: {gpus: 32, min_bytes: 256MiB, max_bytes: 256MiB}\n"
			   "nccl: {proto: simple}\n";
	static const char *const algos[2] = {"collective.algo=ring", "collective.algo=sharp"};
	double t[2], nic[2];
	for (int a = 0; a < 2; a++) {
		const char *sets[] = {algos[a]};
		struct crun c = coll_yaml(yaml, sets, 1);
		t[a] = row_time_us(&c, 0);
		const struct fab_topo *tp = c.r->run->topo;
		const struct fab_port_stats *ps = fab_sim_port_stats(c.r->run->sim);
		nic[a] = 0;
		for (uint32_t i = 0; i < tp->nnics; i++)
			nic[a] += (double)ps[tp->nodes[tp->nic_node[i]].first_port].tx_bytes;
		crun_free(&c);
	}
	double B = 400e9 / 8 * 4096.0 / 4178, S = 256.0 * (1 << 20), want = 31 + S / 8 / B * 1e6;
	print_message("sharp %.1f us (latency + shard at a NIC: %.1f), ring %.1f us; NIC bytes sharp/ring %.4f "
		      "(closed form %.4f)\n",
		      t[1], want, t[0], nic[1] / nic[0], 32.0 / (2 * 31));
	assert_true(rel_err(t[1], want) < 0.05);
	assert_true(rel_err(nic[1] / nic[0], 32.0 / (2 * 31)) < 0.01);
	/* without switches that reduce, it is refused */
	struct fab_err err = {0};
	const char *sets[] = {"collective.algo=sharp", "topology.sharp=false"};
	struct fab_config *cfg = fab_config_parse(yaml, strlen(yaml), "t.yaml", NULL, sets, 2, &err);
	assert_non_null(cfg);
	struct fab_coll_run *r = fab_coll_run_new(cfg, false, &err);
	assert_null(r);
	assert_non_null(strstr(err.msg, "sharp"));
	fab_config_free(cfg);
}

/* A tree aggregated on the flow engine (flow.tree: aggregate): one
 * transfer per tree edge, then the pipeline's critical path.  Against
 * every step of the schedule, network-bound (NVLink too fast to matter):
 * the same bytes leave the NICs (payload, every tree edge once per
 * slice), the time is within 5% where bandwidth rules (16 MiB and 256
 * MiB) and 12% where latency does (1 MiB), and never below what the
 * busiest NIC needs to send its bytes at its payload rate. */
static double nic_payload(const struct crun *c, double *busiest)
{
	const struct fab_topo *t = c->r->run->topo;
	const struct fab_port_stats *ps = fab_sim_port_stats(c->r->run->sim);
	double sum = 0;
	*busiest = 0;
	for (uint32_t i = 0; i < t->nnics; i++) {
		double b = (double)ps[t->nodes[t->nic_node[i]].first_port].tx_bytes;
		sum += b;
		*busiest = FAB_MAX(*busiest, b);
	}
	return sum;
}

static void test_collsim_tree_aggregate(void **state)
{
	(void)state;
	const char *yaml = "topology: {leaves: 4, servers_per_leaf: 4, gpus_per_server: 4, nics_per_server: 4,\n"
			   "           spines: 4, links_per_spine: 4, nvlink_rate: 90Tbps}\n"
			   "collective: {algo: tree, min_bytes: 1MiB, max_bytes: 256MiB}\n"
			   "engine: flow\n";
	static const char *const modes[2] = {"flow.tree=steps", "flow.tree=aggregate"};
	struct crun c[2];
	for (int m = 0; m < 2; m++) {
		const char *sets[] = {modes[m], "collective.step_factor=16"};
		c[m] = coll_yaml(yaml, sets, 2);
	}
	assert_int_equal(c[0].r->sweep.nrows, 3);
	assert_int_equal(c[1].r->sweep.nrows, 3);
	for (uint32_t i = 0; i < 3; i++) {
		double st = row_time_us(&c[0], i), ag = row_time_us(&c[1], i);
		print_message("%llu B: every step %.2f us, aggregated %.2f us (%+.1f%%)\n",
			      (unsigned long long)c[0].r->sweep.rows[i].bytes, st, ag, (ag / st - 1) * 100);
		assert_true(rel_err(ag, st) < (i ? 0.05 : 0.12));
	}
	double busiest[2], sum[2];
	for (int m = 0; m < 2; m++)
		sum[m] = nic_payload(&c[m], &busiest[m]);
	double B = 400e9 / 8 * 4096.0 / 4178; /* a NIC's payload bytes per second */
	double total_us = 0;
	for (uint32_t i = 0; i < 3; i++)
		total_us += row_time_us(&c[1], i);
	print_message("NIC bytes: aggregated / every step %.5f; busiest NIC at its rate %.1f us of %.1f\n",
		      sum[1] / sum[0], busiest[1] / B * 1e6, total_us);
	assert_true(rel_err(sum[1], sum[0]) < 0.002);
	assert_true(busiest[1] / B * 1e6 < total_us);
	crun_free(&c[0]);
	crun_free(&c[1]);
}

/* nccl-tests' iterations (-w 5 -n 20, the default).  Back to back on an
 * uncongested fabric every iteration takes what one operation alone takes,
 * so the row is that time; the shortcut stops after three equal ones.  On
 * the built-in cluster's 4 MiB AllReduce, where DCQCN carries its rates
 * from one iteration into the next, the row is the timed iterations' mean:
 * the difference of two runs of 25 and 5 iterations from rest, over 20. */
static double iter_row(const char *yaml, const char *w, const char *n, const char *every, uint32_t *simulated)
{
	const char *sets[] = {w, n, every, "collective.min_bytes=4MiB", "collective.max_bytes=4MiB"};
	struct crun c = coll_yaml(yaml, sets, 5);
	double t = row_time_us(&c, 0);
	if (simulated)
		*simulated = c.r->sweep.rows[0].iters_run;
	crun_free(&c);
	return t;
}

static void test_collsim_iterations(void **state)
{
	(void)state;
	const char *one_leaf = "topology: {leaves: 1, servers_per_leaf: 4, gpus_per_server: 8, nics_per_server: 8,\n"
			       "           spines: 1, links_per_spine: 1}\n"
			       "collective: {algo: ring}\n";
	const char *W5 = "collective.warmup=5", *W0 = "collective.warmup=0", *ALL = "collective.every_iteration=true",
		   *SOME = "collective.every_iteration=false";
	uint32_t sim_quiet = 0, sim_busy = 0, sim_all = 0;
	double alone = iter_row(one_leaf, W0, "collective.iters=1", SOME, NULL);
	double quiet = iter_row(one_leaf, W5, "collective.iters=20", SOME, &sim_quiet);
	print_message("uncongested ring 4 MiB: one operation %.3f us, 5 + 20 iterations %.3f us (%u simulated)\n",
		      alone, quiet, sim_quiet);
	assert_true(rel_err(quiet, alone) < 1e-3);
	assert_true(sim_quiet >= 3 && sim_quiet < 25);
	/* a link that slows half way through the iterations is not skipped */
	char faulted[512];
	snprintf(faulted, sizeof faulted,
		 "%sfaults: [{kind: degrade, node: server0.nic0, peer: leaf0, rate: 100Gbps, start: 1ms}]\n", one_leaf);
	uint32_t sim_fault = 0;
	double slowed = iter_row(faulted, W5, "collective.iters=20", SOME, &sim_fault);
	double slowed_all = iter_row(faulted, W5, "collective.iters=20", ALL, NULL);
	print_message("a link down to 100G at 1 ms: %.3f us (%u simulated), every iteration simulated %.3f us\n",
		      slowed, sim_fault, slowed_all);
	assert_true(slowed > 1.2 * quiet);
	assert_true(rel_err(slowed, slowed_all) < 1e-3);

	double busy = iter_row(fab_default_scenario, W5, "collective.iters=20", SOME, &sim_busy);
	double all = iter_row(fab_default_scenario, W5, "collective.iters=20", ALL, &sim_all);
	double t25 = iter_row(fab_default_scenario, W0, "collective.iters=25", ALL, NULL);
	double t5 = iter_row(fab_default_scenario, W0, "collective.iters=5", ALL, NULL);
	double first = iter_row(fab_default_scenario, W0, "collective.iters=1", ALL, NULL);
	double mean = (25 * t25 - 5 * t5) / 20;
	print_message("built-in 4 MiB: first %.2f us, timed mean %.2f us (%u simulated; every iteration %.2f, "
		      "from 25 and 5 iterations %.2f)\n",
		      first, busy, sim_busy, all, mean);
	assert_int_equal(sim_all, 25);
	assert_true(rel_err(busy, all) < 1e-3);
	assert_true(rel_err(all, mean) < 1e-6);
	assert_true(rel_err(busy, first) > 0.05); /* what the iterations are for */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collsim_ring_alpha_beta),
		cmocka_unit_test(test_collsim_tree_ring_crossover_and_auto),
		cmocka_unit_test(test_collsim_hierarchical_nic_bytes),
		cmocka_unit_test(test_collsim_rails),
		cmocka_unit_test(test_collsim_protocols),
		cmocka_unit_test(test_collsim_nic_ports),
		cmocka_unit_test(test_collsim_adaptive_routing),
		cmocka_unit_test(test_collsim_one_server_nvls),
		cmocka_unit_test(test_collsim_qps_in_turn),
		cmocka_unit_test(test_collsim_sharp),
		cmocka_unit_test(test_collsim_tree_aggregate),
		cmocka_unit_test(test_collsim_iterations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
