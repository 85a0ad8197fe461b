/*
 * probe.c - rendezvous, the TCP mesh and the schedule executor of probe.h.
 *
 * Every message on a connection carries an 8-byte header: the id of the
 * receive step it is for (the schedule is the same on every rank) and its
 * length.  Sends queue per peer and go out as the socket takes them; a send
 * is done when the kernel has its last byte.  Received payloads wait in an
 * inbox until their receive step may run.  One poll loop drives it all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../coll/exec.h"
#include "probe.h"

struct hello {
	uint32_t rank;
	uint16_t port;
	uint16_t pad;
	uint64_t token;
};

struct addr {
	uint32_t ip; /* network order */
	uint16_t port;
	uint16_t pad;
};

struct out_msg {
	struct out_msg *next;
	uint32_t step;      /* the send step */
	uint32_t hdr[2];    /* receive step, length */
	const uint8_t *data; /* the payload, in the rank's buffer: the schedule
			      * keeps it unchanged until the send is done */
	size_t len, sent;   /* header + payload */
};

struct in_state {
	uint8_t hdr[8];
	size_t hgot;
	uint32_t step;
	uint32_t len, got;
	uint8_t *buf;
};

#define STEP_DONE 0xfffffffeu /* barrier: a rank finished (to rank 0) */
#define STEP_GO 0xffffffffu   /* barrier: everyone finished (from rank 0) */
#define STEP_REP_LAT 0xfffffffcu /* matrix: a rank's measurement, to rank 0 */
#define STEP_REP_BW 0xfffffffdu
#define IS_CTRL(x) ((x) >= STEP_REP_LAT)

