/*
 * llfc.h - link-level flow control in the packet engine: what keeps a
 * lossless priority lossless.
 *
 * The switch's buffer (mmu.c) admits frames and accounts them per ingress
 * port and priority; for a lossless priority it asks the link-level flow
 * control whether there is room and tells it when bytes come and go, and
 * the flow control tells the upstream port to stop or go.  A port's egress
 * (switch.c, nic.c) skips the priorities in its paused_mask, which the flow
 * control sets.  PFC (IEEE 802.1Qbb, pfc.c) is the first implementation;
 * InfiniBand's credits (credit.c) the other: a sender's lane holds while
 * the receiver has advertised too little room, and released bytes return
 * credits upstream.
 */
#ifndef FAB_LLFC_H
#define FAB_LLFC_H

#include "packet_int.h"

struct pkt_llfc_ops {
	const char *name;
	/* the priorities it keeps lossless (bit p = priority p) */
	uint8_t (*lossless_mask)(const struct psim *s);
	/* a port is built: its headroom (and what else the control keeps per
	 * port); switch ports set their switch's pool aside */
	void (*init_port)(struct psim *s, struct sim_port *port);
	/* a switch port's headroom and pause threshold on an empty switch */
	void (*port_thresholds)(const struct psim *s, const struct sim_port *port, fab_bytes *headroom,
				fab_bytes *xoff);
	/* room at ingress port `in` for `size` more bytes of lossless prio */
	bool (*room)(const struct psim *s, const struct sim_port *in, unsigned prio, uint32_t size);
	/* `size` bytes of lossless prio from `in` were admitted / left the
	 * switch (in->in_bytes already counts the change) */
	void (*admitted)(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size);
	void (*released)(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size);
	/* a data frame reached a NIC (its receive buffer toward the GPU) */
	void (*nic_received)(struct psim *s, struct sim_nic *nic, const struct pkt *p);
	/* sends the port's pending control frame, if any, before anything else */
	bool (*send_pending)(struct psim *s, struct sim_port *port);
	/* a control frame (PKT_PFC) arrived at port; the caller frees it */
	void (*receive)(struct psim *s, struct sim_port *port, const struct pkt *p);
	/* its own events (EV_PAUSE_EXPIRE, EV_PFC_REFRESH, EV_NIC_DRAIN) */
	void (*on_event)(struct psim *s, const struct fab_ev *ev);
	/* the run ends: close the port's open intervals */
	void (*finish)(struct psim *s, struct sim_port *port);
	/* sends a PAUSE (quanta > 0) or RESUME (0) for prio from port, as a
	 * storming NIC does (faults) */
	void (*send)(struct psim *s, struct sim_port *port, unsigned prio, uint16_t quanta);
	/* optional (NULL: none): a frame of a lossless priority left port for
	 * its peer; a frame that arrived at port `in` was dropped or lost on
	 * the wire before the buffer held it */
	void (*sent)(struct psim *s, struct sim_port *port, const struct pkt *p);
	void (*lost)(struct psim *s, struct sim_port *in, const struct pkt *p);
	/* optional: the fabric rests, nothing in flight (fab_sim_rest): what
	 * the control still holds back is settled */
	void (*rest)(struct psim *s);
	/* port's link delay changed (a delay fault): what depends on it, the
	 * headroom; NULL when nothing does */
	void (*delay_changed)(struct psim *s, struct sim_port *port);
};

extern const struct pkt_llfc_ops pkt_pfc;
extern const struct pkt_llfc_ops pkt_credit;
/* a flow control by name (models.c, one line each), NULL if none; a
 * transport's description names its own */
const struct pkt_llfc_ops *pkt_llfc_find(const char *name);

#endif
