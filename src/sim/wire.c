/*
 * wire.c - framing as a run uses it (wire.h); each transport's own is in
 * its description (tp_<name>.c).
 */
#include "transports.h"

struct fab_wire fab_wire_resolve(int transport, const struct fab_wire_params *p)
{
	struct fab_wire w = *fab_wire_of(transport);
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
