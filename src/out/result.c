/*
 * result.c - build the result document, CSV tables and the text summary
 * from a finished run.
 */
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "slowdown.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

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

void fab_summary_compute(const struct fab_sim *s, struct fab_summary *o)
{
	memset(o, 0, sizeof *o);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(s, &n);
	const struct fab_flow_stats *st = fab_sim_flow_stats(s);
	uint64_t *fct = fab_xcalloc(n ? n : 1, sizeof *fct);
	double sum = 0, gsum = 0;
	o->flows = n;
	for (size_t i = 0; i < n; i++) {
		o->bytes += fl[i].bytes;
		o->retx_pkts += st[i].retx_pkts;
		o->cnps += st[i].cnps;
		o->timeouts += st[i].timeouts;
		if (st[i].finish_ps == FAB_TIME_NEVER)
			continue;
		uint64_t f = st[i].finish_ps - fl[i].start_ps;
		fct[o->flows_done++] = f;
		sum += (double)f;
		gsum += f ? (double)fl[i].bytes * 8e12 / (double)f : 0;
	}
	qsort(fct, o->flows_done, sizeof *fct, cmp_u64);
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

/* A list of items (flows, generators) as their keys' canonical text. */
static json_t *items_json(const struct fab_key_def *keys, size_t nkeys, const void *items, size_t stride, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		for (size_t k = 0; k < nkeys; k++) {
			char val[128];
			fab_config_value_text(&keys[k], (const char *)items + i * stride, val, sizeof val);
			json_object_set_new(o, keys[k].path, json_string(val));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *config_json(const struct fab_config *c)
{
	json_t *root = json_object();
	size_t nk;
	const struct fab_key_def *keys = fab_config_keys(&nk);
	for (size_t i = 0; i < nk; i++) {
		char val[256], path[160];
		/* how the run was carried out, not what it models: a split run's
		 * document is byte for byte the one thread's */
		if (!strcmp(keys[i].path, "run.threads"))
			continue;
		fab_config_value_text(&keys[i], c, val, sizeof val);
		snprintf(path, sizeof path, "%s", keys[i].path);
		json_t *obj = root;
		char *save = NULL, *part = strtok_r(path, ".", &save);
		for (char *next; (next = strtok_r(NULL, ".", &save)); part = next) {
			json_t *child = json_object_get(obj, part);
			if (!child) {
				child = json_object();
				json_object_set_new(obj, part, child);
			}
			obj = child;
		}
		int ty = keys[i].type;
		if (ty == K_U32 || ty == K_U64 || ty == K_U8)
			json_object_set_new(obj, part, json_integer((json_int_t)strtoll(val, NULL, 10)));
		else if (ty == K_DOUBLE)
			json_object_set_new(obj, part, json_real(strtod(val, NULL)));
		else if (ty == K_BOOL)
			json_object_set_new(obj, part, json_boolean(!strcmp(val, "true")));
		else
			json_object_set_new(obj, part, json_string(val));
	}
	json_t *traffic = json_object_get(root, "traffic");
	size_t nf, ng;
	const struct fab_key_def *fk = fab_config_flow_keys(&nf);
	const struct fab_key_def *gk = fab_config_gen_keys(&ng);
	json_t *flows = items_json(fk, nf, c->traffic.flows, sizeof *c->traffic.flows, c->traffic.nflows);
	json_t *gens = items_json(gk, ng, c->traffic.gens, sizeof *c->traffic.gens, c->traffic.ngens);
	json_object_set_new(traffic, "flows", flows);
	json_object_set_new(traffic, "generators", gens);
	size_t nj, nx;
	const struct fab_key_def *jk = fab_config_job_keys(&nj);
	const struct fab_key_def *xk = fab_config_fault_keys(&nx);
	json_object_set_new(root, "jobs", items_json(jk, nj, c->jobs, sizeof *c->jobs, c->njobs));
	json_object_set_new(root, "faults", items_json(xk, nx, c->faults, sizeof *c->faults, c->nfaults));
	return root;
}

static json_t *topology_json(const struct fab_topo *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "servers", json_integer(t->nservers));
	json_object_set_new(o, "gpus", json_integer(t->ngpus));
	json_object_set_new(o, "nics", json_integer(t->nnics));
	json_object_set_new(o, "switches", json_integer(t->nswitches));
	json_object_set_new(o, "links", json_integer(t->nports / 2));
	json_t *tiers = json_array();
	for (uint32_t i = 0; i < t->ntiers; i++) {
		const struct fab_tier_report *r = &t->tiers[i];
		char ratio[32];
		json_t *x = json_object();
		json_object_set_new(x, "tier", json_integer(r->tier));
		json_object_set_new(x, "name", json_string(r->name));
		json_object_set_new(x, "switches", json_integer(r->switches));
		json_object_set_new(x, "down_bps", json_integer((json_int_t)r->down_bps));
		json_object_set_new(x, "up_bps", json_integer((json_int_t)r->up_bps));
		json_object_set_new(x, "oversubscription",
				    json_string(fab_topo_fmt_ratio(r->down_bps, r->up_bps, ratio, sizeof ratio)));
		json_array_append_new(tiers, x);
	}
	json_object_set_new(o, "tiers", tiers);
	return o;
}

static json_t *json_u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* Path balance per ECMP group: each switch's uplinks (ports toward a higher
 * tier) with the bytes they sent and the queue pairs hashed onto them;
 * groups whose busiest member carries 1.5x the mean list the queue pairs
 * that collide there. */
static json_t *ecmp_groups_json(const struct fab_sim *s)
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
	json_t *groups = json_array();
	for (uint32_t nd = 0; nd < t->nnodes; nd++) {
		const struct fab_node *node = &t->nodes[nd];
		if (node->kind != FAB_NODE_SWITCH)
			continue;
		uint32_t members = 0, busiest = 0;
		double sum = 0, mx = 0;
		for (uint32_t p = node->first_port; p < node->first_port + node->nports; p++) {
			if (t->nodes[t->ports[t->ports[p].peer].node].tier <= node->tier)
				continue;
			members++;
			sum += (double)ps[p].tx_bytes;
			if ((double)ps[p].tx_bytes >= mx) {
				mx = (double)ps[p].tx_bytes;
				busiest = p;
			}
		}
		if (members < 2 || sum <= 0)
			continue;
		double mean = sum / members;
		json_t *g = json_object(), *mem = json_array();
		json_object_set_new(g, "switch", json_string(node->name));
		json_object_set_new(g, "max_over_mean", json_real(mx / mean));
		for (uint32_t p = node->first_port; p < node->first_port + node->nports; p++) {
			if (t->nodes[t->ports[t->ports[p].peer].node].tier <= node->tier)
				continue;
			json_t *m = json_object();
			json_object_set_new(m, "port", json_integer(p - node->first_port));
			json_object_set_new(m, "peer", json_string(t->nodes[t->ports[t->ports[p].peer].node].name));
			json_object_set_new(m, "tx_bytes", json_u64(ps[p].tx_bytes));
			json_object_set_new(m, "qps", json_integer(qps_on[p]));
			json_array_append_new(mem, m);
		}
		json_object_set_new(g, "members", mem);
		if (mx >= 1.5 * mean) {
			/* who collides on the busiest member */
			json_t *col = json_array();
			for (uint32_t q = 0; q < nq && json_array_size(col) < 32; q++) {
				if (!fab_sim_qp_used(s, q))
					continue;
				uint32_t n = fab_sim_qp_path(s, q, path, 64), a, b;
				for (uint32_t i = 0; i < n; i++)
					if (path[i] == busiest) {
						fab_sim_qp_ends(s, q, &a, &b);
						char buf[96];
						snprintf(buf, sizeof buf, "qp %u: %s -> %s", q,
							 t->nodes[t->nic_node[a]].name, t->nodes[t->nic_node[b]].name);
						json_array_append_new(col, json_string(buf));
						break;
					}
			}
			json_object_set_new(g, "colliding", col);
		}
		json_array_append_new(groups, g);
	}
	free(qps_on);
	return groups;
}

