/*
 * cli.h - what the command line's files share.
 */
#ifndef FAB_CLI_H
#define FAB_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "../include/fabscope.h"

/* Writes each file of an --out directory to a temporary name, renames all
 * of them only when every one is complete (out.c). */
typedef int (*writer_fn)(FILE *f, void *ctx, int arg);

struct out_spec {
	const char *name;
	writer_fn write;
	int arg;
};

/* What a simulation command writes: its document, and its run's outputs
 * through write (a fab_*_run_write). */
struct cmd_out {
	json_t *doc;
	int indent; /* the document's JSON indent */
	const void *run;
	int (*write)(FILE *f, const void *run, enum fab_output what);
	int text; /* what --format text prints: FAB_OUT_TEXT (0), or another text output */
};
#define OUT_DOC (-1)
/* ctx: a struct cmd_out; what: OUT_DOC or an enum fab_output */
int cli_w_cmd(FILE *f, void *ctx, int what);
/* the output of --format (json: the document), then a check of stdout */
int cli_print_cmd(struct cmd_out *o, const char *format, int csv_what);

/* The files of specs into outdir, each through a temporary file of its own
 * (O_EXCL, never through a symbolic link; removed on SIGINT, SIGTERM, SIGHUP
 * or SIGPIPE and by a later run once the process that made it is gone),
 * renamed into place only when all are whole; the files of the previous run
 * into outdir that this one does not write are removed (the directory's
 * manifest, .fabscope-files, lists them).  An exit status. */
int cli_write_out_dir(const char *outdir, const struct out_spec *specs, size_t n, void *ctx);
/* The same for one file that the user names (no manifest, nothing else
 * touched): path's directory, path's name. */
int cli_write_out_file(const char *path, const struct out_spec *spec, void *ctx);
/* A file made before the run and written at its end (coll -J): removed if
 * one of those signals ends the run before cli_unguard_path.  Not while
 * cli_write_out_* runs. */
void cli_guard_path(const char *path);
void cli_unguard_path(void);
/* Another tool's JSON (-J FILE: nccl-tests', iperf3's): the file is made
 * before the run, never over another (FILE.0, FILE.1, ... as nccl-tests
 * does), so that the table can name it first; written at the end, removed
 * when the run fails or is stopped by a signal. */
struct cli_tool_json {
	char path[4096];
	int fd;          /* -1: none */
	char start[64];  /* when it was made, nccl-tests' time stamp */
	const char *opt; /* the option, for messages */
};
/* opt: "-J"; want: the name asked for.  0, or an exit status. */
int cli_tool_json_reserve(const char *opt, const char *want, struct cli_tool_json *j);
/* write(f, ctx, start): 0, or non-zero when writing failed.  0, or an
 * exit status (the file removed). */
int cli_tool_json_commit(struct cli_tool_json *j, int (*write)(FILE *f, void *ctx, const char *start), void *ctx);
/* the run failed: no half file left (nothing when none is held) */
void cli_tool_json_drop(struct cli_tool_json *j);

/* common.c */
double cli_wall_s(void);
/* json_dumpf's bytes, written in large blocks: 0, or -1 */
int cli_json_write(json_t *j, FILE *f, size_t flags);
/* seconds, more than 0 and at most a day: 0, or -1 */
int cli_parse_seconds(const char *s, double *out);
struct progress_ctx {
	double t0;
	bool shown;
	/* how much is done (0 to 1, -1: unknown), of run */
	double (*done)(void *run, uint64_t events);
	void *run;
	double last; /* stderr no terminal (--progress): when the last line went out */
};
/* simulated time, events, events per second, and where the work can be
 * measured the share done and the time left: on a terminal one line
 * rewritten in place, else (--progress) the first line, then one every 5 s */
void cli_progress(void *vctx, fab_time_ps now_ps, uint64_t events);
/* "text", "json" or "csv" among allowed ("text|json|csv"); false after a message */
bool cli_format_ok(const char *format, const char *allowed);
/* main() starts the clock that cli_report_speed's whole-command time counts from */
void cli_clock_start(void);
/* The run's events in run_s seconds, then the whole command's wall time and
 * peak memory so far, and the threads the run took where more than one:
 * stderr, never the results.  Called last. */
void cli_report_speed(uint64_t events, double run_s, uint32_t threads);

/* What sim, coll and matrix share on the command line: --seed, --set,
 * --format, --out, -q, and options that stand for a scenario key. */
struct cli_common {
	char **owned;
	const char **sets;
	size_t nsets, nowned;
	const char *format, *outdir;
	bool quiet;
	bool progress; /* --progress: progress lines where stderr is no terminal */
};
/* whether a run shows its progress: on a terminal, or with --progress */
bool cli_show_progress(const struct cli_common *cm);
void cli_common_init(struct cli_common *cm, int argc);
void cli_common_free(struct cli_common *cm);
/* --set key=value, made from an option */
void cli_set(struct cli_common *cm, const char *key, const char *val);
/* The next option only this command knows, after the shared ones are
 * handled; CLI_OPTS_DONE at the end of the options; CLI_OPTS_STOP when the
 * command is to exit with *rc (help printed, or a usage error). */
