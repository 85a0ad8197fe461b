/*
 * pfc.c - Priority Flow Control (IEEE 802.1Qbb), the packet engine's first
 * link-level flow control (llfc.h).
 *
 * Switch ingress: when the bytes a port's priority holds in the buffer pass
 * XOFF the switch sends PAUSE upstream (refreshed every half pause while
 * they stay above) and keeps admitting into the headroom; at or below XON
 * it sends RESUME; past XOFF + headroom the MMU drops.  The headroom, unless
 * set, is what the upstream still sends after the decision: the link's round
 * trip at its rate plus three full frames and a PFC frame.  Obeying: a PAUSE
 * of q quanta holds the priority for q x 512 bit times at the port's rate
 * (after the frame being serialised); RESUME releases it.  The switch
 * watchdog (as SONiC's and switch vendors', action drop): an egress queue
 * paused for pfc_watchdog without sending, with packets waiting, turns lossy:
 * PAUSE is ignored, what it holds and what comes for it is dropped, until
 * no PAUSE has arrived for the restore time.  It polls every pfc_watchdog
 * while a pause lasts.  The NIC watchdog: a NIC whose PAUSEs have lasted
 * nic_watchdog (its receive pipeline stalled) sends RESUME and never
 * pauses again, as NIC firmware's stall prevention does.  NIC side: data of lossless priorities fills a receive
 * buffer that drains toward the GPU at nic_rx_drain (PCIe); past
 * nic_rx_buffer the NIC pauses its leaf, and resumes at half of it.  One PFC
 * frame carries every priority whose PAUSE or RESUME is waiting.
 */
#include "llfc.h"

static uint8_t pfc_lossless_mask(const struct psim *s);

/* NIC watchdog: false when a NIC's PAUSE must not go (its watchdog tripped
 * now, and a RESUME for every lossless priority went instead, or before) */
static bool nic_pause_allowed(struct psim *s, struct sim_port *port, uint16_t quanta)
{
	struct pfc_port *pf = &port->pfc;
	if (!quanta) {
		pf->nic_stalled = false; /* a RESUME: the receive pipeline moves */
		return true;
	}
	if (pf->nic_pause_off)
		return false;
	if (!pf->nic_stalled) {
		pf->nic_stalled = true;
		pf->nic_stall_since = s->c.now_ps;
	}
	if (!s->c.fp.nic_watchdog_ps || s->c.now_ps - pf->nic_stall_since < s->c.fp.nic_watchdog_ps)
		return true;
	pf->nic_pause_off = true;
	pf->nic_stalled = false;
	port->st.watchdog_trips++;
	uint8_t m = pfc_lossless_mask(s);
	port->pfc.pending |= m;
	for (unsigned i = 0; i < FAB_NPRIO; i++)
		if (m & (1u << i))
			port->pfc.quanta[i] = 0;
	sim_port_kick(s, port);
	return false;
}

static void pfc_send(struct psim *s, struct sim_port *port, unsigned prio, uint16_t quanta)
{
	if (!port->is_switch && !nic_pause_allowed(s, port, quanta))
		return;
	port->pfc.pending |= (uint8_t)(1u << prio);
	port->pfc.quanta[prio] = quanta;
	sim_port_kick(s, port);
}

/* Sends the pending PFC frame, if any: one frame carries every priority
 * whose PAUSE or RESUME is waiting. */
static bool pfc_send_pending(struct psim *s, struct sim_port *port)
{
	if (!port->pfc.pending)
		return false;
	struct pkt *p = sim_pkt_alloc(s);
	p->kind = PKT_PFC;
	p->frame_bytes = FAB_PFC_FRAME;
	p->pfc_mask = port->pfc.pending;
	for (unsigned i = 0; i < FAB_NPRIO; i++) {
		if (!(port->pfc.pending & (1u << i)))
			continue;
		p->pfc_quanta[i] = port->pfc.quanta[i];
		if (port->pfc.quanta[i])
			port->st.pause_tx[i]++;
		else
			port->st.resume_tx[i]++;
	}
	port->pfc.pending = 0;
	sim_port_transmit(s, port, p);
	return true;
}

