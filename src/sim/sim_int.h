/*
 * sim_int.h - the packet engine's internal state, shared by its modules:
 * sim.c (event loop, links, switch queues, shared buffer, PFC, ECN),
 * nic.c (NIC egress scheduling, rate limiting, NIC-side PAUSE) and the
 * transports behind transport.h (roce.c).
 */
#ifndef FAB_SIM_INT_H
#define FAB_SIM_INT_H

#include "../base/rng.h"
#include "eq.h"
#include "sim.h"

enum pkt_kind { PKT_DATA, PKT_ACK, PKT_NAK, PKT_CNP, PKT_PFC };

enum ecn_bits { ECN_NOT_ECT = 0, ECN_ECT0 = 2, ECN_CE = 3 };

/* A packet in flight.  Pooled: allocated from slabs, recycled on a free list. */
struct pkt {
	struct pkt *next;     /* queue or free-list link */
	uint32_t qp;          /* queue pair it belongs to */
	uint32_t psn;         /* DATA: packet sequence number; ACK/NAK: next expected */
	uint32_t src_nic, dst_nic;
	uint32_t in_port;     /* switch: the port it arrived on (ingress accounting) */
	uint64_t hash;        /* 5-tuple hash, mixed with each switch's seed for ECMP */
	uint16_t frame_bytes; /* Ethernet frame, FCS included */
	uint16_t payload;     /* RoCE payload bytes (DATA) */
	uint8_t kind;         /* enum pkt_kind */
	uint8_t prio;
	uint8_t ecn;          /* enum ecn_bits */
	uint8_t pfc_mask;     /* PKT_PFC: priorities it carries */
	uint16_t pfc_quanta[FAB_NPRIO];
	fab_time_ps arrive_ps; /* on a wire: when it reaches the peer */
};

/* The egress side of an interface plus, for switch ports, the ingress
 * accounting of what arrives on it. */
struct sim_port {
	uint32_t id, node;
	uint32_t peer;               /* global port id at the other end */
	fab_rate_bps rate_bps;
	fab_time_ps delay_ps;
	bool is_switch;
	bool busy;                   /* serialising a frame */
	uint8_t paused_mask;         /* priorities held by a PAUSE from the peer */
	fab_time_ps paused_until[FAB_NPRIO];
	fab_time_ps paused_since[FAB_NPRIO];
	uint8_t pfc_pending;         /* priorities to put in the next PFC frame */
	uint16_t pfc_quanta[FAB_NPRIO];
	struct pkt *head[FAB_NPRIO], *tail[FAB_NPRIO];
	struct pkt *wire_head, *wire_tail; /* frames on the link toward the peer */
	uint64_t qbytes[FAB_NPRIO];  /* egress queue, frame bytes */
	uint64_t qbytes_total;
	fab_time_ps q_changed_ps;
	/* ingress accounting (switch ports) */
	uint64_t in_bytes[FAB_NPRIO];
	uint8_t xoff_sent;           /* we asked the peer to pause these priorities */
	uint32_t pfc_gen[FAB_NPRIO];
	fab_bytes headroom_bytes;
	uint64_t series_tx_mark, series_wire_mark;
	uint64_t series_drop_mark, series_ecn_mark, series_ptx_mark, series_prx_mark;
	/* faults */
	double loss;                 /* frames sent on this port are lost with this probability */
	bool down;
	fab_time_ps down_since;
	struct fab_rng rng;          /* loss draws */
	fab_time_ps wd_ignore_until[FAB_NPRIO]; /* watchdog: PAUSE ignored until then */
	uint32_t storm_gen;
	struct fab_port_stats st;
};

struct sim_switch {
	uint32_t node;
	uint64_t buffer_used;  /* frame bytes held */
	uint64_t ecmp_seed;
	struct fab_rng rng;    /* ECN marking draws */
	fab_bytes kmin_bytes, kmax_bytes; /* the fabric's, unless a fault changed them */
};

struct sim_qp;

