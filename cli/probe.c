/*
 * probe.c - `fabscope probe`: its options (the usage, the option table,
 * a handler for each group of options, the checks across them) and the
 * launch they ask for: this process as one rank of a launcher's job, or
 * --local N ranks here (probe_local.c).  A rank's run, its tests and rank
 * 0's table and document are probe_run.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/fabscope.h"
#include "cli.h"

static const char *usage_probe =
	"usage: fabscope probe [options]\n"
	"\n"
	"Tests on a real network: one process per rank, TCP between them.  The\n"
	"collectives run the same schedules the simulator runs, on real float data\n"
	"checked element by element (#wrong).  Rank and size come from the launcher\n"
	"(mpirun, srun, torchrun-style RANK/WORLD_SIZE with MASTER_ADDR/MASTER_PORT),\n"
	"or --local N starts N ranks on this machine.\n"
	"\n"
	"options:\n"
	"  --test T              coll (default): the collective sweep; latency: ping-pong\n"
	"                        from rank 0 to each rank in turn (default 8 B, -n 1000\n"
	"                        -w 100); bw: streaming from rank 0 to each rank in turn\n"
	"                        (default 1 MiB, -n 100 -w 10); matrix: every pair, -e\n"
	"                        bytes each way at once and -n ping-pongs (default 4 MiB, 20)\n"
	"  --local N             start N ranks here, over loopback\n"
	"  --master HOST:PORT    rank 0's rendezvous address (when the launcher gives none)\n"
	"  --rank R --size N     this process's rank and the job's size, without a launcher\n"
	"  --bind ADDR|IFACE     this rank's sockets use this address (or the interface's)\n"
	"  --conns N             data connections per pair of ranks (default 2); channel c\n"
	"                        uses connection c mod N, bw and matrix stripe over all\n"
	"  --timeout S           a rank with no progress for S seconds fails the job (default 30)\n"
	"  --op OP, -a ALGO      coll: as for fabscope coll (default allreduce, ring; alltoall: direct)\n"
	"  -o sum, -a 0-3, -T S  nccl-tests' reduction, averaging (the mean over ranks is what is\n"
	"                        reported) and timeout (as --timeout)\n"
	"  -b, -e, -f, -n, -w    sizes and iterations, as nccl-tests (coll default 1K..1M, x4, 5, 1)\n"
	"  -c 0|1                coll: check the results in two extra runs per size, one for\n"
	"                        each half's #wrong (default 1)\n"
	"  --channels N          coll: the schedule's channels (default 2)\n"
	"  --bidir               bw: both directions at once (the sum is reported)\n"
	"  -t S, -i S            bw: run S seconds (as iperf3 -t) and print an interval line\n"
	"                        every -i seconds (default 1; 0: none)\n"
	"  --busy-poll           latency, bw: spin on the sockets instead of sleeping in poll\n"
	"  --serial              matrix: one pair at a time instead of rounds of disjoint pairs\n"
	"  --pair-timeout S      matrix: a pair not done in S seconds is recorded failed (default 10)\n"
	"  --retest F            matrix: re-test alone the pairs under F x the median (default 0.5; 0: none)\n"
	"  --json FILE           rank 0 writes the result document (what fabscope diagnose reads)\n"
	"  -J FILE               coll: nccl-tests' JSON (its -J), bw: iperf3's (its -J); never\n"
	"                        over a file (FILE.0, FILE.1, ...), removed if the run fails\n"
	"  --out DIR             rank 0 writes DIR/result.json and DIR/probe.txt (the table)\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"The collective table is nccl-tests' (13 fields; the in-place columns time the\n"
	"operation again); NCCL_TESTS_MIN_BW fails the run below 0.9 x its value.\n"
	"latency and bw print perftest's columns first (ib_send_lat, ib_write_bw\n"
	"--report_gbits), then the peer.\n"
	"\n"
	"exit status: 0 ok, 1 wrong results or under NCCL_TESTS_MIN_BW, 2 usage, 4 network\n"
	"error or a rank failed\n";

/* what the command line says, as it is parsed */
struct probe_cli {
	struct probe_opts o;
	struct fab_probe_params pp;
	bool set_b, set_e, set_n, set_w, bidir, set_pt, set_algo, set_i;
	uint32_t local;
	int64_t rank, wsize;
	char master[64];
	uint16_t master_port;
};

