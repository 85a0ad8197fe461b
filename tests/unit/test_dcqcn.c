/* DCQCN reaction point against the published rules (Zhu et al. 2015). */
#include <math.h>

#include "testutil.h"
#include "../../src/cc/cc.h"
#include "../../src/cc/dcqcn.h"

static struct fab_dcqcn_params params(void)
{
	struct fab_dcqcn_params p = {
		.enabled = true,
		.g = 1.0 / 256,
		.initial_alpha = 1.0,
		.alpha_period_ps = 55 * FAB_PS_PER_US,
		.rate_period_ps = 55 * FAB_PS_PER_US,
		.byte_counter = 10000000,
		.fast_recovery_steps = 5,
		.rai_bps = 40000000,
		.rhai_bps = 400000000,
		.min_rate_bps = 100000000,
		.clamp_target = true, /* the paper's rule: every cut sets Rt = Rc */
	};
	return p;
}

static void test_dcqcn_cnp_halves_rate_at_alpha_one(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	fab_dcqcn_on_cnp(&rp, &p, 0);
	assert_true(fabs(rp.rc_bps - 200e9) < 1);
	assert_true(fabs(rp.rt_bps - 400e9) < 1); /* target remembers the old rate */
	/* alpha = (1-g)*1 + g = 1 stays 1 */
	assert_true(fabs(rp.alpha - 1.0) < 1e-12);
	/* a second CNP right away halves again */
	fab_dcqcn_on_cnp(&rp, &p, 1);
	assert_true(fabs(rp.rc_bps - 100e9) < 1);
	assert_true(fabs(rp.rt_bps - 200e9) < 1);
}

static void test_dcqcn_alpha_decays_each_period(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	fab_dcqcn_on_cnp(&rp, &p, 0);
	double a0 = rp.alpha;
	/* just under one period: no change */
	fab_dcqcn_decay_alpha(&rp, &p, p.alpha_period_ps - 1);
	assert_true(fabs(rp.alpha - a0) < 1e-15);
	fab_dcqcn_decay_alpha(&rp, &p, p.alpha_period_ps);
	assert_true(fabs(rp.alpha - a0 * (1 - p.g)) < 1e-15);
	/* ten more periods, in two uneven steps */
	fab_dcqcn_decay_alpha(&rp, &p, 4 * p.alpha_period_ps + 7);
	fab_dcqcn_decay_alpha(&rp, &p, 11 * p.alpha_period_ps);
	assert_true(fabs(rp.alpha - a0 * pow(1 - p.g, 11)) < 1e-12);
	/* the next cut uses the decayed alpha */
	double rc = rp.rc_bps, alpha = rp.alpha;
	fab_dcqcn_on_cnp(&rp, &p, 11 * p.alpha_period_ps);
	assert_true(fabs(rp.rc_bps - rc * (1 - alpha / 2)) < 1);
	assert_true(fabs(rp.alpha - ((1 - p.g) * alpha + p.g)) < 1e-15);
}

/* Alpha and its clock start at the first CNP: a queue pair whose first
 * CNP comes after 100 ms (1818 alpha periods) is halved as one whose first
 * comes at 0, and the same events at the same offsets leave both in the
 * same state, to the bit. */
static void test_dcqcn_late_start_cuts_as_early(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn a, b;
	fab_dcqcn_init(&a, &p, 400e9);
	fab_dcqcn_init(&b, &p, 400e9);
	fab_time_ps late = 100 * FAB_PS_PER_MS;
	fab_dcqcn_on_cnp(&a, &p, 0);
	fab_dcqcn_on_cnp(&b, &p, late);
	assert_true(b.rc_bps == 200e9 && b.alpha == 1.0);
	fab_time_ps offs[] = {3 * p.alpha_period_ps + 5, 7 * p.alpha_period_ps, 40 * p.alpha_period_ps + 1};
	for (size_t i = 0; i < FAB_ARRAY_LEN(offs); i++) {
		fab_dcqcn_on_rate_timer(&a, &p);
		fab_dcqcn_on_rate_timer(&b, &p);
		fab_dcqcn_on_bytes(&a, &p, 3000000);
		fab_dcqcn_on_bytes(&b, &p, 3000000);
		fab_dcqcn_on_cnp(&a, &p, offs[i]);
		fab_dcqcn_on_cnp(&b, &p, late + offs[i]);
		assert_true(a.rc_bps == b.rc_bps && a.rt_bps == b.rt_bps && a.alpha == b.alpha);
	}
	/* alpha decayed over the quiet periods between the CNPs, not since 0 */
	assert_true(a.alpha > 0.5);
}

static void test_dcqcn_fast_recovery_halves_gap(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	fab_dcqcn_on_cnp(&rp, &p, 0); /* Rc 200G, Rt 400G */
	double gap = rp.rt_bps - rp.rc_bps;
	for (unsigned i = 0; i < p.fast_recovery_steps - 1; i++) {
		fab_dcqcn_on_rate_timer(&rp, &p);
		gap /= 2;
		assert_true(fabs((rp.rt_bps - rp.rc_bps) - gap) < 1);
		assert_true(fabs(rp.rt_bps - 400e9) < 1); /* target unchanged */
	}
}

