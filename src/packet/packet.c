/*
 * sim.c - the packet engine: event loop, links, switch ports over a shared
 * buffer, PFC and ECN.
 *
 * Model.  A port serialises one frame at a time at its rate (frame + 20 B
 * preamble/IFG) and the frame arrives whole at the peer after the link's
 * propagation delay (store and forward).  A switch port has 8 strict-priority
 * egress queues over the switch's shared buffer.  Lossless priorities (PFC)
 * are admitted per ingress port and priority: above XOFF the switch sends
 * PAUSE upstream and keeps admitting into headroom, at or below XON it sends
 * RESUME; a packet past the headroom (or the whole buffer) is dropped.
 * Lossy priorities are admitted by dynamic threshold: an egress queue may hold
 * at most alpha x (free buffer).  ECN marks data at dequeue with RED on the
 * egress queue depth (Kmin, Kmax, Pmax).  ECMP picks among equal-cost next
 * hops by the packet's 5-tuple hash mixed with a per-switch seed.
 * Simplified: no cut-through, no per-port buffer limits, PAUSE takes effect
 * after the frame being serialised.
 * A link delivers frames in the order they were sent, so each port keeps the
 * frames on its wire in a FIFO and only the first one has an arrival event:
 * the event queue holds one event per busy link instead of one per frame in
 * flight, which keeps it small and hot in cache.
 * Hot: handle_arrive, switch_receive, switch_start_tx, sim_port_transmit.
 */
#include <stdlib.h>
#include <string.h>

#include "packet.h"
#include "transport.h"

static const struct fab_transport_ops *transport = &fab_roce_transport;

struct pkt *sim_pkt_alloc(struct psim *s)
{
	if (!s->free_pkts) {
		struct pkt_slab *slab = fab_xcalloc(1, sizeof *slab);
		slab->next = s->slabs;
		s->slabs = slab;
		for (size_t i = FAB_ARRAY_LEN(slab->pkts); i-- > 0;) {
			slab->pkts[i].next = s->free_pkts;
			s->free_pkts = &slab->pkts[i];
		}
	}
	struct pkt *p = s->free_pkts;
	s->free_pkts = p->next;
	memset(p, 0, sizeof *p);
	return p;
}

void sim_pkt_free(struct psim *s, struct pkt *p)
{
	if (p->kind == PKT_DATA)
		s->live_data_payload -= p->payload;
	p->next = s->free_pkts;
	s->free_pkts = p;
}

static void queue_area_update(struct psim *s, struct sim_port *port)
{
	port->st.queue_area += (double)port->qbytes_total * (double)(s->c.now_ps - port->q_changed_ps);
	port->q_changed_ps = s->c.now_ps;
}

bool sim_port_prio_paused(const struct sim_port *port, unsigned prio, fab_time_ps now)
{
	(void)now;
	return port->paused_mask & (1u << prio);
}

void sim_port_transmit(struct psim *s, struct sim_port *port, struct pkt *p)
{
	uint32_t wire = p->frame_bytes + FAB_WIRE_PREAMBLE_IFG;
	fab_time_ps ser = fab_ser_ps(wire, port->rate_bps);
	port->busy = true;
	port->st.tx_bytes += p->frame_bytes;
	port->st.tx_wire_bytes += wire;
	port->st.tx_pkts++;
	if (p->kind == PKT_DATA)
		port->st.tx_data_pkts++;
	fab_eq_push(&s->c.eq, s->c.now_ps + ser, EV_TX_DONE, port, 0);
	p->arrive_ps = s->c.now_ps + ser + port->delay_ps;
	p->next = NULL;
	if (port->wire_tail) {
		port->wire_tail->next = p;
	} else {
		port->wire_head = p;
		fab_eq_push(&s->c.eq, p->arrive_ps, EV_ARRIVE, port, 0);
	}
	port->wire_tail = p;
}

