/*
 * Every examples/<lesson>/ scenario runs here and its README's claim is
 * checked on the result.
 */
#include <math.h>

#include "testutil.h"
#include "../../src/analysis/diagnose.h"

static struct fab_config *load(const char *path, const char *const *sets, size_t n)
{
	struct fab_err err = {0};
	struct fab_config *c = fab_config_load(path, sets, n, &err);
	if (!c)
		fail_msg("%s", err.msg);
	return c;
}

static struct fab_coll_run *coll(struct fab_config *c)
{
	struct fab_err err = {0};
	struct fab_coll_run *r = fab_coll_run_new(c, false, &err);
	if (!r || fab_coll_run_exec(r, NULL, NULL, &err))
		fail_msg("%s", err.msg);
	check_conservation(r->run);
	return r;
}

static struct fab_run *sim(struct fab_config *c)
{
	struct fab_err err = {0};
	struct fab_run *r = fab_run_new(c, &err);
	if (!r || fab_run_exec(r, NULL, NULL))
		fail_msg("%s", err.msg);
	check_conservation(r);
	return r;
}

/* ring-vs-tree: the tree wins small messages by far, and on 64 GPUs
 * auto is never worse than the better of ring and tree. */
static void test_examples_ring_vs_tree(void **state)
{
	(void)state;
	const char *algos[3] = {"collective.algo=ring", "collective.algo=tree", "collective.algo=auto"};
	double t[3][2];
	for (int a = 0; a < 3; a++) {
		const char *sets[] = {"collective.gpus=64", "collective.min_bytes=4KiB", "collective.max_bytes=16MiB",
				      "collective.step_bytes=16380KiB", algos[a]};
		struct fab_config *c = load("examples/ring-vs-tree/scenario.yaml", sets, 5);
		struct fab_coll_run *r = coll(c);
		assert_int_equal(r->sweep.nrows, 2);
		for (int i = 0; i < 2; i++)
			t[a][i] = r->sweep.rows[i].time_us;
		fab_coll_run_free(r);
		fab_config_free(c);
	}
	print_message("4 KiB: ring %.1f tree %.1f auto %.1f us; 16 MiB: ring %.1f tree %.1f auto %.1f us\n", t[0][0],
		      t[1][0], t[2][0], t[0][1], t[1][1], t[2][1]);
	assert_true(t[1][0] < t[0][0] / 2);
	for (int i = 0; i < 2; i++)
		assert_true(t[2][i] <= 1.05 * FAB_MIN(t[0][i], t[1][i]));
}

/* tree-queues: a tree of 4 MiB on 128 GPUs without congestion control,
 * laid out as NCCL does: both queue models agree with the packet engine
 * (the mean of four seeds: a single one moves by up to 11%). */
static void test_examples_tree_queues(void **state)
{
	(void)state;
	static const char *const engines[3][2] = {{"engine=packet", "flow.queues=fair"},
						  {"engine=flow", "flow.queues=fair"},
						  {"engine=flow", "flow.queues=fifo"}};
	static const char *const seeds[4] = {"run.seed=1", "run.seed=2", "run.seed=3", "run.seed=4"};
	double t[3] = {0, 0, 0};
	for (int e = 0; e < 3; e++)
		for (int k = 0; k < 4; k++) {
			const char *sets[] = {engines[e][0], engines[e][1], seeds[k]};
			struct fab_config *c = load("examples/tree-queues/scenario.yaml", sets, 3);
			struct fab_coll_run *r = coll(c);
			t[e] += r->sweep.rows[0].time_us / 4;
			fab_coll_run_free(r);
			fab_config_free(c);
		}
	print_message("tree 4 MiB, mean of 4 seeds: packet %.1f us, fair %.1f us (%+.1f%%), fifo %.1f us (%+.1f%%)\n",
		      t[0], t[1], (t[1] / t[0] - 1) * 100, t[2], (t[2] / t[0] - 1) * 100);
	assert_true(fabs(t[2] / t[0] - 1) < 0.05);
	assert_true(fabs(t[1] / t[0] - 1) < 0.05);
}

