/*
 * Training jobs: iteration time against compute plus the collectives
 * measured alone, overlap hiding all but the last bucket, the GPipe bubble,
 * and tensor-parallel all-reduces.
 */
#include "testutil.h"

static struct trun job_run(const char *yaml, const char *const *sets, size_t n)
{
	return trun_yaml_sets(yaml, sets, n);
}

static const struct fab_job *job(const struct trun *t, uint32_t i)
{
	assert_true(i < t->run->njobs);
	assert_true(t->run->jobs[i].finished);
	assert_int_equal(t->run->jobs[i].rc, 0);
	return &t->run->jobs[i];
}

static double iter_ps(const struct fab_job *j, uint32_t k)
{
	return (double)(j->iters[k].end_ps - j->iters[k].start_ps);
}

/* The same all-reduce, alone, through fabscope coll's path. */
static double coll_time_ps(const char *yaml, const char *const *sets, size_t n)
{
	struct crun c = coll_yaml(yaml, sets, n);
	double t = c.r->sweep.rows[0].time_us * 1e6;
	crun_free(&c);
	return t;
}

/* one leaf: no ECMP choice, so the job's collectives and the standalone
 * ones see the same network */
#define ONE_LEAF_4 "topology: {leaves: 1, servers_per_leaf: 4, spines: 1, links_per_spine: 1}\n"

