/*
 * coll.c - `fabscope coll` (nccl-tests in simulation) and `fabscope
 * matrix` (every NIC pair, in simulation).
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

#include <fcntl.h>

#include "../include/fabscope.h"
#include "cli.h"

static const char *usage_coll =
	"usage: fabscope coll [SCENARIO.yaml] [options]\n"
	"\n"
	"Runs one collective over a range of sizes on the scenario's cluster, packet by\n"
	"packet, and prints it the way nccl-tests does (size, count, type, redop, root,\n"
	"time, algbw, busbw).  With no SCENARIO, the built-in cluster (64 GPUs).  The\n"
	"scenario's traffic section is ignored unless collective.background_traffic.\n"
	"\n"
	"options (each sets a collective.* key; nccl-tests' short options mean what they\n"
	"mean there):\n"
	"  --coll OP             allreduce, reducescatter, allgather, broadcast, reduce,\n"
	"                        alltoall, sendrecv (default allreduce; --op OP as well)\n"
	"  --algo ALGO           ring, tree, hierarchical, rhd, direct, nvls, sharp, auto (default auto)\n"
	"  -o, --op sum          nccl-tests' reduction: sum (prod, min, max, avg cost the network\n"
	"                        the same and are refused)\n"
	"  -a 0|1|2|3, -a ALGO   a number: nccl-tests' averaging over ranks (--average; every\n"
	"                        rank ends together here); a name: the algorithm (--algo)\n"
	"  -t N                  threads: the communicator has N x -g ranks\n"
	"  -c 0|1, -z 0-3, -G N, -m N, -y 0|1, -C 0, -S 0|1, -T S\n"
	"                        nccl-tests' check, blocking, graph, aggregation, stream, cputime,\n"
	"                        timestamps, timeout: accepted; nothing to change in a simulation\n"
	"  -J FILE               nccl-tests' JSON output into FILE; as nccl-tests, never over\n"
	"                        a file: FILE.0, FILE.1, ... when it exists (fabscope's own\n"
	"                        document: --format json or --out)\n"
	"  -v, --verbose         list every rank under \"# Using devices\" (default: the first\n"
	"                        64 and a count of the rest)\n"
	"  --algo-column         a 14th column: the algorithm and protocol each size ran\n"
	"  --estimate            run nothing: what the sweep would cost on each engine (events, CPU,\n"
	"                        memory), from a flow-engine run of it and the packet engine built\n"
	"  -b, --minbytes SIZE   smallest size (default 1K; K, M, G are binary, as in nccl-tests;\n"
	"                        KB, MB, GB decimal, KiB, MiB, GiB binary)\n"
	"  -e, --maxbytes SIZE   largest size (default 64M)\n"
	"  -f, --stepfactor N    multiply the size by N from row to row (default 4)\n"
	"  -i, --stepbytes SIZE  add SIZE from row to row instead\n"
	"  -n, --iters N         timed iterations per size (default 20, as nccl-tests)\n"
	"  -w, --warmup_iters N  warm-up iterations per size (default 5, as nccl-tests)\n"
	"  -d, --datatype TYPE   float, half, bfloat16, double, int8, ... (default float)\n"
	"  -r, --root N          root rank of broadcast and reduce\n"
	"  -g, --gpus N          ranks in the communicator (default: every GPU)\n"
	"  --channels N          channels (default: one per NIC of a server, at least 2)\n"
	"  --placement P         packed, spread, random, scatter\n"
	"  --ring-order O        topology, rank, flat\n"
	"  --proto P             ll, ll128, simple, auto (nccl.proto, as NCCL_PROTO)\n"
	"\n"
	"  --seed N, --engine E, --set KEY=VALUE, --format F, --out DIR, -q, --progress\n"
	"                        as for sim (--format text|json|csv)\n"
	"  --debug               the communicator's log on stderr (rings, per-operation\n"
	"                        algorithm, channels, start, end), like NCCL_DEBUG=INFO\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"examples:\n"
	"  fabscope coll -b 8 -e 128M -f 2\n"
	"  fabscope coll --op allgather --algo ring --set topology.oversubscription=2:1\n"
	"\n"
	"The table is nccl-tests' (13 fields, out of place and in place: the same in\n"
	"a simulation); NCCL_TESTS_MIN_BW fails the run when the average bus bandwidth\n"
	"is under 0.9 x its value, as nccl-tests does.\n"
	"\n"
	"exit status: 0 ok, 1 under NCCL_TESTS_MIN_BW, 2 usage, 3 bad scenario, 4 I/O error,\n"
	"5 internal error\n";

static const char *const reductions[] = {"sum", "prod", "min", "max", "avg", "mulsum", "all"};

/* nccl-tests' short options where fabscope's differ or it has none: -o
 * (reduction, or a collective's name), -a (averaging, or an algorithm),
 * -t, -c, -z, -G, -m, -y, -C, -S, -T, -J.  -1: handled; else an exit
 * status (a message printed). */