/* The first frame on port's wire has arrived: take it off the wire. */
static struct pkt *wire_pop(struct psim *s, struct sim_port *port)
{
	struct pkt *p = port->wire_head;
	port->wire_head = p->next;
	if (port->wire_head)
		fab_eq_push(&s->c.eq, port->wire_head->arrive_ps, EV_ARRIVE, port, 0);
	else
		port->wire_tail = NULL;
	p->next = NULL;
	return p;
}

/* Sends the pending PFC frame, if any: one frame carries every priority
 * whose PAUSE or RESUME is waiting. */
static bool port_send_pending_pfc(struct psim *s, struct sim_port *port)
{
	if (!port->pfc_pending)
		return false;
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_PFC;
	p->frame_bytes = FAB_PFC_FRAME;
	p->pfc_mask = port->pfc_pending;
	for (unsigned i = 0; i < FAB_NPRIO; i++) {
		if (!(port->pfc_pending & (1u << i)))
			continue;
		p->pfc_quanta[i] = port->pfc_quanta[i];
		if (port->pfc_quanta[i])
			port->st.pause_tx[i]++;
		else
			port->st.resume_tx[i]++;
	}
	port->pfc_pending = 0;
	sim_port_transmit(s, port, p);
	return true;
}

void sim_port_send_pfc(struct psim *s, struct sim_port *port, unsigned prio, uint16_t quanta)
{
	port->pfc_pending |= (uint8_t)(1u << prio);
	port->pfc_quanta[prio] = quanta;
	sim_port_kick(s, port);
}

static fab_time_ps pause_duration_ps(const struct sim_port *port, uint32_t quanta)
{
	return fab_ser_ps((uint64_t)quanta * 64u, port->rate_bps); /* 512 bit times */
}

static void pfc_arm_refresh(struct psim *s, struct sim_port *port, unsigned prio)
{
	port->pfc_gen[prio]++;
	fab_time_ps half = pause_duration_ps(port, s->c.fp.pfc.quanta) / 2;
	fab_eq_push(&s->c.eq, s->c.now_ps + (half ? half : 1), EV_PFC_REFRESH, port,
		    prio | (port->pfc_gen[prio] << 3));
}

static void switch_start_tx(struct psim *s, struct sim_port *port)
{
	if (port->busy)
		return;
	if (port_send_pending_pfc(s, port))
		return;
	for (int prio = FAB_NPRIO - 1; prio >= 0; prio--) {
		struct pkt *p = port->head[prio];
		if (!p || (port->paused_mask & (1u << prio)))
			continue;
		port->head[prio] = p->next;
		if (!p->next)
			port->tail[prio] = NULL;
		p->next = NULL;
		/* ECN: RED on the queue this packet leaves, counting itself */
		if (s->c.fp.ecn.enabled && p->ecn == ECN_ECT0) {
			uint64_t q = port->qbytes[prio];
			struct sim_switch *esw = &s->switches[s->c.topo->switch_index[port->node]];
			bool mark = false;
			if (q > esw->kmax_bytes) {
				mark = true;
			} else if (q > esw->kmin_bytes) {
				double prob = s->c.fp.ecn.pmax * (double)(q - esw->kmin_bytes) /
					      (double)(esw->kmax_bytes - esw->kmin_bytes);
				mark = fab_rng_unit(&esw->rng) < prob;
			}
			if (mark) {
				p->ecn = ECN_CE;
				port->st.ecn_marks++;
			}
		}
		queue_area_update(s, port);
		port->qbytes[prio] -= p->frame_bytes;
		port->qbytes_total -= p->frame_bytes;
		struct sim_switch *sw = &s->switches[s->c.topo->switch_index[port->node]];
		sw->buffer_used -= p->frame_bytes;
		struct sim_port *in = &s->ports[p->in_port];
		in->in_bytes[prio] -= p->frame_bytes;
		if ((in->xoff_sent & (1u << prio)) && in->in_bytes[prio] <= s->c.fp.pfc.xon_bytes) {
			in->xoff_sent &= (uint8_t)~(1u << prio);
			in->pfc_gen[prio]++;
			sim_port_send_pfc(s, in, (unsigned)prio, 0);
		}
		sim_port_transmit(s, port, p);
		return;
	}
}