struct fab_probe {
	uint32_t n, me;
	uint32_t dones;       /* barrier: DONE frames rank 0 has seen */
	uint32_t closed;      /* peers that closed their connection */
	uint64_t done_sum;    /* barrier: the values they carried */
	bool go;              /* barrier: GO seen */
	bool raw_next;        /* a raw test follows the barrier: ranks other
			       * than 0 read only rank 0's connection */
	uint32_t *rep;        /* matrix, rank 0: [2n] reported latency, rx time (ns) */
	uint32_t *ip;         /* every rank's address, network order */
	int *fd;
	uint64_t token;
	double timeout_s;
	struct out_msg **qh, **qt;
	struct in_state *in;
	/* the operation in progress */
	struct fab_exec ex;
	const struct fab_sched *s;
	uint8_t **inbox;
	float *buf[FAB_NBUF];
	uint32_t mine_left;
	struct fab_err *err;
	int failed;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int full_io(int fd, void *buf, size_t len, bool wr, double timeout_s)
{
	uint8_t *p = buf;
	double end = now_s() + timeout_s;
	while (len) {
		struct pollfd pf = {fd, wr ? POLLOUT : POLLIN, 0};
		int ms = (int)((end - now_s()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) <= 0)
			return -1;
		ssize_t k = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (k <= 0) {
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			return -1;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static void tune(int fd)
{
	int one = 1, big = 8 << 20;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
}

static int listen_any(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(*port)};
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	socklen_t al = sizeof a;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(uint32_t ip, uint16_t port, double timeout_s)
{
	double end = now_s() + timeout_s;
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
		a.sin_addr.s_addr = ip;
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof a))
			return fd;
		if (fd >= 0)
			close(fd);
		if (now_s() > end)
			return -1;
		usleep(20000); /* rank 0 may not listen yet */
	}
}

/* Accepts one connection that presents the token; refuses (and logs)
 * others, and goes on. */
static int accept_checked(int lfd, uint64_t token, struct hello *h, double timeout_s)
{
	double end = now_s() + timeout_s;
	for (;;) {
		struct pollfd pf = {lfd, POLLIN, 0};
		int ms = (int)((end - now_s()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) <= 0)
			return -1;
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		int fd = accept(lfd, (struct sockaddr *)&a, &al);
		if (fd < 0)
			continue;
		if (full_io(fd, h, sizeof *h, false, 5) || h->token != token) {
			fprintf(stderr, "fabscope: refused a connection from %s without the job token\n",
				inet_ntoa(a.sin_addr));
			close(fd);
			continue;
		}
		return fd;
	}
}

struct fab_probe *fab_probe_connect(const struct fab_probe_params *p, struct fab_err *err)
{
	/* message buffers come and go by the thousand: keep freed memory mapped,
	 * or every receive pays its page faults again */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	struct fab_probe *pr = fab_xcalloc(1, sizeof *pr);
	pr->n = p->nranks;
	pr->me = p->rank;
	pr->token = p->token;
	pr->timeout_s = p->timeout_s;
	pr->fd = fab_xcalloc(pr->n, sizeof *pr->fd);
	for (uint32_t i = 0; i < pr->n; i++)
		pr->fd[i] = -1;
	uint16_t dport = 0;
	int dfd = listen_any(&dport);
	struct addr *tab = fab_xcalloc(pr->n, sizeof *tab);
	uint32_t master_ip = inet_addr(p->master);
	if (dfd < 0) {
		fab_err_set(err, FAB_EIO, "rank %u: cannot open a data socket: %s", pr->me, strerror(errno));
		goto fail;
	}
	/* rendezvous */
	if (pr->me == 0) {
		int rfd = p->rendezvous_fd;
		uint16_t mp = p->master_port;
		if (rfd < 0 && (rfd = listen_any(&mp)) < 0) {
			fab_err_set(err, FAB_EIO, "rank 0: cannot listen on port %u: %s", p->master_port,
				    strerror(errno));
			goto fail;
		}
		int *rc = fab_xcalloc(pr->n, sizeof *rc);
		tab[0] = (struct addr){master_ip, dport, 0};
		for (uint32_t k = 1; k < pr->n; k++) {
			struct hello h;
			int fd = accept_checked(rfd, pr->token, &h, pr->timeout_s);
			if (fd < 0 || h.rank == 0 || h.rank >= pr->n || rc[h.rank]) {
				fab_err_set(err, FAB_EIO, "rank 0: %u of %u ranks joined in %.0f s", k, pr->n,
					    pr->timeout_s);
				if (fd >= 0)
					close(fd);
				for (uint32_t i = 1; i < pr->n; i++)
					if (rc[i])
						close(rc[i]);
				free(rc);
				goto fail;
			}
			struct sockaddr_in a;
			socklen_t al = sizeof a;
			getpeername(fd, (struct sockaddr *)&a, &al);
			tab[h.rank] = (struct addr){a.sin_addr.s_addr, h.port, 0};
			rc[h.rank] = fd;
		}
		for (uint32_t i = 1; i < pr->n; i++) {
			full_io(rc[i], tab, pr->n * sizeof *tab, true, pr->timeout_s);
			close(rc[i]);
		}
		free(rc);
		if (p->rendezvous_fd < 0)
			close(rfd);
	} else {
		int fd = connect_to(master_ip, p->master_port, pr->timeout_s);
		struct hello h = {pr->me, dport, 0, pr->token};
		if (fd < 0 || full_io(fd, &h, sizeof h, true, pr->timeout_s) ||
		    full_io(fd, tab, pr->n * sizeof *tab, false, pr->timeout_s)) {
			fab_err_set(err, FAB_EIO, "rank %u: rendezvous with rank 0 at %s:%u failed", pr->me,
				    p->master, p->master_port);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		close(fd);
	}
	/* the mesh: connect to lower ranks, accept higher ones */
	for (uint32_t j = 0; j < pr->me; j++) {
		int fd = connect_to(tab[j].ip, tab[j].port, pr->timeout_s);
		struct hello h = {pr->me, 0, 0, pr->token};
		if (fd < 0 || full_io(fd, &h, sizeof h, true, pr->timeout_s)) {
			fab_err_set(err, FAB_EIO, "rank %u: cannot reach rank %u", pr->me, j);
			goto fail;
		}
		pr->fd[j] = fd;
	}
	for (uint32_t k = pr->me + 1; k < pr->n; k++) {
		struct hello h;
		int fd = accept_checked(dfd, pr->token, &h, pr->timeout_s);
		if (fd < 0 || h.rank <= pr->me || h.rank >= pr->n || pr->fd[h.rank] >= 0) {
			fab_err_set(err, FAB_EIO, "rank %u: the mesh did not complete", pr->me);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		pr->fd[h.rank] = fd;
	}
	for (uint32_t j = 0; j < pr->n; j++)
		if (pr->fd[j] >= 0) {
			tune(pr->fd[j]);
			fcntl(pr->fd[j], F_SETFL, fcntl(pr->fd[j], F_GETFL) | O_NONBLOCK);
		}
	close(dfd);
	pr->ip = fab_xcalloc(pr->n, sizeof *pr->ip);
	for (uint32_t j = 0; j < pr->n; j++)
		pr->ip[j] = tab[j].ip;
	free(tab);
	pr->qh = fab_xcalloc(pr->n, sizeof *pr->qh);
	pr->qt = fab_xcalloc(pr->n, sizeof *pr->qt);
	pr->in = fab_xcalloc(pr->n, sizeof *pr->in);
	return pr;
fail:
	if (dfd >= 0)
		close(dfd);
	free(tab);
	fab_probe_close(pr);
	return NULL;
}

void fab_probe_close(struct fab_probe *pr)
{
	if (!pr)
		return;
	for (uint32_t i = 0; i < pr->n; i++)
		if (pr->fd[i] >= 0)
			close(pr->fd[i]);
	free(pr->fd);
	free(pr->qh);
	free(pr->qt);
	free(pr->in);
	free(pr->ip);
	free(pr);
}

void fab_probe_rank_name(const struct fab_probe *pr, uint32_t rank, char *buf, size_t len)
{
	struct in_addr a = {rank < pr->n && pr->ip ? pr->ip[rank] : 0};
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a, ip, sizeof ip);
	snprintf(buf, len, "rank%u@%s", rank, ip);
}

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
		if (pr->qt[st->peer])
			pr->qt[st->peer]->next = m;
		else
			pr->qh[st->peer] = m;
		pr->qt[st->peer] = m;
		return;
	}
	case FAB_STEP_COPY:
		memmove(dst, src, st->bytes);
		break;
	case FAB_STEP_RECV:
	case FAB_STEP_RECV_REDUCE: {
		float *d = (float *)dst, *in = (float *)pr->inbox[step];
		for (uint64_t i = 0; i < st->bytes / 4; i++)
			d[i] = st->kind == FAB_STEP_RECV ? in[i] : d[i] + in[i];
		free(pr->inbox[step]);
		pr->inbox[step] = NULL;
		break;
	}
	}
	pr->mine_left--;
	fab_exec_done(ex, step);
}

