/*
 * parallel.c - the packet engine over several partitions, one thread each,
 * with the same result as one.
 *
 * The fabric's nodes are split into partitions (NICs in blocks, with the
 * leaf they hang from; the other switches spread to even the ports out).
 * Each partition is a struct psim of its own: its event queue, clock,
 * totals and frame pool, over the one set of ports, switches, NICs, queue
 * pairs and flows, of which it touches only its own nodes' (a queue pair's
 * sender half at the source NIC, its receiver half at the destination).
 * Partitions meet only on links: a frame sent toward another partition's
 * node is handed over, not put on the wire.
 *
 * Time advances in windows of the smallest link delay (the grid): a frame
 * sent in a window arrives in a later one, so every partition runs its
 * window's events alone; at the window's end all wait at a barrier, then
 * each puts the frames handed to it on their wires.  Keys (eq.h) are derived
 * from ancestry, a frame's arrival key is taken when it is sent, and a run
 * ends at the grid step after its last flow: so each partition takes its
 * events in the order the single queue would, and the result is byte for
 * byte that of one thread (tests/cli/parallel_test.sh).
 *
 * What runs split: the scenario's flows (lists, CSV, generators, HPCC's
 * flow files).  Workloads (collectives, jobs: their callbacks act across
 * the fabric at no delay), faults, time series and NVLink transfers run on
 * one thread (the scenario layer and the facade refuse them above one:
 * here they simply run alone).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packet_int.h"

/* a frame handed to another partition, and the port whose wire it is on */
struct hand {
	struct pkt *p;
	uint32_t port;
};

struct hand_box {
	struct hand *v;
	size_t len, cap;
};

/* What a partition tells the others at a window's end (two slots, by the
 * window's parity: one is read while the next is written). */
struct part_report {
	uint64_t settled;    /* its flows done or failed */
	fab_time_ps next_ps; /* its next event, or the earliest frame it handed over */
	fab_time_ps idle_ps; /* when its last flow settled */
};

struct pkt_par;

struct pkt_part {
	struct psim s; /* first: the engine's functions take it as theirs */
	uint32_t id;
	struct pkt_par *par;
	unsigned parity;
	struct hand_box *out[2];      /* [parity][destination partition] */
	fab_time_ps handed_min;       /* the earliest arrival handed over this window */
	struct part_report report[2]; /* [parity] */
	uint32_t *starts;             /* its flows, in start order */
	pthread_t thread;
} __attribute__((aligned(64))); /* one partition's writes never on another's lines */

struct pkt_par {
	struct psim *whole;
	uint32_t n;
	struct pkt_part *parts;
	fab_time_ps window_ps, end_ps;
	/* the barrier: arrivals count up; the last one bumps the generation */
	_Alignas(64) atomic_uint arrived;
	_Alignas(64) atomic_uint generation;
	/* the outcome, identical in every partition */
	bool stopped_by_end_time;
};

static void barrier_wait(struct pkt_par *par)
{
	unsigned gen = atomic_load_explicit(&par->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&par->arrived, 1, memory_order_acq_rel) + 1 == par->n) {
		atomic_store_explicit(&par->arrived, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&par->generation, 1, memory_order_acq_rel);
		return;
	}
	for (unsigned spins = 0; atomic_load_explicit(&par->generation, memory_order_acquire) == gen; spins++)
		if (spins > 4096)
			sched_yield(); /* more threads than cores: let the others run */
}

void pkt_part_send(struct psim *s, struct sim_port *port, struct pkt *p)
{
	struct pkt_part *me = s->part;
	struct hand_box *b = &me->out[me->parity][port->peer_part];
	if (b->len == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->v = fab_xrealloc(b->v, b->cap, sizeof *b->v);
	}
	b->v[b->len++] = (struct hand){p, port->id};
	me->handed_min = FAB_MIN(me->handed_min, p->arrive_ps);
	if (p->kind == PKT_DATA) /* its payload leaves this partition's books */
		s->live_data_payload -= p->payload;
}

/* the frames handed to this partition in the window of `parity`, onto
 * their wires (each sender's in the order it sent them) */
