/*
 * sweep.c - fabscope sweep: every point of a design space (a grid of
 * scenario keys and seeds), in parallel processes on this machine, across
 * MPI ranks, or as a Slurm job array; each point's result document in
 * DIR/points/, then one merged table (DIR/sweep.csv, DIR/sweep.json).
 *
 * A point runs in a process of its own (fork): a crash or a bad
 * combination fails that point alone.  Its document is named by its id (a
 * hash of what it computes), so a run that finds it skips it: an
 * interrupted sweep resumes where it stopped, and ranks or array tasks
 * that share the directory never redo each other's work.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char *usage_sweep = "usage: fabscope sweep GRID.yaml [-o DIR] [-j N] [-q]\n"
				 "       fabscope sweep GRID.yaml --slurm [--tasks N] [-j N] [-o DIR]\n"
				 "       fabscope sweep --run DIR --tasks N [-j N]     (a Slurm array task)\n"
				 "       fabscope sweep --merge DIR\n"
				 "\n"
				 "Runs every point of a design space: the base scenario with each combination\n"
				 "of the grid's values (keys in --set syntax) and seeds, through sim, coll or\n"
				 "matrix, and merges the result documents into one table with the swept keys as\n"
				 "columns (DIR/sweep.csv, DIR/sweep.json; printed as text).  Each point's document\n"
				 "is kept in DIR/points/; a point whose document is there is not run again, so an\n"
				 "interrupted sweep resumes.  A failed point is reported and the others go on.\n"
				 "\n"
				 "Under mpirun or srun (Open MPI, MPICH/PMI or Slurm ranks) each rank runs its\n"
				 "share of the points and rank 0 merges; DIR must be shared by all ranks.  Rank 0\n"
				 "stops waiting when a rank reports that it failed, or after --timeout seconds\n"
				 "in which no rank finished a point.\n"
				 "\n"
				 "options:\n"
				 "  -o, --out DIR     where points and tables go (default: GRID's name + .sweep)\n"
				 "  -j, --jobs N      points at once on this machine (default 1)\n"
				 "  --slurm           write DIR/sweep.sbatch, a job array whose tasks each run\n"
				 "                    their share (sbatch it, then fabscope sweep --merge DIR)\n"
				 "  --tasks N         array tasks (default: 1 per point, at most 1000)\n"
				 "  --run DIR         run the share of array task SLURM_ARRAY_TASK_ID of --tasks\n"
				 "  --merge DIR       merge the points' documents in DIR into the table\n"
				 "  --timeout S       under a launcher: rank 0 gives up after S seconds without\n"
				 "                    a point finished anywhere (default 0: it waits)\n"
				 "  -q, --quiet       no progress on stderr\n"
				 "  -h, --help        show this help (--version: the version)\n"
				 "\n"
				 "exit status: 0 every point ok, 1 some point failed (the table says which),\n"
				 "2 usage, 3 bad grid, 4 I/O error or (rank 0) a rank failed or --timeout passed\n";

struct sweep {
	struct fab_grid *g;
	const char *dir;
	uint32_t share, shares; /* this process runs the points i with i % shares == share */
	uint32_t jobs;
	bool quiet;
	/* progress of this share */
	size_t todo, done, failed, skipped;
	double t0;
};

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static int mkdir_p(const char *path)
{
	char b[PATH_MAX];
	if (snprintf(b, sizeof b, "%s", path) >= (int)sizeof b)
		return -1;
	for (char *c = b + 1; *c; c++)
		if (*c == '/') {
			*c = 0;
			if (mkdir(b, 0777) && errno != EEXIST)
				return -1;
			*c = '/';
		}
	return mkdir(b, 0777) && errno != EEXIST ? -1 : 0;
}

static void point_path(const struct sweep *s, size_t i, const char *ext, char *buf, size_t len)
{
	snprintf(buf, len, "%s/points/%s.%s", s->dir, s->g->pt[i].id, ext);
}

