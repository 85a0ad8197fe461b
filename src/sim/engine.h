/*
 * engine.h - what every engine behind sim.h keeps and implements.
 *
 * sim.h is the interface the workload, the output and the facade see.  An
 * engine (the packet engine in src/packet/, the flow engine in src/flow/)
 * embeds struct fab_sim as the first member of its own state and fills in a
 * struct sim_engine_ops; core.c does everything the engines do alike: the
 * scenario's flows and the connections (queue pairs) with their 5-tuple
 * hashes and ECMP paths, NVLink transfers, the workload's timers, holds and
 * hooks, faults' scheduling, the totals and the stats accessors.  Neither
 * engine includes the other; the choice between them is made above both
 * (src/engines.c).
 */
#ifndef FAB_SIM_ENGINE_H
#define FAB_SIM_ENGINE_H

#include "../base/rng.h"
#include "eq.h"
#include "sim.h"

/* Events every engine sees; an engine numbers its own from SIM_EV_ENGINE. */
enum sim_ev_type {
	EV_FLOW_START, /* obj sim_flow */
	EV_USER,       /* arg: the workload's timer argument */
	EV_LOCAL,      /* arg: cookie of an intra-server transfer that arrived */
	EV_FAULT,      /* obj fault, arg 0 start / 1 end / 2 routing converged */
	SIM_EV_ENGINE = 16,
};

/* A flow of the scenario: its queue pairs are first_qp .. first_qp + nqps. */
struct sim_flow {
	struct fab_sim_flow spec;
	uint32_t first_qp, nqps, qps_done;
	uint64_t start_key;       /* its start event's (eq.h) */
	struct fab_flow_stats st; /* its delivered_bytes: the flow engine's */
	uint64_t series_mark;
};

#define NO_FLOW UINT32_MAX

/* A connection (queue pair) as every engine names it: its ends, priority
 * and 5-tuple.  An engine's own queue-pair state embeds it first. */
struct sim_conn {
	uint32_t id;
	uint32_t src_nic, dst_nic;
	uint16_t sport;
	uint8_t prio;
	int8_t transport; /* enum fab_transport_kind: what it speaks */
	bool used;        /* it has carried data */
	uint64_t hash_fwd, hash_rev;
};

struct fab_sim;

struct sim_engine_ops {
	const char *name;
	/* a new zeroed queue pair, the engine's struct with struct sim_conn
	 * first (NULL: a bare struct sim_conn, from the core's slabs) */
	struct sim_conn *(*conn_alloc)(struct fab_sim *s, int transport);
	/* a connection was opened (its struct sim_conn is filled in) */
	void (*conn_init)(struct fab_sim *s, struct sim_conn *c);
	/* a message of `bytes` on c; flow NO_FLOW: a posted one, `cookie` back */
	void (*post)(struct fab_sim *s, struct sim_conn *c, fab_bytes bytes, uint32_t flow, uint32_t cookie);
	/* the server model changed (PCIe caps NICs' rates) */
	void (*server_changed)(struct fab_sim *s);
	/* optional: every queue pair's congestion control back to its start,
	 * the random draws' streams started again (fab_sim_rest) */
	void (*rest)(struct fab_sim *s);
	int (*run)(struct fab_sim *s, fab_time_ps end_ps);
	/* frees the engine's own state, then sim_core_free(s) and s */
	void (*free)(struct fab_sim *s);
	/* per port: counters, the rate it runs at now, its PFC headroom */
	void (*port_stats)(const struct fab_sim *s, struct fab_port_stats *out);
	fab_rate_bps (*port_rate)(const struct fab_sim *s, uint32_t port);
	/* whether a port's link is down (NULL: links never go down) */
	bool (*port_down)(const struct fab_sim *s, uint32_t port);
	/* a switch port's PFC headroom and pause threshold on an empty switch
	 * (NULL: the engine has no PFC) */
	void (*port_pfc)(const struct fab_sim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff);
	void (*engine_stats)(const struct fab_sim *s, uint64_t *recomputes, double *mean_component);
	/* optional: an aggregated operation holds (+1) or lets go of (-1) a
	 * coarser batch of rate changes, at least ps (fab_sim_flow_batch) */
	void (*batch)(struct fab_sim *s, int hold, fab_time_ps ps);
	/* a queue pair's forward path as the engine keeps it, at most max
	 * ports; UINT32_MAX where it keeps none (NULL: never).  Only for an
	 * engine whose routes never change: the path sim_path gives. */
	uint32_t (*kept_path)(const struct fab_sim *s, uint32_t qp, uint32_t *ports, uint32_t max);
};

