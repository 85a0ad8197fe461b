/*
 * result_summary.c - the run's summary numbers (fab_summary_compute, kept
 * with the run) and the document's sections built from them and from the
 * ports: "summary", "ecmp" (the uplinks' load per tier) and "ecmp_groups"
 * (each switch's uplinks).
 */
#include <stdlib.h>
#include <string.h>

#include "result_int.h"
#include "../base/sort.h"

/* Nearest-rank percentile of a sorted array. */
static uint64_t pct(const uint64_t *v, size_t n, double p)
{
	return n ? v[fab_nearest_rank(n, p / 100.0)] : 0;
}

struct uplink_load {
	uint32_t tier;
	size_t ports, unused;
	uint64_t max_bytes;
	double mean_bytes;
	uint32_t busiest; /* port id */
};

/* Bytes sent up by the switches of each tier, over their up-facing ports. */
static size_t uplink_loads(const struct fab_sim *s, struct uplink_load *out, size_t max)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	size_t n = 0;
	for (uint32_t tier = 1; tier <= 3 && n < max; tier++) {
		struct uplink_load u = {.tier = tier};
		double sum = 0;
		for (uint32_t p = 0; p < t->nports; p++) {
			const struct fab_port *fp = &t->ports[p];
			if (t->nodes[fp->node].kind != FAB_NODE_SWITCH || t->nodes[fp->node].tier != tier)
				continue;
			if (t->nodes[t->ports[fp->peer].node].tier <= tier)
				continue;
			u.ports++;
			sum += (double)ps[p].tx_bytes;
			if (ps[p].tx_bytes > u.max_bytes) {
				u.max_bytes = ps[p].tx_bytes;
				u.busiest = p;
			}
			if (ps[p].tx_data_pkts == 0)
				u.unused++;
		}
		if (!u.ports)
			continue;
		u.mean_bytes = sum / (double)u.ports;
		out[n++] = u;
	}
	return n;
}

static void summary_compute(const struct fab_sim *s, struct fab_summary *o)
{
	memset(o, 0, sizeof *o);
	size_t n = fab_sim_nflows(s);
	uint64_t *fct = fab_xcalloc(n ? n : 1, sizeof *fct);
	double sum = 0, gsum = 0;
	o->flows = n;
	for (size_t i = 0; i < n; i++) {
		const struct fab_sim_flow *fl = fab_sim_flow_spec(s, i);
		struct fab_flow_stats st = fab_sim_flow_stat(s, i);
		o->bytes += fl->bytes;
		o->retx_pkts += st.retx_pkts;
		o->cnps += st.cnps;
		o->timeouts += st.timeouts;
		if (st.finish_ps == FAB_TIME_NEVER)
			continue;
		uint64_t f = st.finish_ps - fl->start_ps;
		fct[o->flows_done++] = f;
		sum += (double)f;
		gsum += f ? (double)fl->bytes * 8e12 / (double)f : 0;
	}
	fab_sort_u64(fct, o->flows_done);
	if (o->flows_done) {
		o->fct_min = fct[0];
		o->fct_max = fct[o->flows_done - 1];
		o->fct_p50 = pct(fct, o->flows_done, 50);
		o->fct_p99 = pct(fct, o->flows_done, 99);
		o->fct_mean = sum / (double)o->flows_done;
		o->goodput_mean_bps = gsum / (double)o->flows_done;
	}
	free(fct);
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	for (uint32_t p = 0; p < t->nports; p++) {
		o->drops += ps[p].drops;
		o->ecn_marks += ps[p].ecn_marks;
		for (unsigned k = 0; k < FAB_NPRIO; k++)
			o->pause_frames += ps[p].pause_tx[k];
	}
	/* every queue pair's, flows' and workloads' alike */
	o->retx_pkts = fab_sim_totals(s)->retx_pkts;
	o->timeouts = fab_sim_totals(s)->timeouts;
	o->qp_errors = fab_sim_totals(s)->qp_errors;
	o->cnps = fab_sim_totals(s)->cnps;
	struct uplink_load u[3];
	size_t nu = uplink_loads(s, u, 3);
	if (nu && u[0].mean_bytes > 0) {
		o->ecmp_max_over_mean = (double)u[0].max_bytes / u[0].mean_bytes;
		o->ecmp_up_max_bytes = u[0].max_bytes;
		o->ecmp_up_mean_bytes = (fab_rate_bps)u[0].mean_bytes;
	}
}

/* kept with the simulation until it runs on: the document, the text
 * summary and the command's lines each ask */
void fab_summary_compute(const struct fab_sim *s, struct fab_summary *o)
{
	bool stale;
	struct fab_summary *k = fab_sim_memo(s, FAB_MEMO_SUMMARY, sizeof *k, &stale);
	if (stale)
		summary_compute(s, k);
	*o = *k;
}

