/*
 * common.c - what the commands share: wall time and progress on a
 * terminal, the options every simulation command takes (--seed, --engine,
 * --set, --format, --out, -q).  The --out writer is out.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/fabscope.h"
#include "cli.h"

double cli_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool cli_show_progress(const struct cli_common *cm)
{
	return !cm->quiet && (cm->progress || isatty(STDERR_FILENO));
}

void cli_progress(void *vctx, fab_time_ps now_ps, uint64_t events)
{
	struct progress_ctx *ctx = vctx;
	bool term = isatty(STDERR_FILENO);
	double el = cli_wall_s() - ctx->t0;
	if (!term && ctx->last > 0 && el - ctx->last < 5) /* a log file: the first, then a line every 5 s */
		return;
	double f = ctx->done ? ctx->done(ctx->run, events) : -1;
	fprintf(stderr, "%sfabscope: simulated %.3f ms, %.1fM events, %.1fM events/s", term ? "\r\033[K" : "",
		(double)now_ps / 1e9, (double)events / 1e6, el > 0 ? (double)events / el / 1e6 : 0);
	if (f > 0.001 && f < 1)
		fprintf(stderr, ", %.0f%% done, about %.0f s left", f * 100, el * (1 - f) / f);
	if (term) {
		ctx->shown = true;
	} else {
		fputc('\n', stderr);
		ctx->last = el;
	}
}

/* "text", "json" or "csv" among allowed ("text|json|csv"); false after a message */
bool cli_format_ok(const char *format, const char *allowed)
{
	size_t n = strlen(format);
	for (const char *a = allowed; *a;) {
		size_t l = strcspn(a, "|");
		if (l == n && !strncmp(a, format, n))
			return true;
		a += l + (a[l] == '|');
	}
	fprintf(stderr, "fabscope: --format: expected %s, got \"%s\"\n",
		strchr(strchr(allowed, '|') + 1, '|') ? "text, json or csv" : "text or json", format);
	return false;
}

static double t_start;

void cli_clock_start(void)
{
	t_start = cli_wall_s();
}

/* The run's events and their rate, then the whole command's wall time
 * (setup, run, results, output) and peak memory: stderr, never the
 * results. */
void cli_report_speed(uint64_t events, double run_s, uint32_t threads)
{
	double el = cli_wall_s() - t_start;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	char on[32] = "";
	if (threads > 1)
		snprintf(on, sizeof on, "; the run on %u threads", threads);
	fprintf(stderr,
		"fabscope: %llu events in %.3f s (%.2fM events/s); the whole command %.3f s wall, peak RSS %ld "
		"MiB%s\n",
		(unsigned long long)events, run_s, run_s > 0 ? (double)events / run_s / 1e6 : 0, el,
		ru.ru_maxrss / 1024, on);
}

void cli_common_init(struct cli_common *cm, int argc)
{
	memset(cm, 0, sizeof *cm);
	cm->owned = calloc((size_t)argc + 1, sizeof *cm->owned);
	cm->sets = calloc((size_t)argc + 2, sizeof *cm->sets);
	cm->format = "text";
}

void cli_common_free(struct cli_common *cm)
{
	for (size_t i = 0; i < cm->nowned; i++)
		free(cm->owned[i]);
	free(cm->owned);
	free(cm->sets);
}

/* --set key=value, made from an option */
void cli_set(struct cli_common *cm, const char *key, const char *val)
{
	size_t len = strlen(key) + strlen(val) + 2;
	char *kv = cm->owned[cm->nowned++] = malloc(len);
	snprintf(kv, len, "%s=%s", key, val);
	cm->sets[cm->nsets++] = kv;
}

/* 1: handled; 0: not a common option; -1: bad value (message printed) */
static int cli_common_opt(struct cli_common *cm, int c, const char *formats)
{
	switch (c) {
	case 's':
		cli_set(cm, "run.seed", optarg);
		return 1;
	case 'E':
		cli_set(cm, "engine", optarg);
		return 1;
	case CLI_OPT_SET:
		cm->sets[cm->nsets++] = optarg;
		return 1;
	case 'F':
		cm->format = optarg;
		return cli_format_ok(optarg, formats) ? 1 : -1;
	case 'U': /* --out (-o is nccl-tests' reduction operation in coll) */
		cm->outdir = optarg;
		return 1;
	case 'q':
		cm->quiet = true;
		return 1;
	case CLI_OPT_PROGRESS:
		cm->progress = true;
		return 1;
	}
	return 0;
}

int cli_next_opt(struct cli_common *cm, int argc, char **argv, const char *shortopts, const struct option *opts,
		 const char *formats, const char *usage, int *rc)
{
	for (;;) {
		int c = getopt_long(argc, argv, shortopts, opts, NULL);
		if (c == -1)
			return CLI_OPTS_DONE;
		int common = cli_common_opt(cm, c, formats);
		if (common < 0) {
			*rc = FAB_EXIT_USAGE;
			return CLI_OPTS_STOP;
		}
		if (common)
			continue;
		if (c == 'h') {
			fputs(usage, stdout);
			*rc = FAB_EXIT_OK;
			return CLI_OPTS_STOP;
		}
		if (c == '?' || c == ':') {
			fputs(usage, stderr);
			*rc = FAB_EXIT_USAGE;
			return CLI_OPTS_STOP;
		}
		return c;
	}
}

