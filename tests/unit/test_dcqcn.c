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
	assert_true(cc->state_size <= sizeof st && cc->feedback == FAB_CC_FEEDBACK_CNP);
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
	assert_int_equal(none->feedback, FAB_CC_FEEDBACK_NONE);
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

/* ---- the firmware's DCQCN (dcqcn_nic.c), as HPCC's ns-3 configures it ---- */

static struct fab_dcqcn_params fw_params(void)
{
	struct fab_dcqcn_params p = {
		.enabled = true,
		.variant = FAB_DCQCN_FIRMWARE,
		.g = 1.0 / 256,
		.initial_alpha = 1.0,
		.alpha_period_ps = FAB_PS_PER_US,
		.rate_period_ps = 300 * FAB_PS_PER_US,
		.decrease_period_ps = 4 * FAB_PS_PER_US,
		.fast_recovery_steps = 1,
		.rai_bps = 20000000,
		.rhai_bps = 200000000,
		.min_rate_bps = 1000000000,
	};
	return p;
}

/* The first CNP cuts nothing and starts alpha at 1 without itself; the
 * first check, 4 us + 1 ns later, cuts by alpha/2 with alpha = (1-g)^4;
 * the target stays at the line rate (no increase since a cut: no clamp);
 * then the timer's stages: fast recovery, one additive step, hyper. */
static void test_dcqcn_firmware_first_cnp_and_stages(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = fw_params();
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_dcqcn_nic;
	assert_true(cc->state_size <= sizeof st && cc->feedback == FAB_CC_FEEDBACK_ECHO);
	double line = 100e9, g = p.g;
	cc->init(st, &p, line);
	fab_time_ps t0 = 7 * FAB_PS_PER_MS; /* late: nothing depends on when */
	assert_int_equal(cc->on_congestion(st, t0), p.decrease_period_ps + 1);
	assert_true(cc->rate_bps(st) == line);
	fab_time_ps c = t0 + p.decrease_period_ps + 1;
	assert_int_equal(cc->on_timer(st, c), p.rate_period_ps);
	double alpha = pow(1 - g, 4), rc = line * (1 - alpha / 2), rt = line;
	assert_true(fabs(cc->rate_bps(st) - rc) < 1e-3);
	rc = (rc + rt) / 2; /* stage 0: fast recovery */
	assert_int_equal(cc->on_timer(st, c + p.rate_period_ps), p.rate_period_ps);
	assert_true(fabs(cc->rate_bps(st) - rc) < 1e-3);
	/* a CNP 10 ns later: after an increase step the cut sets the target to
	 * the rate (no clamp needed); the check is the next 4 us boundary from
	 * the first CNP + 1 ns; alpha has decayed over slots 5..304, slot 305
	 * holds the CNP, then 306..308 */
	fab_time_ps cnp = c + p.rate_period_ps + 10000, check = t0 + 308 * FAB_PS_PER_US + 1;
	assert_int_equal(cc->on_congestion(st, cnp), check - cnp);
	assert_int_equal(cc->on_timer(st, check), p.rate_period_ps);
	alpha = ((1 - g) * pow(1 - g, 304) + g) * pow(1 - g, 3);
	rt = rc;
	rc = rc * (1 - alpha / 2);
	assert_true(fabs(cc->rate_bps(st) - rc) < 1);
	/* the stages from this cut: fast recovery, additive (+R_AI), hyper (+R_HAI) */
	double add[] = {0, (double)p.rai_bps, (double)p.rhai_bps};
	for (int k = 0; k < 3; k++) {
		cc->on_timer(st, check + (fab_time_ps)(k + 1) * p.rate_period_ps);
		rt += add[k];
		rc = (rc + rt) / 2;
		assert_true(fabs(cc->rate_bps(st) - rc) < 1);
	}
}

/* Alpha per 1 us slot from the "CNP arrived" bit, and at most one cut per
 * 4 us however many CNPs arrive. */
