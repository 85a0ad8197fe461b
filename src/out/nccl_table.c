/*
 * nccl_table.c - the nccl-tests table (nccl_table.h).
 */
#include "../coll/coll.h"
#include "nccl_table.h"

const char *fab_redop_name(int op)
{
	return op == FAB_OP_ALLREDUCE || op == FAB_OP_REDUCESCATTER || op == FAB_OP_REDUCE ? "sum" : "none";
}

void fab_nccl_table_head(FILE *f, bool algo_col)
{
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s", "size", "count", "type", "redop", "root", "time",
		"algbw", "busbw", "#wrong");
	fprintf(f, algo_col ? "  %18s\n" : "\n", "algo");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
		"(GB/s)", "");
	fprintf(f, algo_col ? "  %18s\n" : "\n", "");
}

void fab_nccl_table_row(FILE *f, const struct fab_nccl_row *r)
{
	fprintf(f, "  %10llu  %12llu  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %6s", (unsigned long long)r->bytes,
		(unsigned long long)r->count, r->type, r->redop, r->root, r->time_us, r->algbw_GBps, r->busbw_GBps,
		r->wrong);
	if (r->algo)
		fprintf(f, "  %18s", r->algo);
	fputc('\n', f);
}

void fab_nccl_table_avg(FILE *f, double avg_busbw_GBps)
{
	fprintf(f, "# Avg bus bandwidth    : %g\n", avg_busbw_GBps);
}
