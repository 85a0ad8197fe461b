/*
 * wire.h - what goes on an Ethernet wire, and what each transport adds.
 *
 * Ethernet's own costs (preamble, inter-frame gap, the PFC frame) are the
 * link's.  A transport's framing (struct fab_wire) is the transport's: the
 * bytes a data packet carries beyond its payload, its acknowledgement and
 * congestion-notification frames, its UDP port.  Both engines and the
 * collective cost model read a transport's overheads from here and from
 * nowhere else; each transport's, with their header breakdown, are in its
 * description (transports.h, tp_<name>.c).
 */
#ifndef FAB_WIRE_H
#define FAB_WIRE_H

#include "../base/base.h"

enum {
	FAB_WIRE_PREAMBLE_IFG = 20, /* preamble 7 + SFD 1 + inter-frame gap 12 */
	FAB_PFC_FRAME = 64,         /* a PFC PAUSE frame, minimum Ethernet frame */
};

/* The headers transports are made of, in bytes (their descriptions,
 * tp_<name>.c, add them up). */
enum {
	FAB_ETH = 14,     /* Ethernet II: addresses and type */
	FAB_FCS = 4,      /* Ethernet's frame check */
	FAB_IPV4 = 20,    /* IPv4 without options */
	FAB_UDP = 8,      /* UDP */
	FAB_TCP = 20,     /* TCP without options */
	FAB_TCP_TS = 12,  /* TCP's timestamps option, padded */
	FAB_BTH = 12,     /* InfiniBand's base transport header */
	FAB_AETH = 4,     /* its ACK extended header */
	FAB_ICRC = 4,     /* its invariant CRC */
	FAB_CNP_PAD = 16, /* a CNP's reserved bytes */
	FAB_LRH = 8,      /* InfiniBand's local route header */
	FAB_VCRC = 2,     /* its variant CRC */
};

/* The framing a scenario asks for instead of the transport's (0: the
 * transport's), to match another simulator's (fabric.wire.*). */
struct fab_wire_params {
	uint32_t data_overhead, ack_frame; /* 0: the transport's */
	uint32_t preamble_ifg;             /* what a frame costs beyond itself on the line */
};

struct fab_wire {
	const char *name;
	uint32_t data_overhead; /* frame bytes of a data packet beyond its payload, FCS included */
	uint32_t ack_frame;     /* an acknowledgement's frame bytes */
	uint32_t notify_frame;  /* a congestion notification's frame bytes (RoCE: CNP) */
	uint16_t udp_dport;     /* the 5-tuple's destination port */
	uint32_t preamble_ifg;  /* Ethernet's preamble, start delimiter and gap: 20 */
};

/* a transport's own framing (enum fab_transport_kind; transports.c) */
const struct fab_wire *fab_wire_of(int transport);
/* the transport's framing with the scenario's overrides */
struct fab_wire fab_wire_resolve(int transport, const struct fab_wire_params *p);

/* a data packet of `payload` bytes on the wire: frame, preamble and gap */
static inline uint32_t fab_wire_data_bytes(const struct fab_wire *w, uint32_t payload)
{
	return payload + w->data_overhead + w->preamble_ifg;
}

/* payload bytes per wire byte with full packets of `mtu` bytes */
static inline double fab_wire_efficiency(const struct fab_wire *w, uint32_t mtu)
{
	return (double)mtu / (double)fab_wire_data_bytes(w, mtu);
}

/* A switch port's PFC headroom (both engines size it alike): the bytes
 * given (fabric.pfc.headroom), else rate x link delay x headroom_delays,
 * else what the upstream still sends once the switch decides to pause (a
 * round trip of the link, three frames being serialised, the PAUSE). */
fab_bytes fab_pfc_headroom(fab_bytes headroom_bytes, double headroom_delays, uint32_t mtu, const struct fab_wire *w,
			   fab_rate_bps rate, fab_time_ps delay);

#endif
