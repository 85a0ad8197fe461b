/*
 * probe_local.c - the probe's local launcher (--local N): a rendezvous
 * socket and a fresh job token, then one process per rank on this machine;
 * one rank failing stops the others.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/fabscope.h"
#include "cli.h"

/* after a rank fails, the others have this long to leave before SIGKILL */
#define LOCAL_GRACE_S 3.0

int cli_probe_local(struct fab_probe_params *pp, struct probe_opts *o, uint32_t local)
{
	/* rank 0 makes -J's file; its folder is checked here, before any rank
	 * starts (else the others hear only that rank 0 went away) */
	if (o->tool_json) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s", o->tool_json);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = 0;
		if (access(slash ? dir : ".", W_OK | X_OK)) {
			fprintf(stderr, "fabscope: -J %s: %s\n", o->tool_json, strerror(errno));
			return FAB_EXIT_IO;
		}
	}
	struct fab_ip at = pp->bind;
	uint16_t port = 0;
	char ip[64];
	if (!at.family) { /* loopback */
		at.family = 4;
		at.a[0] = 127;
		at.a[3] = 1;
	}
	int lfd = fab_probe_listen(&at, &port);
	if (lfd < 0) {
		fprintf(stderr, "fabscope: probe: cannot listen on %s: %s\n", fab_ip_str(&at, ip, sizeof ip),
			strerror(errno));
		return FAB_EXIT_IO;
	}
	fab_ip_str(&at, ip, sizeof ip);
	snprintf(pp->master, sizeof pp->master, at.family == 6 ? "[%s]" : "%s", ip);
	pp->nranks = local;
	o->local_ranks = local;
	pp->master_port = port;
	/* a fresh random token: only this job's processes know it */
	if (getrandom(pp->token, sizeof pp->token, 0) != (ssize_t)sizeof pp->token) {
		fprintf(stderr, "fabscope: probe: no random bytes for the job token: %s\n", strerror(errno));
		close(lfd);
		return FAB_EXIT_IO;
	}
	pp->token[0] |= 1; /* never all zero */
	fflush(stdout);
	pid_t *pid = fab_xcalloc(local, sizeof *pid);
	for (uint32_t r = 0; r < local; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			pp->rank = r;
			if (r != 0) {
				close(lfd);
				pp->rendezvous_fd = -1;
			} else {
				pp->rendezvous_fd = lfd;
			}
			int rc = cli_probe_rank(pp, o);
			fflush(stdout);
			_exit(rc);
		}
		if (pid[r] < 0) {
			fprintf(stderr, "fabscope: probe: fork: %s\n", strerror(errno));
			for (uint32_t k = 0; k < r; k++)
				kill(pid[k], SIGTERM);
			break;
		}
	}
	close(lfd);
	/* one rank failing stops the others: SIGTERM, then SIGKILL for those
	 * that have not gone after a grace period (a stopped process never acts
	 * on SIGTERM) */
	int rc = FAB_EXIT_OK;
	double kill_at = 0;
	for (uint32_t left = local; left > 0;) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);
		if (w < 0 && errno != EINTR)
			break;
		if (w <= 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
			if (kill_at > 0 && t >= kill_at) {
				for (uint32_t k = 0; k < local; k++)
					if (pid[k] > 0)
						kill(pid[k], SIGKILL);
				kill_at = -1;
			} else if (rc && kill_at == 0) {
				kill_at = t + LOCAL_GRACE_S;
			}
			usleep(20000);
			continue;
		}
		left--;
		for (uint32_t k = 0; k < local; k++)
			if (pid[k] == w)
				pid[k] = 0;
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : FAB_EXIT_IO;
		if (code && !rc) {
			rc = code;
			/* rank 0 may still write the partial document: give it a moment */
			if (w != pid[0] && pid[0] > 0 && code == FAB_EXIT_IO) {
				for (int i = 0; i < 20; i++) {
					if (waitpid(pid[0], &st, WNOHANG) == pid[0]) {
						pid[0] = 0;
						left--;
						break;
					}
					usleep(50000);
				}
			}
			for (uint32_t k = 0; k < local; k++)
				if (pid[k] > 0) {
					kill(pid[k], SIGTERM);
					kill(pid[k], SIGCONT);
				}
		}
	}
	free(pid);
	return rc;
}
