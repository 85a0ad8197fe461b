/*
 * tcpcc.c - NewReno, CUBIC and DCTCP as cc.h state machines (tcpcc.h).
 */
#include <math.h>
#include <stddef.h>

#include "tcpcc.h"

struct tcpcc {
	const struct fab_tcpcc_params *p;
	uint8_t kind;    /* enum fab_tcp_cc */
	bool cwr;        /* reduced for ECN in this window */
	double cwnd;     /* bytes */
	double ssthresh; /* bytes */
	double mss, line_bps;
	/* the observation window (about one RTT of data): ECN reacts once a
	 * window, DCTCP updates alpha at its end */
	double acked_total, window_end, win_acked, win_marked, last_acked;
	double alpha;
	/* CUBIC, in segments and seconds */
	double w_max, k_s, w_est;
	fab_time_ps epoch_ps; /* the last reduction; FAB_TIME_NEVER: none yet */
};

_Static_assert(sizeof(struct tcpcc) <= FAB_CC_STATE_MAX, "tcpcc state too big");

static void init(void *st, const void *params, double line_bps, int kind)
{
	struct tcpcc *c = st;
	*c = (struct tcpcc){.p = params, .kind = (uint8_t)kind, .line_bps = line_bps};
	c->ssthresh = 1e18;
	c->alpha = 1; /* DCTCP starts cautious (RFC 8257) */
	c->epoch_ps = FAB_TIME_NEVER;
}

/* the segment size and the initial window (RFC 6928), from the transport */
static void attach(void *st, const struct fab_cc_env *env)
{
	struct tcpcc *c = st;
	c->mss = env->mss;
	c->cwnd = (double)env->init_cwnd * c->mss;
	c->window_end = c->cwnd;
}

static void newreno_init(void *st, const void *params, double line_bps)
{
	init(st, params, line_bps, FAB_TCP_NEWRENO);
}

static void cubic_init(void *st, const void *params, double line_bps)
{
	init(st, params, line_bps, FAB_TCP_CUBIC);
}

static void dctcp_init(void *st, const void *params, double line_bps)
{
	init(st, params, line_bps, FAB_TCP_DCTCP);
}

static void on_sent(void *st, fab_bytes bytes)
{
	(void)st;
	(void)bytes;
}

/* a multiplicative decrease to factor x cwnd (a loss, an echo) */
static void reduce(struct tcpcc *c, double factor, fab_time_ps now)
{
	if (c->kind == FAB_TCP_CUBIC) {
		double w = c->cwnd / c->mss;
		/* fast convergence: a flow that lost below its last peak yields */
		c->w_max = w < c->w_max ? w * (1 + c->p->cubic_beta) / 2 : w;
		factor = c->p->cubic_beta;
	}
	c->cwnd = fmax(c->cwnd * factor, 2 * c->mss);
	c->ssthresh = c->cwnd;
	if (c->kind == FAB_TCP_CUBIC) {
		c->epoch_ps = now;
		c->w_est = c->cwnd / c->mss;
		c->k_s = cbrt(fmax(c->w_max - c->cwnd / c->mss, 0) / c->p->cubic_c);
	}
}

/* the window of segments CUBIC aims at, t seconds after the reduction */
static double cubic_target(const struct tcpcc *c, double t)
{
	double d = t - c->k_s;
	return c->p->cubic_c * d * d * d + c->w_max;
}

static void on_ack(void *st, fab_bytes acked, fab_time_ps now)
{
	struct tcpcc *c = st;
	double a = (double)acked;
	c->last_acked = a;
	c->acked_total += a;
	c->win_acked += a;
	if (c->cwnd < c->ssthresh) {
		c->cwnd += fmin(a, 2 * c->mss); /* slow start */
	} else if (c->kind == FAB_TCP_CUBIC && c->epoch_ps != FAB_TIME_NEVER) {
		double w = c->cwnd / c->mss, t = (double)(now - c->epoch_ps) / 1e12;
		double beta = c->p->cubic_beta;
		c->w_est += 3 * (1 - beta) / (1 + beta) * (a / c->mss) / w;
		double target = fmax(cubic_target(c, t), c->w_est);
		if (target > w)
			c->cwnd += (target - w) / w * a;
		else
			c->cwnd += a / (100 * w);
	} else {
		c->cwnd += c->mss * a / c->cwnd; /* congestion avoidance */
	}
	if (c->acked_total >= c->window_end) {
		if (c->kind == FAB_TCP_DCTCP && c->win_acked > 0) {
			double g = c->p->dctcp_g;
			c->alpha = (1 - g) * c->alpha + g * c->win_marked / c->win_acked;
		}
		c->win_acked = c->win_marked = 0;
		c->window_end = c->acked_total + c->cwnd;
		c->cwr = false;
	}
}

