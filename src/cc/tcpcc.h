/*
 * tcpcc.h - TCP's window-based congestion controls behind cc.h: NewReno
 * (RFC 5681, 6582), CUBIC (RFC 8312) and DCTCP (RFC 8257), and the TCP
 * transport's parameters they share.
 *
 * Each keeps a congestion window in bytes (window_bytes) and sends at the
 * line rate within it (rate_bps).  The transport calls, per acknowledgement
 * of new data outside loss recovery, on_ack(acked bytes) and then, when the
 * ACK echoes ECN (ECE), on_congestion; on a fast retransmit on_loss; on a
 * retransmission timeout on_rto.
 * - NewReno: slow start (cwnd += acked, at most 2 MSS an ACK: RFC 3465
 *   with L = 2) up to ssthresh, then one MSS per window; a loss or an ECN
 *   echo (once a window, RFC 3168) halves it.
 * - CUBIC: after a reduction to beta x W_max (beta 0.7), the window follows
 *   W(t) = C (t - K)^3 + W_max in segments, K = cbrt(W_max (1 - beta) / C),
 *   C = 0.4, t the time since the reduction; never below the Reno-friendly
 *   estimate; fast convergence (a loss below the last W_max lowers it).
 * - DCTCP: alpha <- (1 - g) alpha + g F once a window, F the fraction of
 *   acknowledged bytes that carried an echo; the first echo of a window
 *   cuts cwnd by alpha / 2 (as Linux does); losses as NewReno.
 */
#ifndef FAB_TCPCC_H
#define FAB_TCPCC_H

#include "cc.h"

enum fab_tcp_cc { FAB_TCP_NEWRENO, FAB_TCP_CUBIC, FAB_TCP_DCTCP };

/* the parameters of the three (fabric.tcp.dctcp_g, cubic_c, cubic_beta);
 * the window's start and the segment size come with the path (attach) */
struct fab_tcpcc_params {
	double dctcp_g;             /* DCTCP's gain (1/16) */
	double cubic_c, cubic_beta; /* CUBIC's C (0.4) and beta (0.7) */
};
extern const struct fab_param_family fab_tcpcc_family;

extern const struct fab_cc_ops fab_cc_newreno;
extern const struct fab_cc_ops fab_cc_cubic;
extern const struct fab_cc_ops fab_cc_dctcp;

#endif
