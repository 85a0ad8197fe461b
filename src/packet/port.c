/*
 * port.c - ports and the links between them.
 *
 * A port serialises one frame at a time at its rate (frame + 20 B of
 * preamble and inter-frame gap) and the frame arrives whole at the peer
 * after the link's propagation delay (store and forward).  A link delivers
 * frames in the order they were sent, so each port keeps the frames on its
 * wire in a FIFO and only the first one has an arrival event: the event
 * queue holds one event per busy link instead of one per frame in flight,
 * which keeps it small and hot in cache.  On arrival a frame may be lost on
 * the wire (a lossy or down link: the receiver counts a bad frame); else it
 * goes to the link-level flow control (its control frames), the switch, or
 * the NIC and its queue pair's transport.  A port that falls idle is kicked:
 * a switch port serves its queues (switch.c), a NIC's port its queue pairs
 * (nic.c).
 * Hot: port_deliver, sim_port_transmit.
 */
#include "llfc.h"
#include "transport.h"

void sim_port_queue_area(struct psim *s, struct sim_port *port)
{
	port->st.queue_area += (double)port->qbytes_total * (double)(s->c.now_ps - port->q_changed_ps);
	port->q_changed_ps = s->c.now_ps;
}

/* A port that sends the last frame it has (nothing queued, no PFC or
 * credit frame to send, at a NIC no queue pair ready) holds the end of
 * that frame's serialisation out of the event queue: the event would find
 * nothing to send (a third of a run's events, at light load), and
 * anything that gives the port something to send kicks it first (a frame
 * queued, a PFC or credit frame, a queue pair made ready, a pause lifted).
 * The kick then queues the event with the time and key it was given, or,
 * when it would have run already, counts it as run and finds the port
 * idle.  So every other event runs as before, in the same order. */
static bool nothing_to_send(const struct psim *s, const struct sim_port *port)
{
	if (port->qbytes_total || port->pfc.pending || port->cr_pending || s->hold_off)
		return false;
	if (port->is_switch)
		return true;
	const struct sim_nic *nic = &s->nics[s->c.topo->nodes[port->node].nic];
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++)
		if (nic->ready_head[prio])
			return false;
	return true;
}

/* the kick sent a frame: its EV_TX_DONE queued or held */
static void tx_done_place(struct psim *s, struct sim_port *port)
{
	port->tx_new = false;
	if (!nothing_to_send(s, port)) {
		fab_eq_push_seq(&s->c.eq, port->done_ps, port->done_key, EV_TX_DONE, port, 0);
		return;
	}
	if (s->nheld == s->held_cap) {
		s->held_cap = s->held_cap ? 2 * s->held_cap : 256;
		s->held = fab_xrealloc(s->held, s->held_cap, sizeof *s->held);
	}
	port->tx_held = true;
	port->held_at = s->nheld;
	s->held[s->nheld++] = port;
	s->holds_total++;
}

static void held_drop(struct psim *s, struct sim_port *port)
{
	struct sim_port *last = s->held[--s->nheld];
	s->held[port->held_at] = last;
	last->held_at = port->held_at;
	port->tx_held = false;
}

/* the held event ran (with nothing to do): the port is idle */
static void held_ran(struct psim *s, struct sim_port *port)
{
	fab_eq_ran(&s->c.eq, port->done_ps, port->done_key);
	port->busy = false;
	held_drop(s, port);
}

fab_time_ps sim_port_held_settle(struct psim *s, fab_time_ps stop, fab_time_ps end_ps, fab_time_ps t)
{
	for (uint32_t i = 0; i < s->nheld;) {
		struct sim_port *port = s->held[i];
		fab_time_ps due = port->done_ps;
		if (due < stop && !(end_ps && due > end_ps)) {
			s->c.now_ps = FAB_MAX(s->c.now_ps, due);
			held_ran(s, port); /* the last one takes slot i */
		} else {
			t = FAB_MIN(t, due);
			i++;
		}
	}
	return t;
}

void sim_port_transmit(struct psim *s, struct sim_port *port, struct pkt *p)
{
	uint32_t wire = p->frame_bytes + s->c.wire.preamble_ifg;
	fab_time_ps ser = fab_ser_ps(wire, port->rate_bps);
	port->busy = true;
	port->st.tx_bytes += p->frame_bytes;
	port->st.tx_wire_bytes += wire;
	port->st.tx_pkts++;
	if (p->kind == PKT_DATA)
		port->st.tx_data_pkts++;
	if (s->llfc->sent && p->kind != PKT_PFC && (s->lossless >> p->prio & 1))
		s->llfc->sent(s, port, p);
	/* its EV_TX_DONE: queued or held when the kick that sent it is over */
	FAB_ASSERT(!port->tx_held && !port->tx_new);
	port->tx_new = true;
	port->done_ps = s->c.now_ps + ser;
	port->done_key = fab_eq_key(&s->c.eq, port->done_ps);
	p->arrive_ps = s->c.now_ps + ser + port->delay_ps;
	/* after a delay fault ends, no frame overtakes one sent before */
	if (port->delay_cut && port->wire_tail && p->arrive_ps < port->wire_tail->arrive_ps)
		p->arrive_ps = port->wire_tail->arrive_ps;
	p->key = fab_eq_key(&s->c.eq, p->arrive_ps);
	p->next = NULL;
	if (port->remote) {
		pkt_part_send(s, port, p);
		return;
	}
	sim_port_wire_append(s, port, p);
}

