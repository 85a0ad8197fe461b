/*
 * result.c - build the result document, CSV tables and the text summary
 * from a finished run.
 */
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "result_int.h"
#include "../base/sort.h"
#include "jsonw.h"
#include "slowdown.h"

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
		if (!strcmp(keys[i].path, "run.threads") || !strcmp(keys[i].path, "run.partitions"))
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
	static const char *const not_modeled[] = {"queueing delay", "PFC", "ECN and DCQCN", "drops and retransmission",
						  "faults other than degrade and slow-gpu"};
	int qm = c->fabric.flow_queues;
	bool fifo = qm != FAB_FLOW_QUEUES_FAIR; /* its queues are modelled; with dcqcn, DCQCN and fluid PFC too */
	bool cc = fab_flow_runs_dcqcn(&c->fabric), pfc = fab_flow_runs_pfc(&c->fabric);
	for (size_t i = fifo ? 1 : 0; i < FAB_ARRAY_LEN(not_modeled); i++) {
		if (i == 1 && pfc)
			json_array_append_new(
				nm,
				json_string(fab_sim_pfc_uncovered(s, &(uint32_t){0}, &(double){0})
						    ? "PFC frames (pauses are fluid: rates held, one hop at a time; "
						      "not to be trusted where the buffer does not cover the "
						      "headroom and every threshold is 0)"
						    : "PFC frames (pauses are fluid: rates held, one hop at a time)"));
		else if (i != 2 || !cc)
			json_array_append_new(nm, json_string(not_modeled[i]));
		else if (c->fabric.dcqcn.variant == FAB_DCQCN_PAPER &&
			 c->fabric.dcqcn.clamp_target) /* (doc/flow.md: measured 12-28% long on p50) */
			json_array_append_new(nm,
					      json_string("DCQCN's clamped target rate (clamp_target): the fluid "
							  "cuts are not to be trusted with it"));
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

/* ---- the long tables: flows, series, flow series and ports ----
 *
 * A 50,000-flow run's table as jansson values took longer to build, write
 * and free than the flow engine took to run it, so fab_result_write_json
 * writes the long tables straight from the run (the ports' too: jansson
 * took 6% of the flow engine's FB_Hadoop command for its 960 ports).
 * Each row is described once (the row functions below) and either built
 * as a jansson object (the document fab_result_json gives) or written
 * through the JSON writer (jsonw.h), which writes what jansson writes of
 * that object: the same bytes either way. */

/* the lean document's stand-ins for the long tables */
#define MARK_FLOWS                                                                                                     \
	"\x01"                                                                                                         \
	"fabscope:flows"
#define MARK_SERIES                                                                                                    \
	"\x01"                                                                                                         \
	"fabscope:series"
#define MARK_FLOW_SERIES                                                                                               \
	"\x01"                                                                                                         \
	"fabscope:flow_series"
#define MARK_PORTS                                                                                                     \
	"\x01"                                                                                                         \
	"fabscope:ports"

enum rows { ROWS_FLOWS, ROWS_SERIES, ROWS_FLOW_SERIES, ROWS_PORTS, ROWS_NONE };

/* A row goes either into a jansson object or out through a writer. */
struct sink {
	json_t *obj;
	struct jw *w;
	const struct fab_topo *t;
	const struct fab_series_row *ser;
	const struct fab_flow_series_row *fser;
	const struct fab_sim *s; /* the flows' and the ports' tables */
	const struct fab_port_stats *ps;
	const struct fab_sim_totals *tot;
	size_t n;
};

JW_INLINE void sk_int(struct sink *k, const char *key, long long v)
{
	if (k->obj)
		json_object_set_new(k->obj, key, json_integer(v));
	else
		jw_kint(k->w, key, v);
}

/* unsigned counters as json_u64 has them */
JW_INLINE void sk_u64(struct sink *k, const char *key, uint64_t v)
{
	sk_int(k, key, (long long)v);
}

JW_INLINE void sk_null(struct sink *k, const char *key)
{
	if (k->obj)
		json_object_set_new(k->obj, key, json_null());
	else
		jw_knull(k->w, key);
}

/* a node's name (a name that is not UTF-8 leaves the key out, as
 * json_string does) */
JW_INLINE void sk_node(struct sink *k, const char *key, uint32_t node)
{
	const char *name = k->t->nodes[node].name;
	if (k->obj)
		json_object_set_new(k->obj, key, json_string(name));
	else
		jw_kstr(k->w, key, name);
}

static void sk_real(struct sink *k, const char *key, double v)
{
	if (k->obj) {
		json_object_set_new(k->obj, key, json_real(v));
		return;
	}
	jw_key(k->w, key);
	jw_real(k->w, v);
}

/* a port's counters per priority, an array of FAB_NPRIO */
static void sk_prio(struct sink *k, const char *key, const uint64_t *v)
{
	if (k->obj) {
		json_t *a = json_array();
		for (unsigned i = 0; i < FAB_NPRIO; i++)
			json_array_append_new(a, json_u64(v[i]));
		json_object_set_new(k->obj, key, a);
		return;
	}
	jw_key(k->w, key);
	jw_arr(k->w);
	for (unsigned i = 0; i < FAB_NPRIO; i++)
		jw_int(k->w, (long long)v[i]);
	jw_arr_end(k->w);
}

static void flow_row(struct sink *k, size_t i)
{
	const struct fab_topo *t = k->t;
	const struct fab_sim_flow *fl = fab_sim_flow_spec(k->s, i);
	struct fab_flow_stats stv = fab_sim_flow_stat(k->s, i);
	const struct fab_flow_stats *st = &stv;
	bool done = st->finish_ps != FAB_TIME_NEVER;
	uint64_t f = done ? st->finish_ps - fl->start_ps : 0;
	sk_int(k, "id", fl->id);
	sk_int(k, "src", fl->src_gpu);
	sk_int(k, "dst", fl->dst_gpu);
	sk_node(k, "src_nic", t->nic_node[fl->src_nic]);
	sk_node(k, "dst_nic", t->nic_node[fl->dst_nic]);
	sk_u64(k, "bytes", fl->bytes);
	sk_int(k, "priority", fl->prio);
	sk_int(k, "qps", fl->qps);
	sk_u64(k, "start_ps", fl->start_ps);
	if (done) {
		sk_u64(k, "finish_ps", st->finish_ps);
		sk_u64(k, "fct_ps", f);
	} else {
		sk_null(k, "finish_ps");
		sk_null(k, "fct_ps");
	}
	if (done && f)
		sk_u64(k, "goodput_bps", goodput_bps(fl->bytes, f));
	else
		sk_null(k, "goodput_bps");
	sk_u64(k, "delivered_bytes", st->delivered_bytes);
	sk_u64(k, "data_pkts", st->data_pkts);
	sk_u64(k, "retx_pkts", st->retx_pkts);
	sk_u64(k, "timeouts", st->timeouts);
	sk_u64(k, "qp_errors", st->qp_errors);
	sk_u64(k, "cnps", st->cnps);
}

static void series_row(struct sink *k, size_t i)
{
	const struct fab_series_row *r = &k->ser[i];
	const struct fab_port *tp = &k->t->ports[r->port];
	sk_u64(k, "t_ps", r->t_ps);
	sk_node(k, "node", tp->node);
	sk_int(k, "port", r->port - k->t->nodes[tp->node].first_port);
	sk_u64(k, "queue_bytes", r->queue_bytes);
	sk_u64(k, "tx_bytes", r->tx_bytes);
	sk_u64(k, "tx_wire_bytes", r->tx_wire_bytes);
	sk_u64(k, "drops", r->drops);
	sk_u64(k, "ecn_marks", r->ecn_marks);
	sk_u64(k, "pause_tx", r->pause_tx);
	sk_u64(k, "pause_rx", r->pause_rx);
}

static void flow_series_row(struct sink *k, size_t i)
{
	const struct fab_flow_series_row *r = &k->fser[i];
	sk_u64(k, "t_ps", r->t_ps);
	sk_int(k, "flow", r->flow);
	sk_u64(k, "delivered_bytes", r->delivered_bytes);
	sk_u64(k, "rate_bps", (uint64_t)(r->rate_bps + 0.5));
}

static void port_row(struct sink *k, size_t p)
{
	const struct fab_topo *t = k->t;
	const struct fab_port *tp = &t->ports[p];
	const struct fab_node *n = &t->nodes[tp->node];
	const struct fab_port *peer = &t->ports[tp->peer];
	const struct fab_port_stats *x = &k->ps[p];
	uint64_t ptx = 0, prx = 0, paused = 0;
	for (unsigned j = 0; j < FAB_NPRIO; j++) {
		ptx += x->pause_tx[j];
		prx += x->pause_rx[j];
		paused += x->paused_ps[j];
	}
	sk_node(k, "node", tp->node);
	sk_int(k, "port", (long long)(p - n->first_port));
	sk_node(k, "peer", peer->node);
	sk_int(k, "peer_port", (long long)(tp->peer - t->nodes[peer->node].first_port));
	sk_u64(k, "rate_bps", tp->rate_bps);
	sk_u64(k, "tx_bytes", x->tx_bytes);
	sk_u64(k, "rx_bytes", x->rx_bytes);
	sk_u64(k, "tx_pkts", x->tx_pkts);
	sk_u64(k, "rx_pkts", x->rx_pkts);
	sk_u64(k, "drops", x->drops);
	sk_u64(k, "rx_errors", x->rx_errors);
	sk_u64(k, "ecn_marks", x->ecn_marks);
	sk_u64(k, "pause_tx", ptx);
	sk_u64(k, "pause_rx", prx);
	sk_u64(k, "paused_ps", paused);
	sk_u64(k, "max_queue_bytes", x->max_queue_bytes);
	sk_u64(k, "mean_queue_bytes", k->tot->end_ps ? (uint64_t)(x->queue_area / (double)k->tot->end_ps + 0.5) : 0);
	sk_real(k, "utilization",
		k->tot->end_ps ? (double)x->tx_wire_bytes * 8e12 / ((double)tp->rate_bps * (double)k->tot->end_ps)
			       : 0.0);
	sk_u64(k, "watchdog_trips", x->watchdog_trips);
	sk_u64(k, "unroutable", x->unroutable);
	if (n->kind == FAB_NODE_SWITCH) {
		fab_bytes hr, xoff;
		fab_sim_port_pfc(k->s, (uint32_t)p, &hr, &xoff);
		sk_u64(k, "pfc_headroom_bytes", hr);
		sk_u64(k, "pfc_xoff_bytes", xoff);
	}
	sk_prio(k, "pause_tx_by_prio", x->pause_tx);
	sk_prio(k, "pause_rx_by_prio", x->pause_rx);
	sk_prio(k, "paused_ps_by_prio", x->paused_ps);
}

/* the table's rows into k; how many */
static size_t rows_open(struct sink *k, const struct fab_sim *s, enum rows which)
{
	k->n = 0;
	if (which == ROWS_FLOWS) {
		k->s = s;
		k->n = fab_sim_nflows(s);
	} else if (which == ROWS_SERIES) {
		k->ser = fab_sim_series(s, &k->n);
	} else if (which == ROWS_PORTS) {
		k->s = s;
		k->ps = fab_sim_port_stats(s);
		k->tot = fab_sim_totals(s);
		k->n = k->t->nports;
	} else {
		k->fser = fab_sim_flow_series(s, &k->n);
	}
	return k->n;
}

static void row(struct sink *k, enum rows which, size_t i)
{
	if (which == ROWS_FLOWS)
		flow_row(k, i);
	else if (which == ROWS_SERIES)
		series_row(k, i);
	else if (which == ROWS_PORTS)
		port_row(k, i);
	else
		flow_series_row(k, i);
}

static json_t *rows_json(const struct fab_sim *s, enum rows which)
{
	json_t *a = json_array();
	struct sink k = {.t = fab_sim_topo(s)};
	for (size_t i = 0, n = rows_open(&k, s, which); i < n; i++) {
		k.obj = json_object();
		row(&k, which, i);
		json_array_append_new(a, k.obj);
	}
	return a;
}

/* the table through the writer, after its key */
static void rows_write(struct sink *k, const struct fab_sim *s, enum rows which)
{
	jw_arr(k->w);
	for (size_t i = 0, n = rows_open(k, s, which); i < n; i++) {
		jw_obj(k->w);
		row(k, which, i);
		jw_obj_end(k->w);
	}
	jw_arr_end(k->w);
}

/* which table a member of the lean document stands in for */
static enum rows stand_in(const json_t *v)
{
	static const char *const marks[] = {[ROWS_FLOWS] = MARK_FLOWS,
					    [ROWS_SERIES] = MARK_SERIES,
					    [ROWS_FLOW_SERIES] = MARK_FLOW_SERIES,
					    [ROWS_PORTS] = MARK_PORTS};
	if (json_is_string(v))
		for (int i = 0; i < ROWS_NONE; i++)
			if (!strcmp(json_string_value(v), marks[i]))
				return (enum rows)i;
	return ROWS_NONE;
}

/* the lean document walked member by member, each stand-in replaced by its
 * table written from the run */
int fab_result_write_json(FILE *f, json_t *lean, const struct fab_sim *s)
{
	struct jw *w = fab_xcalloc(1, sizeof *w);
	jw_init(w, f, JSON_INDENT(2));
	struct sink k = {.w = w, .t = fab_sim_topo(s)};
	const char *key;
	json_t *v;
	jw_obj(w);
	json_object_foreach(lean, key, v)
	{
		enum rows which = stand_in(v);
		jw_key(w, key);
		if (which == ROWS_NONE)
			jw_json(w, v);
		else
			rows_write(&k, s, which);
	}
	jw_obj_end(w);
	int rc = jw_end(w);
	free(w);
	return rc;
}

static json_t *result_doc(const struct fab_config *c, const struct fab_sim *s, bool lean)
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
	json_object_set_new(doc, "flows", lean ? json_string(MARK_FLOWS) : rows_json(s, ROWS_FLOWS));
	json_t *sd = fab_slowdown_json(s);
	if (sd)
		json_object_set_new(doc, "slowdown", sd);
	json_object_set_new(doc, "ports", lean ? json_string(MARK_PORTS) : rows_json(s, ROWS_PORTS));
	if (c->fabric.series_interval_ps) {
		json_object_set_new(doc, "series", lean ? json_string(MARK_SERIES) : rows_json(s, ROWS_SERIES));
		json_object_set_new(doc, "flow_series",
				    lean ? json_string(MARK_FLOW_SERIES) : rows_json(s, ROWS_FLOW_SERIES));
	}
	return doc;
}

json_t *fab_result_json(const struct fab_config *c, const struct fab_sim *s)
{
	return result_doc(c, s, false);
}

json_t *fab_result_json_lean(const struct fab_config *c, const struct fab_sim *s)
{
	return result_doc(c, s, true);
}
