/*
 * flow_int.h - the flow engine's state, shared by the engine (flow.c:
 * transfers, completions, the run loop; arena.c) and its queue models
 * (queue.h: fair.c, fair shares; fifo.c and beside it, fluid FIFO queues,
 * DCQCN and PFC), and the helpers of the engine's that the models call.
 */
#ifndef FAB_FLOW_INT_H
#define FAB_FLOW_INT_H

#include "maxmin.h"
#include "../base/rng.h"
#include "../base/timers.h"
#include "../cc/cc.h"
#include "../sim/engine.h"

#define FL_MAX_PATH 48 /* forward and ACK ports together */

struct fl_msg {
	fab_bytes bytes;
	uint32_t flow, cookie;
};

/* a queue pair as the flow engine sees it */
/* (what a change of rate or a token crossing its path reads, in the first
 * 64 bytes) */
struct fl_qp {
	/* what a recomputation reads of every transfer in the component: the
	 * first cache line */
	uint32_t *path, *pos; /* egress ports; index in each port's list (fifo: NULL until fl_rates_of) */
	double rem, rate;     /* payload bytes left of the head message; bytes per ps */
	fab_time_ps t_last;   /* rem is as of then */
	uint8_t npath, nfwd;  /* path[0 .. nfwd): data; path[nfwd .. npath): its ACKs */
	bool routed : 1, active : 1;
	bool acks_wait : 1; /* its ACKs have the data's priority (fabric.control_priority): they wait in its queues */
	bool fluid_cc : 1;  /* its transport's queue pairs run the fluid DCQCN (flow.queues dcqcn) */
	bool flow_msgs : 1; /* its messages are a flow's (a workload's have none) */
	uint32_t stamp;     /* component search */
	uint32_t local;     /* index in the component */
	uint32_t qh;        /* FIFO: q[qh .. qn) (FL_Q_FIRST long: the arena's; longer: the heap's) */
	double *fh;         /* flow.queues fifo, per forward hop: rate in, rate of its bytes
			     * now leaving, rate last sent on (3 x nfwd; unused at the last hop,
			     * which keeps only sums), then per hop when the last change sent
			     * to it is due (nfwd; in pos's allocation) */
	struct fl_cc *cc;   /* flow.queues dcqcn: its congestion control (NULL until it sends) */
	uint32_t qn, qcap;
	struct fl_msg *q;
	fab_time_ps tail_ps; /* last byte leaves the source -> reaches the destination */
	fab_time_ps ack_ps;  /* and its ACK back */
	double next_rate;    /* the rate, kept across a change of message */
	uint64_t rr;         /* its place in its NIC's round robin (order of activation) */
	uint32_t behind;     /* transfers its NIC serves after it */
	uint32_t crowd;      /* the most transfers its NIC has had while it was active */
	double nic_sum;      /* the rate of the transfers in its NIC's round robin */
	double sent;         /* payload bytes of its whole messages that have left its NIC (fl_books) */
	double series_mark;  /* fabric.series_interval, fair shares: its bytes sent as of the last sample */
	uint32_t bott;       /* flow.solve local: the port it froze at in its last solve (UINT32_MAX: none) */
};

#define FL_Q_FIRST 1

/* flow.queues fifo: what EV_FQ_IN and EV_FQ_MARK carry (fifo_rate.c,
 * fifo_tok.c) */
struct fq_rec {
	uint32_t qp, hop;
	double rate;           /* EV_FQ_IN; a token's bytes riding it (an impulse: fq_impulse) */
	uint32_t flow, cookie; /* EV_FQ_MARK: a message's last byte */
	uint8_t kind, upto;    /* EV_FQ_MARK: TOK_DATA or TOK_NOTE (it waits at forward hops before upto) */
	uint32_t next;         /* free: the next free record; EV_FQ_IN: the next change of its batch (or NO_POS) */
};

/* flow.queues dcqcn: a queue pair's DCQCN reaction point, fed ECN marks
 * drawn from the depth of the queues on its path (fifo_dcqcn.c) */