/* Path balance per ECMP group: each switch's uplinks (ports toward a higher
 * tier) with the bytes they sent and the queue pairs hashed onto them;
 * groups whose busiest member carries 1.5x the mean list the queue pairs
 * that collide there. */
/* an ECMP group's uplinks: how many, what they sent, the busiest */
struct ecmp_group {
	uint32_t members, busiest;
	double sum, mx;
};

static bool is_uplink(const struct fab_topo *t, const struct fab_node *node, uint32_t p)
{
	return t->nodes[t->ports[t->ports[p].peer].node].tier > node->tier;
}

static struct ecmp_group ecmp_group(const struct fab_topo *t, const struct fab_port_stats *ps,
				    const struct fab_node *node)
{
	struct ecmp_group g = {0};
	for (uint32_t p = node->first_port; p < node->first_port + node->nports; p++) {
		if (!is_uplink(t, node, p))
			continue;
		g.members++;
		g.sum += (double)ps[p].tx_bytes;
		if ((double)ps[p].tx_bytes >= g.mx) {
			g.mx = (double)ps[p].tx_bytes;
			g.busiest = p;
		}
	}
	return g;
}

/* who collides on each busiest uplink that carries 1.5x its group's mean
 * (col[port], NULL elsewhere): the first 32 queue pairs crossing it, in
 * one pass over the queue pairs */
static json_t **colliders(const struct fab_sim *s, const struct fab_port_stats *ps)
{
	const struct fab_topo *t = fab_sim_topo(s);
	json_t **col = fab_xcalloc(t->nports, sizeof *col);
	bool any = false;
	for (uint32_t nd = 0; nd < t->nnodes; nd++) {
		const struct fab_node *node = &t->nodes[nd];
		if (node->kind != FAB_NODE_SWITCH)
			continue;
		struct ecmp_group g = ecmp_group(t, ps, node);
		if (g.members >= 2 && g.sum > 0 && g.mx >= 1.5 * (g.sum / g.members)) {
			col[g.busiest] = json_array();
			any = true;
		}
	}
	uint32_t nq = any ? fab_sim_nqps(s) : 0, path[64], a, b;
	for (uint32_t q = 0; q < nq; q++) {
		if (!fab_sim_qp_used(s, q))
			continue;
		uint32_t n = fab_sim_qp_path(s, q, path, 64);
		for (uint32_t i = 0; i < n; i++) {
			json_t *c = col[path[i]];
			if (!c || json_array_size(c) >= 32)
				continue;
			fab_sim_qp_ends(s, q, &a, &b);
			char buf[96];
			snprintf(buf, sizeof buf, "qp %u: %s -> %s", q, t->nodes[t->nic_node[a]].name,
				 t->nodes[t->nic_node[b]].name);
			json_array_append_new(c, json_string(buf));
		}
	}
	return col;
}

/* Path balance per ECMP group: each switch's uplinks (ports toward a higher
 * tier) with the bytes they sent and the queue pairs hashed onto them;
 * groups whose busiest member carries 1.5x the mean list the queue pairs
 * that collide there. */
json_t *res_ecmp_groups_json(const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	uint32_t *qps_on = fab_xcalloc(t->nports, sizeof *qps_on), path[64];
	uint32_t nq = fab_sim_nqps(s);
	for (uint32_t q = 0; q < nq; q++) {
		if (!fab_sim_qp_used(s, q))
			continue;
		uint32_t n = fab_sim_qp_path(s, q, path, 64);
		for (uint32_t i = 0; i < n; i++)
			qps_on[path[i]]++;
	}
	json_t **col = colliders(s, ps);
	json_t *groups = json_array();
	for (uint32_t nd = 0; nd < t->nnodes; nd++) {
		const struct fab_node *node = &t->nodes[nd];
		if (node->kind != FAB_NODE_SWITCH)
			continue;
		struct ecmp_group eg = ecmp_group(t, ps, node);
		if (eg.members < 2 || eg.sum <= 0)
			continue;
		double mean = eg.sum / eg.members;
		json_t *g = json_object(), *mem = json_array();
		json_object_set_new(g, "switch", json_string(node->name));
		json_object_set_new(g, "max_over_mean", json_real(eg.mx / mean));
		for (uint32_t p = node->first_port; p < node->first_port + node->nports; p++) {
			if (!is_uplink(t, node, p))
				continue;
			json_t *m = json_object();
			json_object_set_new(m, "port", json_integer(p - node->first_port));
			json_object_set_new(m, "peer", json_string(t->nodes[t->ports[t->ports[p].peer].node].name));
			json_object_set_new(m, "tx_bytes", json_u64(ps[p].tx_bytes));
			json_object_set_new(m, "qps", json_integer(qps_on[p]));
			json_array_append_new(mem, m);
		}
		json_object_set_new(g, "members", mem);
		if (col[eg.busiest]) {
			json_object_set_new(g, "colliding", col[eg.busiest]);
			col[eg.busiest] = NULL;
		}
		json_array_append_new(groups, g);
	}
	free(col);
	free(qps_on);
	return groups;
}

