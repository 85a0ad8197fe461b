/*
 * fabscope - command line front end.  Parses arguments, calls the library,
 * prints.  Results go to stdout, diagnostics and progress to stderr
 * (progress only when stderr is a terminal).  Exit codes: 0 ok, 1 checks
 * failed, 2 usage, 3 bad input, 4 I/O error, 5 internal error.
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
#include "../src/analysis/diagnose.h"
#include "cli.h"


static const char *usage_main =
	"usage: fabscope <command> [options]\n"
	"\n"
	"Simulate, measure and diagnose the network of an AI training cluster.\n"
	"\n"
	"commands:\n"
	"  sim [SCENARIO.yaml]   run a packet-level simulation (built-in scenario if none)\n"
	"  coll [SCENARIO.yaml]  nccl-tests in simulation: a collective over a range of sizes\n"
	"  matrix [SCENARIO.yaml]  every NIC pair's latency and bandwidth, in simulation\n"
	"  diagnose RESULT.json...  name the suspect node, link or port from result documents\n"
	"  probe                 collectives on the real network over TCP (--local N: on this machine)\n"
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
	"  --engine E            packet (default) or flow: max-min fair rates, for scale (--set engine=E;\n"
	"                        --set flow.queues=fifo: line-rate senders into first-come first-served queues)\n"
	"  --set KEY=VALUE       override any scenario key, e.g. --set topology.spines=8\n"
	"                        (repeatable; list items by index: traffic.generators.0.bytes=1MiB)\n"
	"  --format text|json|csv  what to print on stdout (default text)\n"
	"  --out DIR             also write result.json, flows.csv, ports.csv, summary.txt\n"
	"                        (and series.csv, series.jsonl) into DIR\n"
	"  -q, --quiet           print nothing on stdout; no progress, no timing\n"
	"  --keys                print the reference of every scenario key (Markdown)\n"
	"  --print-scenario      print the built-in scenario\n"
	"  --debug               the jobs' and communicators' log on stderr\n"
	"  -h, --help            show this help\n"
	"\n"
	"examples:\n"
	"  fabscope sim\n"
	"  fabscope sim examples/default/scenario.yaml --set topology.oversubscription=2:1\n"
	"  fabscope sim my.yaml --format json > result.json\n"
	"\n"
	"exit status: 0 ok, 2 usage, 3 bad scenario, 4 I/O error, 5 internal error\n";

static const char *usage_coll =
	"usage: fabscope coll [SCENARIO.yaml] [options]\n"
	"\n"
	"Runs one collective over a range of sizes on the scenario's cluster, packet by\n"
	"packet, and prints it the way nccl-tests does (size, count, type, redop, root,\n"
	"time, algbw, busbw).  With no SCENARIO, the built-in cluster (64 GPUs).  The\n"
	"scenario's traffic section is ignored unless collective.background_traffic.\n"
	"\n"
	"options (each sets a collective.* key):\n"
	"  --op OP               allreduce, reducescatter, allgather, broadcast, reduce,\n"
	"                        alltoall, sendrecv (default allreduce)\n"
	"  -a, --algo ALGO       ring, tree, hierarchical, rhd, direct, auto (default auto)\n"
	"  -b, --minbytes SIZE   smallest size (default 1K; K, M, G are binary, as in nccl-tests)\n"
	"  -e, --maxbytes SIZE   largest size (default 64M)\n"
	"  -f, --stepfactor N    multiply the size by N from row to row (default 4)\n"
	"  -i, --stepbytes SIZE  add SIZE from row to row instead\n"
	"  -n, --iters N         timed iterations per size (default 1)\n"
	"  -w, --warmup_iters N  warm-up iterations per size (default 0)\n"
	"  -d, --datatype TYPE   float, half, bfloat16, double, int8, ... (default float)\n"
	"  -r, --root N          root rank of broadcast and reduce\n"
	"  -g, --gpus N          ranks in the communicator (default: every GPU)\n"
	"  --channels N          channels (default: one per NIC of a server, at least 2)\n"
	"  --placement P         packed, spread, random, scatter\n"
	"  --ring-order O        topology, rank, flat\n"
	"\n"
	"  --seed N, --engine E, --set KEY=VALUE, --format text|json|csv, --out DIR, -q: as for sim\n"
	"  --debug               the communicator's log on stderr (rings, per-operation\n"
	"                        algorithm, channels, start, end), like NCCL_DEBUG=INFO\n"
	"  -h, --help            show this help\n"
	"\n"
	"examples:\n"
	"  fabscope coll -b 8 -e 128M -f 2\n"
	"  fabscope coll --op allgather --algo ring --set topology.oversubscription=2:1\n"
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

/* "text", "json" or "csv" among allowed ("text|json|csv"); false after a message */
static bool format_ok(const char *format, const char *allowed)
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