static fab_time_ps on_congestion(void *st, fab_time_ps now)
{
	struct tcpcc *c = st;
	if (c->kind == FAB_TCP_DCTCP)
		c->win_marked += c->last_acked;
	if (!c->cwr) {
		c->cwr = true;
		reduce(c, c->kind == FAB_TCP_DCTCP ? 1 - c->alpha / 2 : 0.5, now);
	}
	return 0;
}

static void on_loss(void *st, fab_time_ps now)
{
	struct tcpcc *c = st;
	reduce(c, 0.5, now);
	c->cwr = true; /* no second reduction for ECN in this window */
}

static void on_rto(void *st, fab_time_ps now)
{
	struct tcpcc *c = st;
	double before = c->cwnd;
	reduce(c, 0.5, now);
	c->ssthresh = fmax(before / 2, 2 * c->mss);
	c->cwnd = c->mss;
	if (c->kind == FAB_TCP_CUBIC)
		c->w_est = 1;
}

static fab_time_ps on_timer(void *st, fab_time_ps now)
{
	(void)st;
	(void)now;
	return 0;
}

static double rate(const void *st)
{
	return ((const struct tcpcc *)st)->line_bps;
}

static uint64_t window(const void *st)
{
	return (uint64_t)((const struct tcpcc *)st)->cwnd;
}

#define OFF(field) offsetof(struct fab_tcpcc_params, field)

static const struct fab_key_def tcpcc_keys[] = {
	{"fabric.tcp.dctcp_g", K_DOUBLE, OFF(dctcp_g), "1/16", 1e-6, 1, NULL, "DCTCP's gain g (RFC 8257)"},
	{"fabric.tcp.cubic_c", K_DOUBLE, OFF(cubic_c), "0.4", 1e-3, 100, NULL, "CUBIC's C (RFC 8312)"},
	{"fabric.tcp.cubic_beta", K_DOUBLE, OFF(cubic_beta), "0.7", 0.1, 0.99, NULL,
	 "CUBIC's multiplicative decrease (RFC 8312)"},
};

const struct fab_param_family fab_tcpcc_family = {
	.prefix = "fabric.tcp",
	.size = sizeof(struct fab_tcpcc_params),
	.keys = tcpcc_keys,
	.nkeys = FAB_ARRAY_LEN(tcpcc_keys),
};

#define TCPCC(NAME, LABEL, WANTS, INIT)                                                                                \
	{                                                                                                              \
		.name = NAME, .label = LABEL, .transports = FAB_CC_ON_TCP, .wants = WANTS,                             \
		.family = &fab_tcpcc_family, .state_size = sizeof(struct tcpcc), .feedback = FAB_CC_FEEDBACK_ECHO,     \
		.init = INIT, .attach = attach, .on_sent = on_sent, .on_ack = on_ack, .on_congestion = on_congestion,  \
		.on_loss = on_loss, .on_rto = on_rto, .on_timer = on_timer, .rate_bps = rate, .window_bytes = window,  \
	}

const struct fab_cc_ops fab_cc_newreno = TCPCC("newreno", "NewReno", 0, newreno_init);
const struct fab_cc_ops fab_cc_cubic = TCPCC("cubic", "CUBIC", 0, cubic_init);
/* ECN on every segment, and switches that mark at one threshold */
const struct fab_cc_ops fab_cc_dctcp = TCPCC("dctcp", "DCTCP", FAB_CC_WANTS_ECT | FAB_CC_WANTS_STEP, dctcp_init);
