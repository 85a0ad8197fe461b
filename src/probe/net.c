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

socklen_t pr_sockaddr(const struct fab_ip *ip, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (ip->family == 6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		memcpy(&a->sin6_addr, ip->a, 16);
		return sizeof *a;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	if (ip->family == 4)
		memcpy(&a->sin_addr, ip->a, 4);
	else
		a->sin_addr.s_addr = htonl(INADDR_ANY);
	return sizeof *a;
}

void pr_ip_of(const struct sockaddr *sa, struct fab_ip *ip)
{
	memset(ip, 0, sizeof *ip);
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
		ip->family = 6;
		memcpy(ip->a, &a->sin6_addr, 16);
	} else if (sa->sa_family == AF_INET) {
		ip->family = 4;
		memcpy(ip->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
}

const char *fab_ip_str(const struct fab_ip *ip, char *buf, size_t len)
{
	if (!ip || (ip->family != 4 && ip->family != 6) ||
	    !inet_ntop(ip->family == 6 ? AF_INET6 : AF_INET, ip->a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

int pr_listen_on(const struct fab_ip *ip, uint16_t *port)
{
	int fd = socket(ip->family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ip->family == 6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	struct sockaddr_storage ss;
	socklen_t sl = pr_sockaddr(ip, *port, &ss), al = sizeof ss;
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 4096) || getsockname(fd, (struct sockaddr *)&ss, &al)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int fab_probe_listen(const struct fab_ip *ip, uint16_t *port)
{
	return pr_listen_on(ip, port);
}

int pr_connect_to(const struct fab_ip *ip, uint16_t port, const struct fab_ip *bindto, double timeout_s)
{
	double end = pr_now_s() + timeout_s;
	struct sockaddr_storage to, from;
	socklen_t tl = pr_sockaddr(ip, port, &to), fl = 0;
	bool bound = bindto && bindto->family && bindto->family == ip->family;
	if (bound)
		fl = pr_sockaddr(bindto, 0, &from);
	for (;;) {
		int fd = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && (!bound || !bind(fd, (struct sockaddr *)&from, fl)) &&
		    !connect(fd, (struct sockaddr *)&to, tl))
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

static void refuse(struct fab_probe *pr, struct accept_pool *ap, const struct fab_ip *from, const char *why)
{
	ap->refused++;
	if (!pr->warn || ap->refused > 10)
		return;
	char msg[200], a[INET6_ADDRSTRLEN];
	snprintf(msg, sizeof msg, "refused a connection from %s %s%s", fab_ip_str(from, a, sizeof a), why,
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
		struct fab_ip from;
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
				refuse(pr, ap, &pend[i].from, "that sent no job token in time");
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
			struct fab_ip from = q->from;
			struct hello h = q->h;
			pend[i] = pend[--np];
			if (bad) {
				refuse(pr, ap, &from,
				       k <= 0 ? "that closed before its hello" : "without the job token");
				close(fd);
				continue;
			}
			int tk = ap->take(pr, ap->ctx, fd, &h, &from);
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
			struct sockaddr_storage a;
			socklen_t al = sizeof a;
			int fd = accept4(lfd, (struct sockaddr *)&a, &al, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			if (np == POOL) {
				uint32_t old = 0;
				for (uint32_t i = 1; i < np; i++)
					if (pend[i].end < pend[old].end)
						old = i;
				refuse(pr, ap, &pend[old].from, "that sent no job token (too many callers waiting)");
				close(pend[old].fd);
				pend[old] = pend[--np];
			}
			pend[np] = (struct pend){.fd = fd,
						 .end = pr_now_s() + FAB_MIN(FAB_PROBE_HELLO_S, pr->timeout_s)};
			pr_ip_of((struct sockaddr *)&a, &pend[np++].from);
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

int fab_probe_resolve_bind(const char *what, struct fab_ip *ip)
{
	memset(ip, 0, sizeof *ip);
	if (inet_pton(AF_INET, what, ip->a) == 1) {
		ip->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, what, ip->a) == 1) {
		ip->family = 6;
		return 0;
	}
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs))
		return -1;
	struct fab_ip v6 = {0, {0}};
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, what))
			continue;
		struct fab_ip x;
		pr_ip_of(i->ifa_addr, &x);
		if (x.family == 4 && !ip->family)
			*ip = x;
		/* a link-local address needs a scope: not one to bind */
		if (x.family == 6 && !v6.family && !(x.a[0] == 0xfe && (x.a[1] & 0xc0) == 0x80))
			v6 = x;
	}
	freeifaddrs(ifs);
	if (!ip->family)
		*ip = v6;
	return ip->family ? 0 : -1;
}

int fab_probe_resolve_host(const char *host, int family, struct fab_ip *ip, char *why, size_t len)
{
	char h[256];
	size_t n = strlen(host);
	/* [v6 address] */
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
		snprintf(h, sizeof h, "%.*s", (int)(n - 2), host + 1);
	else
		snprintf(h, sizeof h, "%s", host);
	struct addrinfo hints = {.ai_family = family == 4 ? AF_INET
					 : family == 6    ? AF_INET6
							  : AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM},
			*res = NULL;
	int e = *h ? getaddrinfo(h, NULL, &hints, &res) : EAI_NONAME;
	if (e || !res) {
		snprintf(why, len, "cannot resolve \"%s\"%s: %s", h,
			 family == 4           ? " to an IPv4 address"
				 : family == 6 ? " to an IPv6 address"
					       : "",
			 e ? gai_strerror(e) : "no address");
		if (res)
			freeaddrinfo(res);
		return -1;
	}
	pr_ip_of(res->ai_addr, ip);
	freeaddrinfo(res);
	return 0;
}
