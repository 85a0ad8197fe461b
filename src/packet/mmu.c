/*
 * mmu.c - a switch's shared buffer: which frames it admits, and the
 * accounting of what it holds per switch, per ingress port and priority,
 * per egress queue.
 *
 * Every frame needs room in the switch's buffer.  A lossless priority is
 * then admitted by the link-level flow control (llfc.h: PFC's XOFF plus
 * headroom per ingress port and priority), which also hears of every byte
 * admitted and released; a lossy priority by dynamic threshold: an egress
 * queue may hold at most alpha x (free buffer) (Choudhury and Hahne).  A
 * frame refused is dropped at the egress port it was headed for.
 * Simplified: no per-port static reservations, no separate lossy and
 * lossless pools.
 */
#include "llfc.h"

bool mmu_admit(struct psim *s, struct sim_switch *sw, struct sim_port *in, const struct sim_port *eport, struct pkt *p)
{
	unsigned prio = p->prio;
	uint32_t size = p->frame_bytes;
	bool lossless = s->lossless & (1u << prio);
	if (sw->buffer_used + size > s->c.fp.buffer_bytes)
		return false;
	if (lossless) {
		if (!s->llfc->room(s, in, prio, size))
			return false; /* headroom overflow */
	} else {
		double limit = s->c.fp.dt_alpha * (double)(s->c.fp.buffer_bytes - sw->buffer_used);
		if ((double)(eport->pq[prio].qbytes + size) > limit)
			return false;
	}
	sw->buffer_used += size;
	in->pq[prio].in_bytes += size;
	p->in_port = in->id;
	if (lossless)
		s->llfc->admitted(s, in, prio, size);
	return true;
}

void mmu_release(struct psim *s, struct sim_switch *sw, const struct pkt *p)
{
	unsigned prio = p->prio;
	struct sim_port *in = &s->ports[p->in_port];
	FAB_ASSERT(sw->buffer_used >= p->frame_bytes && in->pq[prio].in_bytes >= p->frame_bytes);
	sw->buffer_used -= p->frame_bytes;
	in->pq[prio].in_bytes -= p->frame_bytes;
	if (s->lossless & (1u << prio))
		s->llfc->released(s, in, prio, p->frame_bytes);
}