struct fl_cc {
	const struct fab_cc_ops *ops;
	double cap;            /* its rate as payload bytes per ps */
	fab_time_ps tick_ps;   /* the next feedback window's end (FAB_TIME_NEVER: not ticking) */
	fab_time_ps win_ps;    /* the length of the window that ends then */
	fab_time_ps last_note; /* CNPs: the last one sent (at most one an interval) */
	bool quiet;            /* its windows go unseen (tick_ps: the next) until a queue on its path can mark */
	bool noted;
	bool retired; /* its flow has finished: its state is seen no more (fq_retire) */
	/* notifications that reached it while a flow's message was at its
	 * head, not yet in that flow's count: fl_books adds them as the
	 * message leaves, dcqcn_rest when the run stops (counted here, the
	 * notification reads neither the message nor the flow) */
	uint32_t cnps;
	struct fab_rng rng;
	_Alignas(16) uint8_t st[]; /* the algorithm's state: ops->state_size bytes */
};

struct fl_port {
	uint32_t *qp, *hop; /* active transfers crossing it, and which hop of theirs */
	uint32_t n, cap;
	double payload_per_ps;
	double ack_load;   /* ACKs of transfers that cross it, bytes per ps */
	double ack_solved; /* flow.solve local: ack_load when its shares were last solved */
	uint32_t stamp, local;
	bool dirty;
} __attribute__((aligned(64))); /* one cache line a port */

/* a port as the flow engine keeps it: the rate it runs at now (faults
 * change it) and the counters it reports */
struct fl_link {
	fab_rate_bps rate_bps;
	fab_time_ps delay_ps;
	fab_time_ps data_hop_ps; /* delay_ps and a data packet's serialisation (fl_link_rate) */
	fab_time_ps ack_hop_ps;  /* delay_ps and an ACK's */
	uint32_t peer;
	bool is_switch;
	struct fab_port_stats st;
};

#define NO_POS UINT32_MAX
/* the most transfers a NIC's round robin is staggered for (flow.c) */
#define RR_MAX 64

/* Events due a fixed delay after they are scheduled (a hop's latency, a
 * feedback window), in a FIFO per delay: they come due in the order they
 * were scheduled, so a FIFO is all the ordering they need, where the event
 * queue's heap would sift each in and out.  Ties at one time go in the
 * order of scheduling, across the lines (seq); a delay beyond the
 * FL_LINES first goes to the event queue.  The lines with a head are kept
 * in the order their heads are due (line_t, line_s): a line whose head was
 * taken moves back past those due before its next.  Measured on HPCC's
 * runs, against a scan of the heads at every take: 2.8% fewer instructions on
 * incast, 2.0% on FB_Hadoop; a tournament tree saved 0.8% on incast and cost
 * 1.2% on FB_Hadoop, the heads in a struct fab_timers cost 4% more. */
#define FL_LINES 16

struct fl_lev {
	fab_time_ps t;
	uint64_t seq;
	uint32_t type, arg;
};

struct fl_line {
	fab_time_ps delay;
	struct fl_lev *v; /* ring: v[(head + i) % cap], i < n */
	uint32_t head, n, cap;
};

/* ports waiting for something, each once (its own flag says so), and when
 * the first of them joined */
struct fl_due {
	uint32_t *v, n, cap;
	fab_time_ps since;
};

struct fl_ser {
	double tx, mark;
	uint64_t pause_tx, pause_rx;
};

/* Blocks that live as long as the engine (each queue pair's path, its
 * first message FIFO, its rates block, its congestion control), carved in order from
 * large zeroed chunks and freed with them: a queue pair cost three
 * allocations and three frees (2.5% of the instructions of FB_Hadoop's
 * fluid run, the whole command), and its blocks now lie together. */
struct fl_arena {
	char *cur;
	size_t left;
	void **chunks;
	size_t n, cap;
};

struct fl_queue_ops;

/* flow.batch_large applies while recomputations re-solve this many
 * transfers at once */
#define FL_LARGE_COMPONENT 256u
/* flow.solve auto: local from this many NICs (at 1,024 GPUs a
 * mixture-of-experts step's all-to-alls reach most of the fabric and
 * local took 14.9 s where component took 12.8; from 4,096 local was as
 * fast or 2x faster: doc/flow.md) */
#define FL_SOLVE_AUTO 2
#define FL_SOLVE_LOCAL_NICS 4096u

