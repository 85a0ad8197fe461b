/*
 * main.c - the fabscope command line's front end.  Parses arguments, calls
 * the library, prints.  Results go to stdout, diagnostics and progress to
 * stderr (progress only when stderr is a terminal).  Exit codes: 0 ok, 1
 * checks failed, 2 usage, 3 bad input, 4 I/O error, 5 internal error.
 * This file: the command table and `fabscope sim`; coll.c: coll and
 * matrix; diagnose.c; probe.c; common.c: what they share.
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
	"  report                one HTML page from result documents (pictures, suspects)\n"
	"  plan                  design the fabric for N GPUs (optics, cost, power), compare designs\n"
	"  sweep GRID.yaml       every point of a design space (-j N, mpirun, Slurm), one table\n"
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
	"  --threads N           packet engine: split the fabric over N threads, same result byte for byte\n"
	"                        (--set run.threads=N; 8 partitions a thread, run.partitions; flows only, not\n"
	"                        jobs, faults or series)\n"
	"  --ranks               split the fabric over the processes of a launcher (mpirun, srun, RANK and\n"
	"                        WORLD_SIZE), one partition each; rank 0 prints and writes, byte for byte\n"
	"                        what one process would; they meet at MASTER_ADDR:MASTER_PORT\n"
	"  --master HOST:PORT    with --ranks: where rank 0 listens (instead of MASTER_ADDR/MASTER_PORT)\n"
	"  --timeout S           with --ranks: a rank not met or silent for S seconds fails the run (default 60)\n"
	"  --set KEY=VALUE       override any scenario key, e.g. --set topology.spines=8\n"
	"                        (repeatable; list items by index: traffic.generators.0.bytes=1MiB)\n"
	"  --format text|json|csv  what to print on stdout (default text)\n"
	"  --out DIR             also write result.json, flows.csv, ports.csv, summary.txt, slowdown.csv\n"
	"                        (and series.csv, series.jsonl) into DIR\n"
	"  -q, --quiet           print nothing on stdout; no progress, no timing\n"
	"  --keys                print the reference of every scenario key (Markdown)\n"
	"  --print-scenario      print the built-in scenario\n"
	"  --debug               the jobs' and communicators' log on stderr\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"examples:\n"
	"  fabscope sim\n"
	"  fabscope sim examples/default/scenario.yaml --set topology.oversubscription=2:1\n"
	"  fabscope sim my.yaml --format json > result.json\n"
	"\n"
	"exit status: 0 ok, 2 usage, 3 bad scenario, 4 I/O error, 5 internal error\n";

/* --format csv on stdout: the flows, a blank line, the ports */
#define OUT_TABLES 100

static int write_run(FILE *f, const void *run, enum fab_output what)
{
	if ((int)what == OUT_TABLES)
		return fab_run_write(f, run, FAB_OUT_FLOWS_CSV) || fputc('\n', f) == EOF ||
			fab_run_write(f, run, FAB_OUT_PORTS_CSV);
	return fab_run_write(f, run, what);
}

static double sim_done(const void *run)
{
	return fab_run_done(run);
}

