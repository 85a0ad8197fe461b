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
 *
 * This file: the command (its options, then one step for each way to run:
 * a new sweep here or under a launcher, --slurm, --run, --merge), the
 * sweep's directory (plan.json), the merge and the Slurm array's script.
 * Running the points and waiting for a launcher's ranks: sweep_run.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int cli_mkdir_p(const char *path)
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

static int w_json(FILE *f, void *ctx, int indent)
{
	return cli_json_write(ctx, f, JSON_INDENT(indent)) || fputc('\n', f) == EOF;
}

int cli_w_str(FILE *f, void *ctx, int arg)
{
	(void)arg;
	return fputs(ctx, f) == EOF;
}

int cli_write_json_file(const char *path, json_t *doc, int indent)
{
	struct out_spec spec = {"", w_json, indent};
	return cli_write_out_file(path, &spec, doc);
}

bool cli_is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
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

/* a results column that no point that ran has: a path misspelled
 * (summary.dropz), or one that this command does not write */
static void absent_fields(const json_t *merged)
{
	const json_t *fields = json_object_get(merged, "fields"), *pts = json_object_get(merged, "points"), *fd, *p;
	size_t f, i;
	json_array_foreach(fields, f, fd)
	{
		const char *name = json_string_value(json_object_get(fd, "name"));
		bool ran = false, seen = false;
		json_array_foreach(pts, i, p)
		{
			if (strcmp(json_string_value(json_object_get(p, "status")), "ok"))
				continue;
			ran = true;
			const json_t *v = json_object_get(json_object_get(p, "results"), name);
			seen |= v && !json_is_null(v);
		}
		if (ran && !seen)
			fprintf(stderr,
				"fabscope: sweep: warning: results.%s: %s is in no point's result document (a misspelled "
				"path? doc/results.md lists them)\n",
				name, json_string_value(json_object_get(fd, "path")));
	}
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
		if (cli_is_file(path)) {
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
	if (!rc)
		absent_fields(m.doc);
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

#define SWEEP_PLAN_MAX_BYTES (256 << 20)

static struct fab_grid *load_plan(const char *dir, int *rc)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/plan.json", dir);
	/* a regular file of sane size, checked on what is opened (a FIFO
	 * planted there would hang the read) */
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SWEEP_PLAN_MAX_BYTES) {
		fprintf(stderr, "fabscope: %s: %s (is it a sweep's directory?)\n", path,
			fd < 0                         ? strerror(errno)
				: !S_ISREG(st.st_mode) ? "not a regular file"
						       : "larger than 256 MiB: not a plan fabscope wrote");
		if (fd >= 0)
			close(fd);
		*rc = FAB_EXIT_IO;
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
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
	struct out_spec spec = {"", cli_w_str, 0};
	int rc = cli_mkdir_p(logs) ? FAB_EXIT_IO : cli_write_out_file(path, &spec, s);
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

/* what sweep's command line says */
struct sweep_cli {
	struct sweep s;
	const char *run_dir, *merge_dir;
	bool slurm;
	uint32_t tasks, timeout_s;
};

static const struct option sweep_opts[] = {
	{"out", required_argument, NULL, 'o'},     {"jobs", required_argument, NULL, 'j'},
	{"slurm", no_argument, NULL, 'S'},         {"tasks", required_argument, NULL, 'T'},
	{"run", required_argument, NULL, 'R'},     {"merge", required_argument, NULL, 'M'},
	{"timeout", required_argument, NULL, 'W'}, {"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},          {0, 0, 0, 0},
};

/* the options into sc, and the arguments they go with; -1: go on, else
 * an exit status (help, or a usage error) */
static int sweep_parse(struct sweep_cli *sc, int argc, char **argv)
{
	int c;
	while ((c = getopt_long(argc, argv, "o:j:qh", sweep_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			sc->s.dir = optarg;
			break;
		case 'j':
			if (parse_count("-j", optarg, 1024, &sc->s.jobs))
				return FAB_EXIT_USAGE;
			break;
		case 'S':
			sc->slurm = true;
			break;
		case 'T':
			if (parse_count("--tasks", optarg, 100000, &sc->tasks))
				return FAB_EXIT_USAGE;
			break;
		case 'R':
			sc->run_dir = optarg;
			break;
		case 'M':
			sc->merge_dir = optarg;
			break;
		case 'W':
			if (parse_count("--timeout", optarg, 1000000, &sc->timeout_s))
				return FAB_EXIT_USAGE;
			break;
		case 'q':
			sc->s.quiet = true;
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
	bool in_dir = sc->run_dir || sc->merge_dir;
	if (in_dir ? nargs != 0 || (sc->run_dir && sc->merge_dir) || sc->slurm : nargs != 1) {
		fprintf(stderr, "fabscope: sweep: %s\n%s",
			in_dir ? "--run and --merge take a directory and no grid (one of them)"
			       : "one GRID.yaml is needed",
			usage_sweep);
		return FAB_EXIT_USAGE;
	}
	if (sc->run_dir && !sc->tasks) {
		fprintf(stderr, "fabscope: sweep: --run needs --tasks N (the array's size)\n");
		return FAB_EXIT_USAGE;
	}
	return -1;
}

/* --run DIR: the share of array task SLURM_ARRAY_TASK_ID of tasks */
static int sweep_task(struct sweep *s, uint32_t tasks)
{
	const char *id = getenv("SLURM_ARRAY_TASK_ID"), *cnt = getenv("SLURM_ARRAY_TASK_COUNT");
	char *e = NULL;
	/* digits only: strtoul would take "-1" as a huge index */
	bool digits = id && *id && id[strspn(id, "0123456789")] == 0;
	unsigned long task = digits ? strtoul(id, &e, 10) : 0;
	if (!digits || *e) {
		fprintf(stderr,
			"fabscope: sweep --run: SLURM_ARRAY_TASK_ID (the task's index) is %s%s%s: expected a "
			"whole number from 0\n",
			id ? "\"" : "not set", id ? id : "", id ? "\"" : "");
		return FAB_EXIT_USAGE;
	}
	if (task >= tasks || (cnt && strtoul(cnt, NULL, 10) > tasks)) {
		fprintf(stderr, "fabscope: sweep --run: array task %lu is not among the %u of --tasks\n", task, tasks);
		return FAB_EXIT_USAGE;
	}
	s->share = (uint32_t)task;
	s->shares = tasks;
	int rc = cli_sweep_share(s);
	if (!rc && s->failed)
		rc = FAB_EXIT_CHECKS;
	return rc;
}

/* --merge DIR or --run DIR: a sweep's directory, by its plan.json */
static int sweep_in_dir(struct sweep_cli *sc)
{
	int rc = FAB_EXIT_OK;
	sc->s.dir = sc->merge_dir ? sc->merge_dir : sc->run_dir;
	if (!(sc->s.g = load_plan(sc->s.dir, &rc)))
		return rc;
	rc = sc->merge_dir ? merge(sc->s.g, sc->s.dir) : sweep_task(&sc->s, sc->tasks);
	fab_grid_free(sc->s.g);
	return rc;
}

/* a new sweep of grid: its directory (default: the grid's name + .sweep,
 * into defdir), DIR/points and DIR/plan.json.  0, or an exit status (s->g
 * NULL: the grid did not load) */
static int sweep_new(struct sweep *s, const char *grid, char *defdir, size_t len)
{
	struct fab_err err = {0};
	if (!(s->g = fab_grid_load(grid, fab_version_string(), &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return fab_err_exit_code(err.code);
	}
	if (!s->dir) {
		const char *b = strrchr(grid, '/');
		b = b ? b + 1 : grid;
		size_t l = strcspn(b, ".");
		snprintf(defdir, len, "%.*s.sweep", (int)(l ? l : strlen(b)), b);
		s->dir = defdir;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/points", s->dir);
	if (cli_mkdir_p(path)) {
		fprintf(stderr, "fabscope: %s: %s\n", path, strerror(errno));
		return FAB_EXIT_IO;
	}
	json_t *plan = fab_grid_plan_json(s->g);
	snprintf(path, sizeof path, "%s/plan.json", s->dir);
	int rc = cli_write_json_file(path, plan, 1);
	json_decref(plan);
	return rc;
}

/* --slurm: the job array's script, of tasks tasks (0: one a point, at most
 * 1000) */
static int sweep_slurm(const struct sweep *s, uint32_t tasks)
{
	if (!tasks)
		tasks = (uint32_t)FAB_MIN(s->g->npts, 1000);
	return write_sbatch(s->g, s->dir, (uint32_t)FAB_MIN(tasks, s->g->npts), s->jobs);
}

/* the points run from here: all of them, or under a launcher this rank's
 * share, rank 0 waiting for the others' before it merges */
static int sweep_here(struct sweep *s, uint32_t timeout_s)
{
	char job[40];
	uint32_t rank = 0, size = 1;
	if (cli_sweep_launcher(&rank, &size, job, sizeof job)) {
		s->share = rank;
		s->shares = size;
	}
	int rc = cli_sweep_share(s);
	if (rc) {
		if (size > 1 && rank) /* rank 0 stops waiting for this share */
			cli_sweep_mark_rank(s->dir, job, rank, "failed");
		return rc;
	}
	if (size > 1 && rank) {
		rc = cli_sweep_mark_rank(s->dir, job, rank, "done");
		if (!rc && s->failed)
			rc = FAB_EXIT_CHECKS;
		return rc;
	}
	if (size > 1 && (rc = cli_sweep_wait_ranks(s->dir, job, size, s->quiet, timeout_s)))
		return rc;
	return merge(s->g, s->dir);
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_cli sc = {.s = {.jobs = 1, .shares = 1}};
	char defdir[PATH_MAX];
	int rc = sweep_parse(&sc, argc, argv);
	if (rc >= 0)
		return rc;
	if (sc.merge_dir || sc.run_dir)
		return sweep_in_dir(&sc);
	rc = sweep_new(&sc.s, argv[optind], defdir, sizeof defdir);
	if (!sc.s.g)
		return rc;
	if (!rc)
		rc = sc.slurm ? sweep_slurm(&sc.s, sc.tasks) : sweep_here(&sc.s, sc.timeout_s);
	fab_grid_free(sc.s.g);
	return rc;
}
