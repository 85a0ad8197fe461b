/*
 * dcqcn_nic.c - DCQCN as NIC firmware runs it (Mellanox ConnectX), and as
 * HPCC's ns-3 models it (`CC_MODE 1`): fabric.dcqcn.variant: firmware.
 *
 * Where it differs from the paper's reaction point (dcqcn.c):
 * - Feedback: the receiver echoes CE on the ACK of every CE-marked packet
 *   (no CNP packets, no receiver pacing); every echo counts as a CNP.
 * - The first CNP sets alpha to initial_alpha (not counting itself in the
 *   first slot), starts the alpha slots and the decrease checks, and cuts
 *   nothing (rate x 1.0); the first check, one decrease_period later, cuts.
 * - Alpha: every alpha_period (the firmware's alpha-resume interval, 1 us)
 *   alpha <- (1 - g) alpha + g if a CNP arrived in that slot, else
 *   (1 - g) alpha.  Evaluated lazily, exactly: slots without a CNP are one
 *   power of (1 - g).  A CNP that arrives exactly on a slot boundary counts
 *   toward the slot that ends there.
 * - Decrease: checks every decrease_period (4 us) from the first CNP + 1 ns
 *   (so a check follows the alpha update at the same microsecond); a check
 *   that saw a CNP since the previous one cuts: the target takes the rate
 *   (only if an increase step happened since the last cut, unless
 *   clamp_target), rate <- max(min_rate, rate (1 - alpha/2)), the stage
 *   goes back to 0 and the increase timer restarts.  Only checks that
 *   follow a CNP are events here; the others do nothing in the firmware.
 * - Increase: a timer every rate_period (300 us) since the last cut, no
 *   byte counter; at stage s (counted per expiry from 0): s < F fast
 *   recovery, rate <- (rate + target) / 2; s == F additive, target += R_AI;
 *   s > F hyper, target += R_HAI (not i x R_HAI); the target capped at line
 *   rate, then rate <- (rate + target) / 2.  The timer stops once the rate
 *   is within a millionth of the line rate (the firmware's keeps running
 *   and changes nothing more).
 */
#include <math.h>

#include "cc.h"
#include "dcqcn.h"

struct cc_nic {
	const struct fab_dcqcn_params *p;
	double rc_bps, rt_bps, line_bps, alpha;
	bool started;           /* a CNP has arrived */
	bool alpha_cnp;         /* a CNP arrived in the current alpha slot */
	bool decrease_cnp;      /* a CNP arrived since the last decrease check */
	uint32_t stage;         /* increase steps since the last cut */
	fab_time_ps t0;         /* the first CNP */
	fab_time_ps alpha_next; /* the end of the current alpha slot */
	fab_time_ps check_next; /* the decrease check due, FAB_TIME_NEVER if none */
	fab_time_ps inc_next;   /* the increase timer, FAB_TIME_NEVER if stopped */
};

static void nic_init(void *st, const void *params, double line_bps)
{
	struct cc_nic *d = st;
	*d = (struct cc_nic){.p = params, .rc_bps = line_bps, .rt_bps = line_bps, .line_bps = line_bps};
	d->alpha = d->p->initial_alpha;
	d->check_next = d->inc_next = FAB_TIME_NEVER;
}

/* Applies every alpha slot that ends at or before `until`. */
static void alpha_advance(struct cc_nic *d, fab_time_ps until)
{
	if (!d->started || d->alpha_next > until)
		return;
	fab_time_ps k = d->p->alpha_period_ps;
	uint64_t slots = (until - d->alpha_next) / k + 1;
	double g = d->p->g;
	d->alpha = (1 - g) * d->alpha + (d->alpha_cnp ? g : 0);
	d->alpha_cnp = false;
	if (slots > 1)
		d->alpha *= pow(1 - g, (double)(slots - 1));
	d->alpha_next += slots * k;
}

