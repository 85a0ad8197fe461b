/*
 * cc.h - congestion control: what happens to a connection in, how fast it
 * may send out.
 *
 * A congestion control is a pure state machine, with no simulator inside,
 * so that it is unit-tested alone and any engine can run it.  A transport
 * keeps one state per queue pair (at most FAB_CC_STATE_MAX bytes, inside its
 * own queue-pair struct) and feeds it events: data sent, acknowledged,
 * congestion notified (RoCE's CNP, TCP's ECN echo), loss, its timer.  It
 * answers with a rate (the pacing the NIC enforces) and a window (the bytes
 * in flight allowed; UINT64_MAX when it is purely rate-based).  Where it
 * needs a timer it says when (a delay from now; 0 for none), and the
 * transport owns the event.
 * DCQCN's reaction point as the paper has it (dcqcn.c) and as NIC firmware
 * runs it (dcqcn_nic.c); its notification point is the receiver's and
 * separate (fab_dcqcn_np_*).  `none` sends at line rate.
 */
#ifndef FAB_CC_H
#define FAB_CC_H

#include "../base/base.h"

#define FAB_CC_STATE_MAX 128

/* How the receiver tells the sender of CE-marked packets. */
enum fab_cc_feedback {
	FAB_CC_FEEDBACK_NONE, /* it does not */
	FAB_CC_FEEDBACK_CNP,  /* congestion notification packets, paced per queue pair (RoCE CNPs) */
	FAB_CC_FEEDBACK_ECHO, /* an echo on the ACK of each marked packet (TCP's ECE, firmware DCQCN) */
};

struct fab_cc_ops {
	const char *name;
	size_t state_size;
	int feedback; /* enum fab_cc_feedback */
	/* params: the algorithm's own parameter struct (DCQCN: fab_dcqcn_params),
	 * kept by pointer; line_bps: the most the sender can send */
	void (*init)(void *st, const void *params, double line_bps);
	void (*on_sent)(void *st, fab_bytes bytes);
	/* whether on_sent changes nothing in this state (no byte counter
	 * running); NULL: it may */
	bool (*sent_ignored)(const void *st);
	void (*on_ack)(void *st, fab_bytes acked, fab_time_ps now);
	/* returns the delay after which on_timer is due (a new timer replaces
	 * the old), 0 for no change */
	fab_time_ps (*on_congestion)(void *st, fab_time_ps now);
	void (*on_loss)(void *st, fab_time_ps now);
	/* returns the delay to the next expiry, 0 for none */
	fab_time_ps (*on_timer)(void *st, fab_time_ps now);
	double (*rate_bps)(const void *st);
	uint64_t (*window_bytes)(const void *st);
};

extern const struct fab_cc_ops fab_cc_none;
extern const struct fab_cc_ops fab_cc_dcqcn;
extern const struct fab_cc_ops fab_cc_dcqcn_nic;

#endif