/* Moves bytes on every socket that can; returns whether anything moved. */
static bool progress(struct fab_probe *pr, int wait_ms)
{
	struct pollfd *pf = fab_xcalloc(pr->n, sizeof *pf);
	for (uint32_t j = 0; j < pr->n; j++) {
		pf[j].fd = pr->raw_next && pr->me && j ? -1 : pr->fd[j];
		pf[j].events = (short)(POLLIN | (pr->qh[j] ? POLLOUT : 0));
	}
	bool moved = false;
	if (poll(pf, pr->n, wait_ms) <= 0) {
		free(pf);
		return false;
	}
	for (uint32_t j = 0; j < pr->n; j++) {
		if (pf[j].fd < 0)
			continue;
		if (pf[j].revents & (POLLERR | POLLNVAL)) {
			fab_err_set(pr->err, FAB_EIO, "rank %u: the connection to rank %u broke", pr->me, j);
			pr->failed = 1;
			break;
		}
		while ((pf[j].revents & POLLOUT) && pr->qh[j]) {
			struct out_msg *m = pr->qh[j];
			struct iovec iov[2];
			int niov = 0;
			if (m->sent < 8)
				iov[niov++] = (struct iovec){(uint8_t *)m->hdr + m->sent, 8 - m->sent};
			size_t poff = m->sent > 8 ? m->sent - 8 : 0;
			if (m->len > 8 && poff < m->len - 8)
				iov[niov++] = (struct iovec){(uint8_t *)m->data + poff, m->len - 8 - poff};
			struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
			ssize_t k = sendmsg(pr->fd[j], &mh, MSG_NOSIGNAL);
			if (k <= 0)
				break;
			moved = true;
			m->sent += (size_t)k;
			if (m->sent < m->len)
				break;
			pr->qh[j] = m->next;
			if (!pr->qh[j])
				pr->qt[j] = NULL;
			if (!IS_CTRL(m->step)) {
				pr->mine_left--;
				fab_exec_done(&pr->ex, m->step);
			}
			free(m);
		}
		while (pf[j].revents & POLLIN) {
			struct in_state *is = &pr->in[j];
			ssize_t k;
			if (is->hgot < 8) {
				k = recv(pr->fd[j], is->hdr + is->hgot, 8 - is->hgot, 0);
				if (k <= 0) {
					if (k == 0) {
						/* a failure only where something was still due from it */
						if (pr->s && pr->ex.started && pr->mine_left) {
							fab_err_set(pr->err, FAB_EIO,
								    "rank %u: rank %u closed its connection", pr->me, j);
							pr->failed = 1;
						}
						close(pr->fd[j]);
						pr->fd[j] = -1;
						pr->closed++;
					}
					break;
				}
				moved = true;
				is->hgot += (size_t)k;
				if (is->hgot < 8)
					continue;
				uint32_t hdr[2];
				memcpy(hdr, is->hdr, 8);
				is->step = hdr[0];
				is->len = hdr[1];
				is->got = 0;
				if (IS_CTRL(is->step)) {
					if (is->step == STEP_REP_LAT || is->step == STEP_REP_BW) {
						if (pr->rep)
							pr->rep[2 * j + (is->step == STEP_REP_BW)] = is->len;
					} else if (is->step == STEP_DONE) {
						pr->dones++;
						pr->done_sum += is->len;
					}
					is->hgot = 0;
					if (is->step == STEP_GO) {
						/* what follows GO may be a raw point-to-point
						 * test (fab_probe_p2p): not ours to read here */
						pr->go = true;
						break;
					}
					continue;
				}
				is->buf = malloc(is->len ? is->len : 1); /* every byte is written */
				if (!is->buf)
					abort();
				if (!pr->s || is->step >= pr->s->nsteps) {
					fab_err_set(pr->err, FAB_EIO, "rank %u: rank %u sent a message for no step",
						    pr->me, j);
					pr->failed = 1;
					break;
				}
			}
			if (is->got < is->len) {
				k = recv(pr->fd[j], is->buf + is->got, is->len - is->got, 0);
				if (k <= 0)
					break;
				moved = true;
				is->got += (uint32_t)k;
			}
			if (is->got == is->len) {
				pr->inbox[is->step] = is->buf;
				is->buf = NULL;
				is->hgot = 0;
				fab_exec_arrived(&pr->ex, is->step);
			}
		}
	}
	free(pf);
	if (pr->s && pr->ex.started)
		fab_exec_pump(&pr->ex);
	return moved;
}

