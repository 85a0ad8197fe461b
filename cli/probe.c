/*
 * probe.c - `fabscope probe`: the real-network tests of src/probe/, their
 * tables (nccl-tests and perftest shapes), the result document, and the
 * local launcher (--local N: one process per rank on this machine).
 *
 * Rank 0 prints; its table also goes into a memory stream so that --out
 * can write it beside the result document.  On a failure rank 0 still
 * writes the document, with what was measured and the error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	"  -c 0|1                coll: check the results in one extra run per size (default 1)\n"
	"  --channels N          coll: the schedule's channels (default 2)\n"
	"  --bidir               bw: both directions at once (the sum is reported)\n"
	"  -t S, -i S            bw: run S seconds (as iperf3 -t) and print an interval line\n"
	"                        every -i seconds (default 1; 0: none)\n"
	"  --busy-poll           latency, bw: spin on the sockets instead of sleeping in poll\n"
	"  --serial              matrix: one pair at a time instead of rounds of disjoint pairs\n"
	"  --pair-timeout S      matrix: a pair not done in S seconds is recorded failed (default 10)\n"
	"  --retest F            matrix: re-test alone the pairs under F x the median (default 0.5; 0: none)\n"
	"  --json FILE           rank 0 writes the result document (what fabscope diagnose reads)\n"
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

enum { T_COLL = -1, T_MATRIX = 100 };

struct probe_opts {
	int op, algo;
	fab_bytes minb, maxb;
	uint32_t factor, iters, warmup, channels;
	int test; /* T_COLL, T_MATRIX, else enum fab_probe_test */
	bool check, serial;
	double pair_timeout_s, retest;
	double duration_s, interval_s; /* bw: -t, -i (iperf3's) */
	const char *json, *outdir, *launcher;
	uint32_t local_ranks; /* ranks on this machine (--local N), 0: from the launcher */
};

/* rank 0's output: the library writes the table into a memory stream,
 * from which each new part goes to stdout at once (and all of it to --out);
 * the result document */
struct report {
	FILE *mem;
	char *text;
	size_t len, shown;
	json_t *doc;
	struct fab_probe_doc_info info;
};

/* what the library wrote since the last call, to stdout */
static void show(struct report *r)
{
	if (!r->mem)
		return;
	fflush(r->mem);
	fwrite(r->text + r->shown, 1, r->len - r->shown, stdout);
	fflush(stdout);
	r->shown = r->len;
}

static int w_json(FILE *f, void *ctx, int arg)
{
	(void)arg;
	struct report *r = ctx;
	return cli_json_write(r->doc, f, JSON_INDENT(1) | JSON_REAL_PRECISION(9)) || fputc('\n', f) == EOF;
}

static int w_text(FILE *f, void *ctx, int arg)
{
	(void)arg;
	struct report *r = ctx;
	return fwrite(r->text, 1, r->len, f) != r->len;
}

/* rank 0: the document (and table) into the files asked for, each whole
 * or not at all; the error, if any, goes into the document */
static int finish_report(struct report *r, const struct probe_opts *o, const char *error)
{
	int rc = FAB_EXIT_OK;
	show(r);
	if (r->mem) {
		fclose(r->mem);
		r->mem = NULL;
	}
	if (r->doc && error)
		json_object_set_new(r->doc, "error", json_string(error));
	if (r->doc && o->json) {
		struct out_spec spec = {"", w_json, 0};
		rc = cli_write_out_file(o->json, &spec, r);
	}
	if (r->doc && o->outdir && !rc) {
		struct out_spec specs[] = {{"result.json", w_json, 0}, {"probe.txt", w_text, 0}};
		rc = cli_write_out_dir(o->outdir, specs, FAB_ARRAY_LEN(specs), r);
	}
	free(r->text);
	json_decref(r->doc);
	memset(r, 0, sizeof *r);
	return rc;
}

/* ---- the all-pairs matrix ---- */

