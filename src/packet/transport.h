/*
 * transport.h - what a transport implements in the packet engine.
 *
 * The NIC (nic.c) owns the wire: it schedules queue pairs onto its port
 * under PAUSE and the PCIe link's pace.  A transport owns the protocol and
 * all of a queue pair's state beyond struct sim_qp: messages and sequence
 * numbers, what the receiver answers, its timers, its congestion control
 * (cc.h) and so its pacing; its framing is its struct fab_wire (wire.h).
 * Its queue-pair struct embeds struct sim_qp first.  A transport's
 * description (src/sim/transports.h) names the queue pairs it runs on, and
 * models.c lists every implementation, one line each: RoCEv2's (roce.c,
 * which InfiniBand's description names too, with its own framing) and
 * TCP's (tcp.c).  doc/extending.md walks through
 * adding one.
 */
#ifndef FAB_TRANSPORT_H
#define FAB_TRANSPORT_H

#include "packet_int.h"

struct fab_transport_ops {
	const char *name;
	size_t qp_size; /* its queue-pair struct, struct sim_qp first */
	/* a queue pair was opened (ends and 5-tuple filled in) */
	void (*init)(struct psim *s, struct sim_qp *qp);
	/* the NIC's line rate changed (the server's PCIe cap was set) */
	void (*line_changed)(struct psim *s, struct sim_qp *qp);
	/* its congestion control back to its start, its pending timers
	 * dropped (fab_sim_rest; NULL: line_changed does it) */
	void (*rest)(struct psim *s, struct sim_qp *qp);
	void (*destroy)(struct sim_qp *qp);
	/* a message of `bytes`; flow NO_FLOW: a posted one, `cookie` back */
	void (*post)(struct psim *s, struct sim_qp *qp, fab_bytes bytes, uint32_t flow, uint32_t cookie);
	/* the receiver's copy of a flow's message that another rank's process
	 * posts at at_ps (a run split over ranks: parallel.c); nothing sends */
	void (*expect)(struct psim *s, struct sim_qp *qp, fab_bytes bytes, uint32_t flow, fab_time_ps at_ps);
	/* True while qp has data it may send (new or retransmitted). */
	bool (*has_data)(const struct sim_qp *qp);
	/* the earliest time its pacing lets it send the next packet */
	fab_time_ps (*earliest)(const struct sim_qp *qp);
	/* The NIC may send one data packet for qp now: build it, or NULL. */
	struct pkt *(*next_packet)(struct psim *s, struct sim_qp *qp);
	/* that packet, `wire` bytes, went out on a port of rate `line`:
	 * returns the earliest time of the next */
	fab_time_ps (*sent)(struct psim *s, struct sim_qp *qp, uint32_t wire, fab_rate_bps line);
	/* A packet of qp arrived at a NIC (either end); the transport owns it. */
	void (*on_receive)(struct psim *s, struct sim_nic *nic, struct pkt *p);
	/* its timers: EV_RTO and EV_CC_TIMER (obj: the queue pair) */
	void (*on_timer)(struct psim *s, const struct fab_ev *ev);
	/* the rate it sends at now (the time series) */
	double (*rate_bps)(const struct sim_qp *qp);
};

extern const struct fab_transport_ops fab_roce_transport;
extern const struct fab_transport_ops fab_tcp_transport;
/* an implementation by name (models.c), NULL if none */
const struct fab_transport_ops *pkt_qp_find(const char *name);

static inline const struct fab_transport_ops *qp_transport(const struct sim_qp *qp)
{
	return qp->tp;
}

#endif
