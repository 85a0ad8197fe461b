/*
 * coll.h - collective algorithms as schedules.
 *
 * A collective (operation, ranks, size, algorithm, channels, chunk size) is
 * a pure function into a schedule: steps (send, receive, receive-and-reduce,
 * local copy) on each rank, with dependencies between steps.  Every send is
 * created together with the receive that takes it (step.match).  Nothing
 * here knows about simulators or sockets: the packet engine, the flow engine
 * and the real-network probe execute the same schedules, and the checker
 * (fab_coll_check) executes them on real buffers to prove them right.
 *
 * Sizes follow nccl-tests: `count` elements of the operation's "size"
 * column, which is the per-rank buffer for AllReduce, Broadcast, Reduce and
 * SendRecv, and the whole (n x per-rank block) buffer for AllGather,
 * ReduceScatter and AllToAll (rounded down to a multiple of n).
 */
#ifndef FAB_COLL_H
#define FAB_COLL_H

#include "../base/base.h"

enum fab_coll_op {
	FAB_OP_ALLREDUCE,
	FAB_OP_REDUCESCATTER,
	FAB_OP_ALLGATHER,
	FAB_OP_BROADCAST,
	FAB_OP_REDUCE,
	FAB_OP_ALLTOALL,
	FAB_OP_SENDRECV,
	FAB_OP_COUNT
};

enum fab_coll_algo {
	FAB_ALGO_RING,
	FAB_ALGO_TREE,
	FAB_ALGO_HIER,   /* intra-server reduce-scatter, per-rail ring, intra-server all-gather */
	FAB_ALGO_RHD,    /* recursive halving-doubling */
	FAB_ALGO_DIRECT, /* every pair at once (AllToAll, SendRecv) */
	FAB_ALGO_NVLS,   /* NVLink SHARP: the NVSwitch reduces (one server); no schedule, the communicator runs it */
	FAB_ALGO_SHARP, /* the fabric's switches reduce (SHARP, NCCL's CollNet); no schedule, the communicator runs it */
	FAB_ALGO_AUTO,  /* chosen by the cost model (select.c) */
	FAB_ALGO_COUNT
};

enum fab_buf { FAB_BUF_IN, FAB_BUF_OUT, FAB_BUF_TMP, FAB_NBUF };

enum fab_step_kind {
	FAB_STEP_SEND,        /* send bytes of src_buf at src_off to peer */
	FAB_STEP_RECV,        /* receive into dst_buf at dst_off (overwrite) */
	FAB_STEP_RECV_REDUCE, /* receive and add into dst_buf at dst_off */
	FAB_STEP_COPY,        /* local copy src -> dst */
};

struct fab_step {
	uint32_t rank;
	uint32_t peer;    /* SEND/RECV: the other rank */
	uint32_t match;   /* SEND: its receive step; RECV: its send step */
	uint32_t dep_off; /* deps[dep_off .. dep_off + ndeps) are step ids */
	uint16_t ndeps;
	uint8_t kind;    /* enum fab_step_kind */
	uint8_t channel; /* distinct channels use distinct connections */
	uint8_t src_buf, dst_buf;
	uint64_t src_off, dst_off, bytes;
};

struct fab_sched {
	uint32_t nranks;
	struct fab_step *steps;
	uint32_t nsteps, cap_steps;
	uint32_t *deps;
	uint32_t ndeps, cap_deps;
	uint64_t buf_bytes[FAB_NBUF]; /* per-rank buffer sizes */
	uint32_t channels;
};

struct fab_coll_args {
	int op;   /* enum fab_coll_op */
	int algo; /* enum fab_coll_algo, not AUTO */
	uint32_t nranks;
	uint64_t count;                    /* elements, nccl-tests semantics */
	uint32_t elem_bytes;               /* datatype size */
	uint32_t root;                     /* Broadcast, Reduce */
	uint32_t channels;                 /* >= 1 */
	uint64_t chunk_bytes;              /* pipelining unit (ring, tree); 0 = no pipelining */
	uint32_t ranks_per_node;           /* hierarchical: consecutive ranks per server */
	const uint32_t *order;             /* ring order / tree layout of ranks; NULL = 0..n-1 */
	const uint32_t *const *chan_order; /* ring: one order per channel (overrides order) */
	uint32_t tree_group;               /* tree: consecutive ranks of an order that share a server (0: none) */
};

/* Tree t (0 or 1 of a double binary tree) over the channel order `order`
 * of n ranks, as NCCL lays it out: each run of `group` consecutive ranks
 * (a server; 0 or 1: every rank alone) is a chain from its first rank,
 * the head, and the heads form a binary tree over servers.  A rooted tree
 * (Broadcast, Reduce: root a rank, else UINT32_MAX) puts the root's server
 * on top with the root as its head.  Fills parent[rank] (UINT32_MAX at the
 * top), kids[rank] (up to 3, UINT32_MAX where none) and topdown (every
 * rank, parents before children). */
void fab_coll_tree(uint32_t n, const uint32_t *order, uint32_t group, uint32_t t, uint32_t root, uint32_t *parent,
		   uint32_t (*kids)[3], uint32_t *topdown);
int fab_coll_build(const struct fab_coll_args *a, struct fab_sched *out, struct fab_err *err);
void fab_sched_free(struct fab_sched *s);

/* Executes the schedule on integer data in a randomised order (seed) and
 * compares every element with the operation's definition.  Also proves
 * the schedule free of deadlock and of a buffer overwritten while a send
 * still reads it.  Returns 0, or FAB_EINVAL with the first difference. */
int fab_coll_check(const struct fab_coll_args *a, const struct fab_sched *s, uint64_t seed, struct fab_err *err);

/* The checker's data: rank r's input element i (small integers, so sums
 * are exact in float), and what output element i of rank r must hold;
 * false when the operation leaves it undefined (Reduce off the root). */
int32_t fab_coll_input_value(uint32_t rank, uint64_t i);
bool fab_coll_expected(const struct fab_coll_args *a, uint32_t rank, uint64_t i, int64_t *want);

/* The operation's size column in bytes, and per-rank input/output bytes. */
void fab_coll_sizes(int op, uint64_t count, uint32_t elem_bytes, uint32_t nranks, uint64_t *size_bytes,
		    uint64_t *in_bytes, uint64_t *out_bytes);
/* nccl-tests' bus bandwidth factor: busbw = algbw x factor. */
double fab_coll_busbw_factor(int op, uint32_t nranks);
/* The circle method's round r (of n - 1, or n when n is odd) over n
 * endpoints: its k-th pair (k < (n + 1) / 2) in *x, *y; false when one of
 * them is the stand-in an odd n adds (that endpoint sits the round out).
 * Endpoint 0 stays, the others rotate.  The simulated matrix and the
 * probe's pair alike, so their rounds can be compared. */
bool fab_circle_pair(uint32_t n, uint32_t r, uint32_t k, uint32_t *x, uint32_t *y);
bool fab_coll_supported(int op, int algo, uint32_t nranks, uint32_t ranks_per_node, char *why, size_t why_len);

const char *fab_coll_op_name(int op);     /* "allreduce" */
const char *fab_coll_op_title(int op);    /* "AllReduce" */
const char *fab_coll_algo_name(int algo); /* "ring" */
int fab_coll_op_parse(const char *s);     /* -1 if unknown */
int fab_coll_algo_parse(const char *s);

#endif