/* oversubscription: a ring that crosses the spine at every server hop
 * loses about half its bus bandwidth at 2:1 (ECMP collisions already cost
 * it at 1:1, by an amount that varies with the seed: 2:1/1:1 is 0.55 to
 * 0.68 over seeds 1 to 6), and at 2:1 it stays under half of what the NICs
 * carry (the uplinks are half the hosts' rate); one that stays in its leaf
 * loses nothing. */
static void test_examples_oversubscription(void **state)
{
	(void)state;
	const char *s[4][2] = {{"topology.oversubscription=1:1", "collective.ring_order=rank"},
			       {"topology.oversubscription=2:1", "collective.ring_order=rank"},
			       {"topology.oversubscription=1:1", "collective.ring_order=topology"},
			       {"topology.oversubscription=2:1", "collective.ring_order=topology"}};
	double bw[4];
	for (int i = 0; i < 4; i++) {
		struct fab_config *c = load("examples/oversubscription/scenario.yaml", s[i], 2);
		struct fab_coll_run *r = coll(c);
		bw[i] = r->sweep.rows[0].busbw_GBps;
		fab_coll_run_free(r);
		fab_config_free(c);
	}
	print_message("busbw GB/s: rank order 1:1 %.1f 2:1 %.1f; leaf-local order 1:1 %.1f 2:1 %.1f\n", bw[0], bw[1],
		      bw[2], bw[3]);
	assert_true(bw[1] / bw[0] >= 0.45 && bw[1] / bw[0] <= 0.75);
	assert_true(bw[1] <= 0.5 * bw[2]);
	assert_true(rel_err(bw[3], bw[2]) <= 0.10);
}

/* overlap: 8 ms compute + 2 ms all-reduce: 20% waiting; overlapped, the
 * wait drops to the last bucket. */
static void test_examples_overlap(void **state)
{
	(void)state;
	double idle[2];
	const char *on[] = {"jobs.0.overlap=true"};
	for (int i = 0; i < 2; i++) {
		struct fab_config *c = load("examples/overlap/scenario.yaml", on, (size_t)i);
		struct fab_run *r = sim(c);
		struct fab_job_stats st;
		assert_true(r->jobs[0].finished);
		fab_job_stats(&r->jobs[0], &st);
		idle[i] = st.idle_fraction;
		fab_run_free(r);
		fab_config_free(c);
	}
	print_message("GPUs wait %.1f%% of the step without overlap, %.1f%% with\n", idle[0] * 100, idle[1] * 100);
	assert_true(idle[0] > 0.19 && idle[0] < 0.21);
	assert_true(idle[1] < idle[0] / 2);
}

/* two-jobs: next to the other tenant, job a's step is at least 20% slower. */
static void test_examples_two_jobs(void **state)
{
	(void)state;
	double mean[2];
	const char *apart[] = {"jobs.1.start=1s"};
	for (int i = 0; i < 2; i++) {
		struct fab_config *c = load("examples/two-jobs/scenario.yaml", apart, (size_t)i);
		struct fab_run *r = sim(c);
		struct fab_job_stats st;
		assert_true(r->jobs[0].finished && r->jobs[1].finished);
		for (uint32_t x = 0; x < 32; x++)
			for (uint32_t y = 0; y < 32; y++)
				assert_int_not_equal(r->jobs[0].gpu[x], r->jobs[1].gpu[y]);
		fab_job_stats(&r->jobs[0], &st);
		mean[i] = st.mean_ps;
		fab_run_free(r);
		fab_config_free(c);
	}
	print_message("job a: %.3f ms next to b, %.3f ms alone\n", mean[0] / 1e9, mean[1] / 1e9);
	assert_true(mean[0] > 1.2 * mean[1]);
}

/* the matrix test of an example, diagnosed (baseline: another document or NULL) */
static json_t *matrix_doc(const char *path, const char *const *sets, size_t n)
{
	struct fab_err err = {0};
	struct fab_config *c = load(path, sets, n);
	struct fab_matrix_run *r = fab_matrix_run_new(c, &err);
	if (!r || fab_matrix_run_exec(r, NULL, NULL, &err))
		fail_msg("%s", err.msg);
	check_conservation(r->run);
	json_t *doc = fab_result_json(c, r->run->sim);
	json_object_set_new(doc, "matrix", fab_matrix_json(&r->m));
	fab_matrix_run_free(r);
	fab_config_free(c);
	return doc;
}

