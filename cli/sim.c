/*
 * sim.c - `fabscope sim`: a scenario run packet by packet (or by the flow
 * engine), over threads or a launcher's ranks; its document, tables and
 * summary on stdout or into --out DIR.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../include/fabscope.h"
#include "cli.h"

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
	"  --threads N           packet engine: split the fabric over N threads at most (no more than the\n"
	"                        cores free at the start), same result byte for byte (--set run.threads=N; 8\n"
	"                        partitions a thread, run.partitions; flows only, not jobs, faults or series)\n"
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
	"  --progress            progress lines (one every 5 s) where stderr is no terminal\n"
	"  --estimate            run nothing: what the run would cost on each engine (events, CPU,\n"
	"                        memory), from a flow-engine run of it and the packet engine built\n"
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

static double sim_done(void *run, uint64_t events)
{
	(void)events;
	return fab_run_done(run);
}

int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTIONS,
		{"keys", no_argument, NULL, 'K'},
		{"print-scenario", no_argument, NULL, 'P'},
		{"debug", no_argument, NULL, 'D'},
		{"threads", required_argument, NULL, 'T'},
		{"ranks", no_argument, NULL, 'R'},
		{"master", required_argument, NULL, 'M'},
		{"timeout", required_argument, NULL, 'W'},
		{"estimate", no_argument, NULL, 'Z'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_common cm;
	cli_common_init(&cm, argc);
	bool debug = false, ranks = false, estimate = false;
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
		} else if (c == 'Z') {
			estimate = true;
			continue;
		} else if (c == 'M') {
			master = optarg;
			continue;
		} else if (c == 'W') {
			if (cli_parse_seconds(optarg, &timeout_s)) {
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
	if (estimate) {
		rc = cli_estimate(&cm, argc, argv, "sim", false);
		goto out;
	}
	struct fab_err err = {0};
	if (!(cfg = cli_load(&cm, argc, argv, "sim", &rc)))
		goto out;
	if (!(run = fab_run_new_log(cfg, debug, &err))) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(err.code);
		goto out;
	}
	if (fab_run_idle(run)) { /* the document alone still describes the topology */
		bool doc = cm.outdir || strcmp(cm.format, "text");
		fprintf(stderr, "fabscope: %s%s: %s%s\n", doc ? "warning: " : "",
			optind < argc ? argv[optind] : "<built-in>", fab_run_idle(run),
			doc ? "; the result holds the topology alone"
			    : " (--format json or --out DIR write the topology alone)");
		if (!doc) {
			rc = FAB_EXIT_INPUT;
			goto out;
		}
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
	struct progress_ctx pctx = {cli_wall_s(), false, sim_done, run, 0};
	bool tty = cli_show_progress(&cm) && rank == 0;
	o.run = run;
	if (fab_run_exec(run, tty ? cli_progress : NULL, &pctx)) {
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
	double run_s = cli_wall_s() - pctx.t0;
	static const struct out_spec specs[] = {
		{"result.json", cli_w_cmd, OUT_DOC},
		{"flows.csv", cli_w_cmd, FAB_OUT_FLOWS_CSV},
		{"ports.csv", cli_w_cmd, FAB_OUT_PORTS_CSV},
		{"summary.txt", cli_w_cmd, FAB_OUT_TEXT},
		{"slowdown.csv", cli_w_cmd, FAB_OUT_SLOWDOWN_CSV},
		{"series.csv", cli_w_cmd, FAB_OUT_SERIES_CSV},
		{"series.jsonl", cli_w_cmd, FAB_OUT_SERIES_JSONL},
	};
	if (cm.outdir && (rc = cli_write_out_dir(cm.outdir, specs, fab_run_has_series(run) ? 7 : 5, &o)))
		goto out;
	if (!cm.quiet)
		rc = cli_print_cmd(&o, cm.format, OUT_TABLES);
	if (!cm.quiet && !rc)
		cli_report_speed(fab_run_events(run), run_s, fab_run_threads(run));
out:
	json_decref(o.doc);
	fab_run_free(run);
	fab_config_free(cfg);
	cli_common_free(&cm);
	return rc;
}