static void enqueue_ctrl(struct fab_probe *pr, uint32_t peer, uint32_t what, uint32_t value)
{
	struct out_msg *m = fab_xcalloc(1, sizeof *m);
	m->step = what;
	m->len = 8;
	m->hdr[0] = what;
	m->hdr[1] = value;
	if (pr->qt[peer])
		pr->qt[peer]->next = m;
	else
		pr->qh[peer] = m;
	pr->qt[peer] = m;
}

static bool queues_empty(const struct fab_probe *pr)
{
	for (uint32_t j = 0; j < pr->n; j++)
		if (pr->qh[j])
			return false;
	return true;
}

/* Everyone has finished the previous operation: after this, the sockets
 * carry only the next one. */
static int barrier(struct fab_probe *pr, uint32_t value, struct fab_err *err)
{
	pr->err = err;
	pr->go = false;
	if (pr->me)
		enqueue_ctrl(pr, 0, STEP_DONE, value);
	double last = now_s();
	while (!pr->failed) {
		if (pr->me == 0 && pr->dones >= pr->n - 1 && !pr->go) {
			pr->dones -= pr->n - 1;
			for (uint32_t j = 1; j < pr->n; j++)
				enqueue_ctrl(pr, j, STEP_GO, 0);
			pr->go = true;
		}
		if (pr->go && queues_empty(pr))
			return 0;
		if ((pr->me == 0 && pr->closed) || (pr->me && pr->fd[0] < 0))
			return fab_err_set(err, FAB_EIO, "rank %u: a rank left before the barrier (it died?)", pr->me);
		if (progress(pr, 100))
			last = now_s();
		else if (now_s() - last > pr->timeout_s)
			return fab_err_set(err, FAB_EIO, "rank %u: a barrier waited %.0f s (a rank died or hangs)",
					   pr->me, pr->timeout_s);
	}
	return FAB_EIO;
}