struct fab_sim {
	const struct sim_engine_ops *ops;
	const struct fab_topo *topo;
	struct fab_fabric_params fp;
	struct fab_wire wire;                       /* the fabric's transport's framing, as the scenario set it */
	struct fab_wire wires[FAB_TRANSPORT_COUNT]; /* every transport's: the fabric's as set, the others' own */
	uint64_t seed;
	struct fab_eq eq;
	fab_time_ps now_ps;
	uint32_t threads_ran;  /* the packet engine's run: the threads it started (0: it ran whole) */
	uint64_t *ecmp_seed;   /* by switch index */
	uint32_t *next_si;     /* by port: the switch index of the node at its link's other end (UINT32_MAX: a NIC) */
	struct sim_conn **qps; /* by id; each allocated once, never moved */
	uint32_t nqps, cap_qps;
	struct sim_conn **conn_slabs; /* without ops->conn_alloc: SIM_CONN_SLAB each */
	uint32_t nconn_slabs;
	struct fab_sim_hooks hooks;
	struct fab_server_params server;
	uint64_t holds;           /* outstanding workload activity */
	uint64_t flows_failed;    /* flows with a failed queue pair: they never finish */
	fab_time_ps *nvl_free_ps; /* per GPU: when its NVLink egress is free */
	struct fab_fault **faults;
	uint32_t nfaults;
	/* the flows, flow_stride bytes apart (sim_flow_at), and the bytes the
	 * packet engine's receivers have accepted of each, rx_stride apart
	 * (sim_flow_rx).  Packed in one thread; on several (fp.threads), a
	 * flow's sender fields and its receiver count are FAB_GAP bytes from
	 * anything another partition writes. */
	uint8_t *flow_mem;
	fab_bytes *flow_rx;
	size_t flow_stride, rx_stride; /* rx_stride: in fab_bytes */
	uint32_t nflows;
	/* flow starts wait outside the event queue, in (time, sequence) order,
	 * one at a time in it: a large flow list does not deepen the heap */
	uint32_t *start_order, next_start, nstarts; /* nstarts: start_order's length */
	struct fab_sim_totals tot;
	struct fab_series_row *series;
	size_t nseries, cap_series;
	struct fab_flow_series_row *fseries;
	size_t nfseries, cap_fseries;
	/* the rows of the last instant kept (from ser_prev, fser_prev) and of
	 * the one being taken (from ser_mark, fser_mark); instants in a row
	 * where nothing moved (sim_series_instant) */
	size_t ser_prev, fser_prev, ser_mark, fser_mark;
	uint32_t ser_still;
	bool ser_any;
	fab_progress_fn progress;
	void *progress_ctx;
	struct fab_sim_ranks ranks; /* n 0: one process */
	/* plain arrays handed out by the stats accessors */
	struct fab_port_stats *port_stats_out;
	struct fab_flow_stats *flow_stats_out;
	struct fab_sim_flow *flow_specs_out;
	struct {
		void *p;
		uint64_t events; /* the run's events and end when it was last asked for */
		fab_time_ps end_ps;
	} memo[FAB_MEMO_SLOTS]; /* fab_sim_memo */
};

static inline struct sim_flow *sim_flow_at(const struct fab_sim *s, uint32_t i)
{
	return (struct sim_flow *)(s->flow_mem + (size_t)i * s->flow_stride);
}

static inline uint32_t sim_flow_index(const struct fab_sim *s, const struct sim_flow *f)
{
	return (uint32_t)(((const uint8_t *)f - s->flow_mem) / s->flow_stride);
}

static inline fab_bytes *sim_flow_rx(const struct fab_sim *s, uint32_t i)
{
	return &s->flow_rx[(size_t)i * s->rx_stride];
}

/* in-order bytes the flow's receiver has accepted */
static inline fab_bytes sim_flow_delivered(const struct fab_sim *s, uint32_t i)
{
	return sim_flow_at(s, i)->st.delivered_bytes + *sim_flow_rx(s, i);
}

/* core.c */
/* Fills the shared state: flows checked and copied, their queue pairs
 * opened (ops->conn_init on each), their starts scheduled, the switches'
 * ECMP seeds.  s is the engine's zeroed state; false and err set on a bad
 * flow (the caller frees s). */
