/*
 * probe_run.c - one rank of `fabscope probe`: the connection to the other
 * ranks, sizes capped to this machine's memory, the test (coll, latency
 * and bw, matrix: src/probe/), and rank 0's table and result document.
 *
 * Rank 0 prints; its table also goes into a memory stream so that --out
 * can write it beside the result document.  On a failure rank 0 still
 * writes the document, with what was measured and the error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/fabscope.h"
#include "cli.h"

/* rank 0's output: the library writes the table into a memory stream,
 * from which each new part goes to stdout at once (and all of it to --out);
 * the result document */
struct report {
	FILE *mem;
	char *text;
	size_t len, shown;
	json_t *doc;
	struct fab_probe_doc_info info;
	struct cli_tool_json tj;            /* -J's file, made before the run (fd -1: none) */
	struct fab_nccl_params_line params; /* coll: nccl-tests' parameters */
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

extern char **environ;

/* -J: the other tool's JSON, from the document */
struct tool_ctx {
	const struct report *r;
	const struct probe_opts *o;
};

static int w_tool(FILE *f, void *vctx, const char *start)
{
	struct tool_ctx *x = vctx;
	const struct probe_opts *o = x->o;
	if (o->test == PROBE_COLL)
		return fab_probe_write_nccl_json(f, x->r->doc, &x->r->params, o->argc, o->argv, environ, start);
	struct fab_probe_iperf ip = {fab_version_string(), o->duration_s, o->interval_s, o->test == FAB_PROBE_BW_BIDIR,
				     fab_epoch_now(NULL)};
	return fab_probe_write_iperf_json(f, x->r->doc, &ip);
}

/* rank 0: the document (and table) into the files asked for, each whole
 * or not at all; the error, if any, goes into the document (and -J's file
 * is removed) */
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
	struct tool_ctx tc = {r, o};
	if (r->tj.fd >= 0 && (json_object_get(r->doc, "error") || (rc = cli_tool_json_commit(&r->tj, w_tool, &tc))))
		cli_tool_json_drop(&r->tj);
	if (r->doc && o->json) {
		struct out_spec spec = {"", w_json, 0};
		int wrc = cli_write_out_file(o->json, &spec, r);
		if (!rc)
			rc = wrc;
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
	if (pp->rank == 0) {
		fab_probe_p2p_end(r->mem, r->doc, (enum fab_probe_test)o->test);
		show(r);
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
		r->params = fab_probe_coll_params(&a, &sw);
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
		uint64_t wrong[2] = {0, 0};
		/* warm-up, the timed runs (out of place, then again for the in-place
		 * columns), then (nccl-tests' -c) two checked runs, one for each
		 * half's #wrong */
		uint32_t runs = o->warmup + 2 * o->iters + (o->check ? 2 : 0);
		for (uint32_t it = 0; it < runs && !rc; it++) {
			struct fab_probe_result res;
			bool check = o->check && it >= runs - 2;
			if (fab_probe_coll(pr, &a, check, &res, &err)) {
				fprintf(stderr, "fabscope: %s\n", err.msg);
				rc = FAB_EXIT_IO;
				if (r->doc)
					json_object_set_new(r->doc, "error", json_string(err.msg));
				break;
			}
			if (check)
				wrong[it == runs - 1] += res.wrong;
			if (it >= o->warmup && it < o->warmup + 2 * o->iters)
				t[(it - o->warmup) / o->iters] += res.time_s;
		}
		if (!rc && pp->rank == 0) {
			double mean[2] = {t[0] / o->iters, t[1] / o->iters};
			fab_probe_coll_row(r->mem, r->doc, &a, size, mean, o->check, wrong);
			show(r);
			if (wrong[0] || wrong[1])
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
	if (o->test != PROBE_COLL)
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

int cli_probe_rank(struct fab_probe_params *pp, const struct probe_opts *oin)
{
	struct probe_opts ocap = *oin, *o = &ocap;
	pp->warn = warn_stderr;
	if (o->test != PROBE_COLL && pp->nranks < 2) {
		fprintf(stderr, "fabscope: probe: the point-to-point and matrix tests need at least 2 ranks\n");
		return FAB_EXIT_USAGE;
	}
	/* rank 0's -J file first: a path that cannot be written stops the job
	 * before the others join, not half way */
	struct report r = {.tj.fd = -1};
	int erc;
	if (pp->rank == 0 && o->tool_json && (erc = cli_tool_json_reserve("-J", o->tool_json, &r.tj)))
		return erc;
	struct fab_err err = {0};
	struct fab_probe *pr = fab_probe_connect(pp, &err);
	if (!pr || cap_sizes(pr, pp, o)) {
		if (!pr)
			fprintf(stderr, "fabscope: %s\n", err.msg);
		fab_probe_close(pr);
		cli_tool_json_drop(&r.tj);
		return FAB_EXIT_IO;
	}
	if (pp->rank == 0) {
		static const char *tests[] = {"latency", "bw", "bw"};
		r.info = (struct fab_probe_doc_info){
			.test = o->test == PROBE_COLL     ? "coll"
				: o->test == PROBE_MATRIX ? "matrix"
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
			cli_tool_json_drop(&r.tj);
			return FAB_EXIT_IO;
		}
		if (o->tool_json) /* nccl-tests' first line */
			fprintf(r.mem, "# Writing JSON output to %s\n", r.tj.path);
	}
	int rc = o->test == PROBE_COLL    ? probe_coll(pr, pp, o, &r)
		: o->test == PROBE_MATRIX ? probe_matrix(pr, pp, o, &r)
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
