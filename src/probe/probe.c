/*
 * probe.c - rendezvous, the TCP mesh, the schedule executor and the
 * point-to-point and matrix tests of probe.h.
 *
 * Connections come in two kinds.  The control connection (rank 0 to every
 * other rank: the rendezvous connection, kept) carries 8-byte frames only:
 * barrier DONE/GO, matrix reports and plans, ABORT.  Data connections
 * (`conns` per pair of ranks) carry the collectives' messages, each with an
 * 8-byte header (the id of the receive step it is for, the same on every
 * rank, and its length), or the raw bytes of a point-to-point test, which
 * only ever run between barriers that read control connections alone.
 * Sends queue per connection and go out as the socket takes them; a send is
 * done when the kernel has its last byte.  A received message lands in
 * place when its receive step may run, else waits in an inbox.  One poll
 * loop drives it all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <malloc.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
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
	uint16_t port;  /* rendezvous: the data port; mesh: the connection's index */
	uint16_t pad;
	uint32_t ip;    /* rendezvous: the data address (network order), 0: as seen */
	uint32_t pad2;
	uint64_t token;
};

struct addr {
	uint32_t ip; /* network order */
	uint16_t port;
	uint16_t pad;
};

struct out_msg {
	struct out_msg *next;
	uint32_t step;      /* the send step, or a control frame's kind */
	uint32_t hdr[2];    /* receive step (or kind), length (or value) */
	const uint8_t *data; /* the payload, in the rank's buffer: the schedule
			      * keeps it unchanged until the send is done */
	size_t len, sent;   /* header + payload */
};

enum { IN_INBOX, IN_DIRECT, IN_REDUCE };
#define BOUNCE_BYTES (256u << 10)

struct in_state {
	uint8_t hdr[8];
	size_t hgot;
	uint32_t step, len, got;
	int mode;
	uint8_t *buf;       /* inbox: the whole message */
	uint8_t *dst;       /* direct, reduce: its place */
	uint8_t *bounce;    /* reduce: bytes not yet added */
	size_t held;        /* bytes in bounce (less than a float) */
	uint64_t added;     /* floats added so far */
};

struct conn {
	int fd;
	uint32_t peer;
	bool ctl;
	struct out_msg *qh, *qt;
	struct in_state in;
};

/* control frames */
#define F_DONE 1    /* barrier: a rank finished (to rank 0), value: a count */
#define F_GO 2      /* barrier: everyone finished (from rank 0) */
#define F_REP_LAT 3 /* matrix: a rank's latency (ns), to rank 0; FAILED: the pair failed */
#define F_REP_BW 4  /* matrix: a rank's receive time (ns) */
#define F_PLAN 5    /* matrix: the re-test plan, from rank 0: a count, then pairs a << 16 | b */
#define F_ABORT 6   /* from rank 0: the job failed, value: the failed rank */
#define F_BEAT 7    /* heartbeat, both ways, from every wait loop */
#define F_STUCK 8   /* to rank 0: no data for the timeout, value: from whom it is due */
#define F_TURN 9    /* from rank 0: the point-to-point test with you starts */
#define F_TIME 10   /* to rank 0: a rank's time for the operation, in 0.1 us */
#define FAILED UINT32_MAX
#define NO_RANK UINT32_MAX

struct fab_probe {
	uint32_t n, me, nc, stride; /* stride: connections per peer (control + nc data) */
	struct conn *c;       /* [n * stride]: c[peer * stride + 0] control, + 1 + k data */
	uint32_t *ip;         /* every rank's data address, network order */
	uint64_t token;
	double timeout_s;
	bool busy;
	struct pollfd *pf;
	uint32_t *pfk;
	/* barriers (rank 0: DONE frames per rank, GO sent) */
	uint32_t *dcount, gen;
	uint64_t done_sum, time_sum;
	bool go, ctl_only;
	uint32_t lost;        /* the rank whose control connection closed, or NO_RANK */
	uint32_t aborted;     /* rank 0 said this rank failed, or NO_RANK */
	uint32_t stuck_by, stuck_on; /* rank 0: a rank reported it waits in vain for another */
	uint32_t turn;        /* the last F_TURN seen */
	uint32_t suspect;     /* the rank this rank's failure points at, or NO_RANK */
	bool abort_sent, settled;
	double *heard;        /* when a control frame last came from each rank */
	double last_beat, beat_iv, wait_since;
	/* matrix */
	uint32_t *rep;        /* rank 0: [2n] latency, receive time (ns) */
	uint32_t *plan, nplan, plan_got;
	bool plan_head;
	/* the operation in progress */
	struct fab_exec ex;
	const struct fab_sched *s;
	uint8_t **inbox;
	float *buf[FAB_NBUF];
	size_t bufcap[FAB_NBUF];
	uint32_t mine_left;
	struct fab_err *err;
	int failed;
};

static struct conn *C(struct fab_probe *pr, uint32_t peer, uint32_t k)
{
	return &pr->c[(size_t)peer * pr->stride + k];
}

static struct conn *ctl_of(struct fab_probe *pr, uint32_t peer)
{
	return C(pr, peer, 0);
}

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

