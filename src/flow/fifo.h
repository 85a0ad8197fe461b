/*
 * fifo.h - what the files of the fluid FIFO queues (flow.queues: fifo and
 * dcqcn) share: a port's queue (struct fq_port), what waits in it, the
 * records that carry changes of rate and tokens, their tolerances, the
 * small helpers every one of them calls on hot paths (inline), and each
 * file's functions that the others call.  The engine reaches them only
 * through their queue models' tables (queue.h).
 *
 *   fifo.c        a port's fluid FIFO queue: its backlog, what waits in it,
 *                 the rates coming in and leaving; its events and timers
 *   fifo_rate.c   rates: set at the sources, passed on from port to port
 *   fifo_dcqcn.c  DCQCN at the sources, ECN marks; flow.queues dcqcn's table
 *   fifo_pfc.c    PFC, fluid: pauses held to the rate their bytes drain at
 *   fifo_tok.c    tokens: a message's last byte, a congestion notification
 */
#ifndef FAB_FLOW_FIFO_H
#define FAB_FLOW_FIFO_H

#include "flow_int.h"
#include "queue.h"

/* a change of rate waiting in a queue: it starts to leave once the port
 * has sent `at` bytes (its count: fq_port.served), those ahead of it */
struct fq_pend {
	double at;
	double rate;  /* a change of rate: the new rate; at a last hop: by how much */
	uint32_t qp;  /* a change of rate: its transfer; a token: its record; at a last hop: the ingress port */
	uint32_t hop; /* a change of rate: its hop; a token: PEND_TOK; at a last hop: PEND_LAST */
};
#define PEND_TOK UINT32_MAX
#define PEND_LAST (UINT32_MAX - 1)
/* fq_rec.hop of a change at a last hop (qp: the port, cookie: the ingress
 * port, rate: by how much) */
#define REC_LAST UINT32_MAX

/* what comes into an egress port from one ingress port of its switch:
 * the rate coming in, the rate (of what came in) of its bytes now leaving,
 * and its bytes in the queue */
struct fq_in {
	uint32_t port;
	double rate, out, bytes;
};

/* (the fields that settle, refresh and a token's or a change's crossing
 * read, in the first 64 bytes: one cache line a port, of arrays aligned
 * to it; the rest in the next two) */
struct fq_port {
	double backlog;        /* payload bytes queued */
	double c;              /* what it serves data at now (cap_set) */
	double ain;            /* the rate coming in (bytes per ps) */
	fab_time_ps t_backlog; /* backlog as of */
	fab_time_ps in_due;    /* the last change of rate sent to it is due then (EV_FQ_IN) */
	double scale_sent;     /* the scale its rates were last all passed on at */
	uint32_t pn;           /* changes waiting in its queue (pend) */
	uint32_t nchg;         /* transfers whose rates changed since (chg) */
	bool touched;          /* in the list of ports to refresh at the end of the instant */
	bool marking;          /* flow.queues dcqcn: its queue was past kmin when last refreshed */
	bool holding;          /* PFC, as an ingress: it holds its upstream paused */
	uint32_t sw;           /* its switch's index (UINT32_MAX: a NIC's port) */
	double aout;           /* the rate of the bytes now leaving */
	double served;         /* payload bytes it has sent since its queue was last empty */
	double scale;          /* what leaves / what it left with: C / aout while backed up, else 1 */
	double kmin, kmax;     /* ECN's thresholds, in proportion to its rate (ecn_set) */
	double ack;            /* ACKs that cross it, bytes per ps */
	double ack_used;       /* as its capacity counts them (switch), its NIC's rates (NIC) */
	uint64_t *chg;         /* transfers whose rates changed since: id << 8 | hop */
	uint32_t cap_chg;
	uint32_t ph, pcap;
	/* PFC: as an egress, what comes in by ingress port (in, nin): the
	 * record of ingress port i (of its switch) is in[fl->in_at[in_at + i]
	 * - 1] (0: none; in_at less the switch's first port, modulo 2^32: no
	 * lookup of the switch); as the upstream port of an ingress that holds
	 * it, the rate the pause leaves it (0: none) and since when */
	uint32_t nin, cap_in, in_at;
	struct fq_pend *pend; /* ring buffer: pend[(ph + i) & (pcap - 1)], i < pn (pcap a power of 2) */
	struct fq_in *in;
	double pfc_share; /* dynamic thresholds: its XOFF's share of the free buffer */
	double pfc_rate;
	fab_time_ps paused_since; /* its pause's rate was set then */
};
_Static_assert(sizeof(struct fq_port) % 64 == 0, "each port starts a cache line");

