/*
 * dcqcn.h - the DCQCN reaction point (sender-side rate control of RoCEv2).
 *
 * Pure state machine, no simulator inside, so it is unit-tested alone.
 * Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015: on a CNP the current rate Rc is cut by alpha/2 and the
 * target Rt remembers the old rate; alpha is an EWMA of congestion (gain g)
 * that decays by (1-g) every alpha period without a CNP; the rate recovers
 * in stages driven by a timer and a byte counter: fast recovery (Rc moves
 * half way to Rt) for the first F steps, then additive increase (Rt += R_AI),
 * then hyper increase (Rt += i * R_HAI) once both counters pass F.
 * Defaults: the paper's gains and timers (g 1/256, K = T = 55us, B = 10MB),
 * R_AI and R_HAI scaled to 400G as HPCC's ns-3 scales them (5 and 50 Mbps
 * per 25 Gbps), and the NICs' shipped threshold F = 1 and target clamping
 * off.  With the paper's F = 5 and clamping, a 16-to-1 incast over-cuts and
 * leaves the bottleneck half idle; see doc/model.md.
 * Target clamping follows the NICs' option: with clamp_target off, a cut
 * that comes before any timer-driven increase keeps the old target, so a
 * burst of CNPs cannot drag the target down with the rate.
 * Alpha starts at initial_alpha at the queue pair's first CNP, and its
 * clock with it (the paper's and the NICs' rule: a queue pair that meets
 * congestion late cuts as one that meets it at once).  From then on it is
 * decayed lazily (on the next CNP) by the number of whole alpha periods
 * since the last update, which is the same as a periodic timer.
 * The notification point (the receiver) is separate: it sends at most one
 * CNP per queue pair per interval for CE-marked packets (fab_dcqcn_np_*).
 * fab_cc_dcqcn (cc.h) runs the reaction point behind the congestion-control
 * interface: a CNP cuts and (re)starts the rate timer T; the timer runs
 * while the rate is below the line rate.
 */
#ifndef FAB_DCQCN_H
#define FAB_DCQCN_H

#include "cc.h"

/* Which DCQCN: the paper's reaction point, or the NIC firmware's as HPCC's
 * ns-3 models it (dcqcn_nic.c). */
enum fab_dcqcn_variant { FAB_DCQCN_PAPER, FAB_DCQCN_FIRMWARE };
/* fabric.dcqcn.preset: the published configurations (dcqcn.c) */
enum fab_dcqcn_preset { FAB_DCQCN_PRESET_NONE, FAB_DCQCN_PRESET_PAPER, FAB_DCQCN_PRESET_FIRMWARE };

struct fab_dcqcn_params {
	bool enabled;                   /* the scenario's fabric.dcqcn.enabled, or the model fabric.cc chose */
	int preset;                     /* enum fab_dcqcn_preset */
	int variant;                    /* enum fab_dcqcn_variant */
	fab_time_ps decrease_period_ps; /* firmware: the rate is cut at most once per this, 4us */
	double g;                       /* alpha gain, 1/256 */
	double initial_alpha;           /* 1.0 */
	fab_time_ps alpha_period_ps;    /* alpha decay period K, 55us */
	fab_time_ps rate_period_ps;     /* rate-increase timer T, 55us */
	fab_bytes byte_counter;         /* rate-increase byte counter B, 10MB */
	uint32_t fast_recovery_steps;   /* F, 1 */
	fab_rate_bps rai_bps;           /* additive increase step R_AI, 80Mbps */
	fab_rate_bps rhai_bps;          /* hyper increase step R_HAI, 800Mbps */
	fab_rate_bps min_rate_bps;      /* floor of Rc, 100Mbps */
	bool clamp_target;              /* every cut sets Rt = Rc (the paper); false: only a
				    * cut after a timer increase does (NIC default) */
};

struct fab_dcqcn {
	double rc_bps;   /* current rate */
	double rt_bps;   /* target rate */
	double line_bps; /* the NIC's line rate: the ceiling */
	double alpha;
	fab_time_ps alpha_ref_ps; /* last alpha update */
	uint32_t timer_steps;     /* rate-timer expiries since the last cut */
	uint32_t byte_steps;      /* byte-counter expiries since the last cut */
	fab_bytes bytes_since;    /* bytes sent since the last byte step */
	uint64_t cuts;            /* CNP reactions so far */
};

/* the parameters of both DCQCNs (fabric.dcqcn.*) */
extern const struct fab_param_family fab_dcqcn_family;
extern const struct fab_cc_ops fab_cc_dcqcn;
extern const struct fab_cc_ops fab_cc_dcqcn_nic;

void fab_dcqcn_init(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, double line_bps);
/* Brings alpha up to now: one (1-g) factor per whole period since the last update. */
void fab_dcqcn_decay_alpha(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_time_ps now_ps);
void fab_dcqcn_on_cnp(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_time_ps now_ps);
void fab_dcqcn_on_rate_timer(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p);
void fab_dcqcn_on_bytes(struct fab_dcqcn *rp, const struct fab_dcqcn_params *p, fab_bytes bytes);
/* True while the rate is below the line rate (the timer should run). */
static inline bool fab_dcqcn_limited(const struct fab_dcqcn *rp)
{
	return rp->rc_bps < rp->line_bps;
}

/* The notification point's state, per queue pair at the receiver. */
struct fab_dcqcn_np {
	fab_time_ps last_cnp_ps;
	bool sent_once;
};

/* A CE-marked packet arrived at now: true when a CNP is to be sent (at most
 * one per interval). */
static inline bool fab_dcqcn_np_on_ce(struct fab_dcqcn_np *np, fab_time_ps interval_ps, fab_time_ps now_ps)
{
	if (np->sent_once && now_ps - np->last_cnp_ps < interval_ps)
		return false;
	np->sent_once = true;
	np->last_cnp_ps = now_ps;
	return true;
}

#endif
