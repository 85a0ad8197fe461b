/*
 * work.c - the callback dispatcher and the log of work.h.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

#define SLOT_NONE UINT32_MAX

void fab_log_printf(struct fab_log *log, const char *fmt, ...)
{
	if (!log->enabled)
		return;
	for (;;) {
		size_t room = log->cap - log->len;
		va_list ap;
		va_start(ap, fmt);
		int n = room ? vsnprintf(log->buf + log->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			log->len += (size_t)n;
			return;
		}
		log->cap = log->cap ? 2 * log->cap : 4096;
		if (n >= 0 && log->cap < log->len + (size_t)n + 1)
			log->cap = log->len + (size_t)n + 1;
		log->buf = fab_xrealloc(log->buf, log->cap, 1);
	}
}

void fab_log_free(struct fab_log *log)
{
	free(log->buf);
	memset(log, 0, sizeof *log);
}

static void dispatch(void *ctx, uint32_t id)
{
	struct fab_work *w = ctx;
	struct fab_work_slot s = w->slots[id];
	w->slots[id].next_free = w->free_head;
	w->free_head = id;
	s.fn(s.obj, s.val);
}

void fab_work_init(struct fab_work *w, struct fab_sim *sim, const struct fab_topo *topo)
{
	memset(w, 0, sizeof *w);
	w->sim = sim;
	w->topo = topo;
	w->free_head = SLOT_NONE;
	/* NCCL's defaults (the tuner's latencies: ring, Hopper, NVLink and network) */
	w->nccl.pxn = true;
	w->nccl.proto = FAB_PROTO_AUTO;
	static const fab_time_ps base[FAB_NPROTO] = {6600000, 14000000, 8400000};
	static const fab_time_ps hop[FAB_NPROTO] = {600000, 1900000, 3400000};
	static const fab_time_ps net[FAB_NPROTO] = {2100000, 2100000, 10600000};
	memcpy(w->nccl.base_ps, base, sizeof base);
	memcpy(w->nccl.hop_ps, hop, sizeof hop);
	memcpy(w->nccl.net_ps, net, sizeof net);
	w->nccl.nvls_ps = 25000000;
	w->nccl.sharp_ps = 31000000;
	struct fab_sim_hooks h = {w, dispatch, dispatch};
	fab_sim_set_hooks(sim, &h);
}

const char *fab_proto_name(int proto)
{
	static const char *const names[] = {"LL", "LL128", "Simple", "auto"};
	return proto >= 0 && proto <= FAB_PROTO_AUTO ? names[proto] : "?";
}

void fab_work_free(struct fab_work *w)
{
	free(w->slots);
	free(w->nvl_users);
	fab_log_free(&w->log);
}

uint32_t fab_work_cookie(struct fab_work *w, fab_work_fn fn, void *obj, uint32_t val)
{
	uint32_t id;
	if (w->free_head != SLOT_NONE) {
		id = w->free_head;
		w->free_head = w->slots[id].next_free;
	} else {
		if (w->nslots == w->cap_slots) {
			w->cap_slots = w->cap_slots ? 2 * w->cap_slots : 1024;
			w->slots = fab_xrealloc(w->slots, w->cap_slots, sizeof *w->slots);
		}
		id = w->nslots++;
	}
	w->slots[id] = (struct fab_work_slot){fn, obj, val, SLOT_NONE};
	return id;
}

void fab_work_timer(struct fab_work *w, fab_time_ps at_ps, fab_work_fn fn, void *obj, uint32_t val)
{
	fab_sim_timer(w->sim, at_ps, fab_work_cookie(w, fn, obj, val));
}
