/*
 * p2p.c - perftest-style point-to-point tests: latency (ping-pong) and
 * bandwidth (one way, bidirectional) between rank 0 and each rank in turn,
 * raw bytes on the data connections between control-only barriers.
 */
#include "probe_int.h"

/* ---- point-to-point and matrix tests: raw bytes on the data connections ---- */

/* Moves slen bytes to the peer and rlen from it at once over its first nc
 * data connections (slice k of each on connection k).  0, or -1 when a
 * connection breaks or the deadline passes; *t_rx: when the last byte came
 * in (from the call). */
int pr_xfer(struct fab_probe *pr, uint32_t peer, uint32_t nc, const uint8_t *sbuf, size_t slen, uint8_t *rbuf,
	    size_t rlen, double deadline, double *t_rx)
{
	size_t sent[FAB_PROBE_MAX_CONNS] = {0}, got[FAB_PROBE_MAX_CONNS] = {0}, sleft = slen, rleft = rlen;
	struct pollfd pf[FAB_PROBE_MAX_CONNS];
	double t0 = pr_now_s();
	for (uint32_t k = 0; k < nc; k++)
		if (C(pr, peer, 1 + k)->fd < 0)
			return -1;
	while (sleft || rleft) {
		pr_beat(pr);
		for (uint32_t k = 0; k < nc; k++) {
			size_t sl = slen * (k + 1) / nc - slen * k / nc, rl = rlen * (k + 1) / nc - rlen * k / nc;
			pf[k] = (struct pollfd){C(pr, peer, 1 + k)->fd,
						(short)((sent[k] < sl ? POLLOUT : 0) | (got[k] < rl ? POLLIN : 0)), 0};
		}
		if (pr->busy) {
			/* spin: try every socket, never sleep */
			for (uint32_t k = 0; k < nc; k++)
				pf[k].revents = pf[k].events;
			if (pr_now_s() > deadline)
				return -1;
		} else {
			int ms = (int)ceil((deadline - pr_now_s()) * 1000);
			if (ms <= 0)
				return -1;
			int r = poll(pf, nc, FAB_MIN(ms, (int)(pr->beat_iv * 1000) + 1));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -1;
			if (r == 0)
				continue; /* time to beat; the deadline is checked above */
		}
		for (uint32_t k = 0; k < nc; k++) {
			if (pf[k].revents & (POLLERR | POLLNVAL))
				return -1;
			size_t so = slen * k / nc, sl = slen * (k + 1) / nc - so;
			size_t ro = rlen * k / nc, rl = rlen * (k + 1) / nc - ro;
			ssize_t n;
			if (sent[k] < sl && (pf[k].revents & POLLOUT)) {
				n = send(pf[k].fd, sbuf + so + sent[k], sl - sent[k], MSG_NOSIGNAL | MSG_DONTWAIT);
				if (n > 0) {
					sent[k] += (size_t)n;
					sleft -= (size_t)n;
				} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
					return -1;
				}
			}
			if (got[k] < rl && (pf[k].revents & (POLLIN | POLLHUP))) {
				n = recv(pf[k].fd, rbuf + ro + got[k], rl - got[k], MSG_DONTWAIT);
				if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
					return -1;
				if (n > 0 && (got[k] += (size_t)n, rleft -= (size_t)n) == 0 && t_rx)
					*t_rx = pr_now_s() - t0;
			}
		}
	}
	return 0;
}

int pr_raw_barrier(struct fab_probe *pr, struct fab_err *err)
{
	return pr_barrier(pr, 0, true, err);
}

int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters, uint32_t warmup,
		  double *out, struct fab_err *err)
{
	if (!bytes || !iters)
		return fab_err_set(err, FAB_EINVAL, "a point-to-point test needs at least 1 byte and 1 iteration");
	pr->turn = NO_RANK; /* a call may come with the barrier's GO */
	int rc = pr_raw_barrier(pr, err);
	if (rc)
		return rc;
	uint8_t *sbuf = fab_xcalloc(bytes, 1), *rbuf = fab_xcalloc(bytes, 1), ack = 1;
	double to = pr->timeout_s;
	uint32_t bad_peer = NO_RANK;
	pr->ctl_only = true;
	pr->wait_since = pr_now_s();
	for (uint32_t p = 1; p < pr->n && bad_peer == NO_RANK && !pr->failed; p++) {
		if (pr->me != 0 && pr->me != p)
			continue;
		/* rank 0 calls each rank when its turn comes: the wait for it
		 * may be long, and is watched by the heartbeats */
		if (pr->me == 0) {
			pr_enqueue_ctrl(pr, p, F_TURN, p);
			pr_flush_out(pr, ctl_of(pr, p));
		} else {
			while (pr->turn != p && !pr_check_peers(pr))
				pr_progress(pr, 100);
			if (pr->failed)
				break;
		}
		uint32_t peer = pr->me == 0 ? p : 0;
		bool lead = pr->me == 0, bad = false;
		if (kind == FAB_PROBE_LATENCY) {
			/* ping-pong: half the round trip is the one-way latency */
			for (uint32_t it = 0; it < warmup + iters && !bad; it++) {
				double t0 = pr_now_s(), end = t0 + to;
				bad = lead ? pr_xfer(pr, peer, 1, sbuf, bytes, NULL, 0, end, NULL) ||
						pr_xfer(pr, peer, 1, NULL, 0, rbuf, bytes, end, NULL)
					   : pr_xfer(pr, peer, 1, NULL, 0, rbuf, bytes, end, NULL) ||
						pr_xfer(pr, peer, 1, sbuf, bytes, NULL, 0, end, NULL);
				if (lead && it >= warmup)
					out[(size_t)(p - 1) * iters + it - warmup] = (pr_now_s() - t0) / 2;
			}
		} else {
			/* streaming: the time from the first byte until the receiver
			 * acknowledges the last (bidirectional: both ways at once,
			 * until both have everything); warm-up acknowledged apart */
			bool bidir = kind == FAB_PROBE_BW_BIDIR;
			for (int phase = 0; phase < 2 && !bad; phase++) {
				uint32_t k = phase ? iters : warmup;
				if (!k)
					continue;
				double t0 = pr_now_s();
				for (uint32_t it = 0; it < k && !bad; it++) {
					bool tx = lead || bidir, rx = !lead || bidir;
					bad = pr_xfer(pr, peer, pr->nc, sbuf, tx ? bytes : 0, rbuf, rx ? bytes : 0,
						      pr_now_s() + to, NULL);
				}
				if (!bad)
					bad = pr_xfer(pr, peer, 1, &ack, lead && !bidir ? 0 : 1, rbuf,
						      lead || bidir ? 1 : 0, pr_now_s() + to, NULL);
				if (lead && phase)
					out[p - 1] = pr_now_s() - t0;
			}
		}
		if (bad)
			bad_peer = peer;
	}
	free(sbuf);
	free(rbuf);
	pr->ctl_only = false;
	if (bad_peer != NO_RANK) {
		char nm[64];
		pr_fail(pr, bad_peer, "rank %u: the %s test with %s failed (connection broke or no answer in %.0f s)",
			pr->me, kind == FAB_PROBE_LATENCY ? "latency" : "bandwidth", pr_rname(pr, bad_peer, nm), to);
	}
	if (pr->failed) {
		pr_settle(pr);
		return FAB_EIO;
	}
	return pr_raw_barrier(pr, err);
}