void sim_port_kick(struct psim *s, struct sim_port *port)
{
	if (port->busy)
		return;
	if (port->is_switch) {
		switch_start_tx(s, port);
	} else {
		struct sim_nic *nic = &s->nics[s->c.topo->nodes[port->node].nic];
		if (!port_send_pending_pfc(s, port))
			nic_start_tx(s, nic, port);
	}
}

void sim_port_enqueue(struct psim *s, struct sim_port *port, struct pkt *p)
{
	queue_area_update(s, port);
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

static void drop_packet(struct psim *s, struct sim_port *eport, struct pkt *p)
{
	eport->st.drops++;
	eport->st.drop_bytes += p->frame_bytes;
	s->c.tot.drops++;
	if (p->kind == PKT_DATA)
		s->c.tot.data_drop_bytes += p->payload;
	sim_pkt_free(s, p);
}

static void switch_receive(struct psim *s, struct sim_port *in, struct pkt *p)
{
	uint32_t node = in->node;
	uint32_t si = s->c.topo->switch_index[node];
	struct sim_switch *sw = &s->switches[si];
	uint32_t cnt;
	const uint32_t *hops = fab_topo_routes(s->c.topo, node, p->dst_nic, &cnt);
	if (!cnt) { /* no route while links are down: dropped here */
		in->st.unroutable++;
		s->c.tot.drops++;
		if (p->kind == PKT_DATA)
			s->c.tot.data_drop_bytes += p->payload;
		sim_pkt_free(s, p);
		return;
	}
	uint32_t eid = cnt == 1 ? hops[0] : hops[fab_mix64(p->hash ^ s->c.ecmp_seed[si]) % cnt];
	struct sim_port *eport = &s->ports[eid];
	unsigned prio = p->prio;
	uint32_t size = p->frame_bytes;
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	bool lossless = pfc->enabled && (pfc->prio_mask & (1u << prio));

	if (sw->buffer_used + size > s->c.fp.buffer_bytes) {
		drop_packet(s, eport, p);
		return;
	}
	if (lossless) {
		if (in->in_bytes[prio] + size > pfc->xoff_bytes + in->headroom_bytes) {
			drop_packet(s, eport, p); /* headroom overflow */
			return;
		}
	} else {
		double limit = s->c.fp.dt_alpha * (double)(s->c.fp.buffer_bytes - sw->buffer_used);
		if ((double)(eport->qbytes[prio] + size) > limit) {
			drop_packet(s, eport, p);
			return;
		}
	}
	sw->buffer_used += size;
	in->in_bytes[prio] += size;
	p->in_port = in->id;
	if (lossless && in->in_bytes[prio] > pfc->xoff_bytes &&
	    !(in->xoff_sent & (1u << prio))) {
		in->xoff_sent |= (uint8_t)(1u << prio);
		sim_port_send_pfc(s, in, prio, (uint16_t)pfc->quanta);
		pfc_arm_refresh(s, in, prio);
	}
	sim_port_enqueue(s, eport, p);
}

static void receive_pfc(struct psim *s, struct sim_port *port, const struct pkt *p)
{
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++) {
		if (!(p->pfc_mask & (1u << prio)))
			continue;
		uint8_t bit = (uint8_t)(1u << prio);
		if (p->pfc_quanta[prio] == 0) {
			if (port->paused_mask & bit) {
				port->st.paused_ps[prio] += s->c.now_ps - port->paused_since[prio];
				port->paused_mask &= (uint8_t)~bit;
			}
			port->paused_until[prio] = s->c.now_ps;
		} else {
			port->st.pause_rx[prio]++;
			if (s->c.now_ps < port->wd_ignore_until[prio])
				continue; /* the watchdog tripped: PAUSE is ignored for a while */
			if (s->c.fp.pfc_watchdog_ps && (port->paused_mask & bit) &&
			    s->c.now_ps - port->paused_since[prio] >= s->c.fp.pfc_watchdog_ps) {
				port->st.watchdog_trips++;
				port->st.paused_ps[prio] += s->c.now_ps - port->paused_since[prio];
				port->paused_mask &= (uint8_t)~bit;
				port->wd_ignore_until[prio] = s->c.now_ps + s->c.fp.pfc_watchdog_ps;
				continue;
			}
			port->paused_until[prio] = s->c.now_ps + pause_duration_ps(port, p->pfc_quanta[prio]);
			if (!(port->paused_mask & bit)) {
				port->paused_mask |= bit;
				port->paused_since[prio] = s->c.now_ps;
			}
			fab_eq_push(&s->c.eq, port->paused_until[prio], EV_PAUSE_EXPIRE, port, prio);
		}
	}
	sim_port_kick(s, port);
}