int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seed", required_argument, NULL, 's'},
		{"engine", required_argument, NULL, 'E'},
		{"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'F'},
		{"out", required_argument, NULL, 'U'},
		{"quiet", no_argument, NULL, 'q'},
		{"keys", no_argument, NULL, 'K'},
		{"print-scenario", no_argument, NULL, 'P'},
		{"debug", no_argument, NULL, 'D'},
		{"threads", required_argument, NULL, 'T'},
		{"ranks", no_argument, NULL, 'R'},
		{"master", required_argument, NULL, 'M'},
		{"timeout", required_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	bool debug = false, ranks = false;
	const char *master = NULL;
	double timeout_s = 60;
	bool timeout_set = false;
	uint32_t rank = 0, nranks = 1;
	int c, rc = FAB_EXIT_OK;
	struct cmd_out o = {.indent = 2, .write = write_run};
	struct fab_run *run = NULL;
	struct fab_config *cfg = NULL;
	while ((c = cli_next_opt(&cm, argc, argv, "qh", opts, "text|json|csv", usage_sim, &rc)) >= 0) {
		if (c == 'K') {
			fab_config_write_keys(stdout);
			goto out;
		} else if (c == 'P') {
			fputs(fab_default_scenario, stdout);
			goto out;
		} else if (c == 'T') {
			cli_set(&cm, "run.threads", optarg);
			continue;
		} else if (c == 'R') {
			ranks = true;
			continue;
		} else if (c == 'M') {
			master = optarg;
			continue;
		} else if (c == 'W') {
			if (parse_seconds(optarg, &timeout_s)) {
				fprintf(stderr,
					"fabscope: sim: --timeout: expected seconds (0 < S <= 86400), got \"%s\"\n",
					optarg);
				rc = FAB_EXIT_USAGE;
				goto out;
			}
			timeout_set = true;
			continue;
		}
		debug = true; /* 'D' */
	}
	if (c == CLI_OPTS_STOP)
		goto out;
	struct fab_err err = {0};
	if (!(cfg = cli_load(&cm, argc, argv, "sim", &rc)))
		goto out;
	if (!(run = fab_run_new_log(cfg, debug, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	if (fab_run_warning(run))
		fprintf(stderr, "fabscope: warning: %s\n", fab_run_warning(run));
	if ((master || timeout_set) && !ranks) {
		fprintf(stderr, "fabscope: sim: --master and --timeout go with --ranks\n");
		rc = FAB_EXIT_USAGE;
		goto out;
	}
	if (ranks && fab_run_join_ranks(run, master, timeout_s, &rank, &nranks, &err)) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	struct progress_ctx pctx = {wall_s(), false, sim_done, run};
	bool tty = isatty(STDERR_FILENO) && !cm.quiet && rank == 0;
	o.run = run;
	if (fab_run_exec(run, tty ? progress : NULL, &pctx)) {
		const char *why = fab_run_rank_error(run);
		fprintf(stderr, "fabscope: %s\n", why ? why : "the run failed");
		rc = why ? FAB_EXIT_IO : FAB_EXIT_INTERNAL;
		goto out;
	}
	if (rank) /* rank 0 has the whole run's results */
		goto out;
	if (pctx.shown)
		fputs("\r\033[K", stderr);
	if (debug)
		fab_run_write(stderr, run, FAB_OUT_LOG);
	double run_s = wall_s() - pctx.t0;
	static const struct out_spec specs[] = {
		{"result.json", w_cmd, OUT_DOC},
		{"flows.csv", w_cmd, FAB_OUT_FLOWS_CSV},
		{"ports.csv", w_cmd, FAB_OUT_PORTS_CSV},
		{"summary.txt", w_cmd, FAB_OUT_TEXT},
		{"slowdown.csv", w_cmd, FAB_OUT_SLOWDOWN_CSV},
		{"series.csv", w_cmd, FAB_OUT_SERIES_CSV},
		{"series.jsonl", w_cmd, FAB_OUT_SERIES_JSONL},
	};
	if (cm.outdir && (rc = write_out_dir(cm.outdir, specs, fab_run_has_series(run) ? 7 : 5, &o)))
		goto out;
	if (!cm.quiet)
		rc = print_cmd(&o, cm.format, OUT_TABLES);
	if (!cm.quiet && !rc)
		report_speed(fab_run_events(run), run_s);
out:
	json_decref(o.doc);
	fab_run_free(run);
	fab_config_free(cfg);
	cli_common_free(&cm);
	return rc;
}

int main(int argc, char **argv)
{
	cli_clock_start();
	fab_alloc_tune();
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
	/* --version on every command, wherever it stands among the options */
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--version")) {
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
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "plan"))
		return cmd_plan(argc - 1, argv + 1);
	if (!strcmp(cmd, "sweep"))
		return cmd_sweep(argc - 1, argv + 1);
	fprintf(stderr, "fabscope: unknown command '%s'\n\n%s", cmd, usage_main);
	return FAB_EXIT_USAGE;
}