/* summary, the matrix itself (up to 16 ranks), failures and re-tests, the
 * slowest ranks by median bandwidth to and from the others */
static int probe_matrix(struct fab_probe *pr, const struct fab_probe_params *pp, const struct probe_opts *o,
			struct report *r)
{
	(void)pp;
	struct fab_err err = {0};
	struct fab_probe_matrix_opts mo = {(size_t)o->maxb, o->iters, o->pair_timeout_s, o->retest, o->serial};
	struct fab_probe_matrix_res m;
	if (fab_probe_matrix(pr, &mo, &m, &err)) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return FAB_EXIT_IO;
	}
	if (pp->rank == 0) {
		fab_probe_matrix_out(r->mem, r->doc, &r->info, &mo, &m);
		show(r);
	}
	fab_probe_matrix_free(&m);
	return FAB_EXIT_OK;
}

/* ---- latency and bandwidth ---- */

/* a time-based bandwidth run's interval, as it ends */
struct interval_ctx {
	struct report *r;
	enum fab_probe_test kind;
};

static void interval(void *vctx, uint32_t peer, double from_s, double to_s, double bytes)
{
	struct interval_ctx *ic = vctx;
	fab_probe_bw_interval(ic->r->mem, ic->r->doc, peer, from_s, to_s, bytes);
	show(ic->r);
}

static int probe_p2p(struct fab_probe *pr, const struct fab_probe_params *pp, const struct probe_opts *o,
		     struct report *r)
{
	struct fab_err err = {0};
	uint32_t peers = pp->nranks - 1;
	bool lat = o->test == FAB_PROBE_LATENCY;
	double *out = fab_xcalloc((size_t)peers * (lat ? o->iters : 3), sizeof *out);
	if (pp->rank == 0) {
		fab_probe_p2p_begin(r->mem, r->doc, &r->info, (enum fab_probe_test)o->test);
		show(r);
	}
	struct interval_ctx ic = {r, (enum fab_probe_test)o->test};
	struct fab_probe_p2p_run run = {o->duration_s, o->interval_s,
					pp->rank == 0 && o->interval_s > 0 ? interval : NULL, &ic};
	int rc = FAB_EXIT_OK;
	for (fab_bytes b = o->minb; b <= o->maxb && !rc; b *= o->factor) {
		if (fab_probe_p2p(pr, (enum fab_probe_test)o->test, (size_t)b, o->iters, o->warmup, &run, out, &err)) {
			fprintf(stderr, "fabscope: %s\n", err.msg);
			rc = FAB_EXIT_IO;
			if (r->doc)
				json_object_set_new(r->doc, "error", json_string(err.msg));
			break;
		}
		for (uint32_t p = 1; pp->rank == 0 && p <= peers; p++) {
			char name[64];
			fab_probe_rank_name(pr, p, name, sizeof name);
			fab_probe_p2p_row(r->mem, r->doc, (enum fab_probe_test)o->test, p, name, b, o->iters,
					  out + (size_t)(p - 1) * (lat ? o->iters : 3));
			show(r);
		}
		if (b > o->maxb / o->factor)
			break;
	}
	free(out);
	return rc;
}

/* ---- collectives ---- */

