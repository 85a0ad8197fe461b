/*
 * packet_int.h - the packet engine's internal state, shared by its modules
 * (see packet.c for the list).
 */
#ifndef FAB_PACKET_INT_H
#define FAB_PACKET_INT_H

#include "../base/rng.h"
#include "../sim/engine.h"

enum pkt_kind { PKT_DATA, PKT_ACK, PKT_NAK, PKT_NOTIFY, PKT_PFC };

enum ecn_bits { ECN_NOT_ECT = 0, ECN_ECT0 = 2, ECN_CE = 3 };

/* A packet in flight: one cache line.  Pooled: allocated from slabs,
 * recycled on a free list. */
struct pkt {
	struct pkt *next; /* queue or free-list link */
	union {
		struct {
			uint32_t qp;   /* queue pair it belongs to */
			uint32_t psn;  /* DATA: packet sequence number; ACK/NAK: next expected */
			uint64_t hash; /* 5-tuple hash, mixed with each switch's seed for ECMP */
		};
		uint16_t pfc_quanta[FAB_NPRIO]; /* PKT_PFC (which has none of those) */
	};
	uint32_t src_nic, dst_nic;
	uint32_t in_port;     /* switch: the port it arrived on (ingress accounting) */
	uint16_t frame_bytes; /* Ethernet frame, FCS included */
	uint16_t payload;     /* payload bytes (DATA) */
	uint8_t kind;         /* enum pkt_kind */
	uint8_t prio;
	uint8_t ecn;      /* enum ecn_bits */
	uint8_t pfc_mask; /* PKT_PFC: priorities it carries */
	uint32_t tel;     /* its telemetry record (telemetry.c), 0: none */
	/* sent: when it reaches the peer, and its arrival event's key (taken
	 * when it was sent); on a wire behind another, the next frame's */
	fab_time_ps arrive_ps;
	uint64_t key;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct pkt) == 64, "a frame is one cache line");

/* PFC's state on one port (pfc.c): what it was told (PAUSE from the peer)
 * and what it told the peer (XOFF sent for its ingress), the frame it has
 * to send next, the watchdog.  (The bytes each priority holds in the
 * headroom are in the port's struct port_prio.) */
struct pfc_port {
	/* what every frame through the port reads: first */
	uint8_t pending;             /* priorities to put in the next PFC frame */
	uint8_t xoff_sent;           /* we asked the peer to pause these priorities */
	uint8_t shift;               /* dynamic thresholds: this port's */
	bool nic_stalled;            /* NIC port: it is pausing its switch */
	bool nic_pause_off;          /* NIC watchdog: this NIC sends no PAUSE any more */
	fab_bytes headroom_bytes;    /* above XOFF before dropping (mmu.c sizes it) */
	fab_time_ps nic_stall_since; /* since then */
	uint16_t quanta[FAB_NPRIO];
	uint32_t gen[FAB_NPRIO]; /* refresh timers */
	fab_time_ps paused_until[FAB_NPRIO];
	fab_time_ps paused_since[FAB_NPRIO];
	fab_time_ps wd_last_pause[FAB_NPRIO]; /* switch watchdog: the last PAUSE while lossy */
};

/* One priority on a port: its egress queue, the ingress accounting of what
 * arrived on the port, and the counts of its link-level flow control, in
 * one cache line: a frame touches its own priority's line only (the
 * priorities with frames queued are a mask in the port's first line). */
struct port_prio {
	struct pkt *head, *tail;
	uint64_t qbytes;           /* egress queue, frame bytes */
	uint64_t in_bytes;         /* ingress accounting (switch ports, mmu.c) */
	uint64_t hdrm;             /* PFC's dynamic thresholds: bytes held in the headroom */
	int64_t credits;           /* InfiniBand (credit.c): what the peer's buffer can still take */
	uint64_t owed;             /* and what this port freed and owes its peer */
	fab_time_ps blocked_since; /* out of credits since */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct port_prio) == 64, "a priority is one cache line");

/* The egress side of an interface plus, for switch ports, the ingress
 * accounting of what arrives on it.  A frame through a port touches four
 * cache lines of it (the first two, the first of its counters, its
 * priority's) and the wire's line of the port that sent it. */