/* p (its arrive_ps and key its own) goes on port's wire.  The frame before
 * it takes its arrive_ps and key over: when that one arrives, the next
 * arrival event is pushed from what is in cache, not from a frame sent
 * long ago (see wire_pop). */
void sim_port_wire_append(struct psim *s, struct sim_port *port, struct pkt *p)
{
	struct pkt *t = port->wire_tail;
	if (t) {
		t->next = p;
		t->arrive_ps = p->arrive_ps;
		t->key = p->key;
	} else {
		port->wire_head = p;
		fab_eq_push_seq(&s->c.eq, p->arrive_ps, p->key, EV_ARRIVE, p, port->id);
	}
	port->wire_tail = p;
}

/* The first frame on port's wire has arrived: take it off the wire, the
 * next one's arrival (held in this one) into the event queue. */
static struct pkt *wire_pop(struct psim *s, struct sim_port *port, struct pkt *p)
{
	FAB_ASSERT(p == port->wire_head);
	port->wire_head = p->next;
	if (p->next)
		fab_eq_push_seq(&s->c.eq, p->arrive_ps, p->key, EV_ARRIVE, p->next, port->id);
	else
		port->wire_tail = NULL;
	p->next = NULL;
	return p;
}

void sim_port_kick(struct psim *s, struct sim_port *port)
{
	if (port->busy) {
		if (!port->tx_held)
			return;
		if (!fab_eq_passed(&s->c.eq, port->done_ps, port->done_key)) {
			/* it has something to do when it is due */
			fab_eq_push_seq(&s->c.eq, port->done_ps, port->done_key, EV_TX_DONE, port, 0);
			held_drop(s, port);
			return;
		}
		held_ran(s, port);
	}
	if (port->is_switch) {
		switch_start_tx(s, port);
	} else {
		struct sim_nic *nic = &s->nics[s->c.topo->nodes[port->node].nic];
		if (!s->llfc->send_pending(s, port))
			nic_start_tx(s, nic, port);
	}
	if (port->tx_new)
		tx_done_place(s, port);
}

void sim_port_enqueue(struct psim *s, struct sim_port *port, struct pkt *p)
{
	sim_port_queue_area(s, port);
	unsigned prio = p->prio;
	p->next = NULL;
	if (port->pq[prio].tail)
		port->pq[prio].tail->next = p;
	else
		port->pq[prio].head = p;
	port->pq[prio].tail = p;
	port->queued_mask |= (uint8_t)(1u << prio);
	port->pq[prio].qbytes += p->frame_bytes;
	port->qbytes_total += p->frame_bytes;
	if (port->qbytes_total > port->st.max_queue_bytes)
		port->st.max_queue_bytes = port->qbytes_total;
	sim_port_kick(s, port);
}

/* p came over from's wire */
static void port_deliver(struct psim *s, struct pkt *p, struct sim_port *from)
{
	struct sim_port *port = &s->ports[from->wire_to];
	bool nth = from->drop_every && p->kind == PKT_DATA && ++from->data_seen % from->drop_every == 0;
	if (from->down || nth || (from->loss > 0 && fab_rng_unit(&from->rng) < from->loss)) {
		/* lost on the wire: the receiver sees a bad frame, or nothing */
		port->st.rx_errors++;
		s->c.tot.drops++;
		s->c.tot.wire_losses++;
		if (s->llfc->lost && p->kind != PKT_PFC && (s->lossless >> p->prio & 1))
			s->llfc->lost(s, port, p);
		if (p->kind == PKT_DATA)
			s->c.tot.data_drop_bytes += p->payload;
		sim_pkt_free(s, p);
		return;
	}
	port->st.rx_bytes += p->frame_bytes;
	port->st.rx_pkts++;
	if (p->kind == PKT_PFC) {
		s->llfc->receive(s, port, p);
		sim_pkt_free(s, p);
		return;
	}
	if (port->is_switch) {
		switch_receive(s, port, p);
		return;
	}
	struct sim_nic *nic = &s->nics[s->c.topo->nodes[port->node].nic];
	if (p->kind == PKT_DATA)
		s->c.tot.data_rx_bytes += p->payload;
	s->llfc->nic_received(s, nic, p);
	qp_transport(pkt_qp(s, p->qp))->on_receive(s, nic, p);
}

/* EV_ARRIVE: the first frame on from's wire, p, reaches the peer */
void sim_port_arrive(struct psim *s, struct sim_port *from, struct pkt *p)
{
	port_deliver(s, wire_pop(s, from, p), from);
}

/* EV_TX_DONE */
void sim_port_tx_done(struct psim *s, struct sim_port *port)
{
	port->busy = false;
	sim_port_kick(s, port);
}
