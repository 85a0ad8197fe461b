/*
 * exec.c - the dependency state machine of exec.h.
 *
 * Ready steps go on a list that fab_exec_pump drains, so a callback that
 * completes a step at once (a zero-time copy) does not recurse.
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

void fab_exec_init(struct fab_exec *ex, const struct fab_sched *s, const struct fab_exec_ops *ops, void *ctx)
{
	memset(ex, 0, sizeof *ex);
	ex->s = s;
	ex->ops = ops;
	ex->ctx = ctx;
	uint32_t n = s->nsteps;
	ex->waiting = fab_xcalloc(n ? n : 1, sizeof *ex->waiting);
	ex->arrived = fab_xcalloc(n ? n : 1, 1);
	ex->dep_first = fab_xcalloc((size_t)n + 1, sizeof *ex->dep_first);
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_step *st = &s->steps[i];
		ex->waiting[i] = st->ndeps;
		for (uint32_t d = 0; d < st->ndeps; d++)
			ex->dep_first[s->deps[st->dep_off + d] + 1]++;
	}
	for (uint32_t i = 0; i < n; i++)
		ex->dep_first[i + 1] += ex->dep_first[i];
	ex->dependents = fab_xcalloc(s->ndeps ? s->ndeps : 1, sizeof *ex->dependents);
	uint32_t *fill = fab_xcalloc(n ? n : 1, sizeof *fill);
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_step *st = &s->steps[i];
		for (uint32_t d = 0; d < st->ndeps; d++) {
			uint32_t dep = s->deps[st->dep_off + d];
			ex->dependents[ex->dep_first[dep] + fill[dep]++] = i;
		}
	}
	free(fill);
}

void fab_exec_free(struct fab_exec *ex)
{
	free(ex->waiting);
	free(ex->arrived);
	free(ex->dep_first);
	free(ex->dependents);
	free(ex->ready);
	memset(ex, 0, sizeof *ex);
}

static void push_ready(struct fab_exec *ex, uint32_t step)
{
	if (ex->nready == ex->cap_ready) {
		ex->cap_ready = ex->cap_ready ? 2 * ex->cap_ready : 64;
		ex->ready = fab_xrealloc(ex->ready, ex->cap_ready, sizeof *ex->ready);
	}
	ex->ready[ex->nready++] = step;
}

static bool startable(const struct fab_exec *ex, uint32_t i)
{
	const struct fab_step *st = &ex->s->steps[i];
	if (ex->waiting[i])
		return false;
	if (st->kind == FAB_STEP_RECV || st->kind == FAB_STEP_RECV_REDUCE)
		return ex->arrived[i];
	return true;
}

void fab_exec_start(struct fab_exec *ex)
{
	ex->started = true;
	for (uint32_t i = 0; i < ex->s->nsteps; i++)
		if (startable(ex, i))
			push_ready(ex, i);
	fab_exec_pump(ex);
}

void fab_exec_pump(struct fab_exec *ex)
{
	/* FIFO order: steps start in the order they became ready */
	uint32_t head = 0;
	while (head < ex->nready) {
		uint32_t i = ex->ready[head++];
		if (ex->s->steps[i].kind == FAB_STEP_SEND)
			ex->ops->start_send(ex->ctx, ex, i);
		else
			ex->ops->start_local(ex->ctx, ex, i);
	}
	ex->nready = 0;
}

void fab_exec_done(struct fab_exec *ex, uint32_t step)
{
	ex->done++;
	for (uint32_t k = ex->dep_first[step]; k < ex->dep_first[step + 1]; k++) {
		uint32_t d = ex->dependents[k];
		if (--ex->waiting[d] == 0 && startable(ex, d))
			push_ready(ex, d);
	}
}

void fab_exec_delivered(struct fab_exec *ex, uint32_t send_step)
{
	uint32_t rcv = ex->s->steps[send_step].match;
	ex->arrived[rcv] = 1;
	if (startable(ex, rcv))
		push_ready(ex, rcv);
	fab_exec_done(ex, send_step);
}

void fab_exec_arrived(struct fab_exec *ex, uint32_t recv_step)
{
	ex->arrived[recv_step] = 1;
	if (ex->started && startable(ex, recv_step))
		push_ready(ex, recv_step);
}