struct sim_port {
	/* what every frame it sends reads and writes: the first two cache
	 * lines (PFC's and the stats' hot fields lead theirs too) */
	uint32_t id, node;
	uint32_t peer;      /* global port id at the other end */
	uint16_t peer_part; /* a parallel run: the peer's partition */
	bool is_switch;
	bool remote;          /* a parallel run: its peer is another partition's (parallel.c) */
	bool busy;            /* serialising a frame */
	bool tx_new;          /* the kick under way sent a frame (port.c) */
	bool tx_held;         /* its EV_TX_DONE is held out of the event queue (port.c) */
	uint8_t paused_mask;  /* priorities the link-level flow control holds */
	uint8_t dropped_mask; /* priorities it turned lossy (a watchdog): their packets are dropped here */
	uint8_t queued_mask;  /* priorities with frames in their egress queue */
	uint8_t cr_pending;   /* InfiniBand: lanes with a credit update to send (credit.c) */
	bool delay_cut;       /* a delay fault ended: later frames kept behind those on the wire (fault.c) */
	fab_rate_bps rate_bps;
	fab_time_ps delay_ps;
	uint64_t qbytes_total; /* egress queue, frame bytes */
	fab_time_ps q_changed_ps;
	double ecn_scale;    /* its ECN thresholds: the switch's x this (fabric.ecn.ref_rate) */
	fab_time_ps done_ps; /* its EV_TX_DONE's time and key */
	uint64_t done_key;
	uint32_t held_at; /* held: its place in the engine's list */
	uint32_t storm_gen;
	struct pfc_port pfc;
	struct fab_port_stats st __attribute__((aligned(64)));
	struct port_prio pq[FAB_NPRIO];
	uint64_t series_tx_mark, series_wire_mark;
	uint64_t series_drop_mark, series_ecn_mark, series_ptx_mark, series_prx_mark;
	/* the link toward the peer: what the receiving end reads and writes as
	 * frames arrive, a cache line away from what the sender writes (in a
	 * parallel run the peer may be another partition's) */
	char gap_[FAB_GAP];
	struct pkt *wire_head __attribute__((aligned(64))); /* frames on the link */
	struct pkt *wire_tail;
	uint32_t wire_to;               /* = peer */
	uint32_t drop_every, data_seen; /* every drop_every-th data frame sent on this port is lost */
	bool down;
	double loss; /* and frames sent on it with this probability */
	fab_time_ps down_since;
	struct fab_rng rng;  /* loss draws */
	char gap2_[FAB_GAP]; /* and the next port's sender */
} __attribute__((aligned(64)));

struct sim_switch {
	uint32_t node;
	uint64_t buffer_used; /* frame bytes held */
	/* dynamic PFC thresholds: the pool the threshold is a share of */
	uint64_t pfc_shared;              /* lossless bytes beyond the ports' reserves, not in headroom */
	uint64_t pfc_set_aside;           /* every port's headroom and reserves */
	struct fab_rng rng;               /* ECN marking draws */
	fab_bytes kmin_bytes, kmax_bytes; /* the fabric's, unless a fault changed them */
	struct flowlet *flowlets;         /* adaptive routing by flowlets: FLOWLET_SLOTS, by hash */
	char gap_[FAB_GAP];               /* the next switch's state a cache line away: it may be another partition's */
};

/* a flowlet table slot: when its flows last sent a packet, and the port they took */
#define FLOWLET_SLOTS 4096u
struct flowlet {
	fab_time_ps last_ps;
	uint32_t port;
};

struct sim_qp;

struct sim_nic {
	uint32_t node, port, index;
	struct sim_qp *ready_head[FAB_NPRIO], *ready_tail[FAB_NPRIO];
	/* receive buffer toward the GPU (NIC-side PAUSE, pfc.c) */
	double rx_level_bytes;
	fab_time_ps rx_level_ps;
	uint8_t rx_xoff_sent;
	uint32_t rx_gen;
	/* the GPU's PCIe link feeds its data: the next data packet waits for it */
	fab_time_ps pcie_free_ps;
	bool pcie_wake; /* an EV_NIC_PCIE is pending */
};

/* A queue pair as the NIC sees it: a reliable connection between two NICs
 * carrying messages in order.  Flows own theirs; a workload opens its own
 * (one per channel and peer, as collective libraries do) and posts
 * messages on them.  Its transport (transport.h) keeps the rest of its
 * state in a larger struct that starts with this one. */
struct fab_transport_ops;

