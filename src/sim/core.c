/*
 * core.c - what every engine does alike (see engine.h): the scenario's
 * flows and the connections between NICs, their 5-tuples and ECMP paths,
 * NVLink transfers inside a server, the workload's timers and holds, fault
 * scheduling, the interface of sim.h over an engine's table of operations.
 */
#include <stdlib.h>

#include "../base/rng.h"
#include "../base/sort.h"
#include "engine.h"
#include "wire.h"

struct start_key {
	fab_time_ps t;
	uint32_t flow; /* its index: the order of its reserved sequence number */
};

static int by_start(const void *a, const void *b)
{
	const struct start_key *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->flow < y->flow ? -1 : x->flow > y->flow;
}

/* What a flow is, as a 64-bit key for its queue pairs' 5-tuples: its
 * endpoints, class, transport and start, and its place among the flows
 * alike in all of these (in list order); not its place in the list, so
 * that a flow added or removed moves no other flow's path, and a flow's
 * size does not choose its path. */
static uint64_t *flow_keys(struct fab_sim *s)
{
	uint32_t n = s->nflows;
	uint64_t *who = fab_xcalloc(n ? n : 1, sizeof *who);
	struct fab_key2 *k = fab_xcalloc(n ? n : 1, sizeof *k);
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_sim_flow *f = &sim_flow_at(s, i)->spec;
		uint64_t ends = ((uint64_t)f->src_nic << 32) | f->dst_nic;
		uint64_t kind = ((uint64_t)f->prio << 8) | f->transport;
		k[i].a = fab_mix64(fab_mix64(ends) ^ fab_mix64(f->start_ps) ^ kind);
		k[i].b = i;
	}
	fab_sort_key2(k, n);
	for (uint32_t i = 0, run = 0; i < n; i++) {
		run = i && k[i].a == k[i - 1].a ? run + 1 : 0;
		who[k[i].b] = k[i].a + fab_mix64(0x0cc5ULL + run);
	}
	free(k);
	return who;
}

