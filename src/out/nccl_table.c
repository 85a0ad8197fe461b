/*
 * nccl_table.c - the nccl-tests table (nccl_table.h).
 */
#include <stdlib.h>

#include "../coll/coll.h"
#include "nccl_table.h"

const char *fab_redop_name(int op)
{
	return op == FAB_OP_ALLREDUCE || op == FAB_OP_REDUCESCATTER || op == FAB_OP_REDUCE ? "sum" : "none";
}

const char *fab_nccl_program(int op)
{
	switch (op) {
	case FAB_OP_ALLREDUCE:
		return "all_reduce_perf";
	case FAB_OP_REDUCESCATTER:
		return "reduce_scatter_perf";
	case FAB_OP_ALLGATHER:
		return "all_gather_perf";
	case FAB_OP_BROADCAST:
		return "broadcast_perf";
	case FAB_OP_REDUCE:
		return "reduce_perf";
	case FAB_OP_ALLTOALL:
		return "alltoall_perf";
	default:
		return "sendrecv_perf";
	}
}

void fab_nccl_table_params(FILE *f, const struct fab_nccl_params_line *p)
{
	/* no NCCL library: its version codes are 0 */
	fprintf(f, "# nccl-tests version %s nccl-headers=0 nccl-library=0\n", FAB_NCCL_TESTS_VERSION);
	fprintf(f, "# Collective test starting: %s\n", fab_nccl_program(p->op));
	fprintf(f,
		"# nThread %u nGpus %u minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %u iters: %u agg "
		"iters: 1 validation: %u graph: 0 unalign: 0\n",
		p->nthreads, p->ngpus, (unsigned long long)p->minb, (unsigned long long)p->maxb,
		(unsigned long long)p->step, p->step_factor ? "factor" : "bytes", p->warmup, p->iters, p->check);
}

void fab_nccl_table_devices(FILE *f)
{
	fputs("#\n# Using devices\n", f);
}

void fab_nccl_table_device(FILE *f, uint32_t rank, int pid, const char *host, uint32_t dev, const char *what)
{
	/* nccl-tests' [domain:bus:device] of the GPU's PCI address: none here */
	fprintf(f, "#  Rank %2u Group  0 Pid %6d on %10s device %2u [0000:00:00] %s\n", rank, pid, host, dev, what);
}

void fab_nccl_table_devices_more(FILE *f, uint32_t more, const char *how)
{
	fprintf(f, "#  ... and %u more rank%s (%s)\n", more, more == 1 ? "" : "s", how);
}

/* the two lines of column names (trailing blanks as nccl-tests prints
 * them: its timestamp column's place, empty) */
void fab_nccl_table_head(FILE *f, bool algo_col)
{
	fprintf(f, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
		"", "", "", "", "");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s ", "size", "count", "type",
		"redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
	fprintf(f, algo_col ? " %18s\n" : "\n", "algo");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s ", "(B)", "(elements)", "", "",
		"", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
	fprintf(f, algo_col ? " %18s\n" : "\n", "");
}

/* a number in `width` characters, with as many decimals (2, 1, 0) as fit,
 * else in exponent form cut to the width (nccl-tests' getFloatStr) */
static void num(FILE *f, double v, int width)
{
	char b[64];
	for (int d = 2; d >= 0; d--)
		if (snprintf(b, sizeof b, "%*.*f", width, d, v) <= width) {
			fputs(b, f);
			return;
		}
	snprintf(b, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
	fputs(b, f);
}

void fab_nccl_table_row(FILE *f, const struct fab_nccl_row *r)
{
	fprintf(f, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)r->bytes, (unsigned long long)r->count, r->type,
		r->redop, r->root);
	for (int k = 0; k < 2; k++) {
		fputs("  ", f);
		num(f, r->time_us[k], 7);
		fputs("  ", f);
		num(f, r->algbw_GBps[k], 6);
		fputs("  ", f);
		num(f, r->busbw_GBps[k], 6);
		if (r->checked[k])
			fprintf(f, "  %6g", (double)r->wrong[k]);
		else
			fputs("    N/A", f);
	}
	if (r->algo)
		fprintf(f, "  %18s", r->algo);
	fputc('\n', f);
}

double fab_nccl_min_bw(void)
{
	const char *e = getenv("NCCL_TESTS_MIN_BW");
	char *end;
	double v = e ? strtod(e, &end) : -1;
	return e && end != e && v >= 0 ? v : -1;
}

bool fab_nccl_table_end(FILE *f, uint64_t wrong, double avg, double min_bw, int op)
{
	bool low = min_bw >= 0 && avg < 0.9 * min_bw;
	fprintf(f, "# %-20s : %llu %s\n", "Out of bounds values", (unsigned long long)wrong, wrong ? "FAILED" : "OK");
	fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", avg, min_bw < 0 ? "" : low ? "FAILED" : "OK");
	/* then nccl-tests' closing "#" and its line for NCCL's last error: empty */
	fprintf(f, "#\n# Collective test concluded: %s\n#\n\n", fab_nccl_program(op));
	return wrong || low;
}
