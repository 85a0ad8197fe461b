/*
 * mesh.c - the poll loop over the control and data connections: queued
 * sends, framed receives that land in place (or in an inbox, or reduced on
 * arrival), control frames (barriers, reports, heartbeats, the verdict on a
 * failure), the detection of a dead or silent peer and the abort that names
 * it.
 */
#include "probe_int.h"

/* ---- moving bytes ---- */

void pr_enqueue(struct conn *c, struct out_msg *m)
{
	if (c->qt)
		c->qt->next = m;
	else
		c->qh = m;
	c->qt = m;
}

void pr_enqueue_ctrl(struct fab_probe *pr, uint32_t peer, uint32_t what, uint32_t value)
{
	struct conn *c = ctl_of(pr, peer);
	if (c->fd < 0)
		return;
	struct out_msg *m = fab_xcalloc(1, sizeof *m);
	m->step = what;
	m->len = 8;
	m->hdr[0] = what;
	m->hdr[1] = value;
	pr_enqueue(c, m);
}

void pr_fail(struct fab_probe *pr, uint32_t suspect, const char *fmt, ...)
{
	if (pr->failed)
		return;
	pr->failed = 1;
	pr->suspect = suspect;
	if (pr->err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(pr->err->msg, sizeof pr->err->msg, fmt, ap);
		va_end(ap);
		pr->err->code = FAB_EIO;
	}
}