static fab_time_ps next_due(const struct cc_nic *d, fab_time_ps now)
{
	fab_time_ps t = FAB_MIN(d->check_next, d->inc_next);
	return t == FAB_TIME_NEVER ? 0 : t - now;
}

static fab_time_ps nic_congestion(void *st, fab_time_ps now)
{
	struct cc_nic *d = st;
	if (!d->started) {
		/* alpha starts here, without this CNP in its first slot; the
		 * first check cuts */
		d->started = true;
		d->t0 = now;
		d->alpha = d->p->initial_alpha;
		d->alpha_next = now + d->p->alpha_period_ps;
		d->rt_bps = d->rc_bps; /* the first CNP cuts by a factor of 1 */
	} else {
		alpha_advance(d, now - 1); /* slots ending before now */
		d->alpha_cnp = true;
	}
	d->decrease_cnp = true;
	if (d->check_next == FAB_TIME_NEVER) { /* the first check after now */
		fab_time_ps first = d->t0 + d->p->decrease_period_ps + 1;
		uint64_t n = now < first ? 0 : (now - first) / d->p->decrease_period_ps + 1;
		d->check_next = first + n * d->p->decrease_period_ps;
	}
	return next_due(d, now);
}

static void nic_cut(struct cc_nic *d, fab_time_ps now)
{
	alpha_advance(d, now);
	if (d->p->clamp_target || d->stage > 0)
		d->rt_bps = d->rc_bps;
	d->rc_bps = FAB_MAX((double)d->p->min_rate_bps, d->rc_bps * (1 - d->alpha / 2));
	d->stage = 0;
	d->decrease_cnp = false;
	d->inc_next = now + d->p->rate_period_ps;
}

static void nic_increase(struct cc_nic *d)
{
	uint32_t f = d->p->fast_recovery_steps;
	if (d->stage == f)
		d->rt_bps += (double)d->p->rai_bps;
	else if (d->stage > f)
		d->rt_bps += (double)d->p->rhai_bps;
	if (d->rt_bps > d->line_bps)
		d->rt_bps = d->line_bps;
	d->rc_bps = d->rc_bps / 2 + d->rt_bps / 2;
	d->stage++;
	if (d->rc_bps > d->line_bps * (1.0 - 1e-6)) {
		d->rc_bps = d->line_bps;
		d->inc_next = FAB_TIME_NEVER;
	} else {
		d->inc_next += d->p->rate_period_ps;
	}
}

/* The increase timer first when both are due at once: it was set when the
 * cut happened, long before the periodic check was (as in the firmware
 * model, where same-time events run in the order they were scheduled). */
static fab_time_ps nic_timer(void *st, fab_time_ps now)
{
	struct cc_nic *d = st;
	if (d->inc_next <= now)
		nic_increase(d);
	if (d->check_next <= now) {
		d->check_next = FAB_TIME_NEVER;
		if (d->decrease_cnp)
			nic_cut(d, now);
	}
	return next_due(d, now);
}

static void nic_sent(void *st, fab_bytes bytes)
{
	(void)st;
	(void)bytes;
}

static bool nic_sent_ignored(const void *st)
{
	(void)st;
	return true;
}

static double nic_rate(const void *st)
{
	return ((const struct cc_nic *)st)->rc_bps;
}

static uint64_t nic_window(const void *st)
{
	(void)st;
	return UINT64_MAX;
}

const struct fab_cc_ops fab_cc_dcqcn_nic = {
	.name = "dcqcn-firmware",
	.label = "DCQCN",
	.transports = FAB_CC_ON_ROCE | FAB_CC_ON_IB,
	.flow_model = true,
	.family = &fab_dcqcn_family,
	.state_size = sizeof(struct cc_nic),
	.feedback = FAB_CC_FEEDBACK_ECHO,
	.init = nic_init,
	.on_sent = nic_sent,
	.sent_ignored = nic_sent_ignored,
	.on_congestion = nic_congestion,
	.on_timer = nic_timer,
	.rate_bps = nic_rate,
	.window_bytes = nic_window,
};
