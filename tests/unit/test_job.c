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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_no_overlap_is_compute_plus_comm),
		cmocka_unit_test(test_job_overlap_hides_all_but_last_bucket),
		cmocka_unit_test(test_job_pipeline_bubble),
		cmocka_unit_test(test_job_tensor_parallel_allreduces_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
