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
 * with one partition a process: at a window's end each rank sends every
 * other rank its report and the frames handed to it (their bytes, checked
 * on the way in as anything from a socket is), and at the run's end each
 * sends rank 0 its totals and what it changed in the flows, the ports'
 * counters and the queue pairs (runs of bytes against a copy taken at the
 * start: every byte has one writer, the partition that owns it).
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

#include "transport.h"

/* threads: partitions a thread unless run.partitions says.  More than one
 * lets the threads even out their windows; on HPCC's FB_Hadoop run (320
 * hosts, 2 threads) 4 to 16 a thread ran 10 to 25% faster than 1, and
 * each partition's frames to another are a copy (doc/model.md) */
#define PARTS_PER_THREAD 8

/* a frame handed to another partition: the port whose wire it is on and
 * the frame's bytes after its link pointer (as ranks send them, too).  A
 * copy, not the frame: the sender's frame stays in its pool, hot in its
 * core's cache, and the receiver reads the boxes in order (streamed). */
#define FRAME_BYTES (sizeof(struct pkt) - offsetof(struct pkt, qp))
struct hand {
	uint32_t port;
	uint8_t frame[FRAME_BYTES];
} __attribute__((packed));
#define HAND_BYTES sizeof(struct hand)
_Static_assert(sizeof(struct hand) == 4 + FRAME_BYTES, "a handed frame is its port and its bytes");

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
	fab_time_ps now_ps;  /* its clock */
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
	uint64_t before;              /* its flows settled as of its last event */
	fab_time_ps idle;             /* when its last flow settled */
	uint64_t windows;             /* windows it has run */
	atomic_uint claimed;          /* threads: the last window a worker took it for */
} __attribute__((aligned(FAB_GAP)));  /* one partition's writes never on another's lines */

/* threads: a worker runs partitions, its own first (first..first+count),
 * then any another worker has not yet taken in the window */
struct pkt_worker {
	struct pkt_par *par;
	uint32_t id, first, count;
	pthread_t thread;
};

struct pkt_par {
	struct psim *whole;
	uint32_t n;                        /* partitions (ranks: one a rank) */
	uint32_t local;                    /* those in this process: n, or 1 (ranks) */
	uint32_t workers;                  /* threads running them (ranks: 1) */
	uint64_t next_progress;            /* partition 0's progress line */
	const struct fab_sim_ranks *ranks; /* NULL: threads */
	const uint16_t *node_part;
	struct part_report *rep; /* ranks: every rank's last report */
	uint32_t tag;            /* ranks: exchanges so far */
	bool failed;             /* ranks: an exchange failed */
	struct pkt_part *parts;  /* [local] */
	fab_time_ps window_ps, end_ps;
	struct pkt_worker *worker; /* [workers] */
	/* the barrier: arrivals count up; the last one bumps the generation */
	_Alignas(FAB_GAP) atomic_uint arrived;
	_Alignas(FAB_GAP) atomic_uint generation;
	/* the outcome, identical in every partition */
	bool stopped_by_end_time;
};

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