int fab_probe_coll(struct fab_probe *pr, const struct fab_coll_args *args,
		   struct fab_probe_result *res, struct fab_err *err)
{
	struct fab_sched s;
	if (fab_coll_build(args, &s, err))
		return FAB_EINVAL;
	/* ready to take the operation's messages before the opening barrier:
	 * a faster rank may send as soon as it is through */
	pr->s = &s;
	pr->err = err;
	pr->failed = 0;
	for (int b = 0; b < FAB_NBUF; b++)
		pr->buf[b] = fab_xcalloc(s.buf_bytes[b] / 4 + 1, sizeof(float));
	for (uint64_t i = 0; i < s.buf_bytes[FAB_BUF_IN] / 4; i++)
		pr->buf[FAB_BUF_IN][i] = (float)fab_coll_input_value(pr->me, i);
	pr->inbox = fab_xcalloc(s.nsteps + 1, sizeof *pr->inbox);
	pr->mine_left = 0;
	for (uint32_t i = 0; i < s.nsteps; i++)
		pr->mine_left += s.steps[i].rank == pr->me;
	struct fab_exec_ops ops = {on_start, on_start};
	fab_exec_init(&pr->ex, &s, &ops, pr);
	int rc = barrier(pr, 0, err);
	pr->done_sum = 0;
	double t0 = now_s(), last = t0;
	if (!rc)
		fab_exec_start(&pr->ex);
	while (!rc && pr->mine_left && !pr->failed) {
		if (progress(pr, 100))
			last = now_s();
		else if (now_s() - last > pr->timeout_s) {
			fab_err_set(err, FAB_EIO, "rank %u: no progress for %.0f s (a peer died or hangs)",
				    pr->me, pr->timeout_s);
			rc = FAB_EIO;
			break;
		}
	}
	if (pr->failed)
		rc = FAB_EIO;
	res->time_s = now_s() - t0;
	res->wrong = 0;
	uint64_t size, inb, outb;
	fab_coll_sizes(args->op, args->count, args->elem_bytes, args->nranks, &size, &inb, &outb);
	for (uint64_t i = 0; !rc && i < outb / 4; i++) {
		int64_t want;
		if (!fab_coll_expected(args, pr->me, i, &want))
			break;
		res->wrong += pr->buf[FAB_BUF_OUT][i] != (float)want;
	}
	fab_exec_free(&pr->ex);
	for (uint32_t i = 0; i < s.nsteps; i++)
		free(pr->inbox[i]);
	free(pr->inbox);
	for (uint32_t j = 0; j < pr->n; j++) {
		while (pr->qh[j]) {
			struct out_msg *m = pr->qh[j];
			pr->qh[j] = m->next;
			free(m);
		}
		pr->qt[j] = NULL;
		free(pr->in[j].buf);
		memset(&pr->in[j], 0, sizeof pr->in[j]);
	}
	for (int b = 0; b < FAB_NBUF; b++)
		free(pr->buf[b]);
	pr->s = NULL;
	fab_sched_free(&s);
	if (!rc) {
		/* rank 0 learns everyone's wrong elements with the closing barrier */
		rc = barrier(pr, (uint32_t)FAB_MIN(res->wrong, UINT32_MAX), err);
		if (pr->me == 0)
			res->wrong += pr->done_sum;
	}
	return rc;
}

