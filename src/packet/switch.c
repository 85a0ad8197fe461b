/*
 * switch.c - a switch: forwarding and its egress queues.
 *
 * A frame that arrives is forwarded by its destination's route: among
 * equal-cost next hops (ECMP) by the frame's 5-tuple hash mixed with the
 * switch's seed; with no route (links down, routing not yet converged
 * around them) it is dropped and counted as unroutable.  The buffer (mmu.c)
 * admits it or it is dropped at that egress port.  An egress port has 8
 * strict-priority queues; it sends a pending link-level control frame
 * first, then the head of the highest priority not held by PAUSE.  Its
 * queue disciplines (qdisc.h) act on the way: the ECN marking one marks
 * ECN-capable data on the depth of the queue (by default at dequeue, the
 * frame itself counted; RED as DCQCN has it, or DCTCP's step), and a
 * stamping one writes the port's in-band telemetry into a departing
 * packet's record.
 * Simplified: no cut-through, PAUSE takes effect after the frame being
 * serialised.
 */
#include "llfc.h"
#include "qdisc.h"

static void drop_packet(struct psim *s, struct sim_port *eport, struct pkt *p)
{
	eport->st.drops++;
	eport->st.drop_bytes += p->frame_bytes;
	s->c.tot.drops++;
	if (p->kind == PKT_DATA)
		s->c.tot.data_drop_bytes += p->payload;
	sim_pkt_free(s, p);
}

/* ECN: the switch's marking discipline on queue depth q at this port */
static void ecn_mark(struct psim *s, struct sim_switch *sw, struct sim_port *port, struct pkt *p, uint64_t q)
{
	if (s->marking->mark(s, sw, port, q)) {
		p->ecn = ECN_CE;
		port->st.ecn_marks++;
	}
}

void switch_start_tx(struct psim *s, struct sim_port *port)
{
	if (port->busy)
		return;
	if (s->llfc->send_pending(s, port))
		return;
	/* the highest priority with frames queued and not paused */
	unsigned ready = port->queued_mask & ~port->paused_mask & 0xffu;
	if (!ready)
		return;
	unsigned prio = 31u - (unsigned)__builtin_clz(ready);
	struct port_prio *q = &port->pq[prio];
	struct pkt *p = q->head;
	q->head = p->next;
	if (!p->next) {
		q->tail = NULL;
		port->queued_mask &= (uint8_t) ~(1u << prio);
	}
	p->next = NULL;
	struct sim_switch *sw = pkt_switch_of(s, port);
	const struct fab_ecn_params *ecn = &s->c.fp.ecn;
	if (s->marking && p->ecn == ECN_ECT0 && ecn->mark_at != FAB_ECN_ENQUEUE)
		ecn_mark(s, sw, port, p, q->qbytes - (ecn->mark_at == FAB_ECN_DEQUEUE_AFTER ? p->frame_bytes : 0));
	sim_port_queue_area(s, port);
	FAB_ASSERT(q->qbytes >= p->frame_bytes);
	q->qbytes -= p->frame_bytes;
	port->qbytes_total -= p->frame_bytes;
	if (p->tel && s->stamping)
		s->stamping->stamp(s, port, p);
	mmu_release(s, sw, p);
	sim_port_transmit(s, port, p);
}

/* The watchdog turned the priority lossy: what its queue holds is dropped. */
void switch_flush(struct psim *s, struct sim_port *port, unsigned prio)
{
	struct sim_switch *sw = pkt_switch_of(s, port);
	sim_port_queue_area(s, port);
	for (struct pkt *p = port->pq[prio].head, *next; p; p = next) {
		next = p->next;
		port->pq[prio].qbytes -= p->frame_bytes;
		port->qbytes_total -= p->frame_bytes;
		mmu_release(s, sw, p);
		drop_packet(s, port, p);
	}
	port->pq[prio].head = port->pq[prio].tail = NULL;
	port->queued_mask &= (uint8_t) ~(1u << prio);
}

void switch_receive(struct psim *s, struct sim_port *in, struct pkt *p)
{
	uint32_t node = in->node;
	uint32_t si = s->c.topo->switch_index[node];
	struct sim_switch *sw = &s->switches[si];
	uint32_t cnt;
	const uint32_t *hops = fab_topo_routes(s->c.topo, node, p->dst_nic, &cnt);
	if (!cnt) { /* no route while links are down: dropped here */
		if (s->llfc->lost && (s->lossless >> p->prio & 1))
			s->llfc->lost(s, in, p);
		in->st.unroutable++;
		s->c.tot.drops++;
		if (p->kind == PKT_DATA)
			s->c.tot.data_drop_bytes += p->payload;
		sim_pkt_free(s, p);
		return;
	}
	uint32_t first = cnt == 1 ? 0 : sim_ecmp_pick(&s->c, p->hash, si, cnt);
	uint32_t eid = hops[first];
	if (s->c.fp.ecmp_adaptive && p->kind == PKT_DATA && cnt > 1) {
		/* by flowlets: a flow heard from within the gap keeps its port */
		struct flowlet *fl = NULL;
		if (s->c.fp.flowlet_gap_ps) {
			if (!sw->flowlets)
				sw->flowlets = fab_xcalloc(FLOWLET_SLOTS, sizeof *sw->flowlets);
			fl = &sw->flowlets[fab_mix64(p->hash ^ s->c.ecmp_seed[si]) % FLOWLET_SLOTS];
		}
		bool keep = false;
		if (fl && fl->last_ps && s->c.now_ps - fl->last_ps < s->c.fp.flowlet_gap_ps)
			for (uint32_t k = 0; k < cnt && !keep; k++)
				keep = hops[k] == fl->port && !s->ports[fl->port].down;
		if (keep) {
			eid = fl->port;
		} else {
			/* adaptive routing: the least queued port, the hash's first on a tie */
			uint64_t best = s->ports[eid].qbytes_total + sim_port_busy(s, &s->ports[eid]);
			for (uint32_t k = 1; k < cnt; k++) {
				uint32_t cand = hops[(first + k) % cnt];
				uint64_t q = s->ports[cand].qbytes_total + sim_port_busy(s, &s->ports[cand]);
				if (q < best && !s->ports[cand].down) {
					best = q;
					eid = cand;
				}
			}
		}
		if (fl) {
			fl->last_ps = s->c.now_ps;
			fl->port = eid;
		}
	}
	struct sim_port *eport = &s->ports[eid];
	if (((eport->dropped_mask >> p->prio) & 1) || !mmu_admit(s, sw, in, eport, p)) {
		if (s->llfc->lost && (s->lossless >> p->prio & 1))
			s->llfc->lost(s, in, p);
		drop_packet(s, eport, p);
		return;
	}
	const struct fab_ecn_params *ecn = &s->c.fp.ecn;
	if (s->marking && p->ecn == ECN_ECT0 && ecn->mark_at == FAB_ECN_ENQUEUE)
		ecn_mark(s, sw, eport, p, eport->pq[p->prio].qbytes + p->frame_bytes);
	sim_port_enqueue(s, eport, p);
}