static void diag(json_t *doc, json_t *base, struct fab_diagnosis *d)
{
	struct fab_diag_params p;
	struct fab_err err = {0};
	fab_diag_defaults(&p);
	assert_int_equal(fab_diagnose(&doc, 1, base, &p, d, &err), 0);
}

static double max_latency(json_t *doc)
{
	json_t *lat = json_object_get(json_object_get(doc, "matrix"), "lat_us");
	double mx = 0;
	for (size_t i = 0; i < json_array_size(lat); i++)
		for (size_t j = 0; j < json_array_size(lat); j++)
			mx = FAB_MAX(mx, json_number_value(json_array_get(json_array_get(lat, i), j)));
	return mx;
}

/* loose-cable: the job slows by more than 15%, the aggregate counters stay
 * small, the matrix and diagnose name the two GPUs and their link. */
static void test_examples_loose_cable(void **state)
{
	(void)state;
	const char *path = "examples/loose-cable/scenario.yaml";
	const char *healthy[] = {"faults.0.start=1s"}; /* the cable breaks after the run */
	double mean[2], loss_share = 0;
	for (int i = 0; i < 2; i++) {
		struct fab_config *c = load(path, healthy, (size_t)i);
		struct fab_run *r = sim(c);
		struct fab_job_stats st;
		fab_job_stats(&r->jobs[0], &st);
		mean[i] = st.mean_ps;
		if (i == 0) {
			const struct fab_sim_totals *t = fab_sim_totals(r->sim);
			loss_share = (double)t->wire_losses / (double)t->data_pkts;
		}
		fab_run_free(r);
		fab_config_free(c);
	}
	print_message("step %.3f ms with the loose cable, %.3f ms without (+%.0f%%); %.3f%% of packets lost\n",
		      mean[0] / 1e9, mean[1] / 1e9, (mean[0] / mean[1] - 1) * 100, loss_share * 100);
	assert_true(mean[0] >= 1.15 * mean[1]);
	assert_true(loss_share < 0.005); /* cluster-wide, unremarkable */
	json_t *doc = matrix_doc(path, NULL, 0);
	struct fab_diagnosis d;
	diag(doc, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.s[0].target, "link leaf3 <-> server13.nic1");
	assert_true(suspect_says(&d.s[0], "(GPUs 106, 107)"));
	fab_diagnosis_free(&d);
	json_decref(doc);
}

/* autoneg-downgrade: ports report 400 Gbps, the link moves a quarter. */
static void test_examples_autoneg_downgrade(void **state)
{
	(void)state;
	json_t *doc = matrix_doc("examples/autoneg-downgrade/scenario.yaml", NULL, 0);
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;
	json_array_foreach(ports, i, p)
		assert_int_equal(json_integer_value(json_object_get(p, "rate_bps")), 400000000000LL);
	struct fab_diagnosis d;
	diag(doc, NULL, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "link leaf0 <-> server1.nic3");
	/* a quarter of the bandwidth: 100G of 400G, to within the matrix's noise */
	json_t *bw = json_object_get(json_object_get(doc, "matrix"), "bw_GBps");
	double mx = 0;
	for (size_t j = 0; j < json_array_size(bw); j++)
		if (j != 11)
			mx = FAB_MAX(mx, json_number_value(json_array_get(json_array_get(bw, 11), j)));
	print_message("server1.nic3's best pair: %.2f GB/s (100G line: %.2f GB/s payload)\n", mx,
		      100e9 / 8 * 4096 / 4178 / 1e9);
	assert_true(mx <= 100e9 / 8 * 4096 / 4178 / 1e9 * 1.01);
	fab_diagnosis_free(&d);
	json_decref(doc);
}

/* pfc-storm: no drops, tail latency at least 10x the baseline, the
 * storming NIC named. */
