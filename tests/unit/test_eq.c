/* Event queue: the heap against a reference (stable sort by time); timers
 * and radix sorts against brute force and qsort; random
 * streams: no two entities share one. */
#include "testutil.h"
#include "../../src/base/rng.h"
#include "../../src/base/sort.h"
#include "../../src/base/timers.h"
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

/* an event pushed, for a reference: its (time, key), and whether it is
 * still to come out */
struct pend_ev {
	fab_time_ps t;
	uint64_t seq;
	bool live;
};

/* ev, just popped, is the least (time, key) of those still to come out
 * (a plain scan), and time did not go back */
static void took_least(struct pend_ev *pend, uint32_t n, const struct fab_ev *ev, fab_time_ps *now)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (pend[i].live &&
		    (best == UINT32_MAX || pend[i].t < pend[best].t ||
		     (pend[i].t == pend[best].t && pend[i].seq < pend[best].seq)))
			best = i;
	assert_int_equal(ev->arg, best);
	pend[best].live = false;
	assert_true(ev->t_ps >= *now);
	*now = ev->t_ps;
}

/* Pushes while popping, with times near (ps to 150 us) and far (past 200 us:
 * the second heap), and events pushed late with reserved sequence numbers: every pop
 * is the least (time, sequence) of everything pushed and not yet popped,
 * checked against a plain scan. */
static void test_eq_near_far_and_reserved(void **state)
{
	(void)state;
	struct fab_eq q;
	fab_eq_init(&q);
	struct fab_rng r;
	fab_rng_init(&r, 9, 3);
	enum { M = 6000 };
	struct pend_ev *pend = calloc(M + 64, sizeof *pend); /* M random, 50 reserved */
	uint32_t n = 0, popped = 0;
	fab_time_ps now = 0;
	/* reserved: 50 events with their sequence numbers taken up front, pushed
	 * one at a time in (time, sequence) order as the one before leaves */
	uint64_t seq0 = fab_eq_key(&q, 0);
	for (int i = 1; i < 50; i++)
		fab_eq_key(&q, 0); /* 50 consecutive keys */
	uint32_t next_res = 0;
	pend[n] = (struct pend_ev){.t = 5 * FAB_PS_PER_US, .seq = seq0, .live = true};
	fab_eq_push_seq(&q, pend[n].t, seq0, 2, NULL, n);
	n++;
	next_res = 1;
	struct fab_ev ev;
	while (fab_eq_pop(&q, &ev)) {
		took_least(pend, n, &ev, &now);
		popped++;
		if (ev.type == 2 && next_res < 50) { /* the next reserved one, 7 us later */
			pend[n] = (struct pend_ev){.t = now + 7 * FAB_PS_PER_US, .seq = seq0 + next_res, .live = true};
			fab_eq_push_seq(&q, pend[n].t, seq0 + next_res, 2, NULL, n);
			n++;
			next_res++;
		}
		for (unsigned k = 1 + (unsigned)fab_rng_below(&r, 2); k > 0 && n < M; k--) {
			uint64_t u = fab_rng_below(&r, 10);
			/* near: ps, or up to 150 us; far: 200 us to 1 ms, due while
			 * near ones are still waiting */
			fab_time_ps dt = u < 4 ? fab_rng_below(&r, 2000)
				: u < 8        ? fab_rng_below(&r, 150 * FAB_PS_PER_US)
					       : 200 * FAB_PS_PER_US + fab_rng_below(&r, 800 * FAB_PS_PER_US);
			pend[n] = (struct pend_ev){.t = now + dt, .seq = q.base, .live = true};
			fab_eq_push(&q, pend[n].t, 1, NULL, n);
			n++;
		}
	}
	assert_int_equal(popped, n);
	assert_true(n > 4000);
	free(pend);
	fab_eq_free(&q);
}

/* Events at one instant from many parents (their keys in no order), many
 * within a nanosecond, others spread over 10 ms; one pushed behind the last
 * taken; a queue empty for a while that then gets events a second away:
 * the order is (time, key) throughout. */