static void tune(int fd, bool data)
{
	int one = 1, big = 8 << 20;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (data) {
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int listen_on(uint32_t ip, uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(*port)};
	a.sin_addr.s_addr = ip ? ip : htonl(INADDR_ANY);
	socklen_t al = sizeof a;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(uint32_t ip, uint16_t port, uint32_t bind_ip, double timeout_s)
{
	double end = now_s() + timeout_s;
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
		a.sin_addr.s_addr = ip;
		struct sockaddr_in b = {.sin_family = AF_INET, .sin_port = 0};
		b.sin_addr.s_addr = bind_ip;
		if (fd >= 0 && (!bind_ip || !bind(fd, (struct sockaddr *)&b, sizeof b)) &&
		    !connect(fd, (struct sockaddr *)&a, sizeof a))
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
static int accept_checked(int lfd, uint64_t token, struct hello *h, uint32_t *from, double timeout_s)
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
		if (from)
			*from = a.sin_addr.s_addr;
		return fd;
	}
}

void fab_probe_rank_name(const struct fab_probe *pr, uint32_t rank, char *buf, size_t len)
{
	struct in_addr a = {rank < pr->n && pr->ip ? pr->ip[rank] : 0};
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a, ip, sizeof ip);
	snprintf(buf, len, "rank%u@%s", rank, ip);
}

static const char *rname(const struct fab_probe *pr, uint32_t rank, char buf[64])
{
	fab_probe_rank_name(pr, rank, buf, 64);
	return buf;
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
	pr->nc = p->conns ? FAB_MIN(p->conns, FAB_PROBE_MAX_CONNS) : 1;
	pr->stride = pr->nc + 1;
	pr->token = p->token;
	pr->timeout_s = p->timeout_s;
	pr->busy = p->busy_poll;
	pr->lost = pr->aborted = pr->stuck_by = pr->stuck_on = pr->turn = pr->suspect = NO_RANK;
	pr->beat_iv = FAB_MIN(FAB_MAX(pr->timeout_s / 8, 0.05), 1.0);
	size_t nconn = (size_t)pr->n * pr->stride;
	pr->c = fab_xcalloc(nconn, sizeof *pr->c);
	for (size_t k = 0; k < nconn; k++) {
		pr->c[k].fd = -1;
		pr->c[k].peer = (uint32_t)(k / pr->stride);
		pr->c[k].ctl = k % pr->stride == 0;
	}
	pr->pf = fab_xcalloc(nconn, sizeof *pr->pf);
	pr->pfk = fab_xcalloc(nconn, sizeof *pr->pfk);
	pr->dcount = fab_xcalloc(pr->n, sizeof *pr->dcount);
	pr->ip = fab_xcalloc(pr->n, sizeof *pr->ip);
	pr->heard = fab_xcalloc(pr->n, sizeof *pr->heard);
	uint16_t dport = 0;
	int dfd = listen_on(p->bind_ip, &dport);
	struct addr *tab = fab_xcalloc(pr->n, sizeof *tab);
	uint32_t master_ip = inet_addr(p->master);
	char nm[64];
	if (dfd < 0) {
		fab_err_set(err, FAB_EIO, "rank %u: cannot open a data socket: %s", pr->me, strerror(errno));
		goto fail;
	}
	/* rendezvous; its connections stay, as the control connections */
	if (pr->me == 0) {
		int rfd = p->rendezvous_fd;
		uint16_t mp = p->master_port;
		if (rfd < 0 && (rfd = listen_on(p->bind_ip, &mp)) < 0) {
			fab_err_set(err, FAB_EIO, "rank 0: cannot listen on port %u: %s", p->master_port,
				    strerror(errno));
			goto fail;
		}
		tab[0] = (struct addr){p->bind_ip ? p->bind_ip : master_ip, dport, 0};
		for (uint32_t k = 1; k < pr->n; k++) {
			struct hello h;
			uint32_t from = 0;
			int fd = accept_checked(rfd, pr->token, &h, &from, pr->timeout_s);
			if (fd < 0 || h.rank == 0 || h.rank >= pr->n || ctl_of(pr, h.rank)->fd >= 0) {
				fab_err_set(err, FAB_EIO, "rank 0: %u of %u ranks joined in %.0f s", k, pr->n,
					    pr->timeout_s);
				if (fd >= 0)
					close(fd);
				if (p->rendezvous_fd < 0)
					close(rfd);
				goto fail;
			}
			tab[h.rank] = (struct addr){h.ip ? h.ip : from, h.port, 0};
			ctl_of(pr, h.rank)->fd = fd;
		}
		for (uint32_t i = 1; i < pr->n; i++)
			full_io(ctl_of(pr, i)->fd, tab, pr->n * sizeof *tab, true, pr->timeout_s);
		if (p->rendezvous_fd < 0)
			close(rfd);
	} else {
		int fd = connect_to(master_ip, p->master_port, p->bind_ip, pr->timeout_s);
		struct hello h = {pr->me, dport, 0, p->bind_ip, 0, pr->token};
		if (fd < 0 || full_io(fd, &h, sizeof h, true, pr->timeout_s) ||
		    full_io(fd, tab, pr->n * sizeof *tab, false, pr->timeout_s)) {
			fab_err_set(err, FAB_EIO, "rank %u: rendezvous with rank 0 at %s:%u failed", pr->me,
				    p->master, p->master_port);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		ctl_of(pr, 0)->fd = fd;
	}
	for (uint32_t j = 0; j < pr->n; j++)
		pr->ip[j] = tab[j].ip;
	/* the data mesh: connect to lower ranks, accept higher ones */
	for (uint32_t j = 0; j < pr->me; j++)
		for (uint32_t k = 0; k < pr->nc; k++) {
			int fd = connect_to(tab[j].ip, tab[j].port, p->bind_ip, pr->timeout_s);
			struct hello h = {pr->me, (uint16_t)k, 0, 0, 0, pr->token};
			if (fd < 0 || full_io(fd, &h, sizeof h, true, pr->timeout_s)) {
				fab_err_set(err, FAB_EIO, "rank %u: cannot reach %s", pr->me, rname(pr, j, nm));
				if (fd >= 0)
					close(fd);
				goto fail;
			}
			C(pr, j, 1 + k)->fd = fd;
		}
	for (uint32_t k = (pr->n - 1 - pr->me) * pr->nc; k > 0; k--) {
		struct hello h;
		int fd = accept_checked(dfd, pr->token, &h, NULL, pr->timeout_s);
		if (fd < 0 || h.rank <= pr->me || h.rank >= pr->n || h.port >= pr->nc ||
		    C(pr, h.rank, 1u + h.port)->fd >= 0) {
			fab_err_set(err, FAB_EIO, "rank %u: the mesh did not complete in %.0f s", pr->me,
				    pr->timeout_s);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		C(pr, h.rank, 1u + h.port)->fd = fd;
	}
	for (size_t k = 0; k < nconn; k++)
		if (pr->c[k].fd >= 0)
			tune(pr->c[k].fd, !pr->c[k].ctl);
	close(dfd);
	free(tab);
	return pr;
fail:
	if (dfd >= 0)
		close(dfd);
	free(tab);
	fab_probe_close(pr);
	return NULL;
}

static void free_queue(struct conn *c)
{
	while (c->qh) {
		struct out_msg *m = c->qh;
		c->qh = m->next;
		free(m);
	}
	c->qt = NULL;
}

void fab_probe_close(struct fab_probe *pr)
{
	if (!pr)
		return;
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++) {
		struct conn *c = &pr->c[k];
		if (c->fd >= 0)
			close(c->fd);
		free_queue(c);
		free(c->in.buf);
		free(c->in.bounce);
	}
	for (int b = 0; b < FAB_NBUF; b++)
		free(pr->buf[b]);
	free(pr->c);
	free(pr->pf);
	free(pr->pfk);
	free(pr->dcount);
	free(pr->heard);
	free(pr->ip);
	free(pr->plan);
	free(pr);
}

int fab_probe_resolve_bind(const char *what, uint32_t *ip)
{
	struct in_addr a;
	if (inet_pton(AF_INET, what, &a) == 1) {
		*ip = a.s_addr;
		return 0;
	}
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs))
		return -1;
	int rc = -1;
	for (i = ifs; i && rc; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, what)) {
			*ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
			rc = 0;
		}
	freeifaddrs(ifs);
	return rc;
}

