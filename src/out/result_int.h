/*
 * result_int.h - what the result's files share: result.c (the document),
 * result_summary.c (the summary numbers, the "summary", "ecmp" and
 * "ecmp_groups" sections), result_rows.c (the long tables) and
 * result_text.c (CSV and text).
 */
#ifndef FAB_RESULT_INT_H
#define FAB_RESULT_INT_H

#include "result.h"
#include "jsonw.h"

/* unsigned counters as the document has them: json_int_t */
static inline json_t *json_u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* a finished flow's goodput: its bytes over its completion time, rounded */
static inline uint64_t goodput_bps(fab_bytes bytes, uint64_t fct_ps)
{
	return fct_ps ? (uint64_t)((double)bytes * 8e12 / (double)fct_ps + 0.5) : 0;
}

/* the document's sections (result_summary.c) */
json_t *res_summary_json(const struct fab_sim *s, const struct fab_summary *sm);
json_t *res_ecmp_json(const struct fab_sim *s);
json_t *res_ecmp_groups_json(const struct fab_sim *s);

/* the long tables (result_rows.c): each row described once, built as
 * jansson values or written through a JSON writer, the same bytes */
enum res_rows { ROWS_FLOWS, ROWS_SERIES, ROWS_FLOW_SERIES, ROWS_PORTS, ROWS_NONE };
json_t *res_rows_json(const struct fab_sim *s, enum res_rows which);
/* the table as the writer's next value (after its key) */
void res_rows_write(struct jw *w, const struct fab_sim *s, enum res_rows which);

#endif
