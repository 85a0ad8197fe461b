/*
 * hpcc.h - HPCC: High Precision Congestion Control (Li et al., SIGCOMM
 * 2019), a window and a rate set from in-band network telemetry.
 *
 * Every switch egress stamps the data packet with the time, the bytes the
 * port has sent, its queue and its rate; the ACK brings them back.  Per
 * hop the sender estimates the link's normalised inflight bytes
 *     u_j = qlen_j / (B_j T) + txRate_j / B_j
 * (the queue taken as the smaller of two successive samples), takes the
 * most loaded hop, smooths it over the base RTT T with the time between the
 * two samples, U = (1 - tau/T) U + (tau/T) u, and sets the window
 *     W = Wc / (U / eta) + W_AI   when U >= eta or after max_stage
 *                                 additive steps,
 *     W = Wc + W_AI               otherwise,
 * with Wc, the reference window, updated once per round trip (the first
 * ACK past the sequence sent when it was last updated) and the window
 * reacting to every ACK in between (fast reaction).  The rate is W / T and
 * the window in flight W (both from the rate, as HPCC's ns-3 keeps them:
 * rate R = W / T, window R x T).  W_AI = rai x T; the window starts at
 * B x T, the line rate.  Parameters (fabric.hpcc.*) with HPCC's ns-3
 * defaults for its 100G runs.
 */
#ifndef FAB_HPCC_H
#define FAB_HPCC_H

#include "cc.h"

struct fab_hpcc_params {
	double eta;           /* target utilisation, 0.95 */
	uint32_t max_stage;   /* additive steps before a multiplicative one, 0 */
	fab_rate_bps rai_bps; /* additive increase W_AI / T (0: 10 Mbps per 25 Gbps of line rate) */
	fab_rate_bps min_rate_bps;
	fab_time_ps base_rtt_ps; /* T (0: each queue pair's own path with empty queues) */
	bool fast_react;         /* the window follows every ACK, Wc every round trip */
	uint32_t int_bytes;      /* telemetry header on data packets and ACKs */
};

extern const struct fab_cc_ops fab_cc_hpcc;

#endif