static void barrier_wait(struct pkt_par *par)
{
	unsigned gen = atomic_load_explicit(&par->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&par->arrived, 1, memory_order_acq_rel) + 1 == par->workers) {
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

/* A rank's window message: its report, then the frames for the rank it
 * goes to, as its hand box holds them. */
#define REPORT_WORDS 5

static void put_u64(uint8_t **w, uint64_t v)
{
	memcpy(*w, &v, 8);
	*w += 8;
}

static uint64_t get_u64(const uint8_t **r)
{
	uint64_t v;
	memcpy(&v, *r, 8);
	*r += 8;
	return v;
}

/* a frame from rank `from` as the engine could have sent it: a link from
 * that rank's node to one of this rank's, after the window, in order on
 * its wire, with fields in range */
static bool frame_ok(const struct pkt_par *par, uint32_t from, uint32_t port, const struct pkt *p, fab_time_ps now)
{
	const struct psim *s = par->whole;
	const struct fab_topo *t = s->c.topo;
	if (port >= t->nports)
		return false;
	const struct sim_port *sp = &s->ports[port];
	if (par->node_part[sp->node] != from || sp->peer_part != par->ranks->me || !sp->remote)
		return false;
	if (p->arrive_ps < now || (sp->wire_tail && p->arrive_ps < sp->wire_tail->arrive_ps))
		return false;
	if (p->kind > PKT_PFC || p->prio >= FAB_NPRIO || p->payload > p->frame_bytes)
		return false;
	if (p->kind == PKT_PFC)
		return true;
	if (p->qp >= s->c.nqps || p->src_nic >= t->nnics || p->dst_nic >= t->nnics)
		return false;
	/* its ends are its queue pair's (data one way, the rest back), and a
	 * NIC takes only its own: so where it lands, the queue pair's end there
	 * is this rank's own, with its state */
	const struct sim_conn *c = s->c.qps[p->qp];
	bool fwd = p->kind == PKT_DATA;
	if (p->src_nic != (fwd ? c->src_nic : c->dst_nic) || p->dst_nic != (fwd ? c->dst_nic : c->src_nic))
		return false;
	uint32_t into = t->ports[sp->peer].node;
	return t->nodes[into].kind != FAB_NODE_NIC || t->nic_node[p->dst_nic] == into;
}

/* ranks: this rank's report and handed frames to each other rank, theirs
 * to it; their frames onto their wires, in rank order as threads take them */
static int ranks_meet(struct pkt_part *me, uint64_t *all, fab_time_ps *next)
{
	struct pkt_par *par = me->par;
	struct psim *s = &me->s;
	uint32_t n = par->n;
	struct fab_sim_msg *out = fab_xcalloc(n, sizeof *out), *in = fab_xcalloc(n, sizeof *in);
	const struct part_report *r = &me->report[me->parity];
	for (uint32_t q = 0; q < n; q++) {
		if (q == me->id)
			continue;
		struct hand_box *b = &me->out[me->parity][q];
		out[q].len = REPORT_WORDS * 8 + b->len * HAND_BYTES;
		out[q].data = fab_xcalloc(out[q].len, 1);
		uint8_t *w = out[q].data;
		put_u64(&w, r->settled);
		put_u64(&w, r->next_ps);
		put_u64(&w, r->idle_ps);
		put_u64(&w, r->now_ps);
		put_u64(&w, b->len);
		if (b->len)
			memcpy(w, b->v, b->len * HAND_BYTES);
		b->len = 0;
	}
	par->rep[me->id] = *r;
	int rc = par->ranks->exchange(par->ranks->ctx, out, in);
	fab_time_ps now = s->c.now_ps;
	for (uint32_t q = 0; q < n && !rc; q++) {
		if (q == me->id)
			continue;
		const uint8_t *rd = in[q].data;
		if (in[q].len < REPORT_WORDS * 8) {
			rc = -1;
			break;
		}
		struct part_report *pr = &par->rep[q];
		pr->settled = get_u64(&rd);
		pr->next_ps = get_u64(&rd);
		pr->idle_ps = get_u64(&rd);
		pr->now_ps = get_u64(&rd);
		uint64_t nf = get_u64(&rd);
		if (nf > (in[q].len - REPORT_WORDS * 8) / HAND_BYTES ||
		    in[q].len != REPORT_WORDS * 8 + nf * HAND_BYTES || pr->settled > s->c.nflows) {
			rc = -1;
			break;
		}
		for (uint64_t i = 0; i < nf; i++, rd += HAND_BYTES) {
			uint32_t port;
			memcpy(&port, rd, 4);
			struct pkt *p = sim_pkt_alloc(s);
			memcpy((uint8_t *)p + offsetof(struct pkt, qp), rd + 4, FRAME_BYTES);
			if (!frame_ok(par, q, port, p, now)) {
				p->kind = PKT_PFC; /* not on the books */
				sim_pkt_free(s, p);
				rc = -1;
				break;
			}
			if (p->kind == PKT_DATA)
				s->live_data_payload += p->payload;
			sim_port_wire_append(s, &s->ports[port], p);
		}
	}
	for (uint32_t q = 0; q < n; q++) {
		free(out[q].data);
		free(in[q].data);
	}
	free(out);
	free(in);
	me->handed_min = FAB_TIME_NEVER;
	me->parity ^= 1u;
	if (rc) {
		par->failed = true;
		return -1;
	}
	for (uint32_t q = 0; q < n; q++) {
		*all += par->rep[q].settled;
		*next = FAB_MIN(*next, par->rep[q].next_ps);
	}
	return 0;
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
		if (ranks_meet(me, &all, &next) || window_next(par, all, next, end, &win, true))
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
 * every worker reads all the reports and decides alike */
static void *worker_loop(void *arg)
{
	struct pkt_worker *w = arg;
	struct pkt_par *par = w->par;
	fab_time_ps win = 0;
	unsigned parity = 0;
	for (unsigned gen = 1;; gen++) {
		fab_time_ps end = win + par->window_ps;
		for (uint32_t k = 0; k < w->count; k++)
			if (claim(&par->parts[w->first + k], gen))
				part_window(&par->parts[w->first + k], end);
		for (uint32_t q = par->n; q-- > 0;)
			if ((q < w->first || q >= w->first + w->count) && claim(&par->parts[q], gen))
				part_window(&par->parts[q], end);
		barrier_wait(par);
		uint64_t all = 0;
		fab_time_ps next = FAB_TIME_NEVER;
		threads_reports(par, parity, &all, &next);
		parity ^= 1u;
		if (window_next(par, all, next, end, &win, w->id == 0))
			break;
	}
	return NULL;
}

/* Whether the run can be split: the scenario's flows alone (no workload's
 * callbacks, timers or queue pairs, no faults, no series), a fresh run,
 * two NICs or more. */
/* a congestion control that wants samples reads records the run keeps
 * whole (telemetry.c) */
static bool wants_samples(const struct fab_fabric_params *fp)
{
	for (int t = 0; t < FAB_TRANSPORT_COUNT; t++)
		if (fab_cc_of(&fp->cc, t)->wants & FAB_CC_WANTS_SAMPLE)
			return true;
	return false;
}

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

/* What a rank changed in an array since the copy taken at the start, as
 * runs: offset, length, bytes (only the partition owning a byte writes it,
 * so rank 0 lays each rank's runs over its own). */
static void put_runs(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *was, const uint8_t *now, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (was[i] == now[i]) {
			i++;
			continue;
		}
		size_t j = i;
		/* changed bytes only: an unchanged one may be another rank's */
		while (j < n && was[j] != now[j])
			j++;
		size_t need = *len + 16 + (j - i);
		if (need > *cap) {
			*cap = FAB_MAX(need, 2 * *cap);
			*buf = fab_xrealloc(*buf, *cap, 1);
		}
		uint64_t off = i, run = j - i;
		memcpy(*buf + *len, &off, 8);
		memcpy(*buf + *len + 8, &run, 8);
		memcpy(*buf + *len + 16, now + i, j - i);
		*len = need;
		i = j;
	}
	/* the end of this array's runs */
	size_t need = *len + 16;
	if (need > *cap) {
		*cap = FAB_MAX(need, 2 * *cap);
		*buf = fab_xrealloc(*buf, *cap, 1);
	}
	memset(*buf + *len, 0xff, 16);
	*len = need;
}

/* lays the runs at *r over dst (n bytes); false: malformed */
static bool take_runs(const uint8_t **r, const uint8_t *end, uint8_t *dst, size_t n)
{
	for (;;) {
		uint64_t off, run;
		if (end - *r < 16)
			return false;
		memcpy(&off, *r, 8);
		memcpy(&run, *r + 8, 8);
		*r += 16;
		if (off == UINT64_MAX && run == UINT64_MAX)
			return true;
		if (off > n || run > n - off || run > (uint64_t)(end - *r))
			return false;
		memcpy(dst + off, *r, run);
		*r += run;
	}
}

/* the arrays rank 0 gathers: the flows, their receivers' counts, the
 * ports' counters, the queue pairs' used marks, each as bytes */
struct gathered {
	uint8_t *flows, *rx, *ports, *used;
	size_t nflows, nrx, nports, nused;
};

static void gather_take(const struct psim *s, struct gathered *g)
{
	g->nflows = s->c.nflows * s->c.flow_stride;
	g->flows = fab_xcalloc(g->nflows ? g->nflows : 1, 1);
	memcpy(g->flows, s->c.flow_mem, g->nflows);
	g->nrx = s->c.nflows * s->c.rx_stride * sizeof *s->c.flow_rx;
	g->rx = fab_xcalloc(g->nrx ? g->nrx : 1, 1);
	memcpy(g->rx, s->c.flow_rx, g->nrx);
	g->nports = s->c.topo->nports * sizeof(struct fab_port_stats);
	g->ports = fab_xcalloc(g->nports ? g->nports : 1, 1);
	for (uint32_t i = 0; i < s->c.topo->nports; i++)
		memcpy(g->ports + i * sizeof(struct fab_port_stats), &s->ports[i].st, sizeof(struct fab_port_stats));
	g->nused = s->c.nqps;
	g->used = fab_xcalloc(g->nused ? g->nused : 1, 1);
	for (uint32_t i = 0; i < s->c.nqps; i++)
		g->used[i] = s->c.qps[i]->used;
}

static void gather_free(struct gathered *g)
{
	free(g->flows);
	free(g->rx);
	free(g->ports);
	free(g->used);
}

/* the counters a partition adds to the whole's, and a rank to rank 0's */
#define SUM_WORDS 19
static void sum_words(struct psim *s, uint64_t *v[SUM_WORDS])
{
	struct fab_sim_totals *t = &s->c.tot;
	uint64_t *w[SUM_WORDS] = {&t->data_tx_bytes, &t->data_rx_bytes,  &t->data_drop_bytes, &t->data_pkts,
				  &t->retx_pkts,     &t->timeouts,       &t->qp_errors,       &t->cnps,
				  &t->drops,         &t->wire_losses,    &t->failovers,       &t->reordered,
				  &t->flows_done,    &s->c.flows_failed, &s->c.eq.popped,     &s->live_data_payload,
				  &s->host_pkts,     &s->host_bytes,     &s->holds_total};
	memcpy(v, w, sizeof w);
}

/* ranks: each sends rank 0 its counters and its runs; rank 0 adds and lays
 * them over its own, then closes the books again on the sums */
static int ranks_gather(struct psim *s, const struct fab_sim_ranks *rk, struct gathered *was)
{
	uint32_t n = rk->n;
	struct fab_sim_msg *out = fab_xcalloc(n, sizeof *out), *in = fab_xcalloc(n, sizeof *in);
	uint64_t *v[SUM_WORDS];
	sum_words(s, v);
	if (rk->me) {
		struct gathered now;
		gather_take(s, &now);
		size_t len = SUM_WORDS * 8, cap = len + 64;
		uint8_t *b = fab_xcalloc(cap, 1);
		for (int k = 0; k < SUM_WORDS; k++)
			memcpy(b + 8 * k, v[k], 8);
		put_runs(&b, &len, &cap, was->flows, now.flows, now.nflows);
		put_runs(&b, &len, &cap, was->rx, now.rx, now.nrx);
		put_runs(&b, &len, &cap, was->ports, now.ports, now.nports);
		put_runs(&b, &len, &cap, was->used, now.used, now.nused);
		out[0] = (struct fab_sim_msg){b, len};
		gather_free(&now);
	}
	int rc = rk->exchange(rk->ctx, out, in);
	if (!rc && rk->me == 0) {
		struct gathered all;
		gather_take(s, &all);
		for (uint32_t q = 1; q < n && !rc; q++) {
			const uint8_t *r = in[q].data, *end = r + in[q].len;
			if (in[q].len < SUM_WORDS * 8) {
				rc = -1;
				break;
			}
			for (int k = 0; k < SUM_WORDS; k++, r += 8) {
				uint64_t x;
				memcpy(&x, r, 8);
				*v[k] += x;
			}
			if (!take_runs(&r, end, all.flows, all.nflows) || !take_runs(&r, end, all.rx, all.nrx) ||
			    !take_runs(&r, end, all.ports, all.nports) || !take_runs(&r, end, all.used, all.nused) ||
			    r != end)
				rc = -1;
		}
		if (!rc) {
			memcpy(s->c.flow_mem, all.flows, all.nflows);
			memcpy(s->c.flow_rx, all.rx, all.nrx);
			for (uint32_t i = 0; i < s->c.topo->nports; i++)
				memcpy(&s->ports[i].st, all.ports + i * sizeof(struct fab_port_stats),
				       sizeof(struct fab_port_stats));
			for (uint32_t i = 0; i < s->c.nqps; i++)
				s->c.qps[i]->used = all.used[i] != 0;
			counters_books(s);
		}
		gather_free(&all);
	}
	for (uint32_t q = 0; q < n; q++) {
		free(out[q].data);
		free(in[q].data);
	}
	free(out);
	free(in);
	return rc;
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
		gather_take(s, &was);
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
	for (uint32_t l = 0; l < local; l++) {
		struct pkt_part *me = &par.parts[l];
		uint32_t q = rk ? rk->me : l;
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
		me->par = &par;
		me->handed_min = FAB_TIME_NEVER;
		me->idle = FAB_TIME_NEVER;
		for (int k = 0; k < 2; k++)
			me->out[k] = fab_xcalloc(n, sizeof *me->out[k]);
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
			if (node_part[t->nic_node[fl->spec.src_nic]] == q ||
			    node_part[t->nic_node[fl->spec.dst_nic]] != q)
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
	if (rk) {
		rank_loop(&par.parts[0]);
	} else {
		par.worker = fab_xcalloc(workers, sizeof *par.worker);
		for (uint32_t k = 0; k < workers; k++) {
			struct pkt_worker *w = &par.worker[k];
			*w = (struct pkt_worker){.par = &par, .id = k, .first = k * n / workers};
			w->count = (k + 1) * n / workers - w->first;
		}
		for (uint32_t k = 1; k < workers; k++) {
			if (pthread_create(&par.worker[k].thread, NULL, worker_loop, &par.worker[k])) {
				fputs("fabscope: cannot start a thread\n", stderr); /* as out of memory */
				abort();
			}
		}
		worker_loop(&par.worker[0]);
		for (uint32_t k = 1; k < workers; k++)
			pthread_join(par.worker[k].thread, NULL);
		free(par.worker);
		/* the frames handed over in the last window, onto their wires */
		for (uint32_t q = 0; q < n; q++)
			take_window_handed(&par.parts[q]);
	}
	/* the books: integer sums, alike in any order */
	s->idle_ps = FAB_TIME_NEVER;
	fab_time_ps last = s->c.now_ps, idle = 0;
	uint64_t settled_all = 0;
	for (uint32_t q = 0; q < local; q++) {
		struct pkt_part *me = &par.parts[q];
		uint64_t *w[SUM_WORDS], *v[SUM_WORDS];
		sum_words(s, w);
		sum_words(&me->s, v);
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
	if (rk) { /* the whole run's clock, idle time and count, from every rank's last report */
		settled_all = 0;
		for (uint32_t q = 0; q < n; q++) {
			settled_all += par.rep[q].settled;
			last = FAB_MAX(last, par.rep[q].now_ps);
			if (par.rep[q].idle_ps != FAB_TIME_NEVER)
				idle = FAB_MAX(idle, par.rep[q].idle_ps);
		}
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
	int rc = par.failed ? -1 : 1;
	if (rk && !par.failed) {
		counters_close(s);
		if (ranks_gather(s, rk, &was))
			rc = -1;
	} else if (!rk) {
		counters_close(s);
	}
	gather_free(&was);
	free(par.rep);
	free(node_part);
	free(par.parts);
	return rc;
}