static fab_time_ps pause_duration_ps(const struct sim_port *port, uint32_t quanta)
{
	return fab_ser_ps((uint64_t)quanta * 64u, port->rate_bps); /* 512 bit times */
}

static void pfc_arm_refresh(struct psim *s, struct sim_port *port, unsigned prio)
{
	port->pfc.gen[prio]++;
	fab_time_ps half = pause_duration_ps(port, s->c.fp.pfc.quanta) / 2;
	fab_eq_push(&s->c.eq, s->c.now_ps + (half ? half : 1), EV_PFC_REFRESH, port, prio | (port->pfc.gen[prio] << 3));
}

static uint8_t pfc_lossless_mask(const struct psim *s)
{
	return s->c.fp.pfc.enabled ? s->c.fp.pfc.prio_mask : 0;
}

static fab_bytes pfc_headroom(const struct psim *s, const struct sim_port *port)
{
	const struct fab_fabric_params *fp = &s->c.fp;
	return fab_pfc_headroom(fp->pfc.headroom_bytes, fp->pfc.headroom_delays, fp->mtu, &s->c.wire, port->rate_bps,
				port->delay_ps);
}

static void pfc_init_port(struct psim *s, struct sim_port *port)
{
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	port->pfc.headroom_bytes = pfc_headroom(s, port);
	if (!pfc->dynamic || !port->is_switch)
		return;
	port->pfc.shift = (uint8_t)fab_pfc_dyn_shift(pfc, port->rate_bps);
	pkt_switch_of(s, port)->pfc_set_aside += port->pfc.headroom_bytes + pfc->reserve_bytes;
}

/* a delay fault: the headroom for the link's new round trip, the switch's
 * pool set aside by the difference */
static void pfc_delay_changed(struct psim *s, struct sim_port *port)
{
	fab_bytes was = port->pfc.headroom_bytes;
	port->pfc.headroom_bytes = pfc_headroom(s, port);
	if (s->c.fp.pfc.dynamic && port->is_switch)
		pkt_switch_of(s, port)->pfc_set_aside += port->pfc.headroom_bytes - was;
}

/* dynamic: the pause threshold of ingress port `in` now */
static uint64_t dyn_threshold(const struct psim *s, const struct sim_port *in)
{
	const struct sim_switch *sw = pkt_switch_of(s, in);
	uint64_t held = sw->pfc_set_aside + sw->pfc_shared, buf = s->c.fp.buffer_bytes;
	return (buf > held ? buf - held : 0) >> in->pfc.shift;
}

/* dynamic: bytes of prio from `in` beyond its reserve and not in headroom */
static uint64_t dyn_shared(const struct psim *s, const struct sim_port *in, unsigned prio)
{
	uint64_t ingress = in->pq[prio].in_bytes - in->pq[prio].hdrm, reserve = s->c.fp.pfc.reserve_bytes;
	return ingress > reserve ? ingress - reserve : 0;
}

static void pfc_port_thresholds(const struct psim *s, const struct sim_port *port, fab_bytes *headroom, fab_bytes *xoff)
{
	*headroom = port->pfc.headroom_bytes;
	if (!s->c.fp.pfc.dynamic) {
		*xoff = s->c.fp.pfc.xoff_bytes;
		return;
	}
	const struct sim_switch *sw = pkt_switch_of(s, port);
	uint64_t buf = s->c.fp.buffer_bytes;
	*xoff = (buf > sw->pfc_set_aside ? buf - sw->pfc_set_aside : 0) >> port->pfc.shift;
}

static bool pfc_room(const struct psim *s, const struct sim_port *in, unsigned prio, uint32_t size)
{
	if (!s->c.fp.pfc.dynamic)
		return in->pq[prio].in_bytes + size <= s->c.fp.pfc.xoff_bytes + in->pfc.headroom_bytes;
	/* refused only with the headroom full and the shared share used up */
	return !(in->pq[prio].hdrm + size > in->pfc.headroom_bytes &&
		 dyn_shared(s, in, prio) + size > dyn_threshold(s, in));
}