json_t *res_summary_json(const struct fab_sim *s, const struct fab_summary *smp)
{
	const struct fab_sim_totals *tot = fab_sim_totals(s);
	struct fab_summary sm = *smp;
	json_t *sum = json_object();
	json_object_set_new(sum, "events", json_u64(tot->events));
	json_object_set_new(sum, "sim_time_ps", json_u64(tot->end_ps));
	json_object_set_new(sum, "stopped_by_end_time", json_boolean(tot->stopped_by_end_time));
	json_object_set_new(sum, "flows", json_u64(sm.flows));
	json_object_set_new(sum, "flows_done", json_u64(sm.flows_done));
	json_object_set_new(sum, "bytes", json_u64(sm.bytes));
	json_object_set_new(sum, "data_pkts", json_u64(tot->data_pkts));
	json_object_set_new(sum, "drops", json_u64(sm.drops));
	json_object_set_new(sum, "wire_losses", json_u64(tot->wire_losses));
	json_object_set_new(sum, "failovers", json_u64(tot->failovers));
	json_object_set_new(sum, "reordered", json_u64(tot->reordered));
	json_object_set_new(sum, "retx_pkts", json_u64(sm.retx_pkts));
	json_object_set_new(sum, "timeouts", json_u64(sm.timeouts));
	json_object_set_new(sum, "qp_errors", json_u64(sm.qp_errors));
	json_object_set_new(sum, "ecn_marks", json_u64(sm.ecn_marks));
	json_object_set_new(sum, "cnps", json_u64(sm.cnps));
	json_object_set_new(sum, "pause_frames", json_u64(sm.pause_frames));
	if (tot->host_cpu_ps > 0) /* a transport through the kernel (TCP) */
		json_object_set_new(sum, "host_cpu_s", json_real(tot->host_cpu_ps / 1e12));
	json_t *fct = json_object();
	json_object_set_new(fct, "min", json_u64(sm.fct_min));
	json_object_set_new(fct, "p50", json_u64(sm.fct_p50));
	json_object_set_new(fct, "p99", json_u64(sm.fct_p99));
	json_object_set_new(fct, "max", json_u64(sm.fct_max));
	json_object_set_new(fct, "mean", json_u64((uint64_t)(sm.fct_mean + 0.5)));
	json_object_set_new(sum, "fct_ps", fct);
	json_object_set_new(sum, "goodput_mean_bps", json_u64((uint64_t)(sm.goodput_mean_bps + 0.5)));
	json_t *cons = json_object();
	json_object_set_new(cons, "sent_bytes", json_u64(tot->data_tx_bytes));
	json_object_set_new(cons, "delivered_bytes", json_u64(tot->data_rx_bytes));
	json_object_set_new(cons, "dropped_bytes", json_u64(tot->data_drop_bytes));
	json_object_set_new(cons, "inflight_bytes", json_u64(tot->data_inflight_bytes));
	json_object_set_new(sum, "conservation", cons);
	return sum;
}

/* per tier, the uplinks' load: how evenly ECMP spread it */
json_t *res_ecmp_json(const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	json_t *ecmp = json_array();
	struct uplink_load u[3];
	size_t nu = uplink_loads(s, u, 3);
	for (size_t i = 0; i < nu; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "tier", json_integer(u[i].tier));
		json_object_set_new(x, "uplinks", json_u64(u[i].ports));
		json_object_set_new(x, "unused", json_u64(u[i].unused));
		json_object_set_new(x, "max_tx_bytes", json_u64(u[i].max_bytes));
		json_object_set_new(x, "mean_tx_bytes", json_u64((uint64_t)(u[i].mean_bytes + 0.5)));
		json_object_set_new(x, "max_over_mean",
				    json_real(u[i].mean_bytes > 0 ? (double)u[i].max_bytes / u[i].mean_bytes : 0));
		const struct fab_port *bp = &t->ports[u[i].busiest];
		const struct fab_node *bn = &t->nodes[bp->node];
		json_t *b = json_object();
		json_object_set_new(b, "node", json_string(bn->name));
		json_object_set_new(b, "port", json_integer(u[i].busiest - bn->first_port));
		json_object_set_new(b, "peer", json_string(t->nodes[t->ports[bp->peer].node].name));
		json_object_set_new(x, "busiest", b);
		json_array_append_new(ecmp, x);
	}
	return ecmp;
}