/* the flow engine: what its numbers leave out, and its work */
static void flow_engine_json(json_t *doc, const struct fab_config *c, const struct fab_sim *s)
{
	/* what the numbers below do not contain */
	json_t *nm = json_array();
	static const char *const not_modeled[] = {"queueing delay", "PFC",
						  "ECN and DCQCN",  "drops and retransmission",
						  "time series",    "faults other than degrade and slow-gpu"};
	int qm = c->fabric.flow_queues;
	bool fifo = qm != FAB_FLOW_QUEUES_FAIR; /* its queues are modelled; with dcqcn, DCQCN and fluid PFC too */
	for (size_t i = fifo ? 1 : 0; i < FAB_ARRAY_LEN(not_modeled); i++) {
		if (i == 1 && qm == FAB_FLOW_QUEUES_DCQCN && c->fabric.pfc.enabled)
			json_array_append_new(
				nm, json_string("PFC frames (pauses are fluid: rates held, one hop at a time)"));
		else if (i != 2 || qm != FAB_FLOW_QUEUES_DCQCN)
			json_array_append_new(nm, json_string(not_modeled[i]));
	}
	json_object_set_new(doc, "not_modeled", nm);
	uint64_t rec;
	double comp;
	fab_sim_flow_engine_stats(s, &rec, &comp);
	json_object_set_new(doc, "flow_engine",
			    json_pack("{s:s,s:I,s:f}", "queues",
				      qm == FAB_FLOW_QUEUES_DCQCN ? "dcqcn"
					      : fifo              ? "fifo"
								  : "fair",
				      "recomputes", (json_int_t)rec, "mean_component_transfers", comp));
}