static void take_handed(struct pkt_part *me, unsigned parity)
{
	struct pkt_par *par = me->par;
	for (uint32_t q = 0; q < par->n; q++) {
		struct hand_box *b = &par->parts[q].out[parity][me->id];
		for (size_t i = 0; i < b->len; i++) {
			/* the frames come from the other thread's cache: ask ahead */
			if (i + 8 < b->len)
				__builtin_prefetch(b->v[i + 8].p, 1);
			struct pkt *p = b->v[i].p;
			if (p->kind == PKT_DATA) /* and enters this one's */
				me->s.live_data_payload += p->payload;
			sim_port_wire_append(&me->s, &me->s.ports[b->v[i].port], p);
		}
		b->len = 0;
	}
}

static uint64_t settled(const struct psim *s)
{
	return s->c.tot.flows_done + s->c.flows_failed;
}

/* one partition's run: windows until every partition agrees it is over */
static void *part_loop(void *arg)
{
	struct pkt_part *me = arg;
	struct pkt_par *par = me->par;
	struct psim *s = &me->s;
	uint64_t next_progress = 1u << 20;
	fab_time_ps win = 0; /* the window [win, win + window_ps) */
	fab_time_ps idle = FAB_TIME_NEVER;
	for (;;) {
		fab_time_ps end = win + par->window_ps;
		uint64_t before = settled(s);
		struct fab_ev ev;
		for (;;) {
			fab_time_ps t = fab_eq_peek_time(&s->c.eq);
			if (t >= end || (par->end_ps && t > par->end_ps))
				break;
			fab_eq_pop(&s->c.eq, &ev);
			s->c.now_ps = ev.t_ps;
			const struct fab_ev *nx = fab_eq_top(&s->c.eq);
			if (nx && nx->type == EV_ARRIVE)
				__builtin_prefetch(((const struct sim_port *)nx->obj)->wire_head);
			pkt_event(s, &ev);
			if (me->id == 0)
				sim_report_progress(&s->c, &next_progress);
			if (settled(s) != before) {
				before = settled(s);
				idle = s->c.now_ps;
			}
		}
		struct part_report *r = &me->report[me->parity];
		r->settled = settled(s);
		r->next_ps = FAB_MIN(fab_eq_peek_time(&s->c.eq), me->handed_min);
		r->idle_ps = idle;
		barrier_wait(par);
		/* every partition reads the same reports and decides alike */
		uint64_t all = 0;
		fab_time_ps next = FAB_TIME_NEVER;
		for (uint32_t q = 0; q < par->n; q++) {
			all += par->parts[q].report[me->parity].settled;
			next = FAB_MIN(next, par->parts[q].report[me->parity].next_ps);
		}
		unsigned done_parity = me->parity;
		me->parity ^= 1u;
		me->handed_min = FAB_TIME_NEVER;
		take_handed(me, done_parity);
		if (all == s->c.nflows || next == FAB_TIME_NEVER)
			break; /* idle: the grid step after the last flow is this window's end */
		if (par->end_ps && next > par->end_ps) {
			if (me->id == 0)
				par->stopped_by_end_time = true;
			break;
		}
		/* on to the next window with anything in it */
		win = FAB_MAX(end, next / par->window_ps * par->window_ps);
	}
	return NULL;
}

/* Whether the run can be split: the scenario's flows alone (no workload's
 * callbacks, timers or queue pairs, no faults, no series), a fresh run,
 * two NICs or more. */
static bool splittable(const struct psim *s)
{
	const struct fab_sim *c = &s->c;
	uint32_t flow_qps = 0;
	for (uint32_t i = 0; i < c->nflows; i++)
		flow_qps += c->flows[i].nqps;
	return !c->hooks.timer && !c->hooks.delivered && !c->holds && !c->nfaults && !c->fp.series_interval_ps &&
		flow_qps == c->nqps && c->next_start <= 1 && c->nstarts == c->nflows && fab_eq_len(&c->eq) <= 1 &&
		!c->now_ps && c->topo->nnics >= 2;
}

/* Nodes to partitions: NICs in blocks of consecutive indices (servers
 * under one leaf are consecutive); then, pass after pass, each switch with
 * a placed neighbour to the partition holding most of its links (a leaf
 * goes with its servers, a pod's upper switches with its leaves), a tie to
 * the partition with the fewest ports so far, and none to a partition
 * already holding 2% more than its share of the ports.  Links between partitions
 * are what costs: frames handed over between threads. */
