/*
 * nccl_table.h - the nccl-tests table as the simulator (fabscope coll) and
 * the real-network probe print it, laid out byte for byte as nccl-tests
 * FAB_NCCL_TESTS_VERSION prints it (src/util.cu's format strings) so that
 * its parsers read it: the version line, the run's parameters (# nThread
 * ...), the devices,
 * a row of 13 fields per size (size, count, type, redop, root, then time,
 * algbw, busbw and #wrong out of place, the same in place), the out-of-bounds
 * and average bus bandwidth lines (checked against NCCL_TESTS_MIN_BW as
 * nccl-tests does) and the closing line.  With algo_col, a 14th field names
 * the algorithm and protocol each size ran (fabscope's own).
 */
#ifndef FAB_NCCL_TABLE_H
#define FAB_NCCL_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "../base/base.h"

/* the nccl-tests release whose layout the table and -J's JSON follow */
#define FAB_NCCL_TESTS_VERSION "2.19.6"

struct fab_nccl_row {
	uint64_t bytes, count;
	const char *type, *redop;
	int root;
	double time_us[2], algbw_GBps[2], busbw_GBps[2]; /* out of place, in place */
	bool checked[2];                                 /* else #wrong is N/A */
	uint64_t wrong[2];
	const char *algo; /* the algo column; NULL: none */
};

/* the run's parameters, as nccl-tests' "# nThread" line gives them */
struct fab_nccl_params_line {
	int op; /* the collective: the nccl-tests program it stands for */
	uint32_t nthreads, ngpus;
	uint64_t minb, maxb, step; /* step: the factor, or the bytes added */
	bool step_factor;
	uint32_t warmup, iters, check;
};

/* "sum" for the reducing operations, "none" for the others */
const char *fab_redop_name(int op);
/* nccl-tests' program for a collective: "all_reduce_perf" */
const char *fab_nccl_program(int op);
/* the version line, "# Collective test starting" and "# nThread ..." (the
 * caller's own "# ..." lines may follow, where nccl-tests puts its
 * optional ones) */
void fab_nccl_table_params(FILE *f, const struct fab_nccl_params_line *p);
/* "#" and "# Using devices" */
void fab_nccl_table_devices(FILE *f);
/* one "# Using devices" line: rank, host, device and what it is */
void fab_nccl_table_device(FILE *f, uint32_t rank, int pid, const char *host, uint32_t dev, const char *what);
/* the number of device lines printed for n ranks unless all are asked
 * for, and the line that says how many more there are */
#define FAB_NCCL_DEVICE_LINES 64
void fab_nccl_table_devices_more(FILE *f, uint32_t more, const char *how);
void fab_nccl_table_head(FILE *f, bool algo_col);
void fab_nccl_table_row(FILE *f, const struct fab_nccl_row *r);
/* The closing lines; min_bw: NCCL_TESTS_MIN_BW (GB/s, < 0: none).  Returns
 * true when the run failed nccl-tests' checks: wrong elements, or the
 * average bus bandwidth under 0.9 x min_bw. */
bool fab_nccl_table_end(FILE *f, uint64_t wrong, double avg_busbw_GBps, double min_bw, int op);
/* nccl-tests' time stamps ("%Y-%m-%d %H:%M:%S", local time); with
 * SOURCE_DATE_EPOCH set, that instant in UTC (reproducible files) */
void fab_nccl_json_time(char *buf, size_t len);
/* now, in seconds since 1970, or the instant SOURCE_DATE_EPOCH fixes
 * (then *fixed, when given, is true) */
long long fab_epoch_now(bool *fixed);
/* NCCL_TESTS_MIN_BW from the environment, or -1 */
double fab_nccl_min_bw(void);

#endif