static json_t *summary_json(const struct fab_sim *s, const struct fab_summary *smp)
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
static json_t *ecmp_json(const struct fab_sim *s)
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

static json_t *flows_json(const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t nf;
	const struct fab_sim_flow *fl = fab_sim_flows(s, &nf);
	const struct fab_flow_stats *st = fab_sim_flow_stats(s);
	json_t *flows = json_array();
	for (size_t i = 0; i < nf; i++) {
		json_t *x = json_object();
		bool done = st[i].finish_ps != FAB_TIME_NEVER;
		uint64_t f = done ? st[i].finish_ps - fl[i].start_ps : 0;
		json_object_set_new(x, "id", json_integer(fl[i].id));
		json_object_set_new(x, "src", json_integer(fl[i].src_gpu));
		json_object_set_new(x, "dst", json_integer(fl[i].dst_gpu));
		json_object_set_new(x, "src_nic", json_string(t->nodes[t->nic_node[fl[i].src_nic]].name));
		json_object_set_new(x, "dst_nic", json_string(t->nodes[t->nic_node[fl[i].dst_nic]].name));
		json_object_set_new(x, "bytes", json_u64(fl[i].bytes));
		json_object_set_new(x, "priority", json_integer(fl[i].prio));
		json_object_set_new(x, "qps", json_integer(fl[i].qps));
		json_object_set_new(x, "start_ps", json_u64(fl[i].start_ps));
		json_object_set_new(x, "finish_ps", done ? json_u64(st[i].finish_ps) : json_null());
		json_object_set_new(x, "fct_ps", done ? json_u64(f) : json_null());
		json_object_set_new(x, "goodput_bps",
				    done && f ? json_u64((uint64_t)((double)fl[i].bytes * 8e12 / (double)f + 0.5))
					      : json_null());
		json_object_set_new(x, "delivered_bytes", json_u64(st[i].delivered_bytes));
		json_object_set_new(x, "data_pkts", json_u64(st[i].data_pkts));
		json_object_set_new(x, "retx_pkts", json_u64(st[i].retx_pkts));
		json_object_set_new(x, "timeouts", json_u64(st[i].timeouts));
		json_object_set_new(x, "qp_errors", json_u64(st[i].qp_errors));
		json_object_set_new(x, "cnps", json_u64(st[i].cnps));
		json_array_append_new(flows, x);
	}
	return flows;
}

