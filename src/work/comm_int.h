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

#endif
