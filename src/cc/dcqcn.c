/*
 * dcqcn.c - DCQCN reaction point; see dcqcn.h for the model.
 */
#include <math.h>

#include "cc.h"
#include "dcqcn.h"

void fab_dcqcn_init(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, double line_bps)
{
	rp->rc_bps = line_bps;
	rp->rt_bps = line_bps;
	rp->line_bps = line_bps;
	rp->alpha = p->initial_alpha;
	rp->alpha_ref_ps = 0;
	rp->timer_steps = rp->byte_steps = 0;
	rp->bytes_since = 0;
	rp->cuts = 0;
}

void fab_dcqcn_decay_alpha(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_time_ps now_ps)
{
	if (now_ps <= rp->alpha_ref_ps || !p->alpha_period_ps)
		return;
	uint64_t periods = (now_ps - rp->alpha_ref_ps) / p->alpha_period_ps;
	if (!periods)
		return;
	rp->alpha *= pow(1.0 - p->g, (double)periods);
	rp->alpha_ref_ps += periods * p->alpha_period_ps;
}

void fab_dcqcn_on_cnp(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_time_ps now_ps)
{
	if (rp->cuts == 0)
		rp->alpha_ref_ps = now_ps; /* alpha and its clock start at the first CNP */
	fab_dcqcn_decay_alpha(rp, p, now_ps);
	if (p->clamp_target || rp->timer_steps > 0 || rp->cuts == 0)
		rp->rt_bps = rp->rc_bps;
	rp->rc_bps = rp->rc_bps * (1.0 - rp->alpha / 2.0);
	if (rp->rc_bps < (double)p->min_rate_bps)
		rp->rc_bps = (double)p->min_rate_bps;
	rp->alpha = (1.0 - p->g) * rp->alpha + p->g;
	rp->alpha_ref_ps = now_ps;
	rp->timer_steps = rp->byte_steps = 0;
	rp->bytes_since = 0;
	rp->cuts++;
}

static void increase(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p)
{
	uint32_t F = p->fast_recovery_steps;
	uint32_t hi = FAB_MAX(rp->timer_steps, rp->byte_steps);
	uint32_t lo = FAB_MIN(rp->timer_steps, rp->byte_steps);
	if (hi < F) {
		/* fast recovery: Rt stays, Rc closes half the gap */
	} else if (lo > F) {
		rp->rt_bps += (double)(lo - F) * (double)p->rhai_bps;
	} else {
		rp->rt_bps += (double)p->rai_bps;
	}
	if (rp->rt_bps > rp->line_bps)
		rp->rt_bps = rp->line_bps;
	rp->rc_bps = (rp->rt_bps + rp->rc_bps) / 2.0;
	/* within a millionth of the line rate counts as recovered */
	if (rp->rc_bps > rp->line_bps * (1.0 - 1e-6))
		rp->rc_bps = rp->line_bps;
}

void fab_dcqcn_on_rate_timer(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p)
{
	rp->timer_steps++;
	increase(rp, p);
}

void fab_dcqcn_on_bytes(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_bytes bytes)
{
	if (!p->byte_counter || !fab_dcqcn_limited(rp))
		return;
	rp->bytes_since += bytes;
	while (rp->bytes_since >= p->byte_counter) {
		rp->bytes_since -= p->byte_counter;
		rp->byte_steps++;
		increase(rp, p);
	}
}

/* ---- behind cc.h ---- */

struct cc_dcqcn {
	struct fab_dcqcn rp;
	const struct fab_dcqcn_params *p;
};

static void cc_init(void *st, const void *params, double line_bps)
{
	struct cc_dcqcn *d = st;
	d->p = params;
	fab_dcqcn_init(&d->rp, d->p, line_bps);
}

static void cc_sent(void *st, fab_bytes bytes)
{
	struct cc_dcqcn *d = st;
	fab_dcqcn_on_bytes(&d->rp, d->p, bytes);
}

static bool cc_sent_ignored(const void *st)
{
	const struct cc_dcqcn *d = st;
	return !d->p->byte_counter || !fab_dcqcn_limited(&d->rp);
}

static fab_time_ps cc_congestion(void *st, fab_time_ps now)
{
	struct cc_dcqcn *d = st;
	fab_dcqcn_on_cnp(&d->rp, d->p, now);
	return d->p->rate_period_ps;
}

static fab_time_ps cc_timer(void *st, fab_time_ps now)
{
	(void)now;
	struct cc_dcqcn *d = st;
	fab_dcqcn_on_rate_timer(&d->rp, d->p);
	return fab_dcqcn_limited(&d->rp) ? d->p->rate_period_ps : 0;
}

static double cc_rate(const void *st)
{
	return ((const struct cc_dcqcn *)st)->rp.rc_bps;
}

static uint64_t cc_window(const void *st)
{
	(void)st;
	return UINT64_MAX;
}

const struct fab_cc_ops fab_cc_dcqcn = {
	.name = "dcqcn",
	.state_size = sizeof(struct cc_dcqcn),
	.feedback = FAB_CC_FEEDBACK_CNP,
	.init = cc_init,
	.on_sent = cc_sent,
	.sent_ignored = cc_sent_ignored,
	.on_congestion = cc_congestion,
	.on_timer = cc_timer,
	.rate_bps = cc_rate,
	.window_bytes = cc_window,
};
