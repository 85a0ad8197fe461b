/*
 * tp_tcp.c - TCP through the kernel over lossy Ethernet, as every layer
 * sees it: its framing, its defaults (no PFC unless asked), its parameters
 * and keys (fabric.tcp.*), the host's latency, and its line in the text
 * summary.  Its connections are src/packet/tcp.c; its congestion controls
 * src/cc/tcpcc.c.
 *
 * Framing (RFC 9293, RFC 7323): Ethernet 14 + IPv4 20 + TCP 20 + the
 * timestamps option 12 (10, padded to 12, as Linux sends it) + payload +
 * FCS 4, so 70 bytes beyond its payload (90 on the wire); a pure ACK is the
 * same headers (70 bytes, above Ethernet's 64-byte minimum); ECN's echo
 * rides on ACKs (no notification frame).
 */
#include <stddef.h>
#include <stdio.h>

#include "sim.h"
#include "tp_tcp.h"

#define OFF(field) offsetof(struct fab_tcp_params, field)

static const struct fab_key_def keys[] = {
	{"fabric.tcp.cc", K_ENUM, OFF(cc), "cubic", 0, 0, "newreno|cubic|dctcp",
	 "TCP congestion control: newreno (RFC 5681, 6582), cubic (RFC 8312, Linux's default), dctcp (RFC 8257: "
	 "ECN on every segment; switches mark at one threshold, fabric.ecn.kmin = kmax, 100KiB unless given)"},
	{"fabric.tcp.init_cwnd", K_U32, OFF(init_cwnd), "10", 1, 10000, NULL, "initial window, segments (RFC 6928)"},
	{"fabric.tcp.rcv_window", K_BYTES, OFF(rwnd_bytes), "6MiB", 16384, 1e10, NULL,
	 "the receive window: out-of-order segments the receiver holds, and the most a sender has in flight "
	 "(Linux's tcp_rmem maximum)"},
	{"fabric.tcp.min_rto", K_TIME, OFF(min_rto_ps), "200ms", 1e6, 1e13, NULL,
	 "floor of the retransmission timeout, and its value before the first RTT sample (Linux's TCP_RTO_MIN; "
	 "datacenters tune it down)"},
	{"fabric.tcp.dupack_threshold", K_U32, OFF(dupack_threshold), "3", 1, 100, NULL,
	 "duplicate ACKs that start a fast retransmit (RFC 5681)"},
	{"fabric.tcp.delayed_ack", K_BOOL, OFF(delayed_ack), "false", 0, 0, NULL,
	 "acknowledge every second in-order segment or after delack_timeout (out of order, CE-marked: at once); "
	 "false: every segment"},
	{"fabric.tcp.delack_timeout", K_TIME, OFF(delack_ps), "40ms", 1e6, 1e12, NULL,
	 "the delayed-ACK timer (Linux's TCP_DELACK_MIN)"},
	{"fabric.tcp.ecn", K_BOOL, OFF(ecn), "false", 0, 0, NULL,
	 "segments are ECN-capable and CE halves the window once a round trip (RFC 3168); dctcp: always"},
	{"fabric.tcp.cpu_per_packet", K_TIME, OFF(cpu_packet_ps), "800ns", 0, 1e9, NULL,
	 "CPU time per segment or ACK at each end; with cpu_per_byte, one core of either end moves 42 Gbps at "
	 "9000-byte segments (Cai et al., SIGCOMM 2021, Linux with TSO/GRO)"},
	{"fabric.tcp.cpu_per_byte", K_DOUBLE, OFF(cpu_byte_ps), "100", 0, 1e6, NULL,
	 "CPU picoseconds per payload byte at each end (copies, checksums)"},
	{"fabric.tcp.kernel_latency", K_TIME, OFF(kernel_ps), "5us", 0, 1e10, NULL,
	 "a message leaves the host this long after it is posted (system call, stack, wake-up; an estimate: "
	 "measure yours as fabscope probe --test latency's one-way time less the wire's)"},
};

static const struct fab_param_family family = {
	.prefix = "fabric.tcp",
	.size = sizeof(struct fab_tcp_params),
	.keys = keys,
	.nkeys = FAB_ARRAY_LEN(keys),
};

/* a segment carries what a RoCE packet does */
static void resolve(struct fab_fabric_params *fp, void *params)
{
	((struct fab_tcp_params *)params)->mss = fp->mtu;
}

static fab_time_ps host_latency(const void *params)
{
	return ((const struct fab_tcp_params *)params)->kernel_ps;
}

static void describe(const struct fab_fabric_params *fp, const char *cc_label, bool cc_on, char *buf, size_t len)
{
	(void)cc_on;
	char a[32];
	snprintf(buf, len, "TCP (%s), MSS %u, buffer %s/switch, PFC %s, ECN %s", cc_label, fp->mtu,
		 fab_fmt_bytes(fp->buffer_bytes, a, sizeof a), fp->pfc.enabled ? "on" : "off",
		 fp->ecn.enabled ? "on" : "off");
}

const struct fab_transport_info fab_tp_tcp = {
	.name = "tcp",
	.label = "TCP",
	.doc = "tcp: TCP connections through the kernel over lossy Ethernet (fabric.tcp.*; PFC off unless "
	       "fabric.pfc.enabled is given)",
	.link = FAB_LINK_ETHERNET,
	.flags = FAB_TP_LOSSY,
	.wire =
		{
			.name = "tcp",
			.data_overhead = FAB_ETH + FAB_IPV4 + FAB_TCP + FAB_TCP_TS + FAB_FCS,
			.ack_frame = FAB_ETH + FAB_IPV4 + FAB_TCP + FAB_TCP_TS + FAB_FCS,
			.notify_frame = 0,
			.udp_dport = 5201,
			.preamble_ifg = FAB_WIRE_PREAMBLE_IFG,
		},
	.qp = "tcp",
	.llfc = "pfc",
	.notify_counter = "ECN echoes",
	.family = &family,
	.resolve = resolve,
	.host_latency = host_latency,
	.describe = describe,
};
