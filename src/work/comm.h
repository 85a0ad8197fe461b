/*
 * comm.h - a communicator: a set of GPUs that run collectives together on
 * the simulated cluster, the way an NCCL communicator does.
 *
 * It owns its connections (one queue pair per channel and NIC pair, kept
 * for its whole life), its ring orders (one per channel, following the
 * topology or the rank order) and its algorithm choice.  An operation is
 * built as a schedule (src/coll/) and executed step by step: sends become
 * messages on the engine (or NVLink transfers inside a server), receives
 * wait for them, reductions cost bytes / reduce rate when one is set.
 * On the flow engine a ring can instead run aggregated (flow.ring): each
 * ring edge carries all its steps' bytes as one transfer, at the rate the
 * fabric gives it, and the operation ends when the last has arrived, but
 * no sooner than the ring's pipeline allows: a step waits for the previous
 * one's data from the rank before, so the critical path goes once round
 * the ring every n steps, paying each edge's chunk at its full rate plus
 * its latency (the slowest channel's lap, steps / n times).
 */
#ifndef FAB_COMM_H
#define FAB_COMM_H

#include "../coll/coll.h"
#include "../coll/exec.h"
#include "work.h"

enum fab_ring_order {
	FAB_RING_TOPOLOGY, /* by leaf, server, GPU: fewest spine crossings */
	FAB_RING_RANK,     /* servers in the order of their first rank */
	FAB_RING_FLAT,     /* exactly the rank order, every channel the same */
};

struct fab_comm_params {
	const char *name; /* in logs: "job0" */
	uint32_t nranks;
	const uint32_t *gpus; /* rank -> GPU (copied) */
	int ring_order;       /* enum fab_ring_order */
	uint32_t channels;    /* 0: one per NIC of a server (at least 2) */
	uint64_t chunk_bytes; /* pipelining unit; 0: as NCCL sizes it per protocol and algorithm */
	uint8_t prio;
	fab_rate_bps reduce_bps; /* 0: reductions take no time */
	uint32_t qps_per_conn;   /* queue pairs a message is striped over (0 = 1) */
	int transport;           /* 0: the fabric's; else enum fab_transport_kind + 1 */
	uint32_t siblings;       /* communicators that run the same operations alongside (a job's groups; 0 = 1) */
};

struct fab_coll_req {
	int op;
	int algo;       /* FAB_ALGO_AUTO: the cost model chooses */
	uint64_t count; /* elements, nccl-tests semantics */
	uint32_t elem_bytes;
	uint32_t root;
};

struct fab_op_result {
	int op, algo;
	int proto;      /* enum fab_proto */
	uint64_t bytes; /* nccl-tests size column */
	uint64_t count;
	fab_time_ps start_ps, end_ps;
	uint64_t op_count; /* the communicator's operation number */
};

typedef void (*fab_comm_done_fn)(void *ctx, const struct fab_op_result *r);

