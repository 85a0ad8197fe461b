/*
 * hpcc.c - HPCC behind cc.h (hpcc.h): the window from each ACK's in-band
 * telemetry, the rate W / T.
 */
#include <math.h>
#include <stddef.h>

#include "hpcc.h"

struct hop_rec {
	fab_time_ps ts_ps;
	uint64_t tx_bytes;
	uint32_t qlen_bytes;
};

struct cc_hpcc {
	const struct fab_hpcc_params *p;
	double line_bps, rate_bps, ref_bps; /* the rate, and Wc / T */
	double rai_bps, u;
	fab_time_ps t_ps;         /* T */
	uint64_t last_update_seq; /* Wc moves on the first ACK past this */
	uint32_t stage;           /* additive steps since the last multiplicative one */
	uint8_t nhops;            /* the telemetry of the last ACK */
	bool seen;                /* an ACK with telemetry came */
	struct hop_rec hop[FAB_CC_INT_HOPS];
};

_Static_assert(sizeof(struct cc_hpcc) <= FAB_CC_STATE_MAX, "HPCC's state too big");

static void hpcc_init(void *st, const void *params, double line_bps)
{
	struct cc_hpcc *c = st;
	const struct fab_hpcc_params *p = params;
	*c = (struct cc_hpcc){.p = p, .line_bps = line_bps, .rate_bps = line_bps, .ref_bps = line_bps, .u = 1};
	c->rai_bps = p->rai_bps ? (double)p->rai_bps : 10e6 * line_bps / 25e9;
	c->t_ps = p->base_rtt_ps ? p->base_rtt_ps : 10 * FAB_PS_PER_US;
}

static void hpcc_attach(void *st, const struct fab_cc_env *env)
{
	struct cc_hpcc *c = st;
	if (!c->p->base_rtt_ps && env->base_rtt_ps)
		c->t_ps = env->base_rtt_ps;
}

/* the most loaded hop's normalised inflight bytes since the last ACK's
 * telemetry, and the time between the two samples there */
static double max_inflight(const struct cc_hpcc *c, const struct fab_cc_sample *smp, fab_time_ps *tau_out)
{
	double umax = -1, T = (double)c->t_ps / 1e12;
	uint32_t n = FAB_MIN(smp->nhops, c->nhops);
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_int_hop *h = &smp->hops[i];
		if (h->ts_ps <= c->hop[i].ts_ps || !h->rate_bps)
			continue;
		fab_time_ps tau = h->ts_ps - c->hop[i].ts_ps;
		double B = (double)h->rate_bps;
		double tx = (double)(h->tx_bytes - c->hop[i].tx_bytes) * 8 / ((double)tau / 1e12);
		double q = (double)FAB_MIN(h->qlen_bytes, c->hop[i].qlen_bytes);
		double u = q * 8 / (B * T) + tx / B;
		if (u > umax) {
			umax = u;
			*tau_out = tau;
		}
	}
	return umax;
}

static void remember(struct cc_hpcc *c, const struct fab_cc_sample *smp)
{
	c->nhops = (uint8_t)FAB_MIN(smp->nhops, FAB_CC_INT_HOPS);
	for (uint32_t i = 0; i < c->nhops; i++)
		c->hop[i] = (struct hop_rec){smp->hops[i].ts_ps, smp->hops[i].tx_bytes, smp->hops[i].qlen_bytes};
}

static void hpcc_sample(void *st, const struct fab_cc_sample *smp)
{
	struct cc_hpcc *c = st;
	const struct fab_hpcc_params *p = c->p;
	if (!smp->nhops)
		return;
	if (!c->seen) { /* the first round trip: a reference to measure from */
		c->seen = true;
		c->last_update_seq = smp->sent_seq;
		remember(c, smp);
		return;
	}
	bool update_ref = smp->acked_seq > c->last_update_seq;
	fab_time_ps tau = 0;
	double umax = update_ref || p->fast_react ? max_inflight(c, smp, &tau) : -1;
	if (umax >= 0) {
		tau = FAB_MIN(tau, c->t_ps);
		double f = (double)tau / (double)c->t_ps;
		c->u = (1 - f) * c->u + f * umax;
		double k = c->u / p->eta, r;
		uint32_t stage;
		if (k >= 1 || c->stage >= p->max_stage) {
			r = c->ref_bps / k + c->rai_bps;
			stage = 0;
		} else {
			r = c->ref_bps + c->rai_bps;
			stage = c->stage + 1;
		}
		r = fmin(fmax(r, (double)p->min_rate_bps), c->line_bps);
		if (update_ref) {
			c->ref_bps = r;
			c->stage = stage;
		}
		c->rate_bps = r;
	}
	if (update_ref)
		c->last_update_seq = smp->sent_seq;
	remember(c, smp);
}

