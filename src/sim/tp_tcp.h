/*
 * tp_tcp.h - the TCP transport's parameters (fabric.tcp.*), read by its
 * connections (src/packet/tcp.c) and the host's counters; its congestion
 * controls' are models of their own (src/cc/tcpcc.c).
 */
#ifndef FAB_TP_TCP_H
#define FAB_TP_TCP_H

#include "../base/base.h"

struct fab_tcp_params {
	int cc;                 /* fabric.tcp.cc: the index of its value (a model's name) */
	uint32_t mss;           /* payload bytes per segment (the fabric's MTU) */
	uint32_t init_cwnd;     /* segments (RFC 6928: 10) */
	fab_bytes rwnd_bytes;   /* the receiver's window: it holds this much out of order, and no more is in flight */
	fab_time_ps min_rto_ps; /* the retransmission timeout's floor, and its value before an RTT sample */
	uint32_t dupack_threshold; /* duplicate ACKs that trigger a fast retransmit (3) */
	bool delayed_ack;          /* acknowledge every second segment, or after delack_ps */
	fab_time_ps delack_ps;     /* the delayed-ACK timer */
	bool ecn;                  /* ECN-capable segments (DCTCP: always) */
	/* the host's cost of the stack */
	fab_time_ps cpu_packet_ps; /* CPU time per segment or ACK, at each end */
	double cpu_byte_ps;        /* CPU time per payload byte, at each end (copies, checksums) */
	fab_time_ps kernel_ps;     /* per message: system call, stack and wake-up before the data moves */
};

#endif