/* what a token carries */
enum { TOK_DATA, TOK_NOTE };

/* the changes of rate one refresh passes on, due at one time: a chain of
 * records (fq_rec.next), one event (they would be consecutive events: the
 * same time, and sequence numbers taken one after the other) */
struct fq_batch {
	uint32_t head, tail;
	fab_time_ps t;
	uint64_t stamp; /* (fl->batch_stamp when it began) */
};

#define FQ_EMPTY 1e-3 /* bytes: a queue this short is empty */
/* relative: smaller changes of a rate are not passed on */
#define FQ_TOL 1e-3
/* fl->tol: a port passes on all of its transfers when its scale moves by
 * more than half of it: FQ_TOL
 * with FIFO queues alone, 1% with DCQCN, whose queues move all the time
 * (on HPCC's incast run 8% fewer events and 5% fewer instructions; a rate
 * that moved by less than 1% went unseen too for 5% fewer still, but that
 * let DCQCN's additive steps of a few thousandths of a percent lag: two
 * senders' mean queue 12 KiB against 11, the packet engine's 9) */
#define FQ_TOL_CC 1e-2
/* flow.queues dcqcn: what waits in a queue behind the head that leaves
 * goes with it if due within this much of the backlog (a hundredth of
 * the queueing delay early at most: on HPCC's incast run, where queues
 * hold milliseconds and DCQCN moves rates every few microseconds, 18%
 * fewer events and 13% fewer instructions, the largest p95 error within
 * 1.1 points of before); a change of rate also if due within a hop's
 * latency (let_through: 7.6% fewer events and 5.5% fewer instructions
 * again, the errors within the seeds' spread) */
#define FQ_EARLY 1e-2

/* what a port serves data at: its payload rate less the ACKs ahead of it,
 * no more than a pause lets it; kept in fq_port.c, set again whenever one
 * of them changes */
static inline void cap_set(struct fl_state *fl, uint32_t port)
{
	double c = fl->ports[port].payload_per_ps, r = fl->fq[port].pfc_rate;
	c = FAB_MAX(c - fl->fq[port].ack_used, 1e-3 * c);
	fl->fq[port].c = r > 0 ? FAB_MIN(c, r) : c;
}

static inline double cap(const struct fl_state *fl, uint32_t port)
{
	return fl->fq[port].c;
}

static inline uint32_t rec_new(struct fl_state *fl)
{
	if (fl->free_rec != UINT32_MAX) {
		uint32_t i = fl->free_rec;
		fl->free_rec = fl->rec[i].next;
		return i;
	}
	if (fl->nrec == fl->cap_rec) {
		fl->cap_rec = fl->cap_rec ? 2 * fl->cap_rec : 256;
		fl->rec = fab_xrealloc(fl->rec, fl->cap_rec, sizeof *fl->rec);
	}
	return fl->nrec++;
}

static inline void rec_free(struct fl_state *fl, uint32_t i)
{
	fl->rec[i].next = fl->free_rec;
	fl->free_rec = i;
}

/* from leaving hop h to arriving at hop h + 1: propagation, and a packet's
 * store-and-forward out of a switch (as fl's tail_ps adds them up) */
static inline fab_time_ps hop_lat(const struct flsim *s, const struct fl_qp *q, uint32_t h)
{
	const struct fl_link *p = &s->ports[q->path[h]];
	return h ? p->data_hop_ps : p->delay_ps;
}

/* the port is refreshed once at the end of the instant, however many
 * changes reach it at it (with flow.batch, once within that time) */
static inline void touch(struct flsim *s, uint32_t port)
{
	fl_due_add(&s->fl->touch, &s->fl->fq[port].touched, port, s->c.now_ps);
}

