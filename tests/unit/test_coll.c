/* Collective schedules, executed on real buffers: every operation and
 * algorithm, rank counts 1..64, sizes that do not divide evenly. */
#include "testutil.h"
#include "../../src/coll/coll.h"

static int check_one(int op, int algo, uint32_t n, uint64_t count, uint32_t channels, uint64_t chunk, uint32_t rpn,
		     const uint32_t *order, uint32_t root)
{
	struct fab_coll_args a = {.op = op,
				  .algo = algo,
				  .nranks = n,
				  .count = count,
				  .elem_bytes = 4,
				  .root = root,
				  .channels = channels,
				  .chunk_bytes = chunk,
				  .ranks_per_node = rpn,
				  .order = order};
	struct fab_sched s;
	struct fab_err err = {0};
	if (fab_coll_build(&a, &s, &err))
		fail_msg("build: %s", err.msg);
	int rc = fab_coll_check(&a, &s, n * 1000 + count, &err);
	if (rc)
		fail_msg("%s", err.msg);
	fab_sched_free(&s);
	return rc;
}

struct combo {
	int op, algo;
};

static const struct combo combos[] = {
	{FAB_OP_ALLREDUCE, FAB_ALGO_RING}, {FAB_OP_ALLREDUCE, FAB_ALGO_TREE},     {FAB_OP_ALLREDUCE, FAB_ALGO_HIER},
	{FAB_OP_ALLREDUCE, FAB_ALGO_RHD},  {FAB_OP_REDUCESCATTER, FAB_ALGO_RING}, {FAB_OP_ALLGATHER, FAB_ALGO_RING},
	{FAB_OP_BROADCAST, FAB_ALGO_RING}, {FAB_OP_BROADCAST, FAB_ALGO_TREE},     {FAB_OP_REDUCE, FAB_ALGO_RING},
	{FAB_OP_REDUCE, FAB_ALGO_TREE},    {FAB_OP_ALLTOALL, FAB_ALGO_DIRECT},    {FAB_OP_SENDRECV, FAB_ALGO_DIRECT},
};

static void test_coll_every_op_algo_and_rank_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < FAB_ARRAY_LEN(combos); i++)
		for (uint32_t n = 1; n <= 64; n++) {
			/* a size that divides by nothing in particular, per rank */
			uint64_t per = 3 * n + 7;
			bool block = combos[i].op == FAB_OP_ALLGATHER || combos[i].op == FAB_OP_REDUCESCATTER ||
				combos[i].op == FAB_OP_ALLTOALL;
			uint64_t count = block ? per * n : per;
			uint32_t rpn = combos[i].algo == FAB_ALGO_HIER ? (n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1) : 0;
			check_one(combos[i].op, combos[i].algo, n, count, 2, 16, rpn, NULL, n / 3);
		}
}

static void test_coll_tiny_and_odd_sizes(void **state)
{
	(void)state;
	/* fewer elements than ranks, channels or slices: empty parts are skipped */
	const uint64_t sizes[] = {1, 2, 5, 13, 1000, 4099};
	const uint32_t ranks[] = {1, 2, 3, 5, 8, 13, 16, 31};
	for (size_t i = 0; i < FAB_ARRAY_LEN(combos); i++)
		for (size_t k = 0; k < FAB_ARRAY_LEN(ranks); k++)
			for (size_t z = 0; z < FAB_ARRAY_LEN(sizes); z++) {
				uint32_t n = ranks[k];
				bool block = combos[i].op == FAB_OP_ALLGATHER || combos[i].op == FAB_OP_REDUCESCATTER ||
					combos[i].op == FAB_OP_ALLTOALL;
				uint64_t count = block ? sizes[z] * n : sizes[z];
				uint32_t rpn = combos[i].algo == FAB_ALGO_HIER ? 1 : 0;
				if (combos[i].algo == FAB_ALGO_HIER && n % 4 == 0)
					rpn = 4;
				check_one(combos[i].op, combos[i].algo, n, count, 3, 64, rpn, NULL, n - 1);
			}
}

static void test_coll_custom_ring_order(void **state)
{
	(void)state;
	uint32_t order[12] = {5, 0, 11, 3, 8, 1, 10, 7, 2, 9, 4, 6};
	for (size_t i = 0; i < FAB_ARRAY_LEN(combos); i++) {
		if (combos[i].algo == FAB_ALGO_HIER)
			continue;
		bool block = combos[i].op == FAB_OP_ALLGATHER || combos[i].op == FAB_OP_REDUCESCATTER ||
			combos[i].op == FAB_OP_ALLTOALL;
		check_one(combos[i].op, combos[i].algo, 12, block ? 12 * 101 : 101, 2, 32, 0, order, 7);
	}
}