static void handle_arrive(struct psim *s, struct pkt *p, uint32_t port_id)
{
	struct sim_port *port = &s->ports[port_id];
	struct sim_port *from = &s->ports[port->peer];
	if (from->down || (from->loss > 0 && fab_rng_unit(&from->rng) < from->loss)) {
		/* lost on the wire: the receiver sees a bad frame, or nothing */
		port->st.rx_errors++;
		s->c.tot.drops++;
		s->c.tot.wire_losses++;
		if (p->kind == PKT_DATA)
			s->c.tot.data_drop_bytes += p->payload;
		sim_pkt_free(s, p);
		return;
	}
	port->st.rx_bytes += p->frame_bytes;
	port->st.rx_pkts++;
	if (p->kind == PKT_PFC) {
		receive_pfc(s, port, p);
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
	nic_rx_account(s, nic, p);
	transport->on_receive(s, nic, p);
}

static void handle_pause_expire(struct psim *s, struct sim_port *port, unsigned prio)
{
	uint8_t bit = (uint8_t)(1u << prio);
	if (!(port->paused_mask & bit) || s->c.now_ps < port->paused_until[prio])
		return;
	port->st.paused_ps[prio] += s->c.now_ps - port->paused_since[prio];
	port->paused_mask &= (uint8_t)~bit;
	sim_port_kick(s, port);
}

static void handle_pfc_refresh(struct psim *s, struct sim_port *port, uint32_t arg)
{
	unsigned prio = arg & 7;
	if (!(port->xoff_sent & (1u << prio)) || (arg >> 3) != port->pfc_gen[prio])
		return;
	sim_port_send_pfc(s, port, prio, (uint16_t)s->c.fp.pfc.quanta);
	pfc_arm_refresh(s, port, prio);
}

static void handle_sample(struct psim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		if (!port->is_switch)
			continue;
		if (s->c.nseries == s->c.cap_series) {
			s->c.cap_series = s->c.cap_series ? 2 * s->c.cap_series : 4096;
			s->c.series = fab_xrealloc(s->c.series, s->c.cap_series, sizeof *s->c.series);
		}
		uint64_t ptx = 0, prx = 0;
		for (unsigned k = 0; k < FAB_NPRIO; k++) {
			ptx += port->st.pause_tx[k];
			prx += port->st.pause_rx[k];
		}
		s->c.series[s->c.nseries++] = (struct fab_series_row){
			s->c.now_ps,
			i,
			port->qbytes_total,
			port->st.tx_bytes - port->series_tx_mark,
			port->st.tx_wire_bytes - port->series_wire_mark,
			(uint32_t)(port->st.drops - port->series_drop_mark),
			(uint32_t)(port->st.ecn_marks - port->series_ecn_mark),
			(uint32_t)(ptx - port->series_ptx_mark),
			(uint32_t)(prx - port->series_prx_mark),
		};
		port->series_tx_mark = port->st.tx_bytes;
		port->series_wire_mark = port->st.tx_wire_bytes;
		port->series_drop_mark = port->st.drops;
		port->series_ecn_mark = port->st.ecn_marks;
		port->series_ptx_mark = ptx;
		port->series_prx_mark = prx;
	}
	for (uint32_t i = 0; i < s->c.nflows; i++) {
		struct sim_flow *f = &s->c.flows[i];
		if (f->spec.start_ps > s->c.now_ps || f->st.finish_ps != FAB_TIME_NEVER)
			continue;
		if (s->c.nfseries == s->c.cap_fseries) {
			s->c.cap_fseries = s->c.cap_fseries ? 2 * s->c.cap_fseries : 4096;
			s->c.fseries = fab_xrealloc(s->c.fseries, s->c.cap_fseries, sizeof *s->c.fseries);
		}
		double rate = 0;
		for (uint32_t k = 0; k < f->nqps; k++)
			rate += pkt_qp(s, f->first_qp + k)->cc.rc_bps;
		s->c.fseries[s->c.nfseries++] = (struct fab_flow_series_row){
			s->c.now_ps, i, f->st.delivered_bytes - f->series_mark, rate / f->nqps};
		f->series_mark = f->st.delivered_bytes;
	}
	fab_eq_push(&s->c.eq, s->c.now_ps + s->c.fp.series_interval_ps, EV_SAMPLE, NULL, 0);
}