struct sim_qp {
	struct sim_conn c; /* ends, priority, 5-tuple (engine.h) */
	const struct fab_transport_ops *tp;
	/* what only the sender's NIC writes, a cache line away from what both
	 * ends read (a parallel run's partitions run the two ends at once) */
	char gap_[FAB_GAP];
	bool in_ready, wake_pending; /* in its NIC's ready list; an EV_QP_WAKE is due */
	struct sim_qp *ready_next;
};

enum pkt_ev_type {
	EV_TX_DONE = SIM_EV_ENGINE, /* obj port: finished serialising */
	EV_ARRIVE,                  /* obj frame, arg port id: the first frame on the port's wire reaches the peer */
	EV_PAUSE_EXPIRE,            /* obj port, arg priority */
	EV_PFC_REFRESH,             /* obj port, arg prio | gen << 3 */
	EV_QP_WAKE,                 /* obj qp: rate limiter allows the next packet */
	EV_RTO,                     /* obj qp, arg generation */
	EV_CC_TIMER,                /* obj qp, arg generation */
	EV_NIC_DRAIN,               /* obj nic, arg generation */
	EV_SAMPLE,
	EV_STORM,    /* obj port, arg generation: the storming NIC pauses again */
	EV_NIC_PCIE, /* obj nic: its PCIe link can feed the next data packet */
	EV_PFC_WD,   /* obj port, arg priority: the switch watchdog checks it */
};

/* What a data packet of a queue pair whose congestion control wants
 * samples carries beside the packet (telemetry.c): when it was sent,
 * whether it was resent, and each switch egress's telemetry when the model
 * wants it; its ACK carries it back. */
struct pkt_tel {
	fab_time_ps sent_ps;
	uint32_t next_free;
	uint8_t nhops;
	bool resent, want_hops;
	struct fab_int_hop hop[FAB_CC_INT_HOPS];
};

struct pkt_slab {
	struct pkt_slab *next;
	struct pkt pkts[4096];
};

/* The packet engine: the shared state first (engine.h), then its own. */
struct pkt_llfc_ops;
struct pkt_qdisc_ops;

struct psim {
	struct fab_sim c;
	const struct pkt_llfc_ops *llfc; /* link-level flow control (llfc.h) */
	/* the switches' queue disciplines (qdisc.h): ECN marking (NULL: ECN
	 * off) and in-band telemetry (NULL: no model wants it) */
	const struct pkt_qdisc_ops *marking, *stamping;
	/* each transport's queue pairs (transport.h), by enum fab_transport_kind */
	const struct fab_transport_ops *qp_ops[FAB_TRANSPORT_COUNT];
	uint8_t lossless; /* the priorities it keeps lossless */
	struct sim_port *ports;
	struct sim_switch *switches; /* by switch index */
	struct sim_nic *nics;        /* by NIC index */
	struct pkt *free_pkts;
	struct pkt_slab *slabs;
	uint64_t live_data_payload;     /* payload bytes of the data frames it holds */
	uint64_t host_pkts, host_bytes; /* what the hosts' network stacks handled (TCP) */
	fab_time_ps grid_ps;            /* a run ends at a multiple of this after it fell idle */
	fab_time_ps idle_ps;            /* when the last flow finished (FAB_TIME_NEVER: not yet) */
	struct pkt_part *part;          /* a parallel run: this partition (parallel.c); NULL when alone */
	struct sim_port **held;         /* the ports whose EV_TX_DONE is held (port.c) */
	uint32_t nheld, held_cap;
	uint64_t holds_total; /* EV_TX_DONEs held so far */
	bool hold_off;        /* queue every EV_TX_DONE (tests compare the two) */
	/* telemetry records (telemetry.c): slot 0 unused, a free list */
	struct pkt_tel *tels;
	uint32_t ntels, cap_tels, free_tel;
	uint32_t rx_tel; /* the data packet being received: its record, for the ACK it draws */
};

/* the switch a switch port belongs to */
static inline struct sim_switch *pkt_switch_of(const struct psim *s, const struct sim_port *port)
{
	return &s->switches[s->c.topo->switch_index[port->node]];
}

static inline struct sim_qp *pkt_qp(const struct psim *s, uint32_t id)
{
	return (struct sim_qp *)s->c.qps[id];
}

/* packet.c */
struct pkt *sim_pkt_alloc(struct psim *s);
void sim_pkt_free(struct psim *s, struct pkt *p);

/* telemetry.c */
uint32_t pkt_tel_new(struct psim *s, bool want_hops);
/* a data frame of `data` bytes along c's path and an ACK of `ack` bytes
 * back, through empty queues (what a congestion control is told is its
 * base round trip); *hops: the switches on the way there */