/* ---- moving bytes ---- */

static void enqueue(struct conn *c, struct out_msg *m)
{
	if (c->qt)
		c->qt->next = m;
	else
		c->qh = m;
	c->qt = m;
}

static void enqueue_ctrl(struct fab_probe *pr, uint32_t peer, uint32_t what, uint32_t value)
{
	struct conn *c = ctl_of(pr, peer);
	if (c->fd < 0)
		return;
	struct out_msg *m = fab_xcalloc(1, sizeof *m);
	m->step = what;
	m->len = 8;
	m->hdr[0] = what;
	m->hdr[1] = value;
	enqueue(c, m);
}

/* the first failure wins; suspect: the rank it points at, or NO_RANK */
static void fail(struct fab_probe *pr, uint32_t suspect, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct fab_probe *pr, uint32_t suspect, const char *fmt, ...)
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

static void drop(struct conn *c)
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
		fail(pr, c->peer, "rank %u: the connection to %s %s", pr->me, rname(pr, c->peer, nm),
		     eof ? "closed (it died?)" : "broke");
	}
	drop(c);
}

static bool flush_out(struct fab_probe *pr, struct conn *c)
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

static void on_ctrl(struct fab_probe *pr, struct conn *c, uint32_t what, uint32_t value)
{
	uint32_t j = c->peer;
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
			pr->plan_head = true;
			free(pr->plan);
			pr->nplan = value;
			pr->plan_got = 0;
			pr->plan = fab_xcalloc(value + 1, sizeof *pr->plan);
		} else if (pr->plan_got < pr->nplan) {
			pr->plan[pr->plan_got++] = value;
		}
		if (pr->plan_got == pr->nplan)
			pr->plan_head = false;
		break;
	case F_ABORT:
		pr->aborted = value;
		break;
	case F_STUCK:
		if (pr->stuck_by == NO_RANK) {
			pr->stuck_by = j;
			pr->stuck_on = value;
		}
		break;
	case F_TURN:
		pr->turn = value;
		break;
	}
}

