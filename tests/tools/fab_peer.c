/*
 * fab_peer - a hostile peer for the probe's tests, on loopback: it speaks
 * the rendezvous and control protocol of src/probe/ badly on purpose.
 *
 *   fab_peer PORT TOKEN silent N SECONDS     N connections that say nothing
 *   fab_peer PORT TOKEN garbage              32 bytes that are no hello
 *   fab_peer PORT TOKEN join RANK N KIND VALUE [KIND VALUE...]
 *            joins as RANK of a job of N with TOKEN, opens its one data
 *            connection to rank 0 (run rank 0 with --conns 1), then sends
 *            those control frames to rank 0 and waits for it to hang up
 *   fab_peer PORT TOKEN data RANK N STEP LEN
 *            joins, opens its one data connection to rank 0 (run rank 0
 *            with --conns 1), agrees on sizes, sends a message header
 *            {STEP, LEN} and bytes
 *
 * Exit status: 0 when rank 0 hung up on it (or it was done), 1 on a setup
 * error.  Rank 0 is at 127.0.0.1:PORT.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/probe/probe_int.h"

static int dial(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 250; i++) {
		if (!connect(fd, (struct sockaddr *)&a, sizeof a))
			return fd;
		close(fd);
		usleep(20000);
		fd = socket(AF_INET, SOCK_STREAM, 0);
	}
	close(fd);
	return -1;
}

/* waits until the peer closes (or s seconds) */
static void wait_close(int fd, int s)
{
	char b[4096];
	struct pollfd pf = {fd, POLLIN, 0};
	while (poll(&pf, 1, s * 1000) > 0 && recv(fd, b, sizeof b, 0) > 0)
		;
}

/* joins as rank r of n: a hello with the token and a data port that
 * listens; returns the control connection, and the address table */
static int join(uint16_t port, const char *token, uint32_t r, uint32_t n, struct addr *tab)
{
	uint16_t dport = 0;
	struct fab_ip lo = {4, {127, 0, 0, 1}};
	int lfd = pr_listen_on(&lo, &dport);
	int fd = dial(port);
	if (fd < 0 || lfd < 0)
		return -1;
	struct hello h = {r, dport, 4, 0, {127, 0, 0, 1}, {0}};
	fab_probe_token_of(token, h.token);
	if (pr_full_io(fd, &h, sizeof h, true, 5) || pr_full_io(fd, tab, n * sizeof *tab, false, 30))
		return -1;
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	uint16_t port = (uint16_t)atoi(argv[1]);
	const char *token = argv[2], *mode = argv[3];
	if (!strcmp(mode, "silent") && argc == 6) {
		int n = atoi(argv[4]), fds[64];
		for (int i = 0; i < n && i < 64; i++)
			fds[i] = dial(port);
		sleep((unsigned)atoi(argv[5]));
		for (int i = 0; i < n && i < 64; i++)
			close(fds[i]);
		return 0;
	}
	if (!strcmp(mode, "garbage")) {
		int fd = dial(port);
		uint8_t junk[32];
		for (int i = 0; i < 32; i++)
			junk[i] = (uint8_t)(i * 37 + 11);
		if (fd < 0 || pr_full_io(fd, junk, sizeof junk, true, 5))
			return 1;
		wait_close(fd, 10);
		return 0;
	}
	if ((!strcmp(mode, "join") && argc >= 8 && argc % 2 == 0) || (!strcmp(mode, "data") && argc == 8)) {
		uint32_t r = (uint32_t)atoi(argv[4]), n = (uint32_t)atoi(argv[5]);
		struct addr tab[64];
		if (n > 64)
			return 1;
		int fd = join(port, token, r, n, tab);
		if (fd < 0)
			return 1;
		struct fab_ip to = pr_addr_ip(&tab[0]);
		int dfd = pr_connect_to(&to, tab[0].port, NULL, 5);
		struct hello h = {r, 0, 0, 0, {0}, {0}};
		fab_probe_token_of(token, h.token);
		if (dfd < 0 || pr_full_io(dfd, &h, sizeof h, true, 5))
			return 1;
		if (!strcmp(mode, "join")) {
			for (int i = 6; i + 1 < argc; i += 2) {
				uint32_t f[2] = {(uint32_t)strtoul(argv[i], NULL, 0),
						 (uint32_t)strtoul(argv[i + 1], NULL, 0)};
				if (pr_full_io(fd, f, sizeof f, true, 5))
					return 0; /* hung up already */
			}
			wait_close(fd, 30);
			return 0;
		}
		/* through the size agreement (F_MIN: any size), then the header */
		uint32_t hdr[2] = {(uint32_t)strtoul(argv[6], NULL, 0), (uint32_t)strtoul(argv[7], NULL, 0)};
		uint32_t agree[2] = {F_MIN, UINT32_MAX};
		if (pr_full_io(fd, agree, sizeof agree, true, 5))
			return 1;
		uint8_t junk[4096] = {0};
		if (pr_full_io(dfd, hdr, sizeof hdr, true, 5))
			return 1;
		(void)!pr_full_io(dfd, junk, sizeof junk, true, 2);
		wait_close(dfd, 30);
		close(fd);
		return 0;
	}
	return 1;
}
