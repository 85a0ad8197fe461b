/*
 * result_rows.c - the result document's long tables: flows, ports, series
 * and flow series, a row per flow, port or sample.
 *
 * A 50,000-flow run's table as jansson values took longer to build, write
 * and free than the flow engine took to run it, so fab_result_write_json
 * writes the long tables straight from the run (the ports' too: jansson
 * took 6% of the flow engine's FB_Hadoop command for its 960 ports).
 * Each row is described once (the row functions below) and either built
 * as a jansson object (the document fab_result_json gives) or written
 * through the JSON writer (jsonw.h), which writes what jansson writes of
 * that object: the same bytes either way.
 */
#include "result_int.h"
#include "jsonw.h"

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
static size_t rows_open(struct sink *k, const struct fab_sim *s, enum res_rows which)
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

static void row(struct sink *k, enum res_rows which, size_t i)
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

json_t *res_rows_json(const struct fab_sim *s, enum res_rows which)
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
void res_rows_write(struct jw *w, const struct fab_sim *s, enum res_rows which)
{
	struct sink k = {.w = w, .t = fab_sim_topo(s)};
	jw_arr(w);
	for (size_t i = 0, n = rows_open(&k, s, which); i < n; i++) {
		jw_obj(w);
		row(&k, which, i);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
