/*
 * fifo_pfc.c - PFC, fluid (flow.queues: dcqcn, where the fabric is
 * lossless): an ingress port whose bytes in its switch's queues reach XOFF
 * holds its upstream port to the rate those bytes drain at, until they
 * fall to XON (fq_pfc_check).  The upstream queue builds, and the link's
 * other traffic waits in it.
 *
 * What an egress queue (fifo.c) holds is kept by ingress port (struct
 * fq_in: the rate coming in, the rate of its bytes now leaving, its bytes
 * in the queue; fq_in_settle), so a switch's ingress ports can be held to
 * their thresholds, static or dynamic, as the packet engine's switch sets
 * them (src/packet/pfc.c).  A switch is checked when one of its queues
 * passes a quarter of XOFF or while it holds a pause, at most once a gap
 * (fq_pfc_watch), and when its rates predict the next crossing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fifo.h"

/* flow.queues dcqcn with PFC: a switch's thresholds are checked at most
 * once in this time, however often its queues' rates change (a crossing
 * that a change of rates brings forward is seen this late at most: at
 * 100 Gb/s, 12.5 KB past thresholds of megabytes; the crossings its rates
 * predict are checked when due); once it holds a pause, whose rate
 * follows its drain every PFC_INTERVAL_PS anyway, once in that interval */
#define PFC_INTERVAL_PS (2 * FAB_PS_PER_US)
/* a held pause's rate moves in steps of this much of itself (1%: on HPCC's
 * incast run 3% more instructions, the errors within their spread from
 * seed to seed) */
#define PFC_STEP 2e-2
#define PFC_GAP_PS (1 * FAB_PS_PER_US)

/* PFC, where DCQCN runs and the fabric is lossless (fab_flow_runs_pfc):
 * fluid pauses, and what they keep per switch */
void fq_pfc_init(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	const struct fab_topo *t = s->c.topo;
	fl->pfc = fab_flow_runs_pfc(&s->c.fp);
	if (!fl->pfc)
		return;
	uint32_t radix = 1;
	for (uint32_t v = 0; v < t->nnodes; v++)
		radix = FAB_MAX(radix, t->nodes[v].nports);
	fl->pfc_holding = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_holding);
	fl->pfc_node = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_node);
	fl->pfc_moved = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_moved);
	fl->pfc_due = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_due);
	fl->pfc_due_flag = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_due_flag);
	fl->pfc_last = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_last);
	fl->pfc_aside = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *fl->pfc_aside);
	/* what the packet engine's switch sets aside of its buffer: each
	 * port's headroom and reserve */
	const struct fab_pfc_params *pp = &s->c.fp.pfc;
	for (uint32_t i = 0; i < t->nports; i++) {
		uint32_t sw = t->switch_index[t->ports[i].node];
		if (sw != UINT32_MAX)
			fl->pfc_aside[sw] += (double)(fab_pfc_headroom(pp->headroom_bytes, pp->headroom_delays,
								       s->c.fp.mtu, &s->c.wire, t->ports[i].rate_bps,
								       t->ports[i].delay_ps) +
						      pp->reserve_bytes);
	}
	for (uint32_t i = 0; i < t->nswitches; i++)
		fl->pfc_last[i] = FAB_TIME_NEVER;
	for (uint32_t v = 0; v < t->nnodes; v++)
		if (t->switch_index[v] != UINT32_MAX)
			fl->pfc_node[t->switch_index[v]] = v;
	fl->pfc_scratch = fab_xcalloc(5 * (size_t)radix, sizeof *fl->pfc_scratch);
	FAB_ASSERT(radix < UINT16_MAX);
	size_t nat = 0;
	for (uint32_t i = 0; i < t->nports; i++) {
		const struct fab_node *nd = &t->nodes[t->ports[i].node];
		fl->fq[i].in_at = (uint32_t)nat - nd->first_port;
		nat += nd->nports;
	}
	fl->in_at = fab_xcalloc(nat, sizeof *fl->in_at);
	for (uint32_t i = 0; i < t->nports; i++)
		fl->fq[i].pfc_share = 1.0 / (double)(1u << fab_pfc_dyn_shift(&s->c.fp.pfc, s->ports[i].rate_bps));
	/* a quarter of the threshold an empty switch has at the
	 * reference speed: a switch is checked once a queue of it is
	 * this long (or while it holds a pause) */
	const struct fab_pfc_params *pf = &s->c.fp.pfc;
	double xoff = pf->dynamic ? (double)(s->c.fp.buffer_bytes >> pf->dyn_shift) : (double)pf->xoff_bytes;
	fl->pfc_gate = 0.25 * xoff;
	fl->pfc_frame = 1 / fab_wire_efficiency(fab_sim_wire(&s->c), s->c.fp.mtu);
}

