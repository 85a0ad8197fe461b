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
fab_time_ps comm_step_overhead(const struct fab_comm *c, bool net);
void comm_agg_post(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch, uint64_t bytes, fab_work_fn fn,
		   uint32_t arg);
void comm_agg_finish(struct fab_comm *c, fab_time_ps at);

/* comm_agg.c: a tree run aggregated on the flow engine (flow.tree):
 * whether op at size runs so, and its start */
bool comm_tree_aggregate(const struct fab_comm *c, int op, int algo, uint64_t size);
void comm_tree_aggregate_start(struct fab_comm *c, int op, uint64_t count, uint32_t root);

#endif