struct fl_state {
	const struct fl_queue_ops *ops; /* its queue model (flow.queues: queue.h) */
	struct fl_arena arena;
	/* When each queue pair's head message's last byte leaves, a timer per
	 * queue pair id (ties: in the order the times were set): a new rate
	 * moves it instead of leaving a stale event behind (a tree's
	 * recomputations would bury the event queue). */
	struct fab_timers done;
	struct fl_qp *qps;
	uint32_t cap_qps;
	struct fl_port *ports;
	struct fl_due dirty; /* ports whose rates are to be solved again (fifo: NICs) */
	uint32_t stamp;
	uint64_t rr_next;
	uint64_t *rrkey; /* fl_rank_nic scratch */
	uint32_t cap_rr;
	struct fab_maxmin mm;
	/* component scratch */
	uint32_t *cports, *cqps, *off, *idx;
	double *ccap, *crate;
	double ack_frac;      /* ACK wire bytes per data wire byte */
	fab_time_ps batch_ps; /* flow.batch, or longer while aggregated operations hold it (fab_sim_flow_batch) */
	fab_time_ps hold_ps;  /* the longest hold's */
	uint32_t holds;
	fab_time_ps sample_at; /* the time series' next rows (FAB_TIME_NEVER: none) */
	size_t cap_cp, cap_cq, cap_ci;
	/* flow.solve local (fair.c): per port of the problem, the load, the
	 * largest rate, the largest of those that froze there; per transfer
	 * its link of freezing; the transfers that started since the last
	 * solve */
	double *pload, *pmax, *plvl;
	uint32_t *cbott, *seed;
	size_t cap_pl, cap_cb, cap_seed;
	uint32_t nseed;
	uint64_t recomputes, comp_qps;
	uint32_t last_comp; /* transfers the last recomputation re-solved (flow.queues fair) */
	/* flow.queues: fifo and dcqcn (fifo.c and the fifo_*.c) */
	bool cc;       /* flow.queues: dcqcn, where DCQCN runs (fab_flow_runs_dcqcn) */
	bool *cc_done; /* its NIC shares' scratch */
	uint32_t cap_cc_done;
	bool urgent;        /* a NIC has a new transfer: its rates now, flow.batch or not */
	double tol;         /* a port's scale moves in steps of this (fifo_rate.c: refresh) */
	struct fq_port *fq; /* per port */
	/* fabric.series_interval: per port, the payload bytes that came in as
	 * of t (what it sent: those less its queue) */
	struct fq_came {
		double bytes;
		fab_time_ps t;
	} * fq_came;
	struct fq_rec *rec; /* what EV_FQ_IN and EV_FQ_MARK carry; a free list */
	uint32_t nrec, cap_rec, free_rec;
	struct fl_due touch; /* ports to refresh at the end of the instant */
	struct fl_line lines[FL_LINES];
	fab_time_ps line_t[FL_LINES]; /* each line's head: when due (FAB_TIME_NEVER: empty) */
	uint64_t line_s[FL_LINES];    /* and its order among those due then */
	uint32_t nlines;
	uint8_t line_order[FL_LINES]; /* the lines with a head, first due first */
	uint32_t nbusy;               /* how many */
	uint8_t line_of[64];          /* a delay's line + 1 by a hash of the delay (0: look it up) */
	uint64_t line_seq;
	/* when a port's queue empties (items 0 .. nports - 1), the head of
	 * what waits in it leaves (tm_out + port), a switch's thresholds are
	 * checked (tm_pfc + switch index), a port's queue grows past ECN's
	 * kmin (tm_mark + port), a queue pair's congestion control's timer is
	 * due (tm_cc + queue pair): fq_timer */
	struct fab_timers timers;
	uint32_t tm_out, tm_pfc, tm_mark, tm_cc;
	/* flow.queues dcqcn with PFC (fifo_pfc.c): per switch, how many of its
	 * ingress ports hold their upstream paused (its next check: its timer,
	 * tm_pfc); scratch for a check */
	bool pfc;
	uint32_t *pfc_holding;
	uint32_t *pfc_node;          /* switch index -> node */
	fab_time_ps *pfc_moved;      /* when its pauses' rates were last set */
	uint32_t *pfc_due, npfc_due; /* switches to check at the end of the instant */
	bool *pfc_due_flag;
	fab_time_ps *pfc_last; /* its last check (FAB_TIME_NEVER: none yet) */
	double *pfc_aside;     /* the buffer it sets aside: its ports' headroom and reserve */
	double *pfc_scratch;
	uint16_t *in_at; /* the egress ports' records by ingress port, each port's nports of them */
	/* a last hop's change of rate in the batch being filled (fifo_rate.c:
	 * send_last): its record, and the batch's stamp then */
	uint32_t *agg_rec;
	uint64_t *agg_stamp;
	uint64_t batch_stamp;
	/* fabric.series_interval: per port, payload bytes sent (fair shares:
	 * those its transfers' sources sent; fifo: what left its queue) and
	 * PAUSE episodes as of the last sample */
	struct fl_ser *ser;
	bool series;      /* (set before fq_init) */
	double pfc_gate;  /* a queue this long has its switch checked */
	double pfc_frame; /* frame bytes a payload byte */
};