static void test_examples_pfc_storm(void **state)
{
	(void)state;
	const char *path = "examples/pfc-storm/scenario.yaml";
	const char *later[] = {"faults.0.start=1s", "faults.0.end=2s"};
	json_t *storm = matrix_doc(path, NULL, 0), *base = matrix_doc(path, later, 2);
	double drops = json_number_value(json_object_get(json_object_get(storm, "summary"), "drops"));
	print_message("max latency %.1f us in the storm, %.1f us without; drops %.0f\n", max_latency(storm),
		      max_latency(base), drops);
	assert_true(drops == 0);
	assert_true(max_latency(storm) >= 10 * max_latency(base));
	struct fab_diagnosis d;
	diag(storm, base, &d);
	assert_true(d.n >= 1);
	assert_string_equal(d.s[0].target, "NIC server2.nic5 (PFC storm)");
	fab_diagnosis_free(&d);
	diag(base, NULL, &d);
	assert_int_equal(d.n, 0);
	fab_diagnosis_free(&d);
	json_decref(storm);
	json_decref(base);
}

/* ecmp-polarization: idle core links found; per-switch seeds fix it with
 * a strong hash, not with an XOR of the fields. */
static void test_examples_ecmp_polarization(void **state)
{
	(void)state;
	const char *fixed[] = {"fabric.ecmp.same_hash=false", "fabric.ecmp.hash=xor"};
	int found[3];
	for (int i = 0; i < 3; i++) {
		struct fab_config *c = load("examples/ecmp-polarization/scenario.yaml", fixed, (size_t)i);
		struct fab_run *r = sim(c);
		json_t *doc = fab_result_json(c, r->sim);
		struct fab_diagnosis d;
		diag(doc, NULL, &d);
		found[i] = d.n >= 1 && !strcmp(d.s[0].target, "ECMP imbalance at tier 2 uplinks");
		if (i == 1)
			assert_int_equal(d.n, 0);
		fab_diagnosis_free(&d);
		json_decref(doc);
		fab_run_free(r);
		fab_config_free(c);
	}
	assert_true(found[0]);
	assert_true(found[2]);
}

/* rails: rail-aligned rings and PXN keep every byte off the spine;
 * changing rail at each server, or sending from the GPU's own NIC, goes
 * through it and is at least twice as slow. */
static void test_examples_rails(void **state)
{
	(void)state;
	static const char *const sets[4][4] = {
		{"nccl.cross_nic=false", "nccl.pxn=true", "collective.op=allreduce", "collective.algo=ring"},
		{"nccl.cross_nic=true", "nccl.pxn=true", "collective.op=allreduce", "collective.algo=ring"},
		{"collective.max_bytes=64MiB", "collective.min_bytes=64MiB", "collective.op=alltoall",
		 "collective.algo=direct"},
		{"collective.max_bytes=64MiB", "nccl.pxn=false", "collective.op=alltoall", "collective.algo=direct"},
	};
	double t[4], spine[4];
	for (int i = 0; i < 4; i++) {
		const char *x[5] = {sets[i][0], sets[i][1], sets[i][2], sets[i][3], "collective.min_bytes=64MiB"};
		struct fab_config *c = load("examples/rails/scenario.yaml", x, i >= 2 ? 5 : 4);
		struct fab_coll_run *r = coll(c);
		t[i] = r->sweep.rows[0].time_us;
		const struct fab_topo *tp = r->run->topo;
		const struct fab_port_stats *ps = fab_sim_port_stats(r->run->sim);
		double up = 0, nic = 0;
		for (uint32_t p = 0; p < tp->nports; p++) {
			const struct fab_node *a = &tp->nodes[tp->ports[p].node];
			const struct fab_node *b = &tp->nodes[tp->ports[tp->ports[p].peer].node];
			if (a->kind == FAB_NODE_NIC)
				nic += (double)ps[p].tx_bytes;
			else if (b->kind == FAB_NODE_SWITCH && a->tier < b->tier)
				up += (double)ps[p].tx_bytes;
		}
		spine[i] = up / nic;
		fab_coll_run_free(r);
		fab_config_free(c);
	}
	print_message("ring %.1f us (spine %.3f), cross_nic %.1f us (%.3f); alltoall pxn %.1f us (%.3f), "
		      "without %.1f us (%.3f)\n",
		      t[0], spine[0], t[1], spine[1], t[2], spine[2], t[3], spine[3]);
	assert_true(spine[0] == 0 && spine[2] == 0);
	assert_true(spine[1] > 0.9 && spine[3] > 0.8);
	assert_true(t[1] > 2 * t[0] && t[3] > 2 * t[2]);
}