static void hpcc_sent(void *st, fab_bytes bytes)
{
	(void)st;
	(void)bytes;
}

static fab_time_ps hpcc_congestion(void *st, fab_time_ps now)
{
	(void)st;
	(void)now;
	return 0;
}

static double hpcc_rate(const void *st)
{
	return ((const struct cc_hpcc *)st)->rate_bps;
}

/* W = R x T (HPCC's ns-3: the window follows the rate) */
static uint64_t hpcc_window(const void *st)
{
	const struct cc_hpcc *c = st;
	return (uint64_t)(c->rate_bps * (double)c->t_ps / 8e12) + 1;
}

static uint32_t hpcc_header(const void *params)
{
	return ((const struct fab_hpcc_params *)params)->int_bytes;
}

#define OFF(field) offsetof(struct fab_hpcc_params, field)

static const struct fab_key_def hpcc_keys[] = {
	{"fabric.hpcc.eta", K_DOUBLE, OFF(eta), "0.95", 0.5, 1, NULL, "HPCC: target utilisation of the busiest link"},
	{"fabric.hpcc.max_stage", K_U32, OFF(max_stage), "0", 0, 100, NULL,
	 "HPCC: additive steps of the reference window before a multiplicative one is forced (HPCC's ns-3: 0; the "
	 "paper: 5)"},
	{"fabric.hpcc.rai", K_RATE, OFF(rai_bps), "0", 0, 1e11, NULL,
	 "HPCC: the additive increase W_AI as a rate (W_AI / T); 0: 10 Mbps per 25 Gbps of the NIC's line rate "
	 "(HPCC's scripts)"},
	{"fabric.hpcc.min_rate", K_RATE, OFF(min_rate_bps), "100Mbps", 1e3, 1e12, NULL, "HPCC: the lowest rate"},
	{"fabric.hpcc.base_rtt", K_TIME, OFF(base_rtt_ps), "0", 0, 1e10, NULL,
	 "HPCC: T, the base round trip; 0: each queue pair's own (its path with empty queues, a full data packet "
	 "out and its ACK back)"},
	{"fabric.hpcc.fast_react", K_BOOL, OFF(fast_react), "true", 0, 0, NULL,
	 "HPCC: the window reacts to every ACK (the reference window once a round trip)"},
	{"fabric.hpcc.int_bytes", K_U32, OFF(int_bytes), "42", 0, 200, NULL,
	 "HPCC: bytes of in-band telemetry on every data packet and ACK (HPCC's ns-3: 2 + 8 per hop for 5 hops)"},
};

static const struct fab_param_family hpcc_family = {
	.prefix = "fabric.hpcc",
	.size = sizeof(struct fab_hpcc_params),
	.keys = hpcc_keys,
	.nkeys = FAB_ARRAY_LEN(hpcc_keys),
};

const struct fab_cc_ops fab_cc_hpcc = {
	.name = "hpcc",
	.label = "HPCC",
	.transports = FAB_CC_ON_ROCE | FAB_CC_ON_IB,
	.wants = FAB_CC_WANTS_SAMPLE | FAB_CC_WANTS_INT,
	.family = &hpcc_family,
	.state_size = sizeof(struct cc_hpcc),
	.feedback = FAB_CC_FEEDBACK_NONE,
	.init = hpcc_init,
	.attach = hpcc_attach,
	.header_bytes = hpcc_header,
	.on_sent = hpcc_sent,
	.on_sample = hpcc_sample,
	.on_congestion = hpcc_congestion,
	.rate_bps = hpcc_rate,
	.window_bytes = hpcc_window,
};
