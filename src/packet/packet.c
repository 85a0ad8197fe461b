/*
 * packet.c - the packet-level engine: its state, its event loop, and the
 * table of operations it fills for sim.h (engine.h).
 *
 * The engine's modules, one concept each:
 *   port.c      ports and links: serialisation, propagation, wire losses
 *   switch.c    forwarding (ECMP), egress queues and their disciplines
 *   mmu.c       the switch's shared buffer: admission and accounting
 *   llfc.h      link-level flow control; pfc.c is PFC (switch and NIC side)
 *   nic.c       the NIC's egress: queue pairs onto the wire, pacing, PCIe
 *   transport.h the transports' interface; roce.c is RoCEv2, tcp.c TCP
 *   credit.c    InfiniBand's credits, the other link-level flow control
 *   telemetry.c what a data packet carries for its congestion control
 *   qdisc.h     the switches' queue disciplines: red.c, step.c, telemetry.c's int
 *   models.c    the registries: queue pairs, flow controls, disciplines by name
 *   parallel.c  a run split over threads (parallel_ranks.c: over ranks)
 *   fault.c     faults applied to ports, links and switches
 *   counters.c  time series and the books closed at the end
 * Frames are pooled: allocated from slabs, recycled on a free list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llfc.h"
#include "packet.h"
#include "qdisc.h"
#include "transport.h"

struct pkt *sim_pkt_alloc(struct psim *s)
{
	if (!s->free_pkts) {
		struct pkt_slab *slab = NULL;
		if (posix_memalign((void **)&slab, 64, sizeof *slab)) {
			fputs("fabscope: out of memory\n", stderr);
			abort();
		}
		memset(slab, 0, sizeof *slab);
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
	if (p->tel) {
		pkt_tel_free(s, p->tel);
		p->tel = 0;
	}
	if (p->kind == PKT_DATA) {
		FAB_ASSERT(s->live_data_payload >= p->payload);
		s->live_data_payload -= p->payload;
	}
	p->next = s->free_pkts;
	s->free_pkts = p;
}

void pkt_event(struct psim *s, const struct fab_ev *ev)
{
	if (sim_workload_event(&s->c, ev))
		return;
	switch (ev->type) {
	case EV_TX_DONE:
		sim_port_tx_done(s, ev->obj);
		break;
	case EV_ARRIVE:
		sim_port_arrive(s, &s->ports[ev->arg], ev->obj);
		break;
	case EV_PAUSE_EXPIRE:
	case EV_PFC_REFRESH:
	case EV_NIC_DRAIN:
	case EV_PFC_WD:
		s->llfc->on_event(s, ev);
		break;
	case EV_QP_WAKE:
		nic_on_wake(s, ev->obj);
		break;
	case EV_FLOW_START:
		sim_flow_start(&s->c, ev->obj);
		break;
	case EV_RTO:
	case EV_CC_TIMER:
		qp_transport(ev->obj)->on_timer(s, ev);
		break;
	case EV_NIC_PCIE:
		nic_on_pcie(s, ev->obj);
		break;
	case EV_SAMPLE:
		counters_sample(s);
		break;
	case EV_FAULT:
		fault_apply(s, ev->obj, (int)ev->arg);
		break;
	case EV_STORM:
		fault_storm(s, ev->obj, ev->arg);
		break;
	default:
		break;
	}
}

/* The run: events in (time, key) order until the last flow (and the
 * workload's last hold) is done, then on to the next multiple of the grid
 * (the smallest link delay): where that instant falls does not depend on
 * how the run is split, so a parallel run (parallel.c) stops at the same
 * event as this one. */
static int pkt_run(struct fab_sim *sim, fab_time_ps end_ps)
{
	struct psim *s = (struct psim *)sim;
	s->idle_ps = FAB_TIME_NEVER;
	if ((s->c.fp.threads > 1 || s->c.ranks.n > 1) && sim_busy(&s->c)) {
		int k = pkt_run_parallel(s, end_ps);
		if (k)
			return k < 0 ? -1 : 0;
	}
	struct fab_ev ev;
	uint64_t next_progress = 1u << 20;
	fab_time_ps stop = FAB_TIME_NEVER;
	if (!sim_busy(&s->c)) /* nothing to do: nothing runs */
		stop = s->c.now_ps, s->idle_ps = s->c.now_ps;
	for (;;) {
		fab_time_ps t = fab_eq_peek_time(&s->c.eq);
		if (t >= stop || (end_ps && t > end_ps)) {
			/* the end: the held events before it run first, and the
			 * earliest left (it ends the run too) says how it ended */
			t = sim_port_held_settle(s, stop, end_ps, t);
			if (t < stop && stop == FAB_TIME_NEVER) { /* past end_ps */
				s->c.now_ps = end_ps;
				s->c.tot.stopped_by_end_time = true;
			}
			break;
		}
		fab_eq_pop(&s->c.eq, &ev);
		FAB_ASSERT(ev.t_ps >= s->c.now_ps); /* time never runs backwards */
		s->c.now_ps = ev.t_ps;
		const struct fab_ev *nx = fab_eq_top(&s->c.eq);
		if (nx && nx->type == EV_ARRIVE)
			pkt_prefetch_arrival(s, nx);
		pkt_event(s, &ev);
		sim_report_progress(&s->c, &next_progress);
		if (stop == FAB_TIME_NEVER && !sim_busy(&s->c)) {
			s->idle_ps = s->c.now_ps;
			stop = pkt_stop_after(s, s->c.now_ps);
		}
	}
	counters_close(s);
	return 0;
}

