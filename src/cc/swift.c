/*
 * swift.c - Swift behind cc.h (swift.h): a window from round-trip delay.
 */
#include <math.h>
#include <stddef.h>

#include "swift.h"

struct cc_swift {
	const struct fab_swift_params *p;
	double line_bps, mss;
	double cwnd, max_cwnd;    /* packets */
	double fs_alpha, fs_beta; /* flow scaling, seconds */
	fab_time_ps base_ps, rtt_ps, last_decrease_ps;
	uint32_t hops;
};

_Static_assert(sizeof(struct cc_swift) <= FAB_CC_STATE_MAX, "Swift's state too big");

static void swift_init(void *st, const void *params, double line_bps)
{
	struct cc_swift *c = st;
	const struct fab_swift_params *p = params;
	*c = (struct cc_swift){.p = p, .line_bps = line_bps, .mss = 4096, .cwnd = 1, .max_cwnd = 1e9};
	if (p->fs_range_ps) {
		double range = (double)p->fs_range_ps / 1e12;
		c->fs_alpha = range / (1 / sqrt(p->fs_min_cwnd) - 1 / sqrt(p->fs_max_cwnd));
		c->fs_beta = -c->fs_alpha / sqrt(p->fs_max_cwnd);
	}
}

/* the window starts at the path's bandwidth-delay product (a queue pair
 * that may send at line rate at once, as RoCE's do; on TCP too: Swift has
 * no slow start, and fabric.tcp.init_cwnd is not read), which is also its
 * ceiling unless max_cwnd says */
static void swift_attach(void *st, const struct fab_cc_env *env)
{
	struct cc_swift *c = st;
	c->mss = env->mss;
	c->base_ps = env->base_rtt_ps;
	c->rtt_ps = env->base_rtt_ps;
	c->hops = env->hops; /* (the paper reads them from the TTL; the path is fixed here) */
	double bdp = fmax(env->line_bps * ((double)env->base_rtt_ps / 1e12) / 8 / env->frame_bytes, 1);
	c->max_cwnd = c->p->max_cwnd > 0 ? c->p->max_cwnd : bdp;
	c->cwnd = fmin(bdp, c->max_cwnd);
}

static fab_time_ps target(const struct cc_swift *c)
{
	const struct fab_swift_params *p = c->p;
	double fs = 0;
	if (p->fs_range_ps)
		fs = fmin(fmax(c->fs_alpha / sqrt(c->cwnd) + c->fs_beta, 0), (double)p->fs_range_ps / 1e12);
	return c->base_ps + p->target_ps + c->hops * p->hop_ps + (fab_time_ps)(fs * 1e12);
}

static void clamp(struct cc_swift *c, double before, fab_time_ps now)
{
	c->cwnd = fmin(fmax(c->cwnd, c->p->min_cwnd), c->max_cwnd);
	if (c->cwnd < before)
		c->last_decrease_ps = now;
}

static bool can_decrease(const struct cc_swift *c, fab_time_ps now)
{
	return now - c->last_decrease_ps >= c->rtt_ps;
}

static void swift_sample(void *st, const struct fab_cc_sample *smp)
{
	struct cc_swift *c = st;
	const struct fab_swift_params *p = c->p;
	if (!smp->rtt_ps || !smp->acked_bytes)
		return; /* a resent packet's ACK (Karn), or a duplicate */
	c->rtt_ps = smp->rtt_ps;
	if (smp->nhops) /* with in-band telemetry, the hops it crossed */
		c->hops = smp->nhops;
	double before = c->cwnd, acked = (double)smp->acked_bytes / c->mss;
	fab_time_ps t = target(c);
	if (smp->rtt_ps < t) {
		c->cwnd += c->cwnd >= 1 ? p->ai / c->cwnd * acked : p->ai * acked;
	} else if (can_decrease(c, smp->now_ps)) {
		double d = (double)smp->rtt_ps;
		c->cwnd *= fmax(1 - p->beta * (d - (double)t) / d, 1 - p->max_mdf);
	}
	clamp(c, before, smp->now_ps);
}

