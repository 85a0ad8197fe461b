/*
 * net.c - the probe's sockets: listening and connecting on the addresses it
 * is told, I/O with deadlines, and the job token checked on every accepted
 * connection (a connection without it is refused and reported through the
 * params' warn callback).
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

/* Accepts one connection that presents the token; refuses (and logs)
 * others, and goes on. */
int pr_accept_checked(const struct fab_probe *pr, int lfd, struct hello *h, uint32_t *from)
{
	double end = pr_now_s() + pr->timeout_s;
	for (;;) {
		struct pollfd pf = {lfd, POLLIN, 0};
		int ms = (int)((end - pr_now_s()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) <= 0)
			return -1;
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		int fd = accept(lfd, (struct sockaddr *)&a, &al);
		if (fd < 0)
			continue;
		if (pr_full_io(fd, h, sizeof *h, false, 5) || h->token != pr->token) {
			if (pr->warn) {
				char msg[96];
				snprintf(msg, sizeof msg, "refused a connection from %s without the job token",
					 inet_ntoa(a.sin_addr));
				pr->warn(pr->warn_ctx, msg);
			}
			close(fd);
			continue;
		}
		if (from)
			*from = a.sin_addr.s_addr;
		return fd;
	}
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