void pr_drop(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* a connection closed or broke */
static void lost(struct fab_probe *pr, struct conn *c, bool eof)
{
	char nm[64];
	if (c->ctl) {
		if (pr->lost == NO_RANK)
			pr->lost = c->peer;
	} else if (pr->s && pr->mine_left) {
		/* a failure only where something was still due */
		pr_fail(pr, c->peer, "rank %u: the connection to %s %s", pr->me, pr_rname(pr, c->peer, nm),
			eof ? "closed (it died?)" : "broke");
	}
	pr_drop(c);
}

bool pr_flush_out(struct fab_probe *pr, struct conn *c)
{
	bool moved = false;
	while (c->qh) {
		struct out_msg *m = c->qh;
		struct iovec iov[2];
		int niov = 0;
		if (m->sent < 8)
			iov[niov++] = (struct iovec){(uint8_t *)m->hdr + m->sent, 8 - m->sent};
		size_t poff = m->sent > 8 ? m->sent - 8 : 0;
		if (m->len > 8 && poff < m->len - 8)
			iov[niov++] = (struct iovec){(uint8_t *)m->data + poff, m->len - 8 - poff};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
		ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			lost(pr, c, false);
		if (k <= 0)
			break;
		moved |= !c->ctl; /* control frames are not the operation's progress */
		m->sent += (size_t)k;
		if (m->sent < m->len)
			break;
		c->qh = m->next;
		if (!c->qh)
			c->qt = NULL;
		if (!c->ctl) {
			pr->mine_left--;
			fab_exec_done(&pr->ex, m->step);
		}
		free(m);
	}
	return moved;
}

/* which control frames each side takes: rank 0 hears the others' reports,
 * the others hear rank 0's orders; heartbeats go both ways */
static bool ctrl_allowed(const struct fab_probe *pr, uint32_t what)
{
	if (what == F_BEAT)
		return true;
	if (pr->me == 0)
		return what == F_DONE || what == F_TIME || what == F_REP_LAT || what == F_REP_BW || what == F_STUCK ||
			what == F_MIN;
	return what == F_GO || what == F_PLAN || what == F_ABORT || what == F_TURN || what == F_MIN;
}

/* a plan entry: a pair a << 16 | b of ranks of this job, a < b */
static bool plan_pair_ok(const struct fab_probe *pr, uint32_t v)
{
	uint32_t a = v >> 16, b = v & 0xffff;
	return a < b && b < pr->n;
}

static void on_ctrl(struct fab_probe *pr, struct conn *c, uint32_t what, uint32_t value)
{
	uint32_t j = c->peer;
	char nm[64];
	if (!ctrl_allowed(pr, what)) {
		pr_fail(pr, j, "rank %u: %s sent a control frame it may not send (kind %u): a protocol violation",
			pr->me, pr_rname(pr, j, nm), what);
		pr->lost = j; /* stop listening to it */
		pr_drop(c);
		return;
	}
	switch (what) {
	case F_DONE:
		pr->dcount[j]++;
		pr->done_sum += value;
		break;
	case F_TIME:
		pr->time_sum += value;
		break;
	case F_GO:
		pr->go = true;
		break;
	case F_REP_LAT:
	case F_REP_BW:
		if (pr->rep)
			pr->rep[2 * j + (what == F_REP_BW)] = value;
		break;
	case F_PLAN:
		if (!pr->plan_head) {
			/* a count first: at most the re-test cap of 2n pairs */
			if (value > 2 * pr->n) {
				pr_fail(pr, j, "rank %u: %s sent a re-test plan of %u pairs (at most %u)", pr->me,
					pr_rname(pr, j, nm), value, 2 * pr->n);
				break;
			}
			pr->plan_head = true;
			free(pr->plan);
			pr->nplan = value;
			pr->plan_got = 0;
			pr->plan = fab_xcalloc(value + 1, sizeof *pr->plan);
		} else if (pr->plan_got < pr->nplan) {
			if (!plan_pair_ok(pr, value)) {
				pr_fail(pr, j, "rank %u: %s sent a re-test pair of ranks outside the job", pr->me,
					pr_rname(pr, j, nm));
				pr->nplan = pr->plan_got; /* what came before stays valid */
				pr->plan_head = false;
				break;
			}
			pr->plan[pr->plan_got++] = value;
		}
		if (pr->plan_got == pr->nplan)
			pr->plan_head = false;
		break;
	case F_ABORT:
		pr->aborted = value < pr->n ? value : pr->n; /* n: none named */
		break;
	case F_STUCK:
		if (pr->stuck_by == NO_RANK) {
			pr->stuck_by = j;
			pr->stuck_on = value < pr->n ? value : NO_RANK;
		}
		break;
	case F_TURN:
		pr->turn = value;
		break;
	case F_MIN:
		if (pr->me == 0) {
			pr->min_val = pr->min_got++ ? FAB_MIN(pr->min_val, value) : value;
		} else {
			pr->min_val = value;
			pr->min_done = true;
		}
		break;
	}
}

static bool valid_recv(const struct fab_probe *pr, const struct conn *c, uint32_t step, uint32_t len)
{
	if (!pr->s || step >= pr->s->nsteps || (pr->rxseen && pr->rxseen[step]))
		return false;
	const struct fab_step *st = &pr->s->steps[step];
	return st->rank == pr->me && st->peer == c->peer && st->bytes == len &&
		(st->kind == FAB_STEP_RECV || st->kind == FAB_STEP_RECV_REDUCE);
}

/* a message's header is in: where its bytes go */
static void begin_recv(struct fab_probe *pr, struct conn *c)
{
	struct in_state *is = &c->in;
	const struct fab_step *st = &pr->s->steps[is->step];
	if (pr->rxseen)
		pr->rxseen[is->step] = 1;
	is->got = 0;
	is->mode = IN_INBOX;
	/* in place when the receive may run now: nothing it depends on is
	 * pending, so nothing else reads or writes its destination until it
	 * is done (before the operation starts, the inbox, so that the ready
	 * list stays the executor's) */
	if (pr->ex.started && !pr->ex.waiting[is->step]) {
		is->dst = (uint8_t *)pr->buf[st->dst_buf] + st->dst_off;
		is->mode = st->kind == FAB_STEP_RECV ? IN_DIRECT : IN_REDUCE;
		is->held = 0;
		is->added = 0;
		if (is->mode == IN_REDUCE && !is->bounce)
			is->bounce = fab_xcalloc(BOUNCE_BYTES, 1);
	} else {
		is->buf = malloc(is->len ? is->len : 1); /* every byte is written */
		if (!is->buf)
			abort();
	}
}

/* d += s, eight floats at a time (vector extensions: the compiler's cheap
 * vectorizer at -O2 leaves this loop scalar) */
void pr_add_floats(float *restrict d, const float *restrict s, size_t n)
{
	typedef float v8 __attribute__((vector_size(32)));
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		v8 a, b;
		memcpy(&a, d + i, sizeof a);
		memcpy(&b, s + i, sizeof b);
		a += b;
		memcpy(d + i, &a, sizeof a);
	}
	for (; i < n; i++)
		d[i] += s[i];
}