bool sim_core_init(struct fab_sim *s, const struct sim_engine_ops *ops, const struct fab_topo *topo,
		   const struct fab_fabric_params *fp, uint64_t seed, const struct fab_sim_flow *flows, size_t nflows,
		   struct fab_err *err)
{
	s->ops = ops;
	s->topo = topo;
	s->fp = *fp;
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++)
		if (fab_transport_at(k)->resolve)
			fab_transport_at(k)->resolve(&s->fp, fab_transport_params_rw(&s->fp, k));
	s->wire = fab_wire_resolve(fp->transport, &fp->wire);
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		s->wires[k] = *fab_wire_of(k);
		s->wires[k].preamble_ifg = s->wire.preamble_ifg;
	}
	s->wires[fp->transport] = s->wire;
	s->seed = seed;
	fab_eq_init(&s->eq);
	s->ecmp_seed = fab_xcalloc(topo->nswitches ? topo->nswitches : 1, sizeof *s->ecmp_seed);
	struct fab_rng seeds;
	fab_rng_init(&seeds, fp->ecmp_seed, FAB_RNG_ECMP_STREAM);
	uint64_t same = fab_rng_next(&seeds);
	for (uint32_t n = 0; n < topo->nnodes; n++) {
		uint32_t si = topo->switch_index[n];
		if (si != UINT32_MAX)
			s->ecmp_seed[si] = fp->ecmp_same_hash ? same : fab_rng_next(&seeds);
	}
	s->next_si = fab_xcalloc(topo->nports ? topo->nports : 1, sizeof *s->next_si);
	for (uint32_t p = 0; p < topo->nports; p++)
		s->next_si[p] = topo->switch_index[topo->ports[topo->ports[p].peer].node];
	s->nflows = (uint32_t)nflows;
	bool apart = fp->threads > 1;
	s->flow_stride = sizeof(struct sim_flow) + (apart ? FAB_GAP : 0);
	s->rx_stride = apart ? FAB_GAP / sizeof(fab_bytes) : 1;
	s->flow_mem = fab_xcalloc(nflows ? nflows : 1, s->flow_stride);
	s->flow_rx = fab_xcalloc(nflows ? nflows : 1, s->rx_stride * sizeof(fab_bytes));
	for (size_t i = 0; i < nflows; i++) {
		const struct fab_sim_flow *f = &flows[i];
		if (f->src_nic >= topo->nnics || f->dst_nic >= topo->nnics || f->src_nic == f->dst_nic || !f->bytes ||
		    !f->qps || f->prio >= FAB_NPRIO) {
			fab_err_set(err, FAB_EINVAL, "flow %u: invalid endpoints, size or queue pairs", f->id);
			return false;
		}
		struct sim_flow *sf = sim_flow_at(s, (uint32_t)i);
		sf->spec = *f;
		sf->nqps = (fab_bytes)f->qps > f->bytes ? (uint32_t)f->bytes : f->qps;
		sf->st.finish_ps = FAB_TIME_NEVER;
	}
	uint64_t *who = flow_keys(s);
	for (uint32_t i = 0; i < s->nflows; i++) {
		struct sim_flow *f = sim_flow_at(s, i);
		f->first_qp = s->nqps;
		for (uint32_t k = 0; k < f->nqps; k++) {
			uint64_t key = fab_mix64(who[i] + k) & ~(1ULL << 63);
			sim_conn_open(s, f->spec.src_nic, f->spec.dst_nic, f->spec.prio, (int)f->spec.transport - 1,
				      &key);
		}
	}
	free(who);
	/* the start events' places, as if each had been pushed now in flow
	 * order; then the earliest alone goes into the queue */
	for (uint32_t i = 0; i < s->nflows; i++)
		sim_flow_at(s, i)->start_key = fab_eq_key(&s->eq, sim_flow_at(s, i)->spec.start_ps);
	struct start_key *k = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *k);
	for (uint32_t i = 0; i < s->nflows; i++)
		k[i] = (struct start_key){sim_flow_at(s, i)->spec.start_ps, i};
	size_t sorted = 1; /* (a trace's flows come in the order they start, mostly) */
	while (sorted < s->nflows && by_start(&k[sorted - 1], &k[sorted]) < 0)
		sorted++;
	if (sorted < s->nflows)
		qsort(k, s->nflows, sizeof *k, by_start);
	s->start_order = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *s->start_order);
	for (uint32_t i = 0; i < s->nflows; i++)
		s->start_order[i] = k[i].flow;
	free(k);
	s->next_start = 0;
	s->nstarts = s->nflows;
	sim_push_next_start(s);
	return true;
}

/* the next flow's start into the event queue, with its reserved place */
void sim_push_next_start(struct fab_sim *s)
{
	if (s->next_start >= s->nstarts)
		return;
	struct sim_flow *f = sim_flow_at(s, s->start_order[s->next_start++]);
	fab_eq_push_seq(&s->eq, f->spec.start_ps, f->start_key, EV_FLOW_START, f, 0);
}

void sim_core_free(struct fab_sim *s)
{
	fab_eq_free(&s->eq);
	free(s->ecmp_seed);
	free(s->next_si);
	if (s->ops->conn_alloc)
		for (uint32_t i = 0; i < s->nqps; i++)
			free(s->qps[i]);
	for (uint32_t i = 0; i < s->nconn_slabs; i++)
		free(s->conn_slabs[i]);
	free(s->conn_slabs);
	free(s->qps);
	free(s->nvl_free_ps);
	free(s->flow_mem);
	free(s->flow_rx);
	free(s->start_order);
	free(s->series);
	free(s->fseries);
	for (uint32_t i = 0; i < s->nfaults; i++)
		free(s->faults[i]);
	free(s->faults);
	free(s->port_stats_out);
	free(s->flow_stats_out);
	free(s->flow_specs_out);
	for (unsigned i = 0; i < FAB_MEMO_SLOTS; i++)
		free(s->memo[i].p);
}

