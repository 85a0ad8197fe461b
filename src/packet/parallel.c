/*
 * parallel.c - the packet engine over several partitions, run by several
 * threads, with the same result as one.
 *
 * The fabric's nodes are split into partitions (NICs in blocks, with the
 * leaf they hang from; the other switches spread to even the ports out),
 * several a thread (run.partitions).
 * Each partition is a struct psim of its own: its event queue, clock,
 * totals and frame pool, over the one set of ports, switches, NICs, queue
 * pairs and flows, of which it touches only its own nodes' (a queue pair's
 * sender half at the source NIC, its receiver half at the destination).
 * Partitions meet only on links: a frame sent toward another partition's
 * node is handed over, not put on the wire.
 *
 * Time advances in windows of the smallest link delay (the grid): a frame
 * sent in a window arrives in a later one, so every partition runs its
 * window's events alone.  In each window a thread runs its own partitions,
 * then takes those another thread has not begun (so a core that runs
 * faster, or partitions that are busier, even out); at the window's end
 * all wait at a barrier, and each partition starts its next window by
 * putting the frames handed to it on their wires.  Keys (eq.h) are derived
 * from ancestry, a frame's arrival key is taken when it is sent, and a run
 * ends at the grid step after its last flow: so each partition takes its
 * events in the order the single queue would, and the result is byte for
 * byte that of one thread (tests/cli/parallel_test.sh).
 *
 * Over processes (fabscope sim --ranks: src/ranks.c) it is the same
 * with one partition a process; what the ranks send each other, at each
 * window's end and at the run's, is parallel_ranks.c's.
 *
 * What runs split: the scenario's flows (lists, CSV, generators, HPCC's
 * flow files).  Workloads (collectives, jobs: their callbacks act across
 * the fabric at no delay), faults, time series and NVLink transfers run on
 * one thread (the scenario layer and the facade refuse them above one:
 * here they simply run alone).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "parallel_int.h"

/* threads: partitions a thread unless run.partitions says.  More than one
 * lets the threads even out their windows; on HPCC's FB_Hadoop run (320
 * hosts, 2 threads) 4 to 16 a thread ran 10 to 25% faster than 1, and
 * each partition's frames to another are a copy (doc/model.md) */
#define PARTS_PER_THREAD 8

/* a spinning wait's pause: the core's other hardware thread (or the
 * hypervisor's) keeps the execution units */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* the `workers` still working meet */
static void barrier_wait(struct pkt_par *par, uint32_t workers)
{
	unsigned gen = atomic_load_explicit(&par->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&par->arrived, 1, memory_order_acq_rel) + 1 == workers) {
		atomic_store_explicit(&par->arrived, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&par->generation, 1, memory_order_acq_rel);
		return;
	}
	for (unsigned spins = 0; atomic_load_explicit(&par->generation, memory_order_acquire) == gen; spins++) {
		if (spins > 4096)
			sched_yield(); /* more threads than cores: let the others run */
		else
			cpu_relax();
	}
}

void pkt_part_send(struct psim *s, struct sim_port *port, struct pkt *p)
{
	struct pkt_part *me = s->part;
	struct hand_box *b = &me->out[me->parity][port->peer_part];
	if (b->len == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->v = fab_xrealloc(b->v, b->cap, sizeof *b->v);
	}
	struct hand *h = &b->v[b->len++];
	h->port = port->id;
	memcpy(h->frame, (const uint8_t *)p + offsetof(struct pkt, qp), FRAME_BYTES);
	me->handed_min = FAB_MIN(me->handed_min, p->arrive_ps);
	sim_pkt_free(s, p); /* its payload leaves this partition's books */
}

/* the frames handed to this partition in the window of `parity`, onto
 * their wires (each sender's in the order it sent them) */