static void end_recv(struct fab_probe *pr, struct conn *c)
{
	struct in_state *is = &c->in;
	is->hgot = 0;
	if (is->mode == IN_INBOX) {
		pr->inbox[is->step] = is->buf;
		is->buf = NULL;
		fab_exec_arrived(&pr->ex, is->step);
	} else {
		pr->mine_left--;
		fab_exec_done(&pr->ex, is->step);
	}
}

static bool read_in(struct fab_probe *pr, struct conn *c)
{
	struct in_state *is = &c->in;
	bool moved = false;
	while (c->fd >= 0 && (!pr->failed || c->ctl)) {
		ssize_t k;
		if (is->hgot < 8) {
			k = recv(c->fd, is->hdr + is->hgot, 8 - is->hgot, MSG_DONTWAIT);
			if (k <= 0) {
				if (k == 0 || (errno != EAGAIN && errno != EINTR))
					lost(pr, c, k == 0);
				break;
			}
			moved |= !c->ctl;
			is->hgot += (size_t)k;
			if (is->hgot < 8)
				continue;
			uint32_t hdr[2];
			memcpy(hdr, is->hdr, 8);
			if (c->ctl) {
				is->hgot = 0;
				pr->heard[c->peer] = pr_now_s();
				on_ctrl(pr, c, hdr[0], hdr[1]);
				continue;
			}
			is->step = hdr[0];
			is->len = hdr[1];
			if (!valid_recv(pr, c, is->step, is->len)) {
				char nm[64];
				pr_fail(pr, c->peer, "rank %u: %s sent a message for no step of this operation", pr->me,
					pr_rname(pr, c->peer, nm));
				break;
			}
			begin_recv(pr, c);
		}
		if (is->got < is->len) {
			uint8_t *to;
			size_t want = is->len - is->got;
			if (is->mode == IN_INBOX)
				to = is->buf + is->got;
			else if (is->mode == IN_DIRECT)
				to = is->dst + is->got;
			else {
				to = is->bounce + is->held;
				want = FAB_MIN(want, BOUNCE_BYTES - is->held);
			}
			k = recv(c->fd, to, want, MSG_DONTWAIT);
			if (k <= 0) {
				if (k == 0 || (errno != EAGAIN && errno != EINTR))
					lost(pr, c, k == 0);
				break;
			}
			moved = true;
			is->got += (uint32_t)k;
			if (is->mode == IN_REDUCE) {
				/* add the whole floats as they come; keep a torn one */
				size_t have = is->held + (size_t)k, nf = have / 4;
				pr_add_floats((float *)is->dst + is->added, (const float *)is->bounce, nf);
				is->added += nf;
				is->held = have - nf * 4;
				memmove(is->bounce, is->bounce + nf * 4, is->held);
			}
		}
		if (is->got == is->len)
			end_recv(pr, c);
	}
	return moved;
}

/* Heartbeats on the control connections, every beat_iv: each rank to rank
 * 0, rank 0 to each rank.  Every wait loop calls it, the raw tests too, so
 * a rank that stops beating has stopped (or its host has). */
void pr_beat(struct fab_probe *pr)
{
	double t = pr_now_s();
	if (t - pr->last_beat < pr->beat_iv)
		return;
	pr->last_beat = t;
	for (uint32_t j = 0; j < pr->n; j++) {
		struct conn *c = ctl_of(pr, j);
		if (c->fd < 0)
			continue;
		if (c->qt && c->qt->step == F_BEAT)
			continue; /* one is still waiting */
		pr_enqueue_ctrl(pr, j, F_BEAT, 0);
		pr_flush_out(pr, c);
	}
}

