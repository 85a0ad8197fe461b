/*
 * Every examples/<lesson>/ scenario runs here and its README's claim is
 * checked on the result.
 */
#include "testutil.h"

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

/* ring-vs-tree: the tree wins small messages, the ring large ones, and
 * auto is never worse than the better of the two. */
static void test_examples_ring_vs_tree(void **state)
{
	(void)state;
	const char *algos[3] = {"collective.algo=ring", "collective.algo=tree", "collective.algo=auto"};
	double t[3][2];
	for (int a = 0; a < 3; a++) {
		const char *sets[] = {"collective.gpus=64", "collective.min_bytes=4KiB",
				      "collective.max_bytes=16MiB", "collective.step_bytes=16380KiB", algos[a]};
		struct fab_config *c = load("examples/ring-vs-tree/scenario.yaml", sets, 5);
		struct fab_coll_run *r = coll(c);
		assert_int_equal(r->sweep.nrows, 2);
		for (int i = 0; i < 2; i++)
			t[a][i] = r->sweep.rows[i].time_us;
		fab_coll_run_free(r);
		fab_config_free(c);
	}
	print_message("4 KiB: ring %.1f tree %.1f auto %.1f us; 16 MiB: ring %.1f tree %.1f auto %.1f us\n",
		      t[0][0], t[1][0], t[2][0], t[0][1], t[1][1], t[2][1]);
	assert_true(t[1][0] < t[0][0]);
	assert_true(t[0][1] < t[1][1]);
	for (int i = 0; i < 2; i++)
		assert_true(t[2][i] <= 1.05 * FAB_MIN(t[0][i], t[1][i]));
}

/* oversubscription: a ring that crosses the spine at every server hop
 * loses half its bus bandwidth at 2:1; one that stays in its leaf does not. */
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
	print_message("busbw GB/s: rank order 1:1 %.1f 2:1 %.1f; leaf-local order 1:1 %.1f 2:1 %.1f\n",
		      bw[0], bw[1], bw[2], bw[3]);
	assert_true(rel_err(bw[1] / bw[0], 0.5) <= 0.15);
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
	print_message("GPUs wait %.1f%% of the step without overlap, %.1f%% with\n", idle[0] * 100,
		      idle[1] * 100);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_ring_vs_tree),
		cmocka_unit_test(test_examples_oversubscription),
		cmocka_unit_test(test_examples_overlap),
		cmocka_unit_test(test_examples_two_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