enum { CLI_OPTS_DONE = -1, CLI_OPTS_STOP = -2 };
/* --set's code in the option tables: no letter (coll's -S is nccl-tests'
 * report_timestamps) */
enum { CLI_OPT_SET = 0x100, CLI_OPT_PROGRESS, CLI_OPT_AVERAGE };
/* the option table's entries every simulation command shares (sim, coll,
 * matrix), handled by cli_next_opt */
#define CLI_COMMON_OPTIONS                                                                                             \
	{"seed", required_argument, NULL, 's'}, {"engine", required_argument, NULL, 'E'},                              \
		{"set", required_argument, NULL, CLI_OPT_SET}, {"format", required_argument, NULL, 'F'},               \
		{"out", required_argument, NULL, 'U'}, {"quiet", no_argument, NULL, 'q'},                              \
	{                                                                                                              \
		"progress", no_argument, NULL, CLI_OPT_PROGRESS                                                        \
	}
int cli_next_opt(struct cli_common *cm, int argc, char **argv, const char *shortopts, const struct option *opts,
		 const char *formats, const char *usage, int *rc);

/* The scenario file (at most one; none: the built-in one) with the --set
 * overrides; NULL after a message, with the exit status in *rc. */
struct fab_config *cli_load(const struct cli_common *cm, int argc, char **argv, const char *cmd, int *rc);

/* --estimate: the scenario (with the --set overrides) run on the flow
 * engine and built on the packet engine, what each costs printed on
 * stdout (fab_estimate); coll: as a collective sweep.  An exit status. */
int cli_estimate(struct cli_common *cm, int argc, char **argv, const char *cmd, bool coll);

/* a result document: a regular file of at most 384 MiB, JSON, checked as
 * diagnose checks it; NULL after a message, *rc the exit status */
json_t *cli_load_doc(const char *path, int *rc);

/* a scenario (NULL: the built-in one) with sets, run as sim, coll or
 * matrix (enum fab_grid_cmd), quietly: its result document, or NULL and
 * err */
json_t *cli_run_doc(int command, const char *scenario, const char *const *sets, size_t n, struct fab_err *err);

/* fabscope probe: probe.c (options), probe_local.c (--local N), probe_run.c
 * (a rank's run) */
/* what --test runs: PROBE_COLL, PROBE_MATRIX, else an enum fab_probe_test */
enum { PROBE_COLL = -1, PROBE_MATRIX = 100 };
struct probe_opts {
	int op, algo;
	fab_bytes minb, maxb;
	uint32_t factor, iters, warmup, channels;
	int test; /* PROBE_COLL, PROBE_MATRIX, else enum fab_probe_test */
	bool check, serial;
	double pair_timeout_s, retest;
	double duration_s, interval_s; /* bw: -t, -i (iperf3's) */
	const char *json, *outdir, *launcher;
	const char *tool_json; /* -J: nccl-tests' or iperf3's JSON */
	int argc;              /* the command line, for -J's "args" */
	char **argv;
	uint32_t local_ranks; /* ranks on this machine (--local N), 0: from the launcher */
};
/* this process as rank pp->rank of pp->nranks: connect, run the test; rank
 * 0 prints and writes the document.  An exit status. */
int cli_probe_rank(struct fab_probe_params *pp, const struct probe_opts *o);
/* local ranks started here (fork), met at a rendezvous socket of this process;
 * one failing stops the others.  An exit status. */
int cli_probe_local(struct fab_probe_params *pp, struct probe_opts *o, uint32_t local);

/* fabscope sweep: sweep.c (the command, the sweep's directory, the merge,
 * the Slurm array's script), sweep_run.c (the points run) */
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
/* this share's points, jobs at a time, each in a process of its own; 0,
 * or an exit status when the sweep could not go on (interrupted, cannot
 * fork) */
int cli_sweep_share(struct sweep *s);
/* rank and size under a launcher (no MPI library: the launcher's
 * variables), and a name for this launch that every rank shares; true
 * when there are several ranks */
bool cli_sweep_launcher(uint32_t *rank, uint32_t *size, char *job, size_t len);
/* rank 0: the other ranks' marks (an exit status: one failed, --timeout) */
int cli_sweep_wait_ranks(const char *dir, const char *job, uint32_t size, bool quiet, double timeout_s);
/* what a rank leaves for rank 0: DIR/ranks/JOB.RANK.what */
int cli_sweep_mark_rank(const char *dir, const char *job, uint32_t rank, const char *what);
/* sweep.c's files, for both: mkdir -p (0, or -1 and errno); a regular
 * file at path; a writer_fn of the string ctx; doc into path, whole or not
 * at all (an exit status) */
int cli_mkdir_p(const char *path);
bool cli_is_file(const char *path);
int cli_w_str(FILE *f, void *ctx, int arg);
int cli_write_json_file(const char *path, json_t *doc, int indent);

/* the commands: cmd_NAME runs `fabscope NAME` (main.c's table) */
int cmd_sim(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
/* twin.c */
int cmd_calibrate(int argc, char **argv);
int cmd_twin(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

#endif