static void pause_upstream(struct psim *s, struct sim_port *in, unsigned prio)
{
	in->pfc.xoff_sent |= (uint8_t)(1u << prio);
	pfc_send(s, in, prio, (uint16_t)s->c.fp.pfc.quanta);
	if (!s->c.fp.pfc.until_resume)
		pfc_arm_refresh(s, in, prio);
}

static void resume_upstream(struct psim *s, struct sim_port *in, unsigned prio)
{
	in->pfc.xoff_sent &= (uint8_t) ~(1u << prio);
	in->pfc.gen[prio]++;
	pfc_send(s, in, prio, 0);
}

/* dynamic: the new bytes go to the reserve, the shared pool, or, past
 * the threshold, the headroom; PAUSE once any byte is in the headroom or
 * the shared use reaches the threshold */
static void dyn_admitted(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	uint64_t reserve = s->c.fp.pfc.reserve_bytes;
	uint64_t ingress = in->pq[prio].in_bytes - in->pq[prio].hdrm; /* with the new bytes */
	if (ingress > reserve) {
		if (ingress - reserve > dyn_threshold(s, in)) {
			in->pq[prio].hdrm += size;
		} else {
			struct sim_switch *sw = pkt_switch_of(s, in);
			sw->pfc_shared += FAB_MIN((uint64_t)size, ingress - reserve);
		}
	}
	if (!(in->pfc.xoff_sent & (1u << prio)) &&
	    (in->pq[prio].hdrm > 0 || dyn_shared(s, in, prio) >= dyn_threshold(s, in)))
		pause_upstream(s, in, prio);
}

/* dynamic: bytes leave the headroom first, then the shared pool; RESUME
 * with the headroom empty and the shared use 0 or resume_offset below the
 * threshold */
static void dyn_released(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	uint64_t reserve = s->c.fp.pfc.reserve_bytes;
	uint64_t from_hdrm = FAB_MIN(in->pq[prio].hdrm, (uint64_t)size);
	uint64_t ingress = in->pq[prio].in_bytes + size - in->pq[prio].hdrm; /* before */
	uint64_t from_shared = FAB_MIN(size - from_hdrm, ingress > reserve ? ingress - reserve : 0);
	in->pq[prio].hdrm -= from_hdrm;
	struct sim_switch *sw = pkt_switch_of(s, in);
	FAB_ASSERT(sw->pfc_shared >= from_shared);
	sw->pfc_shared -= from_shared;
	if (!(in->pfc.xoff_sent & (1u << prio)) || in->pq[prio].hdrm)
		return;
	uint64_t shared = dyn_shared(s, in, prio);
	if (shared == 0 || shared + s->c.fp.pfc.resume_offset <= dyn_threshold(s, in))
		resume_upstream(s, in, prio);
}

/* past XOFF: PAUSE upstream, refreshed until XON */
static void pfc_admitted(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	if (s->c.fp.pfc.dynamic) {
		dyn_admitted(s, in, prio, size);
		return;
	}
	if (in->pq[prio].in_bytes > s->c.fp.pfc.xoff_bytes && !(in->pfc.xoff_sent & (1u << prio)))
		pause_upstream(s, in, prio);
}

/* at or below XON: RESUME */
static void pfc_released(struct psim *s, struct sim_port *in, unsigned prio, uint32_t size)
{
	if (s->c.fp.pfc.dynamic) {
		dyn_released(s, in, prio, size);
		return;
	}
	if ((in->pfc.xoff_sent & (1u << prio)) && in->pq[prio].in_bytes <= s->c.fp.pfc.xon_bytes)
		resume_upstream(s, in, prio);
}