/* a zeroed struct sim_conn from the slabs: one allocation per
 * SIM_CONN_SLAB queue pairs, not one each (a flow engine run opens one a
 * flow) */
#define SIM_CONN_SLAB 1024u

static struct sim_conn *conn_take(struct fab_sim *s)
{
	uint32_t k = s->nqps % SIM_CONN_SLAB;
	if (k == 0) {
		s->conn_slabs = fab_xrealloc(s->conn_slabs, s->nconn_slabs + 1, sizeof *s->conn_slabs);
		s->conn_slabs[s->nconn_slabs++] = fab_xcalloc(SIM_CONN_SLAB, sizeof(struct sim_conn));
	}
	return &s->conn_slabs[s->nconn_slabs - 1][k];
}

struct sim_conn *sim_conn_open(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport,
			       const uint64_t *key)
{
	if (transport < 0 || transport >= FAB_TRANSPORT_COUNT)
		transport = s->fp.transport;
	if (s->nqps == s->cap_qps) {
		s->cap_qps = s->cap_qps ? 2 * s->cap_qps : 256;
		s->qps = fab_xrealloc(s->qps, s->cap_qps, sizeof *s->qps);
	}
	struct sim_conn *c = s->ops->conn_alloc ? s->ops->conn_alloc(s, transport) : conn_take(s);
	c->transport = (int8_t)transport;
	c->id = s->nqps;
	s->qps[s->nqps++] = c;
	c->src_nic = src_nic;
	c->dst_nic = dst_nic;
	c->prio = prio;
	/* the UDP source port identifies the connection's 5-tuple */
	c->sport = (uint16_t)(49152 + fab_mix64(s->seed ^ (0x51ed270bULL + (key ? *key : c->id))) % 16384);
	uint64_t ips = ((uint64_t)src_nic << 32) | dst_nic;
	uint64_t rips = ((uint64_t)dst_nic << 32) | src_nic;
	uint64_t l4 = ((uint64_t)c->sport << 16) | s->wires[transport].udp_dport;
	c->hash_fwd = fab_mix64(fab_mix64(ips) ^ l4 ^ 17);
	c->hash_rev = fab_mix64(fab_mix64(rips) ^ l4 ^ 17);
	if (s->fp.ecmp_hash == FAB_ECMP_XOR) /* the fields folded by XOR: symmetric, and weak */
		c->hash_fwd = c->hash_rev = (uint64_t)src_nic ^ dst_nic ^ c->sport ^ s->wires[transport].udp_dport;
	if (s->ops->conn_init)
		s->ops->conn_init(s, c);
	return c;
}

struct fab_series_row *sim_series_row(struct fab_sim *s)
{
	if (s->nseries == s->cap_series) {
		s->cap_series = s->cap_series ? 2 * s->cap_series : 4096;
		s->series = fab_xrealloc(s->series, s->cap_series, sizeof *s->series);
	}
	return &s->series[s->nseries++];
}

struct fab_flow_series_row *sim_flow_series_row(struct fab_sim *s)
{
	if (s->nfseries == s->cap_fseries) {
		s->cap_fseries = s->cap_fseries ? 2 * s->cap_fseries : 4096;
		s->fseries = fab_xrealloc(s->fseries, s->cap_fseries, sizeof *s->fseries);
	}
	return &s->fseries[s->nfseries++];
}

/* whether the instant from (a, fa) repeats the one kept before it: the
 * same rows, nothing counted, every queue and rate as it was */
static bool series_still(const struct fab_sim *s, size_t a, size_t fa)
{
	size_t n = s->nseries - a, fn = s->nfseries - fa;
	if (n != a - s->ser_prev || fn != fa - s->fser_prev)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct fab_series_row *r = &s->series[a + i], *p = &s->series[s->ser_prev + i];
		if (r->port != p->port || r->queue_bytes != p->queue_bytes || r->tx_bytes || r->tx_wire_bytes ||
		    r->drops || r->ecn_marks || r->pause_tx || r->pause_rx)
			return false;
	}
	for (size_t i = 0; i < fn; i++) {
		const struct fab_flow_series_row *r = &s->fseries[fa + i], *p = &s->fseries[s->fser_prev + i];
		if (r->flow != p->flow || r->delivered_bytes || r->rate_bps != p->rate_bps)
			return false;
	}
	return true;
}

