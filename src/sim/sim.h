/*
 * sim.h - the packet-level engine: what it takes, what it gives back.
 *
 * The engine takes a routed topology, the fabric parameters (buffers, PFC,
 * ECN, DCQCN, NIC transport) and a list of point-to-point flows between
 * NICs, runs them packet by packet, and leaves counters per port and per
 * flow.  It never prints and never exits; it reports through return values,
 * struct fab_err and an optional progress callback.
 */
#ifndef FAB_SIM_H
#define FAB_SIM_H

#include "../base/base.h"
#include "../topo/topo.h"
#include "../cc/cc.h"
#include "transports.h"

#define FAB_NPRIO 8

struct fab_pfc_params {
	bool enabled;
	uint8_t prio_mask;        /* lossless priorities, bit p = priority p */
	fab_bytes xoff_bytes;     /* per ingress port and priority: PAUSE above this */
	fab_bytes xon_bytes;      /* RESUME at or below this */
	fab_bytes headroom_bytes; /* above xoff before dropping; 0 = from the link's RTT */
	uint32_t quanta;          /* PAUSE time in 512-bit quanta, 1..65535 */
	bool nic_pause;           /* the NIC sends PAUSE when its receive buffer passes nic_xoff */
	fab_bytes nic_rx_buffer_bytes;
	fab_rate_bps nic_rx_drain_bps; /* how fast the NIC empties its receive buffer (PCIe), 0 = line rate */
	bool until_resume;             /* a PAUSE holds until RESUME (no quanta timer, no refresh) */
	int dynamic;                   /* thresholds: 0 static (xoff, xon), 1 dynamic: */
	/* dynamic thresholds: XOFF = (buffer - all headroom - all
	 * reserves - shared bytes in use) >> shift, shift dyn_shift at
	 * dyn_ref_rate, one less per doubling of a port's speed, at least 1 */
	uint32_t dyn_shift;
	fab_rate_bps dyn_ref_rate;
	fab_bytes reserve_bytes; /* per ingress port and priority, before the shared pool */
	fab_bytes resume_offset; /* dynamic: RESUME this far below the threshold (or at 0 shared) */
	double headroom_delays;  /* headroom = rate x link delay x this; 0: the default sizing */
};

/* dynamic thresholds: the shift of a port of rate r (dyn_shift at
 * dyn_ref_rate, one less per doubling of the speed above it, at least 1) */
static inline unsigned fab_pfc_dyn_shift(const struct fab_pfc_params *pf, fab_rate_bps r)
{
	unsigned shift = pf->dyn_shift;
	for (double x = (double)pf->dyn_ref_rate * 2; x <= (double)r && shift > 1; x *= 2)
		shift--;
	return shift;
}

/* Where a switch marks, and which queue depth it compares. */
enum fab_ecn_mark_at {
	FAB_ECN_DEQUEUE,       /* at dequeue, the queue with the departing packet */
	FAB_ECN_DEQUEUE_AFTER, /* at dequeue, the queue it leaves behind (HPCC's ns-3) */
	FAB_ECN_ENQUEUE,       /* at enqueue, the queue with the arriving packet */
};

struct fab_ecn_params {
	bool enabled;
	fab_bytes kmin_bytes;
	fab_bytes kmax_bytes;
	double pmax;           /* marking probability at kmax */
	fab_rate_bps ref_rate; /* kmin and kmax are for ports of this rate, others in proportion; 0: every port */
	int mark_at;           /* enum fab_ecn_mark_at */
	int marking;           /* the packet engine's marking discipline: its place (fab_packet_marking) */
};

/* RED on a queue of q bytes (ECN marking): no mark at or under kmin, a
 * mark past kmax, between them a mark with probability *p rising to pmax
 * (the packet engine draws it per packet, the fluid model per window) */
enum { FAB_RED_NONE, FAB_RED_MARK, FAB_RED_DRAW };
static inline int fab_red(double q, double kmin, double kmax, double pmax, double *p)
{
	if (q > kmax)
		return FAB_RED_MARK;
	if (q <= kmin)
		return FAB_RED_NONE;
	*p = pmax * (q - kmin) / (kmax - kmin);
	return FAB_RED_DRAW;
}

/* What a queue pair resends after a loss. */
enum fab_retransmit {
	FAB_RETX_GO_BACK_N, /* from the first packet the receiver lacks */
	FAB_RETX_GO_BACK_0, /* the whole message again; the receiver drops what it had of it */
};