/* Moves bytes on every connection that can; returns whether anything moved. */
bool pr_progress(struct fab_probe *pr, int wait_ms)
{
	uint32_t np = 0;
	pr_beat(pr);
	wait_ms = FAB_MIN(wait_ms, (int)(pr->beat_iv * 1000));
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++) {
		struct conn *c = &pr->c[k];
		if (c->fd < 0 || (pr->ctl_only && !c->ctl))
			continue;
		pr->pf[np] = (struct pollfd){c->fd, (short)(POLLIN | (c->qh ? POLLOUT : 0)), 0};
		pr->pfk[np++] = (uint32_t)k;
	}
	if (poll(pr->pf, np, wait_ms) <= 0)
		return false;
	bool moved = false;
	for (uint32_t i = 0; i < np; i++) {
		struct conn *c = &pr->c[pr->pfk[i]];
		if (pr->failed && !c->ctl)
			continue;
		short re = pr->pf[i].revents;
		if (re & POLLNVAL) {
			lost(pr, c, false);
			continue;
		}
		if ((re & POLLOUT) && c->fd >= 0)
			moved |= pr_flush_out(pr, c);
		if ((re & (POLLIN | POLLHUP | POLLERR)) && c->fd >= 0)
			moved |= read_in(pr, c);
	}
	if (pr->s && pr->ex.started)
		fab_exec_pump(&pr->ex);
	return moved;
}

static bool queues_empty(const struct fab_probe *pr)
{
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++)
		if (pr->c[k].qh)
			return false;
	return true;
}