/* the queue pairs opened before the server was set (the scenario's
 * flows): DCQCN's line rate is the NIC's as PCIe caps it */
static void pkt_server_changed(struct fab_sim *sim)
{
	struct psim *s = (struct psim *)sim;
	for (uint32_t i = 0; i < sim->nqps; i++)
		pkt_qp(s, i)->tp->line_changed(s, pkt_qp(s, i));
}

/* the random draws' streams, from the start: the switches' ECN marking,
 * the links' losses */
static void init_draws(struct psim *s, uint64_t seed)
{
	for (uint32_t si = 0; si < s->c.topo->nswitches; si++)
		fab_rng_init(&s->switches[si].rng, seed, fab_rng_stream(FAB_RNG_ECN_MARK, si));
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		fab_rng_init(&s->ports[i].rng, seed, fab_rng_stream(FAB_RNG_LINK_LOSS, i));
}

static void pkt_rest(struct fab_sim *sim)
{
	struct psim *s = (struct psim *)sim;
	init_draws(s, sim->seed);
	if (s->llfc->rest)
		s->llfc->rest(s);
	for (uint32_t i = 0; i < sim->nqps; i++) {
		struct sim_qp *qp = pkt_qp(s, i);
		if (qp->tp->rest)
			qp->tp->rest(s, qp);
		else
			qp->tp->line_changed(s, qp);
	}
}

static struct sim_conn *pkt_conn_alloc(struct fab_sim *sim, int transport)
{
	const struct fab_transport_ops *tp = ((struct psim *)sim)->qp_ops[transport];
	/* cache lines of its own: what its receiver writes last never shares
	 * one with the next queue pair's header (a parallel run's partitions
	 * run the two at once) */
	size_t size = (tp->qp_size + FAB_GAP - 1) / FAB_GAP * FAB_GAP;
	struct sim_qp *qp = NULL;
	if (posix_memalign((void **)&qp, FAB_GAP, size)) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	memset(qp, 0, size);
	qp->tp = tp;
	return &qp->c;
}

static void pkt_conn_init(struct fab_sim *sim, struct sim_conn *c)
{
	struct sim_qp *qp = (struct sim_qp *)c;
	qp->tp->init((struct psim *)sim, qp);
}

static void pkt_post(struct fab_sim *sim, struct sim_conn *c, fab_bytes bytes, uint32_t flow, uint32_t cookie)
{
	struct sim_qp *qp = (struct sim_qp *)c;
	qp->tp->post((struct psim *)sim, qp, bytes, flow, cookie);
}

static void pkt_port_stats(const struct fab_sim *sim, struct fab_port_stats *out)
{
	const struct psim *s = (const struct psim *)sim;
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		out[i] = s->ports[i].st;
}

static void pkt_port_pfc(const struct fab_sim *sim, uint32_t port, fab_bytes *headroom, fab_bytes *xoff)
{
	const struct psim *s = (const struct psim *)sim;
	s->llfc->port_thresholds(s, &s->ports[port], headroom, xoff);
}

static fab_rate_bps pkt_port_rate(const struct fab_sim *sim, uint32_t port)
{
	return ((const struct psim *)sim)->ports[port].rate_bps;
}

static bool pkt_port_down(const struct fab_sim *sim, uint32_t port)
{
	return ((const struct psim *)sim)->ports[port].down;
}

static void pkt_free(struct fab_sim *sim)
{
	struct psim *s = (struct psim *)sim;
	while (s->slabs) {
		struct pkt_slab *next = s->slabs->next;
		free(s->slabs);
		s->slabs = next;
	}
	free(s->held);
	free(s->tels);
	free(s->ports);
	for (uint32_t i = 0; s->switches && i < s->c.topo->nswitches; i++)
		free(s->switches[i].flowlets);
	free(s->switches);
	free(s->nics);
	for (uint32_t i = 0; i < s->c.nqps; i++)
		pkt_qp(s, i)->tp->destroy(pkt_qp(s, i));
	sim_core_free(&s->c);
	free(s);
}

static const struct sim_engine_ops packet_ops = {
	.name = "packet",
	.conn_alloc = pkt_conn_alloc,
	.conn_init = pkt_conn_init,
	.post = pkt_post,
	.server_changed = pkt_server_changed,
	.rest = pkt_rest,
	.run = pkt_run,
	.free = pkt_free,
	.port_stats = pkt_port_stats,
	.port_rate = pkt_port_rate,
	.port_down = pkt_port_down,
	.port_pfc = pkt_port_pfc,
};

