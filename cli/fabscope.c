/*
 * fabscope - command line front end.  Parses arguments, calls the library,
 * prints.  Results go to stdout, diagnostics and progress to stderr
 * (progress only when stderr is a terminal).  Exit codes: 0 ok, 1 checks
 * failed, 2 usage, 3 bad input, 4 I/O error, 5 internal error.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/fabscope.h"

static const char *usage_main =
	"usage: fabscope <command> [options]\n"
	"\n"
	"Simulate, measure and diagnose the network of an AI training cluster.\n"
	"\n"
	"commands:\n"
	"  sim [SCENARIO.yaml]   run a packet-level simulation (built-in scenario if none)\n"
	"\n"
	"options:\n"
	"  -h, --help            show this help\n"
	"  -V, --version         show the version and library versions\n"
	"\n"
	"Run 'fabscope sim --help' for the options of a command.\n"
	"exit status: 0 ok, 1 checks failed, 2 usage, 3 bad input, 4 I/O error, 5 internal error\n";

static const char *usage_sim =
	"usage: fabscope sim [SCENARIO.yaml] [options]\n"
	"\n"
	"Runs a scenario packet by packet: spine-leaf or fat-tree fabric, RoCEv2 NICs,\n"
	"PFC, ECN/DCQCN, ECMP.  With no SCENARIO, runs the built-in one (a 64-GPU\n"
	"spine-leaf cluster with an incast and a permutation).\n"
	"\n"
	"options:\n"
	"  --seed N              seed of every random stream (same as --set run.seed=N)\n"
	"  --set KEY=VALUE       override any scenario key, e.g. --set topology.spines=8\n"
	"                        (repeatable; list items by index: traffic.generators.0.bytes=1MiB)\n"
	"  --format text|json|csv  what to print on stdout (default text)\n"
	"  --out DIR             also write result.json, flows.csv, ports.csv, summary.txt\n"
	"                        (and series.csv) into DIR\n"
	"  -q, --quiet           print nothing on stdout; no progress, no timing\n"
	"  --keys                print the reference of every scenario key (Markdown)\n"
	"  --print-scenario      print the built-in scenario\n"
	"  -h, --help            show this help\n"
	"\n"
	"examples:\n"
	"  fabscope sim\n"
	"  fabscope sim examples/default/scenario.yaml --set topology.oversubscription=2:1\n"
	"  fabscope sim my.yaml --format json > result.json\n"
	"\n"
	"exit status: 0 ok, 2 usage, 3 bad scenario, 4 I/O error, 5 internal error\n";

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct progress_ctx {
	double t0;
	bool shown;
};

static void progress(void *vctx, fab_time_ps now_ps, uint64_t events)
{
	struct progress_ctx *ctx = vctx;
	double el = wall_s() - ctx->t0;
	fprintf(stderr, "\rfabscope: simulated %.3f ms, %.1fM events, %.1fM events/s   ",
		(double)now_ps / 1e9, (double)events / 1e6, el > 0 ? (double)events / el / 1e6 : 0);
	ctx->shown = true;
}

/* "a|b|c" -> "a, b, c" (a bar would split a Markdown table cell) */
static void choices_text(const char *choices, char *buf, size_t len)
{
	size_t o = 0;
	for (const char *c = choices; *c && o + 3 < len; c++) {
		if (*c == '|') {
			buf[o++] = ',';
			buf[o++] = ' ';
		} else {
			buf[o++] = *c;
		}
	}
	buf[o] = 0;
}