static int probe_coll(struct fab_probe *pr, const struct fab_probe_params *pp, const struct probe_opts *o,
		      struct report *r)
{
	struct fab_err err = {0};
	int rc = FAB_EXIT_OK;
	if (pp->rank == 0) {
		struct fab_coll_args a = {.op = o->op, .algo = o->algo, .nranks = pp->nranks, .channels = o->channels};
		struct fab_probe_coll_sweep sw = {o->minb, o->maxb, o->factor, o->warmup, o->iters, o->check};
		fab_probe_coll_begin(r->mem, r->doc, &r->info, &a, &sw);
		show(r);
	}
	for (fab_bytes b = o->minb; b <= o->maxb && !rc; b *= o->factor) {
		struct fab_coll_args a = {.op = o->op,
					  .algo = o->algo,
					  .nranks = pp->nranks,
					  .count = b / 4,
					  .elem_bytes = 4,
					  .root = 0,
					  .channels = o->channels,
					  .chunk_bytes = 512 * 1024};
		uint64_t size, inb, outb;
		fab_coll_sizes(a.op, a.count, 4, a.nranks, &size, &inb, &outb);
		if (!outb) {
			if (b > o->maxb / o->factor)
				break;
			continue;
		}
		double t[2] = {0, 0};
		uint64_t wrong = 0;
		/* warm-up, the timed runs (out of place, then again for the in-place
		 * columns), then (nccl-tests' -c) one checked run */
		uint32_t runs = o->warmup + 2 * o->iters + (o->check ? 1 : 0);
		for (uint32_t it = 0; it < runs && !rc; it++) {
			struct fab_probe_result res;
			bool check = o->check && it == runs - 1;
			if (fab_probe_coll(pr, &a, check, &res, &err)) {
				fprintf(stderr, "fabscope: %s\n", err.msg);
				rc = FAB_EXIT_IO;
				if (r->doc)
					json_object_set_new(r->doc, "error", json_string(err.msg));
				break;
			}
			wrong += res.wrong;
			if (it >= o->warmup && it < o->warmup + 2 * o->iters)
				t[(it - o->warmup) / o->iters] += res.time_s;
		}
		if (!rc && pp->rank == 0) {
			double mean[2] = {t[0] / o->iters, t[1] / o->iters};
			fab_probe_coll_row(r->mem, r->doc, &a, size, mean, o->check, wrong);
			show(r);
			if (wrong)
				rc = FAB_EXIT_CHECKS;
		}
		if (b > o->maxb / o->factor)
			break;
	}
	if (pp->rank == 0) {
		if (fab_probe_coll_end(r->mem, r->doc, o->op) && !rc)
			rc = FAB_EXIT_CHECKS; /* nccl-tests' checks failed: NCCL_TESTS_MIN_BW */
		show(r);
	}
	return rc;
}

static void warn_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "fabscope: %s\n", msg);
}

/* ranks of the job on this machine: --local N, else the launcher's word */
static uint32_t ranks_here(const struct probe_opts *o)
{
	static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "LOCAL_WORLD_SIZE",
				     "SLURM_NTASKS_PER_NODE"};
	if (o->local_ranks)
		return o->local_ranks;
	for (size_t i = 0; i < FAB_ARRAY_LEN(vars); i++) {
		const char *v = getenv(vars[i]);
		unsigned long n = v ? strtoul(v, NULL, 10) : 0;
		if (n > 0 && n < 100000)
			return (uint32_t)n;
	}
	return 1;
}

/* bytes one rank holds for a message of `b` bytes: a collective's input,
 * output and about twice the larger of them in flight (scratch, messages
 * that wait); a point-to-point test's send and receive buffers */
static uint64_t rank_bytes(const struct probe_opts *o, uint32_t n, fab_bytes b)
{
	if (o->test != T_COLL)
		return 2 * b;
	uint64_t size, inb, outb;
	fab_coll_sizes(o->op, b / 4, 4, n, &size, &inb, &outb);
	return inb + outb + 2 * FAB_MAX(inb, outb);
}

/* Sizes that do not fit in memory are capped, as nccl-tests does: every
 * rank says the largest message its share of this machine's available
 * memory (half of it, split among the ranks here) holds, and the job takes
 * the least.  Returns -1 on a network failure. */