static json_t *ports_json(const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_sim_totals *tot = fab_sim_totals(s);
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	json_t *ports = json_array();
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct fab_port *tp = &t->ports[p];
		const struct fab_node *n = &t->nodes[tp->node];
		const struct fab_port *peer = &t->ports[tp->peer];
		const struct fab_port_stats *x = &ps[p];
		json_t *o = json_object();
		uint64_t ptx = 0, prx = 0, paused = 0;
		json_t *ptxa = json_array(), *prxa = json_array(), *pausa = json_array();
		for (unsigned k = 0; k < FAB_NPRIO; k++) {
			ptx += x->pause_tx[k];
			prx += x->pause_rx[k];
			paused += x->paused_ps[k];
			json_array_append_new(ptxa, json_u64(x->pause_tx[k]));
			json_array_append_new(prxa, json_u64(x->pause_rx[k]));
			json_array_append_new(pausa, json_u64(x->paused_ps[k]));
		}
		json_object_set_new(o, "node", json_string(n->name));
		json_object_set_new(o, "port", json_integer(p - n->first_port));
		json_object_set_new(o, "peer", json_string(t->nodes[peer->node].name));
		json_object_set_new(o, "peer_port", json_integer(tp->peer - t->nodes[peer->node].first_port));
		json_object_set_new(o, "rate_bps", json_u64(tp->rate_bps));
		json_object_set_new(o, "tx_bytes", json_u64(x->tx_bytes));
		json_object_set_new(o, "rx_bytes", json_u64(x->rx_bytes));
		json_object_set_new(o, "tx_pkts", json_u64(x->tx_pkts));
		json_object_set_new(o, "rx_pkts", json_u64(x->rx_pkts));
		json_object_set_new(o, "drops", json_u64(x->drops));
		json_object_set_new(o, "rx_errors", json_u64(x->rx_errors));
		json_object_set_new(o, "ecn_marks", json_u64(x->ecn_marks));
		json_object_set_new(o, "pause_tx", json_u64(ptx));
		json_object_set_new(o, "pause_rx", json_u64(prx));
		json_object_set_new(o, "paused_ps", json_u64(paused));
		json_object_set_new(o, "max_queue_bytes", json_u64(x->max_queue_bytes));
		json_object_set_new(o, "mean_queue_bytes",
				    json_u64(tot->end_ps ? (uint64_t)(x->queue_area / (double)tot->end_ps + 0.5) : 0));
		json_object_set_new(o, "utilization",
				    json_real(tot->end_ps ? (double)x->tx_wire_bytes * 8e12 /
							      ((double)tp->rate_bps * (double)tot->end_ps)
							  : 0.0));
		json_object_set_new(o, "watchdog_trips", json_u64(x->watchdog_trips));
		json_object_set_new(o, "unroutable", json_u64(x->unroutable));
		if (n->kind == FAB_NODE_SWITCH) {
			fab_bytes hr, xoff;
			fab_sim_port_pfc(s, p, &hr, &xoff);
			json_object_set_new(o, "pfc_headroom_bytes", json_u64(hr));
			json_object_set_new(o, "pfc_xoff_bytes", json_u64(xoff));
		}
		json_object_set_new(o, "pause_tx_by_prio", ptxa);
		json_object_set_new(o, "pause_rx_by_prio", prxa);
		json_object_set_new(o, "paused_ps_by_prio", pausa);
		json_array_append_new(ports, o);
	}
	return ports;
}

