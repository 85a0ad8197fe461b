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
	fab_eq_push(&s->c.eq, s->c.now_ps + ser, EV_TX_DONE, port, 0);
	p->arrive_ps = s->c.now_ps + ser + port->delay_ps;
	p->key = fab_eq_key(&s->c.eq, p->arrive_ps);
	p->next = NULL;
	if (port->remote) {
		pkt_part_send(s, port, p);
		return;
	}
	sim_port_wire_append(s, port, p);
}

void sim_port_wire_append(struct psim *s, struct sim_port *port, struct pkt *p)
{
	if (port->wire_tail) {
		port->wire_tail->next = p;
	} else {
		port->wire_head = p;
		fab_eq_push_seq(&s->c.eq, p->arrive_ps, p->key, EV_ARRIVE, port, 0);
	}
	port->wire_tail = p;
}

/* The first frame on port's wire has arrived: take it off the wire. */
static struct pkt *wire_pop(struct psim *s, struct sim_port *port)
{
	struct pkt *p = port->wire_head;
	port->wire_head = p->next;
	if (port->wire_head)
		fab_eq_push_seq(&s->c.eq, port->wire_head->arrive_ps, port->wire_head->key, EV_ARRIVE, port, 0);
	else
		port->wire_tail = NULL;
	p->next = NULL;
	return p;
}

void sim_port_kick(struct psim *s, struct sim_port *port)
{
	if (port->busy)
		return;
	if (port->is_switch) {
		switch_start_tx(s, port);
	} else {
		struct sim_nic *nic = &s->nics[s->c.topo->nodes[port->node].nic];
		if (!s->llfc->send_pending(s, port))
			nic_start_tx(s, nic, port);
	}
}

void sim_port_enqueue(struct psim *s, struct sim_port *port, struct pkt *p)
{
	sim_port_queue_area(s, port);
	unsigned prio = p->prio;
	p->next = NULL;
	if (port->tail[prio])
		port->tail[prio]->next = p;
	else
		port->head[prio] = p;
	port->tail[prio] = p;
	port->qbytes[prio] += p->frame_bytes;
	port->qbytes_total += p->frame_bytes;
	if (port->qbytes_total > port->st.max_queue_bytes)
		port->st.max_queue_bytes = port->qbytes_total;
	sim_port_kick(s, port);
}

static void port_deliver(struct psim *s, struct pkt *p, uint32_t port_id)
{
	struct sim_port *port = &s->ports[port_id];
	struct sim_port *from = &s->ports[port->peer];
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

/* EV_ARRIVE: the first frame on from's wire reaches the peer */
void sim_port_arrive(struct psim *s, struct sim_port *from)
{
	port_deliver(s, wire_pop(s, from), from->wire_to);
}

/* EV_TX_DONE */
void sim_port_tx_done(struct psim *s, struct sim_port *port)
{
	port->busy = false;
	sim_port_kick(s, port);
}