/* both directions at once: returns the time until the last byte came in */
static int exchange(int fd, const uint8_t *sbuf, uint8_t *rbuf, size_t len, double timeout_s, double *t_rx)
{
	size_t sent = 0, got = 0;
	double t0 = now_s(), end = t0 + timeout_s;
	while (sent < len || got < len) {
		struct pollfd pf = {fd, (short)((sent < len ? POLLOUT : 0) | (got < len ? POLLIN : 0)), 0};
		int ms = (int)((end - now_s()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) <= 0)
			return -1;
		if ((pf.revents & (POLLERR | POLLNVAL)) || ((pf.revents & POLLHUP) && !(pf.revents & POLLIN)))
			return -1;
		ssize_t k;
		if (sent < len && (pf.revents & POLLOUT)) {
			k = send(fd, sbuf + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0)
				sent += (size_t)k;
			else if (k < 0 && errno != EAGAIN && errno != EINTR)
				return -1;
		}
		if (got < len && (pf.revents & POLLIN)) {
			k = recv(fd, rbuf + got, len - got, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
				return -1;
			if (k > 0 && (got += (size_t)k) == len)
				*t_rx = now_s() - t0;
		}
	}
	return 0;
}

static int raw_barrier(struct fab_probe *pr, struct fab_err *err)
{
	pr->raw_next = true;
	int rc = barrier(pr, 0, err);
	pr->raw_next = false;
	return rc;
}

static uint32_t to_ns(double s)
{
	return s * 1e9 >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(s * 1e9);
}

/* round r of the circle method over m (even) slots: the partner of j, or
 * UINT32_MAX; slot m-1 stays, the others rotate */
static uint32_t partner(uint32_t m, uint32_t r, uint32_t j)
{
	for (uint32_t k = 0; k < m / 2; k++) {
		uint32_t a = k ? (r + k) % (m - 1) : m - 1, b = (r + m - 1 - k) % (m - 1);
		if (a == j)
			return b;
		if (b == j)
			return a;
	}
	return UINT32_MAX;
}

/* rank 0: the reports of round r into the matrices */
static void absorb(struct fab_probe *pr, uint32_t m, uint32_t r, size_t bytes, double *lat_us, double *bw_GBps)
{
	uint32_t n = pr->n;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t peer = partner(m, r, j);
		if (peer >= n)
			continue;
		if (j < peer)
			lat_us[j * n + peer] = lat_us[peer * n + j] = pr->rep[2 * j] / 1e3;
		if (pr->rep[2 * j + 1])
			bw_GBps[peer * n + j] = (double)bytes / (pr->rep[2 * j + 1] / 1e9) / 1e9;
	}
}

int fab_probe_matrix(struct fab_probe *pr, size_t bytes, uint32_t lat_iters, double *lat_us, double *bw_GBps,
		     struct fab_err *err)
{
	if (!bytes || !lat_iters)
		return fab_err_set(err, FAB_EINVAL, "the matrix test needs at least 1 byte and 1 ping-pong");
	uint32_t n = pr->n, m = n + (n & 1); /* odd: a dummy rank sits out each round */
	uint8_t *sbuf = fab_xcalloc(bytes, 1), *rbuf = fab_xcalloc(bytes, 1), ping[8] = {0};
	double *rtt = fab_xcalloc(lat_iters, sizeof *rtt);
	if (pr->me == 0) {
		pr->rep = fab_xcalloc(2 * (size_t)n, sizeof *pr->rep);
		for (size_t i = 0; i < (size_t)n * n; i++)
			lat_us[i] = bw_GBps[i] = 0;
	}
	int rc = 0;
	for (uint32_t r = 0; r + 1 < m && !rc; r++) {
		if ((rc = raw_barrier(pr, err)))
			break;
		if (pr->me == 0 && r) /* the previous round's reports came in before the barrier */
			absorb(pr, m, r - 1, bytes, lat_us, bw_GBps);
		uint32_t peer = partner(m, r, pr->me);
		uint32_t lat_ns = 0, rx_ns = 0;
		if (peer < n) {
			int fd = pr->fd[peer];
			bool lead = pr->me < peer, bad = fd < 0;
			for (uint32_t it = 0; it < lat_iters && !bad; it++) {
				double t0 = now_s();
				bad = full_io(fd, ping, sizeof ping, lead, pr->timeout_s) ||
				      full_io(fd, ping, sizeof ping, !lead, pr->timeout_s);
				rtt[it] = now_s() - t0;
			}
			double t_rx = 0;
			if (!bad)
				bad = exchange(fd, sbuf, rbuf, bytes, pr->timeout_s, &t_rx);
			if (bad) {
				rc = fab_err_set(err, FAB_EIO, "rank %u: the matrix test with rank %u failed "
						 "(connection broke or no answer in %.0f s)", pr->me, peer, pr->timeout_s);
				break;
			}
			qsort(rtt, lat_iters, sizeof *rtt, fab_cmp_double);
			lat_ns = lead ? to_ns(rtt[(lat_iters - 1) / 2] / 2) : 0;
			rx_ns = FAB_MAX(to_ns(t_rx), 1u);
		}
		if (pr->me == 0) {
			pr->rep[0] = lat_ns;
			pr->rep[1] = rx_ns;
		} else {
			enqueue_ctrl(pr, 0, STEP_REP_LAT, lat_ns);
			enqueue_ctrl(pr, 0, STEP_REP_BW, rx_ns);
		}
	}
	free(sbuf);
	free(rbuf);
	free(rtt);
	if (!rc)
		rc = barrier(pr, 0, err);
	if (!rc && pr->me == 0)
		absorb(pr, m, m - 2, bytes, lat_us, bw_GBps);
	free(pr->rep);
	pr->rep = NULL;
	return rc;
}

