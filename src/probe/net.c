/*
 * net.c - the probe's sockets: listening and connecting on the addresses it
 * is told, I/O with deadlines, host names, and the job token checked on
 * every accepted connection (a connection without it is refused and
 * reported through the params' warn callback), callers handled all at once
 * so that a slow or silent one holds up no other.
 */
#include "probe_int.h"

double pr_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pr_full_io(int fd, void *buf, size_t len, bool wr, double timeout_s)
{
	uint8_t *p = buf;
	double end = pr_now_s() + timeout_s;
	while (len) {
		struct pollfd pf = {fd, wr ? POLLOUT : POLLIN, 0};
		int ms = (int)((end - pr_now_s()) * 1000);
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

void pr_tune(int fd, bool data)
{
	int one = 1, big = 8 << 20;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (data) {
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int pr_listen_on(uint32_t ip, uint16_t *port)
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

int pr_connect_to(uint32_t ip, uint16_t port, uint32_t bind_ip, double timeout_s)
{
	double end = pr_now_s() + timeout_s;
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
		if (pr_now_s() > end)
			return -1;
		usleep(20000); /* rank 0 may not listen yet */
	}
}

bool pr_token_eq(const uint8_t *a, const uint8_t *b)
{
	/* constant time: how much of a guess was right does not show */
	volatile uint8_t d = 0;
	for (int i = 0; i < FAB_PROBE_TOKEN_BYTES; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

static void refuse(struct fab_probe *pr, struct accept_pool *ap, uint32_t from, const char *why)
{
	ap->refused++;
	if (!pr->warn || ap->refused > 10)
		return;
	struct in_addr a = {from};
	char msg[160];
	snprintf(msg, sizeof msg, "refused a connection from %s %s%s", inet_ntoa(a), why,
		 ap->refused == 10 ? " (further refusals not shown)" : "");
	pr->warn(pr->warn_ctx, msg);
}

#define POOL 64

/* Accepts connections until want of them have presented the job token and
 * been taken.  Each has FAB_PROBE_HELLO_S to send its hello, all at once in
 * one poll loop, so a silent caller delays no one; when POOL callers are
 * waiting, the oldest makes room.  Returns 0, or -1: the deadline passed or
 * take() failed the rendezvous. */
int pr_accept_pool(struct fab_probe *pr, int lfd, struct accept_pool *ap)
{
	struct pend {
		int fd;
		uint32_t from;
		size_t got;
		double end;
		struct hello h;
	} pend[POOL];
	struct pollfd pf[POOL + 1];
	uint32_t np = 0;
	double end = pr_now_s() + pr->timeout_s;
	int rc = -1;
	while (ap->taken < ap->want) {
		double t = pr_now_s(), wake = end;
		if (t >= end)
			break;
		/* callers out of time */
		for (uint32_t i = 0; i < np;) {
			if (pend[i].end <= t) {
				refuse(pr, ap, pend[i].from, "that sent no job token in time");
				close(pend[i].fd);
				pend[i] = pend[--np];
				continue;
			}
			wake = FAB_MIN(wake, pend[i].end);
			i++;
		}
		pf[0] = (struct pollfd){lfd, POLLIN, 0};
		for (uint32_t i = 0; i < np; i++)
			pf[i + 1] = (struct pollfd){pend[i].fd, POLLIN, 0};
		int ms = (int)((wake - t) * 1000) + 1;
		if (poll(pf, np + 1, ms) < 0 && errno != EINTR)
			break;
		for (uint32_t i = np; i-- > 0;) {
			if (!pf[i + 1].revents)
				continue;
			struct pend *q = &pend[i];
			ssize_t k = recv(q->fd, (uint8_t *)&q->h + q->got, sizeof q->h - q->got, MSG_DONTWAIT);
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			bool bad = k <= 0;
			if (!bad) {
				q->got += (size_t)k;
				if (q->got < sizeof q->h)
					continue;
				bad = !pr_token_eq(q->h.token, pr->token);
			}
			int fd = q->fd;
			uint32_t from = q->from;
			struct hello h = q->h;
			pend[i] = pend[--np];
			if (bad) {
				refuse(pr, ap, from, k <= 0 ? "that closed before its hello" : "without the job token");
				close(fd);
				continue;
			}
			int tk = ap->take(pr, ap->ctx, fd, &h, from);
			if (tk < 0) {
				close(fd);
				goto out;
			}
			if (tk > 0)
				ap->taken++;
			else
				close(fd);
		}
		if (pf[0].revents & POLLIN) {
			struct sockaddr_in a;
			socklen_t al = sizeof a;
			int fd = accept4(lfd, (struct sockaddr *)&a, &al, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			if (np == POOL) {
				uint32_t old = 0;
				for (uint32_t i = 1; i < np; i++)
					if (pend[i].end < pend[old].end)
						old = i;
				refuse(pr, ap, pend[old].from, "that sent no job token (too many callers waiting)");
				close(pend[old].fd);
				pend[old] = pend[--np];
			}
			pend[np++] = (struct pend){
				fd, a.sin_addr.s_addr, 0, pr_now_s() + FAB_MIN(FAB_PROBE_HELLO_S, pr->timeout_s), {0}};
		}
	}
	rc = ap->taken == ap->want ? 0 : -1;
	if (rc)
		ap->refused += np; /* callers still silent at the deadline */
out:
	for (uint32_t i = 0; i < np; i++)
		close(pend[i].fd);
	return rc;
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

int fab_probe_resolve_host(const char *host, uint32_t *ip, char *why, size_t len)
{
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) == 1) {
		*ip = a.s_addr;
		return 0;
	}
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int e = getaddrinfo(host, NULL, &hints, &res);
	if (e || !res) {
		snprintf(why, len, "cannot resolve \"%s\" to an IPv4 address: %s", host,
			 e ? gai_strerror(e) : "no address");
		if (res)
			freeaddrinfo(res);
		return -1;
	}
	*ip = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
	freeaddrinfo(res);
	return 0;
}