static int cap_sizes(struct fab_probe *pr, const struct fab_probe_params *pp, struct probe_opts *o)
{
	uint64_t avail = fab_mem_available(), budget = avail / 2 / ranks_here(o);
	fab_bytes fit = 0, b;
	for (b = o->minb; b <= o->maxb; b *= o->factor) {
		if (avail && rank_bytes(o, pp->nranks, b) > budget)
			break;
		fit = b;
		if (b > o->maxb / o->factor)
			break;
	}
	if (!fit) /* not even -b: the largest KiB multiple that fits */
		for (fit = o->minb & ~(fab_bytes)1023; fit > 1024 && rank_bytes(o, pp->nranks, fit) > budget;)
			fit /= 2;
	uint32_t mine = (uint32_t)FAB_MIN((fit + 1023) / 1024, UINT32_MAX), agreed;
	struct fab_err err = {0};
	if (fab_probe_agree_min(pr, mine, &agreed, &err)) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return -1;
	}
	fab_bytes cap = (fab_bytes)agreed * 1024, last = 0, natural = 0;
	for (b = o->minb; b <= o->maxb; b *= o->factor) {
		natural = b; /* the sweep's last size, uncapped */
		if (b <= cap)
			last = b;
		if (b > o->maxb / o->factor)
			break;
	}
	if (last == natural)
		return 0; /* every size fits */
	char want[32], to[32];
	fab_fmt_bytes(o->maxb, want, sizeof want);
	if (!last)
		o->minb = o->maxb = FAB_MAX(cap, 1024);
	else
		o->maxb = last;
	if (pp->rank == 0)
		fprintf(stderr,
			"fabscope: probe: -e %s does not fit in memory here (%.1f GiB available to %u rank%s on this "
			"machine): sizes capped at %s, as nccl-tests does\n",
			want, (double)avail / (1 << 30), ranks_here(o), ranks_here(o) == 1 ? "" : "s",
			fab_fmt_bytes(o->maxb, to, sizeof to));
	return 0;
}

static int probe_rank(struct fab_probe_params *pp, const struct probe_opts *oin)
{
	struct probe_opts ocap = *oin, *o = &ocap;
	pp->warn = warn_stderr;
	if (o->test != T_COLL && pp->nranks < 2) {
		fprintf(stderr, "fabscope: probe: the point-to-point and matrix tests need at least 2 ranks\n");
		return FAB_EXIT_USAGE;
	}
	struct fab_err err = {0};
	struct fab_probe *pr = fab_probe_connect(pp, &err);
	if (!pr) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return FAB_EXIT_IO;
	}
	if (cap_sizes(pr, pp, o)) {
		fab_probe_close(pr);
		return FAB_EXIT_IO;
	}
	struct report r = {0};
	if (pp->rank == 0) {
		static const char *tests[] = {"latency", "bw", "bw"};
		r.info = (struct fab_probe_doc_info){
			.test = o->test == T_COLL     ? "coll"
				: o->test == T_MATRIX ? "matrix"
						      : tests[o->test],
			.generator = fab_version_string(),
			.launcher = o->launcher,
			.nranks = pp->nranks,
			.conns = pp->conns,
			.busy_poll = pp->busy_poll,
		};
		r.doc = fab_probe_doc_new(pr, &r.info);
		r.mem = open_memstream(&r.text, &r.len);
		if (!r.mem) {
			fprintf(stderr, "fabscope: probe: %s\n", strerror(errno));
			json_decref(r.doc);
			fab_probe_close(pr);
			return FAB_EXIT_IO;
		}
	}
	int rc = o->test == T_COLL    ? probe_coll(pr, pp, o, &r)
		: o->test == T_MATRIX ? probe_matrix(pr, pp, o, &r)
				      : probe_p2p(pr, pp, o, &r);
	fab_probe_close(pr);
	if (pp->rank == 0) {
		json_t *e = json_object_get(r.doc, "error");
		int wrc = finish_report(&r, o, e ? NULL : rc == FAB_EXIT_IO ? "the test failed" : NULL);
		if (!rc)
			rc = wrc;
	}
	return rc;
}

/* the local launcher: a rendezvous socket, then one process per rank; one
 * rank failing stops the others */
