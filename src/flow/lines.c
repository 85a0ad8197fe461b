/*
 * lines.c - the flow engine's delay lines: its own events, each due a
 * fixed delay after it is scheduled (a hop's latency, a feedback window),
 * in a FIFO per delay, the lines with a head kept in the order their heads
 * are due (struct fl_line and why: flow_int.h).  fl_push schedules; the
 * run loop (flow.c) takes the first due with fl_line_pop, against the
 * event queue, the completions and the timers (fl_line_next).  A delay
 * past the FL_LINES first, or an event in the past, goes to the event
 * queue instead.
 */
#include <stdlib.h>
#include <string.h>

#include "flow_int.h"

static bool line_before(const struct fl_state *fl, uint32_t a, uint32_t b)
{
	return fl->line_t[a] < fl->line_t[b] || (fl->line_t[a] == fl->line_t[b] && fl->line_s[a] < fl->line_s[b]);
}

/* line i has a head now (it had none): it joins the order */
static void line_join(struct fl_state *fl, uint32_t i)
{
	uint32_t k = fl->nbusy++;
	for (; k && line_before(fl, i, fl->line_order[k - 1]); k--)
		fl->line_order[k] = fl->line_order[k - 1];
	fl->line_order[k] = (uint8_t)i;
}

/* the first line's head was taken: it moves back to its place in the
 * order, or leaves it if it is empty */
static void line_took(struct fl_state *fl, bool empty)
{
	uint32_t i = fl->line_order[0], k = 0;
	if (empty) {
		memmove(fl->line_order, fl->line_order + 1, --fl->nbusy);
	} else {
		for (; k + 1 < fl->nbusy && line_before(fl, fl->line_order[k + 1], i); k++)
			fl->line_order[k] = fl->line_order[k + 1];
		fl->line_order[k] = (uint8_t)i;
	}
}

/* an event of the engine's own, due at t */
void fl_push(struct flsim *s, fab_time_ps t, uint32_t type, uint32_t arg)
{
	struct fl_state *fl = s->fl;
	fab_time_ps d = t - s->c.now_ps;
	uint8_t *hint = &fl->line_of[(d ^ d >> 6 ^ d >> 12) & 63];
	uint32_t i = *hint ? *hint - 1u : 0;
	if (!*hint || fl->lines[i].delay != d) {
		for (i = 0; i < fl->nlines && fl->lines[i].delay != d;)
			i++;
		if (i == fl->nlines) {
			if (i == FL_LINES || t < s->c.now_ps) {
				fab_eq_push(&s->c.eq, t, type, NULL, arg);
				return;
			}
			fl->line_t[fl->nlines] = FAB_TIME_NEVER;
			fl->lines[fl->nlines++].delay = d;
		}
		*hint = (uint8_t)(i + 1);
	}
	struct fl_line *l = &fl->lines[i];
	if (l->n == l->cap) {
		uint32_t n = l->cap ? 2 * l->cap : 64;
		struct fl_lev *v = fab_xcalloc(n, sizeof *v);
		for (uint32_t k = 0; k < l->n; k++)
			v[k] = l->v[(l->head + k) & (l->cap - 1)];
		free(l->v);
		l->v = v;
		l->cap = n;
		l->head = 0;
	}
	struct fl_lev *e = &l->v[(l->head + l->n++) & (l->cap - 1)]; /* (cap: a power of 2) */
	*e = (struct fl_lev){t, fl->line_seq++, type, arg};
	if (l->n == 1) {
		fl->line_t[i] = t;
		fl->line_s[i] = e->seq;
		line_join(fl, i);
	}
}

/* takes the first line's head as an event */
void fl_line_pop(struct fl_state *fl, struct fab_ev *ev)
{
	uint32_t i = fl->line_order[0];
	struct fl_line *l = &fl->lines[i];
	const struct fl_lev *e = &l->v[l->head];
	*ev = (struct fab_ev){.t_ps = e->t, .seq = e->seq, .type = e->type, .arg = e->arg};
	l->head = (l->head + 1) & (l->cap - 1);
	if (--l->n) {
		const struct fl_lev *nx = &l->v[l->head];
		fl->line_t[i] = nx->t;
		fl->line_s[i] = nx->seq;
		/* what the line's next event reads first, fetched into the
		 * cache while the events between run: a window's queue pair, a
		 * change's or a token's record (on HPCC's incast run fq_event
		 * went from 10.5% to 9.0% of the samples) */
		if (nx->type == EV_FQ_CC_TICK)
			__builtin_prefetch(&fl->qps[nx->arg]);
		else if (nx->type == EV_FQ_IN || nx->type == EV_FQ_MARK)
			__builtin_prefetch(&fl->rec[nx->arg]);
	} else {
		fl->line_t[i] = FAB_TIME_NEVER;
	}
	line_took(fl, !l->n);
}

void fl_lines_free(struct fl_state *fl)
{
	for (uint32_t i = 0; i < fl->nlines; i++)
		free(fl->lines[i].v);
}
