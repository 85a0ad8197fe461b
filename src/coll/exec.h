/*
 * exec.h - runs a schedule's dependency graph, for any executor.
 *
 * The executor owns time and data movement; this tracks which steps may
 * start.  A send may start when its dependencies are done; it is done when
 * its data has been delivered, which also lets the matching receive run
 * once the receive's own dependencies are done.  Copies (and receives)
 * start when ready and are done when the executor says so.  The packet
 * engine, the real-network probe and the schedule checker all drive a
 * schedule through this one state machine.
 */
#ifndef FAB_EXEC_H
#define FAB_EXEC_H

#include "coll.h"

struct fab_exec;

struct fab_exec_ops {
	/* step (a SEND) may start: move its bytes, then call fab_exec_delivered */
	void (*start_send)(void *ctx, struct fab_exec *ex, uint32_t step);
	/* step (COPY, RECV, RECV_REDUCE) may run: then call fab_exec_done */
	void (*start_local)(void *ctx, struct fab_exec *ex, uint32_t step);
};

struct fab_exec {
	const struct fab_sched *s;
	const struct fab_exec_ops *ops;
	void *ctx;
	uint32_t *waiting;   /* dependencies not yet done, per step */
	uint32_t *dep_first; /* dependents in CSR form */
	uint32_t *dependents;
	uint8_t *arrived; /* RECV: its data is here */
	uint32_t done;    /* steps done */
	bool started;     /* fab_exec_start ran */
	uint32_t *ready;  /* steps to start, in order */
	uint32_t nready, cap_ready;
};

void fab_exec_init(struct fab_exec *ex, const struct fab_sched *s, const struct fab_exec_ops *ops, void *ctx);
void fab_exec_free(struct fab_exec *ex);
/* Starts every step with no dependencies (and what follows from it). */
void fab_exec_start(struct fab_exec *ex);
void fab_exec_delivered(struct fab_exec *ex, uint32_t send_step);
/* For executors where each process runs only its own rank's steps: the
 * data of a receive has arrived (its send ran elsewhere). */
void fab_exec_arrived(struct fab_exec *ex, uint32_t recv_step);
void fab_exec_done(struct fab_exec *ex, uint32_t step);
/* Starts the steps made ready; the executor calls it after done/delivered
 * (re-entrancy: ops callbacks may call done/delivered directly). */
void fab_exec_pump(struct fab_exec *ex);
static inline bool fab_exec_finished(const struct fab_exec *ex)
{
	return ex->done == ex->s->nsteps;
}

#endif