static void split(const struct fab_topo *t, uint32_t n, uint16_t *node_part)
{
	uint64_t *ports = fab_xcalloc(n, sizeof *ports);
	uint32_t *votes = fab_xcalloc(n, sizeof *votes);
	uint32_t left = 0;
	double cap = 0; /* a partition's share of the ports, and a little */
	for (uint32_t v = 0; v < t->nnodes; v++) {
		node_part[v] = UINT16_MAX;
		left += t->nodes[v].kind == FAB_NODE_SWITCH;
		cap += t->nodes[v].nports;
	}
	cap = cap / n * 1.02;
	for (uint32_t i = 0; i < t->nnics; i++) {
		uint32_t v = t->nic_node[i];
		node_part[v] = (uint16_t)((uint64_t)i * n / t->nnics);
		ports[node_part[v]] += t->nodes[v].nports;
	}
	uint16_t *placed = fab_xcalloc(t->nnodes, sizeof *placed);
	while (left) {
		/* this pass sees the partitions as the last one left them; a
		 * switch with a clear majority goes first, ties after them, each to
		 * the lightest of the partitions it is tied between */
		memcpy(placed, node_part, t->nnodes * sizeof *placed);
		uint32_t before = left;
		for (int ties = 0; ties < 2; ties++) {
			for (uint32_t v = 0; v < t->nnodes; v++) {
				if (node_part[v] != UINT16_MAX || t->nodes[v].kind != FAB_NODE_SWITCH)
					continue;
				memset(votes, 0, n * sizeof *votes);
				uint32_t top = 0;
				for (uint32_t k = 0; k < t->nodes[v].nports; k++) {
					uint32_t peer = t->ports[t->ports[t->nodes[v].first_port + k].peer].node;
					if (placed[peer] != UINT16_MAX)
						top = FAB_MAX(top, ++votes[placed[peer]]);
				}
				if (!top)
					continue;
				uint32_t best = UINT32_MAX, tied = 0;
				for (uint32_t q = 0; q < n; q++) {
					if (votes[q] != top)
						continue;
					tied++;
					if (best == UINT32_MAX || ports[q] < ports[best])
						best = q;
				}
				if (tied > 1 && !ties)
					continue;
				if ((double)ports[best] + t->nodes[v].nports > cap) {
					/* full: the partition with most links of those with room */
					uint32_t alt = UINT32_MAX;
					for (uint32_t q = 0; q < n; q++)
						if ((double)ports[q] + t->nodes[v].nports <= cap &&
						    (alt == UINT32_MAX || votes[q] > votes[alt] ||
						     (votes[q] == votes[alt] && ports[q] < ports[alt])))
							alt = q;
					if (alt != UINT32_MAX)
						best = alt;
				}
				node_part[v] = (uint16_t)best;
				ports[best] += t->nodes[v].nports;
				left--;
			}
		}
		if (left == before) { /* switches reaching no NIC: the lightest partitions */
			for (uint32_t v = 0; v < t->nnodes; v++) {
				if (node_part[v] != UINT16_MAX || t->nodes[v].kind != FAB_NODE_SWITCH)
					continue;
				uint32_t best = 0;
				for (uint32_t q = 1; q < n; q++)
					if (ports[q] < ports[best])
						best = q;
				node_part[v] = (uint16_t)best;
				ports[best] += t->nodes[v].nports;
				left--;
			}
		}
	}
	free(placed);
	free(ports);
	free(votes);
}