static void pfc_receive(struct psim *s, struct sim_port *port, const struct pkt *p)
{
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++) {
		if (!(p->pfc_mask & (1u << prio)))
			continue;
		uint8_t bit = (uint8_t)(1u << prio);
		if (p->pfc_quanta[prio] == 0) {
			if (port->paused_mask & bit) {
				port->st.paused_ps[prio] += s->c.now_ps - port->pfc.paused_since[prio];
				port->paused_mask &= (uint8_t)~bit;
			}
			port->pfc.paused_until[prio] = s->c.now_ps;
		} else {
			port->st.pause_rx[prio]++;
			if (port->dropped_mask & bit) {
				port->pfc.wd_last_pause[prio] =
					s->c.now_ps; /* lossy: ignored, and the peer not quiet */
				continue;
			}
			bool until_resume = s->c.fp.pfc.until_resume;
			port->pfc.paused_until[prio] = until_resume
				? FAB_TIME_NEVER
				: s->c.now_ps + pause_duration_ps(port, p->pfc_quanta[prio]);
			if (!(port->paused_mask & bit)) {
				port->paused_mask |= bit;
				port->pfc.paused_since[prio] = s->c.now_ps;
				if (port->is_switch && s->c.fp.pfc_watchdog_ps)
					fab_eq_push(&s->c.eq, s->c.now_ps + s->c.fp.pfc_watchdog_ps, EV_PFC_WD, port,
						    prio);
			}
			if (!until_resume)
				fab_eq_push(&s->c.eq, port->pfc.paused_until[prio], EV_PAUSE_EXPIRE, port, prio);
		}
	}
	sim_port_kick(s, port);
}

static void handle_pause_expire(struct psim *s, struct sim_port *port, unsigned prio)
{
	uint8_t bit = (uint8_t)(1u << prio);
	if (!(port->paused_mask & bit) || s->c.now_ps < port->pfc.paused_until[prio])
		return;
	port->st.paused_ps[prio] += s->c.now_ps - port->pfc.paused_since[prio];
	port->paused_mask &= (uint8_t)~bit;
	sim_port_kick(s, port);
}

/* EV_PFC_WD: the switch watchdog looks at a paused queue, or at a lossy
 * one's quiet time */
static void handle_watchdog(struct psim *s, struct sim_port *port, unsigned prio)
{
	uint8_t bit = (uint8_t)(1u << prio);
	fab_time_ps wd = s->c.fp.pfc_watchdog_ps, now = s->c.now_ps;
	fab_time_ps restore = s->c.fp.pfc_wd_restore_ps ? s->c.fp.pfc_wd_restore_ps : wd;
	if (port->dropped_mask & bit) {
		fab_time_ps due = port->pfc.wd_last_pause[prio] + restore;
		if (now >= due)
			port->dropped_mask &= (uint8_t)~bit; /* quiet for the restore time: lossless again */
		else
			fab_eq_push(&s->c.eq, due, EV_PFC_WD, port, prio);
		return;
	}
	if (!(port->paused_mask & bit) || now - port->pfc.paused_since[prio] < wd)
		return; /* released, or paused again later (that pause has its own check) */
	if (!port->pq[prio].qbytes) {
		fab_eq_push(&s->c.eq, now + wd, EV_PFC_WD, port, prio); /* nothing stuck yet: look again */
		return;
	}
	port->st.watchdog_trips++;
	port->st.paused_ps[prio] += now - port->pfc.paused_since[prio];
	port->paused_mask &= (uint8_t)~bit;
	port->dropped_mask |= bit;
	port->pfc.wd_last_pause[prio] = now;
	switch_flush(s, port, prio);
	fab_eq_push(&s->c.eq, now + restore, EV_PFC_WD, port, prio);
	sim_port_kick(s, port);
}

static void handle_pfc_refresh(struct psim *s, struct sim_port *port, uint32_t arg)
{
	unsigned prio = arg & 7;
	if (!(port->pfc.xoff_sent & (1u << prio)) || (arg >> 3) != port->pfc.gen[prio])
		return;
	pfc_send(s, port, prio, (uint16_t)s->c.fp.pfc.quanta);
	pfc_arm_refresh(s, port, prio);
}

static bool nic_pause_enabled(const struct psim *s, unsigned prio)
{
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	return pfc->enabled && pfc->nic_rx_drain_bps && (pfc->prio_mask & (1u << prio));
}

static void rx_level_update(struct psim *s, struct sim_nic *nic)
{
	double drained = (double)(s->c.now_ps - nic->rx_level_ps) * (double)s->c.fp.pfc.nic_rx_drain_bps /
		(8.0 * (double)FAB_PS_PER_S);
	nic->rx_level_bytes = nic->rx_level_bytes > drained ? nic->rx_level_bytes - drained : 0;
	nic->rx_level_ps = s->c.now_ps;
}