struct fab_nic_params {
	bool acks_ignore_pause;      /* ACKs, NAKs and CNPs leave the NIC even while their priority is paused */
	uint32_t ack_every;          /* coalesce: one ACK per this many packets */
	fab_time_ps rto_ps;          /* retransmission timeout */
	int retransmit;              /* enum fab_retransmit */
	uint32_t retry_count;        /* recoveries (NAK or timeout) in a row without progress before the QP fails */
	fab_time_ps cnp_interval_ps; /* at most one CNP per QP per interval */
};

_Static_assert(FAB_CC_TRANSPORTS == FAB_TRANSPORT_COUNT, "a congestion control per transport");

enum fab_engine { FAB_ENGINE_PACKET, FAB_ENGINE_FLOW };
/* how the flow engine runs ring and tree collectives (flow.ring, flow.tree) */
enum fab_flow_ring { FAB_FLOW_RING_AUTO, FAB_FLOW_RING_STEPS, FAB_FLOW_RING_AGGREGATE };
/* how the flow engine's switch ports share their rate: its queue models,
 * in their registry's order (src/flow/models.c) */
enum fab_flow_queues { FAB_FLOW_QUEUES_FAIR, FAB_FLOW_QUEUES_FIFO, FAB_FLOW_QUEUES_DCQCN };

/* how a switch hashes a packet's 5-tuple onto its equal-cost ports */
enum fab_ecmp_hash {
	FAB_ECMP_MIX, /* a strong mix of the 5-tuple and the switch's seed */
	FAB_ECMP_XOR, /* XOR of the fields and the seed, modulo the ports (a weak hash, as simple switches fold) */
};

struct fab_fabric_params {
	int engine;                /* enum fab_engine */
	int transport;             /* enum fab_transport_kind: the queue pairs' */
	int flow_ring;             /* enum fab_flow_ring */
	int flow_tree;             /* enum fab_flow_ring: trees */
	int flow_queues;           /* enum fab_flow_queues */
	uint32_t threads;          /* packet engine: partitions run on this many threads (run.threads) */
	uint32_t partitions;       /* with threads: the fabric split this many ways (run.partitions; 0: 8 a thread) */
	fab_time_ps flow_batch_ps; /* flow engine: changes this close together share one recomputation */
	fab_time_ps flow_batch_large_ps; /* and while recomputations are large (FL_LARGE_COMPONENT transfers) */
	int flow_solve; /* flow.solve: 0 component, 1 local (fair shares re-solved where a change reaches), 2 auto */
	uint32_t mtu;   /* payload bytes per packet */
	struct fab_wire_params wire; /* framing overrides */
	fab_bytes buffer_bytes;      /* shared buffer per switch */
	double dt_alpha;             /* dynamic threshold for lossy queues */
	uint8_t ctrl_prio;           /* priority of ACK, NAK and CNP */
	uint64_t ecmp_seed;          /* per-switch seeds are derived from it */
	bool ecmp_same_hash;         /* every switch uses the same seed (polarization) */
	int ecmp_hash;               /* enum fab_ecmp_hash */
	bool ecmp_adaptive;          /* adaptive routing: data packets take the least-queued port; NICs reorder */
	fab_time_ps flowlet_gap_ps;  /* adaptive routing by flowlets: a flow changes port after this much silence */
	struct fab_pfc_params pfc;
	struct fab_ecn_params ecn;
	struct fab_cc_choice
		cc; /* the congestion control (fabric.cc, or the transport's keys) and every model's parameters */
	/* every transport's parameters, each at its place in the registry
	 * (fab_transport_params) */
	_Alignas(16) unsigned char tp_params[FAB_TP_PARAMS_BYTES];
	struct fab_nic_params nic;
	fab_time_ps series_interval_ps; /* 0 = no time series */
	fab_time_ps pfc_watchdog_ps;    /* switch: a queue paused this long without draining turns lossy; 0 = off */
	fab_time_ps pfc_wd_restore_ps;  /* and lossless again after this long without PAUSE (0: pfc_watchdog_ps) */
	fab_time_ps nic_watchdog_ps;    /* a NIC pausing this long stops pausing for good; 0 = off */
};

