/*
 * swift.h - Swift: delay-based congestion control (Kumar et al., SIGCOMM
 * 2020), a window in packets kept around a target delay.
 *
 * Each ACK brings a round-trip sample (the acknowledged packet's send to
 * the ACK's arrival; none for a resent packet).  Below the target the
 * window grows by ai / cwnd a packet acknowledged (ai a round trip; ai per
 * packet below one packet), above it it shrinks, at most once a round
 * trip, to max(1 - beta (delay - target) / delay, 1 - max_mdf) cwnd; a
 * loss (a retransmission timeout; on TCP also a fast retransmit) cuts by
 * max_mdf, at most once a round trip.  The window stays within
 * [min_cwnd, max_cwnd]; below one packet the queue pair is paced at
 * cwnd packets a round trip.  The target is the queue pair's base round
 * trip (its path through empty queues) plus fabric.swift.target, plus
 * hop_scale for each switch on the path, plus the paper's flow scaling
 * (alpha / sqrt(cwnd) + beta', within [0, fs_range]; off while fs_range is
 * 0).
 */
#ifndef FAB_SWIFT_H
#define FAB_SWIFT_H

#include "cc.h"

struct fab_swift_params {
	fab_time_ps target_ps;   /* queueing delay allowed beyond the base round trip */
	fab_time_ps hop_ps;      /* and per switch hop */
	fab_time_ps fs_range_ps; /* flow scaling's range (0: off) */
	double fs_min_cwnd, fs_max_cwnd;
	double ai;                 /* additive increase, packets a round trip */
	double beta;               /* multiplicative decrease constant */
	double max_mdf;            /* the largest cut */
	double min_cwnd, max_cwnd; /* packets (max 0: the path's bandwidth-delay product) */
};

extern const struct fab_cc_ops fab_cc_swift;

#endif