static void swift_loss(void *st, fab_time_ps now)
{
	struct cc_swift *c = st;
	double before = c->cwnd;
	if (can_decrease(c, now))
		c->cwnd *= 1 - c->p->max_mdf;
	clamp(c, before, now);
}

static void swift_sent(void *st, fab_bytes bytes)
{
	(void)st;
	(void)bytes;
}

static fab_time_ps swift_congestion(void *st, fab_time_ps now)
{
	(void)st;
	(void)now;
	return 0;
}

/* line rate within the window; below a packet, cwnd packets a round trip */
static double swift_rate(const void *st)
{
	const struct cc_swift *c = st;
	if (c->cwnd >= 1 || !c->rtt_ps)
		return c->line_bps;
	return fmin(c->cwnd * c->mss * 8 / ((double)c->rtt_ps / 1e12), c->line_bps);
}

static uint64_t swift_window(const void *st)
{
	const struct cc_swift *c = st;
	return (uint64_t)(fmax(c->cwnd, 1) * c->mss);
}

#define OFF(field) offsetof(struct fab_swift_params, field)

static const struct fab_key_def swift_keys[] = {
	{"fabric.swift.target", K_TIME, OFF(target_ps), "5us", 0, 1e10, NULL,
	 "Swift: the queueing delay a queue pair's round trip may hold beyond its base (its path through empty "
	 "queues); the window grows below, shrinks above"},
	{"fabric.swift.hop_scale", K_TIME, OFF(hop_ps), "0", 0, 1e9, NULL,
	 "Swift: more target delay per switch hop of the path (the paper's topology scaling)"},
	{"fabric.swift.fs_range", K_TIME, OFF(fs_range_ps), "0", 0, 1e10, NULL,
	 "Swift: flow scaling's range, more target for small windows (alpha / sqrt(cwnd) + beta); 0: off"},
	{"fabric.swift.fs_min_cwnd", K_DOUBLE, OFF(fs_min_cwnd), "0.1", 0.001, 1e6, NULL,
	 "Swift: the window (packets) that gets the whole flow-scaling range"},
	{"fabric.swift.fs_max_cwnd", K_DOUBLE, OFF(fs_max_cwnd), "100", 0.01, 1e6, NULL,
	 "Swift: the window (packets) that gets none of it"},
	{"fabric.swift.ai", K_DOUBLE, OFF(ai), "1", 0.001, 100, NULL, "Swift: additive increase, packets a round trip"},
	{"fabric.swift.beta", K_DOUBLE, OFF(beta), "0.8", 0.01, 1, NULL, "Swift: multiplicative decrease constant"},
	{"fabric.swift.max_mdf", K_DOUBLE, OFF(max_mdf), "0.5", 0.01, 1, NULL,
	 "Swift: the largest cut a round trip (and a timeout's)"},
	{"fabric.swift.min_cwnd", K_DOUBLE, OFF(min_cwnd), "0.001", 0.0001, 1, NULL,
	 "Swift: the smallest window, packets (paced below one)"},
	{"fabric.swift.max_cwnd", K_DOUBLE, OFF(max_cwnd), "0", 0, 1e7, NULL,
	 "Swift: the largest window, packets; 0: the path's bandwidth-delay product"},
};

static const struct fab_param_family swift_family = {
	.prefix = "fabric.swift",
	.size = sizeof(struct fab_swift_params),
	.keys = swift_keys,
	.nkeys = FAB_ARRAY_LEN(swift_keys),
};

const struct fab_cc_ops fab_cc_swift = {
	.name = "swift",
	.label = "Swift",
	.transports = FAB_CC_ON_ROCE | FAB_CC_ON_TCP | FAB_CC_ON_IB,
	.wants = FAB_CC_WANTS_SAMPLE,
	.family = &swift_family,
	.state_size = sizeof(struct cc_swift),
	.feedback = FAB_CC_FEEDBACK_NONE,
	.init = swift_init,
	.attach = swift_attach,
	.on_sent = swift_sent,
	.on_sample = swift_sample,
	.on_congestion = swift_congestion,
	.on_loss = swift_loss,
	.on_rto = swift_loss,
	.rate_bps = swift_rate,
	.window_bytes = swift_window,
};
