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

#include "transport.h"

static const struct fab_transport_ops *transport = &fab_roce_transport;

struct pkt *sim_pkt_alloc(struct fab_sim *s)
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

void sim_pkt_free(struct fab_sim *s, struct pkt *p)
{
	if (p->kind == PKT_DATA)
		s->live_data_payload -= p->payload;
	p->next = s->free_pkts;
	s->free_pkts = p;
}

static void queue_area_update(struct fab_sim *s, struct sim_port *port)
{
	port->st.queue_area += (double)port->qbytes_total * (double)(s->now_ps - port->q_changed_ps);
	port->q_changed_ps = s->now_ps;
}

bool sim_port_prio_paused(const struct sim_port *port, unsigned prio, fab_time_ps now)
{
	(void)now;
	return port->paused_mask & (1u << prio);
}

void sim_port_transmit(struct fab_sim *s, struct sim_port *port, struct pkt *p)
{
	uint32_t wire = p->frame_bytes + FAB_WIRE_PREAMBLE_IFG;
	fab_time_ps ser = fab_ser_ps(wire, port->rate_bps);
	port->busy = true;
	port->st.tx_bytes += p->frame_bytes;
	port->st.tx_wire_bytes += wire;
	port->st.tx_pkts++;
	if (p->kind == PKT_DATA)
		port->st.tx_data_pkts++;
	fab_eq_push(&s->eq, s->now_ps + ser, EV_TX_DONE, port, 0);
	p->arrive_ps = s->now_ps + ser + port->delay_ps;
	p->next = NULL;
	if (port->wire_tail) {
		port->wire_tail->next = p;
	} else {
		port->wire_head = p;
		fab_eq_push(&s->eq, p->arrive_ps, EV_ARRIVE, port, 0);
	}
	port->wire_tail = p;
}

/* The first frame on port's wire has arrived: take it off the wire. */
static struct pkt *wire_pop(struct fab_sim *s, struct sim_port *port)
{
	struct pkt *p = port->wire_head;
	port->wire_head = p->next;
	if (port->wire_head)
		fab_eq_push(&s->eq, port->wire_head->arrive_ps, EV_ARRIVE, port, 0);
	else
		port->wire_tail = NULL;
	p->next = NULL;
	return p;
}

/* Sends the pending PFC frame, if any: one frame carries every priority
 * whose PAUSE or RESUME is waiting. */
static bool port_send_pending_pfc(struct fab_sim *s, struct sim_port *port)
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

void sim_port_send_pfc(struct fab_sim *s, struct sim_port *port, unsigned prio, uint16_t quanta)
{
	port->pfc_pending |= (uint8_t)(1u << prio);
	port->pfc_quanta[prio] = quanta;
	sim_port_kick(s, port);
}

static fab_time_ps pause_duration_ps(const struct sim_port *port, uint32_t quanta)
{
	return fab_ser_ps((uint64_t)quanta * 64u, port->rate_bps); /* 512 bit times */
}

static void pfc_arm_refresh(struct fab_sim *s, struct sim_port *port, unsigned prio)
{
	port->pfc_gen[prio]++;
	fab_time_ps half = pause_duration_ps(port, s->fp.pfc.quanta) / 2;
	fab_eq_push(&s->eq, s->now_ps + (half ? half : 1), EV_PFC_REFRESH, port,
		    prio | (port->pfc_gen[prio] << 3));
}

static void switch_start_tx(struct fab_sim *s, struct sim_port *port)
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
		if (s->fp.ecn.enabled && p->ecn == ECN_ECT0) {
			uint64_t q = port->qbytes[prio];
			struct sim_switch *esw = &s->switches[s->topo->switch_index[port->node]];
			bool mark = false;
			if (q > esw->kmax_bytes) {
				mark = true;
			} else if (q > esw->kmin_bytes) {
				double prob = s->fp.ecn.pmax * (double)(q - esw->kmin_bytes) /
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
		struct sim_switch *sw = &s->switches[s->topo->switch_index[port->node]];
		sw->buffer_used -= p->frame_bytes;
		struct sim_port *in = &s->ports[p->in_port];
		in->in_bytes[prio] -= p->frame_bytes;
		if ((in->xoff_sent & (1u << prio)) && in->in_bytes[prio] <= s->fp.pfc.xon_bytes) {
			in->xoff_sent &= (uint8_t)~(1u << prio);
			in->pfc_gen[prio]++;
			sim_port_send_pfc(s, in, (unsigned)prio, 0);
		}
		sim_port_transmit(s, port, p);
		return;
	}
}