/* dual-tor: a port at a quarter of its speed costs a single-port NIC's
 * ring 4x, a dual-port dual-ToR NIC's 2x (its queue pairs use the other
 * port). */
static void test_examples_dual_tor(void **state)
{
	(void)state;
	static const char *const one[] = {"topology.nic_ports=1",        "topology.dual_tor=false",
					  "topology.host_rate=400Gbps",  "topology.leaves=1",
					  "topology.servers_per_leaf=4", "faults.0.node=server0.nic0",
					  "faults.0.rate=100Gbps",       "faults.0.start=1s"};
	double t[2][2];
	for (int ports = 0; ports < 2; ports++)
		for (int broken = 0; broken < 2; broken++) {
			const char *sets[9];
			size_t n = 0;
			if (!ports)
				for (size_t i = 0; i < 7; i++)
					sets[n++] = one[i];
			if (!broken)
				sets[n++] = one[7];
			struct fab_config *c = load("examples/dual-tor/scenario.yaml", sets, n);
			struct fab_coll_run *r = coll(c);
			t[ports][broken] = r->sweep.rows[0].time_us;
			fab_coll_run_free(r);
			fab_config_free(c);
		}
	print_message("one port: %.1f us, degraded %.1f us; dual ToR: %.1f us, degraded %.1f us\n", t[0][0], t[0][1],
		      t[1][0], t[1][1]);
	assert_true(t[0][1] > 3.5 * t[0][0]);
	assert_true(t[1][1] < 2.2 * t[1][0]);
}

/* two-jobs against the baseline of job a alone: diagnose says which job
 * got slower, and by how much. */
static void test_examples_two_jobs_against_baseline(void **state)
{
	(void)state;
	const char *apart[] = {"jobs.1.start=1s"};
	json_t *docs[2];
	for (int i = 0; i < 2; i++) {
		struct fab_config *c = load("examples/two-jobs/scenario.yaml", apart, (size_t)i);
		struct fab_run *r = sim(c);
		docs[i] = fab_result_json(c, r->sim);
		json_object_set_new(docs[i], "jobs", fab_jobs_json(r->jobs, r->njobs));
		fab_run_free(r);
		fab_config_free(c);
	}
	struct fab_diagnosis d;
	diag(docs[0], docs[1], &d);
	bool named = false;
	for (int i = 0; i < d.n; i++)
		named |= !strcmp(d.s[i].target, "job a slower than the baseline");
	assert_true(named);
	fab_diagnosis_free(&d);
	json_decref(docs[0]);
	json_decref(docs[1]);
}

/* transports: the incast drops nothing on RoCE (PFC pauses), on DCTCP (ECN
 * keeps the queue short) and on InfiniBand (credits, no PAUSE), while CUBIC
 * over lossy Ethernet drops and resends; only TCP costs host CPU; a 1 MiB
 * AllReduce over TCP pays the kernel's latency per message; the 256 MiB one
 * runs faster on InfiniBand and DCTCP than on CUBIC. */