static void test_job_no_overlap_is_compute_plus_comm(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF_4
		"jobs:\n"
		"  - {gpus: 32, iterations: 3, compute: 8ms, gradient_bytes: 256MiB, buckets: 4,\n"
		"     overlap: false}\n";
	struct trun t = job_run(yaml, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	const char *sets[] = {"collective.gpus=32", "collective.min_bytes=64MiB", "collective.max_bytes=64MiB",
			      "collective.iters=4"};
	double comm = 4 * coll_time_ps(ONE_LEAF_4, sets, 4);
	double want = 8e9 + comm;
	print_message("iteration %.1f us = compute 8000 us + 4 all-reduces %.1f us (model %.1f us)\n",
		      iter_ps(j, 0) / 1e6, comm / 1e6, want / 1e6);
	for (uint32_t k = 0; k < j->niters; k++)
		assert_true(rel_err(iter_ps(j, k), want) < 0.01);
	struct fab_job_stats st;
	fab_job_stats(j, &st);
	assert_true(rel_err(st.idle_fraction, comm / want) < 0.01);
	trun_free(&t);
}

static void test_job_overlap_hides_all_but_last_bucket(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF_4
		"jobs:\n"
		"  - {gpus: 32, iterations: 2, compute: 8ms, gradient_bytes: 256MiB, buckets: 4}\n";
	struct trun t = job_run(yaml, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	const char *sets[] = {"collective.gpus=32", "collective.min_bytes=64MiB", "collective.max_bytes=64MiB"};
	double bucket = coll_time_ps(ONE_LEAF_4, sets, 3);
	double exposed = (double)j->iters[1].exposed_ps;
	print_message("exposed %.1f us, one bucket's all-reduce %.1f us\n", exposed / 1e6, bucket / 1e6);
	/* each bucket's all-reduce (340 us) is shorter than a backward quarter
	 * (1.33 ms): only the last one sticks out */
	assert_true(rel_err(exposed, bucket) < 0.02);
	trun_free(&t);
}

static void test_job_pipeline_bubble(void **state)
{
	(void)state;
	/* GPipe: (M + pp - 1) micro-batch slots of C/M each */
	const char *yaml = ONE_LEAF_4 "jobs:\n"
				      "  - {gpus: 4, placement: scatter, pp: 4, microbatches: 8, iterations: 2,\n"
				      "     compute: 8ms, gradient_bytes: 4KiB, pp_bytes: 64KiB}\n";
	struct trun t = job_run(yaml, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	double want = 8e9 * (8 + 4 - 1) / 8;
	print_message("iteration %.1f us, GPipe %.1f us\n", iter_ps(j, 1) / 1e6, want / 1e6);
	assert_int_equal(j->dp, 1);
	assert_int_equal(j->pp, 4);
	/* transfers of 64 KiB add a few microseconds per hop */
	assert_true(iter_ps(j, 1) >= want);
	assert_true(rel_err(iter_ps(j, 1), want) < 0.02);
	trun_free(&t);
}

/* 1F1B has GPipe's bubble: (M + pp - 1) slots of C/M; interleaved over v
 * chunks it shrinks to (pp - 1)/v slots: (M + (pp - 1)/v) x C/M.  A bad
 * combination is refused. */
static void test_job_pipeline_schedules(void **state)
{
	(void)state;
	static const struct {
		const char *sched;
		uint32_t v;
		double slots;
	} cases[] = {{"1f1b", 1, 8 + 3}, {"1f1b", 2, 8 + 1.5}, {"1f1b", 4, 8 + 0.75}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(cases); i++) {
		char yaml[600];
		snprintf(yaml, sizeof yaml,
			 ONE_LEAF_4 "jobs:\n"
				    "  - {gpus: 4, placement: scatter, pp: 4, microbatches: 8, iterations: 2,\n"
				    "     compute: 8ms, gradient_bytes: 4KiB, pp_bytes: 16KiB, schedule: %s,\n"
				    "     virtual_stages: %u}\n",
			 cases[i].sched, cases[i].v);
		struct trun t = job_run(yaml, NULL, 0);
		const struct fab_job *j = job(&t, 0);
		double want = 8e9 * cases[i].slots / 8;
		print_message("%s, %u chunks: iteration %.1f us, closed form %.1f us\n", cases[i].sched, cases[i].v,
			      iter_ps(j, 1) / 1e6, want / 1e6);
		assert_true(iter_ps(j, 1) >= want);
		assert_true(rel_err(iter_ps(j, 1), want) < 0.02);
		trun_free(&t);
	}
	struct fab_err err = {0};
	const char *bad = ONE_LEAF_4 "jobs:\n"
				     "  - {gpus: 4, pp: 4, microbatches: 6, schedule: 1f1b, virtual_stages: 2}\n";
	struct fab_config *c = fab_config_parse(bad, strlen(bad), "t.yaml", NULL, NULL, 0, &err);
	assert_non_null(c);
	struct fab_run *r = fab_run_new(c, &err);
	assert_null(r);
	assert_non_null(strstr(err.msg, "virtual_stages"));
	fab_config_free(c);
}

/* A model's volumes against the arithmetic done by hand: GPT-3 175B
 * (96 layers, h 12288, 2048 tokens, vocabulary 50257) on 1,024 GPUs, tp 8
 * x pp 8 x dp 16, 1,536 sequences; Llama-2-70B's shape (80 layers, h 8192,
 * SwiGLU MLP of 28672, 64 heads and 8 KV heads, vocabulary 32000). */
static void test_job_model_volumes(void **state)
{
	(void)state;
	struct fab_model_spec m = {.layers = 96,
				   .hidden = 12288,
				   .vocab = 50257,
				   .seq_len = 2048,
				   .micro_batch = 1,
				   .global_batch = 1536,
				   .precision = FAB_PREC_BF16,
				   .grad_precision = FAB_PREC_FP32,
				   .gpu_tflops = 989,
				   .efficiency = 0.5};
	struct fab_model_volumes v;
	struct fab_err err = {0};
	assert_int_equal(fab_model_volumes(&m, 16, 8, 8, 1, &v, &err), 0);
	double h = 12288, P = 96 * 12 * h * h + 50257 * h; /* 12 h^2 a layer: attention 4, MLP 8 */
	print_message("GPT-3: %.4g parameters, %.4g FLOP/iteration, compute %.3f ms, gradient %llu B\n", v.params,
		      v.flops, (double)v.compute_ps / 1e9, (unsigned long long)v.grad_bytes);
	assert_true(rel_err(v.params, P) < 1e-12);
	assert_true(v.params > 174.5e9 && v.params < 175.5e9);
	double tokens = 1536.0 * 2048, flops = (6 * P + 12 * 96 * 2048 * h) * tokens;
	assert_true(rel_err(v.flops, flops) < 1e-12);
	assert_true(rel_err((double)v.compute_ps, flops / 1024 / (989e12 * 0.5) * 1e12) < 1e-9);
	assert_int_equal(v.microbatches, 96);                         /* 1536 / (1 x 16) */
	assert_int_equal(v.grad_bytes, (uint64_t)(P / 64 * 4 + 0.5)); /* fp32, a 64th of the weights */
	assert_int_equal(v.tp_bytes, 2048ull * 12288 * 2);            /* b s h in bf16 */
	assert_int_equal(v.tp_collectives, 4 * 96 / 8);               /* 2 forward + 2 backward per layer */
	assert_int_equal(v.pp_bytes, 2048ull * 12288 * 2 / 8);
	assert_int_equal(v.a2a_bytes, 0);
	struct fab_model_spec l = {.layers = 80,
				   .hidden = 8192,
				   .ffn_hidden = 28672,
				   .gated_mlp = true,
				   .heads = 64,
				   .kv_heads = 8,
				   .vocab = 32000,
				   .seq_len = 4096,
				   .micro_batch = 1,
				   .global_batch = 1024,
				   .gpu_tflops = 989,
				   .efficiency = 0.5};
	assert_int_equal(fab_model_volumes(&l, 32, 8, 4, 1, &v, &err), 0);
	double hl = 8192, Pl = 80 * ((2 + 2.0 / 8) * hl * hl + 3 * hl * 28672) + 32000 * hl;
	print_message("Llama-2-70B shape: %.4g parameters\n", v.params);
	assert_true(rel_err(v.params, Pl) < 1e-12);
	assert_true(v.params > 68.5e9 && v.params < 69.1e9);
	/* mixture of experts: 8 experts, top 2: all experts' weights, two active */
	struct fab_model_spec e = m;
	e.experts = 8;
	e.top_k = 2;
	e.global_batch = 0;
	assert_int_equal(fab_model_volumes(&e, 16, 8, 8, 4, &v, &err), 0);
	double mlp = 8 * h * h;
	assert_true(rel_err(v.params, P + 96 * 7 * mlp) < 1e-12);
	assert_true(rel_err(v.active_params, P + 96 * mlp) < 1e-12);
	/* expert parallelism 8 (the experts, dividing dp 16): the dense part is
	 * reduced over dp, each expert over the 2 replicas that hold it */
	assert_int_equal(v.ep, 8);
	assert_int_equal(v.grad_bytes, (uint64_t)((P - 96 * mlp) / 64 * 4 + 0.5));
	assert_int_equal(v.expert_grad_bytes, (uint64_t)(96 * 8 * mlp / 8 / 64 * 4 + 0.5));
	assert_int_equal(v.a2a_bytes, 2048ull * 12288 * 2 * 2 / 8); /* top 2, a tp share */
	assert_int_equal(v.microbatches, 4);
	/* ep = dp = experts: each expert's gradients are one replica's */
	assert_int_equal(fab_model_volumes(&e, 8, 8, 8, 4, &v, &err), 0);
	assert_int_equal(v.ep, 8);
	assert_int_equal(v.expert_grad_bytes, 0);
	/* ep 1: every replica holds every expert, all reduced over dp, no all-to-all */
	e.ep = 1;
	assert_int_equal(fab_model_volumes(&e, 16, 8, 8, 4, &v, &err), 0);
	assert_int_equal(v.grad_bytes, (uint64_t)((P + 96 * 7 * mlp) / 64 * 4 + 0.5));
	assert_int_equal(v.expert_grad_bytes, 0);
	assert_int_equal(v.a2a_collectives, 0);
	/* auto with 6 experts over dp 16: the largest divisor of 16 up to 6 */
	e.ep = 0;
	e.experts = 6;
	assert_int_equal(fab_model_volumes(&e, 16, 8, 8, 4, &v, &err), 0);
	assert_int_equal(v.ep, 4);
	/* an ep that does not divide dp, or above the experts, is refused */
	e.ep = 3;
	assert_int_not_equal(fab_model_volumes(&e, 16, 8, 8, 4, &v, &err), 0);
	assert_non_null(strstr(err.msg, "model.ep"));
	e.ep = 8;
	assert_int_not_equal(fab_model_volumes(&e, 16, 8, 8, 4, &v, &err), 0);
	assert_non_null(strstr(err.msg, "more than the experts"));
	/* what does not divide is refused, naming the key */
	m.global_batch = 1000;
	assert_int_not_equal(fab_model_volumes(&m, 16, 8, 8, 1, &v, &err), 0);
	assert_non_null(strstr(err.msg, "model.global_batch"));
	m.global_batch = 1536;
	assert_int_not_equal(fab_model_volumes(&m, 16, 8, 5, 1, &v, &err), 0);
	assert_non_null(strstr(err.msg, "model.layers"));
}

/* A model job without overlap: its step is the model's compute plus the
 * gradient all-reduce measured alone (16 GPUs, data parallel only); a MoE
 * job adds its all-to-alls, each measured alone, one after another. */
static void test_job_model_step(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF_4 "jobs:\n"
				      "  - {gpus: 16, iterations: 2, buckets: 1, overlap: false,\n"
				      "     model: {layers: 4, hidden: 2048, seq_len: 1024, micro_batch: 2,\n"
				      "             global_batch: 32}}\n";
	struct trun t = job_run(yaml, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	assert_true(j->has_model);
	char gb[64], gbx[64];
	snprintf(gb, sizeof gb, "collective.min_bytes=%llu", (unsigned long long)(j->vol.grad_bytes / 4 * 4));
	snprintf(gbx, sizeof gbx, "collective.max_bytes=%llu", (unsigned long long)(j->vol.grad_bytes / 4 * 4));
	const char *sets[] = {"collective.gpus=16", gb, gbx, "collective.iters=2"};
	double comm = coll_time_ps(ONE_LEAF_4, sets, 4);
	double want = (double)j->vol.compute_ps + comm;
	print_message("model step %.1f us = compute %.1f us + all-reduce %.1f us\n", iter_ps(j, 1) / 1e6,
		      (double)j->vol.compute_ps / 1e6, comm / 1e6);
	assert_int_equal(j->M, 1);
	assert_true(rel_err(iter_ps(j, 1), want) < 0.01);
	trun_free(&t);
	/* 8 experts on 8 single-GPU servers: 4 layers x 4 all-to-alls per micro-batch */
	const char *moe = "topology: {leaves: 1, servers_per_leaf: 8, gpus_per_server: 1, nics_per_server: 1,\n"
			  "           spines: 1, links_per_spine: 1}\n"
			  "jobs:\n"
			  "  - {gpus: 8, iterations: 2, buckets: 1, overlap: false,\n"
			  "     model: {layers: 4, hidden: 2048, seq_len: 1024, micro_batch: 1, global_batch: 16,\n"
			  "             experts: 8, top_k: 2}}\n";
	const char *moe_topo = "topology: {leaves: 1, servers_per_leaf: 8, gpus_per_server: 1, nics_per_server: 1,\n"
			       "           spines: 1, links_per_spine: 1}\n";
	t = job_run(moe, NULL, 0);
	j = job(&t, 0);
	assert_int_equal(j->vol.a2a_collectives, 16);
	assert_int_equal(j->M, 2);
	char ab[64], abx[64], gb2[64], gb2x[64];
	unsigned long long a2a_b = j->vol.a2a_bytes / 4 / 8 * 32, ar_b = j->vol.grad_bytes / 4 * 4;
	snprintf(ab, sizeof ab, "collective.min_bytes=%llu", a2a_b);
	snprintf(abx, sizeof abx, "collective.max_bytes=%llu", a2a_b);
	snprintf(gb2, sizeof gb2, "collective.min_bytes=%llu", ar_b);
	snprintf(gb2x, sizeof gb2x, "collective.max_bytes=%llu", ar_b);
	const char *a2a[] = {"collective.op=alltoall", ab, abx, "collective.iters=4"};
	const char *ar[] = {gb2, gb2x, "collective.iters=2"};
	double t_a2a = coll_time_ps(moe_topo, a2a, 4), t_ar = coll_time_ps(moe_topo, ar, 3);
	want = (double)j->vol.compute_ps + 2 * 16 * t_a2a + t_ar;
	print_message("MoE step %.1f us = compute %.1f us + 32 all-to-alls of %.1f us + all-reduce %.1f us\n",
		      iter_ps(j, 1) / 1e6, (double)j->vol.compute_ps / 1e6, t_a2a / 1e6, t_ar / 1e6);
	assert_true(rel_err(iter_ps(j, 1), want) < 0.02);
	trun_free(&t);
}

/* 4 experts over 16 replicas: four expert-parallel groups of 4 exchange
 * tokens apart (a leaf's switch: they do not meet), then the dense
 * gradients are all-reduced over 16 and each expert's over its 4 holders,
 * the two at once on the same NICs: the step lies between their longer
 * and their sum. */
static void test_job_expert_parallel_groups(void **state)
{
	(void)state;
	const char *moe = "topology: {leaves: 1, servers_per_leaf: 16, gpus_per_server: 1, nics_per_server: 1,\n"
			  "           spines: 1, links_per_spine: 1}\n"
			  "jobs:\n"
			  "  - {gpus: 16, iterations: 2, buckets: 1, overlap: false,\n"
			  "     model: {layers: 2, hidden: 2048, seq_len: 1024, micro_batch: 1, global_batch: 16,\n"
			  "             experts: 4, top_k: 1}}\n";
	const char *four = "topology: {leaves: 1, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 1, links_per_spine: 1}\n";
	const char *sixteen = "topology: {leaves: 1, servers_per_leaf: 16, gpus_per_server: 1, nics_per_server: 1,\n"
			      "           spines: 1, links_per_spine: 1}\n";
	struct trun t = job_run(moe, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	assert_int_equal(j->vol.ep, 4);
	assert_int_equal(j->M, 1);
	assert_int_equal(j->vol.a2a_collectives, 8);
	assert_true(j->vol.expert_grad_bytes > 0);
	assert_string_equal(j->ep_comm[3].name, "job0.ep0.3.0");
	assert_int_equal(j->ep_comm[3].nranks, 4);
	assert_int_equal(j->edp_comm[1].nranks, 4);
	char a[3][2][64];
	unsigned long long b[3] = {j->vol.a2a_bytes / 4 / 4 * 16, j->vol.grad_bytes / 4 * 4,
				   j->vol.expert_grad_bytes / 4 * 4};
	for (int k = 0; k < 3; k++) {
		snprintf(a[k][0], sizeof a[k][0], "collective.min_bytes=%llu", b[k]);
		snprintf(a[k][1], sizeof a[k][1], "collective.max_bytes=%llu", b[k]);
	}
	const char *a2a[] = {"collective.op=alltoall", a[0][0], a[0][1], "collective.iters=4"};
	const char *ar[] = {a[1][0], a[1][1], "collective.iters=2"};
	const char *edp[] = {a[2][0], a[2][1], "collective.iters=2"};
	double t_a2a = coll_time_ps(four, a2a, 4), t_ar = coll_time_ps(sixteen, ar, 3),
	       t_edp = coll_time_ps(four, edp, 3), base = (double)j->vol.compute_ps + 8 * t_a2a;
	print_message("step %.1f us: compute %.1f us + 8 all-to-alls of %.1f us + all-reduces %.1f us (dense) and "
		      "%.1f us (experts)\n",
		      iter_ps(j, 1) / 1e6, (double)j->vol.compute_ps / 1e6, t_a2a / 1e6, t_ar / 1e6, t_edp / 1e6);
	assert_true(iter_ps(j, 1) > 0.98 * (base + FAB_MAX(t_ar, t_edp)));
	assert_true(iter_ps(j, 1) < 1.02 * (base + t_ar + t_edp));
	trun_free(&t);
}

static void test_job_tensor_parallel_allreduces_block(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF_4
		"jobs:\n"
		"  - {gpus: 8, tp: 8, tp_bytes: 16MiB, tp_collectives: 4, iterations: 2, compute: 4ms,\n"
		"     gradient_bytes: 4KiB}\n";
	struct trun t = job_run(yaml, NULL, 0);
	const struct fab_job *j = job(&t, 0);
	const char *sets[] = {"collective.gpus=8", "collective.min_bytes=16MiB", "collective.max_bytes=16MiB"};
	double tp = coll_time_ps(ONE_LEAF_4, sets, 3);
	/* 4 blocking NVLink all-reduces; the data-parallel group is one GPU */
	double want = 4e9 + 4 * tp;
	print_message("iteration %.1f us, compute + 4 x %.1f us = %.1f us\n", iter_ps(j, 1) / 1e6, tp / 1e6,
		      want / 1e6);
	assert_int_equal(j->tp, 8);
	assert_true(rel_err(iter_ps(j, 1), want) < 0.01);
	trun_free(&t);
}

/* A job run with its in-server collectives replayed (`replay`, the
 * default) and run every time: the same iterations to the picosecond on
 * both engines, with fewer events where the tensor-parallel groups own
 * their servers' NVLink; where something else sends over it (two groups'
 * data-parallel ranks in one server, pipeline stages in one server),
 * nothing is replayed: the same events. */
static uint64_t replay_case(const char *yaml, const char *engine, bool *same_iters)
{
	char e[32];
	snprintf(e, sizeof e, "engine=%s", engine);
	const char *on[] = {e, "jobs.0.replay=true"}, *off[] = {e, "jobs.0.replay=false"};
	struct trun a = job_run(yaml, on, 2), b = job_run(yaml, off, 2);
	const struct fab_job *ja = job(&a, 0), *jb = job(&b, 0);
	*same_iters = ja->niters == jb->niters && ja->niters > 0;
	for (uint32_t k = 0; *same_iters && k < ja->niters; k++)
		*same_iters = ja->iters[k].start_ps == jb->iters[k].start_ps &&
			ja->iters[k].end_ps == jb->iters[k].end_ps;
	uint64_t ea = fab_sim_totals(a.run->sim)->events, eb = fab_sim_totals(b.run->sim)->events;
	print_message("%s: %llu events replayed, %llu run, iteration %.3f us\n", engine, (unsigned long long)ea,
		      (unsigned long long)eb, iter_ps(ja, ja->niters - 1) / 1e6);
	assert_true(ea <= eb);
	trun_free(&a);
	trun_free(&b);
	return eb - ea;
}

static void test_job_replay_same_times(void **state)
{
	(void)state;
	const char *own = ONE_LEAF_4
		"jobs:\n"
		"  - {gpus: 32, tp: 8, pp: 2, tp_bytes: 4MiB, tp_collectives: 4, microbatches: 4, pp_bytes: 1MiB,\n"
		"     schedule: 1f1b, iterations: 2, compute: 2ms, gradient_bytes: 8MiB}\n";
	/* tp 4: each server holds two ranks of every data-parallel group */
	const char *dp_inside = ONE_LEAF_4
		"jobs:\n"
		"  - {gpus: 32, tp: 4, tp_bytes: 4MiB, tp_collectives: 4, iterations: 2, compute: 2ms,\n"
		"     gradient_bytes: 8MiB}\n";
	/* tp 4 x pp 2, one replica: a server holds both stages (no NVLink
	 * SHARP, which the one-GPU data-parallel groups would run) */
	const char *pp_inside =
		"topology: {leaves: 1, servers_per_leaf: 4, spines: 1, links_per_spine: 1, nvls: false}\n"
		"jobs:\n"
		"  - {gpus: 8, tp: 4, pp: 2, tp_bytes: 4MiB, tp_collectives: 4, microbatches: 4, pp_bytes: 1MiB,\n"
		"     iterations: 2, compute: 2ms, gradient_bytes: 8MiB, placement: packed}\n";
	static const char *const engines[] = {"packet", "flow"};
	for (int i = 0; i < 2; i++) {
		bool same;
		/* 8 tensor-parallel groups x 16 all-reduces (4 a forward pass, 4
		 * micro-batches) x 2 iterations, less the first of each group */
		assert_true(replay_case(own, engines[i], &same) > 0);
		assert_true(same);
		assert_int_equal(replay_case(dp_inside, engines[i], &same), 0);
		assert_true(same);
		assert_int_equal(replay_case(pp_inside, engines[i], &same), 0);
		assert_true(same);
	}
}

/* The result document as the CLI writes it (FAB_OUT_JSON: the long tables
 * written row by row) is, byte for byte, the document built whole and
 * dumped by jansson: jobs, time series, flows cut off by run.end (their
 * finish null) and finished ones. */
static void test_job_document_written_whole(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF_4
		"fabric: {series_interval: 10us}\n"
		"run: {end: 300us}\n"
		"traffic:\n"
		"  flows:\n"
		"    - {src: 0, dst: 8, bytes: 64KiB}\n"
		"    - {src: 1, dst: 9, bytes: 1GiB}\n"
		"jobs:\n"
		"  - {gpus: 16, iterations: 2, compute: 50us, gradient_bytes: 4MiB, buckets: 2}\n";
	struct trun t = job_run(yaml, NULL, 0);
	json_t *doc = fab_run_json(t.run);
	char *want = json_dumps(doc, JSON_INDENT(2));
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);
	assert_non_null(f);
	assert_int_equal(fab_run_write(f, t.run, FAB_OUT_JSON), 0);
	assert_int_equal(fclose(f), 0);
	/* what makes the case: both kinds of flow, rows of both series */
	json_t *flows = json_object_get(doc, "flows");
	assert_true(json_array_size(flows) >= 2);
	assert_true(json_is_null(json_object_get(json_array_get(flows, 1), "finish_ps")));
	assert_true(json_is_integer(json_object_get(json_array_get(flows, 0), "finish_ps")));
	assert_true(json_array_size(json_object_get(doc, "series")) > 0);
	assert_true(json_array_size(json_object_get(doc, "flow_series")) > 0);
	assert_non_null(json_object_get(doc, "jobs"));
	assert_int_equal(len, strlen(want));
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(doc);
	trun_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_no_overlap_is_compute_plus_comm),
		cmocka_unit_test(test_job_overlap_hides_all_but_last_bucket),
		cmocka_unit_test(test_job_pipeline_bubble),
		cmocka_unit_test(test_job_pipeline_schedules),
		cmocka_unit_test(test_job_tensor_parallel_allreduces_block),
		cmocka_unit_test(test_job_replay_same_times),
		cmocka_unit_test(test_job_model_volumes),
		cmocka_unit_test(test_job_model_step),
		cmocka_unit_test(test_job_expert_parallel_groups),
		cmocka_unit_test(test_job_document_written_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