fab_time_ps pkt_base_rtt(struct psim *s, const struct sim_conn *c, uint32_t data, uint32_t ack, uint32_t *hops);
void pkt_tel_free(struct psim *s, uint32_t tel);
/* a switch egress sends p: its telemetry, as the port stands before it */
void pkt_tel_stamp(struct psim *s, const struct sim_port *port, struct pkt *p);
static inline struct pkt_tel *pkt_tel_at(const struct psim *s, uint32_t tel)
{
	return &s->tels[tel];
}

/* packet.c: one event of the run */
void pkt_event(struct psim *s, const struct fab_ev *ev);
/* the next event delivers a frame: the frame and its wire's end fetched
 * while this one runs (a deep queue's frames are long out of cache) */
static inline void pkt_prefetch_arrival(const struct psim *s, const struct fab_ev *nx)
{
	__builtin_prefetch(nx->obj);
	__builtin_prefetch(&s->ports[nx->arg].wire_head);
}
/* when a run that fell idle at t stops: the next multiple of the grid */
static inline fab_time_ps pkt_stop_after(const struct psim *s, fab_time_ps t)
{
	return (t / s->grid_ps + 1) * s->grid_ps;
}

/* parallel.c: a run over run.threads partitions, or over the ranks, its
 * books closed: 1; 0 (and nothing run) when threads cannot split it; -1
 * when ranks cannot, or an exchange between them failed */
int pkt_run_parallel(struct psim *s, fab_time_ps end_ps);
/* a frame sent on a port whose peer is another partition's */
void pkt_part_send(struct psim *s, struct sim_port *port, struct pkt *p);

/* port.c */
void sim_port_wire_append(struct psim *s, struct sim_port *port, struct pkt *p);
void sim_port_transmit(struct psim *s, struct sim_port *port, struct pkt *p);
void sim_port_enqueue(struct psim *s, struct sim_port *port, struct pkt *p);
void sim_port_kick(struct psim *s, struct sim_port *port);
void sim_port_queue_area(struct psim *s, struct sim_port *port);
void sim_port_arrive(struct psim *s, struct sim_port *from, struct pkt *p);
void sim_port_tx_done(struct psim *s, struct sim_port *port);
/* the run (or a parallel run's window) stops: the held EV_TX_DONEs due
 * before `stop` and not after end_ps (0: none) count as run, the clock on
 * the last of them; returns the earliest of `t` and those left */
fab_time_ps sim_port_held_settle(struct psim *s, fab_time_ps stop, fab_time_ps end_ps, fab_time_ps t);

/* port serialises a frame: its EV_TX_DONE is due (or, held, not yet run) */
static inline bool sim_port_busy(const struct psim *s, const struct sim_port *port)
{
	return port->busy && !(port->tx_held && fab_eq_passed(&s->c.eq, port->done_ps, port->done_key));
}

/* switch.c */
void switch_receive(struct psim *s, struct sim_port *in, struct pkt *p);
void switch_start_tx(struct psim *s, struct sim_port *port);
void switch_flush(struct psim *s, struct sim_port *port, unsigned prio);

/* mmu.c: false when the frame is to be dropped */
bool mmu_admit(struct psim *s, struct sim_switch *sw, struct sim_port *in, const struct sim_port *eport, struct pkt *p);
void mmu_release(struct psim *s, struct sim_switch *sw, const struct pkt *p);

/* nic.c */
void nic_start_tx(struct psim *s, struct sim_nic *nic, struct sim_port *port);
void nic_qp_make_ready(struct psim *s, struct sim_qp *qp);
void nic_on_wake(struct psim *s, struct sim_qp *qp);
void nic_on_pcie(struct psim *s, struct sim_nic *nic);
/* moves a queue pair to other ports of its NICs (a port failed over) */
void nic_qp_move(struct psim *s, struct sim_qp *qp, uint32_t src_nic, uint32_t dst_nic);

/* fault.c */
void fault_apply(struct psim *s, const struct fab_fault *f, int what);
void fault_storm(struct psim *s, struct sim_port *port, uint32_t arg);

/* counters.c */
void counters_sample(struct psim *s);
void counters_close(struct psim *s);
/* the run's totals from its counts (counters_close's last step; again on
 * rank 0 once the ranks' counts are in) */
void counters_books(struct psim *s);

#endif