/* Each channel its own ring order (rotated inside each server of 4). */
static void test_coll_per_channel_ring_orders(void **state)
{
	(void)state;
	enum { N = 16, C = 4 };
	uint32_t orders[C][N];
	const uint32_t *co[C];
	for (uint32_t c = 0; c < C; c++) {
		for (uint32_t p = 0; p < N; p++)
			orders[c][p] = (p / 4) * 4 + (p % 4 + c + 1) % 4;
		co[c] = orders[c];
	}
	const int ops[] = {FAB_OP_ALLREDUCE, FAB_OP_REDUCESCATTER, FAB_OP_ALLGATHER};
	for (size_t i = 0; i < FAB_ARRAY_LEN(ops); i++) {
		bool block = ops[i] != FAB_OP_ALLREDUCE;
		struct fab_coll_args a = {.op = ops[i],
					  .algo = FAB_ALGO_RING,
					  .nranks = N,
					  .count = block ? N * 37 : 1001,
					  .elem_bytes = 4,
					  .channels = C,
					  .chunk_bytes = 24,
					  .chan_order = co};
		struct fab_sched s;
		struct fab_err err = {0};
		assert_int_equal(fab_coll_build(&a, &s, &err), 0);
		if (fab_coll_check(&a, &s, 3, &err))
			fail_msg("%s", err.msg);
		fab_sched_free(&s);
	}
}

/* Trees as NCCL lays them out: a chain through each server, a double
 * binary tree over servers between the chains' heads.  Checked on real
 * buffers for every server count 1..12 and the ops that use trees, and
 * for their shape: every rank but the top has a parent, servers talk only
 * head to head, depth is at most ceil(log2 N) + 1 servers plus the chain,
 * and a server inner in one tree is a leaf in the other (all but server 0
 * when N is odd: NCCL's shifted mirror keeps one node inner in both). */
static void test_coll_trees_over_servers(void **state)
{
	(void)state;
	enum { G = 4, C = 2, MAXN = 12 * G };
	uint32_t orders[C][MAXN], parent[MAXN], kids[MAXN][3], td[MAXN];
	const uint32_t *co[C];
	for (uint32_t N = 1; N <= 12; N++) {
		uint32_t n = N * G;
		for (uint32_t c = 0; c < C; c++) {
			for (uint32_t p = 0; p < n; p++) /* servers in reverse, chains rotated per channel */
				orders[c][p] = (N - 1 - p / G) * G + (p % G + c + 1) % G;
			co[c] = orders[c];
		}
		bool inner[2][12] = {{false}};
		for (uint32_t t = 0; t < 2; t++) {
			fab_coll_tree(n, co[0], G, t, UINT32_MAX, parent, kids, td);
			uint32_t tops = 0;
			for (uint32_t r = 0; r < n; r++) {
				if (parent[r] == UINT32_MAX) {
					tops++;
					continue;
				}
				uint32_t ps = parent[r] / G, rs = r / G;
				if (ps != rs) {
					/* between servers: head to head (each server's first rank in the order) */
					assert_int_equal(r, co[0][(N - 1 - rs) * G]);
					assert_int_equal(parent[r], co[0][(N - 1 - ps) * G]);
					inner[t][N - 1 - ps] = true;
				}
				uint32_t d = 0;
				for (uint32_t x = r; parent[x] != UINT32_MAX; x = parent[x])
					d++;
				uint32_t lg = 0;
				while ((1u << lg) < N)
					lg++;
				assert_true(d <= lg + 1 + G - 1);
			}
			assert_int_equal(tops, 1);
			/* the top: tree 0's is the first server's head, tree 1's the last's (N even) or the second's */
			assert_int_equal(td[0], co[0][(t == 0 ? 0 : N % 2 ? 1 % N : N - 1) * G]);
		}
		for (uint32_t v = N % 2; v < N && N > 1; v++)
			assert_false(inner[0][v] && inner[1][v]);
		const int ops[] = {FAB_OP_ALLREDUCE, FAB_OP_BROADCAST, FAB_OP_REDUCE};
		for (size_t i = 0; i < FAB_ARRAY_LEN(ops); i++) {
			struct fab_coll_args a = {.op = ops[i],
						  .algo = FAB_ALGO_TREE,
						  .nranks = n,
						  .count = 1001,
						  .elem_bytes = 4,
						  .root = n / 3 + 1,
						  .channels = C,
						  .chunk_bytes = 96,
						  .chan_order = co,
						  .tree_group = G};
			struct fab_sched s;
			struct fab_err err = {0};
			assert_int_equal(fab_coll_build(&a, &s, &err), 0);
			if (fab_coll_check(&a, &s, N, &err))
				fail_msg("N=%u op %d: %s", N, ops[i], err.msg);
			/* between servers only heads talk: sends leaving a server per channel and tree */
			for (uint32_t k = 0; k < s.nsteps; k++) {
				const struct fab_step *st = &s.steps[k];
				if (st->kind == FAB_STEP_SEND && st->rank / G != st->peer / G) {
					const uint32_t *o = co[st->channel % C];
					bool head = false;
					for (uint32_t v = 0; v < N; v++)
						head |= o[v * G] == st->rank ||
							(ops[i] != FAB_OP_ALLREDUCE && st->rank == a.root);
					assert_true(head);
				}
			}
			fab_sched_free(&s);
		}
	}
}

