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

/* 8 bytes, most significant first: the value of a double, or a count */
static void put_u64(uint8_t b[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}

static uint64_t get_u64(const uint8_t b[8])
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* The peak rate: the best over windows of consecutive arrivals holding at
 * least PEAK_WINDOW_BYTES (and at most PEAK_WINDOW_MSGS messages), so that
 * a receive buffer's worth of bytes already in the kernel, read at memory
 * speed, does not pass for the network's rate */
#define PEAK_WINDOW_BYTES (32.0 * 1024 * 1024)
#define PEAK_WINDOW_MSGS 4096u

struct peak {
	double t[PEAK_WINDOW_MSGS + 1]; /* the last arrivals, a ring */
	uint32_t w, n, head;            /* messages a window, arrivals held, next slot */
	double best;                    /* bytes/s; 0: no window yet */
};

static void peak_init(struct peak *pk, size_t bytes)
{
	double w = ceil(PEAK_WINDOW_BYTES / (double)bytes);
	pk->w = (uint32_t)FAB_MAX(1.0, FAB_MIN(w, (double)PEAK_WINDOW_MSGS));
	pk->n = pk->head = 0;
	pk->best = 0;
}

static void peak_arrival(struct peak *pk, double t, size_t bytes)
{
	uint32_t cap = pk->w + 1;
	pk->t[pk->head] = t;
	pk->head = (pk->head + 1) % cap;
	if (pk->n < cap)
		pk->n++;
	if (pk->n == cap) {
		double dt = t - pk->t[pk->head]; /* the oldest held */
		if (dt > 0)
			pk->best = FAB_MAX(pk->best, (double)bytes * pk->w / dt);
	}
}

/* The end of a batch of messages: the receiving side (both, both ways)
 * sends the best rate it has seen (bytes/s, 0: none yet); the other side
 * takes it (0 too for what is not a sane number from the peer).  True when
 * a connection broke. */
static bool batch_ack(struct fab_probe *pr, uint32_t peer, bool tx, bool rx, double mine, double *theirs, double to)
{
	uint8_t a[8], b[8];
	uint64_t v;
	memcpy(&v, &mine, sizeof v);
	put_u64(a, v);
	if (pr_xfer(pr, peer, 1, a, rx ? 8 : 0, b, tx ? 8 : 0, pr_now_s() + to, NULL))
		return true;
	if (tx) {
		v = get_u64(b);
		memcpy(theirs, &v, sizeof v);
		if (!isfinite(*theirs) || *theirs < 0 || *theirs > 1e15)
			*theirs = 0;
	}
	return false;
}

/* A time-based run's intervals at the lead, cut by the clock as iperf3's
 * timer cuts them: the first message to end at or past a boundary closes
 * the interval at that moment with the bytes of the messages ended in it.
 * The last interval runs to the end of the run (no sliver after it). */
struct ivclock {
	const struct fab_probe_p2p_run *run;
	uint32_t peer;
	double t0;    /* the run's start (pr_now_s) */
	double start; /* the open interval's start, from t0 */
	double next;  /* the boundary that closes it; 0: it runs to the end */
	double bytes; /* what ended in it */
};

static double ivclock_next(const struct fab_probe_p2p_run *run, double after)
{
	double iv = run->interval_s, b = (floor(after / iv + 1e-9) + 1) * iv;
	return b > run->duration_s - iv / 10 ? 0 : b;
}

static void ivclock_add(struct ivclock *c, double bytes)
{
	c->bytes += bytes;
	double now = pr_now_s() - c->t0;
	if (c->next > 0 && now >= c->next) {
		c->run->interval(c->run->ctx, c->peer, c->start, now, c->bytes);
		c->start = now;
		c->bytes = 0;
		c->next = ivclock_next(c->run, now);
	}
}

/* k messages of bytes one way (or both), striped over the pair's data
 * connections; the arrivals here go to pk (when set), each message's
 * bytes (both ways) to ic (when set) */
static bool batch(struct fab_probe *pr, uint32_t peer, bool tx, bool rx, size_t bytes, const uint8_t *sbuf,
		  uint8_t *rbuf, uint64_t k, double to, struct peak *pk, struct ivclock *ic)
{
	for (uint64_t it = 0; it < k; it++) {
		if (pr_xfer(pr, peer, pr->nc, sbuf, tx ? bytes : 0, rbuf, rx ? bytes : 0, pr_now_s() + to, NULL))
			return true;
		if (rx && pk)
			peak_arrival(pk, pr_now_s(), bytes);
		if (ic)
			ivclock_add(ic, (double)bytes * ((tx && rx) ? 2 : 1));
	}
	return false;
}

/* The most messages a time-based run's batch may announce: a bound on
 * what a peer can ask of this side */
#define MAX_BATCH ((uint64_t)1 << 32)

/* Streaming from rank 0 to peer (both ways with bidir): the warm-up, then
 * iters messages, or with run->duration_s batches of at most a quarter of
 * an interval each (half what is left near the end, so that the run ends
 * on time) until the time is up (the count of each announced first on the
 * first connection; 0 ends the run), reported by interval on a clock
 * (struct ivclock).  The time runs from the first byte until the receiver
 * acknowledges the last.  At the lead, res: the time, the peak rate
 * (summed over directions; the average when no window fits) and the
 * messages timed. */
static bool stream(struct fab_probe *pr, enum fab_probe_test kind, uint32_t peer, bool lead, size_t bytes,
		   const uint8_t *sbuf, uint8_t *rbuf, uint32_t iters, uint32_t warmup,
		   const struct fab_probe_p2p_run *run, double res[3])
{
	bool bidir = kind == FAB_PROBE_BW_BIDIR, tx = lead || bidir, rx = !lead || bidir;
	double to = pr->timeout_s, theirs = 0;
	double t_warm = pr_now_s();
	if (warmup &&
	    (batch(pr, peer, tx, rx, bytes, sbuf, rbuf, warmup, to, NULL, NULL) ||
	     batch_ack(pr, peer, tx, rx, 0, &theirs, to)))
		return true;
	double per = warmup ? (pr_now_s() - t_warm) / warmup : 0; /* seconds a message */
	bool timed = run && run->duration_s > 0;
	double iv = timed ? (run->interval_s > 0 ? run->interval_s : run->duration_s) : 0;
	double t0 = pr_now_s(), dir = bidir ? 2 : 1;
	struct ivclock clk = {run, peer, t0, 0, 0, 0}, *ic = NULL;
	if (lead && timed && run->interval) {
		clk.next = ivclock_next(run, 0);
		ic = &clk;
	}
	uint64_t total = 0;
	struct peak *pk = fab_xcalloc(1, sizeof *pk);
	peak_init(pk, bytes);
	bool bad = false;
	for (;;) {
		uint64_t k = iters;
		if (timed) {
			uint8_t c[8];
			if (lead) {
				double left = run->duration_s - (pr_now_s() - t0);
				double span = FAB_MIN(iv / 4, left > 4 * per && left > 1e-3 ? left / 2 : left);
				k = left <= 0 ? 0 : per > 0 ? (uint64_t)FAB_MAX(1.0, FAB_MIN(span / per, 1e9)) : 1;
				put_u64(c, k);
			}
			if ((bad = pr_xfer(pr, peer, 1, c, lead ? 8 : 0, c, lead ? 0 : 8, pr_now_s() + to, NULL)))
				break;
			if (!lead && (k = get_u64(c)) > MAX_BATCH) {
				bad = true; /* not what a rank 0 sends */
				break;
			}
			if (!k)
				break;
		}
		double tb = pr_now_s();
		if ((bad = batch(pr, peer, tx, rx, bytes, sbuf, rbuf, k, to, pk, ic) ||
			     batch_ack(pr, peer, tx, rx, pk->best, &theirs, to)))
			break;
		total += k;
		per = (pr_now_s() - tb) / (double)k;
		if (!timed)
			break;
	}
	/* the last interval: to the end of the run (the intervals add up to
	 * the row) */
	double t_end = pr_now_s() - t0;
	if (ic && !bad)
		run->interval(run->ctx, peer, clk.start, t_end, clk.bytes);
	if (lead && !bad) {
		res[0] = t_end;
		double avg = res[0] > 0 ? (double)bytes * (double)total * dir / res[0] : 0;
		double peak = theirs + (bidir ? pk->best : 0);
		res[1] = FAB_MAX(peak, avg); /* no window, or none better: the average */
		res[2] = (double)total;
	}
	free(pk);
	return bad;
}

int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters, uint32_t warmup,
		  const struct fab_probe_p2p_run *run, double *out, struct fab_err *err)
{
	if (!bytes || (!iters && !(run && run->duration_s > 0)))
		return fab_err_set(err, FAB_EINVAL, "a point-to-point test needs at least 1 byte and 1 iteration");
	pr->turn = NO_RANK; /* a call may come with the barrier's GO */
	int rc = pr_raw_barrier(pr, err);
	if (rc)
		return rc;
	uint8_t *sbuf = fab_xcalloc(bytes, 1), *rbuf = fab_xcalloc(bytes, 1);
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
			bad = stream(pr, kind, peer, lead, bytes, sbuf, rbuf, iters, warmup, run,
				     out + (size_t)(p - 1) * 3);
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