static void test_dcqcn_firmware_alpha_slots_one_cut_per_period(void **state)
{
	(void)state;
	struct fab_dcqcn_params p = fw_params();
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_dcqcn_nic;
	double line = 100e9, g = p.g, us = (double)FAB_PS_PER_US;
	cc->init(st, &p, line);
	cc->on_congestion(st, 0);
	/* CNPs at 2.5 us (slot 3) and 3.2 us (slot 4), then ten more within 3.9 us */
	cc->on_congestion(st, (fab_time_ps)(2.5 * us));
	for (int i = 0; i < 11; i++)
		cc->on_congestion(st, (fab_time_ps)(3.2 * us) + (fab_time_ps)i * 60000);
	double alpha = pow(1 - g, 2);       /* slots 1, 2: no CNP */
	alpha = (1 - g) * alpha + g;        /* slot 3 */
	alpha = (1 - g) * alpha + g;        /* slot 4 */
	double rc = line * (1 - alpha / 2); /* one cut at 4 us + 1 ns */
	fab_time_ps next = cc->on_timer(st, 4 * FAB_PS_PER_US + 1);
	assert_true(fabs(cc->rate_bps(st) - rc) < 1e-3);
	assert_int_equal(next, p.rate_period_ps); /* no check pending: no CNP since */
	/* a CNP at 9 us: the next check is at 12 us + 1 ns, with alpha decayed
	 * over slots 5..8 and slot 9 and the slot of the CNP counted */
	assert_int_equal(cc->on_congestion(st, 9 * FAB_PS_PER_US + 500000), 3 * FAB_PS_PER_US + 1 - 500000);
	cc->on_timer(st, 12 * FAB_PS_PER_US + 1);
	alpha = alpha * pow(1 - g, 5);
	alpha = (1 - g) * alpha + g;   /* slot 10: the CNP at 9.5 us */
	alpha = alpha * pow(1 - g, 2); /* slots 11, 12 */
	double rc2 = FAB_MAX(1e9, rc * (1 - alpha / 2));
	assert_true(fabs(cc->rate_bps(st) - rc2) < 1e-2);
}

/* sent_ignored, which lets the flow engine skip windows, holds to what
 * on_sent does: where it says so, a window's bytes leave the state as it
 * was, byte for byte; where it does not (the paper's DCQCN below line rate
 * with a byte counter), a counter's worth of bytes raises the rate.  The
 * firmware's ignores them in every stage. */
static void test_dcqcn_sent_ignored_holds(void **state)
{
	(void)state;
	struct fab_dcqcn_params p;
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX], before[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *ops[] = {&fab_cc_dcqcn, &fab_cc_dcqcn_nic};
	for (int k = 0; k < 2; k++) {
		const struct fab_cc_ops *cc = ops[k];
		p = k ? fw_params() : params();
		memset(st, 0, sizeof st);
		cc->init(st, &p, 400e9);
		for (int step = 0; step < 4; step++) { /* line rate, then after cuts */
			bool ignored = cc->sent_ignored(st);
			memcpy(before, st, sizeof st);
			double r0 = cc->rate_bps(st);
			cc->on_sent(st, 10000000);
			if (ignored)
				assert_memory_equal(before, st, sizeof st);
			else
				assert_true(cc->rate_bps(st) > r0);
			assert_true(k == 1 || ignored == (r0 >= 400e9)); /* the paper's: only below line rate */
			assert_true(k == 0 || ignored);
			cc->on_congestion(st, (fab_time_ps)step * p.rate_period_ps);
			cc->on_timer(st,
				     (fab_time_ps)step * p.rate_period_ps + 4 * FAB_PS_PER_US +
					     1); /* (the firmware cuts) */
		}
	}
	p = params();
	p.byte_counter = 0; /* no byte counter: nothing to count */
	fab_cc_dcqcn.init(st, &p, 400e9);
	fab_cc_dcqcn.on_congestion(st, 0);
	assert_true(fab_cc_dcqcn.rate_bps(st) < 400e9 && fab_cc_dcqcn.sent_ignored(st));
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
		cmocka_unit_test(test_dcqcn_sent_ignored_holds),
		cmocka_unit_test(test_dcqcn_notification_point_interval),
		cmocka_unit_test(test_dcqcn_firmware_first_cnp_and_stages),
		cmocka_unit_test(test_dcqcn_firmware_alpha_slots_one_cut_per_period),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