/* A run that waits (a retransmission timeout of seconds, a training
 * step's compute) would otherwise repeat the same rows every interval:
 * 86,000 instants of nothing, 3.9 GB of JSON, for one timeout of 4.3 s.
 * The rows left out are those of an instant between two that say the
 * same, so a line drawn through the rows kept is the same line. */
void sim_series_instant(struct fab_sim *s)
{
	size_t a = s->ser_mark, fa = s->fser_mark;
	if (s->ser_any && series_still(s, a, fa)) {
		if (++s->ser_still >= 3) { /* the instant before repeats its neighbours: it goes */
			size_t n = s->nseries - a, fn = s->nfseries - fa;
			memmove(&s->series[s->ser_prev], &s->series[a], n * sizeof *s->series);
			memmove(&s->fseries[s->fser_prev], &s->fseries[fa], fn * sizeof *s->fseries);
			a = s->ser_prev;
			fa = s->fser_prev;
			s->nseries = a + n;
			s->nfseries = fa + fn;
		}
	} else {
		s->ser_still = 0;
	}
	s->ser_any = true;
	s->ser_prev = a;
	s->fser_prev = fa;
	s->ser_mark = s->nseries;
	s->fser_mark = s->nfseries;
}

void sim_port_pauses(const struct fab_port_stats *st, uint64_t *tx, uint64_t *rx)
{
	*tx = *rx = 0;
	for (unsigned k = 0; k < FAB_NPRIO; k++) {
		*tx += st->pause_tx[k];
		*rx += st->pause_rx[k];
	}
}

void sim_flow_start(struct fab_sim *s, struct sim_flow *f)
{
	sim_push_next_start(s);
	for (uint32_t k = 0; k < f->nqps; k++)
		s->ops->post(s, s->qps[f->first_qp + k], sim_flow_share(f, k), sim_flow_index(s, f), 0);
}

double sim_nic_line_bps(const struct fab_sim *s, uint32_t nic)
{
	uint32_t port = s->topo->nodes[s->topo->nic_node[nic]].first_port;
	return sim_pcie_cap(s, (double)s->ops->port_rate(s, port));
}

uint32_t sim_path(const struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint64_t hash, uint32_t *ports,
		  uint32_t max)
{
	const struct fab_topo *t = s->topo;
	uint32_t n = 0, port = t->nodes[t->nic_node[src_nic]].first_port;
	while (n < max) {
		ports[n++] = port;
		uint32_t si = s->next_si[port]; /* (one load, not four: the walk is a chain of them) */
		if (si == UINT32_MAX)
			break;
		uint32_t cnt;
		const uint32_t *hops = fab_topo_routes_at(t, si, dst_nic, &cnt);
		if (!cnt)
			break;
		port = cnt == 1 ? hops[0] : hops[sim_ecmp_pick(s, hash, si, cnt)];
	}
	return n;
}

/* ---- the interface of sim.h ---- */

void fab_sim_set_progress(struct fab_sim *s, fab_progress_fn fn, void *ctx)
{
	s->progress = fn;
	s->progress_ctx = ctx;
}

void fab_sim_set_ranks(struct fab_sim *s, const struct fab_sim_ranks *r)
{
	s->ranks = *r;
}

int fab_sim_run(struct fab_sim *s, fab_time_ps end_ps)
{
	return s->ops->run(s, end_ps);
}

bool fab_sim_busy(const struct fab_sim *s)
{
	return sim_busy(s);
}

void fab_sim_rest(struct fab_sim *s)
{
	if (s->ops->rest)
		s->ops->rest(s);
	fab_eq_rebase(&s->eq);
}

void fab_sim_free(struct fab_sim *s)
{
	if (!s)
		return;
	s->ops->free(s); /* its own state, then sim_core_free */
}