/* What the flow engine runs under these parameters (its result says so):
 * DCQCN at the sources with flow.queues dcqcn, a congestion control the
 * fluid model has (DCQCN, either variant) on a transport whose queue pairs
 * it models (RoCE's; else the FIFO queues alone: other models, TCP's
 * congestion control and InfiniBand's credits are not modelled), and with
 * it fluid pauses where PFC is on for a priority. */
static inline bool fab_flow_runs_dcqcn(const struct fab_fabric_params *fp)
{
	return fp->flow_queues == FAB_FLOW_QUEUES_DCQCN && fab_cc_of(&fp->cc, fp->transport)->flow_model &&
		fab_transport_at(fp->transport)->flags & FAB_TP_FLUID_CC;
}

/* a transport's parameters (its family's struct; NULL: it has none) */
static inline const void *fab_transport_params(const struct fab_fabric_params *fp, int kind)
{
	return fab_transport_at(kind)->family ? fp->tp_params + fab_transport_params_offset(kind) : NULL;
}

static inline void *fab_transport_params_rw(struct fab_fabric_params *fp, int kind)
{
	return fp->tp_params + fab_transport_params_offset(kind);
}

static inline bool fab_flow_runs_pfc(const struct fab_fabric_params *fp)
{
	return fab_flow_runs_dcqcn(fp) && fp->pfc.enabled && fp->pfc.prio_mask;
}

/* Something broken, from start_ps until end_ps (0: to the end). */
enum fab_fault_kind {
	FAB_FAULT_DEGRADE,   /* the link runs at rate_bps; its ports still report their configured speed */
	FAB_FAULT_LOSSY,     /* each frame on the link is lost with probability drop */
	FAB_FAULT_DOWN,      /* the link carries nothing; switches route around it after convergence */
	FAB_FAULT_PFC_STORM, /* the NIC sends PAUSE for prio without end */
	FAB_FAULT_ECN,       /* the switch marks with kmin/kmax instead of the fabric's */
	FAB_FAULT_SLOW_GPU,  /* the GPU computes factor times slower (jobs) */
	FAB_FAULT_DELAY,     /* the link's frames take delay_ps longer each way (a slow host's link) */
	FAB_FAULT_COUNT
};

struct fab_fault {
	int kind;
	uint32_t port; /* a port of the link (DEGRADE, LOSSY, DOWN) or the NIC's (PFC_STORM) */
	uint32_t node; /* the switch (ECN) */
	uint32_t gpu;  /* SLOW_GPU */
	fab_rate_bps rate_bps;
	double drop;
	uint32_t drop_every; /* LOSSY: every this many data packets on the link, one lost (0: off) */
	double factor;
	uint8_t prio;
	fab_bytes kmin_bytes, kmax_bytes;
	fab_time_ps convergence_ps;
	fab_time_ps delay_ps; /* DELAY */
	fab_time_ps start_ps, end_ps;
};

/* One transfer between two NICs. */
struct fab_sim_flow {
	uint32_t id;
	uint32_t src_gpu, dst_gpu; /* for reporting */
	uint32_t src_nic, dst_nic;
	fab_bytes bytes;
	fab_time_ps start_ps;
	uint8_t prio;
	uint8_t transport; /* 0: the fabric's; else enum fab_transport_kind + 1 */
	uint32_t qps;      /* queue pairs; bytes split evenly */
};

struct fab_flow_stats {
	fab_time_ps finish_ps;     /* last byte acknowledged; FAB_TIME_NEVER if unfinished */
	fab_bytes delivered_bytes; /* in-order bytes accepted by the receiver */
	uint64_t data_pkts;        /* data packets sent, retransmissions included */
	uint64_t retx_pkts;
	uint64_t cnps; /* CNPs received by the sender */
	uint64_t timeouts;
	uint32_t qp_errors; /* queue pairs that failed (retries exceeded): the flow never finishes */
};