/* ---- the options, by group: each handler returns -1 to go on, else an
 * exit status (a message printed) ---- */

/* the options that count something: the least and the most each takes,
 * and its name in messages (NULL: -c, its short one) */
static const struct {
	int c;
	const char *name;
	uint64_t min, max;
} counts[] = {
	{'L', "--local", 1, 512}, {'f', NULL, 2, 100000},     {'n', NULL, 1, 100000},
	{'w', NULL, 0, 100000},   {'C', "--channels", 1, 64}, {'K', "--conns", 1, FAB_PROBE_MAX_CONNS},
	{'c', NULL, 0, 1},
};

/* --local, -f, -n, -w, --channels, --conns, -c */
static int opt_count(struct probe_cli *pc, int c)
{
	char why[160];
	uint64_t v;
	size_t k = 0;
	while (counts[k].c != c)
		k++;
	if (fab_parse_uint(optarg, &v, why, sizeof why) || v < counts[k].min || v > counts[k].max) {
		if (counts[k].name)
			fprintf(stderr, "fabscope: %s %s: out of range or not a number\n", counts[k].name, optarg);
		else
			fprintf(stderr, "fabscope: -%c %s: out of range or not a number\n", c, optarg);
		return FAB_EXIT_USAGE;
	}
	if (c == 'L')
		pc->local = (uint32_t)v;
	else if (c == 'f')
		pc->o.factor = (uint32_t)v;
	else if (c == 'n')
		pc->o.iters = (uint32_t)v;
	else if (c == 'w')
		pc->o.warmup = (uint32_t)v;
	else if (c == 'C')
		pc->o.channels = (uint32_t)v;
	else if (c == 'K')
		pc->pp.conns = (uint32_t)v;
	else
		pc->o.check = v == 1;
	pc->set_n |= c == 'n';
	pc->set_w |= c == 'w';
	return -1;
}