/* the time series, switch ports and flows */
static void series_json(json_t *doc, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t nser;
	const struct fab_series_row *ser = fab_sim_series(s, &nser);
	json_t *rows = json_array();
	for (size_t i = 0; i < nser; i++) {
		const struct fab_port *tp = &t->ports[ser[i].port];
		const struct fab_node *n = &t->nodes[tp->node];
		json_t *o = json_object();
		json_object_set_new(o, "t_ps", json_u64(ser[i].t_ps));
		json_object_set_new(o, "node", json_string(n->name));
		json_object_set_new(o, "port", json_integer(ser[i].port - n->first_port));
		json_object_set_new(o, "queue_bytes", json_u64(ser[i].queue_bytes));
		json_object_set_new(o, "tx_bytes", json_u64(ser[i].tx_bytes));
		json_object_set_new(o, "tx_wire_bytes", json_u64(ser[i].tx_wire_bytes));
		json_object_set_new(o, "drops", json_u64(ser[i].drops));
		json_object_set_new(o, "ecn_marks", json_u64(ser[i].ecn_marks));
		json_object_set_new(o, "pause_tx", json_u64(ser[i].pause_tx));
		json_object_set_new(o, "pause_rx", json_u64(ser[i].pause_rx));
		json_array_append_new(rows, o);
	}
	json_object_set_new(doc, "series", rows);
	size_t nfs;
	const struct fab_flow_series_row *fs = fab_sim_flow_series(s, &nfs);
	json_t *frows = json_array();
	for (size_t i = 0; i < nfs; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "t_ps", json_u64(fs[i].t_ps));
		json_object_set_new(o, "flow", json_integer(fs[i].flow));
		json_object_set_new(o, "delivered_bytes", json_u64(fs[i].delivered_bytes));
		json_object_set_new(o, "rate_bps", json_u64((uint64_t)(fs[i].rate_bps + 0.5)));
		json_array_append_new(frows, o);
	}
	json_object_set_new(doc, "flow_series", frows);
}

json_t *fab_result_json(const struct fab_config *c, const struct fab_sim *s)
{
	struct fab_summary sm;
	fab_summary_compute(s, &sm);
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string(FAB_RESULT_SCHEMA));
	json_object_set_new(doc, "kind", json_string("sim"));
	bool flow = c->fabric.engine == FAB_ENGINE_FLOW;
	json_object_set_new(doc, "engine", json_string(flow ? "flow" : "packet"));
	if (flow)
		flow_engine_json(doc, c, s);
	json_object_set_new(doc, "scenario", json_string(c->origin));
	json_object_set_new(doc, "seed", json_u64(c->run.seed));
	json_object_set_new(doc, "config", config_json(c));
	json_object_set_new(doc, "topology", topology_json(fab_sim_topo(s)));
	json_object_set_new(doc, "summary", summary_json(s, &sm));
	json_object_set_new(doc, "ecmp", ecmp_json(s));
	json_object_set_new(doc, "ecmp_groups", ecmp_groups_json(s));
	json_object_set_new(doc, "flows", flows_json(s));
	json_t *sd = fab_slowdown_json(s);
	if (sd)
		json_object_set_new(doc, "slowdown", sd);
	json_object_set_new(doc, "ports", ports_json(s));
	if (c->fabric.series_interval_ps)
		series_json(doc, s);
	return doc;
}

