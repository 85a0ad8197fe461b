/*
 * check.c - executes a schedule on real buffers and checks the result
 * element by element, like nccl-tests' check.
 *
 * Every rank's input holds small integers that depend on rank and index,
 * so sums are exact.  Ready steps and messages in flight are taken in a
 * random (seeded) order: a missing dependency shows up as a wrong element,
 * a send whose buffer changes before delivery, or a deadlock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "exec.h"

struct checker {
	const struct fab_sched *s;
	int32_t **buf[FAB_NBUF]; /* [buf][rank] */
	int32_t **payload;       /* per SEND step: the data captured at start */
	uint32_t *pend;          /* steps started, not yet finished */
	uint32_t npend;
	struct fab_err *err;
	int failed;
};

int32_t fab_coll_input_value(uint32_t rank, uint64_t i)
{
	return (int32_t)(((rank + 1) * 131 + i * 7) % 97) - 48;
}

#define input_value fab_coll_input_value

bool fab_coll_expected(const struct fab_coll_args *a, uint32_t r, uint64_t i, int64_t *want)
{
	uint32_t n = a->nranks;
	uint64_t size, inb, outb;
	fab_coll_sizes(a->op, a->count, a->elem_bytes, n, &size, &inb, &outb);
	uint64_t cnt = outb / a->elem_bytes;
	uint64_t blk = (a->op == FAB_OP_ALLGATHER || a->op == FAB_OP_ALLTOALL) ? cnt / n : cnt;
	*want = 0;
	switch (a->op) {
	case FAB_OP_REDUCE:
		if (r != a->root)
			return false;
		/* fall through */
	case FAB_OP_ALLREDUCE:
		for (uint32_t k = 0; k < n; k++)
			*want += input_value(k, i);
		return true;
	case FAB_OP_REDUCESCATTER:
		for (uint32_t k = 0; k < n; k++)
			*want += input_value(k, (uint64_t)r * cnt + i);
		return true;
	case FAB_OP_ALLGATHER:
		*want = input_value((uint32_t)(i / blk), i % blk);
		return true;
	case FAB_OP_BROADCAST:
		*want = input_value(a->root, i);
		return true;
	case FAB_OP_ALLTOALL:
		*want = input_value((uint32_t)(i / blk), (uint64_t)r * blk + i % blk);
		return true;
	case FAB_OP_SENDRECV:
		*want = input_value((r + n - 1) % n, i);
		return true;
	}
	return false;
}

static void on_start(void *ctx, struct fab_exec *ex, uint32_t step)
{
	(void)ex;
	struct checker *c = ctx;
	const struct fab_step *st = &c->s->steps[step];
	if (st->kind == FAB_STEP_SEND) {
		uint64_t n = st->bytes / 4;
		c->payload[step] = fab_xcalloc(n ? n : 1, sizeof(int32_t));
		memcpy(c->payload[step], c->buf[st->src_buf][st->rank] + st->src_off / 4, st->bytes);
	}
	c->pend[c->npend++] = step;
}

static void finish(struct checker *c, struct fab_exec *ex, uint32_t step)
{
	const struct fab_step *st = &c->s->steps[step];
	int32_t *src = c->buf[st->src_buf][st->rank] + st->src_off / 4;
	uint64_t n = st->bytes / 4;
	switch (st->kind) {
	case FAB_STEP_SEND:
		if (memcmp(c->payload[step], src, st->bytes)) {
			fab_err_set(c->err, FAB_EINVAL,
				    "step %u (send %u -> %u): the buffer changed while the data was in flight", step,
				    st->rank, st->peer);
			c->failed = 1;
		}
		fab_exec_delivered(ex, step);
		return;
	case FAB_STEP_COPY:
		memmove(c->buf[st->dst_buf][st->rank] + st->dst_off / 4, src, st->bytes);
		break;
	case FAB_STEP_RECV:
	case FAB_STEP_RECV_REDUCE: {
		int32_t *dst = c->buf[st->dst_buf][st->rank] + st->dst_off / 4;
		const int32_t *in = c->payload[st->match];
		for (uint64_t i = 0; i < n; i++)
			dst[i] = st->kind == FAB_STEP_RECV ? in[i] : dst[i] + in[i];
		free(c->payload[st->match]);
		c->payload[st->match] = NULL;
		break;
	}
	}
	fab_exec_done(ex, step);
}

static int verify(const struct fab_coll_args *a, struct checker *c)
{
	uint64_t size, inb, outb;
	fab_coll_sizes(a->op, a->count, a->elem_bytes, a->nranks, &size, &inb, &outb);
	for (uint32_t r = 0; r < a->nranks; r++)
		for (uint64_t i = 0; i < outb / 4; i++) {
			int64_t want;
			if (!fab_coll_expected(a, r, i, &want))
				break;
			int32_t got = c->buf[FAB_BUF_OUT][r][i];
			if (got != want)
				return fab_err_set(
					c->err, FAB_EINVAL,
					"%s %s, %u ranks, %llu elements: rank %u element %llu is %d, want %lld",
					fab_coll_algo_name(a->algo), fab_coll_op_title(a->op), a->nranks,
					(unsigned long long)a->count, r, (unsigned long long)i, got, (long long)want);
		}
	return 0;
}

int fab_coll_check(const struct fab_coll_args *a, const struct fab_sched *s, uint64_t seed, struct fab_err *err)
{
	struct checker c = {.s = s, .err = err};
	uint32_t n = s->nranks;
	for (int b = 0; b < FAB_NBUF; b++) {
		c.buf[b] = fab_xcalloc(n, sizeof *c.buf[b]);
		for (uint32_t r = 0; r < n; r++) {
			uint64_t elems = s->buf_bytes[b] / 4;
			c.buf[b][r] = fab_xcalloc(elems ? elems : 1, sizeof(int32_t));
			for (uint64_t i = 0; i < elems; i++)
				c.buf[b][r][i] = b == FAB_BUF_IN ? input_value(r, i) : 0x7f7f7f7f;
		}
	}
	c.payload = fab_xcalloc(s->nsteps ? s->nsteps : 1, sizeof *c.payload);
	c.pend = fab_xcalloc(s->nsteps ? s->nsteps : 1, sizeof *c.pend);
	struct fab_exec_ops ops = {on_start, on_start};
	struct fab_exec ex;
	fab_exec_init(&ex, s, &ops, &c);
	fab_exec_start(&ex);
	struct fab_rng rng;
	fab_rng_init(&rng, seed, fab_rng_stream(FAB_RNG_CHECK, 0));
	int rc = 0;
	while (c.npend && !c.failed) {
		uint32_t k = (uint32_t)fab_rng_below(&rng, c.npend);
		uint32_t step = c.pend[k];
		c.pend[k] = c.pend[--c.npend];
		finish(&c, &ex, step);
		fab_exec_pump(&ex);
	}
	if (c.failed)
		rc = FAB_EINVAL;
	else if (!fab_exec_finished(&ex))
		rc = fab_err_set(err, FAB_EINVAL, "%s %s, %u ranks: deadlock, %u of %u steps done",
				 fab_coll_algo_name(a->algo), fab_coll_op_title(a->op), n, ex.done, s->nsteps);
	else
		rc = verify(a, &c);
	fab_exec_free(&ex);
	for (uint32_t i = 0; i < s->nsteps; i++)
		free(c.payload[i]);
	free(c.payload);
	free(c.pend);
	for (int b = 0; b < FAB_NBUF; b++) {
		for (uint32_t r = 0; r < n; r++)
			free(c.buf[b][r]);
		free(c.buf[b]);
	}
	return rc;
}