static void test_eq_edges(void **state)
{
	(void)state;
	struct fab_eq q;
	fab_eq_init(&q);
	struct fab_rng r;
	fab_rng_init(&r, 5, 5);
	enum { N = 3000 };
	struct ref3 {
		fab_time_ps t;
		uint64_t seq;
	} *ref = calloc(N, sizeof *ref);
	/* 1,000 at the same picosecond and 1,000 within a nanosecond, keys in
	 * no order; 1,000 spread over 10 ms (near and far) */
	for (uint32_t i = 0; i < N; i++) {
		ref[i].t = i < 1000 ? 5000
			: i < 2000  ? 5000 + fab_rng_below(&r, 1000)
				    : fab_rng_below(&r, 10000000000ull);
		ref[i].seq = fab_rng_next(&r) >> 1;
		fab_eq_push_seq(&q, ref[i].t, ref[i].seq, 0, NULL, i);
	}
	struct fab_ev ev;
	__uint128_t last = 0;
	bool taken[N] = {0};
	for (uint32_t n = 0; n < N; n++) {
		assert_true(fab_eq_pop(&q, &ev));
		__uint128_t k = (__uint128_t)ev.t_ps << 64 | ev.seq;
		assert_true(k >= last);
		last = k;
		assert_false(taken[ev.arg]);
		taken[ev.arg] = true;
		assert_int_equal(ev.t_ps, ref[ev.arg].t);
		if (n == 100) { /* behind the last taken, and the earliest */
			fab_eq_push_seq(&q, 1000, 1, 0, NULL, N);
			assert_true(fab_eq_pop(&q, &ev));
			assert_int_equal(ev.arg, N);
		}
	}
	assert_false(fab_eq_pop(&q, &ev));
	/* empty: then one event a second away, and one a bucket after it */
	fab_eq_push_seq(&q, last >> 64 | 1000000000000ull, 7, 0, NULL, 1);
	fab_eq_push_seq(&q, (last >> 64 | 1000000000000ull) + 1024, 8, 0, NULL, 2);
	assert_true(fab_eq_pop(&q, &ev) && ev.arg == 1);
	assert_true(fab_eq_pop(&q, &ev) && ev.arg == 2);
	assert_false(fab_eq_pop(&q, &ev));
	free(ref);
	fab_eq_free(&q);
}

/* The delay line: events due its delay after the last one taken, many at
 * one instant from different parents (their keys in no order), others
 * near and far in the heaps (some at other frame-like delays), and events
 * pushed late with keys taken earlier (as a held end of serialisation
 * is): every pop is the least (time, key) of everything pushed and not
 * yet popped, checked against a plain scan, and the line held many. */
