/*
 * job_int.h - what the training job's files (job.c, job_moe.c) share.
 */
#ifndef FAB_JOB_INT_H
#define FAB_JOB_INT_H

#include "job.h"

/* a pass: forward or backward of micro-batch m through model chunk c */
struct pass {
	uint32_t m;
	uint16_t c;
	uint8_t bwd;
};

struct fab_job_worker {
	struct fab_job *job;
	uint32_t s, d;
	bool done;
	struct pass *ops; /* the schedule's passes, in order */
	uint32_t nops, pc;
	uint32_t k;                     /* compute chunk within the pass */
	bool waiting;                   /* for activations (forward) or gradients (backward) */
	double slow;                    /* compute takes this many times as long (a straggler) */
	uint32_t *act_have, *grad_have; /* [v * M]: messages arrived per chunk and micro-batch */
};

static inline struct fab_job_worker *worker(struct fab_job *j, uint32_t s, uint32_t d)
{
	return &j->wk[s * j->dp + d];
}

static inline uint32_t rank_of(const struct fab_job *j, uint32_t s, uint32_t d, uint32_t x)
{
	return (s * j->dp + d) * j->tp + x;
}

/* a collective of the job begins or ends (the time with one running) */
void jb_op_begin(struct fab_job *j);
void jb_op_end(struct fab_job *j);
/* a collective could not start: the job stops with j->err */
void jb_fail(struct fab_job *j);
/* the worker's compute chunk and its collectives are done */
void jb_chunk_finished(struct fab_job_worker *wk);
/* ends the iteration when every worker and reduction is done */
void jb_maybe_end_iteration(struct fab_job *j);

/* Communicators over data-parallel replicas, [(s * groups + g) * tp + x]
 * for stage s, group g and tensor index x: group g of size `size` holds
 * replicas g * gstride + i * istride, i < size.  Named job.TAG<s>.<x>
 * (job.TAG<s>.<g>.<x> with several groups).  NULL and err when one cannot
 * be built (those built are freed). */
struct fab_comm *jb_group_comms(struct fab_job *j, struct fab_work *w, const char *tag, uint32_t size, uint32_t groups,
				uint32_t istride, uint32_t gstride, struct fab_err *err);

/* the job's all-reduce algorithm (spec.algo) on each of n communicators,
 * or err naming the key */
int jb_check_algo(const struct fab_job *j, const struct fab_comm *cs, uint32_t n, struct fab_err *err);

/* ---- mixture of experts (job_moe.c) ---- */

/* the expert-parallel all-to-alls' and expert gradients' communicators */
int jb_moe_init(struct fab_job *j, struct fab_work *w, struct fab_err *err);
void jb_moe_free(struct fab_job *j);
/* the worker reached a MoE all-to-all: the last of its group starts it */
void jb_a2a_arrive(struct fab_job_worker *wk);
/* expert-gradient all-reduces an iteration waits for */
uint32_t jb_moe_reductions(const struct fab_job *j);
/* every replica of stage s finished its backward pass: its expert
 * gradients are all-reduced */
void jb_moe_grads(struct fab_job *j, uint32_t s);

#endif