/* Wall time, events per second and peak memory: stderr, never the results. */
static void report_speed(const struct fab_sim *sim, double t0)
{
	double el = wall_s() - t0;
	const struct fab_sim_totals *tot = fab_sim_totals(sim);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "fabscope: %llu events in %.3f s wall (%.2fM events/s), peak RSS %ld MiB\n",
		(unsigned long long)tot->events, el, el > 0 ? (double)tot->events / el / 1e6 : 0,
		ru.ru_maxrss / 1024);
}

/* What sim, coll and matrix share on the command line: --seed, --set,
 * --format, --out, -q, and options that stand for a scenario key. */
struct cli_common {
	char **owned;
	const char **sets;
	size_t nsets, nowned;
	const char *format, *outdir;
	bool quiet;
};

static void cli_common_init(struct cli_common *cm, int argc)
{
	memset(cm, 0, sizeof *cm);
	cm->owned = calloc((size_t)argc + 1, sizeof *cm->owned);
	cm->sets = calloc((size_t)argc + 2, sizeof *cm->sets);
	cm->format = "text";
}

static void cli_common_free(struct cli_common *cm)
{
	for (size_t i = 0; i < cm->nowned; i++)
		free(cm->owned[i]);
	free(cm->owned);
	free(cm->sets);
}