void sim_port_kick(struct fab_sim *s, struct sim_port *port)
{
	if (port->busy)
		return;
	if (port->is_switch) {
		switch_start_tx(s, port);
	} else {
		struct sim_nic *nic = &s->nics[s->topo->nodes[port->node].nic];
		if (!port_send_pending_pfc(s, port))
			nic_start_tx(s, nic, port);
	}
}

void sim_port_enqueue(struct fab_sim *s, struct sim_port *port, struct pkt *p)
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

static void drop_packet(struct fab_sim *s, struct sim_port *eport, struct pkt *p)
{
	eport->st.drops++;
	eport->st.drop_bytes += p->frame_bytes;
	s->tot.drops++;
	if (p->kind == PKT_DATA)
		s->tot.data_drop_bytes += p->payload;
	sim_pkt_free(s, p);
}

static void switch_receive(struct fab_sim *s, struct sim_port *in, struct pkt *p)
{
	uint32_t node = in->node;
	uint32_t si = s->topo->switch_index[node];
	struct sim_switch *sw = &s->switches[si];
	uint32_t cnt;
	const uint32_t *hops = fab_topo_routes(s->topo, node, p->dst_nic, &cnt);
	if (!cnt) { /* no route while links are down: dropped here */
		in->st.unroutable++;
		s->tot.drops++;
		if (p->kind == PKT_DATA)
			s->tot.data_drop_bytes += p->payload;
		sim_pkt_free(s, p);
		return;
	}
	uint32_t eid = cnt == 1 ? hops[0] : hops[fab_mix64(p->hash ^ sw->ecmp_seed) % cnt];
	struct sim_port *eport = &s->ports[eid];
	unsigned prio = p->prio;
	uint32_t size = p->frame_bytes;
	const struct fab_pfc_params *pfc = &s->fp.pfc;
	bool lossless = pfc->enabled && (pfc->prio_mask & (1u << prio));

	if (sw->buffer_used + size > s->fp.buffer_bytes) {
		drop_packet(s, eport, p);
		return;
	}
	if (lossless) {
		if (in->in_bytes[prio] + size > pfc->xoff_bytes + in->headroom_bytes) {
			drop_packet(s, eport, p); /* headroom overflow */
			return;
		}
	} else {
		double limit = s->fp.dt_alpha * (double)(s->fp.buffer_bytes - sw->buffer_used);
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

static void receive_pfc(struct fab_sim *s, struct sim_port *port, const struct pkt *p)
{
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++) {
		if (!(p->pfc_mask & (1u << prio)))
			continue;
		uint8_t bit = (uint8_t)(1u << prio);
		if (p->pfc_quanta[prio] == 0) {
			if (port->paused_mask & bit) {
				port->st.paused_ps[prio] += s->now_ps - port->paused_since[prio];
				port->paused_mask &= (uint8_t)~bit;
			}
			port->paused_until[prio] = s->now_ps;
		} else {
			port->st.pause_rx[prio]++;
			if (s->now_ps < port->wd_ignore_until[prio])
				continue; /* the watchdog tripped: PAUSE is ignored for a while */
			if (s->fp.pfc_watchdog_ps && (port->paused_mask & bit) &&
			    s->now_ps - port->paused_since[prio] >= s->fp.pfc_watchdog_ps) {
				port->st.watchdog_trips++;
				port->st.paused_ps[prio] += s->now_ps - port->paused_since[prio];
				port->paused_mask &= (uint8_t)~bit;
				port->wd_ignore_until[prio] = s->now_ps + s->fp.pfc_watchdog_ps;
				continue;
			}
			port->paused_until[prio] = s->now_ps + pause_duration_ps(port, p->pfc_quanta[prio]);
			if (!(port->paused_mask & bit)) {
				port->paused_mask |= bit;
				port->paused_since[prio] = s->now_ps;
			}
			fab_eq_push(&s->eq, port->paused_until[prio], EV_PAUSE_EXPIRE, port, prio);
		}
	}
	sim_port_kick(s, port);
}

static void handle_arrive(struct fab_sim *s, struct pkt *p, uint32_t port_id)
{
	struct sim_port *port = &s->ports[port_id];
	struct sim_port *from = &s->ports[port->peer];
	if (from->down || (from->loss > 0 && fab_rng_unit(&from->rng) < from->loss)) {
		/* lost on the wire: the receiver sees a bad frame, or nothing */
		port->st.rx_errors++;
		s->tot.drops++;
		s->tot.wire_losses++;
		if (p->kind == PKT_DATA)
			s->tot.data_drop_bytes += p->payload;
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
	struct sim_nic *nic = &s->nics[s->topo->nodes[port->node].nic];
	if (p->kind == PKT_DATA)
		s->tot.data_rx_bytes += p->payload;
	nic_rx_account(s, nic, p);
	transport->on_receive(s, nic, p);
}

static void handle_pause_expire(struct fab_sim *s, struct sim_port *port, unsigned prio)
{
	uint8_t bit = (uint8_t)(1u << prio);
	if (!(port->paused_mask & bit) || s->now_ps < port->paused_until[prio])
		return;
	port->st.paused_ps[prio] += s->now_ps - port->paused_since[prio];
	port->paused_mask &= (uint8_t)~bit;
	sim_port_kick(s, port);
}

static void handle_pfc_refresh(struct fab_sim *s, struct sim_port *port, uint32_t arg)
{
	unsigned prio = arg & 7;
	if (!(port->xoff_sent & (1u << prio)) || (arg >> 3) != port->pfc_gen[prio])
		return;
	sim_port_send_pfc(s, port, prio, (uint16_t)s->fp.pfc.quanta);
	pfc_arm_refresh(s, port, prio);
}

static void handle_sample(struct fab_sim *s)
{
	for (uint32_t i = 0; i < s->topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		if (!port->is_switch)
			continue;
		if (s->nseries == s->cap_series) {
			s->cap_series = s->cap_series ? 2 * s->cap_series : 4096;
			s->series = fab_xrealloc(s->series, s->cap_series, sizeof *s->series);
		}
		uint64_t ptx = 0, prx = 0;
		for (unsigned k = 0; k < FAB_NPRIO; k++) {
			ptx += port->st.pause_tx[k];
			prx += port->st.pause_rx[k];
		}
		s->series[s->nseries++] = (struct fab_series_row){
			s->now_ps,
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
	for (uint32_t i = 0; i < s->nflows; i++) {
		struct sim_flow *f = &s->flows[i];
		if (f->spec.start_ps > s->now_ps || f->st.finish_ps != FAB_TIME_NEVER)
			continue;
		if (s->nfseries == s->cap_fseries) {
			s->cap_fseries = s->cap_fseries ? 2 * s->cap_fseries : 4096;
			s->fseries = fab_xrealloc(s->fseries, s->cap_fseries, sizeof *s->fseries);
		}
		double rate = 0;
		for (uint32_t k = 0; k < f->nqps; k++)
			rate += s->qps[f->first_qp + k]->cc.rc_bps;
		s->fseries[s->nfseries++] = (struct fab_flow_series_row){
			s->now_ps, i, f->st.delivered_bytes - f->series_mark, rate / f->nqps};
		f->series_mark = f->st.delivered_bytes;
	}
	fab_eq_push(&s->eq, s->now_ps + s->fp.series_interval_ps, EV_SAMPLE, NULL, 0);
}

/* A storming NIC sends PAUSE every 2 us, as a stuck NIC floods its port. */
static void storm_arm(struct fab_sim *s, struct sim_port *port, uint8_t prio)
{
	fab_eq_push(&s->eq, s->now_ps + 2 * FAB_PS_PER_US, EV_STORM, port, prio | (port->storm_gen << 3));
}

static void handle_storm(struct fab_sim *s, struct sim_port *port, uint32_t arg)
{
	if ((arg >> 3) != port->storm_gen)
		return;
	sim_port_send_pfc(s, port, arg & 7, 65535);
	storm_arm(s, port, (uint8_t)(arg & 7));
}

static void set_link_rate(struct fab_sim *s, uint32_t port, fab_rate_bps rate)
{
	s->ports[port].rate_bps = rate;
	s->ports[s->ports[port].peer].rate_bps = rate;
}

/* Routing converges: routes without the links down now. */
static void reroute(struct fab_sim *s)
{
	uint8_t *down = fab_xcalloc(s->topo->nports, 1);
	for (uint32_t i = 0; i < s->topo->nports; i++)
		down[i] = s->ports[i].down;
	/* the routes are the fabric's state: a failure changes them */
	fab_topo_reroute((struct fab_topo *)s->topo, down);
	free(down);
}

static void handle_fault(struct fab_sim *s, const struct fab_fault *f, int what)
{
	bool end = what == 1;
	struct sim_port *a = &s->ports[f->port], *b = &s->ports[a->peer];
	if (what == 2) {
		reroute(s);
		return;
	}
	switch (f->kind) {
	case FAB_FAULT_DEGRADE:
		set_link_rate(s, f->port, end ? s->topo->ports[f->port].rate_bps : f->rate_bps);
		break;
	case FAB_FAULT_LOSSY:
		a->loss = b->loss = end ? 0 : f->drop;
		break;
	case FAB_FAULT_DOWN:
		a->down = b->down = !end;
		a->down_since = b->down_since = s->now_ps;
		if (end) {
			reroute(s);
			sim_port_kick(s, a);
			sim_port_kick(s, b);
		} else {
			/* until routing converges, what hashes onto the link is lost */
			fab_eq_push(&s->eq, s->now_ps + f->convergence_ps, EV_FAULT, (void *)f, 2);
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
		struct sim_switch *sw = &s->switches[s->topo->switch_index[f->node]];
		sw->kmin_bytes = end ? s->fp.ecn.kmin_bytes : f->kmin_bytes;
		sw->kmax_bytes = end ? s->fp.ecn.kmax_bytes : f->kmax_bytes;
		break;
	}
	}
}

void fab_sim_add_fault(struct fab_sim *s, const struct fab_fault *f)
{
	if (f->kind == FAB_FAULT_SLOW_GPU)
		return;
	struct fab_fault *copy = fab_xcalloc(1, sizeof *copy);
	*copy = *f;
	s->faults = fab_xrealloc(s->faults, s->nfaults + 1, sizeof *s->faults);
	s->faults[s->nfaults++] = copy;
	fab_eq_push(&s->eq, f->start_ps, EV_FAULT, copy, 0);
	if (f->end_ps > f->start_ps)
		fab_eq_push(&s->eq, f->end_ps, EV_FAULT, copy, 1);
}

static fab_bytes auto_headroom(const struct fab_fabric_params *fp, const struct sim_port *port)
{
	/* what the upstream still sends after we decide to pause: a round trip
	 * of the link, plus frames already being serialised at both ends */
	uint64_t rtt_bytes = (uint64_t)(((__uint128_t)port->rate_bps * 2 * port->delay_ps) /
					 (8 * FAB_PS_PER_S));
	return rtt_bytes + 3ull * (fp->mtu + FAB_ROCE_WIRE_OVERHEAD) + FAB_PFC_FRAME +
	       FAB_WIRE_PREAMBLE_IFG;
}

struct fab_sim *fab_sim_new(const struct fab_topo *topo, const struct fab_fabric_params *fp,
			    uint64_t seed, const struct fab_sim_flow *flows, size_t nflows,
			    struct fab_err *err)
{
	struct fab_sim *s = fab_xcalloc(1, sizeof *s);
	s->topo = topo;
	s->fp = *fp;
	s->seed = seed;
	fab_eq_init(&s->eq);
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
	struct fab_rng seeds;
	fab_rng_init(&seeds, fp->ecmp_seed, FAB_RNG_ECMP_SEED);
	uint64_t same = fab_rng_next(&seeds);
	for (uint32_t n = 0; n < topo->nnodes; n++) {
		uint32_t si = topo->switch_index[n];
		if (si == UINT32_MAX)
			continue;
		s->switches[si].node = n;
		s->switches[si].ecmp_seed = fp->ecmp_same_hash ? same : fab_rng_next(&seeds);
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
	s->nflows = (uint32_t)nflows;
	s->flows = fab_xcalloc(nflows ? nflows : 1, sizeof *s->flows);
	uint64_t total_qps = 0;
	for (size_t i = 0; i < nflows; i++) {
		const struct fab_sim_flow *f = &flows[i];
		if (f->src_nic >= topo->nnics || f->dst_nic >= topo->nnics ||
		    f->src_nic == f->dst_nic || !f->bytes || !f->qps || f->prio >= FAB_NPRIO) {
			fab_err_set(err, FAB_EINVAL, "flow %u: invalid endpoints, size or queue pairs",
				    f->id);
			fab_sim_free(s);
			return NULL;
		}
		uint32_t q = f->qps;
		if ((fab_bytes)q > f->bytes)
			q = (uint32_t)f->bytes;
		s->flows[i].spec = *f;
		s->flows[i].nqps = q;
		s->flows[i].first_qp = (uint32_t)total_qps;
		s->flows[i].st.finish_ps = FAB_TIME_NEVER;
		total_qps += q;
	}
	(void)total_qps;
	for (uint32_t i = 0; i < s->nflows; i++) {
		struct sim_flow *f = &s->flows[i];
		f->first_qp = s->nqps;
		for (uint32_t k = 0; k < f->nqps; k++)
			sim_qp_new(s, f->spec.src_nic, f->spec.dst_nic, f->spec.prio);
		fab_eq_push(&s->eq, f->spec.start_ps, EV_FLOW_START, f, 0);
	}
	if (fp->engine == FAB_ENGINE_FLOW)
		fl_init(s);
	else if (fp->series_interval_ps)
		fab_eq_push(&s->eq, 0, EV_SAMPLE, NULL, 0);
	return s;
}

struct sim_qp *sim_qp_new(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio)
{
	if (s->nqps == s->cap_qps) {
		s->cap_qps = s->cap_qps ? 2 * s->cap_qps : 256;
		s->qps = fab_xrealloc(s->qps, s->cap_qps, sizeof *s->qps);
	}
	struct sim_qp *qp = fab_xcalloc(1, sizeof *qp);
	qp->id = s->nqps;
	s->qps[s->nqps++] = qp;
	qp->src_nic = src_nic;
	qp->dst_nic = dst_nic;
	qp->prio = prio;
	/* the UDP source port identifies the QP's 5-tuple */
	qp->sport = (uint16_t)(49152 + fab_mix64(s->seed ^ (0x51ed270bULL + qp->id)) % 16384);
	uint64_t ips = ((uint64_t)src_nic << 32) | dst_nic;
	uint64_t rips = ((uint64_t)dst_nic << 32) | src_nic;
	uint64_t l4 = ((uint64_t)qp->sport << 16) | FAB_ROCE_UDP_DPORT;
	qp->hash_fwd = fab_mix64(fab_mix64(ips) ^ l4 ^ 17);
	qp->hash_rev = fab_mix64(fab_mix64(rips) ^ l4 ^ 17);
	fab_dcqcn_init(&qp->cc, &s->fp.dcqcn, sim_nic_line_bps(s, src_nic));
	return qp;
}

/* what NIC `nic` can send at: its line rate, or its PCIe link's if slower */
double sim_nic_line_bps(const struct fab_sim *s, uint32_t nic)
{
	double line = (double)s->ports[s->nics[nic].port].rate_bps;
	return s->server.pcie_bps && (double)s->server.pcie_bps < line ? (double)s->server.pcie_bps : line;
}

void fab_sim_set_hooks(struct fab_sim *s, const struct fab_sim_hooks *h)
{
	s->hooks = *h;
}

void fab_sim_set_server(struct fab_sim *s, const struct fab_server_params *sp)
{
	s->server = *sp;
	if (s->fl)
		fl_set_rates(s);
	/* queue pairs opened before (the scenario's flows): DCQCN's line rate
	 * is the NIC's as PCIe caps it */
	for (uint32_t i = 0; i < s->nqps; i++)
		fab_dcqcn_init(&s->qps[i]->cc, &s->fp.dcqcn, sim_nic_line_bps(s, s->qps[i]->src_nic));
}

uint32_t fab_sim_open(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio)
{
	return sim_qp_new(s, src_nic, dst_nic, prio)->id;
}

void fab_sim_post(struct fab_sim *s, uint32_t conn, fab_bytes bytes, uint32_t cookie)
{
	if (s->fl)
		fl_post(s, s->qps[conn], bytes, NO_FLOW, cookie);
	else
		sim_qp_post(s, s->qps[conn], bytes, NO_FLOW, cookie);
}

void fab_sim_post_local(struct fab_sim *s, uint32_t src_gpu, uint32_t dst_gpu, fab_bytes bytes,
			uint32_t cookie)
{
	(void)dst_gpu; /* the NVSwitch does not block: only the sender's egress serialises */
	if (!s->nvl_free_ps)
		s->nvl_free_ps = fab_xcalloc(s->topo->ngpus, sizeof *s->nvl_free_ps);
	fab_time_ps start = FAB_MAX(s->now_ps, s->nvl_free_ps[src_gpu]);
	fab_time_ps ser = s->server.nvlink_bps ? fab_ser_ps(bytes, s->server.nvlink_bps) : 0;
	s->nvl_free_ps[src_gpu] = start + ser;
	fab_eq_push(&s->eq, start + ser + s->server.nvlink_lat_ps, EV_LOCAL, NULL, cookie);
}

void fab_sim_timer(struct fab_sim *s, fab_time_ps at_ps, uint32_t arg)
{
	fab_eq_push(&s->eq, FAB_MAX(at_ps, s->now_ps), EV_USER, NULL, arg);
}

void fab_sim_hold(struct fab_sim *s, int delta)
{
	s->holds = (uint64_t)((int64_t)s->holds + delta);
}

fab_time_ps fab_sim_now(const struct fab_sim *s)
{
	return s->now_ps;
}

const struct fab_server_params *fab_sim_server(const struct fab_sim *s)
{
	return &s->server;
}

uint32_t fab_sim_mtu(const struct fab_sim *s)
{
	return s->fp.mtu;
}

void fab_sim_set_progress(struct fab_sim *s, fab_progress_fn fn, void *ctx)
{
	s->progress = fn;
	s->progress_ctx = ctx;
}

int fab_sim_run(struct fab_sim *s, fab_time_ps end_ps)
{
	if (s->fl)
		return fl_run(s, end_ps);
	struct fab_ev ev;
	uint64_t next_progress = 1u << 20;
	while ((s->tot.flows_done < s->nflows || s->holds) && fab_eq_pop(&s->eq, &ev)) {
		if (end_ps && ev.t_ps > end_ps) {
			s->now_ps = end_ps;
			s->tot.stopped_by_end_time = true;
			break;
		}
		s->now_ps = ev.t_ps;
		if (sim_workload_event(s, &ev)) {
			sim_report_progress(s, &next_progress);
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
			transport->flow_start(s, ev.obj);
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
		default: /* the flow engine's */
			break;
		}
		sim_report_progress(s, &next_progress);
	}
	/* close the books: open intervals end now */
	for (uint32_t i = 0; i < s->topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		queue_area_update(s, port);
		for (unsigned prio = 0; prio < FAB_NPRIO; prio++)
			if (port->paused_mask & (1u << prio)) {
				port->st.paused_ps[prio] += s->now_ps - port->paused_since[prio];
				port->paused_since[prio] = s->now_ps;
			}
	}
	s->tot.events = s->eq.popped;
	s->tot.end_ps = s->now_ps;
	s->tot.data_inflight_bytes = s->live_data_payload;
	return 0;
}

void fab_sim_free(struct fab_sim *s)
{
	if (!s)
		return;
	fl_free(s);
	fab_eq_free(&s->eq);
	while (s->slabs) {
		struct pkt_slab *next = s->slabs->next;
		free(s->slabs);
		s->slabs = next;
	}
	free(s->ports);
	free(s->switches);
	free(s->nics);
	for (uint32_t i = 0; i < s->nqps; i++) {
		free(s->qps[i]->msgs);
		free(s->qps[i]);
	}
	free(s->qps);
	free(s->nvl_free_ps);
	free(s->flows);
	free(s->series);
	free(s->fseries);
	for (uint32_t i = 0; i < s->nfaults; i++)
		free(s->faults[i]);
	free(s->faults);
	free(s->port_stats_out);
	free(s->flow_stats_out);
	free(s->flow_specs_out);
	free(s);
}

const struct fab_port_stats *fab_sim_port_stats(const struct fab_sim *s)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->port_stats_out)
		m->port_stats_out = fab_xcalloc(s->topo->nports, sizeof *m->port_stats_out);
	for (uint32_t i = 0; i < s->topo->nports; i++)
		m->port_stats_out[i] = s->ports[i].st;
	return m->port_stats_out;
}

const struct fab_flow_stats *fab_sim_flow_stats(const struct fab_sim *s)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->flow_stats_out)
		m->flow_stats_out = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *m->flow_stats_out);
	for (uint32_t i = 0; i < s->nflows; i++)
		m->flow_stats_out[i] = s->flows[i].st;
	return m->flow_stats_out;
}