/* The flow engine: the shared state first (engine.h), then its own. */
struct flsim {
	struct fab_sim c;
	struct fl_link *ports;
	struct fl_state *fl;
};

enum fl_ev_type {
	EV_FL_DELIVER = SIM_EV_ENGINE, /* obj sim_flow (its ACK is back) or NULL (arg: cookie delivered) */
	EV_FQ_IN,                      /* flow.queues fifo: arg record: a transfer's rate into a switch port changes */
	EV_FQ_MARK,                    /* arg record: a message's last byte reaches a switch port */
	EV_FQ_CC_TICK,                 /* arg queue pair: flow.queues dcqcn, a feedback window ends */
	EV_FQ_CC_NOTIFY,               /* arg queue pair: a mark's notification reaches the sender */
};

/* port joins list d (once: its flag says so) at now */
static inline void fl_due_add(struct fl_due *d, bool *flag, uint32_t port, fab_time_ps now)
{
	if (*flag)
		return;
	*flag = true;
	if (!d->n)
		d->since = now;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->v = fab_xrealloc(d->v, d->cap, sizeof *d->v);
	}
	d->v[d->n++] = port;
}

/* the port's transfers are due new rates (fl->dirty: queue.h, rates) */
static inline void fl_mark_dirty(struct flsim *s, uint32_t port)
{
	fl_due_add(&s->fl->dirty, &s->fl->ports[port].dirty, port, s->c.now_ps);
}

/* completions (fl->done): the head message of queue pair id now ends at
 * t, or at no known time, or whether its end is set */
static inline void fl_done_set(struct fl_state *fl, uint32_t id, fab_time_ps t)
{
	fab_timers_requeue(&fl->done, id, t);
}

static inline void fl_done_clear(struct fl_state *fl, uint32_t id)
{
	fab_timers_set(&fl->done, id, FAB_TIME_NEVER);
}

static inline bool fl_done_due(const struct fl_state *fl, uint32_t id)
{
	return fab_timers_at(&fl->done, id) != FAB_TIME_NEVER;
}

/* flow.c: the ports' lists of their transfers (fl_port.qp), the NIC's
 * round robin, the books */
void fl_member_add(struct flsim *s, uint32_t id, struct fl_qp *q, uint32_t h);
void fl_member_remove(struct flsim *s, struct fl_qp *q, uint32_t h);
fab_time_ps fl_finish_at(const struct flsim *s, const struct fl_qp *q);
void fl_rank_nic(struct flsim *s, uint32_t port, double sum);
void fl_books(struct flsim *s, struct fl_qp *q, const struct fl_msg *m);

/* lines.c: an event of the engine's own, due at t (a delay line's, or the
 * event queue's) */
void fl_push(struct flsim *s, fab_time_ps t, uint32_t type, uint32_t arg);
void fl_line_pop(struct fl_state *fl, struct fab_ev *ev); /* takes the first line's head */
void fl_lines_free(struct fl_state *fl);

/* when the first line's head is due (FAB_TIME_NEVER: none) */
static inline fab_time_ps fl_line_next(const struct fl_state *fl)
{
	return fl->nbusy ? fl->line_t[fl->line_order[0]] : FAB_TIME_NEVER;
}

/* sample.c: the time series' rows, now */
void fl_sample(struct flsim *s);
/* the payload bytes queue pair q has sent: its whole messages, and of the
 * one in progress what has left */
double fl_qp_sent(const struct flsim *s, const struct fl_qp *q);

/* arena.c: `bytes` zeroed, 16-aligned, from fl->arena: freed with the
 * engine (fl_arena_free: every block at once) */
void *fl_arena_alloc(struct fl_state *fl, size_t bytes);
void fl_arena_free(struct fl_arena *a);

#endif
