/*
 * nccl_table.h - the nccl-tests table as the simulator (fabscope coll) and
 * the real-network probe print it: one header, one row format, the redop
 * column, the average bus bandwidth line.  The simulator's table has an
 * `algo` column after #wrong (the algorithm `auto` chose per size).
 */
#ifndef FAB_NCCL_TABLE_H
#define FAB_NCCL_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "../base/base.h"

struct fab_nccl_row {
	uint64_t bytes, count;
	const char *type, *redop;
	int root;
	double time_us, algbw_GBps, busbw_GBps;
	const char *wrong; /* "N/A" when not checked */
	const char *algo;  /* the algo column; NULL: none */
};

/* "sum" for the reducing operations, "none" for the others */
const char *fab_redop_name(int op);
void fab_nccl_table_head(FILE *f, bool algo_col);
void fab_nccl_table_row(FILE *f, const struct fab_nccl_row *r);
void fab_nccl_table_avg(FILE *f, double avg_busbw_GBps);

#endif