/* --set key=value, made from an option */
static void cli_set(struct cli_common *cm, const char *key, const char *val)
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
	case 'S':
		cm->sets[cm->nsets++] = optarg;
		return 1;
	case 'F':
		cm->format = optarg;
		return format_ok(optarg, formats) ? 1 : -1;
	case 'o':
		cm->outdir = optarg;
		return 1;
	case 'q':
		cm->quiet = true;
		return 1;
	}
	return 0;
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
		     {"traffic.generators[]", fab_config_gen_keys},
		     {"jobs[]", fab_config_job_keys},
		     {"faults[]", fab_config_fault_keys}};
	for (size_t l = 0; l < FAB_ARRAY_LEN(lists); l++) {
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

struct sim_out {
	const struct fab_config *cfg;
	struct fab_run *run;
	json_t *doc;
};

static int w_sim_json(FILE *f, void *ctx)
{
	struct sim_out *o = ctx;
	return json_dumpf(o->doc, f, JSON_INDENT(2)) || fputc('\n', f) == EOF;
}

static int w_sim_flows(FILE *f, void *ctx)
{
	return fab_result_write_flows_csv(f, ((struct sim_out *)ctx)->run->sim);
}

static int w_sim_ports(FILE *f, void *ctx)
{
	return fab_result_write_ports_csv(f, ((struct sim_out *)ctx)->run->sim);
}

static int w_sim_text(FILE *f, void *ctx)
{
	struct sim_out *o = ctx;
	return fab_result_write_text(f, o->cfg, o->run->sim) ||
	       fab_jobs_write_text(f, o->run->jobs, o->run->njobs);
}

static int w_sim_series_csv(FILE *f, void *ctx)
{
	return fab_result_write_series_csv(f, ((struct sim_out *)ctx)->run->sim);
}

static int w_sim_series_jsonl(FILE *f, void *ctx)
{
	return fab_result_write_series_jsonl(f, ((struct sim_out *)ctx)->run->sim);
}

/* stdout in the format asked for */
static int sim_print(const struct sim_out *o, const char *format)
{
	if (!strcmp(format, "json")) {
		json_dumpf(o->doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (!strcmp(format, "csv")) {
		fab_result_write_flows_csv(stdout, o->run->sim);
		fputc('\n', stdout);
		fab_result_write_ports_csv(stdout, o->run->sim);
	} else {
		w_sim_text(stdout, (void *)o);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fabscope: writing to stdout failed\n");
		return FAB_EXIT_IO;
	}
	return FAB_EXIT_OK;
}

static int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seed", required_argument, NULL, 's'},  {"engine", required_argument, NULL, 'E'},
		{"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'F'},
		{"out", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"keys", no_argument, NULL, 'K'},
		{"print-scenario", no_argument, NULL, 'P'},
		{"debug", no_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	bool debug = false;
	int c, rc = FAB_EXIT_OK;
	struct sim_out o = {0};
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		int common = cli_common_opt(&cm, c, "text|json|csv");
		if (common < 0) {
			rc = FAB_EXIT_USAGE;
			goto out;
		}
		if (common)
			continue;
		switch (c) {
		case 'K':
			print_keys();
			goto out;
		case 'P':
			fputs(fab_default_scenario, stdout);
			goto out;
		case 'D':
			debug = true;
			break;
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
	struct fab_err err = {0};
	struct fab_config *cfg = fab_config_load(optind < argc ? argv[optind] : NULL, cm.sets, cm.nsets, &err);
	o.cfg = cfg;
	if (!cfg || !(o.run = fab_run_new_log(cfg, debug, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	struct progress_ctx pctx = {wall_s(), false};
	bool tty = isatty(STDERR_FILENO) && !cm.quiet;
	if (fab_run_exec(o.run, tty ? progress : NULL, &pctx)) {
		fprintf(stderr, "fabscope: the run failed\n");
		rc = FAB_EXIT_INTERNAL;
		goto out;
	}
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (debug && o.run->work && o.run->work->log.len)
		fwrite(o.run->work->log.buf, 1, o.run->work->log.len, stderr);
	if (!cm.quiet)
		report_speed(o.run->sim, pctx.t0);
	o.doc = fab_result_json(cfg, o.run->sim);
	if (o.run->njobs)
		json_object_set_new(o.doc, "jobs", fab_jobs_json(o.run->jobs, o.run->njobs));
	static const struct out_spec specs[] = {
		{"result.json", w_sim_json},	   {"flows.csv", w_sim_flows},
		{"ports.csv", w_sim_ports},	   {"summary.txt", w_sim_text},
		{"series.csv", w_sim_series_csv}, {"series.jsonl", w_sim_series_jsonl},
	};
	if (cm.outdir && (rc = write_out_dir(cm.outdir, specs, cfg->fabric.series_interval_ps ? 6 : 4, &o)))
		goto out;
	if (!cm.quiet)
		rc = sim_print(&o, cm.format);
out:
	json_decref(o.doc);
	fab_run_free(o.run);
	fab_config_free((struct fab_config *)o.cfg);
	cli_common_free(&cm);
	return rc;
}

int write_out_dir(const char *outdir, const struct out_spec *specs, size_t n, void *ctx)
{
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		fprintf(stderr, "fabscope: --out %s: %s\n", outdir, strerror(errno));
		return FAB_EXIT_IO;
	}
	struct out_file files[8];
	bool ok = true;
	size_t opened = 0;
	for (size_t i = 0; i < n && ok; i++, opened++)
		ok = !out_open(&files[i], outdir, specs[i].name);
	if (!ok)
		opened--;
	for (size_t i = 0; i < opened && ok; i++)
		ok = !specs[i].write(files[i].f, ctx);
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
		return FAB_EXIT_IO;
	}
	return FAB_EXIT_OK;
}

struct coll_out {
	const struct fab_config *cfg;
	struct fab_coll_run *r;
	json_t *doc;
};

static int w_coll_json(FILE *f, void *ctx)
{
	struct coll_out *o = ctx;
	return json_dumpf(o->doc, f, JSON_INDENT(2)) || fputc('\n', f) == EOF;
}

static int w_coll_text(FILE *f, void *ctx)
{
	struct coll_out *o = ctx;
	return fab_coll_write_text(f, o->cfg, o->r->run->sim, &o->r->comm, &o->r->sweep);
}

static int w_coll_csv(FILE *f, void *ctx)
{
	struct coll_out *o = ctx;
	return fab_coll_write_csv(f, o->cfg, &o->r->sweep);
}

static int w_coll_ports(FILE *f, void *ctx)
{
	struct coll_out *o = ctx;
	return fab_result_write_ports_csv(f, o->r->run->sim);
}

static int w_coll_log(FILE *f, void *ctx)
{
	struct coll_out *o = ctx;
	const struct fab_log *log = &o->r->work.log;
	return log->len && fwrite(log->buf, 1, log->len, f) != log->len;
}

static int cmd_coll(int argc, char **argv)
{
	static const struct option opts[] = {
		{"op", required_argument, NULL, 'O'},
		{"algo", required_argument, NULL, 'a'},
		{"minbytes", required_argument, NULL, 'b'},
		{"maxbytes", required_argument, NULL, 'e'},
		{"stepfactor", required_argument, NULL, 'f'},
		{"stepbytes", required_argument, NULL, 'i'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup_iters", required_argument, NULL, 'w'},
		{"datatype", required_argument, NULL, 'd'},
		{"root", required_argument, NULL, 'r'},
		{"gpus", required_argument, NULL, 'g'},
		{"channels", required_argument, NULL, 'C'},
		{"placement", required_argument, NULL, 'P'},
		{"ring-order", required_argument, NULL, 'R'},
		{"seed", required_argument, NULL, 's'},  {"engine", required_argument, NULL, 'E'},
		{"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'F'},
		{"out", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"debug", no_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	static const struct {
		int opt;
		const char *key;
	} keymap[] = {{'O', "collective.op"},         {'a', "collective.algo"},
		      {'b', "collective.min_bytes"},  {'e', "collective.max_bytes"},
		      {'f', "collective.step_factor"}, {'i', "collective.step_bytes"},
		      {'n', "collective.iters"},      {'w', "collective.warmup"},
		      {'d', "collective.datatype"},   {'r', "collective.root"},
		      {'g', "collective.gpus"},       {'C', "collective.channels"},
		      {'P', "collective.placement"},  {'R', "collective.ring_order"}};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	bool debug = false;
	int c, rc = FAB_EXIT_OK;
	struct fab_config *cfg = NULL;
	struct fab_coll_run *r = NULL;
	json_t *doc = NULL;
	while ((c = getopt_long(argc, argv, "a:b:e:f:i:n:w:d:r:g:qh", opts, NULL)) != -1) {
		const char *key = NULL;
		for (size_t k = 0; k < FAB_ARRAY_LEN(keymap); k++)
			if (keymap[k].opt == c)
				key = keymap[k].key;
		if (key) {
			cli_set(&cm, key, optarg);
			continue;
		}
		int common = cli_common_opt(&cm, c, "text|json|csv");
		if (common < 0) {
			rc = FAB_EXIT_USAGE;
			goto out;
		}
		if (common)
			continue;
		switch (c) {
		case 'D':
			debug = true;
			break;
		case 'h':
			fputs(usage_coll, stdout);
			goto out;
		default:
			fputs(usage_coll, stderr);
			rc = FAB_EXIT_USAGE;
			goto out;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "fabscope: coll takes one scenario file, got %d\n", argc - optind);
		rc = FAB_EXIT_USAGE;
		goto out;
	}
	struct fab_err err = {0};
	cfg = fab_config_load(optind < argc ? argv[optind] : NULL, cm.sets, cm.nsets, &err);
	if (!cfg) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	r = fab_coll_run_new(cfg, debug || cm.outdir, &err);
	if (!r) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	struct progress_ctx pctx = {wall_s(), false};
	bool tty = isatty(STDERR_FILENO) && !cm.quiet;
	int erc = fab_coll_run_exec(r, tty ? progress : NULL, &pctx, &err);
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (debug && r->work.log.len)
		fwrite(r->work.log.buf, 1, r->work.log.len, stderr);
	if (erc) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(erc);
		goto out;
	}
	if (!cm.quiet)
		report_speed(r->run->sim, pctx.t0);
	doc = fab_coll_json(cfg, r->run->sim, &r->comm, &r->sweep);
	struct coll_out co = {cfg, r, doc};
	if (cm.outdir) {
		const struct out_spec specs[] = {{"result.json", w_coll_json},
						 {"coll.txt", w_coll_text},
						 {"coll.csv", w_coll_csv},
						 {"ports.csv", w_coll_ports},
						 {"coll.log", w_coll_log}};
		rc = write_out_dir(cm.outdir, specs, FAB_ARRAY_LEN(specs), &co);
		if (rc)
			goto out;
	}
	if (!cm.quiet) {
		if (!strcmp(cm.format, "json"))
			w_coll_json(stdout, &co);
		else if (!strcmp(cm.format, "csv"))
			w_coll_csv(stdout, &co);
		else
			w_coll_text(stdout, &co);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "fabscope: writing to stdout failed\n");
			rc = FAB_EXIT_IO;
		}
	}
out:
	json_decref(doc);
	fab_coll_run_free(r);
	fab_config_free(cfg);
	cli_common_free(&cm);
	return rc;
}

static const char *usage_matrix =
	"usage: fabscope matrix [SCENARIO.yaml] [options]\n"
	"\n"
	"The full-cluster matrix test on the scenario's cluster (with its faults):\n"
	"every NIC pair's latency (a ping-pong) and bandwidth (a message each way at\n"
	"once), in n-1 rounds of disjoint pairs.  The result document's \"matrix\"\n"
	"section is what fabscope diagnose reads.\n"
	"\n"
	"options:\n"
	"  --bytes SIZE          bandwidth message per direction (matrix.bytes, default 1MiB)\n"
	"  --serial              one pair at a time (matrix.serial)\n"
	"  --seed N, --engine E, --set KEY=VALUE, --format text|json, --out DIR, -q: as for sim\n"
	"  -h, --help            show this help\n"
	"\n"
	"example:\n"
	"  fabscope matrix examples/loose-cable/scenario.yaml --out run1 && fabscope diagnose run1/result.json\n";

struct matrix_out {
	const struct fab_config *cfg;
	struct fab_matrix_run *r;
	json_t *doc;
};

static int w_mat_json(FILE *f, void *ctx)
{
	struct matrix_out *o = ctx;
	return json_dumpf(o->doc, f, JSON_INDENT(1)) || fputc('\n', f) == EOF;
}

static int w_mat_text(FILE *f, void *ctx)
{
	struct matrix_out *o = ctx;
	return fab_matrix_write_text(f, &o->r->m);
}

static int w_mat_ports(FILE *f, void *ctx)
{
	struct matrix_out *o = ctx;
	return fab_result_write_ports_csv(f, o->r->run->sim);
}

static int cmd_matrix(int argc, char **argv)
{
	static const struct option opts[] = {
		{"bytes", required_argument, NULL, 'b'}, {"serial", no_argument, NULL, 'L'},
		{"seed", required_argument, NULL, 's'},  {"engine", required_argument, NULL, 'E'},  {"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'F'}, {"out", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	int c, rc = FAB_EXIT_OK;
	struct fab_config *cfg = NULL;
	struct fab_matrix_run *r = NULL;
	json_t *doc = NULL;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		if (c == 'b' || c == 'L') {
			cli_set(&cm, c == 'b' ? "matrix.bytes" : "matrix.serial", c == 'b' ? optarg : "true");
			continue;
		}
		int common = cli_common_opt(&cm, c, "text|json");
		if (common < 0) {
			rc = FAB_EXIT_USAGE;
			goto out;
		}
		if (common)
			continue;
		switch (c) {
		case 'h':
			fputs(usage_matrix, stdout);
			goto out;
		default:
			fputs(usage_matrix, stderr);
			rc = FAB_EXIT_USAGE;
			goto out;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "fabscope: matrix takes one scenario file, got %d\n", argc - optind);
		rc = FAB_EXIT_USAGE;
		goto out;
	}
	struct fab_err err = {0};
	cfg = fab_config_load(optind < argc ? argv[optind] : NULL, cm.sets, cm.nsets, &err);
	if (!cfg || !(r = fab_matrix_run_new(cfg, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	struct progress_ctx pctx = {wall_s(), false};
	bool tty = isatty(STDERR_FILENO) && !cm.quiet;
	int erc = fab_matrix_run_exec(r, tty ? progress : NULL, &pctx, &err);
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (erc) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(erc);
		goto out;
	}
	doc = fab_result_json(cfg, r->run->sim);
	json_object_set_new(doc, "kind", json_string("matrix"));
	json_object_set_new(doc, "matrix", fab_matrix_json(&r->m));
	struct matrix_out mo = {cfg, r, doc};
	if (cm.outdir) {
		const struct out_spec specs[] = {{"result.json", w_mat_json},
						 {"matrix.txt", w_mat_text},
						 {"ports.csv", w_mat_ports}};
		rc = write_out_dir(cm.outdir, specs, FAB_ARRAY_LEN(specs), &mo);
		if (rc)
			goto out;
	}
	if (!cm.quiet) {
		if (!strcmp(cm.format, "json"))
			w_mat_json(stdout, &mo);
		else
			w_mat_text(stdout, &mo);
	}
out:
	json_decref(doc);
	fab_matrix_run_free(r);
	fab_config_free(cfg);
	cli_common_free(&cm);
	return rc;
}

static const char *usage_diagnose =
	"usage: fabscope diagnose RESULT.json... [options]\n"
	"\n"
	"Reads result documents (fabscope sim, coll, matrix; a real probe's) and names\n"
	"the suspects, ranked, each with its evidence: links with bad frames, NICs slow\n"
	"or flaky in the matrix (with the GPUs behind them and their link), PFC storms,\n"
	"drops concentrated on a port, ECMP imbalance, job iterations far above their\n"
	"median, and with --baseline what got worse than a healthy run.\n"
	"\n"
	"options:\n"
	"  --baseline FILE       a result document of the healthy cluster\n"
	"  --format text|json    (default text)\n"
	"  --svg FILE            a heatmap of the matrix, suspects outlined\n"
	"  -h, --help            show this help\n"
	"\n"
	"exit status: 0 healthy, 1 a suspect was found, 2 usage, 3 bad input, 4 I/O error\n";

static json_t *load_doc(const char *path, int *rc)
{
	json_error_t je;
	json_t *d = json_load_file(path, 0, &je);
	if (!d) {
		bool io = je.line < 1;
		fprintf(stderr, "fabscope: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
		*rc = io ? FAB_EXIT_IO : FAB_EXIT_INPUT;
	}
	return d;
}

static int cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{"baseline", required_argument, NULL, 'B'}, {"format", required_argument, NULL, 'F'},
		{"svg", required_argument, NULL, 'G'},      {"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *baseline = NULL, *format = "text", *svg = NULL;
	int c, rc = FAB_EXIT_OK;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'B':
			baseline = optarg;
			break;
		case 'F':
			format = optarg;
			if (!format_ok(format, "text|json"))
				return FAB_EXIT_USAGE;
			break;
		case 'G':
			svg = optarg;
			break;
		case 'h':
			fputs(usage_diagnose, stdout);
			return FAB_EXIT_OK;
		default:
			fputs(usage_diagnose, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	int ndocs = argc - optind;
	if (ndocs < 1) {
		fprintf(stderr, "fabscope: diagnose needs at least one result document\n%s", usage_diagnose);
		return FAB_EXIT_USAGE;
	}
	json_t **docs = calloc((size_t)ndocs, sizeof *docs), *base = NULL;
	int loaded = 0;
	for (int i = 0; i < ndocs && !rc; i++, loaded++)
		docs[i] = load_doc(argv[optind + i], &rc);
	if (!rc && baseline)
		base = load_doc(baseline, &rc);
	struct fab_diagnosis d = {0};
	if (!rc) {
		struct fab_diag_params p;
		struct fab_err err = {0};
		fab_diag_defaults(&p);
		if (fab_diagnose(docs, ndocs, base, &p, &d, &err)) {
			fprintf(stderr, "fabscope: %s\n", err.msg);
			rc = FAB_EXIT_INPUT;
		}
	}
	if (!rc && svg) {
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", svg);
		FILE *f = fopen(tmp, "w");
		int src = f ? fab_diagnosis_write_svg(f, docs, ndocs, &d) : FAB_EIO;
		if (f && fclose(f))
			src = FAB_EIO;
		if (src == FAB_EINVAL) {
			fprintf(stderr, "fabscope: --svg: no matrix in the documents\n");
			rc = FAB_EXIT_INPUT;
		} else if (src || rename(tmp, svg)) {
			fprintf(stderr, "fabscope: %s: cannot write\n", svg);
			rc = FAB_EXIT_IO;
		}
		if (rc)
			unlink(tmp);
	}
	if (!rc) {
		if (!strcmp(format, "json")) {
			json_t *j = fab_diagnosis_json(&d);
			json_dumpf(j, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
			json_decref(j);
		} else {
			fab_diagnosis_write_text(stdout, &d);
		}
		rc = d.n ? FAB_EXIT_CHECKS : FAB_EXIT_OK;
	}
	fab_diagnosis_free(&d);
	for (int i = 0; i < loaded; i++)
		json_decref(docs[i]);
	free(docs);
	json_decref(base);
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
	if (!strcmp(cmd, "coll"))
		return cmd_coll(argc - 1, argv + 1);
	if (!strcmp(cmd, "matrix"))
		return cmd_matrix(argc - 1, argv + 1);
	if (!strcmp(cmd, "diagnose"))
		return cmd_diagnose(argc - 1, argv + 1);
	if (!strcmp(cmd, "probe"))
		return cmd_probe(argc - 1, argv + 1);
	fprintf(stderr, "fabscope: unknown command '%s'\n\n%s", cmd, usage_main);
	return FAB_EXIT_USAGE;
}