void fab_sim_set_hooks(struct fab_sim *s, const struct fab_sim_hooks *h)
{
	s->hooks = *h;
}

void fab_sim_set_server(struct fab_sim *s, const struct fab_server_params *sp)
{
	s->server = *sp;
	s->ops->server_changed(s);
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

uint32_t fab_sim_threads(const struct fab_sim *s)
{
	return s->threads_ran;
}

fab_time_ps fab_sim_settled_from(const struct fab_sim *s)
{
	fab_time_ps t = 0;
	for (uint32_t i = 0; i < s->nfaults; i++) {
		const struct fab_fault *f = s->faults[i];
		t = FAB_MAX(t, f->start_ps + f->convergence_ps);
		if (f->end_ps > f->start_ps)
			t = FAB_MAX(t, f->end_ps + f->convergence_ps);
	}
	return t;
}

/* a NIC port's rate now, 0 when its link is down */
static fab_rate_bps nic_port_rate(const struct fab_sim *s, uint32_t nic)
{
	uint32_t port = s->topo->nodes[s->topo->nic_node[nic]].first_port;
	return s->ops->port_down && s->ops->port_down(s, port) ? 0 : s->ops->port_rate(s, port);
}

uint32_t fab_sim_open(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio)
{
	return fab_sim_open_tp(s, src_nic, dst_nic, prio, -1);
}

static uint32_t open_on(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport,
			const uint64_t *key)
{
	/* NICs with several ports: a new queue pair binds to the port index
	 * whose slower end is fastest now (a port down or degraded is passed
	 * over), the one asked for when it is as good */
	uint32_t P = s->topo->nic_ports;
	if (P > 1) {
		uint32_t sb = src_nic - src_nic % P, db = dst_nic - dst_nic % P, want = src_nic % P, best = want;
		fab_rate_bps best_rate = FAB_MIN(nic_port_rate(s, src_nic), nic_port_rate(s, db + want));
		for (uint32_t j = 0; j < P; j++) {
			fab_rate_bps r = FAB_MIN(nic_port_rate(s, sb + j), nic_port_rate(s, db + j));
			if (r > best_rate) {
				best = j;
				best_rate = r;
			}
		}
		src_nic = sb + best;
		dst_nic = db + best;
	}
	return sim_conn_open(s, src_nic, dst_nic, prio, transport, key)->id;
}

uint32_t fab_sim_open_tp(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport)
{
	return open_on(s, src_nic, dst_nic, prio, transport, NULL);
}

uint32_t fab_sim_open_key(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport,
			  uint64_t key)
{
	return open_on(s, src_nic, dst_nic, prio, transport, &key);
}

void fab_sim_post(struct fab_sim *s, uint32_t conn, fab_bytes bytes, uint32_t cookie)
{
	FAB_ASSERT(conn < s->nqps);
	s->ops->post(s, s->qps[conn], bytes, NO_FLOW, cookie);
}

void fab_sim_post_local(struct fab_sim *s, uint32_t src_gpu, uint32_t dst_gpu, fab_bytes bytes, uint32_t cookie)
{
	(void)dst_gpu; /* the NVSwitch does not block: only the sender's egress serialises */
	if (!s->nvl_free_ps)
		s->nvl_free_ps = fab_xcalloc(s->topo->ngpus, sizeof *s->nvl_free_ps);
	fab_time_ps start = FAB_MAX(s->now_ps, s->nvl_free_ps[src_gpu]);
	double eff = s->server.nvlink_eff > 0 ? s->server.nvlink_eff : 1;
	fab_time_ps ser = s->server.nvlink_bps
		? (fab_time_ps)((double)fab_ser_ps(bytes, s->server.nvlink_bps) / eff + 0.5)
		: 0;
	s->nvl_free_ps[src_gpu] = start + ser;
	fab_eq_push(&s->eq, start + ser + s->server.nvlink_lat_ps, EV_LOCAL, NULL, cookie);
}

fab_time_ps fab_sim_local_free(const struct fab_sim *s, uint32_t gpu)
{
	return s->nvl_free_ps ? s->nvl_free_ps[gpu] : 0;
}

void fab_sim_local_set_free(struct fab_sim *s, uint32_t gpu, fab_time_ps at_ps)
{
	if (!s->nvl_free_ps)
		s->nvl_free_ps = fab_xcalloc(s->topo->ngpus, sizeof *s->nvl_free_ps);
	s->nvl_free_ps[gpu] = at_ps;
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

const struct fab_fabric_params *fab_sim_fabric(const struct fab_sim *s)
{
	return &s->fp;
}

const struct fab_wire *fab_sim_wire_of(const struct fab_sim *s, int transport)
{
	return &s->wires[transport < 0 || transport >= FAB_TRANSPORT_COUNT ? s->fp.transport : transport];
}

fab_time_ps fab_sim_host_latency(const struct fab_sim *s, int transport)
{
	if (transport < 0 || transport >= FAB_TRANSPORT_COUNT)
		transport = s->fp.transport;
	const struct fab_transport_info *tp = fab_transport_at(transport);
	return tp->host_latency ? tp->host_latency(fab_transport_params(&s->fp, transport)) : 0;
}

const struct fab_wire *fab_sim_wire(const struct fab_sim *s)
{
	return &s->wire;
}

void fab_sim_port_pfc(const struct fab_sim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff)
{
	*headroom = *xoff = 0;
	if (s->ops->port_pfc && s->fp.pfc.enabled)
		s->ops->port_pfc(s, port, headroom, xoff);
}

/* whether switch node v has a port whose threshold is 0 for want of
 * buffer; what its ports set aside (headroom and reserves) into *aside */
static bool pfc_uncovered(const struct fab_sim *s, uint32_t v, double *aside)
{
	const struct fab_node *nd = &s->topo->nodes[v];
	bool zero = false;
	*aside = 0;
	for (uint32_t k = 0; k < nd->nports; k++) {
		fab_bytes hr, xoff;
		fab_sim_port_pfc(s, nd->first_port + k, &hr, &xoff);
		zero = zero || (hr && !xoff);
		*aside += (double)(hr + s->fp.pfc.reserve_bytes);
	}
	return zero;
}

uint32_t fab_sim_pfc_uncovered(const struct fab_sim *s, uint32_t *first_node, double *first_aside)
{
	uint32_t n = 0;
	*first_node = UINT32_MAX;
	*first_aside = 0;
	if (!s->fp.pfc.enabled || !s->fp.pfc.dynamic)
		return 0;
	for (uint32_t v = 0; v < s->topo->nnodes; v++) {
		double aside;
		if (s->topo->nodes[v].kind == FAB_NODE_SWITCH && pfc_uncovered(s, v, &aside) && !n++) {
			*first_node = v;
			*first_aside = aside;
		}
	}
	return n;
}

const struct fab_topo *fab_sim_topo(const struct fab_sim *s)
{
	return s->topo;
}

const struct fab_port_stats *fab_sim_port_stats(const struct fab_sim *s)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->port_stats_out)
		m->port_stats_out = fab_xcalloc(s->topo->nports, sizeof *m->port_stats_out);
	s->ops->port_stats(s, m->port_stats_out);
	return m->port_stats_out;
}

