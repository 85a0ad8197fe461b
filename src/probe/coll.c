/*
 * coll.c - the schedule executor on the real network: a collective's
 * schedule (src/coll) run by the dependency executor over the data mesh,
 * timed between barriers, its result checked element by element.
 */
#include "probe_int.h"

/* ---- executing a schedule ---- */

static void on_start(void *ctx, struct fab_exec *ex, uint32_t step)
{
	struct fab_probe *pr = ctx;
	const struct fab_step *st = &ex->s->steps[step];
	if (st->rank != pr->me)
		return; /* another process runs it */
	uint8_t *src = (uint8_t *)pr->buf[st->src_buf] + st->src_off;
	uint8_t *dst = (uint8_t *)pr->buf[st->dst_buf] + st->dst_off;
	switch (st->kind) {
	case FAB_STEP_SEND: {
		struct out_msg *m = fab_xcalloc(1, sizeof *m);
		m->step = step;
		m->len = 8 + st->bytes;
		m->data = src;
		m->hdr[0] = st->match;
		m->hdr[1] = (uint32_t)st->bytes;
		pr_enqueue(C(pr, st->peer, 1 + st->channel % pr->nc), m);
		return;
	}
	case FAB_STEP_COPY:
		memmove(dst, src, st->bytes);
		break;
	case FAB_STEP_RECV:
		memcpy(dst, pr->inbox[step], st->bytes);
		break;
	case FAB_STEP_RECV_REDUCE:
		pr_add_floats((float *)dst, (const float *)pr->inbox[step], st->bytes / 4);
		break;
	}
	if (st->kind != FAB_STEP_COPY) {
		free(pr->inbox[step]);
		pr->inbox[step] = NULL;
	}
	pr->mine_left--;
	fab_exec_done(ex, step);
}

/* the peer of a receive of mine still waiting for its data */
static uint32_t waiting_for(const struct fab_probe *pr)
{
	for (uint32_t i = 0; i < pr->s->nsteps; i++) {
		const struct fab_step *st = &pr->s->steps[i];
		if (st->rank == pr->me && (st->kind == FAB_STEP_RECV || st->kind == FAB_STEP_RECV_REDUCE) &&
		    !pr->ex.arrived[i] && pr->ex.waiting[i] == 0 && !pr->inbox[i])
			return st->peer;
	}
	return NO_RANK;
}

static void ensure_buf(struct fab_probe *pr, int b, size_t bytes)
{
	if (pr->bufcap[b] >= bytes && pr->buf[b])
		return;
	free(pr->buf[b]);
	pr->buf[b] = fab_xcalloc(bytes / 4 + 1, sizeof(float));
	pr->bufcap[b] = bytes;
}