static void test_coll_unsupported_is_refused(void **state)
{
	(void)state;
	struct fab_coll_args a = {
		.op = FAB_OP_ALLTOALL, .algo = FAB_ALGO_RING, .nranks = 4, .count = 64, .elem_bytes = 4, .channels = 1};
	struct fab_sched s;
	struct fab_err err = {0};
	assert_int_equal(fab_coll_build(&a, &s, &err), FAB_EINVAL);
	assert_non_null(strstr(err.msg, "algorithm ring does not implement AllToAll"));
	a.op = FAB_OP_ALLREDUCE;
	a.algo = FAB_ALGO_HIER;
	a.ranks_per_node = 3;
	assert_int_equal(fab_coll_build(&a, &s, &err), FAB_EINVAL);
	assert_non_null(strstr(err.msg, "whole servers"));
}

/* A schedule with a dependency removed must be caught by the checker. */
static void test_coll_checker_catches_missing_dependency(void **state)
{
	(void)state;
	struct fab_coll_args a = {.op = FAB_OP_ALLREDUCE,
				  .algo = FAB_ALGO_RING,
				  .nranks = 6,
				  .count = 600,
				  .elem_bytes = 4,
				  .channels = 1};
	struct fab_sched s;
	struct fab_err err = {0};
	assert_int_equal(fab_coll_build(&a, &s, &err), 0);
	/* drop every dependency of every send: data leaves before it is reduced */
	for (uint32_t i = 0; i < s.nsteps; i++)
		if (s.steps[i].kind == FAB_STEP_SEND)
			s.steps[i].ndeps = 0;
	int caught = 0;
	for (uint64_t seed = 1; seed <= 5; seed++)
		caught += fab_coll_check(&a, &s, seed, &err) != 0;
	assert_true(caught >= 4);
	fab_sched_free(&s);
}

static void test_coll_busbw_factors(void **state)
{
	(void)state;
	/* nccl-tests: 8 ranks */
	assert_true(fab_coll_busbw_factor(FAB_OP_ALLREDUCE, 8) == 1.75);
	assert_true(fab_coll_busbw_factor(FAB_OP_REDUCESCATTER, 8) == 0.875);
	assert_true(fab_coll_busbw_factor(FAB_OP_ALLGATHER, 8) == 0.875);
	assert_true(fab_coll_busbw_factor(FAB_OP_ALLTOALL, 8) == 0.875);
	assert_true(fab_coll_busbw_factor(FAB_OP_BROADCAST, 8) == 1.0);
	assert_true(fab_coll_busbw_factor(FAB_OP_REDUCE, 8) == 1.0);
	assert_true(fab_coll_busbw_factor(FAB_OP_SENDRECV, 8) == 1.0);
	assert_true(fab_coll_busbw_factor(FAB_OP_ALLREDUCE, 2) == 1.0);
	assert_true(fab_coll_busbw_factor(FAB_OP_ALLREDUCE, 1) == 0.0);
	/* sizes: AllGather's size column is the whole output */
	uint64_t size, in, out;
	fab_coll_sizes(FAB_OP_ALLGATHER, 1003, 4, 8, &size, &in, &out);
	assert_int_equal(size, 1000 * 4);
	assert_int_equal(in, 125 * 4);
	assert_int_equal(out, 1000 * 4);
	fab_coll_sizes(FAB_OP_REDUCESCATTER, 1024, 2, 8, &size, &in, &out);
	assert_int_equal(in, 2048);
	assert_int_equal(out, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coll_every_op_algo_and_rank_count),
		cmocka_unit_test(test_coll_tiny_and_odd_sizes),
		cmocka_unit_test(test_coll_custom_ring_order),
		cmocka_unit_test(test_coll_per_channel_ring_orders),
		cmocka_unit_test(test_coll_trees_over_servers),
		cmocka_unit_test(test_coll_unsupported_is_refused),
		cmocka_unit_test(test_coll_checker_catches_missing_dependency),
		cmocka_unit_test(test_coll_busbw_factors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