static void test_dcqcn_additive_then_hyper_increase(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	fab_dcqcn_on_cnp(&rp, &p, 0);
	fab_dcqcn_on_cnp(&rp, &p, 1); /* Rc 100G, Rt 200G */
	for (unsigned i = 0; i < p.fast_recovery_steps - 1; i++)
		fab_dcqcn_on_rate_timer(&rp, &p);
	double rt = rp.rt_bps;
	fab_dcqcn_on_rate_timer(&rp, &p); /* timer count reaches F: additive */
	assert_true(fabs(rp.rt_bps - (rt + 40e6)) < 1);
	/* byte counter past F too: hyper increase by (min - F) * R_HAI */
	fab_dcqcn_on_bytes(&rp, &p, 6 * p.byte_counter); /* byte steps 1..6 */
	fab_dcqcn_on_rate_timer(&rp, &p);                /* timer 6, bytes 6: i = 1 */
	/* the last byte step ran with timer=5, bytes=6 (additive); then hyper */
	assert_true(rp.rt_bps > rt + 40e6 * 2 + 400e6 - 1);
	/* never above the line rate */
	for (int i = 0; i < 10000; i++)
		fab_dcqcn_on_rate_timer(&rp, &p);
	assert_true(rp.rc_bps <= 400e9 && rp.rt_bps <= 400e9);
	assert_false(fab_dcqcn_limited(&rp));
}

static void test_dcqcn_unclamped_target_survives_cnp_burst(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	p.clamp_target = false;
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	fab_dcqcn_on_cnp(&rp, &p, 0);
	fab_dcqcn_on_cnp(&rp, &p, 1);
	fab_dcqcn_on_cnp(&rp, &p, 2); /* Rc 50G; no increase in between */
	assert_true(fabs(rp.rc_bps - 50e9) < 1);
	assert_true(fabs(rp.rt_bps - 400e9) < 1);
	/* after a timer increase, the next cut does move the target */
	fab_dcqcn_on_rate_timer(&rp, &p);
	double rc = rp.rc_bps;
	fab_dcqcn_on_cnp(&rp, &p, 3);
	assert_true(fabs(rp.rt_bps - rc) < 1);
}

static void test_dcqcn_min_rate_floor(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	struct fab_dcqcn rp;
	fab_dcqcn_init(&rp, &p, 400e9);
	for (int i = 0; i < 100; i++)
		fab_dcqcn_on_cnp(&rp, &p, (fab_time_ps)i);
	assert_true(fabs(rp.rc_bps - 100e6) < 1);
}

/* The reaction point behind the congestion-control interface: a CNP cuts
 * the pacing rate by alpha/2 and asks for the rate timer T; each expiry
 * closes half the gap to the target and asks again while below the line
 * rate; recovered, the timer stops.  `none` stays at line rate. */
static void test_dcqcn_behind_cc_interface(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = params();
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_dcqcn;
	assert_true(cc->state_size <= sizeof st && cc->wants_notifications);
	cc->init(st, &p, 400e9);
	assert_true(cc->rate_bps(st) == 400e9 && cc->window_bytes(st) == UINT64_MAX);
	assert_int_equal(cc->on_congestion(st, 0), p.rate_period_ps);
	assert_true(fabs(cc->rate_bps(st) - 200e9) < 1);
	assert_int_equal(cc->on_timer(st, p.rate_period_ps), p.rate_period_ps);
	assert_true(fabs(cc->rate_bps(st) - 300e9) < 1); /* fast recovery: half the gap */
	int expiries = 1;
	while (cc->on_timer(st, 0) && expiries < 100)
		expiries++;
	assert_true(expiries < 100 && cc->rate_bps(st) == 400e9);

	const struct fab_cc_ops *none = &fab_cc_none;
	assert_false(none->wants_notifications);
	none->init(st, NULL, 100e9);
	assert_int_equal(none->on_congestion(st, 0), 0);
	assert_true(none->rate_bps(st) == 100e9);
}

/* The notification point: at most one CNP per interval per queue pair. */
static void test_dcqcn_notification_point_interval(void **state)
{
	(void)state;
	struct fab_dcqcn_np np = {0};
	fab_time_ps n = 50 * FAB_PS_PER_US;
	assert_true(fab_dcqcn_np_on_ce(&np, n, 7));
	assert_false(fab_dcqcn_np_on_ce(&np, n, 7 + n - 1));
	assert_true(fab_dcqcn_np_on_ce(&np, n, 7 + n));
	int sent = 0;
	for (fab_time_ps t = 7 + n; t < 7 + 11 * n; t += FAB_PS_PER_US)
		sent += fab_dcqcn_np_on_ce(&np, n, t);
	assert_int_equal(sent, 9); /* one CE per microsecond: a CNP at 7 + k n, k = 2 .. 10 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dcqcn_cnp_halves_rate_at_alpha_one),
		cmocka_unit_test(test_dcqcn_alpha_decays_each_period),
		cmocka_unit_test(test_dcqcn_late_start_cuts_as_early),
		cmocka_unit_test(test_dcqcn_fast_recovery_halves_gap),
		cmocka_unit_test(test_dcqcn_additive_then_hyper_increase),
		cmocka_unit_test(test_dcqcn_unclamped_target_survives_cnp_burst),
		cmocka_unit_test(test_dcqcn_min_rate_floor),
		cmocka_unit_test(test_dcqcn_behind_cc_interface),
		cmocka_unit_test(test_dcqcn_notification_point_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