void fq_pfc_free(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	free(fl->pfc_holding);
	free(fl->pfc_node);
	free(fl->pfc_moved);
	free(fl->pfc_due);
	free(fl->pfc_due_flag);
	free(fl->pfc_last);
	free(fl->pfc_aside);
	free(fl->pfc_scratch);
	free(fl->in_at);
}

/* the rate the bytes from ingress record `in` leave a backed-up queue of
 * capacity c and b bytes at: their share of what leaves (of its bytes when
 * nothing is known to leave) */
static double in_share(const struct fq_port *f, const struct fq_in *in, double c, double b)
{
	return f->aout > 0 ? c * in->out / f->aout : b > 0 ? c * in->bytes / b : 0;
}

/* the queue is empty: no ingress port has bytes in it, and those that
 * send nothing through it any more leave its records (which a busy port
 * would otherwise keep for every ingress port that ever sent to it, and
 * every settle and PFC check go through) */
void fq_in_empty(const struct flsim *s, struct fq_port *f)
{
	if (!f->nin)
		return;
	uint32_t k = 0;
	for (uint32_t j = 0; j < f->nin; j++) {
		f->in[j].bytes = 0;
		if (f->in[j].rate > 0 || f->in[j].out > 0) {
			f->in[k] = f->in[j];
			*in_at(s, f, f->in[k].port) = (uint16_t)(k + 1);
			k++;
		} else {
			*in_at(s, f, f->in[j].port) = 0;
		}
	}
	f->nin = k;
}

/* PFC: each ingress port's bytes in the queue, which held b0 bytes dt ago
 * (before its backlog was brought up to now): in at the rate coming in,
 * out at their share of what leaves; together the backlog */
void fq_in_settle(const struct flsim *s, uint32_t port, double b0, double dt)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	if (f->backlog <= 0) {
		fq_in_empty(s, f);
		return;
	}
	/* (in_share, its quotient taken once) */
	double c = cap(fl, port), sum = 0, k = f->aout > 0 ? c / f->aout : b0 > 0 ? c / b0 : 0;
	for (uint32_t j = 0; j < f->nin; j++) {
		struct fq_in *in = &f->in[j];
		double lv = k * (f->aout > 0 ? in->out : in->bytes);
		in->bytes = FAB_MAX(in->bytes + (in->rate - lv) * dt, 0.0);
		sum += in->bytes;
	}
	if (sum > 0) {
		double scale = f->backlog / sum;
		for (uint32_t j = 0; j < f->nin; j++)
			f->in[j].bytes *= scale;
	} else {
		for (uint32_t j = 0; j < f->nin; j++)
			f->in[j].bytes = f->backlog / f->nin;
	}
}

/* whether switch sw's next check may be set to t: none is due, or a later
 * one (the check that is due now is taking place) */
static bool pfc_due_after(const struct flsim *s, uint32_t sw, fab_time_ps t)
{
	fab_time_ps at = fab_timers_at(&s->fl->timers, s->fl->tm_pfc + sw);
	return at == FAB_TIME_NEVER || at <= s->c.now_ps || at > t;
}

/* refresh(): the switch of `port` (a switch's port) is checked where the
 * port's queue is past the gate, or the switch holds a pause: at the end
 * of the instant (fq_pfc_checks), or within a gap of its last check, then */
void fq_pfc_watch(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	const struct fq_port *f = &fl->fq[port];
	uint32_t sw = f->sw;
	if ((f->backlog > fl->pfc_gate || fl->pfc_holding[sw]) && !fl->pfc_due_flag[sw]) {
		fab_time_ps at = fl->pfc_last[sw] + (fl->pfc_holding[sw] ? PFC_INTERVAL_PS : PFC_GAP_PS);
		if (s->c.now_ps >= at || fl->pfc_last[sw] == FAB_TIME_NEVER) {
			fl->pfc_due_flag[sw] = true; /* checked once the instant's ports are refreshed */
			fl->pfc_due[fl->npfc_due++] = sw;
		} else if (pfc_due_after(s, sw, at)) {
			fab_timers_set(&fl->timers, fl->tm_pfc + sw, at); /* checked then: at most once a gap */
		}
	}
}

/* the switches fq_pfc_watch found due, checked once each, at the end of
 * the instant */
void fq_pfc_checks(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	for (uint32_t i = 0; i < fl->npfc_due; i++) {
		fl->pfc_due_flag[fl->pfc_due[i]] = false;
		fq_pfc_check(s, fl->pfc_node[fl->pfc_due[i]]);
	}
	fl->npfc_due = 0;
}

/* the ingress port's XOFF and XON as the packet engine's switch sets them
 * (dynamic: a share of the buffer left by every port's headroom and
 * reserve and the payload in use) */