bool sim_core_init(struct fab_sim *s, const struct sim_engine_ops *ops, const struct fab_topo *topo,
		   const struct fab_fabric_params *fp, uint64_t seed, const struct fab_sim_flow *flows, size_t nflows,
		   struct fab_err *err);
/* frees the shared state (the connections included), not s itself */
void sim_core_free(struct fab_sim *s);
/* transport: enum fab_transport_kind, or -1 for the fabric's; key: what
 * its UDP source port is drawn from (NULL: the order it is opened in) */
struct sim_conn *sim_conn_open(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport,
			       const uint64_t *key);
/* what a NIC whose port runs at port_bps can send at: that, or its PCIe
 * link's rate if slower */
/* the equal-cost port (of cnt) switch si gives a packet of 5-tuple hash h */
static inline uint32_t sim_ecmp_pick(const struct fab_sim *s, uint64_t h, uint32_t si, uint32_t cnt)
{
	if (s->fp.ecmp_hash == FAB_ECMP_XOR)
		return (uint32_t)((h ^ s->ecmp_seed[si]) % cnt);
	return (uint32_t)(fab_mix64(h ^ s->ecmp_seed[si]) % cnt);
}

static inline double sim_pcie_cap(const struct fab_sim *s, double port_bps)
{
	double pcie = (double)s->server.pcie_bps;
	return pcie > 0 && pcie < port_bps ? pcie : port_bps;
}
/* the same for NIC `nic`, at the rate its port runs at now */
double sim_nic_line_bps(const struct fab_sim *s, uint32_t nic);
/* the next flow in start_order into the event queue, with its reserved key */
void sim_push_next_start(struct fab_sim *s);
/* a flow's start time has come: its shares posted on its queue pairs */
void sim_flow_start(struct fab_sim *s, struct sim_flow *f);
/* fabric.series_interval: room for the next row of a switch port's, and of
 * a flow's, time series */
struct fab_series_row *sim_series_row(struct fab_sim *s);
struct fab_flow_series_row *sim_flow_series_row(struct fab_sim *s);
/* the rows of an instant are all taken: of three or more instants in a
 * row where nothing moved (every count 0, every queue and rate as the
 * instant before), only the first and the last are kept */
void sim_series_instant(struct fab_sim *s);
/* the PAUSE frames a port sent and received, all priorities */
void sim_port_pauses(const struct fab_port_stats *st, uint64_t *tx, uint64_t *rx);
/* the egress ports from src_nic to dst_nic for a 5-tuple hash, as the
 * switches forward it now (ECMP by hash and each switch's seed) */
uint32_t sim_path(const struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint64_t hash, uint32_t *ports,
		  uint32_t max);
/* a flow's bytes over its k-th queue pair (split evenly, the first ones
 * taking the remainder) */
static inline fab_bytes sim_flow_share(const struct sim_flow *f, uint32_t k)
{
	return f->spec.bytes / f->nqps + (k < f->spec.bytes % f->nqps ? 1 : 0);
}
/* one of a flow's queue pairs finished its share */
static inline void sim_flow_qp_done(struct fab_sim *s, struct sim_flow *f)
{
	if (++f->qps_done == f->nqps) {
		f->st.finish_ps = s->now_ps;
		s->tot.flows_done++;
	}
}

/* one of a flow's queue pairs failed (retries exceeded): it never finishes */
static inline void sim_flow_qp_failed(struct fab_sim *s, struct sim_flow *f)
{
	if (f->st.qp_errors++ == 0)
		s->flows_failed++;
}

/* something is left to run: flows neither finished nor failed, or the
 * workload's holds */
static inline bool sim_busy(const struct fab_sim *s)
{
	return s->tot.flows_done + s->flows_failed < s->nflows || s->holds;
}

/* What every engine's loop does alike: the workload's events (its timers,
 * NVLink arrivals; false for any other event), and the progress report
 * every 2^20 events. */
static inline bool sim_workload_event(struct fab_sim *s, const struct fab_ev *ev)
{
	if (ev->type == EV_USER && s->hooks.timer)
		s->hooks.timer(s->hooks.ctx, ev->arg);
	else if (ev->type == EV_LOCAL && s->hooks.delivered)
		s->hooks.delivered(s->hooks.ctx, ev->arg);
	return ev->type == EV_USER || ev->type == EV_LOCAL;
}

static inline void sim_report_progress(struct fab_sim *s, uint64_t *next)
{
	if (s->progress && s->eq.popped >= *next) {
		*next += 1u << 20;
		s->progress(s->progress_ctx, s->now_ps, s->eq.popped);
	}
}

#endif