const struct fab_flow_stats *fab_sim_flow_stats(const struct fab_sim *s)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->flow_stats_out)
		m->flow_stats_out = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *m->flow_stats_out);
	for (uint32_t i = 0; i < s->nflows; i++)
		m->flow_stats_out[i] = fab_sim_flow_stat(s, i);
	return m->flow_stats_out;
}

void *fab_sim_memo(const struct fab_sim *s, enum fab_memo_slot slot, size_t size, bool *stale)
{
	struct fab_sim *m = (struct fab_sim *)s;
	*stale = !m->memo[slot].p || m->memo[slot].events != s->tot.events || m->memo[slot].end_ps != s->tot.end_ps;
	if (!m->memo[slot].p)
		m->memo[slot].p = fab_xcalloc(1, size);
	m->memo[slot].events = s->tot.events;
	m->memo[slot].end_ps = s->tot.end_ps;
	return m->memo[slot].p;
}

size_t fab_sim_nflows(const struct fab_sim *s)
{
	return s->nflows;
}

const struct fab_sim_flow *fab_sim_flow_spec(const struct fab_sim *s, size_t i)
{
	FAB_ASSERT(i < s->nflows);
	return &sim_flow_at(s, (uint32_t)i)->spec;
}

struct fab_flow_stats fab_sim_flow_stat(const struct fab_sim *s, size_t i)
{
	FAB_ASSERT(i < s->nflows);
	struct fab_flow_stats st = sim_flow_at(s, (uint32_t)i)->st;
	st.delivered_bytes = sim_flow_delivered(s, (uint32_t)i);
	return st;
}