struct sim_nic {
	uint32_t node, port, index;
	struct sim_qp *ready_head[FAB_NPRIO], *ready_tail[FAB_NPRIO];
	/* receive buffer toward the GPU (NIC-side PAUSE) */
	double rx_level_bytes;
	fab_time_ps rx_level_ps;
	uint8_t rx_xoff_sent;
	uint32_t rx_gen;
	/* the GPU's PCIe link feeds its data: the next data packet waits for it */
	fab_time_ps pcie_free_ps;
	bool pcie_wake;            /* an EV_NIC_PCIE is pending */
};

/* A message on a queue pair: its packets end (exclusive) at end_psn. */
struct sim_msg {
	uint32_t end_psn;
	uint16_t last_payload;
	uint32_t flow;   /* owning flow, or NO_FLOW for a posted message */
	uint32_t cookie; /* handed back when delivered (posted messages) */
};

#define NO_FLOW UINT32_MAX

/* A queue pair: a reliable connection between two NICs carrying messages
 * in order.  Flows own theirs; a workload opens its own (one per channel
 * and peer, as collective libraries do) and posts messages on them. */
struct sim_qp {
	uint32_t id;
	uint32_t src_nic, dst_nic;
	uint16_t sport;
	uint8_t prio;
	bool in_ready, wake_pending, rto_armed;
	uint32_t npkts;                 /* packets posted so far */
	struct sim_msg *msgs;
	uint32_t nmsgs, cap_msgs;
	uint32_t smsg, rmsg, amsg;      /* message cursors: sending, receiving, acknowledging */
	uint64_t hash_fwd, hash_rev;
	/* sender */
	uint32_t snd_nxt, snd_una, snd_max;
	fab_time_ps next_send_ps;      /* rate limiter */
	fab_time_ps last_progress_ps;
	uint32_t rto_gen, cc_gen;
	struct fab_dcqcn cc;
	struct sim_qp *ready_next;
	/* receiver */
	uint32_t rcv_nxt, unacked;
	bool nak_sent;
	fab_time_ps last_cnp_ps;
	bool cnp_sent_once;
};

struct sim_flow {
	struct fab_sim_flow spec;
	uint32_t first_qp, nqps, qps_done;
	struct fab_flow_stats st;
	uint64_t series_mark;
};

enum ev_type {
	EV_TX_DONE,      /* obj port: finished serialising */
	EV_ARRIVE,       /* obj port: the first frame on its wire reaches the peer */
	EV_PAUSE_EXPIRE, /* obj port, arg priority */
	EV_PFC_REFRESH,  /* obj port, arg prio | gen << 3 */
	EV_QP_WAKE,      /* obj qp: rate limiter allows the next packet */
	EV_FLOW_START,   /* obj flow */
	EV_RTO,          /* obj qp, arg generation */
	EV_CC_TIMER,     /* obj qp, arg generation */
	EV_NIC_DRAIN,    /* obj nic, arg generation */
	EV_SAMPLE,
	EV_USER,         /* arg: the workload's timer argument */
	EV_LOCAL,        /* arg: cookie of an intra-server transfer that arrived */
	EV_FAULT,        /* obj fault, arg 0 start / 1 end / 2 routing converged */
	EV_STORM,        /* obj port, arg generation: the storming NIC pauses again */
	EV_NIC_PCIE,     /* obj nic: its PCIe link can feed the next data packet */
	EV_FL_DELIVER,   /* flow engine: obj sim_flow (its ACK is back) or NULL (arg: cookie delivered) */
	EV_FQ_IN,        /* flow.queues fifo: arg record: a transfer's rate into a switch port changes */
	EV_FQ_OUT,       /* arg port: the bytes at the head of its queue's changes start leaving */
	EV_FQ_DRAIN,     /* arg port: its queue empties (stale unless the port still expects it) */
	EV_FQ_MARK,      /* arg record: a message's last byte reaches a switch port */
};

