/* Event queue: the heap against a reference (stable sort by time). */
#include "testutil.h"
#include "../../src/base/rng.h"
#include "../../src/sim/eq.h"

struct ref {
	fab_time_ps t;
	uint32_t id;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id; /* insertion order */
}

static void test_eq_matches_sorted_reference(void **state)
{
	(void)state;
	struct fab_eq q;
	fab_eq_init(&q);
	struct fab_rng r;
	fab_rng_init(&r, 42, 7);
	enum { N = 20000 };
	struct ref *ref = calloc(N, sizeof *ref);
	/* few distinct times: many ties, which must leave in insertion order */
	for (uint32_t i = 0; i < N; i++) {
		ref[i].t = fab_rng_below(&r, 500);
		ref[i].id = i;
		fab_eq_push(&q, ref[i].t, 1, NULL, i);
	}
	qsort(ref, N, sizeof *ref, cmp_ref);
	struct fab_ev ev;
	for (uint32_t i = 0; i < N; i++) {
		assert_true(fab_eq_pop(&q, &ev));
		assert_int_equal(ev.t_ps, ref[i].t);
		assert_int_equal(ev.arg, ref[i].id);
	}
	assert_false(fab_eq_pop(&q, &ev));
	free(ref);
	fab_eq_free(&q);
}

static void test_eq_interleaved_push_pop(void **state)
{
	(void)state;
	struct fab_eq q;
	fab_eq_init(&q);
	struct fab_rng r;
	fab_rng_init(&r, 1, 1);
	fab_time_ps now = 0;
	uint64_t seen = 0;
	fab_eq_push(&q, 0, 0, NULL, 0);
	struct fab_ev ev;
	while (fab_eq_pop(&q, &ev) && seen < 100000) {
		assert_true(ev.t_ps >= now); /* time never goes back */
		now = ev.t_ps;
		seen++;
		unsigned k = (unsigned)fab_rng_below(&r, 3);
		for (unsigned i = 0; i < k && fab_eq_len(&q) < 5000; i++)
			fab_eq_push(&q, now + fab_rng_below(&r, 1000), 0, NULL, 0);
		if (!fab_eq_len(&q))
			fab_eq_push(&q, now + 1, 0, NULL, 0);
	}
	assert_int_equal(seen, 100000);
	fab_eq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eq_matches_sorted_reference),
		cmocka_unit_test(test_eq_interleaved_push_pop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