/* settle() for a queue that holds bytes, or fills (fifo.c) */
void fq_settle_queue(struct flsim *s, uint32_t port);

/* the backlog brought up to now; an emptied queue lets every waiting change
 * through (and is refreshed at the end of the instant) */
static inline void settle(struct flsim *s, uint32_t port)
{
	struct fq_port *f = &s->fl->fq[port];
	/* empty, and it stays so (an empty queue has nothing waiting in it and
	 * has served nothing since it emptied: emptied() has run) */
	if (f->backlog == 0 && (f->t_backlog == s->c.now_ps || f->ain <= f->c)) {
		FAB_ASSERT(!f->pn && f->served == 0);
		f->t_backlog = s->c.now_ps;
	} else {
		fq_settle_queue(s, port);
	}
}

/* fabric.series_interval: the bytes that came into the port brought up to
 * now, before the rate they come in at changes */
static inline void came_to_now(struct flsim *s, uint32_t port)
{
	struct fl_state *fl = s->fl;
	if (!fl->series)
		return;
	struct fq_came *in = &fl->fq_came[port];
	in->bytes += fl->fq[port].ain * (double)(s->c.now_ps - in->t);
	in->t = s->c.now_ps;
}

/* the port's queue now, read, not settled (settle_queue's arithmetic on a
 * copy) */
static inline double queue_now(const struct flsim *s, const struct fq_port *f)
{
	if (f->backlog == 0 && f->ain <= f->c)
		return 0;
	double b = f->backlog + (f->ain - f->c) * (double)(s->c.now_ps - f->t_backlog);
	return b < FQ_EMPTY ? 0 : b;
}

/* where the egress port's record of ingress port i (of its switch) is
 * kept: in[at - 1] (0: none) */
static inline uint16_t *in_at(const struct flsim *s, const struct fq_port *f, uint32_t i)
{
	return s->fl->in_at + (uint32_t)(f->in_at + i);
}

/* the egress port's record of what comes in from an ingress port (of its
 * switch) */
static inline struct fq_in *in_of(const struct flsim *s, struct fq_port *f, uint32_t ingress)
{
	FAB_ASSERT(s->c.topo->ports[ingress].node == s->c.topo->ports[f - s->fl->fq].node);
	uint16_t *at = in_at(s, f, ingress);
	if (*at)
		return &f->in[*at - 1];
	if (f->nin == f->cap_in) {
		f->cap_in = f->cap_in ? 2 * f->cap_in : 4;
		f->in = fab_xrealloc(f->in, f->cap_in, sizeof *f->in);
	}
	f->in[f->nin] = (struct fq_in){.port = ingress};
	*at = (uint16_t)(f->nin + 1);
	return &f->in[f->nin++];
}

/* whether refreshing the switch port would change nothing: an idle queue
 * that stays so, with nothing waiting, due or to pass on, whose scale is
 * 1 already, in a switch that holds no pause (whose check a refresh would
 * bring forward) */
static inline bool refresh_moot(const struct flsim *s, uint32_t port)
{
	const struct fl_state *fl = s->fl;
	const struct fq_port *f = &fl->fq[port];
	return f->backlog == 0 && f->ain <= f->c && !f->pn && !f->nchg && !f->marking && f->scale_sent == 1 &&
		fab_timers_at(&fl->timers, port) == FAB_TIME_NEVER &&
		fab_timers_at(&fl->timers, fl->tm_mark + port) == FAB_TIME_NEVER &&
		(!fl->pfc || f->sw == UINT32_MAX || !fl->pfc_holding[f->sw]);
}

/* A last hop (a switch's port that faces the receiving NIC) passes no
 * transfer's rate on, so it keeps no transfer's rates: only their sum, and
 * with PFC their sums by ingress port.  A change of rates into it is the
 * change of that sum, one for all the transfers a port upstream moves at
 * once (send_last), and what leaves moves by as much when the bytes that
 * came with it leave.  DCQCN's marks there are drawn on the rate the
 * transfer was last sent to it at (cc_tick). */