/* rank 0: a rank failed; tells the others (they exit naming it) */
static void abort_job(struct fab_probe *pr, uint32_t bad)
{
	if (pr->me != 0 || pr->abort_sent)
		return;
	pr->abort_sent = true;
	for (uint32_t j = 1; j < pr->n; j++) {
		struct conn *c = ctl_of(pr, j);
		if (c->fd < 0)
			continue;
		uint32_t f[2] = {F_ABORT, bad};
		pr_free_queue(c);
		c->in.hgot = 0;
		(void)!send(c->fd, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
}

/* the rank silent for longer than the timeout (rank 0: any; others: rank
 * 0), counting from when this wait began, or NO_RANK */
static uint32_t silent(const struct fab_probe *pr)
{
	double t = pr_now_s();
	for (uint32_t j = 0; j < pr->n; j++) {
		if (j == pr->me || (pr->me && j) || ctl_of((struct fab_probe *)pr, j)->fd < 0)
			continue;
		if (t - FAB_MAX(pr->heard[j], pr->wait_since) > pr->timeout_s)
			return j;
	}
	return NO_RANK;
}

/* A reason to stop: from the control connections (rank 0's verdict, a rank
 * that left or went silent, a rank that waits in vain for another).  Rank 0
 * tells the others whom it blames. */
bool pr_check_peers(struct fab_probe *pr)
{
	char nm[64], nm2[64];
	uint32_t q;
	if (pr->failed)
		return true;
	if (pr->aborted != NO_RANK) {
		pr_fail(pr, pr->aborted, "rank %u: the job failed", pr->me); /* pr_settle() words it */
		return true;
	}
	if (pr->lost != NO_RANK) {
		if (pr->me == 0) {
			pr_fail(pr, pr->lost, "rank 0: %s left the job (its control connection closed: it died?)",
				pr_rname(pr, pr->lost, nm));
		} else {
			pr_fail(pr, 0, "rank %u: %s (rank 0) left the job", pr->me, pr_rname(pr, 0, nm));
		}
		return true;
	}
	if (pr->me == 0 && pr->stuck_by != NO_RANK) {
		q = pr->stuck_on != NO_RANK && pr->stuck_on < pr->n ? pr->stuck_on : pr->stuck_by;
		pr_fail(pr, q,
			"rank 0: %s reports a failure involving %s (it died or hangs, or the path between them "
			"is broken)",
			pr_rname(pr, pr->stuck_by, nm2), pr_rname(pr, q, nm));
		return true;
	}
	if ((q = silent(pr)) != NO_RANK) {
		if (pr->me == 0) {
			pr_fail(pr, q, "rank 0: %s has been silent for %.0f s (it hangs, or its host is unreachable)",
				pr_rname(pr, q, nm), pr->timeout_s);
		} else {
			pr_fail(pr, 0, "rank %u: no word from %s (rank 0) for %.0f s", pr->me, pr_rname(pr, 0, nm),
				pr->timeout_s);
		}
		return true;
	}
	return false;
}

/* After a failure: rank 0 tells the others whom it blames; another rank
 * tells rank 0 whom it suspects and waits (briefly) for the verdict, which
 * then replaces its own message, so that every rank names the same rank
 * (a rank that exits at once would look like the culprit). */
void pr_settle(struct fab_probe *pr)
{
	if (pr->settled)
		return;
	pr->settled = true;
	if (pr->me == 0) {
		abort_job(pr, pr->suspect);
		return;
	}
	struct conn *c = ctl_of(pr, 0);
	if (pr->aborted == NO_RANK && c->fd >= 0) {
		pr_enqueue_ctrl(pr, 0, F_STUCK, pr->suspect);
		double end = pr_now_s() + FAB_MIN(2.0, pr->timeout_s);
		pr->ctl_only = true;
		while (pr->aborted == NO_RANK && c->fd >= 0 && pr_now_s() < end)
			pr_progress(pr, 50);
		pr->ctl_only = false;
	}
	if (pr->aborted != NO_RANK && pr->err) {
		char nm[64];
		if (pr->aborted < pr->n)
			snprintf(pr->err->msg, sizeof pr->err->msg, "rank %u: the job failed: rank 0 lost %s", pr->me,
				 pr_rname(pr, pr->aborted, nm));
		else
			snprintf(pr->err->msg, sizeof pr->err->msg, "rank %u: the job failed at rank 0", pr->me);
	}
}

/* Everyone has finished the previous operation: after this, the sockets
 * carry only the next one.  ctl_only: read nothing but control frames (a
 * raw test follows, or runs).  No clock of its own: a rank may take long
 * to arrive as long as it beats; one that stops beating fails the job. */
int pr_barrier(struct fab_probe *pr, uint32_t value, bool ctl_only, struct fab_err *err)
{
	pr->err = err;
	pr->go = false;
	pr->ctl_only = ctl_only;
	pr->wait_since = pr_now_s();
	if (pr->me)
		pr_enqueue_ctrl(pr, 0, F_DONE, value);
	for (;;) {
		if (pr->me == 0 && !pr->go) {
			uint32_t j = 1;
			while (j < pr->n && pr->dcount[j] > pr->gen)
				j++;
			if (j == pr->n) {
				pr->gen++;
				for (j = 1; j < pr->n; j++)
					pr_enqueue_ctrl(pr, j, F_GO, 0);
				pr->go = true;
			}
		}
		/* done before a failure check: a rank may leave once it has GO */
		if (pr->go && queues_empty(pr))
			break;
		if (pr_check_peers(pr))
			break;
		pr_progress(pr, 100);
	}
	pr->ctl_only = false;
	if (pr->failed)
		pr_settle(pr);
	return pr->failed ? FAB_EIO : 0;
}

int fab_probe_agree_min(struct fab_probe *pr, uint32_t mine, uint32_t *out, struct fab_err *err)
{
	pr->err = err;
	pr->failed = 0;
	pr->ctl_only = true;
	pr->wait_since = pr_now_s();
	if (pr->me == 0) {
		while (pr->min_got < pr->n - 1 && !pr_check_peers(pr))
			pr_progress(pr, 100);
		pr->min_val = pr->min_got ? FAB_MIN(pr->min_val, mine) : mine;
		for (uint32_t j = 1; j < pr->n && !pr->failed; j++)
			pr_enqueue_ctrl(pr, j, F_MIN, pr->min_val);
		while (!pr->failed && !queues_empty(pr) && !pr_check_peers(pr))
			pr_progress(pr, 100);
	} else {
		pr_enqueue_ctrl(pr, 0, F_MIN, mine);
		while (!pr->min_done && !pr_check_peers(pr))
			pr_progress(pr, 100);
	}
	pr->ctl_only = false;
	if (pr->failed) {
		pr_settle(pr);
		return FAB_EIO;
	}
	*out = pr->min_val;
	pr->min_val = pr->min_got = 0;
	pr->min_done = false;
	return 0;
}