struct pkt_slab {
	struct pkt_slab *next;
	struct pkt pkts[4096];
};

struct fl_state;

struct fab_sim {
	const struct fab_topo *topo;
	struct fl_state *fl;            /* the flow engine's state, or NULL: packets */
	struct fab_fabric_params fp;
	uint64_t seed;
	struct fab_eq eq;
	fab_time_ps now_ps;
	struct sim_port *ports;
	struct sim_switch *switches; /* by switch index */
	struct sim_nic *nics;        /* by NIC index */
	struct sim_qp **qps;            /* by id; each allocated once, never moved */
	uint32_t nqps, cap_qps;
	struct fab_sim_hooks hooks;
	struct fab_server_params server;
	uint64_t holds;                 /* outstanding workload activity */
	fab_time_ps *nvl_free_ps;       /* per GPU: when its NVLink egress is free */
	struct fab_fault **faults;
	uint32_t nfaults;
	struct sim_flow *flows;
	uint32_t nflows;
	struct pkt *free_pkts;
	struct pkt_slab *slabs;
	uint64_t live_data_payload;
	struct fab_sim_totals tot;
	struct fab_series_row *series;
	size_t nseries, cap_series;
	struct fab_flow_series_row *fseries;
	size_t nfseries, cap_fseries;
	fab_progress_fn progress;
	void *progress_ctx;
	/* plain arrays handed out by the stats accessors */
	struct fab_port_stats *port_stats_out;
	struct fab_flow_stats *flow_stats_out;
	struct fab_sim_flow *flow_specs_out;
};

/* sim.c */
struct pkt *sim_pkt_alloc(struct fab_sim *s);
void sim_pkt_free(struct fab_sim *s, struct pkt *p);
void sim_port_transmit(struct fab_sim *s, struct sim_port *port, struct pkt *p);
void sim_port_enqueue(struct fab_sim *s, struct sim_port *port, struct pkt *p);
bool sim_port_prio_paused(const struct sim_port *port, unsigned prio, fab_time_ps now);
void sim_port_send_pfc(struct fab_sim *s, struct sim_port *port, unsigned prio, uint16_t quanta);
void sim_port_kick(struct fab_sim *s, struct sim_port *port);

struct sim_qp *sim_qp_new(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio);
void sim_qp_post(struct fab_sim *s, struct sim_qp *qp, fab_bytes bytes, uint32_t flow,
		 uint32_t cookie);

/* What both engines' loops do alike: the workload's events (its timers,
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

/* the egress ports from src_nic to dst_nic for a 5-tuple hash, as the
 * switches forward it now (ECMP by hash and each switch's seed) */
uint32_t sim_path(const struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint64_t hash, uint32_t *ports,
		  uint32_t max);

/* flow.c: the flow-level engine behind the same interface */
void fl_init(struct fab_sim *s);
void fl_set_rates(struct fab_sim *s);
void fl_free(struct fab_sim *s);
void fl_post(struct fab_sim *s, struct sim_qp *sq, fab_bytes bytes, uint32_t flow, uint32_t cookie);
void fl_flow_start(struct fab_sim *s, struct sim_flow *f);
int fl_run(struct fab_sim *s, fab_time_ps end_ps);
void fl_stats(const struct fab_sim *s, uint64_t *recomputes, double *mean_component);

/* nic.c */
void nic_start_tx(struct fab_sim *s, struct sim_nic *nic, struct sim_port *port);
void nic_qp_make_ready(struct fab_sim *s, struct sim_qp *qp);
void nic_on_wake(struct fab_sim *s, struct sim_qp *qp);
void nic_rx_account(struct fab_sim *s, struct sim_nic *nic, const struct pkt *p);
void nic_on_drain(struct fab_sim *s, struct sim_nic *nic, uint32_t gen);
void nic_on_pcie(struct fab_sim *s, struct sim_nic *nic);
double sim_nic_line_bps(const struct fab_sim *s, uint32_t nic);

#endif