static void pfc_thresholds(const struct flsim *s, uint32_t sw, uint32_t port, double used, double *xoff, double *xon)
{
	const struct fab_pfc_params *pf = &s->c.fp.pfc;
	if (!pf->dynamic) {
		*xoff = (double)pf->xoff_bytes;
		*xon = (double)pf->xon_bytes;
		return;
	}
	double free = FAB_MAX((double)s->c.fp.buffer_bytes - s->fl->pfc_aside[sw] - used, 0.0);
	*xoff = (double)pf->reserve_bytes + free * s->fl->fq[port].pfc_share;
	*xon = FAB_MAX(*xoff - (double)pf->resume_offset, 0.0);
}

/* a switch port's PFC headroom and its threshold on an empty switch, as
 * the packet engine's reports them (0, 0 where pauses are not modelled) */
void fq_port_pfc(const struct flsim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff)
{
	const struct fl_state *fl = s->fl;
	*headroom = *xoff = 0;
	if (!fl->fq || !fl->pfc || !s->ports[port].is_switch)
		return;
	const struct fab_pfc_params *pf = &s->c.fp.pfc;
	*headroom = fab_pfc_headroom(pf->headroom_bytes, pf->headroom_delays, s->c.fp.mtu, &s->c.wire,
				     s->ports[port].rate_bps, s->ports[port].delay_ps);
	if (!pf->dynamic) {
		*xoff = pf->xoff_bytes;
		return;
	}
	double buf = (double)s->c.fp.buffer_bytes,
	       aside = fl->pfc_aside[s->c.topo->switch_index[s->c.topo->ports[port].node]];
	*xoff = buf > aside ? (fab_bytes)((buf - aside) * fl->fq[port].pfc_share) : 0;
}

/* the first lossless priority: where pauses are counted */
static unsigned pfc_prio(const struct flsim *s)
{
	unsigned p = 0;
	while (p + 1 < FAB_NPRIO && !(s->c.fp.pfc.prio_mask >> p & 1))
		p++;
	return p;
}

/* the upstream port `up` sends at most r (0: as it likes) */
static void pfc_hold(struct flsim *s, uint32_t up, double r)
{
	struct fq_port *f = &s->fl->fq[up];
	if (r == f->pfc_rate || (r > 0 && f->pfc_rate > 0 && fabs(r - f->pfc_rate) <= PFC_STEP * f->pfc_rate))
		return;
	unsigned prio = pfc_prio(s);
	struct fab_port_stats *st = &s->ports[up].st;
	if (f->pfc_rate > 0) {
		/* the time it was held at that rate, as the time PAUSE frames
		 * that start and stop it would have it stopped to send at that
		 * rate on the mean: the packet engine's paused_ps */
		double full = FAB_MAX(s->fl->ports[up].payload_per_ps - f->ack_used,
				      1e-3 * s->fl->ports[up].payload_per_ps);
		double stopped = 1 - FAB_MIN(f->pfc_rate, full) / full;
		st->paused_ps[prio] += (fab_time_ps)llround(stopped * (double)(s->c.now_ps - f->paused_since));
	}
	if (r > 0 && f->pfc_rate == 0) {
		st->pause_rx[prio]++;
		s->ports[s->ports[up].peer].st.pause_tx[prio]++;
	}
	f->paused_since = s->c.now_ps; /* (the time held at the rate set now, from now) */
	bool sw = s->ports[up].is_switch;
	if (sw)
		settle(s, up); /* the queue so far at the old rate */
	f->pfc_rate = r;
	cap_set(s->fl, up);
	if (sw)
		touch(s, up); /* (refresh: what waits in it moves, out_due) */
	else
		fl_mark_dirty(s, up); /* its NIC shares again */
}

/* whether an ingress port's bytes in its switch reach XOFF (within a
 * byte: a crossing due now, not a picosecond on); a port with no bytes
 * there never does, however low the threshold (dynamic thresholds fall to
 * the reserve once the shared buffer is full: an empty port paused and
 * let go at every check) */
static bool pfc_reached(double occ, double xoff)
{
	return occ >= 1 && occ >= xoff - 1;
}

/* The switch's ingress ports' bytes in its queues (occ), how fast they
 * grow, and the rate they leave at (drain); the payload it holds (the
 * return) and how fast that grows (*dused).  An empty queue holds no one's
 * bytes and none grow in it: it counts only for the rate a held pause's
 * bytes drain at, and is skipped unless `all`. */