/* A storming NIC sends PAUSE every 2 us, as a stuck NIC floods its port. */
static void storm_arm(struct psim *s, struct sim_port *port, uint8_t prio)
{
	fab_eq_push(&s->c.eq, s->c.now_ps + 2 * FAB_PS_PER_US, EV_STORM, port, prio | (port->storm_gen << 3));
}

static void handle_storm(struct psim *s, struct sim_port *port, uint32_t arg)
{
	if ((arg >> 3) != port->storm_gen)
		return;
	sim_port_send_pfc(s, port, arg & 7, 65535);
	storm_arm(s, port, (uint8_t)(arg & 7));
}

static void set_link_rate(struct psim *s, uint32_t port, fab_rate_bps rate)
{
	s->ports[port].rate_bps = rate;
	s->ports[s->ports[port].peer].rate_bps = rate;
}

/* Routing converges: routes without the links down now. */
static void reroute(struct psim *s)
{
	uint8_t *down = fab_xcalloc(s->c.topo->nports, 1);
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		down[i] = s->ports[i].down;
	/* the routes are the fabric's state: a failure changes them */
	fab_topo_reroute((struct fab_topo *)s->c.topo, down);
	free(down);
}

static void handle_fault(struct psim *s, const struct fab_fault *f, int what)
{
	bool end = what == 1;
	struct sim_port *a = &s->ports[f->port], *b = &s->ports[a->peer];
	if (what == 2) {
		reroute(s);
		return;
	}
	switch (f->kind) {
	case FAB_FAULT_DEGRADE:
		set_link_rate(s, f->port, end ? s->c.topo->ports[f->port].rate_bps : f->rate_bps);
		break;
	case FAB_FAULT_LOSSY:
		a->loss = b->loss = end ? 0 : f->drop;
		break;
	case FAB_FAULT_DOWN:
		a->down = b->down = !end;
		a->down_since = b->down_since = s->c.now_ps;
		if (end) {
			reroute(s);
			sim_port_kick(s, a);
			sim_port_kick(s, b);
		} else {
			/* until routing converges, what hashes onto the link is lost */
			fab_eq_push(&s->c.eq, s->c.now_ps + f->convergence_ps, EV_FAULT, (void *)f, 2);
		}
		break;
	case FAB_FAULT_PFC_STORM:
		a->storm_gen++;
		if (end) {
			sim_port_send_pfc(s, a, f->prio, 0);
		} else {
			sim_port_send_pfc(s, a, f->prio, 65535);
			storm_arm(s, a, f->prio);
		}
		break;
	case FAB_FAULT_ECN: {
		struct sim_switch *sw = &s->switches[s->c.topo->switch_index[f->node]];
		sw->kmin_bytes = end ? s->c.fp.ecn.kmin_bytes : f->kmin_bytes;
		sw->kmax_bytes = end ? s->c.fp.ecn.kmax_bytes : f->kmax_bytes;
		break;
	}
	}
}

