/*
 * parallel_ranks.c - the packet engine split over processes (fabscope sim
 * --ranks: src/ranks.c), one partition a process (parallel.c runs its
 * windows): at a window's end each rank sends every other rank its report
 * and the frames handed to it (their bytes, checked on the way in as
 * anything from a socket is), and at the run's end each sends rank 0 its
 * totals and what it changed in the flows, the ports' counters and the
 * queue pairs (runs of bytes against a copy taken at the start: every
 * byte has one writer, the partition that owns it).
 */
#include <stdlib.h>
#include <string.h>

#include "parallel_int.h"

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
int pkt_ranks_meet(struct pkt_part *me, uint64_t *all, fab_time_ps *next)
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

void pkt_gather_take(const struct psim *s, struct gathered *g)
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

void pkt_gather_free(struct gathered *g)
{
	free(g->flows);
	free(g->rx);
	free(g->ports);
	free(g->used);
}

/* ranks: each sends rank 0 its counters and its runs; rank 0 adds and lays
 * them over its own, then closes the books again on the sums */
int pkt_ranks_gather(struct psim *s, const struct fab_sim_ranks *rk, struct gathered *was)
{
	uint32_t n = rk->n;
	struct fab_sim_msg *out = fab_xcalloc(n, sizeof *out), *in = fab_xcalloc(n, sizeof *in);
	uint64_t *v[SUM_WORDS];
	pkt_sum_words(s, v);
	if (rk->me) {
		struct gathered now;
		pkt_gather_take(s, &now);
		size_t len = SUM_WORDS * 8, cap = len + 64;
		uint8_t *b = fab_xcalloc(cap, 1);
		for (int k = 0; k < SUM_WORDS; k++)
			memcpy(b + 8 * k, v[k], 8);
		put_runs(&b, &len, &cap, was->flows, now.flows, now.nflows);
		put_runs(&b, &len, &cap, was->rx, now.rx, now.nrx);
		put_runs(&b, &len, &cap, was->ports, now.ports, now.nports);
		put_runs(&b, &len, &cap, was->used, now.used, now.nused);
		out[0] = (struct fab_sim_msg){b, len};
		pkt_gather_free(&now);
	}
	int rc = rk->exchange(rk->ctx, out, in);
	if (!rc && rk->me == 0) {
		struct gathered all;
		pkt_gather_take(s, &all);
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
		pkt_gather_free(&all);
	}
	for (uint32_t q = 0; q < n; q++) {
		free(out[q].data);
		free(in[q].data);
	}
	free(out);
	free(in);
	return rc;
}
