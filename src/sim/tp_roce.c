/*
 * tp_roce.c - RoCEv2, as every layer sees it: its framing, its defaults
 * (lossless priorities under PFC, DCQCN on), and its line in the text
 * summary.  Its queue pairs are src/packet/roce.c.
 *
 * Framing (InfiniBand Architecture Specification, Annex A17): a data
 * packet is Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4 +
 * FCS 4, so 62 bytes beyond its payload and 82 on the wire with preamble
 * and gap; an ACK adds the 4-byte AETH to the same headers (66 bytes); a
 * CNP carries 16 reserved bytes after its BTH (78 bytes).  UDP destination
 * port 4791.
 */
#include <stdio.h>

#include "sim.h"

static void describe(const struct fab_fabric_params *fp, const char *cc_label, bool cc_on, char *buf, size_t len)
{
	char a[32];
	/* (no congestion control: "DCQCN off", as ever) */
	snprintf(buf, len, "MTU %u, buffer %s/switch, PFC %s, ECN %s, %s %s", fp->mtu,
		 fab_fmt_bytes(fp->buffer_bytes, a, sizeof a), fp->pfc.enabled ? "on" : "off",
		 fp->ecn.enabled ? "on" : "off", cc_on ? cc_label : "DCQCN", cc_on ? "on" : "off");
}

const struct fab_transport_info fab_tp_roce = {
	.name = "roce",
	.label = "RoCEv2",
	.doc = "roce: RoCEv2 queue pairs on lossless priorities (PFC, ECN, DCQCN)",
	.link = FAB_LINK_ETHERNET,
	.flags = FAB_TP_FLUID_CC,
	.wire =
		{
			.name = "roce",
			.data_overhead = FAB_ETH + FAB_IPV4 + FAB_UDP + FAB_BTH + FAB_ICRC + FAB_FCS,
			.ack_frame = FAB_ETH + FAB_IPV4 + FAB_UDP + FAB_BTH + FAB_AETH + FAB_ICRC + FAB_FCS,
			.notify_frame = FAB_ETH + FAB_IPV4 + FAB_UDP + FAB_BTH + FAB_CNP_PAD + FAB_ICRC + FAB_FCS,
			.udp_dport = 4791,
			.preamble_ifg = FAB_WIRE_PREAMBLE_IFG,
		},
	.qp = "roce",
	.llfc = "pfc",
	.notify_counter = "CNPs",
	.describe = describe,
};
