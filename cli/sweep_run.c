/*
 * sweep_run.c - the points of `fabscope sweep` run: this process's share in
 * -j processes of its own (fork), each point's document (or its failure)
 * into DIR/points, a line on stderr as each ends, SIGINT and SIGTERM
 * stopping the share where it is; across a launcher's ranks (mpirun, srun),
 * each rank's mark in DIR/ranks when its share is done, and rank 0 waiting
 * for them.  The command, the merge and the Slurm array's script are
 * sweep.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void point_path(const struct sweep *s, size_t i, const char *ext, char *buf, size_t len)
{
	snprintf(buf, len, "%s/points/%s.%s", s->dir, s->g->pt[i].id, ext);
}

/* the point's run, in the child: its document, or NULL and err */
static json_t *run_point(const struct fab_grid *g, size_t i, struct fab_err *err)
{
	size_t n;
	char **sets = fab_grid_sets(g, i, &n);
	json_t *doc = cli_run_doc(g->command, g->scenario, (const char *const *)sets, n, err);
	fab_grid_sets_free(sets, n);
	return doc;
}

/* the child: point i's document, or its failure, into DIR/points */
static int child(struct sweep *s, size_t i)
{
	char path[PATH_MAX];
	struct fab_err err = {0};
	json_t *doc = run_point(s->g, i, &err);
	int rc;
	if (doc) {
		point_path(s, i, "json", path, sizeof path);
		rc = cli_write_json_file(path, doc, 1);
		json_decref(doc);
		return rc ? FAB_EXIT_IO : 0;
	}
	char msg[sizeof err.msg + 2];
	snprintf(msg, sizeof msg, "%s\n", err.msg[0] ? err.msg : "the run failed");
	point_path(s, i, "failed", path, sizeof path);
	struct out_spec spec = {"", cli_w_str, 0};
	rc = cli_write_out_file(path, &spec, msg);
	return rc ? FAB_EXIT_IO : 1;
}