/* who and where, without a launcher: --rank, --size, --master; --bind */
static int opt_where(struct probe_cli *pc, int c)
{
	char why[160];
	uint64_t v;
	if (c == 'B') {
		if (fab_probe_resolve_bind(optarg, &pc->pp.bind)) {
			fprintf(stderr,
				"fabscope: --bind: \"%s\" is neither an IP address nor an interface "
				"with one\n",
				optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	}
	if (c == 'M') {
		char *colon = strrchr(optarg, ':');
		if (!colon || colon == optarg || atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535) {
			fprintf(stderr, "fabscope: --master: expected HOST:PORT, got \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		snprintf(pc->master, sizeof pc->master, "%.*s", (int)(colon - optarg), optarg);
		pc->master_port = (uint16_t)atoi(colon + 1);
		return -1;
	}
	if (fab_parse_uint(optarg, &v, why, sizeof why) || v > 1000000 || (c == 'N' && !v)) {
		fprintf(stderr, "fabscope: --%s %s: out of range or not a number\n", c == 'r' ? "rank" : "size",
			optarg);
		return FAB_EXIT_USAGE;
	}
	if (c == 'r')
		pc->rank = (int64_t)v;
	else
		pc->wsize = (int64_t)v;
	return -1;
}

/* seconds: --timeout, --pair-timeout; bw's -t and -i */
static int opt_seconds(struct probe_cli *pc, int c)
{
	if (c == 'T' || c == 'Y') {
		if (cli_parse_seconds(optarg, c == 'T' ? &pc->pp.timeout_s : &pc->o.pair_timeout_s)) {
			fprintf(stderr, "fabscope: --%s %s: expected seconds (more than 0, at most 86400)\n",
				c == 'T' ? "timeout" : "pair-timeout", optarg);
			return FAB_EXIT_USAGE;
		}
		pc->set_pt |= c == 'Y';
		return -1;
	}
	/* iperf3's: a run of -t seconds, a report every -i (0: none) */
	if (c == 'i' && !strcmp(optarg, "0")) {
		pc->o.interval_s = 0;
	} else if (cli_parse_seconds(optarg, c == 't' ? &pc->o.duration_s : &pc->o.interval_s)) {
		fprintf(stderr, "fabscope: -%c %s: expected seconds (more than 0, at most 86400%s)\n", c, optarg,
			c == 'i' ? ", or 0: no interval reports" : "");
		return FAB_EXIT_USAGE;
	}
	pc->set_i |= c == 'i';
	return -1;
}

/* -b, -e: the sizes */
static int opt_bytes(struct probe_cli *pc, int c)
{
	char why[160];
	pc->set_b |= c == 'b';
	pc->set_e |= c == 'e';
	if (fab_parse_bytes(optarg, c == 'b' ? &pc->o.minb : &pc->o.maxb, why, sizeof why)) {
		fprintf(stderr, "fabscope: -%c: %s\n", c, why);
		return FAB_EXIT_USAGE;
	}
	return -1;
}

/* what is tested: --test; the collective (--op; -o: nccl-tests' reduction,
 * sum only, or a collective's name) and its algorithm (--algo; -a 0-3 is
 * nccl-tests' averaging); the matrix's --retest */
static int opt_test(struct probe_cli *pc, int c)
{
	switch (c) {
	case 'X':
		if (!strcmp(optarg, "latency"))
			pc->o.test = FAB_PROBE_LATENCY;
		else if (!strcmp(optarg, "bw"))
			pc->o.test = FAB_PROBE_BW;
		else if (!strcmp(optarg, "matrix"))
			pc->o.test = PROBE_MATRIX;
		else if (!strcmp(optarg, "coll"))
			pc->o.test = PROBE_COLL;
		else {
			fprintf(stderr, "fabscope: --test: expected coll, latency, bw or matrix, got \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'O':
		if ((pc->o.op = fab_coll_op_parse(optarg)) < 0) {
			fprintf(stderr, "fabscope: --op: unknown operation \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'o':
		if (!strcmp(optarg, "sum"))
			return -1;
		if (!strcmp(optarg, "prod") || !strcmp(optarg, "min") || !strcmp(optarg, "max") ||
		    !strcmp(optarg, "avg") || !strcmp(optarg, "mulsum") || !strcmp(optarg, "all")) {
			fprintf(stderr, "fabscope: -o %s: the probe reduces with sum only\n", optarg);
			return FAB_EXIT_USAGE;
		}
		if ((pc->o.op = fab_coll_op_parse(optarg)) < 0) {
			fprintf(stderr, "fabscope: -o: unknown operation \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'a':
		/* a number: nccl-tests' -a (the reported time is already the
		 * mean over ranks); a name: the algorithm */
		if (optarg[0] >= '0' && optarg[0] <= '9') {
			if (optarg[0] <= '3' && !optarg[1])
				return -1;
			fprintf(stderr,
				"fabscope: -a %s: a number is nccl-tests' averaging, 0 to 3; an algorithm is a name: "
				"ring, tree, rhd or direct\n",
				optarg);
			return FAB_EXIT_USAGE;
		}
		pc->set_algo = true;
		pc->o.algo = fab_coll_algo_parse(optarg);
		if (pc->o.algo < 0 || pc->o.algo == FAB_ALGO_AUTO) {
			fprintf(stderr, "fabscope: --algo: expected ring, tree, rhd or direct, got \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	}
	/* 'R' */
	char *end;
	pc->o.retest = strtod(optarg, &end);
	if (end == optarg || *end || !(pc->o.retest >= 0 && pc->o.retest <= 1)) {
		fprintf(stderr, "fabscope: --retest %s: expected a fraction of the median, 0 to 1\n", optarg);
		return FAB_EXIT_USAGE;
	}
	return -1;
}

/* the rest: what rank 0 writes (--json, --out), and the switches */
static int opt_plain(struct probe_cli *pc, int c)
{
	if (c == 'W')
		pc->o.json = optarg;
	else if (c == 'J')
		pc->o.tool_json = optarg;
	else if (c == 'U')
		pc->o.outdir = optarg;
	else if (c == 'D')
		pc->bidir = true;
	else if (c == 'P')
		pc->pp.busy_poll = true;
	else /* 'S' */
		pc->o.serial = true;
	return -1;
}

static const struct {
	const char *opts; /* getopt's values (the long options' in cmd_probe) */
	int (*handle)(struct probe_cli *pc, int c);
} groups[] = {
	{"LfnwCKc", opt_count}, {"rNMB", opt_where}, {"TYti", opt_seconds},
	{"be", opt_bytes},      {"XOoaR", opt_test}, {"WJUDPS", opt_plain},
};

/* one option; -1: go on, else the exit status (help, or a usage error) */
static int probe_opt(struct probe_cli *pc, int c)
{
	for (size_t k = 0; c > 0 && k < FAB_ARRAY_LEN(groups); k++)
		if (strchr(groups[k].opts, c))
			return groups[k].handle(pc, c);
	if (c == 'h') {
		fputs(usage_probe, stdout);
		return FAB_EXIT_OK;
	}
	fputs(usage_probe, stderr);
	return FAB_EXIT_USAGE;
}

/* after parsing: the options that go together, and per-test defaults */
static int probe_check(struct probe_cli *pc)
{
	char why[160];
	if (pc->bidir && pc->o.test != FAB_PROBE_BW) {
		fprintf(stderr, "fabscope: --bidir: only for --test bw\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->bidir)
		pc->o.test = FAB_PROBE_BW_BIDIR;
	if ((pc->o.duration_s > 0 || pc->set_i) && pc->o.test != FAB_PROBE_BW && pc->o.test != FAB_PROBE_BW_BIDIR) {
		fprintf(stderr,
			"fabscope: -t and -i (a run of so many seconds, reported every interval): only for "
			"--test bw%s\n",
			pc->o.test == PROBE_COLL
				? " (nccl-tests' -t, threads per process: the probe runs one rank a process)"
				: "");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.tool_json && pc->o.test != PROBE_COLL && pc->o.test != FAB_PROBE_BW &&
	    pc->o.test != FAB_PROBE_BW_BIDIR) {
		fprintf(stderr,
			"fabscope: -J: nccl-tests' JSON for --test coll, iperf3's for --test bw; --json FILE "
			"writes the result document of every test\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.tool_json && pc->o.json && !strcmp(pc->o.tool_json, pc->o.json)) {
		fprintf(stderr, "fabscope: -J %s and --json %s: two documents, one file: name two\n", pc->o.tool_json,
			pc->o.json);
		return FAB_EXIT_USAGE;
	}
	if (pc->set_i && !(pc->o.duration_s > 0)) {
		fprintf(stderr, "fabscope: -i: reports intervals of a time-based run: give -t SECONDS too\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.duration_s > 0 && !pc->set_i)
		pc->o.interval_s = 1; /* iperf3's default */
	if ((pc->o.serial || pc->set_pt) && pc->o.test != PROBE_MATRIX) {
		fprintf(stderr, "fabscope: --serial and --pair-timeout: only for --test matrix\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.test != PROBE_COLL) {
		/* perftest-like defaults: small messages many times for latency,
		 * large ones for bandwidth */
		fab_bytes size = pc->o.test == FAB_PROBE_LATENCY ? 8 : pc->o.test == PROBE_MATRIX ? 4 << 20 : 1 << 20;
		if (!pc->set_b)
			pc->o.minb = pc->set_e ? FAB_MIN(size, pc->o.maxb) : size;
		if (!pc->set_e)
			pc->o.maxb = FAB_MAX(size, pc->o.minb);
		if (!pc->set_n)
			pc->o.iters = pc->o.test == FAB_PROBE_LATENCY ? 1000 : pc->o.test == PROBE_MATRIX ? 20 : 100;
		if (!pc->set_w)
			pc->o.warmup = pc->o.test == FAB_PROBE_LATENCY ? 100 : 10;
		if (pc->o.maxb > (fab_bytes)1 << 30) {
			fprintf(stderr, "fabscope: -e: at most 1 GiB per message in the point-to-point tests\n");
			return FAB_EXIT_USAGE;
		}
	}
	if (!pc->o.minb || pc->o.minb > pc->o.maxb) {
		fprintf(stderr, "fabscope: -b must be at least 1 and at most -e\n");
		return FAB_EXIT_USAGE;
	}
	if (!pc->set_algo && pc->o.op == FAB_OP_ALLTOALL)
		pc->o.algo = FAB_ALGO_DIRECT; /* the one AllToAll there is */
	if (!fab_coll_supported(pc->o.op, pc->o.algo, pc->local ? pc->local : 2, 0, why, sizeof why)) {
		fprintf(stderr, "fabscope: --algo: %s\n", why);
		return FAB_EXIT_USAGE;
	}
	if (pc->o.test != PROBE_COLL && pc->local == 1) {
		fprintf(stderr, "fabscope: --test %s: needs at least 2 ranks\n",
			pc->o.test == PROBE_MATRIX                ? "matrix"
				: pc->o.test == FAB_PROBE_LATENCY ? "latency"
								  : "bw");
		return FAB_EXIT_USAGE;
	}
	if (pc->local && pc->rank >= 0) {
		fprintf(stderr, "fabscope: probe: --local starts its own ranks: no --rank/--size with it\n");
		return FAB_EXIT_USAGE;
	}
	return -1;
}

/* the ranks: started here (--local), or this one from a launcher */
static int probe_launch(struct probe_cli *pc)
{
	if (pc->local) {
		pc->o.launcher = "local";
		return cli_probe_local(&pc->pp, &pc->o, pc->local);
	}
	const char *mp = getenv("MASTER_PORT");
	char *end;
	if (mp && !pc->master_port) {
		errno = 0;
		unsigned long v = strtoul(mp, &end, 10);
		if (errno || end == mp || *end || v < 1 || v > 65535) {
			fprintf(stderr, "fabscope: probe: MASTER_PORT: expected a port from 1 to 65535, got \"%s\"\n",
				mp);
			return FAB_EXIT_USAGE;
		}
	}
	char bad[400];
	pc->pp.master_given = pc->master_port != 0;
	pc->o.launcher = fab_probe_env(&pc->pp, bad, sizeof bad);
	if (!pc->o.launcher && bad[0]) {
		fprintf(stderr, "fabscope: probe: %s\n", bad);
		return FAB_EXIT_USAGE;
	}
	if (pc->master_port) { /* the flag wins over MASTER_ADDR/MASTER_PORT */
		snprintf(pc->pp.master, sizeof pc->pp.master, "%s", pc->master);
		pc->pp.master_port = pc->master_port;
	}
	if ((pc->rank >= 0) != (pc->wsize >= 0)) {
		fprintf(stderr, "fabscope: probe: --rank and --size go together\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->rank >= 0) {
		pc->o.launcher = "flags";
		pc->pp.rank = (uint32_t)pc->rank;
		pc->pp.nranks = (uint32_t)pc->wsize;
		if (pc->pp.rank >= pc->pp.nranks || !pc->pp.master_port) {
			fprintf(stderr,
				"fabscope: probe: --rank must be under --size, and --master HOST:PORT is needed\n");
			return FAB_EXIT_USAGE;
		}
	}
	if (!pc->o.launcher || !pc->pp.nranks || pc->pp.rank >= pc->pp.nranks || !pc->pp.master_port) {
		fprintf(stderr,
			"fabscope: probe: no rank and size from a launcher (mpirun, srun, "
			"RANK/WORLD_SIZE) with MASTER_ADDR/MASTER_PORT or --master; or use --local N\n");
		return FAB_EXIT_USAGE;
	}
	/* outside --local, a token every rank of the job shares, and a master
	 * that resolves */
	char why[320];
	const char *source;
	struct fab_ip ip;
	if (fab_probe_env_token(&pc->pp, &source, why, sizeof why)) {
		fprintf(stderr, "fabscope: probe: %s\n", why);
		return FAB_EXIT_USAGE;
	}
	if (fab_probe_resolve_host(pc->pp.master, pc->pp.bind.family, &ip, why, sizeof why)) {
		fprintf(stderr, "fabscope: probe: the master address: %s\n", why);
		return FAB_EXIT_USAGE;
	}
	return cli_probe_rank(&pc->pp, &pc->o);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{"local", required_argument, NULL, 'L'},
		{"master", required_argument, NULL, 'M'},
		{"op", required_argument, NULL, 'O'},
		{"algo", required_argument, NULL, 'a'},
		{"minbytes", required_argument, NULL, 'b'},
		{"maxbytes", required_argument, NULL, 'e'},
		{"stepfactor", required_argument, NULL, 'f'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup_iters", required_argument, NULL, 'w'},
		{"check", required_argument, NULL, 'c'},
		{"channels", required_argument, NULL, 'C'},
		{"conns", required_argument, NULL, 'K'},
		{"timeout", required_argument, NULL, 'T'},
		{"test", required_argument, NULL, 'X'},
		{"json", required_argument, NULL, 'W'},
		{"output_file", required_argument, NULL, 'J'},
		{"out", required_argument, NULL, 'U'},
		{"bind", required_argument, NULL, 'B'},
		{"bidir", no_argument, NULL, 'D'},
		{"busy-poll", no_argument, NULL, 'P'},
		{"serial", no_argument, NULL, 'S'},
		{"pair-timeout", required_argument, NULL, 'Y'},
		{"retest", required_argument, NULL, 'R'},
		{"time", required_argument, NULL, 't'},
		{"interval", required_argument, NULL, 'i'},
		{"rank", required_argument, NULL, 'r'},
		{"size", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct probe_cli pc = {
		.o = {.op = FAB_OP_ALLREDUCE,
		      .algo = FAB_ALGO_RING,
		      .minb = 1024,
		      .maxb = 1 << 20,
		      .factor = 4,
		      .iters = 5,
		      .warmup = 1,
		      .channels = 2,
		      .test = PROBE_COLL,
		      .check = true,
		      .pair_timeout_s = 10,
		      .retest = 0.5},
		.pp = {.rendezvous_fd = -1, .timeout_s = 30, .conns = 2},
		.rank = -1,
		.wsize = -1,
	};
	snprintf(pc.pp.master, sizeof pc.pp.master, "127.0.0.1");
	int c, rc;
	while ((c = getopt_long(argc, argv, "a:b:c:e:f:i:n:w:o:t:T:J:h", opts, NULL)) != -1)
		if ((rc = probe_opt(&pc, c)) >= 0)
			return rc;
	if (optind < argc) {
		fprintf(stderr, "fabscope: probe: unexpected argument \"%s\"\n", argv[optind]);
		return FAB_EXIT_USAGE;
	}
	if ((rc = probe_check(&pc)) >= 0)
		return rc;
	/* argv: main's from its second word (main.c), so argv[-1] is the
	 * program: nccl-tests' "args" list the whole command line */
	pc.o.argc = argc + 1;
	pc.o.argv = argv - 1;
	return probe_launch(&pc);
}
