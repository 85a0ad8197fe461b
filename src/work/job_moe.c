/*
 * job_moe.c - a training job's mixture-of-experts traffic (job_int.h).
 *
 * The data-parallel replicas of a stage form groups of ep consecutive
 * replicas (vol.ep, model.ep), each sharing out the experts.  At each MoE
 * all-to-all the group's workers wait for each other; the last to arrive
 * starts one all-to-all per tensor index over the group, and the group goes
 * on when all are done.  Other groups run their own.  When the experts are
 * held by more than one group (ep < dp), each expert's gradients are
 * all-reduced over the dp / ep replicas that hold it (one communicator per
 * stage, tensor index and place in the group), once every replica of the
 * stage has finished its backward pass, beside the dense gradients' last
 * bucket.
 */
#include <stdlib.h>

#include "job_int.h"

static uint32_t groups(const struct fab_job *j)
{
	return j->dp / j->vol.ep;
}

int jb_moe_init(struct fab_job *j, struct fab_work *w, struct fab_err *err)
{
	if (!j->vol.a2a_collectives)
		return 0;
	uint32_t ep = j->vol.ep, n = j->pp * groups(j);
	j->a2a_arrived = fab_xcalloc(n, sizeof *j->a2a_arrived);
	j->a2a_left = fab_xcalloc(n, sizeof *j->a2a_left);
	if (!(j->ep_comm = jb_group_comms(j, w, "ep", ep, groups(j), 1, ep, err)))
		return err->code;
	if (!j->vol.expert_grad_bytes)
		return 0;
	if (!(j->edp_comm = jb_group_comms(j, w, "edp", groups(j), ep, ep, 1, err)))
		return err->code;
	return jb_check_algo(j, j->edp_comm, j->pp * ep * j->tp, err);
}

void jb_moe_free(struct fab_job *j)
{
	if (!j->vol.ep)
		return;
	for (uint32_t i = 0; j->ep_comm && i < j->pp * groups(j) * j->tp; i++)
		fab_comm_free(&j->ep_comm[i]);
	for (uint32_t i = 0; j->edp_comm && i < j->pp * j->vol.ep * j->tp; i++)
		fab_comm_free(&j->edp_comm[i]);
	free(j->ep_comm);
	free(j->edp_comm);
	free(j->a2a_arrived);
	free(j->a2a_left);
}

static void a2a_done(void *ctx, const struct fab_op_result *r)
{
	(void)r;
	struct fab_comm *c = ctx;
	struct fab_job *j = c->user;
	uint32_t idx = (uint32_t)(c - j->ep_comm) / j->tp, s = idx / groups(j), g = idx % groups(j);
	jb_op_end(j);
	if (--j->a2a_left[idx])
		return;
	for (uint32_t d = g * j->vol.ep; d < (g + 1) * j->vol.ep; d++)
		jb_chunk_finished(worker(j, s, d));
}

void jb_a2a_arrive(struct fab_job_worker *wk)
{
	struct fab_job *j = wk->job;
	uint32_t ep = j->vol.ep, idx = wk->s * groups(j) + wk->d / ep;
	if (++j->a2a_arrived[idx] < ep)
		return;
	j->a2a_arrived[idx] = 0;
	j->a2a_left[idx] = j->tp;
	uint64_t count = FAB_MAX(j->vol.a2a_bytes / 4 / ep, 1) * ep;
	for (uint32_t x = 0; x < j->tp; x++) {
		struct fab_comm *c = &j->ep_comm[idx * j->tp + x];
		struct fab_coll_req req = {FAB_OP_ALLTOALL, FAB_ALGO_AUTO, count, 4, 0};
		jb_op_begin(j);
		if (fab_comm_start(c, &req, a2a_done, c, &j->err))
			jb_fail(j);
	}
}

uint32_t jb_moe_reductions(const struct fab_job *j)
{
	return j->edp_comm ? j->pp * j->vol.ep * j->tp : 0;
}

static void edp_done(void *ctx, const struct fab_op_result *r)
{
	(void)r;
	struct fab_comm *c = ctx;
	struct fab_job *j = c->user;
	jb_op_end(j);
	j->dp_pending--;
	jb_maybe_end_iteration(j);
}

void jb_moe_grads(struct fab_job *j, uint32_t s)
{
	if (!j->edp_comm)
		return;
	struct fab_coll_req req = {FAB_OP_ALLREDUCE, j->spec.algo, FAB_MAX(j->vol.expert_grad_bytes / 4, 1), 4, 0};
	for (uint32_t i = s * j->vol.ep * j->tp; i < (s + 1) * j->vol.ep * j->tp; i++) {
		jb_op_begin(j);
		if (fab_comm_start(&j->edp_comm[i], &req, edp_done, &j->edp_comm[i], &j->err))
			jb_fail(j);
	}
}