int fab_probe_coll(struct fab_probe *pr, const struct fab_coll_args *args, bool check, struct fab_probe_result *res,
		   struct fab_err *err)
{
	struct fab_sched s;
	if (fab_coll_build(args, &s, err))
		return FAB_EINVAL;
	/* ready to take the operation's messages before the opening barrier:
	 * a faster rank may send as soon as it is through */
	pr->err = err;
	pr->failed = 0;
	for (int b = 0; b < FAB_NBUF; b++)
		ensure_buf(pr, b, s.buf_bytes[b]);
	if (check) {
		for (uint64_t i = 0; i < s.buf_bytes[FAB_BUF_IN] / 4; i++)
			pr->buf[FAB_BUF_IN][i] = (float)fab_coll_input_value(pr->me, i);
		for (uint64_t i = 0; i < s.buf_bytes[FAB_BUF_OUT] / 4; i++)
			pr->buf[FAB_BUF_OUT][i] = NAN;
	}
	pr->inbox = fab_xcalloc(s.nsteps + 1, sizeof *pr->inbox);
	pr->rxseen = fab_xcalloc(s.nsteps + 1, 1);
	pr->mine_left = 0;
	for (uint32_t i = 0; i < s.nsteps; i++)
		pr->mine_left += s.steps[i].rank == pr->me;
	struct fab_exec_ops ops = {on_start, on_start};
	fab_exec_init(&pr->ex, &s, &ops, pr);
	pr->s = &s;
	pr->done_sum = pr->time_sum = 0; /* the closing barrier adds the wrong elements and times */
	int rc = pr_barrier(pr, 0, false, err);
	double t0 = pr_now_s(), last = t0;
	if (!rc)
		fab_exec_start(&pr->ex);
	/* no data for the timeout: the others tell rank 0 whom they wait for
	 * and wait for its verdict, then give up on their own; rank 0 blames
	 * the rank it waits for itself only later */
	char nm[64];
	bool told = false;
	pr->wait_since = t0;
	while (!rc && pr->mine_left && !pr_check_peers(pr)) {
		if (pr_progress(pr, 100)) {
			last = pr_now_s();
			continue;
		}
		/* rank 0 gives a silent rank and the others' reports half a
		 * timeout to arrive first: they point nearer the cause */
		double idle = pr_now_s() - last;
		uint32_t w = idle > pr->timeout_s ? waiting_for(pr) : NO_RANK;
		if (idle > 1.5 * pr->timeout_s && pr->me == 0) {
			if (w != NO_RANK)
				pr_fail(pr, w, "rank 0: no data from %s for %.0f s (it hangs, or the path is broken)",
					pr_rname(pr, w, nm), pr->timeout_s);
			else
				pr_fail(pr, NO_RANK, "rank 0: no progress for %.0f s", pr->timeout_s);
		} else if (idle > pr->timeout_s && !told) {
			pr_enqueue_ctrl(pr, 0, F_STUCK, w);
			told = true;
		} else if (idle > 2 * pr->timeout_s) {
			pr_fail(pr, w, "rank %u: no data from %s for %.0f s", pr->me,
				w != NO_RANK ? pr_rname(pr, w, nm) : "any rank", idle);
		}
	}
	if (pr->failed) {
		pr_settle(pr);
		rc = FAB_EIO;
	}
	res->time_s = pr_now_s() - t0;
	res->wrong = 0;
	uint64_t size, inb, outb;
	fab_coll_sizes(args->op, args->count, args->elem_bytes, args->nranks, &size, &inb, &outb);
	for (uint64_t i = 0; check && !rc && i < outb / 4; i++) {
		int64_t want;
		if (!fab_coll_expected(args, pr->me, i, &want))
			break;
		res->wrong += pr->buf[FAB_BUF_OUT][i] != (float)want;
	}
	fab_exec_free(&pr->ex);
	for (uint32_t i = 0; i < s.nsteps; i++)
		free(pr->inbox[i]);
	free(pr->inbox);
	pr->inbox = NULL;
	free(pr->rxseen);
	pr->rxseen = NULL;
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++) {
		struct conn *c = &pr->c[k];
		if (c->ctl)
			continue;
		pr_free_queue(c);
		free(c->in.buf);
		c->in.buf = NULL;
		c->in.hgot = 0;
	}
	pr->s = NULL;
	fab_sched_free(&s);
	if (!rc) {
		/* rank 0 learns everyone's wrong elements and time with the
		 * closing barrier; the time is the mean over ranks (as nccl-tests
		 * reports it by default) */
		if (pr->me)
			pr_enqueue_ctrl(pr, 0, F_TIME, (uint32_t)FAB_MIN(res->time_s * 1e7, (double)UINT32_MAX));
		rc = pr_barrier(pr, (uint32_t)FAB_MIN(res->wrong, UINT32_MAX), false, err);
		if (pr->me == 0) {
			res->wrong += pr->done_sum;
			res->time_s = (res->time_s + (double)pr->time_sum / 1e7) / pr->n;
		}
	}
	return rc;
}