static void take_handed(struct pkt_part *me, unsigned parity)
{
	struct pkt_par *par = me->par;
	for (uint32_t q = 0; q < par->n; q++) {
		struct hand_box *b = &par->parts[q].out[parity][me->id];
		for (size_t i = 0; i < b->len; i++) {
			struct pkt *p = sim_pkt_alloc(&me->s);
			memcpy((uint8_t *)p + offsetof(struct pkt, qp), b->v[i].frame, FRAME_BYTES);
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

/* every partition's report of the window of `parity`: all workers read
 * the same and decide alike */
static void threads_reports(const struct pkt_par *par, unsigned parity, uint64_t *all, fab_time_ps *next)
{
	for (uint32_t q = 0; q < par->n; q++) {
		*all += par->parts[q].report[parity].settled;
		*next = FAB_MIN(*next, par->parts[q].report[parity].next_ps);
	}
}

/* threads: the frames handed to the partition in the window just ended
 * onto their wires; its reports and hand-overs flip to the other parity */
static void take_window_handed(struct pkt_part *me)
{
	unsigned done = me->parity;
	me->parity ^= 1u;
	take_handed(me, done);
}

/* one partition's window, up to `end`: the frames handed to it in the last
 * one onto their wires, its events, its report */
static void part_window(struct pkt_part *me, fab_time_ps end)
{
	struct pkt_par *par = me->par;
	struct psim *s = &me->s;
	if (me->windows++ && !par->ranks)
		take_window_handed(me);
	me->handed_min = FAB_TIME_NEVER;
	struct fab_ev ev;
	for (;;) {
		fab_time_ps t = fab_eq_peek_time(&s->c.eq);
		if (t >= end || (par->end_ps && t > par->end_ps))
			break;
		fab_eq_pop(&s->c.eq, &ev);
		s->c.now_ps = ev.t_ps;
		const struct fab_ev *nx = fab_eq_top(&s->c.eq);
		if (nx && nx->type == EV_ARRIVE)
			pkt_prefetch_arrival(s, nx);
		pkt_event(s, &ev);
		if (me->id == 0)
			sim_report_progress(&s->c, &par->next_progress);
		if (settled(s) != me->before) {
			me->before = settled(s);
			me->idle = s->c.now_ps;
		}
	}
	struct part_report *r = &me->report[me->parity];
	r->settled = settled(s);
	/* the held EV_TX_DONEs of the window count as run (port.c) */
	fab_time_ps t = sim_port_held_settle(s, end, par->end_ps, fab_eq_peek_time(&s->c.eq));
	r->next_ps = FAB_MIN(t, me->handed_min);
	r->idle_ps = me->idle;
	r->now_ps = s->c.now_ps;
}

/* after a window's meeting, alike everywhere: whether the run is over
 * (true), else the next window with anything in it; `writer`: this one
 * records how it ended (one thread, or each rank: its own copy) */
static bool window_next(struct pkt_par *par, uint64_t all, fab_time_ps next, fab_time_ps end, fab_time_ps *win,
			bool writer)
{
	if (all == par->whole->c.nflows || next == FAB_TIME_NEVER)
		return true; /* idle: the grid step after the last flow is this window's end */
	if (par->end_ps && next > par->end_ps) {
		if (writer)
			par->stopped_by_end_time = true;
		return true;
	}
	*win = FAB_MAX(end, next / par->window_ps * par->window_ps);
	return false;
}

/* a rank's run: its one partition, window after window, meeting the
 * other ranks at each window's end */
static void rank_loop(struct pkt_part *me)
{
	struct pkt_par *par = me->par;
	fab_time_ps win = 0; /* the window [win, win + window_ps) */
	for (;;) {
		fab_time_ps end = win + par->window_ps;
		part_window(me, end);
		uint64_t all = 0;
		fab_time_ps next = FAB_TIME_NEVER;
		if (pkt_ranks_meet(me, &all, &next) || window_next(par, all, next, end, &win, true))
			break;
	}
}

/* takes partition q for window `gen` unless another worker has */
static bool claim(struct pkt_part *q, unsigned gen)
{
	unsigned was = gen - 1;
	if (atomic_load_explicit(&q->claimed, memory_order_relaxed) != was)
		return false; /* (taken: a look, not a write, on its line) */
	return atomic_compare_exchange_strong_explicit(&q->claimed, &was, gen, memory_order_acq_rel,
						       memory_order_relaxed);
}

/* a worker's run: in each window its own partitions, then those of the
 * others that are still waiting (the last first: the owner takes its own
 * from the first), so a faster core takes more; then the barrier, and
 * every worker reads all the reports and decides alike, and whether it
 * still works (pkt_par_look: one that leaves parks, and may be called
 * back for a later window) */
static void *worker_loop(void *arg)
{
	struct pkt_worker *w = arg;
	struct pkt_par *par = w->par;
	fab_time_ps win = 0;
	unsigned parity = 0;
	uint32_t active = par->workers;
	for (unsigned gen = 1;; gen++) {
		fab_time_ps end = win + par->window_ps;
		for (uint32_t k = 0; k < w->count; k++)
			if (claim(&par->parts[w->first + k], gen))
				part_window(&par->parts[w->first + k], end);
		for (uint32_t q = par->n; q-- > 0;)
			if ((q < w->first || q >= w->first + w->count) && claim(&par->parts[q], gen))
				part_window(&par->parts[q], end);
		if (w->id == 0)
			atomic_store_explicit(&par->active[gen & 1], pkt_par_look(par, gen, active, win),
					      memory_order_relaxed);
		barrier_wait(par, active);
		uint32_t was = active;
		active = atomic_load_explicit(&par->active[gen & 1], memory_order_relaxed);
		uint64_t all = 0;
		fab_time_ps next = FAB_TIME_NEVER;
		threads_reports(par, parity, &all, &next);
		parity ^= 1u;
		bool over = window_next(par, all, next, end, &win, w->id == 0);
		if (w->id == 0 && active > was)
			pkt_par_rejoin(par, was, gen + 1, win, over);
		if (over)
			break;
		if (w->id >= active) {
			/* parked until a core frees: back for window gen + 1 */
			if (!pkt_par_park(par, w->id, &gen, &win))
				break;
			active = w->id + 1;
			parity = gen & 1u;
		}
	}
	if (w->id == 0)
		pkt_par_over(par);
	return NULL;
}

/* a congestion control that wants samples reads records the run keeps
 * whole (telemetry.c) */
static bool wants_samples(const struct fab_fabric_params *fp)
{
	for (int t = 0; t < FAB_TRANSPORT_COUNT; t++)
		if (fab_cc_of(&fp->cc, t)->wants & FAB_CC_WANTS_SAMPLE)
			return true;
	return false;
}

/* Whether the run can be split: the scenario's flows alone (no workload's
 * callbacks, timers or queue pairs, no faults, no series, no congestion
 * control that wants samples), a fresh run, two NICs or more. */
static bool splittable(const struct psim *s)
{
	const struct fab_sim *c = &s->c;
	uint32_t flow_qps = 0;
	for (uint32_t i = 0; i < c->nflows; i++)
		flow_qps += sim_flow_at(c, i)->nqps;
	return !wants_samples(&c->fp) && !c->hooks.timer && !c->hooks.delivered && !c->holds && !c->nfaults &&
		!c->fp.series_interval_ps && flow_qps == c->nqps && c->next_start <= 1 && c->nstarts == c->nflows &&
		fab_eq_len(&c->eq) <= 1 && !c->now_ps && c->topo->nnics >= 2;
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

/* the counters a partition adds to the whole's, and a rank to rank 0's */
void pkt_sum_words(struct psim *s, uint64_t *v[SUM_WORDS])
{
	struct fab_sim_totals *t = &s->c.tot;
	uint64_t *w[SUM_WORDS] = {&t->data_tx_bytes, &t->data_rx_bytes,  &t->data_drop_bytes, &t->data_pkts,
				  &t->retx_pkts,     &t->timeouts,       &t->qp_errors,       &t->cnps,
				  &t->drops,         &t->wire_losses,    &t->failovers,       &t->reordered,
				  &t->flows_done,    &s->c.flows_failed, &s->c.eq.popped,     &s->live_data_payload,
				  &s->host_pkts,     &s->host_bytes,     &s->holds_total};
	memcpy(v, w, sizeof w);
}

/* partition me, number q, as a copy of the whole: its own event queue,
 * frame pool and totals over the one fabric, and its own flows to start */
static void part_init(struct pkt_par *par, struct pkt_part *me, uint32_t q)
{
	struct psim *s = par->whole;
	const struct fab_topo *t = s->c.topo;
	const struct fab_sim_ranks *rk = par->ranks;
	const uint16_t *node_part = par->node_part;
	me->s = *s;
	me->s.part = me;
	me->s.free_pkts = NULL;
	me->s.slabs = NULL;
	me->s.live_data_payload = 0;
	me->s.held = NULL;
	me->s.nheld = me->s.held_cap = 0;
	me->s.holds_total = 0;
	me->s.host_pkts = me->s.host_bytes = 0;
	memset(&me->s.c.tot, 0, sizeof me->s.c.tot);
	me->s.c.flows_failed = 0;
	fab_eq_init(&me->s.c.eq);
	fab_eq_line(&me->s.c.eq, s->c.eq.line.delay); /* the whole's line */
	me->id = q;
	me->par = par;
	me->handed_min = FAB_TIME_NEVER;
	me->idle = FAB_TIME_NEVER;
	for (int k = 0; k < 2; k++)
		me->out[k] = fab_xcalloc(par->n, sizeof *me->out[k]);
	me->starts = fab_xcalloc(s->c.nflows ? s->c.nflows : 1, sizeof *me->starts);
	uint32_t m = 0;
	for (uint32_t i = 0; i < s->c.nflows; i++) {
		uint32_t f = s->c.start_order[i];
		if (node_part[t->nic_node[sim_flow_at(&s->c, f)->spec.src_nic]] == q)
			me->starts[m++] = f;
	}
	/* a rank's receivers know the messages other ranks' senders post */
	for (uint32_t f = 0; rk && f < s->c.nflows; f++) {
		const struct sim_flow *fl = sim_flow_at(&s->c, f);
		if (node_part[t->nic_node[fl->spec.src_nic]] == q || node_part[t->nic_node[fl->spec.dst_nic]] != q)
			continue;
		for (uint32_t k = 0; k < fl->nqps; k++) {
			struct sim_qp *qp = pkt_qp(s, fl->first_qp + k);
			qp->tp->expect(s, qp, sim_flow_share(fl, k), f, fl->spec.start_ps);
		}
	}
	/* only its own flows start here */
	me->s.c.start_order = me->starts;
	me->s.c.nstarts = m;
	me->s.c.next_start = 0;
	sim_push_next_start(&me->s.c);
}

/* threads: the workers started, run to the end and joined; then the
 * frames handed over in the last window, onto their wires */
static void run_threads(struct pkt_par *par)
{
	uint32_t n = par->n, workers = par->workers;
	par->worker = fab_xcalloc(workers, sizeof *par->worker);
	pkt_par_look_init(par);
	for (uint32_t k = 0; k < workers; k++) {
		struct pkt_worker *w = &par->worker[k];
		*w = (struct pkt_worker){.par = par, .id = k, .first = k * n / workers};
		w->count = (k + 1) * n / workers - w->first;
	}
	for (uint32_t k = 1; k < workers; k++) {
		if (pthread_create(&par->worker[k].thread, NULL, worker_loop, &par->worker[k])) {
			fputs("fabscope: cannot start a thread\n", stderr); /* as out of memory */
			abort();
		}
	}
	worker_loop(&par->worker[0]);
	for (uint32_t k = 1; k < workers; k++)
		pthread_join(par->worker[k].thread, NULL);
	free(par->worker);
	pkt_par_look_free(par);
	for (uint32_t q = 0; q < n; q++)
		take_window_handed(&par->parts[q]);
}

/* the books: every partition's counters added to the whole's (integer
 * sums, alike in any order), its frames' memory handed to the whole and
 * the rest freed; the whole run's clock, idle time and how it ended */
static void whole_books(struct pkt_par *par)
{
	struct psim *s = par->whole;
	uint32_t n = par->n;
	s->idle_ps = FAB_TIME_NEVER;
	fab_time_ps last = s->c.now_ps, idle = 0;
	uint64_t settled_all = 0;
	for (uint32_t q = 0; q < par->local; q++) {
		struct pkt_part *me = &par->parts[q];
		uint64_t *w[SUM_WORDS], *v[SUM_WORDS];
		pkt_sum_words(s, w);
		pkt_sum_words(&me->s, v);
		for (int k = 0; k < SUM_WORDS; k++)
			*w[k] += *v[k];
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
		for (uint32_t i = 0; i < me->s.nheld; i++) /* due after the end, as the queue's left */
			me->s.held[i]->tx_held = false;
		free(me->s.held);
		for (int k = 0; k < 2; k++) {
			for (uint32_t d = 0; d < n; d++)
				free(me->out[k][d].v);
			free(me->out[k]);
		}
		free(me->starts);
	}
	if (par->ranks) { /* the whole run's clock, idle time and count, from every rank's last report */
		settled_all = 0;
		for (uint32_t q = 0; q < n; q++) {
			settled_all += par->rep[q].settled;
			last = FAB_MAX(last, par->rep[q].now_ps);
			if (par->rep[q].idle_ps != FAB_TIME_NEVER)
				idle = FAB_MAX(idle, par->rep[q].idle_ps);
		}
	}
	s->c.now_ps = last;
	s->c.next_start = s->c.nflows;
	if (par->stopped_by_end_time) {
		s->c.now_ps = par->end_ps;
		s->c.tot.stopped_by_end_time = true;
	} else if (settled_all == s->c.nflows) {
		s->idle_ps = idle;
	}
}

/* A run too short to pay for its threads: their start (above all the free
 * cores' 20 ms look) took 50-60 ms, more than the split gave back below
 * some 3 M events (a fat tree's 2 MiB permutation: k = 8, 1.5 M events,
 * 0.11 s on one thread, 0.17 s on two; k = 12, 5.2 M, 0.51 s and 0.33 s).
 * A data packet makes about 20 events (its hops and its ACK's, two each). */
#define SMALL_EVENTS 3e6
static bool small_run(const struct psim *s)
{
	double pkts = 0;
	for (uint32_t i = 0; i < s->c.nflows; i++)
		pkts += (double)sim_flow_at(&s->c, i)->spec.bytes / s->c.fp.mtu + 1;
	return pkts * 20 < SMALL_EVENTS;
}

int pkt_run_parallel(struct psim *s, fab_time_ps end_ps)
{
	const struct fab_topo *t = s->c.topo;
	const struct fab_sim_ranks *rk = s->c.ranks.n > 1 ? &s->c.ranks : NULL;
	if (!splittable(s) || (rk && rk->n > t->nnics))
		return rk ? -1 : 0;
	/* threads: PARTS_PER_THREAD partitions a thread unless run.partitions
	 * says, at most one a NIC, and no more threads than partitions */
	uint32_t n = rk
		? rk->n
		: FAB_MIN(s->c.fp.partitions ? s->c.fp.partitions : PARTS_PER_THREAD * s->c.fp.threads, t->nnics);
	uint32_t workers = rk ? 1 : FAB_MIN(s->c.fp.threads, n);
	/* one for a short run, else no more threads than free cores
	 * (FABSCOPE_THREADS_EXACT: as many as asked); one: the plain run,
	 * the same result */
	if (workers > 1 && !getenv("FABSCOPE_THREADS_EXACT"))
		workers = small_run(s) ? 1 : FAB_MAX(FAB_MIN(workers, pkt_free_cores()), 1u);
	if (!rk && workers == 1)
		return 0;
	uint32_t local = rk ? 1 : n;
	uint16_t *node_part = fab_xcalloc(t->nnodes, sizeof *node_part);
	split(t, n, node_part);
	for (uint32_t i = 0; i < t->nports; i++) {
		struct sim_port *port = &s->ports[i];
		port->peer_part = node_part[t->ports[port->peer].node];
		port->remote = port->peer_part != node_part[port->node];
	}
	struct pkt_par par = {.whole = s,
			      .n = n,
			      .local = local,
			      .workers = workers,
			      .next_progress = 1u << 20,
			      .ranks = rk,
			      .node_part = node_part,
			      .window_ps = s->grid_ps,
			      .end_ps = end_ps};
	struct gathered was = {0};
	if (rk) {
		par.rep = fab_xcalloc(n, sizeof *par.rep);
		pkt_gather_take(s, &was);
	}
	if (posix_memalign((void **)&par.parts, FAB_GAP, local * sizeof *par.parts)) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	memset(par.parts, 0, local * sizeof *par.parts);
	/* the whole's one start event goes: each partition starts its own flows */
	struct fab_ev first;
	while (fab_eq_pop(&s->c.eq, &first)) {
		FAB_ASSERT(first.type == EV_FLOW_START);
		s->c.eq.popped--; /* taken away, not run */
	}
	for (uint32_t l = 0; l < local; l++)
		part_init(&par, &par.parts[l], rk ? rk->me : l);
	if (rk) {
		rank_loop(&par.parts[0]);
	} else {
		s->c.threads_ran = workers;
		run_threads(&par);
	}
	whole_books(&par);
	for (uint32_t i = 0; i < t->nports; i++)
		s->ports[i].remote = false;
	int rc = par.failed ? -1 : 1;
	if (rk && !par.failed) {
		counters_close(s);
		if (pkt_ranks_gather(s, rk, &was))
			rc = -1;
	} else if (!rk) {
		counters_close(s);
	}
	pkt_gather_free(&was);
	free(par.rep);
	free(node_part);
	free(par.parts);
	return rc;
}