/* after a rank fails, the others have this long to leave before SIGKILL */
#define LOCAL_GRACE_S 3.0

static int launch_local(struct fab_probe_params *pp, struct probe_opts *o, uint32_t local)
{
	struct fab_ip at = pp->bind;
	uint16_t port = 0;
	char ip[64];
	if (!at.family) { /* loopback */
		at.family = 4;
		at.a[0] = 127;
		at.a[3] = 1;
	}
	int lfd = fab_probe_listen(&at, &port);
	if (lfd < 0) {
		fprintf(stderr, "fabscope: probe: cannot listen on %s: %s\n", fab_ip_str(&at, ip, sizeof ip),
			strerror(errno));
		return FAB_EXIT_IO;
	}
	fab_ip_str(&at, ip, sizeof ip);
	snprintf(pp->master, sizeof pp->master, at.family == 6 ? "[%s]" : "%s", ip);
	pp->nranks = local;
	o->local_ranks = local;
	pp->master_port = port;
	/* a fresh random token: only this job's processes know it */
	if (getrandom(pp->token, sizeof pp->token, 0) != (ssize_t)sizeof pp->token) {
		fprintf(stderr, "fabscope: probe: no random bytes for the job token: %s\n", strerror(errno));
		close(lfd);
		return FAB_EXIT_IO;
	}
	pp->token[0] |= 1; /* never all zero */
	fflush(stdout);
	pid_t *pid = fab_xcalloc(local, sizeof *pid);
	for (uint32_t r = 0; r < local; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			pp->rank = r;
			if (r != 0) {
				close(lfd);
				pp->rendezvous_fd = -1;
			} else {
				pp->rendezvous_fd = lfd;
			}
			int rc = probe_rank(pp, o);
			fflush(stdout);
			_exit(rc);
		}
		if (pid[r] < 0) {
			fprintf(stderr, "fabscope: probe: fork: %s\n", strerror(errno));
			for (uint32_t k = 0; k < r; k++)
				kill(pid[k], SIGTERM);
			break;
		}
	}
	close(lfd);
	/* one rank failing stops the others: SIGTERM, then SIGKILL for those
	 * that have not gone after a grace period (a stopped process never acts
	 * on SIGTERM) */
	int rc = FAB_EXIT_OK;
	double kill_at = 0;
	for (uint32_t left = local; left > 0;) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);
		if (w < 0 && errno != EINTR)
			break;
		if (w <= 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
			if (kill_at > 0 && t >= kill_at) {
				for (uint32_t k = 0; k < local; k++)
					if (pid[k] > 0)
						kill(pid[k], SIGKILL);
				kill_at = -1;
			} else if (rc && kill_at == 0) {
				kill_at = t + LOCAL_GRACE_S;
			}
			usleep(20000);
			continue;
		}
		left--;
		for (uint32_t k = 0; k < local; k++)
			if (pid[k] == w)
				pid[k] = 0;
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : FAB_EXIT_IO;
		if (code && !rc) {
			rc = code;
			/* rank 0 may still write the partial document: give it a moment */
			if (w != pid[0] && pid[0] > 0 && code == FAB_EXIT_IO) {
				for (int i = 0; i < 20; i++) {
					if (waitpid(pid[0], &st, WNOHANG) == pid[0]) {
						pid[0] = 0;
						left--;
						break;
					}
					usleep(50000);
				}
			}
			for (uint32_t k = 0; k < local; k++)
				if (pid[k] > 0) {
					kill(pid[k], SIGTERM);
					kill(pid[k], SIGCONT);
				}
		}
	}
	free(pid);
	return rc;
}

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