/* The event queue's delay line (eq.h): a full data frame's serialisation
 * at the link rate most ports have (ties: the lower).  Frames sent back to
 * back end, and arrive, one serialisation apart: on HPCC's FB_Hadoop run
 * more than half of what is queued.  (Lines for the other rates and for
 * ACKs took a few percent more events out of the heap, and cost more in
 * choosing among the lines at every pop than they saved.) */
static void pkt_eq_line(const struct psim *s, struct fab_eq *q)
{
	enum { MAX_RATES = 32 };
	fab_rate_bps rate[MAX_RATES];
	uint32_t count[MAX_RATES], n = 0, best = 0;
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		fab_rate_bps r = s->ports[i].rate_bps;
		uint32_t k = 0;
		while (k < n && rate[k] != r)
			k++;
		if (k == n) {
			if (n == MAX_RATES || !r)
				continue;
			rate[n] = r;
			count[n++] = 0;
		}
		count[k]++;
	}
	for (uint32_t k = 1; k < n; k++)
		if (count[k] > count[best] || (count[k] == count[best] && rate[k] < rate[best]))
			best = k;
	const struct fab_wire *w = &s->c.wire;
	if (n)
		fab_eq_line(q, fab_ser_ps(s->c.fp.mtu + w->data_overhead + w->preamble_ifg, rate[best]));
}

/* The switches' queue disciplines: the marking fabric.ecn.marking names
 * while ECN is on (RED by default, which is DCTCP's step where kmax is
 * kmin, as it is by default under a congestion control that wants one
 * threshold), and in-band telemetry where a model wants it. */
static void choose_qdiscs(struct psim *s, const struct fab_fabric_params *fp)
{
	const char *mark = fab_packet_marking((size_t)fp->ecn.marking, NULL);
	s->marking = fp->ecn.enabled ? pkt_qdisc_find(mark) : NULL;
	FAB_ASSERT(!fp->ecn.enabled || s->marking);
	bool want_int = false;
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++)
		want_int |= (fab_cc_of(&fp->cc, k)->wants & FAB_CC_WANTS_INT) != 0;
	s->stamping = want_int ? pkt_qdisc_find("int") : NULL;
}

struct fab_sim *fab_packet_new(const struct fab_topo *topo, const struct fab_fabric_params *fp, uint64_t seed,
			       const struct fab_sim_flow *flows, size_t nflows, struct fab_err *err)
{
	struct psim *s = fab_xcalloc(1, sizeof *s);
	s->c.fp = *fp; /* read by the flow control below; sim_core_init sets the rest */
	s->c.wire = fab_wire_resolve(fp->transport, &fp->wire);
	s->c.topo = topo;
	/* what the transports' descriptions name */
	s->llfc = pkt_llfc_find(fab_transport_at(fp->transport)->llfc);
	FAB_ASSERT(s->llfc);
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		s->qp_ops[k] = pkt_qp_find(fab_transport_at(k)->qp);
		FAB_ASSERT(s->qp_ops[k]);
	}
	s->lossless = s->llfc->lossless_mask(s);
	choose_qdiscs(s, fp);
	s->switches = fab_xcalloc(topo->nswitches ? topo->nswitches : 1, sizeof *s->switches);
	for (uint32_t n = 0; n < topo->nnodes; n++) {
		uint32_t si = topo->switch_index[n];
		if (si == UINT32_MAX)
			continue;
		s->switches[si].node = n;
		s->switches[si].kmin_bytes = fp->ecn.kmin_bytes;
		s->switches[si].kmax_bytes = fp->ecn.kmax_bytes;
	}
	s->ports = fab_xcalloc_aligned(64, topo->nports, sizeof *s->ports);
	for (uint32_t i = 0; i < topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		const struct fab_port *tp = &topo->ports[i];
		port->id = i;
		port->node = tp->node;
		port->peer = port->wire_to = tp->peer;
		port->rate_bps = tp->rate_bps;
		port->delay_ps = tp->delay_ps;
		port->is_switch = topo->nodes[tp->node].kind == FAB_NODE_SWITCH;
		s->llfc->init_port(s, port);
		port->ecn_scale = fp->ecn.ref_rate ? (double)tp->rate_bps / (double)fp->ecn.ref_rate : 1.0;
	}
	init_draws(s, seed);
	/* the grid a run's end falls on: the smallest link delay */
	s->grid_ps = FAB_TIME_NEVER;
	for (uint32_t i = 0; i < topo->nports; i++)
		s->grid_ps = FAB_MIN(s->grid_ps, topo->ports[i].delay_ps);
	if (!s->grid_ps || s->grid_ps == FAB_TIME_NEVER)
		s->grid_ps = 1;
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
	pkt_eq_line(s, &s->c.eq);
	if (fp->series_interval_ps)
		fab_eq_push(&s->c.eq, 0, EV_SAMPLE, NULL, 0);
	return &s->c;
}