int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters,
		  uint32_t warmup, double *out, struct fab_err *err)
{
	if (!bytes || !iters)
		return fab_err_set(err, FAB_EINVAL, "a point-to-point test needs at least 1 byte and 1 iteration");
	int rc = barrier(pr, 0, err);
	if (rc)
		return rc;
	uint8_t *buf = fab_xcalloc(bytes, 1);
	uint8_t ack = 1;
	double to = pr->timeout_s;
	for (uint32_t p = 1; p < pr->n && !rc; p++) {
		if (pr->me != 0 && pr->me != p)
			continue;
		int fd = pr->me == 0 ? pr->fd[p] : pr->fd[0];
		bool lead = pr->me == 0, bad = fd < 0;
		if (kind == FAB_PROBE_LATENCY) {
			/* ping-pong: half the round trip is the one-way latency */
			for (uint32_t it = 0; it < warmup + iters && !bad; it++) {
				double t0 = now_s();
				bad = full_io(fd, buf, bytes, lead, to) || full_io(fd, buf, bytes, !lead, to);
				if (lead && it >= warmup)
					out[(size_t)(p - 1) * iters + it - warmup] = (now_s() - t0) / 2;
			}
		} else {
			/* streaming, one way: the time from the first byte until the
			 * receiver acknowledges the last (warm-up acknowledged apart) */
			for (int phase = 0; phase < 2 && !bad; phase++) {
				uint32_t k = phase ? iters : warmup;
				if (!k)
					continue;
				double t0 = now_s();
				for (uint32_t it = 0; it < k && !bad; it++)
					bad = full_io(fd, buf, bytes, lead, to);
				if (!bad)
					bad = full_io(fd, &ack, 1, !lead, to);
				if (lead && phase)
					out[p - 1] = now_s() - t0;
			}
		}
		if (bad)
			rc = fab_err_set(err, FAB_EIO, "rank %u: the %s test with rank %u failed (connection broke or "
					 "no answer in %.0f s)", pr->me, kind == FAB_PROBE_LATENCY ? "latency" : "bandwidth",
					 lead ? p : 0, to);
	}
	free(buf);
	if (!rc)
		rc = barrier(pr, 0, err);
	return rc;
}

const char *fab_probe_env(struct fab_probe_params *p)
{
	static const struct {
		const char *name, *rank, *size;
	} l[] = {{"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		 {"MPICH/PMI", "PMI_RANK", "PMI_SIZE"},
		 {"srun (Slurm)", "SLURM_PROCID", "SLURM_NTASKS"},
		 {"torchrun-style", "RANK", "WORLD_SIZE"}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(l); i++) {
		const char *r = getenv(l[i].rank), *n = getenv(l[i].size);
		if (!r || !n)
			continue;
		p->rank = (uint32_t)strtoul(r, NULL, 10);
		p->nranks = (uint32_t)strtoul(n, NULL, 10);
		const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT"), *tok = getenv("FABSCOPE_TOKEN");
		if (ma)
			snprintf(p->master, sizeof p->master, "%s", ma);
		if (mp)
			p->master_port = (uint16_t)strtoul(mp, NULL, 10);
		if (tok)
			p->token = strtoull(tok, NULL, 16);
		return l[i].name;
	}
	return NULL;
}