static fab_bytes auto_headroom(const struct fab_fabric_params *fp, const struct sim_port *port)
{
	/* what the upstream still sends after we decide to pause: a round trip
	 * of the link, plus frames already being serialised at both ends */
	uint64_t rtt_bytes = (uint64_t)(((__uint128_t)port->rate_bps * 2 * port->delay_ps) /
					 (8 * FAB_PS_PER_S));
	return rtt_bytes + 3ull * fab_wire_data_bytes(fab_wire_of(fp->transport), fp->mtu) + FAB_PFC_FRAME +
	       FAB_WIRE_PREAMBLE_IFG;
}

static int pkt_run(struct fab_sim *sim, fab_time_ps end_ps)
{
	struct psim *s = (struct psim *)sim;
	struct fab_ev ev;
	uint64_t next_progress = 1u << 20;
	while ((s->c.tot.flows_done < s->c.nflows || s->c.holds) && fab_eq_pop(&s->c.eq, &ev)) {
		if (end_ps && ev.t_ps > end_ps) {
			s->c.now_ps = end_ps;
			s->c.tot.stopped_by_end_time = true;
			break;
		}
		s->c.now_ps = ev.t_ps;
		if (sim_workload_event(&s->c, &ev)) {
			sim_report_progress(&s->c, &next_progress);
			continue;
		}
		switch (ev.type) {
		case EV_TX_DONE: {
			struct sim_port *port = ev.obj;
			port->busy = false;
			sim_port_kick(s, port);
			break;
		}
		case EV_ARRIVE: {
			struct sim_port *from = ev.obj;
			handle_arrive(s, wire_pop(s, from), from->peer);
			break;
		}
		case EV_PAUSE_EXPIRE:
			handle_pause_expire(s, ev.obj, ev.arg);
			break;
		case EV_PFC_REFRESH:
			handle_pfc_refresh(s, ev.obj, ev.arg);
			break;
		case EV_QP_WAKE:
			nic_on_wake(s, ev.obj);
			break;
		case EV_FLOW_START:
			sim_flow_start(&s->c, ev.obj);
			break;
		case EV_RTO:
		case EV_CC_TIMER:
			transport->on_timer(s, &ev);
			break;
		case EV_NIC_DRAIN:
			nic_on_drain(s, ev.obj, ev.arg);
			break;
		case EV_NIC_PCIE:
			nic_on_pcie(s, ev.obj);
			break;
		case EV_SAMPLE:
			handle_sample(s);
			break;
		case EV_FAULT:
			handle_fault(s, ev.obj, (int)ev.arg);
			break;
		case EV_STORM:
			handle_storm(s, ev.obj, ev.arg);
			break;
		default:
			break;
		}
		sim_report_progress(&s->c, &next_progress);
	}
	/* close the books: open intervals end now */
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		queue_area_update(s, port);
		for (unsigned prio = 0; prio < FAB_NPRIO; prio++)
			if (port->paused_mask & (1u << prio)) {
				port->st.paused_ps[prio] += s->c.now_ps - port->paused_since[prio];
				port->paused_since[prio] = s->c.now_ps;
			}
	}
	s->c.tot.events = s->c.eq.popped;
	s->c.tot.end_ps = s->c.now_ps;
	s->c.tot.data_inflight_bytes = s->live_data_payload;
	return 0;
}

/* the queue pairs opened before the server was set (the scenario's
 * flows): DCQCN's line rate is the NIC's as PCIe caps it */
static void pkt_server_changed(struct fab_sim *sim)
{
	for (uint32_t i = 0; i < sim->nqps; i++) {
		struct sim_qp *qp = (struct sim_qp *)sim->qps[i];
		fab_dcqcn_init(&qp->cc, &sim->fp.dcqcn, sim_nic_line_bps(sim, qp->c.src_nic));
	}
}