/* one option; -1: go on, else the exit status (help, or a usage error) */
static int probe_opt(struct probe_cli *pc, int c)
{
	char why[160];
	uint64_t v;
	switch (c) {
	case 'L':
	case 'f':
	case 'n':
	case 'w':
	case 'C':
	case 'K':
	case 'c':
		if (fab_parse_uint(optarg, &v, why, sizeof why) || v > 100000 ||
		    ((c == 'L' || c == 'f' || c == 'n' || c == 'C' || c == 'K') && !v) || (c == 'L' && v > 512) ||
		    (c == 'C' && v > 64) || (c == 'f' && v < 2) || (c == 'K' && v > FAB_PROBE_MAX_CONNS) ||
		    (c == 'c' && v > 1)) {
			const char *name = c == 'L' ? "--local" : c == 'C' ? "--channels" : c == 'K' ? "--conns" : NULL;
			if (name)
				fprintf(stderr, "fabscope: %s %s: out of range or not a number\n", name, optarg);
			else
				fprintf(stderr, "fabscope: -%c %s: out of range or not a number\n", c, optarg);
			return FAB_EXIT_USAGE;
		}
		pc->set_n |= c == 'n';
		pc->set_w |= c == 'w';
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
		return -1;
	case 'r':
	case 'N':
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
	case 'T':
	case 'Y':
		if (cli_parse_seconds(optarg, c == 'T' ? &pc->pp.timeout_s : &pc->o.pair_timeout_s)) {
			fprintf(stderr, "fabscope: --%s %s: expected seconds (more than 0, at most 86400)\n",
				c == 'T' ? "timeout" : "pair-timeout", optarg);
			return FAB_EXIT_USAGE;
		}
		pc->set_pt |= c == 'Y';
		return -1;
	case 't':
	case 'i':
		/* iperf3's: a run of -t seconds, a report every -i (0: none) */
		if (c == 'i' && !strcmp(optarg, "0")) {
			pc->o.interval_s = 0;
		} else if (cli_parse_seconds(optarg, c == 't' ? &pc->o.duration_s : &pc->o.interval_s)) {
			fprintf(stderr, "fabscope: -%c %s: expected seconds (more than 0, at most 86400%s)\n", c,
				optarg, c == 'i' ? ", or 0: no interval reports" : "");
			return FAB_EXIT_USAGE;
		}
		pc->set_i |= c == 'i';
		return -1;
	case 'R': {
		char *end;
		pc->o.retest = strtod(optarg, &end);
		if (end == optarg || *end || !(pc->o.retest >= 0 && pc->o.retest <= 1)) {
			fprintf(stderr, "fabscope: --retest %s: expected a fraction of the median, 0 to 1\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	}
	case 'b':
	case 'e':
		pc->set_b |= c == 'b';
		pc->set_e |= c == 'e';
		if (fab_parse_bytes(optarg, c == 'b' ? &pc->o.minb : &pc->o.maxb, why, sizeof why)) {
			fprintf(stderr, "fabscope: -%c: %s\n", c, why);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'J':
		pc->o.json = optarg;
		return -1;
	case 'U':
		pc->o.outdir = optarg;
		return -1;
	case 'o': /* nccl-tests' reduction (sum only), or a collective's name */
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
	case 'B':
		if (fab_probe_resolve_bind(optarg, &pc->pp.bind)) {
			fprintf(stderr,
				"fabscope: --bind: \"%s\" is neither an IP address nor an interface "
				"with one\n",
				optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'D':
		pc->bidir = true;
		return -1;
	case 'P':
		pc->pp.busy_poll = true;
		return -1;
	case 'S':
		pc->o.serial = true;
		return -1;
	case 'X':
		if (!strcmp(optarg, "latency"))
			pc->o.test = FAB_PROBE_LATENCY;
		else if (!strcmp(optarg, "bw"))
			pc->o.test = FAB_PROBE_BW;
		else if (!strcmp(optarg, "matrix"))
			pc->o.test = T_MATRIX;
		else if (!strcmp(optarg, "coll"))
			pc->o.test = T_COLL;
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
	case 'a':
		if (optarg[0] >= '0' && optarg[0] <= '3' && !optarg[1])
			return -1; /* nccl-tests' -a: the reported time is already the mean over ranks */
		pc->set_algo = true;
		pc->o.algo = fab_coll_algo_parse(optarg);
		if (pc->o.algo < 0 || pc->o.algo == FAB_ALGO_AUTO) {
			fprintf(stderr, "fabscope: --algo: expected ring, tree, rhd or direct, got \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		return -1;
	case 'M': {
		char *colon = strrchr(optarg, ':');
		if (!colon || colon == optarg || atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535) {
			fprintf(stderr, "fabscope: --master: expected HOST:PORT, got \"%s\"\n", optarg);
			return FAB_EXIT_USAGE;
		}
		snprintf(pc->master, sizeof pc->master, "%.*s", (int)(colon - optarg), optarg);
		pc->master_port = (uint16_t)atoi(colon + 1);
		return -1;
	}
	case 'h':
		fputs(usage_probe, stdout);
		return FAB_EXIT_OK;
	default:
		fputs(usage_probe, stderr);
		return FAB_EXIT_USAGE;
	}
	return -1;
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
			pc->o.test == T_COLL
				? " (nccl-tests' -t, threads per process: the probe runs one rank a process)"
				: "");
		return FAB_EXIT_USAGE;
	}
	if (pc->set_i && !(pc->o.duration_s > 0)) {
		fprintf(stderr, "fabscope: -i: reports intervals of a time-based run: give -t SECONDS too\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.duration_s > 0 && !pc->set_i)
		pc->o.interval_s = 1; /* iperf3's default */
	if ((pc->o.serial || pc->set_pt) && pc->o.test != T_MATRIX) {
		fprintf(stderr, "fabscope: --serial and --pair-timeout: only for --test matrix\n");
		return FAB_EXIT_USAGE;
	}
	if (pc->o.test != T_COLL) {
		/* perftest-like defaults: small messages many times for latency,
		 * large ones for bandwidth */
		fab_bytes size = pc->o.test == FAB_PROBE_LATENCY ? 8 : pc->o.test == T_MATRIX ? 4 << 20 : 1 << 20;
		if (!pc->set_b)
			pc->o.minb = pc->set_e ? FAB_MIN(size, pc->o.maxb) : size;
		if (!pc->set_e)
			pc->o.maxb = FAB_MAX(size, pc->o.minb);
		if (!pc->set_n)
			pc->o.iters = pc->o.test == FAB_PROBE_LATENCY ? 1000 : pc->o.test == T_MATRIX ? 20 : 100;
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
	if (pc->o.test != T_COLL && pc->local == 1) {
		fprintf(stderr, "fabscope: --test %s: needs at least 2 ranks\n",
			pc->o.test == T_MATRIX                    ? "matrix"
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
		return launch_local(&pc->pp, &pc->o, pc->local);
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
	pc->o.launcher = fab_probe_env(&pc->pp);
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
	return probe_rank(&pc->pp, &pc->o);
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
		{"json", required_argument, NULL, 'J'},
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
		      .test = T_COLL,
		      .check = true,
		      .pair_timeout_s = 10,
		      .retest = 0.5},
		.pp = {.rendezvous_fd = -1, .timeout_s = 30, .conns = 2},
		.rank = -1,
		.wsize = -1,
	};
	snprintf(pc.pp.master, sizeof pc.pp.master, "127.0.0.1");
	int c, rc;
	while ((c = getopt_long(argc, argv, "a:b:c:e:f:i:n:w:o:t:T:h", opts, NULL)) != -1)
		if ((rc = probe_opt(&pc, c)) >= 0)
			return rc;
	if (optind < argc) {
		fprintf(stderr, "fabscope: probe: unexpected argument \"%s\"\n", argv[optind]);
		return FAB_EXIT_USAGE;
	}
	if ((rc = probe_check(&pc)) >= 0)
		return rc;
	return probe_launch(&pc);
}
