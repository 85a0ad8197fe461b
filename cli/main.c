/*
 * main.c - the fabscope command line's front end: the command table.  Each
 * command parses its arguments, calls the library and prints.  Results go
 * to stdout, diagnostics and progress to stderr (progress only when stderr
 * is a terminal).  Exit codes: 0 ok, 1 checks failed, 2 usage, 3 bad
 * input, 4 I/O error, 5 internal error.
 *
 * sim.c: sim; coll.c: coll and matrix; diagnose.c; twin.c (calibrate,
 * twin); probe.c (with
 * probe_local.c, probe_run.c); report.c; plan.c; sweep.c (with sweep_run.c);
 * common.c and out.c: what they share.
 */
#include <stdio.h>
#include <string.h>

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
	"  calibrate SCENARIO PROBE...  the design scenario fitted to the probe's matrix\n"
	"  twin SCENARIO PROBE...  measured against the calibrated scenario: what departs\n"
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

/* the commands, in the order usage_main lists them */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"sim", cmd_sim},           {"coll", cmd_coll},           {"matrix", cmd_matrix},
	{"diagnose", cmd_diagnose}, {"calibrate", cmd_calibrate}, {"twin", cmd_twin},
	{"probe", cmd_probe},       {"report", cmd_report},       {"plan", cmd_plan},
	{"sweep", cmd_sweep},
};

/* a and b differ by one letter changed, added, dropped or two swapped */
static bool one_off(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;
	while (i < la && i < lb && a[i] == b[i])
		i++;
	if (la == lb)
		return i == la || !strcmp(a + i + 1, b + i + 1) ||
			(i + 1 < la && a[i] == b[i + 1] && a[i + 1] == b[i] && !strcmp(a + i + 2, b + i + 2));
	if (la == lb + 1)
		return !strcmp(a + i + 1, b + i);
	if (lb == la + 1)
		return !strcmp(a + i, b + i + 1);
	return false;
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
	for (size_t i = 0; i < FAB_ARRAY_LEN(commands); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	/* did you mean: a command that begins what was typed ("simulate"),
	 * that what was typed begins ("col"), or one letter away ("smi") */
	const char *near = NULL;
	for (size_t i = 0; i < FAB_ARRAY_LEN(commands) && !near; i++) {
		const char *c = commands[i].name;
		size_t cl = strlen(c), tl = strlen(cmd);
		if ((tl >= 2 && !strncmp(c, cmd, tl)) || (tl > cl && !strncmp(cmd, c, cl)) || one_off(c, cmd))
			near = c;
	}
	if (near)
		fprintf(stderr, "fabscope: unknown command '%s' (did you mean 'fabscope %s'?)\n", cmd, near);
	else
		fprintf(stderr, "fabscope: unknown command '%s'\n\n%s", cmd, usage_main);
	return FAB_EXIT_USAGE;
}