const struct fab_sim_flow *fab_sim_flows(const struct fab_sim *s, size_t *n)
{
	struct fab_sim *m = (struct fab_sim *)s;
	if (!m->flow_specs_out)
		m->flow_specs_out = fab_xcalloc(s->nflows ? s->nflows : 1, sizeof *m->flow_specs_out);
	for (uint32_t i = 0; i < s->nflows; i++)
		m->flow_specs_out[i] = sim_flow_at(s, i)->spec;
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

uint32_t fab_sim_nqps(const struct fab_sim *s)
{
	return s->nqps;
}

bool fab_sim_qp_used(const struct fab_sim *s, uint32_t qp)
{
	return s->qps[qp]->used;
}

void fab_sim_qp_ends(const struct fab_sim *s, uint32_t qp, uint32_t *src_nic, uint32_t *dst_nic)
{
	*src_nic = s->qps[qp]->src_nic;
	*dst_nic = s->qps[qp]->dst_nic;
}

uint32_t fab_sim_flow_first_qp(const struct fab_sim *s, uint32_t flow)
{
	return sim_flow_at(s, flow)->first_qp;
}

uint32_t fab_sim_qp_path(const struct fab_sim *s, uint32_t qp, uint32_t *ports, uint32_t max)
{
	if (s->ops->kept_path) { /* (the same ports, without the walk through the routing tables) */
		uint32_t n = s->ops->kept_path(s, qp, ports, max);
		if (n != UINT32_MAX)
			return n;
	}
	const struct sim_conn *c = s->qps[qp];
	return sim_path(s, c->src_nic, c->dst_nic, c->hash_fwd, ports, max);
}

fab_time_ps fab_sim_conn_latency(const struct fab_sim *s, uint32_t conn)
{
	uint32_t path[64], n = fab_sim_qp_path(s, conn, path, 64);
	uint32_t wire = fab_wire_data_bytes(fab_sim_wire(s), s->fp.mtu);
	fab_time_ps t = 0;
	for (uint32_t h = 0; h < n; h++)
		t += s->topo->ports[path[h]].delay_ps + (h ? fab_ser_ps(wire, s->ops->port_rate(s, path[h])) : 0);
	return t;
}

double fab_sim_conn_rate(const struct fab_sim *s, uint32_t conn)
{
	uint32_t path[64], n = fab_sim_qp_path(s, conn, path, 64);
	double eff = fab_wire_efficiency(fab_sim_wire(s), s->fp.mtu), best = 1e300;
	for (uint32_t h = 0; h < n; h++) {
		double bps = (double)s->ops->port_rate(s, path[h]);
		if (!h)
			bps = sim_pcie_cap(s, bps);
		best = FAB_MIN(best, bps * eff / 8);
	}
	return best;
}

void fab_sim_flow_batch(struct fab_sim *s, int hold, fab_time_ps ps)
{
	if (s->ops->batch)
		s->ops->batch(s, hold, ps);
}

void fab_sim_flow_engine_stats(const struct fab_sim *s, uint64_t *recomputes, double *mean_component)
{
	*recomputes = 0;
	*mean_component = 0;
	if (s->ops->engine_stats)
		s->ops->engine_stats(s, recomputes, mean_component);
}