int fab_result_write_flows_csv(FILE *f, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(s, &n);
	const struct fab_flow_stats *st = fab_sim_flow_stats(s);
	fprintf(f,
		"id,src_gpu,dst_gpu,src_nic,dst_nic,bytes,priority,qps,start_ps,finish_ps,"
		"fct_ps,goodput_bps,retx_pkts,timeouts,cnps,qp_errors\n");
	for (size_t i = 0; i < n; i++) {
		bool done = st[i].finish_ps != FAB_TIME_NEVER;
		uint64_t fct = done ? st[i].finish_ps - fl[i].start_ps : 0;
		fprintf(f, "%u,%u,%u,%s,%s,%llu,%u,%u,%llu,", fl[i].id, fl[i].src_gpu, fl[i].dst_gpu,
			t->nodes[t->nic_node[fl[i].src_nic]].name, t->nodes[t->nic_node[fl[i].dst_nic]].name,
			(unsigned long long)fl[i].bytes, fl[i].prio, fl[i].qps, (unsigned long long)fl[i].start_ps);
		if (done)
			fprintf(f, "%llu,%llu,%llu,", (unsigned long long)st[i].finish_ps, (unsigned long long)fct,
				(unsigned long long)(fct ? (double)fl[i].bytes * 8e12 / (double)fct + 0.5 : 0));
		else
			fprintf(f, ",,,");
		fprintf(f, "%llu,%llu,%llu,%u\n", (unsigned long long)st[i].retx_pkts,
			(unsigned long long)st[i].timeouts, (unsigned long long)st[i].cnps, st[i].qp_errors);
	}
	return ferror(f) ? FAB_EIO : 0;
}

int fab_result_write_ports_csv(FILE *f, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	fprintf(f,
		"node,port,peer,peer_port,rate_bps,tx_bytes,rx_bytes,tx_pkts,rx_pkts,drops,"
		"ecn_marks,pause_tx,pause_rx,paused_ps,max_queue_bytes,rx_errors\n");
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct fab_port *tp = &t->ports[p];
		const struct fab_node *n = &t->nodes[tp->node];
		const struct fab_node *pn = &t->nodes[t->ports[tp->peer].node];
		const struct fab_port_stats *x = &ps[p];
		uint64_t ptx = 0, prx = 0, paused = 0;
		for (unsigned k = 0; k < FAB_NPRIO; k++) {
			ptx += x->pause_tx[k];
			prx += x->pause_rx[k];
			paused += x->paused_ps[k];
		}
		fprintf(f, "%s,%u,%s,%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", n->name,
			p - n->first_port, pn->name, tp->peer - pn->first_port, (unsigned long long)tp->rate_bps,
			(unsigned long long)x->tx_bytes, (unsigned long long)x->rx_bytes,
			(unsigned long long)x->tx_pkts, (unsigned long long)x->rx_pkts, (unsigned long long)x->drops,
			(unsigned long long)x->ecn_marks, (unsigned long long)ptx, (unsigned long long)prx,
			(unsigned long long)paused, (unsigned long long)x->max_queue_bytes,
			(unsigned long long)x->rx_errors);
	}
	return ferror(f) ? FAB_EIO : 0;
}

int fab_result_write_series_jsonl(FILE *f, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t n;
	const struct fab_series_row *r = fab_sim_series(s, &n);
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = &t->nodes[t->ports[r[i].port].node];
		fprintf(f,
			"{\"t_ps\": %llu, \"node\": \"%s\", \"port\": %u, \"queue_bytes\": %llu, \"tx_bytes\": %llu, "
			"\"drops\": %u, \"ecn_marks\": %u, \"pause_tx\": %u, \"pause_rx\": %u}\n",
			(unsigned long long)r[i].t_ps, nd->name, r[i].port - nd->first_port,
			(unsigned long long)r[i].queue_bytes, (unsigned long long)r[i].tx_bytes, r[i].drops,
			r[i].ecn_marks, r[i].pause_tx, r[i].pause_rx);
	}
	return ferror(f) ? FAB_EIO : 0;
}

int fab_result_write_series_csv(FILE *f, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t n;
	const struct fab_series_row *r = fab_sim_series(s, &n);
	fprintf(f, "t_ps,node,port,queue_bytes,tx_bytes,tx_wire_bytes,drops,ecn_marks,pause_tx,pause_rx\n");
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = &t->nodes[t->ports[r[i].port].node];
		fprintf(f, "%llu,%s,%u,%llu,%llu,%llu,%u,%u,%u,%u\n", (unsigned long long)r[i].t_ps, nd->name,
			r[i].port - nd->first_port, (unsigned long long)r[i].queue_bytes,
			(unsigned long long)r[i].tx_bytes, (unsigned long long)r[i].tx_wire_bytes, r[i].drops,
			r[i].ecn_marks, r[i].pause_tx, r[i].pause_rx);
	}
	return ferror(f) ? FAB_EIO : 0;
}

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.2f MiB", (double)b / (double)(1ull << 20));
	else if (b >= 1024)
		snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	return buf;
}

