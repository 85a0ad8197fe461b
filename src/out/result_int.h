/*
 * result_int.h - what the result's files share (result.c: the document
 * and its long tables; result_text.c: CSV and text).
 */
#ifndef FAB_RESULT_INT_H
#define FAB_RESULT_INT_H

#include "result.h"

/* a finished flow's goodput: its bytes over its completion time, rounded */
static inline uint64_t goodput_bps(fab_bytes bytes, uint64_t fct_ps)
{
	return fct_ps ? (uint64_t)((double)bytes * 8e12 / (double)fct_ps + 0.5) : 0;
}

#endif