/* Next check: when the buffer reaches the resume point, or half a pause. */
static void rx_arm_drain(struct psim *s, struct sim_nic *nic)
{
	const struct fab_pfc_params *pfc = &s->c.fp.pfc;
	double xon = (double)pfc->nic_rx_buffer_bytes / 2;
	double excess = nic->rx_level_bytes > xon ? nic->rx_level_bytes - xon : 0;
	fab_time_ps to_xon = (fab_time_ps)(excess * 8.0 * (double)FAB_PS_PER_S / (double)pfc->nic_rx_drain_bps) + 1;
	struct sim_port *port = &s->ports[nic->port];
	fab_time_ps half = fab_ser_ps((uint64_t)pfc->quanta * 64u, port->rate_bps) / 2 + 1;
	nic->rx_gen++;
	fab_eq_push(&s->c.eq, s->c.now_ps + FAB_MIN(to_xon, half), EV_NIC_DRAIN, nic, nic->rx_gen);
}

static void pfc_nic_received(struct psim *s, struct sim_nic *nic, const struct pkt *p)
{
	if (p->kind != PKT_DATA || !nic_pause_enabled(s, p->prio))
		return;
	rx_level_update(s, nic);
	nic->rx_level_bytes += p->frame_bytes;
	uint8_t bit = (uint8_t)(1u << p->prio);
	if (nic->rx_level_bytes > (double)s->c.fp.pfc.nic_rx_buffer_bytes && !(nic->rx_xoff_sent & bit)) {
		nic->rx_xoff_sent |= bit;
		pfc_send(s, &s->ports[nic->port], p->prio, (uint16_t)s->c.fp.pfc.quanta);
		rx_arm_drain(s, nic);
	}
}

static void nic_on_drain(struct psim *s, struct sim_nic *nic, uint32_t gen)
{
	if (gen != nic->rx_gen || !nic->rx_xoff_sent)
		return;
	rx_level_update(s, nic);
	struct sim_port *port = &s->ports[nic->port];
	bool resume = nic->rx_level_bytes <= (double)s->c.fp.pfc.nic_rx_buffer_bytes / 2;
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++) {
		if (!(nic->rx_xoff_sent & (1u << prio)))
			continue;
		pfc_send(s, port, prio, resume ? 0 : (uint16_t)s->c.fp.pfc.quanta);
	}
	if (resume)
		nic->rx_xoff_sent = 0;
	else
		rx_arm_drain(s, nic);
}

static void pfc_on_event(struct psim *s, const struct fab_ev *ev)
{
	switch (ev->type) {
	case EV_PAUSE_EXPIRE:
		handle_pause_expire(s, ev->obj, ev->arg);
		break;
	case EV_PFC_REFRESH:
		handle_pfc_refresh(s, ev->obj, ev->arg);
		break;
	case EV_NIC_DRAIN:
		nic_on_drain(s, ev->obj, ev->arg);
		break;
	case EV_PFC_WD:
		handle_watchdog(s, ev->obj, ev->arg);
		break;
	}
}

/* the time paused so far counts up to the end of the run */
static void pfc_finish(struct psim *s, struct sim_port *port)
{
	for (unsigned prio = 0; prio < FAB_NPRIO; prio++)
		if (port->paused_mask & (1u << prio)) {
			port->st.paused_ps[prio] += s->c.now_ps - port->pfc.paused_since[prio];
			port->pfc.paused_since[prio] = s->c.now_ps;
		}
}

const struct pkt_llfc_ops pkt_pfc = {
	.name = "pfc",
	.delay_changed = pfc_delay_changed,
	.lossless_mask = pfc_lossless_mask,
	.init_port = pfc_init_port,
	.port_thresholds = pfc_port_thresholds,
	.room = pfc_room,
	.admitted = pfc_admitted,
	.released = pfc_released,
	.nic_received = pfc_nic_received,
	.send_pending = pfc_send_pending,
	.receive = pfc_receive,
	.on_event = pfc_on_event,
	.finish = pfc_finish,
	.send = pfc_send,
};
