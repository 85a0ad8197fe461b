/*
 * nccl_json.h - nccl-tests' JSON output (its -J FILE.json) written piece by
 * piece as the table is: head (through the config's devices), a device
 * each, results, a row each, end.
 */
#ifndef FAB_NCCL_JSON_H
#define FAB_NCCL_JSON_H

#include "nccl_table.h"

/* envp: the variables to list (those of NCCL_ and FABSCOPE_ only) */
void fab_nccl_json_head(FILE *f, int argc, char *const *argv, char *const *envp, const char *start,
			const struct fab_nccl_params_line *p);
void fab_nccl_json_device(FILE *f, bool first, uint32_t rank, int pid, const char *host, uint32_t dev,
			  const char *what);
void fab_nccl_json_results(FILE *f);
void fab_nccl_json_row(FILE *f, bool first, const struct fab_nccl_row *r, uint32_t iters);
/* min_bw: NCCL_TESTS_MIN_BW (< 0: none) */
void fab_nccl_json_end(FILE *f, uint64_t wrong, double avg_busbw_GBps, double min_bw, const char *end);

#endif