static const char *ftime(fab_time_ps ps, char *buf, size_t len)
{
	double v = (double)ps;
	if (ps >= FAB_PS_PER_S)
		snprintf(buf, len, "%.3f s", v / 1e12);
	else if (ps >= FAB_PS_PER_MS)
		snprintf(buf, len, "%.3f ms", v / 1e9);
	else if (ps >= FAB_PS_PER_US)
		snprintf(buf, len, "%.3f us", v / 1e6);
	else
		snprintf(buf, len, "%.3f ns", v / 1e3);
	return buf;
}

int fab_result_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_sim_totals *tot = fab_sim_totals(s);
	struct fab_summary sm;
	fab_summary_compute(s, &sm);
	char a[32], b[32], d[32], e[32];
	static const char *kinds[] = {"spine-leaf", "fat-tree", "file", "ns3"};
	fprintf(f, "fabscope sim: %s, seed %llu%s\n", c->origin, (unsigned long long)c->run.seed,
		c->fabric.engine != FAB_ENGINE_FLOW ? ""
			: c->fabric.flow_queues == FAB_FLOW_QUEUES_FIFO
			? ", flow engine, FIFO queues (no PFC, ECN or drops)"
			: ", flow engine (no queues, PFC, ECN or drops)");
	fprintf(f, "topology: %s, %u servers x %u GPUs = %u GPUs, %u NICs, %u switches, %u links\n",
		kinds[c->topo.kind], t->nservers, t->gpus_per_server, t->ngpus, t->nnics, t->nswitches, t->nports / 2);
	for (uint32_t i = 0; i < t->ntiers; i++) {
		const struct fab_tier_report *r = &t->tiers[i];
		char ratio[32];
		if (r->up_bps)
			fprintf(f, "  %-11s %4u switches  down %s  up %s  oversubscription %s\n", r->name, r->switches,
				fab_fmt_rate(r->down_bps, a, sizeof a), fab_fmt_rate(r->up_bps, b, sizeof b),
				fab_topo_fmt_ratio(r->down_bps, r->up_bps, ratio, sizeof ratio));
		else
			fprintf(f, "  %-11s %4u switches  down %s  (top tier)\n", r->name, r->switches,
				fab_fmt_rate(r->down_bps, a, sizeof a));
	}
	if (c->fabric.transport == FAB_TRANSPORT_TCP) {
		static const char *ccs[] = {"NewReno", "CUBIC", "DCTCP"};
		fprintf(f, "fabric: TCP (%s), MSS %u, buffer %s/switch, PFC %s, ECN %s\n", ccs[c->fabric.tcp.cc],
			c->fabric.mtu, fab_fmt_bytes(c->fabric.buffer_bytes, a, sizeof a),
			c->fabric.pfc.enabled ? "on" : "off", c->fabric.ecn.enabled ? "on" : "off");
	} else if (c->fabric.transport == FAB_TRANSPORT_IB) {
		char vb[32];
		fprintf(f,
			"fabric: InfiniBand, MTU %u, buffer %s/switch, credits %s per lane and port, congestion control %s\n",
			c->fabric.mtu, fab_fmt_bytes(c->fabric.buffer_bytes, a, sizeof a),
			fab_fmt_bytes(c->fabric.ib_vl_buffer_bytes, vb, sizeof vb),
			c->fabric.dcqcn.enabled ? "on" : "off");
	} else {
		fprintf(f, "fabric: MTU %u, buffer %s/switch, PFC %s, ECN %s, DCQCN %s\n", c->fabric.mtu,
			fab_fmt_bytes(c->fabric.buffer_bytes, a, sizeof a), c->fabric.pfc.enabled ? "on" : "off",
			c->fabric.ecn.enabled ? "on" : "off", c->fabric.dcqcn.enabled ? "on" : "off");
	}
	fprintf(f, "traffic: %zu flows, %s\n", sm.flows, human_bytes(sm.bytes, a, sizeof a));
	fprintf(f, "\nresult: %zu of %zu flows done in %s simulated (%llu events)%s\n", sm.flows_done, sm.flows,
		ftime(tot->end_ps, a, sizeof a), (unsigned long long)tot->events,
		tot->stopped_by_end_time ? ", stopped at run.end" : "");
	if (sm.flows_done) {
		fprintf(f, "  FCT       min %s  p50 %s  p99 %s  max %s\n", ftime(sm.fct_min, a, sizeof a),
			ftime(sm.fct_p50, b, sizeof b), ftime(sm.fct_p99, d, sizeof d), ftime(sm.fct_max, e, sizeof e));
		fprintf(f, "  goodput   %.2f Gbps mean per flow\n", sm.goodput_mean_bps / 1e9);
	}
	fprintf(f, "  drops %llu, lost on links %llu, retransmitted packets %llu, timeouts %llu\n",
		(unsigned long long)sm.drops, (unsigned long long)tot->wire_losses, (unsigned long long)sm.retx_pkts,
		(unsigned long long)sm.timeouts);
	if (sm.qp_errors)
		fprintf(f, "  queue pairs failed (retry count exceeded, their flows never finish): %llu\n",
			(unsigned long long)sm.qp_errors);
	if (c->fabric.transport == FAB_TRANSPORT_TCP)
		fprintf(f, "  ECN marks %llu, ECN echoes %llu, PAUSE frames %llu; host CPU %.6f s\n",
			(unsigned long long)sm.ecn_marks, (unsigned long long)sm.cnps,
			(unsigned long long)sm.pause_frames, tot->host_cpu_ps / 1e12);
	else
		fprintf(f, "  ECN marks %llu, CNPs %llu, PAUSE frames %llu\n", (unsigned long long)sm.ecn_marks,
			(unsigned long long)sm.cnps, (unsigned long long)sm.pause_frames);
	if (sm.ecmp_max_over_mean > 0)
		fprintf(f, "  ECMP: busiest leaf uplink carried %.2fx the mean\n", sm.ecmp_max_over_mean);

	/* the ports where something happened, busiest queue first */
	const struct fab_port_stats *ps = fab_sim_port_stats(s);
	uint32_t top[5];
	size_t ntop = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		if (!ps[p].max_queue_bytes)
			continue;
		size_t k = ntop < 5 ? ntop++ : 5;
		while (k > 0 && ps[top[k - 1]].max_queue_bytes < ps[p].max_queue_bytes) {
			if (k < 5)
				top[k] = top[k - 1];
			k--;
		}
		if (k < 5)
			top[k] = p;
	}
	if (ntop) {
		fprintf(f, "\nbusiest queues:\n");
		for (size_t i = 0; i < ntop; i++) {
			const struct fab_port *tp = &t->ports[top[i]];
			const struct fab_port_stats *x = &ps[top[i]];
			uint64_t ptx = 0, prx = 0;
			for (unsigned k = 0; k < FAB_NPRIO; k++) {
				ptx += x->pause_tx[k];
				prx += x->pause_rx[k];
			}
			fprintf(f, "  %-14s -> %-14s max queue %-10s  drops %-6llu ECN %-6llu PAUSE tx %llu rx %llu\n",
				t->nodes[tp->node].name, t->nodes[t->ports[tp->peer].node].name,
				human_bytes(x->max_queue_bytes, a, sizeof a), (unsigned long long)x->drops,
				(unsigned long long)x->ecn_marks, (unsigned long long)ptx, (unsigned long long)prx);
		}
	}
	return ferror(f) ? FAB_EIO : 0;
}
