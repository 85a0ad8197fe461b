/*
 * tp_ib.c - InfiniBand RC, as every layer sees it: its framing, its
 * defaults (credits instead of PFC, no Ethernet preamble or gap, the
 * congestion control off unless fabric.dcqcn.enabled is given: FECN/BECN
 * as DCQCN's marks and CNPs), its one parameter and its line in the text
 * summary.  Its queue pairs are RoCE's (src/packet/roce.c) with this
 * framing; its link-level flow control is src/packet/credit.c.
 *
 * Framing (IBA Volume 1, chapter 7): LRH 8 + BTH 12 + payload + ICRC 4 +
 * VCRC 2, so 26 bytes beyond its payload; an ACK adds AETH 4 (30 bytes); a
 * congestion notification (CNP) carries 16 reserved bytes (42).  No
 * Ethernet preamble or gap: the link's encoding is in its rate, the
 * packet's start and end delimiters are not counted.
 */
#include <stddef.h>
#include <stdio.h>

#include "sim.h"
#include "tp_ib.h"

#define OFF(field) offsetof(struct fab_ib_params, field)

static const struct fab_key_def keys[] = {
	{"fabric.ib.vl_buffer", K_BYTES, OFF(vl_buffer_bytes), "256KiB", 32768, 1e10, NULL,
	 "InfiniBand: each port's receive buffer per virtual lane, advertised to its peer as credits; a link "
	 "whose credit loop (round trip plus a frame) holds more than this runs at this / loop time"},
};

static const struct fab_param_family family = {
	.prefix = "fabric.ib",
	.size = sizeof(struct fab_ib_params),
	.keys = keys,
	.nkeys = FAB_ARRAY_LEN(keys),
};

static void describe(const struct fab_fabric_params *fp, const char *cc_label, bool cc_on, char *buf, size_t len)
{
	(void)cc_label;
	const struct fab_ib_params *ib = fab_transport_params(fp, FAB_TRANSPORT_IB);
	char a[32], vb[32];
	snprintf(buf, len, "InfiniBand, MTU %u, buffer %s/switch, credits %s per lane and port, congestion control %s",
		 fp->mtu, fab_fmt_bytes(fp->buffer_bytes, a, sizeof a),
		 fab_fmt_bytes(ib->vl_buffer_bytes, vb, sizeof vb), cc_on ? "on" : "off");
}

const struct fab_transport_info fab_tp_ib = {
	.name = "ib",
	.label = "InfiniBand",
	.doc = "ib: InfiniBand RC queue pairs with credit-based flow control (fabric.ib.*; no PFC; congestion "
	       "control off unless fabric.dcqcn.enabled is given)",
	.link = FAB_LINK_INFINIBAND,
	.flags = FAB_TP_CC_OPT_IN | FAB_TP_ECN_WITH_CC,
	.max_mtu = 4096,
	.wire =
		{
			.name = "ib",
			.data_overhead = FAB_LRH + FAB_BTH + FAB_ICRC + FAB_VCRC,
			.ack_frame = FAB_LRH + FAB_BTH + FAB_AETH + FAB_ICRC + FAB_VCRC,
			.notify_frame = FAB_LRH + FAB_BTH + FAB_CNP_PAD + FAB_ICRC + FAB_VCRC,
			.udp_dport = 0,
			.preamble_ifg = 0,
		},
	.qp = "roce", /* InfiniBand RC: the same queue pairs, IB's framing */
	.llfc = "credit",
	.notify_counter = "CNPs",
	.family = &family,
	.describe = describe,
};