static void test_eq_lines(void **state)
{
	(void)state;
	struct fab_eq q;
	fab_eq_init(&q);
	static const fab_time_ps delay[] = {83840, 1200, 20960, 4800, 7};
	fab_eq_line(&q, delay[0]);
	struct fab_rng r;
	fab_rng_init(&r, 11, 4);
	enum { M = 8000 };
	struct pend_ev *pend = calloc(M + 8, sizeof *pend);
	/* one event reserved at a time: its key taken now, pushed later */
	struct {
		fab_time_ps t;
		uint64_t seq;
		bool on;
	} res = {0};
	uint32_t n = 0, popped = 0, in_lines = 0;
	fab_time_ps now = 0;
	for (int i = 0; i < 4; i++) { /* four parents' worth at one instant */
		pend[n] = (struct pend_ev){.t = 1000, .seq = fab_eq_key(&q, 1000), .live = true};
		fab_eq_push_seq(&q, 1000, pend[n].seq, 1, NULL, n);
		n++;
	}
	struct fab_ev ev;
	while (fab_eq_pop(&q, &ev)) {
		took_least(pend, n, &ev, &now);
		popped++;
		/* the reserved one goes in once it is the line's delay away or less */
		if (res.on && res.t < now) {
			res.on = false; /* (passed: never pushed) */
		} else if (res.on && res.t - now <= delay[0] && n < M) {
			pend[n] = (struct pend_ev){.t = res.t, .seq = res.seq, .live = true};
			fab_eq_push_seq(&q, res.t, res.seq, 1, NULL, n);
			n++;
			res.on = false;
		} else if (!res.on && fab_rng_below(&r, 8) == 0) {
			res.t = now + delay[0] + fab_rng_below(&r, 3) * delay[4];
			res.seq = fab_eq_key(&q, res.t);
			res.on = true;
		}
		for (unsigned k = 1 + (unsigned)fab_rng_below(&r, 2); k > 0 && n < M; k--) {
			uint64_t u = fab_rng_below(&r, 10);
			fab_time_ps dt = u < 4 ? delay[0]
				: u < 6        ? delay[fab_rng_below(&r, 5)]
				: u < 9        ? fab_rng_below(&r, 100000)
					       : 200 * FAB_PS_PER_US + fab_rng_below(&r, 100 * FAB_PS_PER_US);
			pend[n] = (struct pend_ev){.t = now + dt, .seq = fab_eq_key(&q, now + dt), .live = true};
			fab_eq_push_seq(&q, pend[n].t, pend[n].seq, 1, NULL, n);
			n++;
		}
		in_lines = q.line.n > in_lines ? q.line.n : in_lines;
		assert_int_equal(fab_eq_len(&q), n - popped);
	}
	assert_int_equal(popped, n);
	assert_true(n >= M);
	assert_true(in_lines > 20); /* the line was used */
	free(pend);
	fab_eq_free(&q);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every kind of entity with indices 0..N-1: all stream ids distinct, and
 * equal indices of two kinds (a traffic generator and a switch once shared
 * one) draw different sequences from the same seed. */
static void test_rng_streams_independent(void **state)
{
	(void)state;
	enum { N = 5000, K = FAB_RNG_CHECK };
	uint64_t *ids = calloc((size_t)N * K + 1, sizeof *ids);
	size_t n = 0;
	for (int k = 1; k <= K; k++)
		for (uint64_t i = 0; i < N; i++)
			ids[n++] = fab_rng_stream((enum fab_rng_kind)k, i);
	ids[n++] = fab_rng_stream(FAB_RNG_PLACEMENT, FAB_RNG_COLL_INDEX);
	qsort(ids, n, sizeof *ids, cmp_u64);
	for (size_t i = 1; i < n; i++)
		assert_true(ids[i] != ids[i - 1]);
	for (uint64_t g = 0; g < 64; g++) {
		struct fab_rng a, b;
		fab_rng_init(&a, 1, fab_rng_stream(FAB_RNG_TRAFFIC_GEN, g));
		fab_rng_init(&b, 1, fab_rng_stream(FAB_RNG_ECN_MARK, g));
		int same = 0;
		for (int d = 0; d < 16; d++)
			same += fab_rng_next(&a) == fab_rng_next(&b);
		assert_int_equal(same, 0);
	}
	free(ids);
}

/* Timers, one per item: against a brute force over every item's time and
 * the order it was set in, under random sets, moves (earlier and later),
 * requeues (behind the others due then), clears and pops, with many ties
 * and items joining as it runs. */
static void test_timers_match_brute_force(void **state)
{
	(void)state;
	enum { N = 300, STEPS = 60000 };
	struct fab_timers tm;
	fab_timers_init(&tm, 10);
	fab_time_ps t[N];
	uint64_t order[N], k = 0;
	for (uint32_t i = 0; i < N; i++)
		t[i] = FAB_TIME_NEVER;
	struct fab_rng r;
	fab_rng_init(&r, 9, 3);
	uint32_t nitems = 10, pops = 0;
	fab_time_ps now = 0;
	for (int step = 0; step < STEPS; step++) {
		if (nitems < N && step % 200 == 0)
			fab_timers_grow(&tm, ++nitems);
		uint32_t i = (uint32_t)(fab_rng_next(&r) % nitems), what = (uint32_t)(fab_rng_next(&r) % 8);
		if (what < 5) { /* set or move: few distinct times, many ties */
			fab_time_ps at = now + fab_rng_next(&r) % 16;
			bool requeue = what == 4;
			if (requeue || t[i] != at) /* (set again to its time, it keeps its place) */
				order[i] = k++;
			t[i] = at;
			if (requeue)
				fab_timers_requeue(&tm, i, at);
			else
				fab_timers_set(&tm, i, at);
		} else if (what == 5) {
			t[i] = FAB_TIME_NEVER;
			fab_timers_set(&tm, i, FAB_TIME_NEVER);
		} else { /* the earliest, first set first among ties */
			uint32_t best = UINT32_MAX;
			for (uint32_t j = 0; j < nitems; j++)
				if (t[j] != FAB_TIME_NEVER &&
				    (best == UINT32_MAX || t[j] < t[best] ||
				     (t[j] == t[best] && order[j] < order[best])))
					best = j;
			if (best == UINT32_MAX) {
				assert_int_equal(fab_timers_next(&tm), FAB_TIME_NEVER);
				continue;
			}
			assert_int_equal(fab_timers_next(&tm), t[best]);
			assert_int_equal(fab_timers_pop(&tm), best);
			assert_int_equal(fab_timers_at(&tm, best), FAB_TIME_NEVER);
			now = t[best];
			t[best] = FAB_TIME_NEVER;
			pops++;
		}
	}
	assert_true(pops > STEPS / 5);
	assert_int_equal(nitems, N);
	fab_timers_free(&tm);
}

static int cmp_key2(const void *x, const void *y)
{
	const struct fab_key2 *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* Radix sorts against qsort: keys spread over all 64 bits, keys that share
 * most of their bytes (passes skipped), sizes with many ties, and doubles
 * (slowdowns) by their bits. */
static void test_radix_sorts_match_qsort(void **state)
{
	(void)state;
	enum { N = 5000 };
	struct fab_rng r;
	fab_rng_init(&r, 5, 1);
	uint64_t *u = calloc(N, sizeof *u), *w = calloc(N, sizeof *w);
	struct fab_key2 *k = calloc(N, sizeof *k), *m = calloc(N, sizeof *m);
	for (int shape = 0; shape < 3; shape++) {
		for (size_t i = 0; i < N; i++) {
			uint64_t x = fab_rng_next(&r);
			u[i] = shape == 0 ? x : shape == 1 ? 0xabcd000000000000ull | (x & 0xff00) : x % 7;
			k[i] = (struct fab_key2){shape == 2 ? x % 13 : 1000 + x % 300,
						 fab_dbits(1.0 + (double)(x >> 11) / 1e9)};
		}
		memcpy(w, u, N * sizeof *u);
		memcpy(m, k, N * sizeof *k);
		fab_sort_u64(u, N);
		qsort(w, N, sizeof *w, cmp_u64);
		assert_memory_equal(u, w, N * sizeof *u);
		fab_sort_key2(k, N);
		qsort(m, N, sizeof *m, cmp_key2);
		assert_memory_equal(k, m, N * sizeof *k);
	}
	assert_true(fab_bitsd(fab_dbits(1.5)) == 1.5 && fab_dbits(2.0) > fab_dbits(1.999));
	free(u);
	free(w);
	free(k);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eq_matches_sorted_reference),
		cmocka_unit_test(test_timers_match_brute_force),
		cmocka_unit_test(test_eq_interleaved_push_pop),
		cmocka_unit_test(test_eq_near_far_and_reserved),
		cmocka_unit_test(test_eq_edges),
		cmocka_unit_test(test_eq_lines),
		cmocka_unit_test(test_rng_streams_independent),
		cmocka_unit_test(test_radix_sorts_match_qsort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