static int nccl_opt(struct cli_common *cm, int c, uint64_t *threads, const char **json_file)
{
	char why[160];
	uint64_t v;
	switch (c) {
	case 'o':
	case 'O':
		for (size_t k = 0; k < FAB_ARRAY_LEN(reductions); k++)
			if (!strcmp(optarg, reductions[k])) {
				if (k == 0)
					return -1;
				fprintf(stderr,
					"fabscope: -o %s: only sum is simulated (the network carries %s the same "
					"bytes: use sum)\n",
					optarg, optarg);
				return FAB_EXIT_USAGE;
			}
		cli_set(cm, "collective.op", optarg); /* a collective's name */
		return -1;
	case 'a':
	case CLI_OPT_AVERAGE:
		/* -a: a number is nccl-tests' averaging, a name the algorithm;
		 * --average: the number only */
		if (optarg[0] >= '0' && optarg[0] <= '9') {
			if (fab_parse_uint(optarg, &v, why, sizeof why) || v > 3) {
				fprintf(stderr, "fabscope: %s %s: nccl-tests' averaging is 0 to 3%s\n",
					c == 'a' ? "-a" : "--average", optarg,
					c == 'a' ? " (an algorithm is a name: --algo ring, tree, ...)" : "");
				return FAB_EXIT_USAGE;
			}
			return -1; /* every rank ends the collective at the same time here */
		}
		if (c == CLI_OPT_AVERAGE) {
			fprintf(stderr,
				"fabscope: --average %s: nccl-tests' averaging is 0 to 3 (the algorithm: --algo)\n",
				optarg);
			return FAB_EXIT_USAGE;
		}
		cli_set(cm, "collective.algo", optarg);
		return -1;
	case 't':
	case 'c':
	case 'z':
	case 'G':
	case 'm':
	case 'y':
	case 'K':
	case 'S':
		if (fab_parse_uint(optarg, &v, why, sizeof why) || (c == 't' && (!v || v > 1024)) ||
		    ((c == 'c' || c == 'y' || c == 'S') && v > 1) || (c == 'z' && v > 3) || (c == 'm' && !v)) {
			fprintf(stderr, "fabscope: -%c %s: out of range or not a number\n", c, optarg);
			return FAB_EXIT_USAGE;
		}
		if (c == 't')
			*threads = v;
		return -1;
	case 'C':
		if (strcmp(optarg, "0")) {
			fprintf(stderr,
				"fabscope: -C %s: a simulation has no host CPU time to report (its times are "
				"simulated): -C 0 only\n",
				optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'X': {
		double s;
		if (fab_parse_double(optarg, &s, why, sizeof why) || s < 0) {
			fprintf(stderr, "fabscope: -T %s: expected seconds\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1; /* a simulation never hangs on a GPU */
	}
	case 'J':
		*json_file = optarg;
		return -1;
	}
	return -1;
}

/* a row of the table, printed as soon as its size is done */
struct row_stream {
	const struct fab_coll_run *r;
	struct progress_ctx *p;
	bool algo_col;
};

static void print_row(void *ctx, uint32_t row)
{
	struct row_stream *rs = ctx;
	if (rs->p->shown) { /* the progress line gives way */
		fputs("\r\033[K", stderr);
		rs->p->shown = false;
	}
	fab_coll_run_write_row(stdout, rs->r, row, rs->algo_col);
	fflush(stdout);
}

static double coll_done(void *run, uint64_t events)
{
	return fab_coll_run_done(run, events);
}

static int write_coll(FILE *f, const void *run, enum fab_output what)
{
	return fab_coll_run_write(f, run, what);
}

/* what coll's command line says: the options every simulation command
 * takes, and coll's own */
struct coll_cli {
	struct cli_common cm;
	bool debug, algo_col, estimate, verbose;
	uint64_t threads; /* nccl-tests' -t */
	const char *json_file, *gpus;
};

static const struct option coll_opts[] = {
	{"op", required_argument, NULL, 'O'},
	{"coll", required_argument, NULL, 'Q'},
	{"algo", required_argument, NULL, 'A'},
	{"check", required_argument, NULL, 'c'},
	{"nthreads", required_argument, NULL, 't'},
	{"ngpus", required_argument, NULL, 'g'},
	{"average", required_argument, NULL, CLI_OPT_AVERAGE},
	{"blocking", required_argument, NULL, 'z'},
	{"cudagraph", required_argument, NULL, 'G'},
	{"agg_iters", required_argument, NULL, 'm'},
	{"stream_null", required_argument, NULL, 'y'},
	{"report_cputime", required_argument, NULL, 'C'},
	{"report_timestamps", required_argument, NULL, 'S'},
	{"timeout", required_argument, NULL, 'X'},
	{"output_file", required_argument, NULL, 'J'},
	{"algo-column", no_argument, NULL, 'L'},
	{"estimate", no_argument, NULL, 'Z'},
	{"minbytes", required_argument, NULL, 'b'},
	{"maxbytes", required_argument, NULL, 'e'},
	{"stepfactor", required_argument, NULL, 'f'},
	{"stepbytes", required_argument, NULL, 'i'},
	{"iters", required_argument, NULL, 'n'},
	{"warmup_iters", required_argument, NULL, 'w'},
	{"datatype", required_argument, NULL, 'd'},
	{"root", required_argument, NULL, 'r'},
	{"gpus", required_argument, NULL, 'g'},
	{"channels", required_argument, NULL, 'H'},
	{"placement", required_argument, NULL, 'P'},
	{"ring-order", required_argument, NULL, 'R'},
	{"proto", required_argument, NULL, 'Y'},
	CLI_COMMON_OPTIONS,
	{"debug", no_argument, NULL, 'D'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{0, 0, 0, 0},
};
/* the options that stand for a scenario key */
static const struct {
	int opt;
	const char *key;
} coll_keys[] = {{'Q', "collective.op"},          {'A', "collective.algo"},
		 {'b', "collective.min_bytes"},   {'e', "collective.max_bytes"},
		 {'f', "collective.step_factor"}, {'i', "collective.step_bytes"},
		 {'n', "collective.iters"},       {'w', "collective.warmup"},
		 {'d', "collective.datatype"},    {'r', "collective.root"},
		 {'H', "collective.channels"},    {'P', "collective.placement"},
		 {'R', "collective.ring_order"},  {'Y', "nccl.proto"}};

/* -b 1GB is 10^9 bytes where nccl-tests' 1G is 2^30: said once, so that a
 * sweep meant to be nccl-tests' powers of two is not silently decimal */
static void decimal_note(int opt, const char *v)
{
	size_t n = strlen(v);
	if (n >= 3 && v[n - 1] == 'B' && strchr("KMGT", v[n - 2]) && v[n - 3] >= '0' && v[n - 3] <= '9')
		fprintf(stderr,
			"fabscope: note: -%c %s is decimal (%cB: 10^%d bytes); nccl-tests' %.*s%c, or %.*s%ciB, is "
			"binary\n",
			opt, v, v[n - 2], 3 * (int)(strchr("KMGT", v[n - 2]) - "KMGT" + 1), (int)(n - 2), v, v[n - 2],
			(int)(n - 2), v, v[n - 2]);
}

/* the options into cc, the scenario keys among them as --set; -1: go on,
 * else an exit status (help, or a usage error) */
static int coll_parse(struct coll_cli *cc, int argc, char **argv)
{
	int c, rc = FAB_EXIT_OK;
	while ((c = cli_next_opt(&cc->cm, argc, argv, "a:b:e:f:i:n:w:d:r:g:o:t:c:z:G:m:y:C:S:T:J:F:K:qvh", coll_opts,
				 "text|json|csv", usage_coll, &rc)) >= 0) {
		if (c == 'D')
			cc->debug = true;
		else if (c == 'L')
			cc->algo_col = true;
		else if (c == 'Z')
			cc->estimate = true;
		else if (c == 'v')
			cc->verbose = true;
		else if (c == 'g')
			cc->gpus = optarg;
		else if (c == 'T')
			c = 'X'; /* -T is nccl-tests' timeout */
		for (size_t k = 0; k < FAB_ARRAY_LEN(coll_keys); k++)
			if (coll_keys[k].opt == c)
				cli_set(&cc->cm, coll_keys[k].key, optarg);
		if ((c == 'b' || c == 'e' || c == 'i') && !cc->cm.quiet)
			decimal_note(c, optarg);
		if ((rc = nccl_opt(&cc->cm, c, &cc->threads, &cc->json_file)) >= 0)
			return rc;
	}
	if (c == CLI_OPTS_STOP)
		return rc;
	if (cc->threads) { /* nccl-tests: -t threads of -g GPUs each */
		uint64_t g = 1;
		char why[160], n[32];
		if (cc->gpus && fab_parse_uint(cc->gpus, &g, why, sizeof why)) {
			fprintf(stderr, "fabscope: -g %s: %s\n", cc->gpus, why);
			return FAB_EXIT_USAGE;
		}
		snprintf(n, sizeof n, "%llu", (unsigned long long)(cc->threads * g));
		cli_set(&cc->cm, "collective.gpus", n);
	} else if (cc->gpus) {
		cli_set(&cc->cm, "collective.gpus", cc->gpus);
	}
	return -1;
}

/* the run: on a terminal its progress line; with stream, the text table's
 * head now and each row as its size is done; --debug's log after it.  0,
 * or an exit status; *run_s, the run's wall time */
static int coll_exec(const struct coll_cli *cc, struct fab_coll_run *r, bool stream, double *run_s)
{
	struct fab_err err = {0};
	struct progress_ctx pctx = {cli_wall_s(), false, coll_done, r, 0};
	bool tty = cli_show_progress(&cc->cm);
	struct row_stream rs = {r, &pctx, cc->algo_col};
	if (stream) {
		fab_coll_run_write_head(stdout, r, cc->algo_col);
		fflush(stdout);
		fab_coll_run_set_row_hook(r, print_row, &rs);
	}
	int erc = fab_coll_run_exec(r, tty ? cli_progress : NULL, &pctx, &err);
	fab_coll_run_set_row_hook(r, NULL, NULL); /* rs ends here */
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (cc->debug)
		fab_coll_run_write(stderr, r, FAB_OUT_LOG);
	if (erc) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return fab_err_exit_code(erc);
	}
	*run_s = cli_wall_s() - pctx.t0;
	return FAB_EXIT_OK;
}

/* nccl-tests' JSON of the run, into the -J file (cli_tool_json) */
struct json_ctx {
	const struct fab_coll_run *r;
	int argc;
	char **argv;
};

extern char **environ;

static int write_nccl(FILE *f, void *vctx, const char *start)
{
	struct json_ctx *x = vctx;
	return fab_coll_run_write_nccl_json(f, x->r, x->argc, x->argv, environ, start);
}

/* the outputs: --out DIR, then stdout (the streamed table's end, or what
 * --format asks for).  0, or an exit status */
static int coll_write(const struct coll_cli *cc, const struct fab_coll_run *r, json_t *doc, bool stream)
{
	int rc = FAB_EXIT_OK, text = cc->algo_col ? FAB_OUT_TEXT_ALGO : FAB_OUT_TEXT;
	struct cmd_out co = {doc, 2, r, write_coll, text};
	if (cc->cm.outdir) {
		const struct out_spec specs[] = {{"result.json", cli_w_cmd, OUT_DOC},
						 {"coll.txt", cli_w_cmd, text},
						 {"coll.csv", cli_w_cmd, FAB_OUT_ROWS_CSV},
						 {"ports.csv", cli_w_cmd, FAB_OUT_PORTS_CSV},
						 {"coll.log", cli_w_cmd, FAB_OUT_LOG}};
		if ((rc = cli_write_out_dir(cc->cm.outdir, specs, FAB_ARRAY_LEN(specs), &co)))
			return rc;
	}
	if (stream) {
		fab_coll_run_write_end(stdout, r);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "fabscope: writing to stdout failed\n");
			rc = FAB_EXIT_IO;
		}
	} else if (!cc->cm.quiet) {
		rc = cli_print_cmd(&co, cc->cm.format, FAB_OUT_ROWS_CSV);
	}
	return rc;
}

/* NCCL_TESTS_MIN_BW, as nccl-tests checks it: the document's average bus
 * bandwidth at least 0.9 x its value */
static int coll_min_bw(json_t *doc)
{
	double min_bw = fab_nccl_min_bw(),
	       avg = json_real_value(json_object_get(json_object_get(doc, "collective"), "avg_busbw_GBps"));
	if (min_bw >= 0 && avg < 0.9 * min_bw) {
		fprintf(stderr, "fabscope: average bus bandwidth %g GB/s is under 0.9 x NCCL_TESTS_MIN_BW (%g)\n", avg,
			min_bw);
		return FAB_EXIT_CHECKS;
	}
	return FAB_EXIT_OK;
}

int cmd_coll(int argc, char **argv)
{
	struct coll_cli cc = {.debug = false};
	cli_common_init(&cc.cm, argc);
	struct fab_config *cfg = NULL;
	struct fab_coll_run *r = NULL;
	json_t *doc = NULL;
	struct fab_err err = {0};
	struct cli_tool_json jo = {.fd = -1};
	double run_s = 0;
	int rc = coll_parse(&cc, argc, argv);
	if (rc >= 0)
		goto out;
	if (cc.estimate && cc.json_file) {
		fprintf(stderr, "fabscope: coll: --estimate runs nothing: it writes no -J file\n");
		rc = FAB_EXIT_USAGE;
		goto out;
	}
	if (cc.estimate) {
		rc = cli_estimate(&cc.cm, argc, argv, "coll", true);
		goto out;
	}
	if (!(cfg = cli_load(&cc.cm, argc, argv, "coll", &rc)))
		goto out;
	if (!(r = fab_coll_run_new(cfg, cc.debug || cc.cm.outdir, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	fab_coll_run_list_devices(r, cc.verbose);
	if (fab_coll_run_warning(r))
		fprintf(stderr, "fabscope: warning: %s\n", fab_coll_run_warning(r));
	/* the text table streams */
	bool stream = !cc.cm.quiet && !strcmp(cc.cm.format, "text");
	if (cc.json_file && (rc = cli_tool_json_reserve("-J", cc.json_file, &jo)))
		goto out;
	if (cc.json_file && stream) /* nccl-tests' first line */
		printf("# Writing JSON output to %s\n", jo.path);
	if ((rc = coll_exec(&cc, r, stream, &run_s)))
		goto out;
	/* the document only where something reads it (at 16k GPUs its rows
	 * of every port are most of the command's memory) */
	bool min_bw = fab_nccl_min_bw() >= 0;
	if (cc.cm.outdir || (!stream && !cc.cm.quiet) || min_bw)
		doc = fab_coll_run_json(r);
	/* argv: main's from its second word (main.c), so argv[-1] is the
	 * program: nccl-tests' "args" list the whole command line */
	struct json_ctx jx = {r, argc + 1, argv - 1};
	if (jo.fd >= 0 && (rc = cli_tool_json_commit(&jo, write_nccl, &jx)))
		goto out;
	if ((rc = coll_write(&cc, r, doc, stream)) || (min_bw && (rc = coll_min_bw(doc))))
		goto out;
	if (!cc.cm.quiet)
		cli_report_speed(fab_coll_run_events(r), run_s, 1);
out:
	cli_tool_json_drop(&jo);
	json_decref(doc);
	fab_coll_run_free(r);
	fab_config_free(cfg);
	cli_common_free(&cc.cm);
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
	"  --seed N, --engine E, --set KEY=VALUE, --format F, --out DIR, -q, --progress\n"
	"                        as for sim (--format text|json)\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"example:\n"
	"  fabscope matrix examples/loose-cable/scenario.yaml --out run1 && fabscope diagnose run1/result.json\n";

static int write_matrix(FILE *f, const void *run, enum fab_output what)
{
	return fab_matrix_run_write(f, run, what);
}

int cmd_matrix(int argc, char **argv)
{
	static const struct option opts[] = {
		{"bytes", required_argument, NULL, 'b'},
		{"serial", no_argument, NULL, 'L'},
		CLI_COMMON_OPTIONS,
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	int c, rc = FAB_EXIT_OK;
	struct fab_config *cfg = NULL;
	struct fab_matrix_run *r = NULL;
	json_t *doc = NULL;
	while ((c = cli_next_opt(&cm, argc, argv, "qh", opts, "text|json", usage_matrix, &rc)) >= 0)
		cli_set(&cm, c == 'b' ? "matrix.bytes" : "matrix.serial", c == 'b' ? optarg : "true");
	if (c == CLI_OPTS_STOP)
		goto out;
	struct fab_err err = {0};
	if (!(cfg = cli_load(&cm, argc, argv, "matrix", &rc)))
		goto out;
	if (!(r = fab_matrix_run_new(cfg, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	if (fab_matrix_run_warning(r))
		fprintf(stderr, "fabscope: warning: %s\n", fab_matrix_run_warning(r));
	struct progress_ctx pctx = {cli_wall_s(), false, NULL, NULL, 0};
	bool tty = cli_show_progress(&cm);
	int erc = fab_matrix_run_exec(r, tty ? cli_progress : NULL, &pctx, &err);
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (erc) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(erc);
		goto out;
	}
	doc = fab_matrix_run_json(r);
	struct cmd_out mo = {doc, 1, r, write_matrix, FAB_OUT_TEXT};
	if (cm.outdir) {
		static const struct out_spec specs[] = {{"result.json", cli_w_cmd, OUT_DOC},
							{"matrix.txt", cli_w_cmd, FAB_OUT_TEXT},
							{"ports.csv", cli_w_cmd, FAB_OUT_PORTS_CSV}};
		rc = cli_write_out_dir(cm.outdir, specs, FAB_ARRAY_LEN(specs), &mo);
		if (rc)
			goto out;
	}
	if (!cm.quiet)
		rc = cli_print_cmd(&mo, cm.format, FAB_OUT_TEXT);
out:
	json_decref(doc);
	fab_matrix_run_free(r);
	fab_config_free(cfg);
	cli_common_free(&cm);
	return rc;
}
