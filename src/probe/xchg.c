/*
 * xchg.c - every rank's message to every other rank, at once: the
 * simulator's ranks meet this way at each window's end (src/packet/ranks.c
 * through the facade).  A message travels on the first data connection to
 * its rank as an 8-byte header (a tag every rank gives alike, the length)
 * and its bytes.  What comes in is bounded before it is taken: a tag not
 * the one expected, a length above the caller's limit, a closed connection
 * or a peer silent for the probe's timeout fail the exchange, naming the
 * rank.
 */
#include "probe_int.h"

struct xpeer {
	uint32_t hdr_out[2];
	size_t sent;      /* of header + payload */
	uint8_t hin[8];   /* the incoming header */
	size_t hgot, got; /* of the header, of the payload */
	bool in_done;
};

static bool out_step(struct conn *c, struct xpeer *x, const struct fab_probe_msg *m, bool *broken)
{
	size_t total = 8 + m->len;
	if (x->sent == total)
		return false;
	struct iovec iov[2];
	int niov = 0;
	if (x->sent < 8)
		iov[niov++] = (struct iovec){(uint8_t *)x->hdr_out + x->sent, 8 - x->sent};
	size_t poff = x->sent > 8 ? x->sent - 8 : 0;
	if (poff < m->len)
		iov[niov++] = (struct iovec){m->data + poff, m->len - poff};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
	ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k < 0 && errno != EAGAIN && errno != EINTR)
		*broken = true;
	if (k <= 0)
		return false;
	x->sent += (size_t)k;
	return true;
}

/* 1: moved, 0: nothing yet, -1: closed or refused (err set) */
static int in_step(struct fab_probe *pr, struct conn *c, struct xpeer *x, uint32_t tag, size_t max,
		   struct fab_probe_msg *m, struct fab_err *err)
{
	char nm[64];
	ssize_t k;
	if (x->hgot < 8) {
		k = recv(c->fd, x->hin + x->hgot, 8 - x->hgot, MSG_DONTWAIT);
	} else {
		k = recv(c->fd, m->data + x->got, m->len - x->got, MSG_DONTWAIT);
	}
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
		fab_err_set(err, FAB_EIO, "rank %u: the connection to %s %s", pr->me, pr_rname(pr, c->peer, nm),
			    k == 0 ? "closed (it died?)" : "broke");
		return -1;
	}
	if (k < 0)
		return 0;
	if (x->hgot < 8) {
		x->hgot += (size_t)k;
		if (x->hgot < 8)
			return 1;
		uint32_t h[2];
		memcpy(h, x->hin, sizeof h);
		if (h[0] != tag || h[1] > max) {
			fab_err_set(err, FAB_EIO,
				    "rank %u: %s sent a message out of step (tag %u, %u bytes; expected tag %u, at "
				    "most %zu bytes)",
				    pr->me, pr_rname(pr, c->peer, nm), h[0], h[1], tag, max);
			return -1;
		}
		m->len = h[1];
		m->data = fab_xcalloc(m->len ? m->len : 1, 1);
	} else {
		x->got += (size_t)k;
	}
	x->in_done = x->hgot == 8 && x->got == m->len;
	return 1;
}

int fab_probe_exchange(struct fab_probe *pr, uint32_t tag, const struct fab_probe_msg *out, struct fab_probe_msg *in,
		       size_t max, struct fab_err *err)
{
	uint32_t n = pr->n;
	struct xpeer *x = fab_xcalloc(n, sizeof *x);
	for (uint32_t j = 0; j < n; j++) {
		in[j] = (struct fab_probe_msg){NULL, 0};
		x[j].hdr_out[0] = tag;
		x[j].hdr_out[1] = (uint32_t)out[j].len;
		if (j == pr->me) {
			x[j].sent = 8 + out[j].len;
			x[j].in_done = true;
		}
	}
	int rc = 0;
	double last = pr_now_s();
	char nm[64];
	for (;;) {
		uint32_t np = 0, left = 0;
		for (uint32_t j = 0; j < n; j++) {
			if (j == pr->me)
				continue;
			struct conn *c = C(pr, j, 1);
			bool send = x[j].sent < 8 + out[j].len;
			if (out[j].len > UINT32_MAX || c->fd < 0) {
				fab_err_set(err, FAB_EIO, "rank %u: no connection to %s", pr->me, pr_rname(pr, j, nm));
				rc = -1;
				goto done;
			}
			if (!send && x[j].in_done)
				continue;
			left++;
			pr->pf[np] = (struct pollfd){c->fd, (short)((x[j].in_done ? 0 : POLLIN) | (send ? POLLOUT : 0)),
						     0};
			pr->pfk[np++] = j;
		}
		if (!left)
			break;
		int wait_ms = (int)((last + pr->timeout_s - pr_now_s()) * 1000);
		if (wait_ms <= 0) {
			uint32_t j = pr->pfk[0];
			fab_err_set(err, FAB_EIO, "rank %u: nothing from %s for %.0f s", pr->me, pr_rname(pr, j, nm),
				    pr->timeout_s);
			rc = -1;
			goto done;
		}
		if (poll(pr->pf, np, wait_ms) <= 0)
			continue;
		for (uint32_t i = 0; i < np; i++) {
			uint32_t j = pr->pfk[i];
			struct conn *c = C(pr, j, 1);
			short re = pr->pf[i].revents;
			bool broken = false;
			if ((re & POLLOUT) && out_step(c, &x[j], &out[j], &broken))
				last = pr_now_s();
			if (broken) {
				fab_err_set(err, FAB_EIO, "rank %u: the connection to %s broke", pr->me,
					    pr_rname(pr, j, nm));
				rc = -1;
				goto done;
			}
			if (re & (POLLIN | POLLHUP | POLLERR)) {
				int k = in_step(pr, c, &x[j], tag, max, &in[j], err);
				if (k < 0) {
					rc = -1;
					goto done;
				}
				if (k > 0)
					last = pr_now_s();
			}
		}
	}
done:
	if (rc)
		for (uint32_t j = 0; j < n; j++) {
			free(in[j].data);
			in[j] = (struct fab_probe_msg){NULL, 0};
		}
	free(x);
	return rc;
}