struct fab_port_stats {
	/* what every frame counts: one cache line */
	uint64_t tx_bytes, rx_bytes; /* Ethernet frame bytes (FCS included) */
	uint64_t tx_pkts, rx_pkts;
	uint64_t tx_wire_bytes;     /* frames + preamble + IFG: what the line carried */
	uint64_t tx_data_pkts;      /* data packets sent */
	uint64_t max_queue_bytes;   /* egress queue peak, all priorities */
	double queue_area;          /* integral of queue bytes over ps */
	uint64_t drops, drop_bytes; /* packets dropped at this port's egress queue */
	uint64_t ecn_marks;
	uint64_t pause_tx[FAB_NPRIO]; /* PAUSE (non-zero quanta) frames sent for priority */
	uint64_t pause_rx[FAB_NPRIO];
	uint64_t resume_tx[FAB_NPRIO];    /* zero-quanta frames */
	fab_time_ps paused_ps[FAB_NPRIO]; /* time this port's egress was held by PAUSE */
	uint64_t rx_errors;               /* frames lost on the link into this port (bad cable, link down) */
	uint64_t watchdog_trips;          /* PFC watchdog: pauses this port stopped obeying */
	uint64_t unroutable;              /* arrived here for a NIC no route reaches (links down) */
};

/* A sample of a switch port, taken every series_interval. */
struct fab_series_row {
	fab_time_ps t_ps;
	uint32_t port;
	uint64_t queue_bytes;
	uint64_t tx_bytes;      /* frame bytes sent in the interval */
	uint64_t tx_wire_bytes; /* the same plus preamble and IFG: line occupancy */
	uint32_t drops;         /* in the interval */
	uint32_t ecn_marks;
	uint32_t pause_tx; /* PAUSE frames (non-zero quanta) sent */
	uint32_t pause_rx;
};

/* A sample of an unfinished flow, taken every series_interval. */
struct fab_flow_series_row {
	fab_time_ps t_ps;
	uint32_t flow;
	uint64_t delivered_bytes; /* in-order bytes at the receiver in the interval */
	double rate_bps;          /* mean sending rate over the flow's QPs (their transport's pace) */
};

struct fab_sim_totals {
	uint64_t events;
	fab_time_ps end_ps;           /* simulated time when the run stopped */
	uint64_t data_tx_bytes;       /* payload bytes put on the wire by NICs, retransmissions included */
	uint64_t data_rx_bytes;       /* payload bytes that reached a destination NIC */
	uint64_t data_drop_bytes;     /* payload bytes dropped in switches */
	uint64_t data_inflight_bytes; /* payload bytes in queues or on wires at the end */
	uint64_t data_pkts;
	uint64_t retx_pkts; /* all queue pairs, flows' and workloads' */
	uint64_t timeouts;
	uint64_t qp_errors; /* queue pairs that failed: retries exceeded */
	uint64_t cnps;
	uint64_t drops;       /* in switches and on broken links */
	uint64_t wire_losses; /* frames lost on links (lossy or down) */
	uint64_t failovers;   /* queue pairs moved to another port of their NIC (a port failed) */
	uint64_t reordered;   /* data packets a NIC held because they came ahead of order (adaptive routing, TCP) */
	double host_cpu_ps;   /* CPU time the hosts' network stacks spent (TCP; 0 for RoCE's offloaded NICs) */
	uint64_t flows_done;
	bool stopped_by_end_time;
};

struct fab_sim;

/* What a workload (collectives, jobs) hears from the engine. */
struct fab_sim_hooks {
	void *ctx;
	void (*timer)(void *ctx, uint32_t arg);        /* a timer set with fab_sim_timer */
	void (*delivered)(void *ctx, uint32_t cookie); /* a posted message arrived whole */
};

/* The server model around the NICs. */
struct fab_server_params {
	fab_rate_bps nvlink_bps; /* per GPU, each direction, through the NVSwitch */
	fab_time_ps nvlink_lat_ps;
	double nvlink_eff;     /* share of nvlink_bps a GPU's copies reach (0: all) */
	bool nvls;             /* the NVSwitch reduces (NVLink SHARP) */
	double nvls_eff;       /* an NVLS AllReduce's data rate per GPU, as a share of nvlink_bps */
	bool sharp;            /* the fabric's switches reduce (SHARP) */
	fab_rate_bps pcie_bps; /* GPU to NIC: caps a NIC's sending rate */
};

void fab_sim_set_progress(struct fab_sim *s, fab_progress_fn fn, void *ctx);

/* A run split over processes (ranks; the packet engine's flows only): each
 * runs one partition of the fabric and meets the others at every window's
 * end.  exchange sends out[j] to each rank j (out[me] unused) and returns
 * 0 with in[j], rank j's message to this one (allocated: the engine frees
 * the data); -1: the run cannot go on (the caller holds why).  Rank 0 ends
 * with the whole run's results; the others' are theirs alone. */
