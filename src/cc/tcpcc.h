/*
 * tcpcc.h - TCP's window-based congestion controls behind cc.h: NewReno
 * (RFC 5681, 6582), CUBIC (RFC 8312) and DCTCP (RFC 8257), and the TCP
 * transport's parameters they share.
 *
 * Each keeps a congestion window in bytes (window_bytes) and sends at the
 * line rate within it (rate_bps).  The transport calls, per acknowledgement
 * of new data outside loss recovery, on_ack(acked bytes) and then, when the
 * ACK echoes ECN (ECE), on_congestion; on a fast retransmit on_loss; on a
 * retransmission timeout the on_rto below.
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

struct fab_tcp_params {
	int cc;                 /* enum fab_tcp_cc */
	uint32_t mss;           /* payload bytes per segment (the fabric's MTU) */
	uint32_t init_cwnd;     /* segments (RFC 6928: 10) */
	fab_bytes rwnd_bytes;   /* the receiver's window: it holds this much out of order, and no more is in flight */
	fab_time_ps min_rto_ps; /* the retransmission timeout's floor, and its value before an RTT sample */
	uint32_t dupack_threshold;  /* duplicate ACKs that trigger a fast retransmit (3) */
	bool delayed_ack;           /* acknowledge every second segment, or after delack_ps */
	fab_time_ps delack_ps;      /* the delayed-ACK timer */
	bool ecn;                   /* ECN-capable segments (DCTCP: always) */
	double dctcp_g;             /* DCTCP's gain (1/16) */
	double cubic_c, cubic_beta; /* CUBIC's C (0.4) and beta (0.7) */
	/* the host's cost of the stack */
	fab_time_ps cpu_packet_ps; /* CPU time per segment or ACK, at each end */
	double cpu_byte_ps;        /* CPU time per payload byte, at each end (copies, checksums) */
	fab_time_ps kernel_ps;     /* per message: system call, stack and wake-up before the data moves */
};

/* a retransmission timeout: the window collapses to one segment */
void fab_tcpcc_on_rto(void *st, fab_time_ps now);

extern const struct fab_cc_ops fab_cc_newreno;
extern const struct fab_cc_ops fab_cc_cubic;
extern const struct fab_cc_ops fab_cc_dctcp;

#endif