static void print_keys(void)
{
	size_t n;
	const struct fab_key_def *k = fab_config_keys(&n);
	printf("| key | default | range or values | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char range[96] = "";
		if (k[i].type == K_ENUM)
			choices_text(k[i].choices, range, sizeof range);
		else if (k[i].type == K_U32 || k[i].type == K_U64 || k[i].type == K_U8 ||
			 k[i].type == K_DOUBLE)
			snprintf(range, sizeof range, "%g .. %g", k[i].min, k[i].max);
		else if (k[i].type == K_RATE) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_rate((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_rate((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_TIME) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_time((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_time((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_BYTES) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_bytes((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_bytes((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_BOOL)
			snprintf(range, sizeof range, "true, false");
		else if (k[i].type == K_RATIO)
			snprintf(range, sizeof range, "N:M");
		else if (k[i].type == K_PRIOMASK)
			snprintf(range, sizeof range, "list of 0..7");
		else
			snprintf(range, sizeof range, "path");
		printf("| `%s` | `%s` | %s | %s |\n", k[i].path, k[i].def, range, k[i].doc);
	}
	const struct {
		const char *name;
		const struct fab_key_def *(*get)(size_t *);
	} lists[] = {{"traffic.flows[]", fab_config_flow_keys},
		     {"traffic.generators[]", fab_config_gen_keys}};
	for (size_t l = 0; l < 2; l++) {
		k = lists[l].get(&n);
		for (size_t i = 0; i < n; i++)
		{
			char choices[96] = "";
			if (k[i].type == K_ENUM)
				choices_text(k[i].choices, choices, sizeof choices);
			printf("| `%s.%s` | %s | %s | %s |\n", lists[l].name, k[i].path,
			       k[i].def ? k[i].def : "required", choices, k[i].doc);
		}
	}
}

/* Writes a file atomically: DIR/.NAME.tmp then rename. */
struct out_file {
	char tmp[4096], final[4096];
	FILE *f;
};

static int out_open(struct out_file *o, const char *dir, const char *name)
{
	snprintf(o->final, sizeof o->final, "%s/%s", dir, name);
	snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp", dir, name);
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		fprintf(stderr, "fabscope: %s: %s\n", o->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

static int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seed", required_argument, NULL, 's'},
		{"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'f'},
		{"out", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"keys", no_argument, NULL, 'K'},
		{"print-scenario", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char **sets = calloc((size_t)argc + 2, sizeof *sets);
	char seedbuf[64];
	size_t nsets = 0;
	const char *format = "text", *outdir = NULL;
	bool quiet = false;
	int c, rc = FAB_EXIT_OK;
	struct fab_config *cfg = NULL;
	struct fab_run *run = NULL;
	json_t *doc = NULL;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			snprintf(seedbuf, sizeof seedbuf, "run.seed=%s", optarg);
			sets[nsets++] = seedbuf;
			break;
		case 'S':
			sets[nsets++] = optarg;
			break;
		case 'f':
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv")) {
				fprintf(stderr, "fabscope: --format: expected text, json or csv, got \"%s\"\n",
					format);
				rc = FAB_EXIT_USAGE;
				goto out;
			}
			break;
		case 'o':
			outdir = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'K':
			print_keys();
			goto out;
		case 'P':
			fputs(fab_default_scenario, stdout);
			goto out;
		case 'h':
			fputs(usage_sim, stdout);
			goto out;
		default:
			fputs(usage_sim, stderr);
			rc = FAB_EXIT_USAGE;
			goto out;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "fabscope: sim takes one scenario file, got %d\n", argc - optind);
		rc = FAB_EXIT_USAGE;
		goto out;
	}
	const char *path = optind < argc ? argv[optind] : NULL;
	struct fab_err err = {0};
	cfg = fab_config_load(path, sets, nsets, &err);
	if (!cfg) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	run = fab_run_new(cfg, &err);
	if (!run) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	struct progress_ctx pctx = {wall_s(), false};
	bool tty = isatty(STDERR_FILENO) && !quiet;
	if (fab_run_exec(run, tty ? progress : NULL, &pctx)) {
		fprintf(stderr, "fabscope: the run failed\n");
		rc = FAB_EXIT_INTERNAL;
		goto out;
	}
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (!quiet) {
		double el = wall_s() - pctx.t0;
		const struct fab_sim_totals *tot = fab_sim_totals(run->sim);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "fabscope: %llu events in %.3f s wall (%.2fM events/s), peak RSS %ld MiB\n",
			(unsigned long long)tot->events, el, el > 0 ? (double)tot->events / el / 1e6 : 0,
			ru.ru_maxrss / 1024);
	}
	doc = fab_result_json(cfg, run->sim);
	if (outdir) {
		if (mkdir(outdir, 0777) && errno != EEXIST) {
			fprintf(stderr, "fabscope: --out %s: %s\n", outdir, strerror(errno));
			rc = FAB_EXIT_IO;
			goto out;
		}
		struct out_file files[5];
		const char *names[] = {"result.json", "flows.csv", "ports.csv", "summary.txt", "series.csv"};
		size_t nfiles = cfg->fabric.series_interval_ps ? 5 : 4;
		bool ok = true;
		size_t opened = 0;
		for (size_t i = 0; i < nfiles && ok; i++, opened++)
			ok = !out_open(&files[i], outdir, names[i]);
		if (ok) {
			ok = !json_dumpf(doc, files[0].f, JSON_INDENT(2)) && fputc('\n', files[0].f) != EOF;
			ok = ok && !fab_result_write_flows_csv(files[1].f, run->sim);
			ok = ok && !fab_result_write_ports_csv(files[2].f, run->sim);
			ok = ok && !fab_result_write_text(files[3].f, cfg, run->sim);
			if (nfiles == 5)
				ok = ok && !fab_result_write_series_csv(files[4].f, run->sim);
		}
		for (size_t i = 0; i < opened; i++)
			if (files[i].f && fclose(files[i].f))
				ok = false;
		for (size_t i = 0; i < opened; i++) {
			if (ok && rename(files[i].tmp, files[i].final)) {
				fprintf(stderr, "fabscope: %s: %s\n", files[i].final, strerror(errno));
				ok = false;
			}
			if (!ok)
				unlink(files[i].tmp);
		}
		if (!ok) {
			fprintf(stderr, "fabscope: could not write the results into %s\n", outdir);
			rc = FAB_EXIT_IO;
			goto out;
		}
	}
	if (!quiet) {
		if (!strcmp(format, "json")) {
			json_dumpf(doc, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
		} else if (!strcmp(format, "csv")) {
			fab_result_write_flows_csv(stdout, run->sim);
			fputc('\n', stdout);
			fab_result_write_ports_csv(stdout, run->sim);
		} else {
			fab_result_write_text(stdout, cfg, run->sim);
		}
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "fabscope: writing to stdout failed\n");
			rc = FAB_EXIT_IO;
		}
	}
out:
	json_decref(doc);
	fab_run_free(run);
	fab_config_free(cfg);
	free(sets);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_main, stderr);
		return FAB_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage_main, stdout);
		return FAB_EXIT_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("%s\n", fab_version_string());
		return FAB_EXIT_OK;
	}
	if (!strcmp(cmd, "sim"))
		return cmd_sim(argc - 1, argv + 1);
	fprintf(stderr, "fabscope: unknown command '%s'\n\n%s", cmd, usage_main);
	return FAB_EXIT_USAGE;
}
