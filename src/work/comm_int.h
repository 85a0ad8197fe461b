/*
 * comm_int.h - what a communicator's files share: comm.c (communicators
 * and their connections) with comm_run.c (an operation run on them).
 */
#ifndef FAB_COMM_INT_H
#define FAB_COMM_INT_H

#include "comm.h"

/* ranks of each channel order that share a server, for trees */
uint32_t comm_tree_group(const struct fab_comm *c);

/* the slot of the connection from GPU src to GPU dst on channel ch
 * between the NICs given (rail: whether they were chosen rail-aligned),
 * opened on first use; its first queue pair is c->conn_val[slot] */
uint32_t comm_conn_slot(struct fab_comm *c, uint32_t src, uint32_t dst, bool rail, uint32_t src_nic, uint32_t dst_nic,
			uint32_t ch);

/* the slot of the connection a network send of the running operation
 * from GPU src to GPU dst on channel ch uses, and its first queue pair */
uint32_t comm_send_slot(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch);
uint32_t comm_send_conn(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch);

/* comm_run.c: a step's bytes on the wire under protocol proto; what a
 * step of the running operation costs on top of moving its bytes (net:
 * between servers); an aggregated edge's bytes from GPU src to GPU dst on
 * channel ch posted as one transfer (over NVLink, or striped over the
 * connection's queue pairs), fn(c, arg) at each arrival, c->agg_left
 * counting them; an aggregated operation ends at `at` (now at the
 * soonest) */
uint64_t comm_wire_bytes(int proto, uint64_t b);
/* the log's line for the operation that just ended */
void comm_log_op(struct fab_comm *c, uint32_t channels, uint64_t chunk, uint32_t nsteps);
fab_time_ps comm_step_overhead(const struct fab_comm *c, bool net);
void comm_agg_post(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch, uint64_t bytes, fab_work_fn fn,
		   uint32_t arg);
void comm_agg_finish(struct fab_comm *c, fab_time_ps at);

/* comm_agg.c: a tree run aggregated on the flow engine (flow.tree):
 * whether op at size runs so, and its start */
bool comm_tree_aggregate(const struct fab_comm *c, int op, int algo, uint64_t size);
void comm_tree_aggregate_start(struct fab_comm *c, int op, uint64_t count, uint32_t root);

/* comm_replay.c: c counted among its GPUs' NVLink users where it sends
 * over NVLink; an operation repeated instead of run (true: it is under
 * way, done(ctx, result) at its end); what a run operation took, kept to
 * repeat it; the kept runs freed */
void comm_nvl_register(struct fab_comm *c);
bool comm_replay_start(struct fab_comm *c, const struct fab_coll_req *r, int algo, fab_comm_done_fn done, void *ctx);
void comm_replay_record(struct fab_comm *c);
void comm_replay_free(struct fab_comm *c);

#endif