const struct fab_sim_flow *fab_sim_flows(const struct fab_sim *s, size_t *n)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->flow_specs_out)
		m->flow_specs_out = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *m->flow_specs_out);
	for (uint32_t i = 0; i < s->nflows; i++)
		m->flow_specs_out[i] = s->flows[i].spec;
	*n = s->nflows;
	return m->flow_specs_out;
}

const struct fab_sim_totals *fab_sim_totals(const struct fab_sim *s)
{
	return &s->tot;
}

const struct fab_series_row *fab_sim_series(const struct fab_sim *s, size_t *n)
{
	*n = s->nseries;
	return s->series;
}

const struct fab_flow_series_row *fab_sim_flow_series(const struct fab_sim *s, size_t *n)
{
	*n = s->nfseries;
	return s->fseries;
}

const struct fab_topo *fab_sim_topo(const struct fab_sim *s)
{
	return s->topo;
}

uint32_t fab_sim_nqps(const struct fab_sim *s)
{
	return s->nqps;
}

bool fab_sim_qp_used(const struct fab_sim *s, uint32_t qp)
{
	return s->qps[qp]->snd_max > 0;
}

void fab_sim_qp_ends(const struct fab_sim *s, uint32_t qp, uint32_t *src_nic, uint32_t *dst_nic)
{
	*src_nic = s->qps[qp]->src_nic;
	*dst_nic = s->qps[qp]->dst_nic;
}