struct fab_comm {
	struct fab_work *w;
	const struct fab_topo *topo;
	char name[32];
	uint32_t nranks, channels, nics_per_server;
	uint32_t *gpu;             /* rank -> GPU */
	uint32_t *hier_gpu;        /* server-major ranks for hierarchical; NULL if servers are uneven */
	uint32_t ranks_per_server; /* when every server holds the same number, else 0 */
	uint32_t nservers;
	uint32_t nleaves;      /* leaves its NICs hang off */
	uint32_t **chan_order; /* [channels][nranks] ring orders */
	int ring_order;
	uint64_t chunk_bytes; /* 0: NCCL's, per protocol and algorithm */
	uint64_t cur_chunk;   /* the running operation's */
	uint8_t prio;
	int transport;     /* 0: the fabric's; else enum fab_transport_kind + 1 */
	uint32_t siblings; /* (fab_comm_params) at least 1 */
	fab_rate_bps reduce_bps;
	uint32_t qps_per_conn;
	uint32_t *parts; /* per send step: stripes still travelling */
	/* connections: (src NIC, dst NIC, channel) -> engine connection */
	uint64_t *conn_key;
	uint32_t *conn_val;
	uint32_t *conn_rr; /* per connection: messages posted (round robin over its queue pairs) */
	uint32_t conn_cap, nconns;
	/* per step of the schedule: its connection's slot (UINT32_MAX: not
	 * looked up yet), kept while the operations repeat the same request and
	 * the connections stay where they are (comm_run.c) */
	uint32_t *step_slot;
	uint32_t step_slot_n;
	struct fab_coll_req slot_req;
	/* the operation in progress */
	bool busy;
	struct fab_sched sched;
	struct fab_exec ex;
	const uint32_t *map; /* schedule rank -> GPU */
	/* a ring run aggregated (flow engine): one transfer per ring edge */
	bool aggregate;
	uint32_t agg_left;        /* transfers still travelling */
	fab_time_ps agg_floor_ps; /* the end no sooner than this: every step at full rate plus its latency */
	/* a tree run aggregated (flow engine, comm_agg.c): when the
	 * operation's transfers were posted, and when each tree edge's
	 * arrived (per channel-tree and rank: up, down) */
	fab_time_ps agg_t0;
	fab_time_ps *agg_arr;
	uint32_t agg_eb;   /* bytes an element */
	uint32_t agg_root; /* the rooted tree's root rank (UINT32_MAX: the double tree) */
	int agg_op;
	uint64_t agg_count;
	/* SHARP: parts of the buffer through three stages (comm_run.c) */
	uint32_t sh_parts, sh_next;
	uint32_t *sh_left, *sh_stage; /* per part: transfers of its stage still travelling; the stage */
	uint64_t sh_bytes;            /* bytes of a part */
	struct fab_op_result res;
	fab_comm_done_fn done;
	void *done_ctx;
	uint64_t ops;
	void *user; /* the owner's back pointer */
	/* replay (comm_replay.c): inside one server, an operation run once per
	 * request and then repeated */
	bool replay;            /* the owner allows it */
	bool nvl_reg;           /* it counts as a user of its GPUs' NVLink */
	int8_t replay_ok;       /* 0: not looked at yet; 1: it may; -1: it may not */
	struct comm_replay *rp; /* what it ran */
	/* the cost model's inputs */
	double bw_nic_Bps, bw_nvl_Bps; /* bytes per second */
	double alpha_net_s, alpha_nvl_s;
	double alpha_host_s; /* a message's wait in the host before it moves (TCP's kernel) */
};

int fab_comm_init(struct fab_comm *c, struct fab_work *w, const struct fab_comm_params *p, struct fab_err *err);
void fab_comm_free(struct fab_comm *c);
/* Whether operation r's schedule can be built (the ring's and the
 * all-to-all's limits: a schedule that would not fit in memory or in a
 * step index), before anything runs: coll checks every size before its
 * table's head, so a refused sweep prints no half table.  0, or the
 * refusal in err. */
int fab_comm_fits(const struct fab_comm *c, const struct fab_coll_req *r, struct fab_err *err);
/* Starts one operation now; done(ctx, result) when every rank has finished. */
int fab_comm_start(struct fab_comm *c, const struct fab_coll_req *r, fab_comm_done_fn done, void *ctx,
		   struct fab_err *err);
/* Whether the cluster has what algo needs (nvls: topology.nvls; sharp:
 * topology.sharp): 0, or FAB_EINVAL with why. */
int fab_comm_algo_available(const struct fab_comm *c, int algo, struct fab_err *err);
/* The cost model: modelled time in seconds of op at bytes with algo and
 * proto, or a negative value when they cannot run it here. */
/* a ring's steps for op on n ranks: AllReduce 2(n-1), ReduceScatter and
 * AllGather n-1; 0 for the operations a ring does not run in steps */
uint32_t fab_comm_ring_steps(int op, uint32_t n);
double fab_comm_model(const struct fab_comm *c, int op, int algo, int proto, uint64_t bytes);
/* The algorithm and protocol the model picks for op at bytes: *algo and
 * *proto in, FAB_ALGO_AUTO / FAB_PROTO_AUTO or fixed; out, the choice.
 * auto chooses among NCCL's algorithms for op (AllReduce: ring or tree;
 * the other reductions and gathers: ring; AllToAll, SendRecv: direct). */
void fab_comm_select(const struct fab_comm *c, int op, uint64_t bytes, int *algo, int *proto);

#endif
