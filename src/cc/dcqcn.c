/*
 * dcqcn.c - DCQCN reaction point; see dcqcn.h for the model.
 */
#include <math.h>
#include <stddef.h>

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
	.label = "DCQCN",
	.transports = FAB_CC_ON_ROCE | FAB_CC_ON_IB,
	.flow_model = true,
	.family = &fab_dcqcn_family,
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

/* ---- the parameters (fabric.dcqcn.*) ---- */

#define OFF(field) offsetof(struct fab_dcqcn_params, field)

static const struct fab_key_def dcqcn_keys[] = {
	{"fabric.dcqcn.enabled", K_BOOL, OFF(enabled), "true", 0, 0, NULL,
	 "DCQCN rate control (CNPs from receivers, rate cuts at senders)"},
	{"fabric.dcqcn.preset", K_ENUM, OFF(preset), "none", 0, 0, "none|paper|firmware",
	 "sets every fabric.dcqcn key to a published configuration (doc/model.md): paper, Zhu et al. 2015; firmware, "
	 "NIC firmware as HPCC's ns-3 configures it at 100G (and one ACK per packet); keys given beside it win"},
	{"fabric.dcqcn.variant", K_ENUM, OFF(variant), "paper", 0, 0, "paper|firmware",
	 "paper: CNPs paced per queue pair, a cut on every CNP, timer and byte counter; firmware: CE echoed on ACKs, "
	 "alpha updated per alpha_period, at most one cut per decrease_period, the first CNP cutting nothing"},
	{"fabric.dcqcn.decrease_period", K_TIME, OFF(decrease_period_ps), "4us", 1e3, 1e12, NULL,
	 "firmware: the rate-decrease interval (a cut at most once per period, if a CNP arrived)"},
	{"fabric.dcqcn.g", K_DOUBLE, OFF(g), "1/256", 1e-6, 1, NULL, "alpha gain g"},
	{"fabric.dcqcn.initial_alpha", K_DOUBLE, OFF(initial_alpha), "1", 0, 1, NULL, "alpha of a new queue pair"},
	{"fabric.dcqcn.alpha_period", K_TIME, OFF(alpha_period_ps), "55us", 1e3, 1e12, NULL,
	 "alpha decays by (1-g) each period without a CNP (firmware: the alpha-resume interval)"},
	{"fabric.dcqcn.rate_period", K_TIME, OFF(rate_period_ps), "55us", 1e3, 1e12, NULL, "rate-increase timer T"},
	{"fabric.dcqcn.byte_counter", K_BYTES, OFF(byte_counter), "10MB", 0, 1e12, NULL,
	 "rate-increase byte counter B (0 = off)"},
	{"fabric.dcqcn.fast_recovery_steps", K_U32, OFF(fast_recovery_steps), "1", 0, 1000, NULL,
	 "F: increase steps spent in fast recovery"},
	{"fabric.dcqcn.rai", K_RATE, OFF(rai_bps), "80Mbps", 0, 1.6e12, NULL, "additive increase step R_AI"},
	{"fabric.dcqcn.rhai", K_RATE, OFF(rhai_bps), "800Mbps", 0, 1.6e12, NULL, "hyper increase step R_HAI"},
	{"fabric.dcqcn.min_rate", K_RATE, OFF(min_rate_bps), "100Mbps", 1e3, 1.6e12, NULL,
	 "lowest rate a cut can reach"},
	{"fabric.dcqcn.clamp_target", K_BOOL, OFF(clamp_target), "false", 0, 0, NULL,
	 "every cut sets the target rate to the current rate (the paper); false: only a cut after a timer increase does (the NIC default)"},
};

/* The paper: Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015 (its parameters, at 40 Gb/s).  The firmware:
 * the DCQCN configuration HPCC's ns-3 generates for its 100G runs (`CC_MODE
 * 1`, github.com/alibaba-edu/High-Precision-Congestion-Control), ACKs per
 * packet included since they carry the echoes. */
static const struct fab_preset_value dcqcn_paper[] = {
	{"fabric.dcqcn.variant", "paper"},         {"fabric.dcqcn.g", "1/256"},
	{"fabric.dcqcn.initial_alpha", "1"},       {"fabric.dcqcn.alpha_period", "55us"},
	{"fabric.dcqcn.rate_period", "55us"},      {"fabric.dcqcn.byte_counter", "10MB"},
	{"fabric.dcqcn.fast_recovery_steps", "5"}, {"fabric.dcqcn.rai", "40Mbps"},
	{"fabric.dcqcn.rhai", "400Mbps"},          {"fabric.dcqcn.min_rate", "100Mbps"},
	{"fabric.dcqcn.clamp_target", "true"},     {"fabric.nic.cnp_interval", "50us"},
};

static const struct fab_preset_value dcqcn_firmware[] = {
	{"fabric.dcqcn.variant", "firmware"},  {"fabric.dcqcn.g", "1/256"},
	{"fabric.dcqcn.initial_alpha", "1"},   {"fabric.dcqcn.alpha_period", "1us"},
	{"fabric.dcqcn.rate_period", "300us"}, {"fabric.dcqcn.decrease_period", "4us"},
	{"fabric.dcqcn.byte_counter", "0"},    {"fabric.dcqcn.fast_recovery_steps", "1"},
	{"fabric.dcqcn.rai", "20Mbps"},        {"fabric.dcqcn.rhai", "200Mbps"},
	{"fabric.dcqcn.min_rate", "1000Mbps"}, {"fabric.dcqcn.clamp_target", "false"},
	{"fabric.nic.ack_every", "1"},
};

static const struct fab_preset_value *dcqcn_preset(const void *params, size_t *n)
{
	switch (((const struct fab_dcqcn_params *)params)->preset) {
	case FAB_DCQCN_PRESET_PAPER:
		*n = FAB_ARRAY_LEN(dcqcn_paper);
		return dcqcn_paper;
	case FAB_DCQCN_PRESET_FIRMWARE:
		*n = FAB_ARRAY_LEN(dcqcn_firmware);
		return dcqcn_firmware;
	default:
		*n = 0;
		return NULL;
	}
}

const struct fab_param_family fab_dcqcn_family = {
	.prefix = "fabric.dcqcn",
	.size = sizeof(struct fab_dcqcn_params),
	.keys = dcqcn_keys,
	.nkeys = FAB_ARRAY_LEN(dcqcn_keys),
	.preset = dcqcn_preset,
};
