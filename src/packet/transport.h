/*
 * transport.h - what a NIC transport implements.
 *
 * The NIC (nic.c) owns the wire: it schedules queue pairs onto its port under
 * rate limits and PAUSE.  A transport owns the protocol: which packet a
 * queue pair sends next, what the receiver answers, what timers do.  RoCEv2
 * (roce.c) is the first; InfiniBand and TCP are other implementations of
 * the same table.
 */
#ifndef FAB_TRANSPORT_H
#define FAB_TRANSPORT_H

#include "packet_int.h"

struct fab_transport_ops {
	const char *name;
	/* The NIC may send one data packet for qp now: build it, or NULL. */
	struct pkt *(*next_packet)(struct psim *s, struct sim_qp *qp);
	/* True while qp has data it may send (new or retransmitted). */
	bool (*has_data)(const struct sim_qp *qp);
	/* A packet arrived at its destination NIC; the transport owns it. */
	void (*on_receive)(struct psim *s, struct sim_nic *nic, struct pkt *p);
	/* EV_RTO and EV_CC_TIMER. */
	void (*on_timer)(struct psim *s, const struct fab_ev *ev);
};

extern const struct fab_transport_ops fab_roce_transport;

#endif