uint32_t sim_path(const struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint64_t hash, uint32_t *ports,
		  uint32_t max)
{
	const struct fab_topo *t = s->topo;
	uint32_t n = 0, port = t->nodes[t->nic_node[src_nic]].first_port;
	while (n < max) {
		ports[n++] = port;
		uint32_t node = t->ports[t->ports[port].peer].node;
		if (t->nodes[node].kind != FAB_NODE_SWITCH)
			break;
		uint32_t cnt;
		const uint32_t *hops = fab_topo_routes(t, node, dst_nic, &cnt);
		if (!cnt)
			break;
		const struct sim_switch *sw = &s->switches[t->switch_index[node]];
		port = cnt == 1 ? hops[0] : hops[fab_mix64(hash ^ sw->ecmp_seed) % cnt];
	}
	return n;
}

uint32_t fab_sim_qp_path(const struct fab_sim *s, uint32_t qp, uint32_t *ports, uint32_t max)
{
	const struct sim_qp *q = s->qps[qp];
	return sim_path(s, q->src_nic, q->dst_nic, q->hash_fwd, ports, max);
}

const struct fab_fabric_params *fab_sim_fabric(const struct fab_sim *s)
{
	return &s->fp;
}

fab_time_ps fab_sim_conn_latency(const struct fab_sim *s, uint32_t conn)
{
	uint32_t path[64], n = fab_sim_qp_path(s, conn, path, 64);
	uint32_t wire = s->fp.mtu + FAB_ROCE_WIRE_OVERHEAD;
	fab_time_ps t = 0;
	for (uint32_t h = 0; h < n; h++)
		t += s->ports[path[h]].delay_ps + (h ? fab_ser_ps(wire, s->ports[path[h]].rate_bps) : 0);
	return t;
}

double fab_sim_conn_rate(const struct fab_sim *s, uint32_t conn)
{
	uint32_t path[64], n = fab_sim_qp_path(s, conn, path, 64);
	double eff = (double)s->fp.mtu / (s->fp.mtu + FAB_ROCE_WIRE_OVERHEAD), best = 1e300;
	for (uint32_t h = 0; h < n; h++) {
		double bps = (double)s->ports[path[h]].rate_bps;
		if (!h && s->server.pcie_bps && (double)s->server.pcie_bps < bps)
			bps = (double)s->server.pcie_bps;
		best = FAB_MIN(best, bps * eff / 8);
	}
	return best;
}

void fab_sim_flow_engine_stats(const struct fab_sim *s, uint64_t *recomputes, double *mean_component)
{
	fl_stats(s, recomputes, mean_component);
}

fab_bytes fab_sim_headroom(const struct fab_sim *s, uint32_t port)
{
	return s->ports[port].headroom_bytes;
}