struct fab_sim_msg {
	uint8_t *data;
	size_t len;
};
struct fab_sim_ranks {
	uint32_t n, me;
	int (*exchange)(void *ctx, const struct fab_sim_msg *out, struct fab_sim_msg *in);
	void *ctx;
};
void fab_sim_set_ranks(struct fab_sim *s, const struct fab_sim_ranks *r);
/* Runs until every flow is done or end_ps (0 = no limit); -1: a split
 * run's exchange failed. */
int fab_sim_run(struct fab_sim *s, fab_time_ps end_ps);
/* it has work left (flows not done, a workload's messages or timers): a
 * run stopped at end_ps can go on with another fab_sim_run */
bool fab_sim_busy(const struct fab_sim *s);
/* A fabric at rest begins again as it began: what a workload does next
 * runs as it would have alone on a fresh fabric.  Every queue pair's
 * congestion control goes back to where it starts, as after an idle spell
 * long enough for it to recover (the host synchronisation between
 * nccl-tests' sizes: DCQCN at line rate, TCP's window at its initial
 * size), its timers dropped; credits still owed go back (InfiniBand's
 * periodic resync); the random draws (ECN marking, link losses) start
 * their streams again; the events the running one schedules are keyed as
 * the run's first were.  Counters go on.  Called from a workload's event
 * while nothing is in flight.  (Not yet the flow engine's fluid DCQCN,
 * `flow.queues: dcqcn`, whose state goes on.) */
void fab_sim_rest(struct fab_sim *s);
void fab_sim_free(struct fab_sim *s);

const struct fab_port_stats *fab_sim_port_stats(const struct fab_sim *s);
const struct fab_flow_stats *fab_sim_flow_stats(const struct fab_sim *s);
const struct fab_sim_flow *fab_sim_flows(const struct fab_sim *s, size_t *n);
/* The same, one flow at a time and in place: the two calls above copy
 * every flow out (on a run of 50,000 flows, 5 MB of fresh memory when
 * the results are written) */
size_t fab_sim_nflows(const struct fab_sim *s);
const struct fab_sim_flow *fab_sim_flow_spec(const struct fab_sim *s, size_t i);
struct fab_flow_stats fab_sim_flow_stat(const struct fab_sim *s, size_t i);
const struct fab_sim_totals *fab_sim_totals(const struct fab_sim *s);
/* A block of `size` bytes kept with the simulation and freed with it:
 * where the output keeps what it derived from a finished run rather than
 * derive it again for each file.  *stale: the block is new, or the run has
 * gone on since it was last asked for (its events or its end moved), and
 * the caller fills it.  One block a user (slot); the size must be the
 * same at every call. */
enum fab_memo_slot { FAB_MEMO_SLOWDOWN, FAB_MEMO_SUMMARY, FAB_MEMO_SLOTS };
void *fab_sim_memo(const struct fab_sim *s, enum fab_memo_slot slot, size_t size, bool *stale);
const struct fab_series_row *fab_sim_series(const struct fab_sim *s, size_t *n);
const struct fab_flow_series_row *fab_sim_flow_series(const struct fab_sim *s, size_t *n);
const struct fab_topo *fab_sim_topo(const struct fab_sim *s);
/* The workload interface.  Connections are queue pairs between NICs that
 * live for the whole run; messages posted on one are delivered in order.
 * Intra-server transfers go GPU to GPU over NVLink (one serialising egress
 * per GPU, then the latency).  While holds are outstanding, fab_sim_run
 * keeps going even when no flow is left. */
void fab_sim_set_hooks(struct fab_sim *s, const struct fab_sim_hooks *h);
/* Schedules a fault (copied); SLOW_GPU is for the workload, ignored here. */
void fab_sim_add_fault(struct fab_sim *s, const struct fab_fault *f);
/* the threads the packet engine's run started (0 or 1: it ran on one) */
uint32_t fab_sim_threads(const struct fab_sim *s);
/* The time from which the faults change nothing more: the last start or
 * end of one, with its routing's convergence (0 without faults). */
fab_time_ps fab_sim_settled_from(const struct fab_sim *s);
void fab_sim_set_server(struct fab_sim *s, const struct fab_server_params *sp);
uint32_t fab_sim_open(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio);
/* the same, speaking `transport` (enum fab_transport_kind; -1: the fabric's) */
uint32_t fab_sim_open_tp(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport);
/* the same, its 5-tuple (the UDP source port ECMP hashes) drawn from key,
 * not from the order connections are opened in: a communicator's
 * connection hashes alike whichever operation opens it first */