/* the bytes from ingress port `ingress` at the last hop `port` moved by d:
 * those coming in (LAST_IN), those now leaving (LAST_OUT), or both */
enum { LAST_IN = 1, LAST_OUT = 2 };

static inline void last_moved(struct flsim *s, uint32_t port, uint32_t ingress, double d, unsigned views)
{
	struct fl_state *fl = s->fl;
	struct fq_port *f = &fl->fq[port];
	if (fl->pfc) {
		struct fq_in *in = in_of(s, f, ingress);
		if (views & LAST_IN)
			in->rate = FAB_MAX(in->rate + d, 0.0);
		if (views & LAST_OUT)
			in->out = FAB_MAX(in->out + d, 0.0);
	}
	if (views & LAST_IN)
		f->ain = FAB_MAX(f->ain + d, 0.0);
	if (views & LAST_OUT)
		f->aout = FAB_MAX(f->aout + d, 0.0);
}

/* the hooks of fifo's table (queue.h), which dcqcn's shares */
void fq_init(struct flsim *s);
void fq_free(struct flsim *s);
void fq_caps(struct flsim *s);
void fq_rest(struct flsim *s);
bool fq_idle(const struct flsim *s);
void fq_restart(struct flsim *s);
void fq_start(struct flsim *s, uint32_t id, struct fl_qp *q);
void fq_stop(struct flsim *s, uint32_t id, struct fl_qp *q);
bool fq_impulse(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
bool fq_sent(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
void fq_nics(struct flsim *s);
void fq_refresh(struct flsim *s);
void fq_event(struct flsim *s, const struct fab_ev *ev);
void fq_timer(struct flsim *s, uint32_t i);
void fq_port_rate(struct flsim *s, uint32_t port, double r);
double fq_port_sent(const struct flsim *s, uint32_t port, double *queue);
void fq_port_pfc(const struct flsim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff);

/* the source sends queue pair id at r (bytes per ps) from now */
void fq_source_rate(struct flsim *s, uint32_t id, double r);

/* fifo.c */
void fq_out_due(struct flsim *s, uint32_t port); /* the head of what waits in its queue: when */
void fq_pend_push(struct flsim *s, uint32_t port, uint32_t qp, uint32_t hop, double rate);

/* fifo_dcqcn.c */
void fq_cc_start(struct flsim *s, uint32_t id);             /* queue pair id sends */
void fq_cc_share(struct flsim *s, uint32_t port, double c); /* NIC port's rate c, shared */
void fq_cc_tick(struct flsim *s, uint32_t id);
void fq_cc_notify(struct flsim *s, uint32_t id);
void fq_cc_timer(struct flsim *s, uint32_t id);
void fq_mark_watch(struct flsim *s, uint32_t port, double c);

/* fifo_pfc.c */
void fq_pfc_init(struct flsim *s);
void fq_pfc_free(struct flsim *s);
void fq_pfc_watch(struct flsim *s, uint32_t port);
void fq_pfc_checks(struct flsim *s);
void fq_pfc_check(struct flsim *s, uint32_t node); /* the switch at node */
void fq_in_settle(const struct flsim *s, uint32_t port, double b0, double dt);
void fq_in_empty(const struct flsim *s, struct fq_port *f);

/* fifo_tok.c */
void fq_tok_leave(struct flsim *s, uint32_t i, fab_time_ps t);
void fq_tok_arrive(struct flsim *s, uint32_t i);
void fq_tok_send(struct flsim *s, uint32_t id, uint8_t kind, uint8_t upto, uint32_t flow, uint32_t cookie);

/* the table entries fifo and dcqcn share (each adds its name, meaning and
 * rest, dcqcn its own flow_done and qp_rate_bps) */
#define FQ_QUEUE_OPS                                                                                                   \
	.init = fq_init, .free = fq_free, .caps = fq_caps, .start = fq_start, .stop = fq_stop, .impulse = fq_impulse,  \
	.sent = fq_sent, .rates = fq_nics, .refresh = fq_refresh, .event = fq_event, .timer = fq_timer,                \
	.port_rate = fq_port_rate, .port_sent = fq_port_sent, .port_pfc = fq_port_pfc

#endif