/* json_dumpf writes token by token, each a locked fwrite: a 22 MB result
 * document spent more time there than the flow engine simulating it */
struct json_buf {
	FILE *f;
	size_t n;
	bool bad;
	char b[1 << 16];
};

static int json_buf_put(const char *p, size_t len, void *ctx)
{
	struct json_buf *jb = ctx;
	if (jb->n + len > sizeof jb->b) {
		if (jb->n && fwrite(jb->b, 1, jb->n, jb->f) != jb->n)
			jb->bad = true;
		jb->n = 0;
		if (len > sizeof jb->b) {
			if (fwrite(p, 1, len, jb->f) != len)
				jb->bad = true;
			return jb->bad ? -1 : 0;
		}
	}
	memcpy(jb->b + jb->n, p, len);
	jb->n += len;
	return 0;
}

int cli_json_write(json_t *j, FILE *f, size_t flags)
{
	struct json_buf *jb = malloc(sizeof *jb);
	if (!jb)
		return -1;
	jb->f = f;
	jb->n = 0;
	jb->bad = false;
	int rc = json_dump_callback(j, json_buf_put, jb, flags);
	if (jb->n && fwrite(jb->b, 1, jb->n, f) != jb->n)
		jb->bad = true;
	rc = rc || jb->bad ? -1 : 0;
	free(jb);
	return rc;
}

int cli_w_cmd(FILE *f, void *ctx, int what)
{
	struct cmd_out *o = ctx;
	if (what == OUT_DOC && !o->doc) /* a sim's document, written as it is built */
		return o->write(f, o->run, FAB_OUT_JSON) || fputc('\n', f) == EOF;
	if (what == OUT_DOC)
		return cli_json_write(o->doc, f, JSON_INDENT(o->indent)) || fputc('\n', f) == EOF;
	return o->write(f, o->run, (enum fab_output)what);
}

int cli_print_cmd(struct cmd_out *o, const char *format, int csv_what)
{
	if (!strcmp(format, "json")) {
		cli_w_cmd(stdout, o, OUT_DOC);
	} else if (!strcmp(format, "csv")) {
		cli_w_cmd(stdout, o, csv_what);
	} else {
		cli_w_cmd(stdout, o, o->text);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fabscope: writing to stdout failed\n");
		return FAB_EXIT_IO;
	}
	return FAB_EXIT_OK;
}

struct fab_config *cli_load(const struct cli_common *cm, int argc, char **argv, const char *cmd, int *rc)
{
	if (argc - optind > 1) {
		fprintf(stderr, "fabscope: %s takes one scenario file, got %d\n", cmd, argc - optind);
		*rc = FAB_EXIT_USAGE;
		return NULL;
	}
	struct fab_err err = {0};
	struct fab_config *cfg = fab_config_load(optind < argc ? argv[optind] : NULL, cm->sets, cm->nsets, &err);
	if (!cfg) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		*rc = fab_err_exit_code(err.code);
	}
	return cfg;
}

json_t *cli_run_doc(int command, const char *scenario, const char *const *sets, size_t n, struct fab_err *err)
{
	struct fab_config *c = fab_config_load(scenario, sets, n, err);
	json_t *doc = NULL;
	if (!c)
		return NULL;
	if (command == FAB_GRID_SIM) {
		struct fab_run *r = fab_run_new(c, err);
		if (r && fab_run_exec(r, NULL, NULL))
			fab_err_set(err, FAB_EINTERNAL, "the run failed");
		else if (r)
			doc = fab_run_json(r);
		fab_run_free(r);
	} else if (command == FAB_GRID_COLL) {
		struct fab_coll_run *r = fab_coll_run_new(c, false, err);
		if (r && !fab_coll_run_exec(r, NULL, NULL, err))
			doc = fab_coll_run_json(r);
		fab_coll_run_free(r);
	} else {
		struct fab_matrix_run *r = fab_matrix_run_new(c, err);
		if (r && !fab_matrix_run_exec(r, NULL, NULL, err))
			doc = fab_matrix_run_json(r);
		fab_matrix_run_free(r);
	}
	fab_config_free(c);
	return doc;
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int cli_estimate(struct cli_common *cm, int argc, char **argv, const char *cmd, bool coll)
{
	int rc = FAB_EXIT_OK;
	struct fab_config *packet = NULL, *flow = NULL;
	if (cm->outdir || strcmp(cm->format, "text")) {
		fprintf(stderr, "fabscope: %s: --estimate runs nothing: it prints a table (no --out, no --format)\n",
			cmd);
		return FAB_EXIT_USAGE;
	}
	/* the same scenario on each engine: the last --set wins */
	cm->sets[cm->nsets++] = "engine=packet";
	if (!(packet = cli_load(cm, argc, argv, cmd, &rc)))
		goto out;
	cm->sets[cm->nsets - 1] = "engine=flow";
	if (!(flow = cli_load(cm, argc, argv, cmd, &rc)))
		goto out;
	struct fab_estimate e;
	struct fab_err err = {0};
	if (fab_estimate(packet, flow, coll, &e, &err)) {
		fprintf(stderr, "fabscope: %s: --estimate: %s\n", cmd, err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	if (fab_estimate_write(stdout, &e) || fflush(stdout)) {
		fprintf(stderr, "fabscope: %s: --estimate: cannot write to stdout\n", cmd);
		rc = FAB_EXIT_IO;
	}
out:
	fab_config_free(packet);
	fab_config_free(flow);
	return rc;
}