static double pfc_scan(struct flsim *s, uint32_t node, bool all, double *dused)
{
	struct fl_state *fl = s->fl;
	const struct fab_node *nd = &s->c.topo->nodes[node];
	uint32_t first = nd->first_port, n = nd->nports;
	double *occ = fl->pfc_scratch, *grow = occ + n, *drain = grow + n, used = 0;
	memset(occ, 0, 3 * n * sizeof *occ);
	*dused = 0;
	double frame = fl->pfc_frame;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t e = first + k;
		struct fq_port *f = &fl->fq[e];
		settle(s, e);
		used += f->backlog * frame;
		double c = cap(fl, e);
		bool backed_up = f->backlog > 0 || f->ain > c;
		if (backed_up)
			*dused += (f->ain - c) * frame;
		if (!all && !backed_up)
			continue;
		for (uint32_t j = 0; j < f->nin; j++) {
			const struct fq_in *in = &f->in[j];
			uint32_t i = in->port - first; /* (an ingress port of this switch: in_of) */
			/* what leaves of them: their share, or through an empty queue all */
			double lv = backed_up ? in_share(f, in, c, f->backlog) : in->rate;
			occ[i] += in->bytes * frame;
			if (backed_up)
				grow[i] += (in->rate - lv) * frame;
			drain[i] += lv;
		}
	}
	return used;
}

/* A switch's ingress ports against their thresholds: each ingress port's
 * bytes in every egress queue (in_settle), which leave at their share of
 * what the queue sends (in_share).  One that reaches XOFF holds its upstream port to
 * the rate its bytes leave at (a fluid pause: the upstream queue takes the
 * rest, behind which the other traffic of that link waits too) until they
 * fall to XON.  The next crossing is checked when it is due: where the
 * thresholds are dynamic they move too, down by the port's share of what
 * the whole buffer takes (16 ports filling at once meet a threshold that
 * is half the free buffer 9 times sooner than it stood). */
void fq_pfc_check(struct flsim *s, uint32_t node)
{
	struct fl_state *fl = s->fl;
	const struct fab_node *nd = &s->c.topo->nodes[node];
	uint32_t first = nd->first_port, n = nd->nports, sw = s->c.topo->switch_index[node];
	double *occ = fl->pfc_scratch, *grow = occ + n, *drain = grow + n, *xoff = drain + n, *xon = xoff + n;
	bool all = fl->pfc_holding[sw] > 0, starts = false;
	double dused, used = pfc_scan(s, node, all, &dused);
	for (uint32_t k = 0; k < n; k++) {
		pfc_thresholds(s, sw, first + k, used, &xoff[k], &xon[k]);
		starts = starts || (!fl->fq[first + k].holding && pfc_reached(occ[k], xoff[k]));
	}
	if (!all && starts) /* a port that starts to hold needs its drain whole */
		pfc_scan(s, node, true, &dused);
	const struct fab_pfc_params *pf = &s->c.fp.pfc;
	bool moving = pf->dynamic && (double)s->c.fp.buffer_bytes - fl->pfc_aside[sw] - used > 0;
	double next = INFINITY;
	bool moved = false;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t ip = first + k, up = s->ports[ip].peer;
		struct fq_port *fi = &fl->fq[ip];
		if (!fi->holding && pfc_reached(occ[k], xoff[k])) {
			fi->holding = true;
			fl->pfc_holding[sw]++;
		} else if (fi->holding && occ[k] < xon[k] + 1) {
			fi->holding = false;
			fl->pfc_holding[sw]--;
			pfc_hold(s, up, 0);
		}
		/* a pause's rate follows its bytes' drain once an interval (it
		 * acts a link later: set at every change, the loop rings) */
		if (fi->holding && (fl->fq[up].pfc_rate == 0 || s->c.now_ps >= fl->pfc_moved[sw] + PFC_INTERVAL_PS)) {
			pfc_hold(s, up, FAB_MAX(drain[k], 1e-3 * fl->ports[up].payload_per_ps));
			moved = true;
		}
		/* the bytes against the threshold: their growth and its fall */
		double closing = grow[k] + (moving ? fi->pfc_share * dused : 0);
		if (!fi->holding && closing > 0)
			next = FAB_MIN(next, (xoff[k] - occ[k]) / closing);
		else if (fi->holding && closing < 0)
			next = FAB_MIN(next, (occ[k] - xon[k]) / -closing);
	}
	if (moved)
		fl->pfc_moved[sw] = s->c.now_ps;
	if (fl->pfc_holding[sw]) /* (the pauses' rates follow their drains then) */
		next = FAB_MIN(next, (double)(fl->pfc_moved[sw] + PFC_INTERVAL_PS - s->c.now_ps));
	fl->pfc_last[sw] = s->c.now_ps;
	if (next < 1e15) {
		fab_time_ps t = s->c.now_ps + (fab_time_ps)ceil(FAB_MAX(next, 1000.0)); /* at most every ns */
		if (pfc_due_after(s, sw, t))
			fab_timers_set(&fl->timers, fl->tm_pfc + sw, t);
	}
}
