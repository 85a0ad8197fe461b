/*
 * fault.c - resolve fault specs against the topology.
 */
#include <string.h>

#include "fault.h"

static int find_node(const struct fab_topo *t, const char *name)
{
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return (int)i;
	return -1;
}

static int locerr(struct fab_err *err, const struct fab_fault_spec *f, const char *msg, const char *arg)
{
	return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s: %s%s", f->loc.origin, f->loc.line, f->loc.col, f->loc.what,
			   msg, arg ? arg : "");
}

int fab_fault_resolve(const struct fab_fault_spec *f, const struct fab_topo *t, int engine, int transport,
		      struct fab_fault *out, struct fab_err *err)
{
	memset(out, 0, sizeof *out);
	const struct fab_transport_info *tp = fab_transport_at(transport);
	if (strcmp(tp->llfc, "pfc") && f->kind == FAB_FAULT_PFC_STORM)
		return locerr(err, f, tp->label, " has no PAUSE to storm with (its links are credited)");
	if (engine == FAB_ENGINE_FLOW && f->kind != FAB_FAULT_DEGRADE && f->kind != FAB_FAULT_SLOW_GPU)
		return locerr(err, f,
			      "the flow engine models degrade and slow-gpu faults only; run this one with "
			      "engine: packet",
			      NULL);
	out->kind = f->kind;
	out->rate_bps = f->rate_bps;
	out->drop = f->drop;
	out->drop_every = f->drop_every;
	out->factor = f->factor;
	out->prio = (uint8_t)f->priority;
	out->kmin_bytes = f->kmin_bytes;
	out->kmax_bytes = f->kmax_bytes;
	out->convergence_ps = f->convergence_ps;
	out->delay_ps = f->delay_ps;
	out->gpu = f->gpu;
	out->start_ps = f->start_ps;
	out->end_ps = f->end_ps;
	if (f->end_ps && f->end_ps <= f->start_ps)
		return locerr(err, f, "end must come after start", NULL);
	if (f->kind == FAB_FAULT_SLOW_GPU) {
		if (f->gpu >= t->ngpus)
			return locerr(err, f, "gpu: no such GPU", NULL);
		if (f->factor < 1)
			return locerr(err, f, "factor: a slow GPU takes factor >= 1 times as long", NULL);
		return 0;
	}
	int n = find_node(t, f->node);
	if (n < 0)
		return locerr(err, f, "node: no node named ", f->node);
	const struct fab_node *nd = &t->nodes[n];
	if (f->kind == FAB_FAULT_ECN) {
		if (nd->kind != FAB_NODE_SWITCH)
			return locerr(err, f, "node: ECN thresholds belong to a switch, not ", f->node);
		if (f->kmin_bytes > f->kmax_bytes)
			return locerr(err, f, "kmin must not exceed kmax", NULL);
		out->node = (uint32_t)n;
		return 0;
	}
	if (f->kind == FAB_FAULT_PFC_STORM) {
		if (nd->kind != FAB_NODE_NIC)
			return locerr(err, f, "node: a PFC storm comes from a NIC, not ", f->node);
		out->port = nd->first_port;
		return 0;
	}
	int peer = f->peer[0] ? find_node(t, f->peer) : -1;
	if (f->peer[0] && peer < 0)
		return locerr(err, f, "peer: no node named ", f->peer);
	uint32_t seen = 0;
	for (uint32_t p = nd->first_port; p < nd->first_port + nd->nports; p++) {
		if (peer >= 0 && t->ports[t->ports[p].peer].node != (uint32_t)peer)
			continue;
		if (seen++ == f->link_index) {
			out->port = p;
			if (f->kind == FAB_FAULT_DEGRADE && (!f->rate_bps || f->rate_bps > t->ports[p].rate_bps))
				return locerr(err, f, "rate: a degraded link runs slower than its configured rate",
					      NULL);
			if (f->kind == FAB_FAULT_DELAY && !f->delay_ps)
				return locerr(err, f, "delay: a delayed link adds more than 0", NULL);
			if (f->kind == FAB_FAULT_LOSSY && !f->drop_every && (f->drop <= 0 || f->drop >= 1))
				return locerr(err, f, "drop: a probability between 0 and 1 (or drop_every)", NULL);
			return 0;
		}
	}
	return locerr(err, f, "no such link from ", f->node);
}
