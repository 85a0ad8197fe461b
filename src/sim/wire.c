/*
 * wire.c - the transports' framing (wire.h).
 *
 * RoCEv2 (InfiniBand Architecture Specification, Annex A17): a data packet
 * is Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4 + FCS 4, so
 * 62 bytes beyond its payload and 82 on the wire with preamble and gap; an
 * ACK adds the 4-byte AETH to the same headers (66 bytes); a CNP carries 16
 * reserved bytes after its BTH (78 bytes).  UDP destination port 4791.
 * TCP over IPv4 (RFC 9293, RFC 7323): Ethernet 14 + IPv4 20 + TCP 20 +
 * the timestamps option 12 (10, padded to 12, as Linux sends it) + payload
 * + FCS 4, so 70 bytes beyond its payload (90 on the wire); a pure ACK is
 * the same headers (70 bytes, above Ethernet's 64-byte minimum); ECN's echo
 * rides on ACKs (no notification frame).
 * InfiniBand (IBA Volume 1, chapter 7): LRH 8 + BTH 12 + payload + ICRC 4
 * + VCRC 2, so 26 bytes beyond its payload; an ACK adds AETH 4 (30 bytes);
 * a congestion notification (CNP) carries 16 reserved bytes (42).  No
 * Ethernet preamble or gap: the link's encoding is in its rate, the
 * packet's start and end delimiters are not counted.
 */
#include "wire.h"

enum {
	ETH = 14,
	FCS = 4,
	IPV4 = 20,
	UDP = 8,
	BTH = 12,
	ICRC = 4,
	AETH = 4,
	CNP_PAD = 16,
	TCP = 20,
	TCP_TS = 12,
	LRH = 8,
	VCRC = 2,
};

static const struct fab_wire wires[FAB_TRANSPORT_COUNT] = {
	[FAB_TRANSPORT_ROCE] =
		{
			.name = "roce",
			.data_overhead = ETH + IPV4 + UDP + BTH + ICRC + FCS,
			.ack_frame = ETH + IPV4 + UDP + BTH + AETH + ICRC + FCS,
			.notify_frame = ETH + IPV4 + UDP + BTH + CNP_PAD + ICRC + FCS,
			.udp_dport = 4791,
			.preamble_ifg = FAB_WIRE_PREAMBLE_IFG,
		},
	[FAB_TRANSPORT_TCP] =
		{
			.name = "tcp",
			.data_overhead = ETH + IPV4 + TCP + TCP_TS + FCS,
			.ack_frame = ETH + IPV4 + TCP + TCP_TS + FCS,
			.notify_frame = 0,
			.udp_dport = 5201,
			.preamble_ifg = FAB_WIRE_PREAMBLE_IFG,
		},
	[FAB_TRANSPORT_IB] =
		{
			.name = "ib",
			.data_overhead = LRH + BTH + ICRC + VCRC,
			.ack_frame = LRH + BTH + AETH + ICRC + VCRC,
			.notify_frame = LRH + BTH + CNP_PAD + ICRC + VCRC,
			.udp_dport = 0,
			.preamble_ifg = 0,
		},
};

const struct fab_wire *fab_wire_of(int transport)
{
	return &wires[transport];
}

struct fab_wire fab_wire_resolve(int transport, const struct fab_wire_params *p)
{
	struct fab_wire w = wires[transport];
	if (p->data_overhead)
		w.data_overhead = p->data_overhead;
	if (p->ack_frame)
		w.ack_frame = p->ack_frame;
	w.preamble_ifg = p->preamble_ifg;
	return w;
}

fab_bytes fab_pfc_headroom(fab_bytes headroom_bytes, double headroom_delays, uint32_t mtu, const struct fab_wire *w,
			   fab_rate_bps rate, fab_time_ps delay)
{
	if (headroom_bytes)
		return headroom_bytes;
	if (headroom_delays > 0) /* rate x delay x this (HPCC: 3) */
		return (fab_bytes)((double)rate * (double)delay * headroom_delays / (8.0 * (double)FAB_PS_PER_S));
	uint64_t rtt_bytes = (uint64_t)(((__uint128_t)rate * 2 * delay) / (8 * FAB_PS_PER_S));
	return rtt_bytes + 3ull * fab_wire_data_bytes(w, mtu) + FAB_PFC_FRAME + w->preamble_ifg;
}