static void pkt_conn_init(struct fab_sim *sim, struct sim_conn *c)
{
	struct sim_qp *qp = (struct sim_qp *)c;
	fab_dcqcn_init(&qp->cc, &sim->fp.dcqcn, sim_nic_line_bps(sim, c->src_nic));
}

static void pkt_post(struct fab_sim *sim, struct sim_conn *c, fab_bytes bytes, uint32_t flow,
		     uint32_t cookie)
{
	sim_qp_post((struct psim *)sim, (struct sim_qp *)c, bytes, flow, cookie);
}

static void pkt_port_stats(const struct fab_sim *sim, struct fab_port_stats *out)
{
	const struct psim *s = (const struct psim *)sim;
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		out[i] = s->ports[i].st;
}

static fab_rate_bps pkt_port_rate(const struct fab_sim *sim, uint32_t port)
{
	return ((const struct psim *)sim)->ports[port].rate_bps;
}

static void pkt_free(struct fab_sim *sim)
{
	struct psim *s = (struct psim *)sim;
	while (s->slabs) {
		struct pkt_slab *next = s->slabs->next;
		free(s->slabs);
		s->slabs = next;
	}
	free(s->ports);
	free(s->switches);
	free(s->nics);
	for (uint32_t i = 0; i < s->c.nqps; i++)
		free(pkt_qp(s, i)->msgs);
	sim_core_free(&s->c);
	free(s);
}

static const struct sim_engine_ops packet_ops = {
	.name = "packet",
	.conn_size = sizeof(struct sim_qp),
	.conn_init = pkt_conn_init,
	.post = pkt_post,
	.server_changed = pkt_server_changed,
	.run = pkt_run,
	.free = pkt_free,
	.port_stats = pkt_port_stats,
	.port_rate = pkt_port_rate,
};

struct fab_sim *fab_packet_new(const struct fab_topo *topo, const struct fab_fabric_params *fp,
			       uint64_t seed, const struct fab_sim_flow *flows, size_t nflows,
			       struct fab_err *err)
{
	struct psim *s = fab_xcalloc(1, sizeof *s);
	s->ports = fab_xcalloc(topo->nports, sizeof *s->ports);
	for (uint32_t i = 0; i < topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		const struct fab_port *tp = &topo->ports[i];
		port->id = i;
		port->node = tp->node;
		port->peer = tp->peer;
		port->rate_bps = tp->rate_bps;
		port->delay_ps = tp->delay_ps;
		port->is_switch = topo->nodes[tp->node].kind == FAB_NODE_SWITCH;
		port->headroom_bytes = fp->pfc.headroom_bytes ? fp->pfc.headroom_bytes
							      : auto_headroom(fp, port);
		fab_rng_init(&port->rng, seed, FAB_RNG_NIC_BASE + i);
	}
	s->switches = fab_xcalloc(topo->nswitches ? topo->nswitches : 1, sizeof *s->switches);
	for (uint32_t n = 0; n < topo->nnodes; n++) {
		uint32_t si = topo->switch_index[n];
		if (si == UINT32_MAX)
			continue;
		s->switches[si].node = n;
		fab_rng_init(&s->switches[si].rng, seed, FAB_RNG_SWITCH_BASE + si);
		s->switches[si].kmin_bytes = fp->ecn.kmin_bytes;
		s->switches[si].kmax_bytes = fp->ecn.kmax_bytes;
	}
	s->nics = fab_xcalloc(topo->nnics, sizeof *s->nics);
	for (uint32_t i = 0; i < topo->nnics; i++) {
		s->nics[i].index = i;
		s->nics[i].node = topo->nic_node[i];
		s->nics[i].port = topo->nodes[topo->nic_node[i]].first_port;
	}
	if (!sim_core_init(&s->c, &packet_ops, topo, fp, seed, flows, nflows, err)) {
		pkt_free(&s->c);
		return NULL;
	}
	if (fp->series_interval_ps)
		fab_eq_push(&s->c.eq, 0, EV_SAMPLE, NULL, 0);
	return &s->c;
}