static int w_json(FILE *f, void *ctx, int indent)
{
	return cli_json_write(ctx, f, JSON_INDENT(indent)) || fputc('\n', f) == EOF;
}

static int w_str(FILE *f, void *ctx, int arg)
{
	(void)arg;
	return fputs(ctx, f) == EOF;
}

static int write_json_file(const char *path, json_t *doc, int indent)
{
	struct out_spec spec = {"", w_json, indent};
	return cli_write_out_file(path, &spec, doc);
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
		rc = write_json_file(path, doc, 1);
		json_decref(doc);
		return rc ? FAB_EXIT_IO : 0;
	}
	char msg[sizeof err.msg + 2];
	snprintf(msg, sizeof msg, "%s\n", err.msg[0] ? err.msg : "the run failed");
	point_path(s, i, "failed", path, sizeof path);
	struct out_spec spec = {"", w_str, 0};
	rc = cli_write_out_file(path, &spec, msg);
	return rc ? FAB_EXIT_IO : 1;
}

static bool exists(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
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
static int run_share(struct sweep *s)
{
	size_t *todo = fab_xcalloc(s->g->npts + 1, sizeof *todo);
	char path[PATH_MAX];
	for (size_t i = s->share; i < s->g->npts; i += s->shares) {
		point_path(s, i, "json", path, sizeof path);
		if (exists(path)) {
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
		bool ok = exists(path);
		if (!ok) {
			point_path(s, i, "failed", path, sizeof path);
			if (!exists(path) && !stop_sig) {
				char msg[128];
				if (WIFSIGNALED(st))
					snprintf(msg, sizeof msg, "the point's process ended by signal %d\n",
						 WTERMSIG(st));
				else
					snprintf(msg, sizeof msg, "the point's process exited %d without a result\n",
						 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
				struct out_spec spec = {"", w_str, 0};
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

static char *read_small(const char *path, size_t max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *b = fab_xcalloc(max + 1, 1);
	size_t n = fread(b, 1, max, f);
	fclose(f);
	b[n] = 0;
	b[strcspn(b, "\n")] = 0;
	return b;
}

struct merged {
	json_t *doc;
	const struct fab_grid *g;
};

static int w_merged(FILE *f, void *ctx, int csv)
{
	struct merged *m = ctx;
	if (csv)
		return fab_grid_write_csv(f, m->doc) != 0;
	return w_json(f, m->doc, 1);
}

/* every point's document (or failure) into the table: DIR/sweep.csv and
 * DIR/sweep.json, and the text on stdout */
static int merge(const struct fab_grid *g, const char *dir)
{
	json_t **docs = fab_xcalloc(g->npts + 1, sizeof *docs);
	char **errs = fab_xcalloc(g->npts + 1, sizeof *errs);
	char path[PATH_MAX];
	int rc = FAB_EXIT_OK;
	size_t bad = 0;
	for (size_t i = 0; i < g->npts; i++) {
		snprintf(path, sizeof path, "%s/points/%s.json", dir, g->pt[i].id);
		if (exists(path)) {
			int lrc;
			if (!(docs[i] = cli_load_doc(path, &lrc)))
				errs[i] = fab_xstrdup("its document is not a result document");
		} else {
			snprintf(path, sizeof path, "%s/points/%s.failed", dir, g->pt[i].id);
			errs[i] = read_small(path, 1000);
		}
		bad += !docs[i];
	}
	struct merged m = {fab_grid_merge(g, docs, (const char *const *)errs), g};
	static const struct out_spec specs[] = {{"sweep.json", w_merged, 0}, {"sweep.csv", w_merged, 1}};
	rc = cli_write_out_dir(dir, specs, 2, &m);
	if (!rc) {
		fab_grid_write_text(stdout, m.doc);
		printf("table: %s/sweep.csv, %s/sweep.json\n", dir, dir);
		if (fflush(stdout))
			rc = FAB_EXIT_IO;
	}
	for (size_t i = 0; !rc && i < g->npts; i++)
		if (!docs[i])
			fprintf(stderr, "fabscope: sweep: point %zu %s: %s\n", i, errs[i] ? "failed" : "was not run",
				errs[i] ? errs[i] : "(no document)");
	if (!rc && bad)
		rc = FAB_EXIT_CHECKS;
	for (size_t i = 0; i < g->npts; i++) {
		json_decref(docs[i]);
		free(errs[i]);
	}
	json_decref(m.doc);
	free(docs);
	free(errs);
	return rc;
}

static struct fab_grid *load_plan(const char *dir, int *rc)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/plan.json", dir);
	json_error_t je;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		if (je.line < 1)
			fprintf(stderr, "fabscope: %s: %s (is it a sweep's directory?)\n", path, je.text);
		else
			fprintf(stderr, "fabscope: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
		*rc = je.line < 1 ? FAB_EXIT_IO : FAB_EXIT_INPUT;
		return NULL;
	}
	struct fab_err err = {0};
	struct fab_grid *g = fab_grid_from_plan(j, path, &err);
	json_decref(j);
	if (!g) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		*rc = FAB_EXIT_INPUT;
	}
	return g;
}

/* rank and size under a launcher (no MPI library: the launcher's
 * variables), and a name for this launch that every rank shares */
static bool launcher(uint32_t *rank, uint32_t *size, char *job, size_t len)
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
static int wait_ranks(const char *dir, const char *job, uint32_t size, bool quiet, double timeout_s)
{
	char path[PATH_MAX];
	double t0 = cli_wall_s(), told = 0, looked = t0, moved = t0;
	size_t seen = timeout_s > 0 ? points_done(dir) : 0;
	for (uint32_t r = 1; r < size;) {
		snprintf(path, sizeof path, "%s/ranks/%s.%u.done", dir, job, r);
		if (exists(path)) {
			r++;
			moved = cli_wall_s();
			continue;
		}
		snprintf(path, sizeof path, "%s/ranks/%s.%u.failed", dir, job, r);
		if (exists(path)) {
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
static int mark_rank(const char *dir, const char *job, uint32_t rank, const char *what)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/ranks", dir);
	if (mkdir_p(path)) {
		fprintf(stderr, "fabscope: %s: %s\n", path, strerror(errno));
		return FAB_EXIT_IO;
	}
	snprintf(path, sizeof path, "%s/ranks/%s.%u.%s", dir, job, rank, what);
	struct out_spec spec = {"", w_str, 0};
	return cli_write_out_file(path, &spec, "done\n");
}

/* s in single quotes for the shell (a ' as '\\'') */
static void shell_quote(const char *s, char *out, size_t len)
{
	size_t n = 0;
	out[n++] = '\'';
	for (; *s && n + 6 < len; s++) {
		if (*s == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *s;
		}
	}
	out[n++] = '\'';
	out[n] = 0;
}

static int write_sbatch(const struct fab_grid *g, const char *dir, uint32_t tasks, uint32_t jobs)
{
	char exe[PATH_MAX], adir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || !realpath(dir, adir)) {
		fprintf(stderr, "fabscope: sweep: cannot tell this program's or %s's path\n", dir);
		return FAB_EXIT_IO;
	}
	exe[n] = 0;
	char *s = NULL, qexe[3 * PATH_MAX], qdir[3 * PATH_MAX];
	size_t len = 0;
	shell_quote(exe, qexe, sizeof qexe);
	shell_quote(adir, qdir, sizeof qdir);
	FILE *f = open_memstream(&s, &len);
	fprintf(f,
		"#!/bin/bash\n"
		"# fabscope sweep: %zu points of %s (%s) as a Slurm job array of %u tasks.\n"
		"#   sbatch %s/sweep.sbatch\n"
		"# then, when every task has ended (or as a job that waits for them:\n"
		"#   sbatch --dependency=afterany:JOBID --wrap \"%s sweep --merge %s\"):\n"
		"#   %s sweep --merge %s\n"
		"# A task runs the points i with i mod %u = SLURM_ARRAY_TASK_ID; points already\n"
		"# done are skipped, so resubmitting the array (or some tasks) finishes a sweep.\n"
		"#SBATCH --job-name=fabscope-sweep\n"
		"#SBATCH --array=0-%u\n"
		"#SBATCH --cpus-per-task=%u\n"
		"#SBATCH --output=%s/logs/%%A_%%a.out\n"
		"exec %s sweep --run %s --tasks %u -j \"${SLURM_CPUS_PER_TASK:-%u}\"\n",
		g->npts, g->origin, fab_grid_cmd_name(g->command), tasks, qdir, qexe, qdir, qexe, qdir, tasks,
		tasks - 1, jobs, adir, qexe, qdir, tasks, jobs);
	fclose(f);
	char path[PATH_MAX], logs[PATH_MAX];
	snprintf(logs, sizeof logs, "%s/logs", adir);
	snprintf(path, sizeof path, "%s/sweep.sbatch", adir);
	struct out_spec spec = {"", w_str, 0};
	int rc = mkdir_p(logs) ? FAB_EXIT_IO : cli_write_out_file(path, &spec, s);
	free(s);
	if (!rc) {
		chmod(path, 0755);
		printf("sweep: %zu points in %u array tasks: %s\nsubmit: sbatch %s\nthen:   %s sweep --merge %s\n",
		       g->npts, tasks, path, path, exe, adir);
	}
	return rc;
}

static int parse_count(const char *opt, const char *s, uint32_t max, uint32_t *out)
{
	char *e;
	unsigned long v = strtoul(s, &e, 10);
	if (!*s || *e || !v || v > max || *s == '-') {
		fprintf(stderr, "fabscope: %s %s: expected a whole number from 1 to %u\n", opt, s, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{"out", required_argument, NULL, 'o'},     {"jobs", required_argument, NULL, 'j'},
		{"slurm", no_argument, NULL, 'S'},         {"tasks", required_argument, NULL, 'T'},
		{"run", required_argument, NULL, 'R'},     {"merge", required_argument, NULL, 'M'},
		{"timeout", required_argument, NULL, 'W'}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},          {0, 0, 0, 0},
	};
	struct sweep s = {.jobs = 1, .shares = 1};
	const char *run_dir = NULL, *merge_dir = NULL;
	bool slurm = false;
	uint32_t tasks = 0, timeout_s = 0;
	char defdir[PATH_MAX];
	int c, rc = FAB_EXIT_OK;
	while ((c = getopt_long(argc, argv, "o:j:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			s.dir = optarg;
			break;
		case 'j':
			if (parse_count("-j", optarg, 1024, &s.jobs))
				return FAB_EXIT_USAGE;
			break;
		case 'S':
			slurm = true;
			break;
		case 'T':
			if (parse_count("--tasks", optarg, 100000, &tasks))
				return FAB_EXIT_USAGE;
			break;
		case 'R':
			run_dir = optarg;
			break;
		case 'M':
			merge_dir = optarg;
			break;
		case 'W':
			if (parse_count("--timeout", optarg, 1000000, &timeout_s))
				return FAB_EXIT_USAGE;
			break;
		case 'q':
			s.quiet = true;
			break;
		case 'h':
			fputs(usage_sweep, stdout);
			return FAB_EXIT_OK;
		default:
			fputs(usage_sweep, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	int nargs = argc - optind;
	if ((run_dir || merge_dir) ? nargs != 0 || (run_dir && merge_dir) || slurm : nargs != 1) {
		fprintf(stderr, "fabscope: sweep: %s\n%s",
			(run_dir || merge_dir) ? "--run and --merge take a directory and no grid (one of them)"
					       : "one GRID.yaml is needed",
			usage_sweep);
		return FAB_EXIT_USAGE;
	}
	if (run_dir && !tasks) {
		fprintf(stderr, "fabscope: sweep: --run needs --tasks N (the array's size)\n");
		return FAB_EXIT_USAGE;
	}
	stop_sig = 0;
	if (merge_dir || run_dir) {
		s.dir = merge_dir ? merge_dir : run_dir;
		if (!(s.g = load_plan(s.dir, &rc)))
			return rc;
		if (merge_dir) {
			rc = merge(s.g, s.dir);
			fab_grid_free(s.g);
			return rc;
		}
		const char *id = getenv("SLURM_ARRAY_TASK_ID"), *cnt = getenv("SLURM_ARRAY_TASK_COUNT");
		char *e = NULL;
		unsigned long task = id && *id && *id != '-' ? strtoul(id, &e, 10) : 0;
		if (!id || !*id || *e || *id == '-') {
			fprintf(stderr,
				"fabscope: sweep --run: SLURM_ARRAY_TASK_ID (the task's index) is not "
				"set or not a number\n");
			fab_grid_free(s.g);
			return FAB_EXIT_USAGE;
		}
		if (task >= tasks || (cnt && strtoul(cnt, NULL, 10) > tasks)) {
			fprintf(stderr, "fabscope: sweep --run: array task %lu is not among the %u of --tasks\n", task,
				tasks);
			fab_grid_free(s.g);
			return FAB_EXIT_USAGE;
		}
		s.share = (uint32_t)task;
		s.shares = tasks;
		rc = run_share(&s);
		if (!rc && s.failed)
			rc = FAB_EXIT_CHECKS;
		fab_grid_free(s.g);
		return rc;
	}
	const char *grid = argv[optind];
	struct fab_err err = {0};
	if (!(s.g = fab_grid_load(grid, fab_version_string(), &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return fab_err_exit_code(err.code);
	}
	if (!s.dir) {
		const char *b = strrchr(grid, '/');
		b = b ? b + 1 : grid;
		size_t l = strcspn(b, ".");
		snprintf(defdir, sizeof defdir, "%.*s.sweep", (int)(l ? l : strlen(b)), b);
		s.dir = defdir;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/points", s.dir);
	if (mkdir_p(path)) {
		fprintf(stderr, "fabscope: %s: %s\n", path, strerror(errno));
		fab_grid_free(s.g);
		return FAB_EXIT_IO;
	}
	json_t *plan = fab_grid_plan_json(s.g);
	snprintf(path, sizeof path, "%s/plan.json", s.dir);
	rc = write_json_file(path, plan, 1);
	json_decref(plan);
	if (rc)
		goto out;
	if (slurm) {
		if (!tasks)
			tasks = (uint32_t)FAB_MIN(s.g->npts, 1000);
		rc = write_sbatch(s.g, s.dir, (uint32_t)FAB_MIN(tasks, s.g->npts), s.jobs);
		goto out;
	}
	char job[40];
	uint32_t rank = 0, size = 1;
	if (launcher(&rank, &size, job, sizeof job)) {
		s.share = rank;
		s.shares = size;
	}
	rc = run_share(&s);
	if (rc) {
		if (size > 1 && rank) /* rank 0 stops waiting for this share */
			mark_rank(s.dir, job, rank, "failed");
		goto out;
	}
	if (size > 1 && rank) {
		rc = mark_rank(s.dir, job, rank, "done");
		if (!rc && s.failed)
			rc = FAB_EXIT_CHECKS;
		goto out;
	}
	if (size > 1 && (rc = wait_ranks(s.dir, job, size, s.quiet, timeout_s)))
		goto out;
	rc = merge(s.g, s.dir);
out:
	fab_grid_free(s.g);
	return rc;
}