static void test_examples_transports(void **state)
{
	(void)state;
	static const char *const sets[4][2] = {{"fabric.transport=roce", "fabric.tcp.cc=cubic"},
					       {"fabric.transport=tcp", "fabric.tcp.cc=cubic"},
					       {"fabric.transport=tcp", "fabric.tcp.cc=dctcp"},
					       {"fabric.transport=ib", "fabric.tcp.cc=cubic"}};
	struct fab_summary sm[4];
	double cpu[4], small[4], big[4];
	for (int i = 0; i < 4; i++) {
		struct fab_config *c = load("examples/transports/scenario.yaml", sets[i], 2);
		struct fab_run *r = sim(c);
		fab_summary_compute(r->sim, &sm[i]);
		cpu[i] = fab_sim_totals(r->sim)->host_cpu_ps;
		fab_run_free(r);
		struct fab_coll_run *cr = coll(c);
		small[i] = cr->sweep.rows[0].time_us;
		big[i] = cr->sweep.rows[cr->sweep.nrows - 1].time_us;
		fab_coll_run_free(cr);
		fab_config_free(c);
		print_message("%s %s: incast p99 %.1f us, drops %llu, PAUSE %llu; AllReduce 1 MiB %.1f us, 256 MiB "
			      "%.1f us; host CPU %.4f s\n",
			      sets[i][0], sets[i][1], (double)sm[i].fct_p99 / 1e6, (unsigned long long)sm[i].drops,
			      (unsigned long long)sm[i].pause_frames, small[i], big[i], cpu[i] / 1e12);
	}
	assert_int_equal(sm[0].drops, 0);
	assert_true(sm[0].pause_frames > 0);
	assert_true(sm[1].drops > 0 && sm[1].retx_pkts > 0);
	assert_int_equal(sm[2].drops, 0);
	assert_int_equal(sm[3].drops, 0);
	assert_int_equal(sm[3].pause_frames, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(sm[i].flows_done, 16);
	assert_true(cpu[0] == 0 && cpu[3] == 0 && cpu[1] > 0 && cpu[2] > 0);
	assert_true(small[1] > small[0] + 10); /* at least two messages' kernel latency */
	assert_true(big[3] < big[1] && big[2] < big[1]);
}

/* training-scale: a GPT-3-like step on 4,096 GPUs of a planned fabric.
 * Each stage computes compute_ps a step, split over M micro-batches; the
 * 1F1B pipeline of pp stages cannot end in less than (M + pp - 1) slots,
 * and what the step spends beyond its compute is exposed: the step is at
 * least the bubble's bound, and the GPUs idle at least its share. */
static void test_examples_training_scale(void **state)
{
	(void)state;
	struct fab_config *c = load("examples/training-scale/gpt3-4k.yaml", NULL, 0);
	struct fab_run *r = sim(c);
	const struct fab_job *j = &r->jobs[0];
	struct fab_job_stats st;
	assert_true(j->finished);
	fab_job_stats(j, &st);
	double M = j->M, pp = j->pp, compute = (double)j->spec.compute_ps;
	double bound = compute * (M + pp - 1) / M;
	print_message("step %.1f ms, compute %.1f ms, pipeline bound %.1f ms; idle %.1f%% (bubble %.1f%%)\n",
		      st.mean_ps / 1e9, compute / 1e9, bound / 1e9, 100 * st.idle_fraction,
		      100 * (pp - 1) / (M + pp - 1));
	assert_int_equal(j->dp * j->tp * j->pp, 4096);
	assert_true(st.mean_ps >= bound);
	assert_true(st.idle_fraction >= (pp - 1) / (M + pp - 1));
	assert_true(st.mean_ps < 2 * bound); /* the network adds, but does not dominate */
	fab_run_free(r);
	fab_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_ring_vs_tree),
		cmocka_unit_test(test_examples_tree_queues),
		cmocka_unit_test(test_examples_oversubscription),
		cmocka_unit_test(test_examples_overlap),
		cmocka_unit_test(test_examples_two_jobs),
		cmocka_unit_test(test_examples_training_scale),
		cmocka_unit_test(test_examples_loose_cable),
		cmocka_unit_test(test_examples_autoneg_downgrade),
		cmocka_unit_test(test_examples_pfc_storm),
		cmocka_unit_test(test_examples_ecmp_polarization),
		cmocka_unit_test(test_examples_two_jobs_against_baseline),
		cmocka_unit_test(test_examples_rails),
		cmocka_unit_test(test_examples_transports),
		cmocka_unit_test(test_examples_dual_tor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
