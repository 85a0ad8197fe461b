/*
 * none.c - no congestion control: the connection sends at its line rate
 * with no window; congestion is left to the fabric (PFC, drops).
 */
#include "cc.h"

struct cc_none {
	double line_bps;
};

static void none_init(void *st, const void *params, double line_bps)
{
	(void)params;
	((struct cc_none *)st)->line_bps = line_bps;
}

static void none_sent(void *st, fab_bytes bytes)
{
	(void)st;
	(void)bytes;
}

static fab_time_ps none_congestion(void *st, fab_time_ps now)
{
	(void)st;
	(void)now;
	return 0;
}

static double none_rate(const void *st)
{
	return ((const struct cc_none *)st)->line_bps;
}

static uint64_t none_window(const void *st)
{
	(void)st;
	return UINT64_MAX;
}

const struct fab_cc_ops fab_cc_none = {
	.name = "none",
	.label = "none",
	.transports = FAB_CC_ON_ROCE | FAB_CC_ON_TCP | FAB_CC_ON_IB,
	.state_size = sizeof(struct cc_none),
	.feedback = FAB_CC_FEEDBACK_NONE,
	.init = none_init,
	.on_sent = none_sent,
	.on_congestion = none_congestion,
	.rate_bps = none_rate,
	.window_bytes = none_window,
};