static void fmt_s(double s, char *b, size_t len)
{
	if (s < 10)
		snprintf(b, len, "%.1f s", s);
	else if (s < 120)
		snprintf(b, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(b, len, "%.0f min", s / 60);
	else
		snprintf(b, len, "%.1f h", s / 3600);
}

static void tell(struct sweep *s, size_t i, bool ok, double took, size_t running)
{
	if (s->quiet)
		return;
	size_t n;
	char **sets = fab_grid_sets(s->g, i, &n);
	fprintf(stderr, "sweep: point %zu (", i);
	for (size_t k = s->g->nfixed; k < n; k++)
		fprintf(stderr, "%s%s", k > s->g->nfixed ? " " : "", sets[k]);
	fab_grid_sets_free(sets, n);
	char a[32], b[32];
	fmt_s(took, a, sizeof a);
	double el = cli_wall_s() - s->t0, left = s->done ? el / (double)s->done * (double)(s->todo - s->done) : 0;
	fmt_s(left, b, sizeof b);
	fprintf(stderr, "): %s in %s; %zu/%zu done, %zu failed, %zu running, about %s left\n", ok ? "ok" : "FAILED", a,
		s->done, s->todo, s->failed, running, b);
}

struct slot {
	pid_t pid;
	size_t point;
	double t0;
};

/* this share's points, jobs at a time; 0, or an exit status when the
 * sweep could not go on (interrupted, cannot fork) */
int cli_sweep_share(struct sweep *s)
{
	stop_sig = 0;
	size_t *todo = fab_xcalloc(s->g->npts + 1, sizeof *todo);
	char path[PATH_MAX];
	for (size_t i = s->share; i < s->g->npts; i += s->shares) {
		point_path(s, i, "json", path, sizeof path);
		if (cli_is_file(path)) {
			s->skipped++;
			continue;
		}
		todo[s->todo++] = i;
	}
	if (!s->quiet)
		fprintf(stderr, "sweep: %zu points%s%s: %zu to run, %zu already done, %u at a time\n",
			s->todo + s->skipped, s->shares > 1 ? " in this share" : "",
			s->shares > 1 ? "" : " in the grid", s->todo, s->skipped, s->jobs);
	struct slot *sl = fab_xcalloc(s->jobs, sizeof *sl);
	size_t next = 0, running = 0;
	int rc = 0;
	s->t0 = cli_wall_s();
	struct sigaction sa = {0}, old_int, old_term;
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	while ((next < s->todo && !stop_sig) || running) {
		while (next < s->todo && running < s->jobs && !stop_sig) {
			size_t i = todo[next++];
			point_path(s, i, "failed", path, sizeof path);
			unlink(path); /* tried again */
			fflush(NULL);
			pid_t pid = fork();
			if (pid < 0) {
				fprintf(stderr, "fabscope: sweep: fork: %s\n", strerror(errno));
				rc = FAB_EXIT_INTERNAL;
				stop_sig = SIGTERM;
				break;
			}
			if (!pid) {
				sigaction(SIGINT, &old_int, NULL);
				sigaction(SIGTERM, &old_term, NULL);
				int crc = child(s, i);
				fab_grid_free(s->g);
				free(todo);
				free(sl);
				exit(crc);
			}
			size_t k = 0;
			while (sl[k].pid)
				k++;
			sl[k] = (struct slot){pid, i, cli_wall_s()};
			running++;
		}
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t k = 0;
		while (k < s->jobs && sl[k].pid != pid)
			k++;
		if (k == s->jobs)
			continue;
		size_t i = sl[k].point;
		double took = cli_wall_s() - sl[k].t0;
		sl[k].pid = 0;
		running--;
		point_path(s, i, "json", path, sizeof path);
		bool ok = cli_is_file(path);
		if (!ok) {
			point_path(s, i, "failed", path, sizeof path);
			if (!cli_is_file(path) && !stop_sig) {
				char msg[128];
				if (WIFSIGNALED(st))
					snprintf(msg, sizeof msg, "the point's process ended by signal %d\n",
						 WTERMSIG(st));
				else
					snprintf(msg, sizeof msg, "the point's process exited %d without a result\n",
						 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
				struct out_spec spec = {"", cli_w_str, 0};
				cli_write_out_file(path, &spec, msg);
			}
		}
		if (stop_sig && !ok)
			continue; /* interrupted: neither done nor failed */
		s->done++;
		s->failed += !ok;
		tell(s, i, ok, took, running);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (stop_sig && !rc) {
		fprintf(stderr,
			"fabscope: sweep: interrupted; %zu of %zu points of this share done (run it again to "
			"go on)\n",
			s->skipped + s->done - s->failed, s->todo + s->skipped);
		rc = 128 + stop_sig;
	}
	free(sl);
	free(todo);
	return rc;
}

/* rank and size under a launcher (no MPI library: the launcher's
 * variables), and a name for this launch that every rank shares */
bool cli_sweep_launcher(uint32_t *rank, uint32_t *size, char *job, size_t len)
{
	static const char *const v[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
					   {"PMI_RANK", "PMI_SIZE"},
					   {"SLURM_PROCID", "SLURM_NTASKS"}};
	for (size_t i = 0; i < 3; i++) {
		const char *r = getenv(v[i][0]), *n = getenv(v[i][1]);
		if (!r || !n || (i == 2 && !getenv("SLURM_STEP_ID")))
			continue; /* Slurm: ranks of a step (srun), not a batch script */
		char *e1, *e2;
		unsigned long a = strtoul(r, &e1, 10), b = strtoul(n, &e2, 10);
		if (*e1 || *e2 || !*r || !*n || !b || a >= b || b > 100000)
			continue;
		*rank = (uint32_t)a;
		*size = (uint32_t)b;
		struct fab_probe_params p = {0};
		const char *src;
		char why[200];
		if (fab_probe_env_token(&p, &src, why, sizeof why))
			snprintf(job, len, "%s", "job");
		else
			snprintf(job, len, "%02x%02x%02x%02x%02x%02x%02x%02x", p.token[0], p.token[1], p.token[2],
				 p.token[3], p.token[4], p.token[5], p.token[6], p.token[7]);
		return b > 1;
	}
	return false;
}

/* the point documents in DIR/points: what rank 0 watches for progress */
static size_t points_done(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/points", dir);
	DIR *d = opendir(path);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* rank 0: every other rank's mark that its share is done; a rank's mark
 * that it failed ends the wait, and so do timeout_s
 * seconds (0: none) in which no point was finished and no rank done */
int cli_sweep_wait_ranks(const char *dir, const char *job, uint32_t size, bool quiet, double timeout_s)
{
	char path[PATH_MAX];
	double t0 = cli_wall_s(), told = 0, looked = t0, moved = t0;
	size_t seen = timeout_s > 0 ? points_done(dir) : 0;
	for (uint32_t r = 1; r < size;) {
		snprintf(path, sizeof path, "%s/ranks/%s.%u.done", dir, job, r);
		if (cli_is_file(path)) {
			r++;
			moved = cli_wall_s();
			continue;
		}
		snprintf(path, sizeof path, "%s/ranks/%s.%u.failed", dir, job, r);
		if (cli_is_file(path)) {
			fprintf(stderr,
				"fabscope: sweep: rank %u of %u failed; the table is not merged: run the sweep "
				"again to resume\n",
				r, size);
			return FAB_EXIT_IO;
		}
		if (stop_sig)
			return 128 + stop_sig;
		double now = cli_wall_s();
		if (!quiet && now - t0 > told + 30) {
			told = now - t0;
			fprintf(stderr, "sweep: rank 0 waits for rank %u of %u\n", r, size);
		}
		if (timeout_s > 0 && now - looked >= 1) { /* progress: a point finished anywhere */
			size_t n = points_done(dir);
			looked = now;
			if (n != seen) {
				seen = n;
				moved = now;
			}
			if (now - moved > timeout_s) {
				fprintf(stderr,
					"fabscope: sweep: rank %u of %u has not finished its share, and no point was "
					"finished for %.0f s (--timeout); the table is not merged: run the sweep again "
					"to resume\n",
					r, size, timeout_s);
				return FAB_EXIT_IO;
			}
		}
		usleep(100000);
	}
	for (uint32_t r = 1; r < size; r++) {
		snprintf(path, sizeof path, "%s/ranks/%s.%u.done", dir, job, r);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/ranks", dir);
	rmdir(path);
	return 0;
}

/* what a rank leaves for rank 0: DIR/ranks/JOB.RANK.what */
int cli_sweep_mark_rank(const char *dir, const char *job, uint32_t rank, const char *what)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/ranks", dir);
	if (cli_mkdir_p(path)) {
		fprintf(stderr, "fabscope: %s: %s\n", path, strerror(errno));
		return FAB_EXIT_IO;
	}
	snprintf(path, sizeof path, "%s/ranks/%s.%u.%s", dir, job, rank, what);
	struct out_spec spec = {"", cli_w_str, 0};
	return cli_write_out_file(path, &spec, "done\n");
}