bool pkt_run_parallel(struct psim *s, fab_time_ps end_ps)
{
	const struct fab_topo *t = s->c.topo;
	if (!splittable(s))
		return false;
	uint32_t n = FAB_MIN(s->c.fp.threads, t->nnics);
	uint16_t *node_part = fab_xcalloc(t->nnodes, sizeof *node_part);
	split(t, n, node_part);
	for (uint32_t i = 0; i < t->nports; i++) {
		struct sim_port *port = &s->ports[i];
		port->peer_part = node_part[t->ports[port->peer].node];
		port->remote = port->peer_part != node_part[port->node];
	}
	struct pkt_par par = {.whole = s, .n = n, .window_ps = s->grid_ps, .end_ps = end_ps};
	if (posix_memalign((void **)&par.parts, 64, n * sizeof *par.parts)) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	memset(par.parts, 0, n * sizeof *par.parts);
	/* the whole's one start event goes: each partition starts its own flows */
	struct fab_ev first;
	while (fab_eq_pop(&s->c.eq, &first)) {
		FAB_ASSERT(first.type == EV_FLOW_START);
		s->c.eq.popped--; /* taken away, not run */
	}
	for (uint32_t q = 0; q < n; q++) {
		struct pkt_part *me = &par.parts[q];
		me->s = *s;
		me->s.part = me;
		me->s.free_pkts = NULL;
		me->s.slabs = NULL;
		me->s.live_data_payload = 0;
		me->s.host_pkts = me->s.host_bytes = 0;
		memset(&me->s.c.tot, 0, sizeof me->s.c.tot);
		me->s.c.flows_failed = 0;
		fab_eq_init(&me->s.c.eq);
		me->id = q;
		me->par = &par;
		me->handed_min = FAB_TIME_NEVER;
		for (int k = 0; k < 2; k++)
			me->out[k] = fab_xcalloc(n, sizeof *me->out[k]);
		me->starts = fab_xcalloc(s->c.nflows ? s->c.nflows : 1, sizeof *me->starts);
		uint32_t m = 0;
		for (uint32_t i = 0; i < s->c.nflows; i++) {
			uint32_t f = s->c.start_order[i];
			if (node_part[t->nic_node[s->c.flows[f].spec.src_nic]] == q)
				me->starts[m++] = f;
		}
		/* only its own flows start here */
		me->s.c.start_order = me->starts;
		me->s.c.nstarts = m;
		me->s.c.next_start = 0;
		sim_push_next_start(&me->s.c);
	}
	for (uint32_t q = 1; q < n; q++) {
		if (pthread_create(&par.parts[q].thread, NULL, part_loop, &par.parts[q])) {
			fputs("fabscope: cannot start a thread\n", stderr); /* as out of memory */
			abort();
		}
	}
	part_loop(&par.parts[0]);
	for (uint32_t q = 1; q < n; q++)
		pthread_join(par.parts[q].thread, NULL);
	/* the books: integer sums, alike in any order */
	s->idle_ps = FAB_TIME_NEVER;
	fab_time_ps last = s->c.now_ps, idle = 0;
	uint64_t settled_all = 0;
	for (uint32_t q = 0; q < n; q++) {
		struct pkt_part *me = &par.parts[q];
		const struct fab_sim_totals *pt = &me->s.c.tot;
		struct fab_sim_totals *w = &s->c.tot;
		w->data_tx_bytes += pt->data_tx_bytes;
		w->data_rx_bytes += pt->data_rx_bytes;
		w->data_drop_bytes += pt->data_drop_bytes;
		w->data_pkts += pt->data_pkts;
		w->retx_pkts += pt->retx_pkts;
		w->timeouts += pt->timeouts;
		w->qp_errors += pt->qp_errors;
		w->cnps += pt->cnps;
		w->drops += pt->drops;
		w->wire_losses += pt->wire_losses;
		w->failovers += pt->failovers;
		w->reordered += pt->reordered;
		w->flows_done += pt->flows_done;
		s->c.flows_failed += me->s.c.flows_failed;
		s->c.eq.popped += me->s.c.eq.popped;
		s->live_data_payload += me->s.live_data_payload;
		s->host_pkts += me->s.host_pkts;
		s->host_bytes += me->s.host_bytes;
		settled_all += settled(&me->s);
		last = FAB_MAX(last, me->s.c.now_ps);
		if (me->report[me->parity ^ 1u].idle_ps != FAB_TIME_NEVER)
			idle = FAB_MAX(idle, me->report[me->parity ^ 1u].idle_ps);
		/* its frames' memory: the whole frees it */
		while (me->s.slabs) {
			struct pkt_slab *next = me->s.slabs->next;
			me->s.slabs->next = s->slabs;
			s->slabs = me->s.slabs;
			me->s.slabs = next;
		}
		fab_eq_free(&me->s.c.eq);
		for (int k = 0; k < 2; k++) {
			for (uint32_t d = 0; d < n; d++)
				free(me->out[k][d].v);
			free(me->out[k]);
		}
		free(me->starts);
	}
	s->c.now_ps = last;
	s->c.next_start = s->c.nflows;
	if (par.stopped_by_end_time) {
		s->c.now_ps = end_ps;
		s->c.tot.stopped_by_end_time = true;
	} else if (settled_all == s->c.nflows) {
		s->idle_ps = idle;
	}
	for (uint32_t i = 0; i < t->nports; i++)
		s->ports[i].remote = false;
	free(node_part);
	free(par.parts);
	return true;
}