static bool valid_recv(const struct fab_probe *pr, const struct conn *c, uint32_t step, uint32_t len)
{
	if (!pr->s || step >= pr->s->nsteps)
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
static void add_floats(float *restrict d, const float *restrict s, size_t n)
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
				pr->heard[c->peer] = now_s();
				on_ctrl(pr, c, hdr[0], hdr[1]);
				continue;
			}
			is->step = hdr[0];
			is->len = hdr[1];
			if (!valid_recv(pr, c, is->step, is->len)) {
				char nm[64];
				fail(pr, c->peer, "rank %u: %s sent a message for no step of this operation", pr->me,
				     rname(pr, c->peer, nm));
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
				add_floats((float *)is->dst + is->added, (const float *)is->bounce, nf);
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
static void beat(struct fab_probe *pr)
{
	double t = now_s();
	if (t - pr->last_beat < pr->beat_iv)
		return;
	pr->last_beat = t;
	for (uint32_t j = 0; j < pr->n; j++) {
		struct conn *c = ctl_of(pr, j);
		if (c->fd < 0)
			continue;
		if (c->qt && c->qt->step == F_BEAT)
			continue; /* one is still waiting */
		enqueue_ctrl(pr, j, F_BEAT, 0);
		flush_out(pr, c);
	}
}

/* Moves bytes on every connection that can; returns whether anything moved. */
static bool progress(struct fab_probe *pr, int wait_ms)
{
	uint32_t np = 0;
	beat(pr);
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
			moved |= flush_out(pr, c);
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
		free_queue(c);
		c->in.hgot = 0;
		(void)!send(c->fd, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
}

/* the rank silent for longer than the timeout (rank 0: any; others: rank
 * 0), counting from when this wait began, or NO_RANK */
static uint32_t silent(const struct fab_probe *pr)
{
	double t = now_s();
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
static bool check_peers(struct fab_probe *pr)
{
	char nm[64], nm2[64];
	uint32_t q;
	if (pr->failed)
		return true;
	if (pr->aborted != NO_RANK) {
		fail(pr, pr->aborted, "rank %u: the job failed", pr->me); /* settle() words it */
		return true;
	}
	if (pr->lost != NO_RANK) {
		if (pr->me == 0) {
			fail(pr, pr->lost, "rank 0: %s left the job (its control connection closed: it died?)",
			     rname(pr, pr->lost, nm));
		} else {
			fail(pr, 0, "rank %u: %s (rank 0) left the job", pr->me, rname(pr, 0, nm));
		}
		return true;
	}
	if (pr->me == 0 && pr->stuck_by != NO_RANK) {
		q = pr->stuck_on != NO_RANK && pr->stuck_on < pr->n ? pr->stuck_on : pr->stuck_by;
		fail(pr, q, "rank 0: %s reports a failure involving %s (it died or hangs, or the path between them "
		     "is broken)", rname(pr, pr->stuck_by, nm2), rname(pr, q, nm));
		return true;
	}
	if ((q = silent(pr)) != NO_RANK) {
		if (pr->me == 0) {
			fail(pr, q, "rank 0: %s has been silent for %.0f s (it hangs, or its host is unreachable)",
			     rname(pr, q, nm), pr->timeout_s);
		} else {
			fail(pr, 0, "rank %u: no word from %s (rank 0) for %.0f s", pr->me, rname(pr, 0, nm),
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
static void settle(struct fab_probe *pr)
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
		enqueue_ctrl(pr, 0, F_STUCK, pr->suspect);
		double end = now_s() + FAB_MIN(2.0, pr->timeout_s);
		pr->ctl_only = true;
		while (pr->aborted == NO_RANK && c->fd >= 0 && now_s() < end)
			progress(pr, 50);
		pr->ctl_only = false;
	}
	if (pr->aborted != NO_RANK && pr->err) {
		char nm[64];
		if (pr->aborted < pr->n)
			snprintf(pr->err->msg, sizeof pr->err->msg, "rank %u: the job failed: rank 0 lost %s", pr->me,
				 rname(pr, pr->aborted, nm));
		else
			snprintf(pr->err->msg, sizeof pr->err->msg, "rank %u: the job failed at rank 0", pr->me);
	}
}

/* Everyone has finished the previous operation: after this, the sockets
 * carry only the next one.  ctl_only: read nothing but control frames (a
 * raw test follows, or runs).  No clock of its own: a rank may take long
 * to arrive as long as it beats; one that stops beating fails the job. */
static int barrier(struct fab_probe *pr, uint32_t value, bool ctl_only, struct fab_err *err)
{
	pr->err = err;
	pr->go = false;
	pr->ctl_only = ctl_only;
	pr->wait_since = now_s();
	if (pr->me)
		enqueue_ctrl(pr, 0, F_DONE, value);
	for (;;) {
		if (pr->me == 0 && !pr->go) {
			uint32_t j = 1;
			while (j < pr->n && pr->dcount[j] > pr->gen)
				j++;
			if (j == pr->n) {
				pr->gen++;
				for (j = 1; j < pr->n; j++)
					enqueue_ctrl(pr, j, F_GO, 0);
				pr->go = true;
			}
		}
		/* done before a failure check: a rank may leave once it has GO */
		if (pr->go && queues_empty(pr))
			break;
		if (check_peers(pr))
			break;
		progress(pr, 100);
	}
	pr->ctl_only = false;
	if (pr->failed)
		settle(pr);
	return pr->failed ? FAB_EIO : 0;
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
		enqueue(C(pr, st->peer, 1 + st->channel % pr->nc), m);
		return;
	}
	case FAB_STEP_COPY:
		memmove(dst, src, st->bytes);
		break;
	case FAB_STEP_RECV:
		memcpy(dst, pr->inbox[step], st->bytes);
		break;
	case FAB_STEP_RECV_REDUCE:
		add_floats((float *)dst, (const float *)pr->inbox[step], st->bytes / 4);
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

int fab_probe_coll(struct fab_probe *pr, const struct fab_coll_args *args, bool check,
		   struct fab_probe_result *res, struct fab_err *err)
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
	pr->mine_left = 0;
	for (uint32_t i = 0; i < s.nsteps; i++)
		pr->mine_left += s.steps[i].rank == pr->me;
	struct fab_exec_ops ops = {on_start, on_start};
	fab_exec_init(&pr->ex, &s, &ops, pr);
	pr->s = &s;
	pr->done_sum = pr->time_sum = 0; /* the closing barrier adds the wrong elements and times */
	int rc = barrier(pr, 0, false, err);
	double t0 = now_s(), last = t0;
	if (!rc)
		fab_exec_start(&pr->ex);
	/* no data for the timeout: the others tell rank 0 whom they wait for
	 * and wait for its verdict, then give up on their own; rank 0 blames
	 * the rank it waits for itself only later */
	char nm[64];
	bool told = false;
	pr->wait_since = t0;
	while (!rc && pr->mine_left && !check_peers(pr)) {
		if (progress(pr, 100)) {
			last = now_s();
			continue;
		}
		/* rank 0 gives a silent rank and the others' reports half a
		 * timeout to arrive first: they point nearer the cause */
		double idle = now_s() - last;
		uint32_t w = idle > pr->timeout_s ? waiting_for(pr) : NO_RANK;
		if (idle > 1.5 * pr->timeout_s && pr->me == 0) {
			if (w != NO_RANK)
				fail(pr, w, "rank 0: no data from %s for %.0f s (it hangs, or the path is broken)",
				     rname(pr, w, nm), pr->timeout_s);
			else
				fail(pr, NO_RANK, "rank 0: no progress for %.0f s", pr->timeout_s);
		} else if (idle > pr->timeout_s && !told) {
			enqueue_ctrl(pr, 0, F_STUCK, w);
			told = true;
		} else if (idle > 2 * pr->timeout_s) {
			fail(pr, w, "rank %u: no data from %s for %.0f s", pr->me,
			     w != NO_RANK ? rname(pr, w, nm) : "any rank", idle);
		}
	}
	if (pr->failed) {
		settle(pr);
		rc = FAB_EIO;
	}
	res->time_s = now_s() - t0;
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
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++) {
		struct conn *c = &pr->c[k];
		if (c->ctl)
			continue;
		free_queue(c);
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
			enqueue_ctrl(pr, 0, F_TIME, (uint32_t)FAB_MIN(res->time_s * 1e7, (double)UINT32_MAX));
		rc = barrier(pr, (uint32_t)FAB_MIN(res->wrong, UINT32_MAX), false, err);
		if (pr->me == 0) {
			res->wrong += pr->done_sum;
			res->time_s = (res->time_s + (double)pr->time_sum / 1e7) / pr->n;
		}
	}
	return rc;
}

/* ---- point-to-point and matrix tests: raw bytes on the data connections ---- */

/* Moves slen bytes to the peer and rlen from it at once over its first nc
 * data connections (slice k of each on connection k).  0, or -1 when a
 * connection breaks or the deadline passes; *t_rx: when the last byte came
 * in (from the call). */
static int xfer(struct fab_probe *pr, uint32_t peer, uint32_t nc, const uint8_t *sbuf, size_t slen, uint8_t *rbuf,
		size_t rlen, double deadline, double *t_rx)
{
	size_t sent[FAB_PROBE_MAX_CONNS] = {0}, got[FAB_PROBE_MAX_CONNS] = {0}, sleft = slen, rleft = rlen;
	struct pollfd pf[FAB_PROBE_MAX_CONNS];
	double t0 = now_s();
	for (uint32_t k = 0; k < nc; k++)
		if (C(pr, peer, 1 + k)->fd < 0)
			return -1;
	while (sleft || rleft) {
		beat(pr);
		for (uint32_t k = 0; k < nc; k++) {
			size_t sl = slen * (k + 1) / nc - slen * k / nc, rl = rlen * (k + 1) / nc - rlen * k / nc;
			pf[k] = (struct pollfd){C(pr, peer, 1 + k)->fd,
						(short)((sent[k] < sl ? POLLOUT : 0) | (got[k] < rl ? POLLIN : 0)), 0};
		}
		if (pr->busy) {
			/* spin: try every socket, never sleep */
			for (uint32_t k = 0; k < nc; k++)
				pf[k].revents = pf[k].events;
			if (now_s() > deadline)
				return -1;
		} else {
			int ms = (int)ceil((deadline - now_s()) * 1000);
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
					*t_rx = now_s() - t0;
			}
		}
	}
	return 0;
}

static int raw_barrier(struct fab_probe *pr, struct fab_err *err)
{
	return barrier(pr, 0, true, err);
}

int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters,
		  uint32_t warmup, double *out, struct fab_err *err)
{
	if (!bytes || !iters)
		return fab_err_set(err, FAB_EINVAL, "a point-to-point test needs at least 1 byte and 1 iteration");
	pr->turn = NO_RANK; /* a call may come with the barrier's GO */
	int rc = raw_barrier(pr, err);
	if (rc)
		return rc;
	uint8_t *sbuf = fab_xcalloc(bytes, 1), *rbuf = fab_xcalloc(bytes, 1), ack = 1;
	double to = pr->timeout_s;
	uint32_t bad_peer = NO_RANK;
	pr->ctl_only = true;
	pr->wait_since = now_s();
	for (uint32_t p = 1; p < pr->n && bad_peer == NO_RANK && !pr->failed; p++) {
		if (pr->me != 0 && pr->me != p)
			continue;
		/* rank 0 calls each rank when its turn comes: the wait for it
		 * may be long, and is watched by the heartbeats */
		if (pr->me == 0) {
			enqueue_ctrl(pr, p, F_TURN, p);
			flush_out(pr, ctl_of(pr, p));
		} else {
			while (pr->turn != p && !check_peers(pr))
				progress(pr, 100);
			if (pr->failed)
				break;
		}
		uint32_t peer = pr->me == 0 ? p : 0;
		bool lead = pr->me == 0, bad = false;
		if (kind == FAB_PROBE_LATENCY) {
			/* ping-pong: half the round trip is the one-way latency */
			for (uint32_t it = 0; it < warmup + iters && !bad; it++) {
				double t0 = now_s(), end = t0 + to;
				bad = lead ? xfer(pr, peer, 1, sbuf, bytes, NULL, 0, end, NULL) ||
						     xfer(pr, peer, 1, NULL, 0, rbuf, bytes, end, NULL)
					   : xfer(pr, peer, 1, NULL, 0, rbuf, bytes, end, NULL) ||
						     xfer(pr, peer, 1, sbuf, bytes, NULL, 0, end, NULL);
				if (lead && it >= warmup)
					out[(size_t)(p - 1) * iters + it - warmup] = (now_s() - t0) / 2;
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
				double t0 = now_s();
				for (uint32_t it = 0; it < k && !bad; it++) {
					bool tx = lead || bidir, rx = !lead || bidir;
					bad = xfer(pr, peer, pr->nc, sbuf, tx ? bytes : 0, rbuf, rx ? bytes : 0,
						   now_s() + to, NULL);
				}
				if (!bad)
					bad = xfer(pr, peer, 1, &ack, lead && !bidir ? 0 : 1, rbuf, lead || bidir ? 1 : 0,
						   now_s() + to, NULL);
				if (lead && phase)
					out[p - 1] = now_s() - t0;
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
		fail(pr, bad_peer, "rank %u: the %s test with %s failed (connection broke or no answer in %.0f s)",
		     pr->me, kind == FAB_PROBE_LATENCY ? "latency" : "bandwidth", rname(pr, bad_peer, nm), to);
	}
	if (pr->failed) {
		settle(pr);
		return FAB_EIO;
	}
	return raw_barrier(pr, err);
}

static uint32_t to_ns(double s)
{
	return s * 1e9 >= (double)(UINT32_MAX - 1) ? UINT32_MAX - 1 : (uint32_t)(s * 1e9);
}

/* round r of the circle method over m (even) slots: the partner of j, or
 * NO_RANK; slot m-1 stays, the others rotate */
static uint32_t partner(uint32_t m, uint32_t r, uint32_t j)
{
	for (uint32_t k = 0; k < m / 2; k++) {
		uint32_t a = k ? (r + k) % (m - 1) : m - 1, b = (r + m - 1 - k) % (m - 1);
		if (a == j)
			return b;
		if (b == j)
			return a;
	}
	return NO_RANK;
}

/* stage st's pairs: part[j] = j's partner or NO_RANK */
static void stage_pairs(const struct fab_probe *pr, const struct fab_probe_matrix_opts *o, bool retest,
			uint32_t st, uint32_t *part)
{
	uint32_t n = pr->n, m = n + (n & 1);
	for (uint32_t j = 0; j < n; j++)
		part[j] = NO_RANK;
	if (retest) {
		uint32_t a = pr->plan[st] >> 16, b = pr->plan[st] & 0xffff;
		part[a] = b;
		part[b] = a;
	} else if (o->serial) {
		/* pair st in the order (0,1), (0,2), ..., (1,2), ... */
		for (uint32_t a = 0, k = 0; a < n; a++)
			for (uint32_t b = a + 1; b < n; b++, k++)
				if (k == st) {
					part[a] = b;
					part[b] = a;
				}
	} else {
		for (uint32_t j = 0; j < n; j++) {
			uint32_t p = partner(m, st, j);
			part[j] = p < n ? p : NO_RANK;
		}
	}
}

/* one pair: 8-byte ping-pongs, then `bytes` each way at once */
static int pair_test(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, uint32_t peer, uint8_t *sbuf,
		     uint8_t *rbuf, double *rtt, uint32_t *lat_ns, uint32_t *rx_ns)
{
	double end = now_s() + o->pair_timeout_s, t_rx = 0;
	bool lead = pr->me < peer;
	uint8_t ping[8] = {0};
	for (uint32_t it = 0; it < o->lat_iters; it++) {
		double t0 = now_s();
		if (xfer(pr, peer, 1, ping, lead ? 8 : 0, ping, lead ? 0 : 8, end, NULL) ||
		    xfer(pr, peer, 1, ping, lead ? 0 : 8, ping, lead ? 8 : 0, end, NULL))
			return -1;
		rtt[it] = now_s() - t0;
	}
	if (xfer(pr, peer, pr->nc, sbuf, o->bytes, rbuf, o->bytes, end, &t_rx))
		return -1;
	qsort(rtt, o->lat_iters, sizeof *rtt, fab_cmp_double);
	*lat_ns = lead ? to_ns(rtt[(o->lat_iters - 1) / 2] / 2) : 0;
	*rx_ns = FAB_MAX(to_ns(t_rx), 1u);
	return 0;
}

/* rank 0: a stage's reports into the matrices */
static void absorb(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, const uint32_t *part,
		   struct fab_probe_matrix_res *res)
{
	uint32_t n = pr->n;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t p = part[j];
		if (p == NO_RANK || j > p)
			continue;
		size_t jp = (size_t)j * n + p, pj = (size_t)p * n + j;
		if (pr->rep[2 * j] == FAILED || pr->rep[2 * p] == FAILED) {
			res->failed[jp] = res->failed[pj] = 1;
			res->bw_GBps[jp] = res->bw_GBps[pj] = NAN;
			res->lat_us[jp] = res->lat_us[pj] = NAN;
			continue;
		}
		res->failed[jp] = res->failed[pj] = 0;
		res->lat_us[jp] = res->lat_us[pj] = pr->rep[2 * j] / 1e3; /* j < p leads */
		res->bw_GBps[pj] = (double)o->bytes / (pr->rep[2 * j + 1] / 1e9) / 1e9;
		res->bw_GBps[jp] = (double)o->bytes / (pr->rep[2 * p + 1] / 1e9) / 1e9;
	}
}

struct susp {
	uint32_t a, b;
	double low;
};

static int cmp_susp(const void *x, const void *y)
{
	const struct susp *p = x, *q = y;
	return p->low < q->low ? -1 : p->low > q->low ? 1 : (p->a != q->a ? (p->a < q->a ? -1 : 1) : (p->b < q->b ? -1 : p->b > q->b));
}

/* rank 0: the pairs to measure again, alone */
static void plan_retest(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, struct fab_probe_matrix_res *res)
{
	uint32_t n = pr->n;
	double *v = fab_xcalloc((size_t)n * n, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < (size_t)n * n; i++)
		if (i / n != i % n && !res->failed[i])
			v[k++] = res->bw_GBps[i];
	double med = 0;
	if (k) {
		qsort(v, k, sizeof *v, fab_cmp_double);
		med = v[(k - 1) / 2];
	}
	free(v);
	struct susp *s = fab_xcalloc((size_t)n * n / 2 + 1, sizeof *s);
	size_t ns = 0;
	for (uint32_t a = 0; a < n && o->retest_below > 0 && n <= 0xffff; a++)
		for (uint32_t b = a + 1; b < n; b++) {
			size_t ab = (size_t)a * n + b, ba = (size_t)b * n + a;
			double low = res->failed[ab] ? -1 : FAB_MIN(res->bw_GBps[ab], res->bw_GBps[ba]);
			if (res->failed[ab] || low < o->retest_below * med)
				s[ns++] = (struct susp){a, b, low};
		}
	qsort(s, ns, sizeof *s, cmp_susp);
	uint32_t cap = 2 * n, take = (uint32_t)FAB_MIN(ns, cap);
	res->retest_skipped = (uint32_t)(ns - take);
	res->nretest = take;
	res->retest = fab_xcalloc(take + 1, sizeof *res->retest);
	free(pr->plan);
	pr->plan = fab_xcalloc(take + 1, sizeof *pr->plan);
	pr->nplan = take;
	for (uint32_t i = 0; i < take; i++) {
		uint32_t a = s[i].a, b = s[i].b;
		pr->plan[i] = a << 16 | b;
		res->retest[i] = (struct fab_probe_retest){a, b, {res->bw_GBps[(size_t)a * n + b],
								  res->bw_GBps[(size_t)b * n + a]}, {0, 0}};
	}
	free(s);
	for (uint32_t j = 1; j < n; j++) {
		enqueue_ctrl(pr, j, F_PLAN, take);
		for (uint32_t i = 0; i < take; i++)
			enqueue_ctrl(pr, j, F_PLAN, pr->plan[i]);
	}
}

/* runs nstages stages of disjoint pairs; rank 0 absorbs each one's reports */
static int run_stages(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, bool retest, uint32_t nstages,
		      struct fab_probe_matrix_res *res, struct fab_err *err)
{
	uint32_t n = pr->n;
	uint32_t *part = fab_xcalloc(n, sizeof *part);
	uint8_t *sbuf = fab_xcalloc(o->bytes, 1), *rbuf = fab_xcalloc(o->bytes, 1);
	double *rtt = fab_xcalloc(o->lat_iters, sizeof *rtt);
	int rc = 0;
	for (uint32_t st = 0; st <= nstages && !rc; st++) {
		/* a stage's reports come in before the next barrier completes */
		if ((rc = raw_barrier(pr, err)))
			break;
		if (pr->me == 0 && st) {
			stage_pairs(pr, o, retest, st - 1, part);
			absorb(pr, o, part, res);
			if (retest) {
				struct fab_probe_retest *t = &res->retest[st - 1];
				t->after[0] = res->bw_GBps[(size_t)t->a * n + t->b];
				t->after[1] = res->bw_GBps[(size_t)t->b * n + t->a];
			}
		}
		if (st == nstages)
			break;
		stage_pairs(pr, o, retest, st, part);
		uint32_t peer = part[pr->me], lat_ns = 0, rx_ns = 0;
		if (peer == NO_RANK)
			continue;
		if (pair_test(pr, o, peer, sbuf, rbuf, rtt, &lat_ns, &rx_ns)) {
			/* recorded, and the connections dropped: their state is unknown */
			lat_ns = FAILED;
			for (uint32_t k = 0; k < pr->nc; k++)
				drop(C(pr, peer, 1 + k));
		}
		if (pr->me == 0) {
			pr->rep[0] = lat_ns;
			pr->rep[1] = rx_ns;
		} else {
			enqueue_ctrl(pr, 0, F_REP_LAT, lat_ns);
			enqueue_ctrl(pr, 0, F_REP_BW, rx_ns);
		}
	}
	free(part);
	free(sbuf);
	free(rbuf);
	free(rtt);
	return rc;
}

int fab_probe_matrix(struct fab_probe *pr, const struct fab_probe_matrix_opts *o,
		     struct fab_probe_matrix_res *res, struct fab_err *err)
{
	if (!o->bytes || !o->lat_iters)
		return fab_err_set(err, FAB_EINVAL, "the matrix test needs at least 1 byte and 1 ping-pong");
	uint32_t n = pr->n, m = n + (n & 1);
	memset(res, 0, sizeof *res);
	res->stages = o->serial ? n * (n - 1) / 2 : m - 1;
	if (pr->me == 0) {
		pr->rep = fab_xcalloc(2 * (size_t)n, sizeof *pr->rep);
		res->lat_us = fab_xcalloc((size_t)n * n, sizeof *res->lat_us);
		res->bw_GBps = fab_xcalloc((size_t)n * n, sizeof *res->bw_GBps);
		res->failed = fab_xcalloc((size_t)n * n, 1);
	}
	int rc = run_stages(pr, o, false, res->stages, res, err);
	/* the re-test plan travels ahead of the next barrier's GO */
	if (!rc && pr->me == 0)
		plan_retest(pr, o, res);
	if (!rc)
		rc = raw_barrier(pr, err);
	if (!rc && pr->nplan)
		rc = run_stages(pr, o, true, pr->nplan, res, err);
	free(pr->rep);
	pr->rep = NULL;
	free(pr->plan);
	pr->plan = NULL;
	pr->nplan = 0;
	if (rc)
		fab_probe_matrix_free(res);
	return rc;
}

void fab_probe_matrix_free(struct fab_probe_matrix_res *res)
{
	free(res->lat_us);
	free(res->bw_GBps);
	free(res->failed);
	free(res->retest);
	memset(res, 0, sizeof *res);
}

const char *fab_probe_env(struct fab_probe_params *p)
{
	static const struct {
		const char *name, *rank, *size;
	} l[] = {{"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		 {"MPICH/PMI", "PMI_RANK", "PMI_SIZE"},
		 {"srun (Slurm)", "SLURM_PROCID", "SLURM_NTASKS"},
		 {"torchrun-style", "RANK", "WORLD_SIZE"}};
	const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT"), *tok = getenv("FABSCOPE_TOKEN");
	if (ma)
		snprintf(p->master, sizeof p->master, "%s", ma);
	if (mp)
		p->master_port = (uint16_t)strtoul(mp, NULL, 10);
	if (tok)
		p->token = strtoull(tok, NULL, 16);
	for (size_t i = 0; i < FAB_ARRAY_LEN(l); i++) {
		const char *r = getenv(l[i].rank), *n = getenv(l[i].size);
		if (!r || !n)
			continue;
		p->rank = (uint32_t)strtoul(r, NULL, 10);
		p->nranks = (uint32_t)strtoul(n, NULL, 10);
		return l[i].name;
	}
	return NULL;
}