uint32_t fab_sim_open_key(struct fab_sim *s, uint32_t src_nic, uint32_t dst_nic, uint8_t prio, int transport,
			  uint64_t key);
void fab_sim_post(struct fab_sim *s, uint32_t conn, fab_bytes bytes, uint32_t cookie);
void fab_sim_post_local(struct fab_sim *s, uint32_t src_gpu, uint32_t dst_gpu, fab_bytes bytes, uint32_t cookie);
/* when GPU gpu's NVLink egress is free of what was posted on it; and
 * that instant set (a replayed operation's, comm_replay.c) */
fab_time_ps fab_sim_local_free(const struct fab_sim *s, uint32_t gpu);
void fab_sim_local_set_free(struct fab_sim *s, uint32_t gpu, fab_time_ps at_ps);
void fab_sim_timer(struct fab_sim *s, fab_time_ps at_ps, uint32_t arg);
void fab_sim_hold(struct fab_sim *s, int delta);
fab_time_ps fab_sim_now(const struct fab_sim *s);
const struct fab_server_params *fab_sim_server(const struct fab_sim *s);
uint32_t fab_sim_mtu(const struct fab_sim *s);

/* Queue pairs, and the ports a queue pair's data crosses under the final
 * routes (ECMP choices included); n_out ports written, at most max. */
uint32_t fab_sim_nqps(const struct fab_sim *s);
bool fab_sim_qp_used(const struct fab_sim *s, uint32_t qp);
uint32_t fab_sim_qp_path(const struct fab_sim *s, uint32_t qp, uint32_t *ports, uint32_t max);
/* the first queue pair of the scenario's flow i (its others follow it) */
uint32_t fab_sim_flow_first_qp(const struct fab_sim *s, uint32_t flow);
void fab_sim_qp_ends(const struct fab_sim *s, uint32_t qp, uint32_t *src_nic, uint32_t *dst_nic);

const struct fab_fabric_params *fab_sim_fabric(const struct fab_sim *s);
/* The framing of the fabric's transport: its overheads on the wire. */
const struct fab_wire *fab_sim_wire(const struct fab_sim *s);
/* a transport's framing as the run uses it (-1: the fabric's) */
const struct fab_wire *fab_sim_wire_of(const struct fab_sim *s, int transport);
/* what a message waits in the host before it moves (TCP's kernel latency;
 * 0 for the offloaded transports), -1: the fabric's transport */
fab_time_ps fab_sim_host_latency(const struct fab_sim *s, int transport);
/* A switch port's PFC headroom and pause threshold on an empty switch (the
 * dynamic threshold's largest value); 0, 0 without PFC. */
void fab_sim_port_pfc(const struct fab_sim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff);
/* Dynamic PFC thresholds in a buffer that does not cover the headroom and
 * reserves of a switch's ports: their thresholds are 0, and every ingress
 * port pauses at its first byte.  How many switches (where the engine
 * models pauses), the first's node and what its ports set aside. */
uint32_t fab_sim_pfc_uncovered(const struct fab_sim *s, uint32_t *first_node, double *first_aside);
/* What a message on conn waits after its last byte leaves the NIC: the
 * path's propagation delays and the store-and-forward of one full packet
 * at every switch (routes as they are now). */
fab_time_ps fab_sim_conn_latency(const struct fab_sim *s, uint32_t conn);
/* The payload bytes per second conn's path carries when it is alone on it. */
double fab_sim_conn_rate(const struct fab_sim *s, uint32_t conn);

/* Flow engine: how many times rates were recomputed and the mean number
 * of transfers in a recomputed component (0, 0 for the packet engine). */
void fab_sim_flow_engine_stats(const struct fab_sim *s, uint64_t *recomputes, double *mean_component);
/* Flow engine: while an operation run aggregated holds it (hold +1; -1
 * lets go), changes of rates within ps of each other are solved together
 * (flow.batch, if longer, stays); the longest of the holds' ps applies
 * until the last lets go.  The packet engine ignores it. */
void fab_sim_flow_batch(struct fab_sim *s, int hold, fab_time_ps ps);

#endif
