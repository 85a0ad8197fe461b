/*
 * result_text.c - the run's CSV tables (flows, ports, series; series as
 * JSON lines) and the text summary.
 */
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "result_int.h"
#include "jsonw.h"

int fab_result_write_flows_csv(FILE *f, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	size_t n = fab_sim_nflows(s);
	struct jw_out *o = fab_xcalloc(1, sizeof *o);
	jw_out_init(o, f);
	static const char head[] = "id,src_gpu,dst_gpu,src_nic,dst_nic,bytes,priority,qps,start_ps,finish_ps,"
				   "fct_ps,goodput_bps,retx_pkts,timeouts,cnps,qp_errors\n";
	jw_out_put(o, head, sizeof head - 1);
	for (size_t i = 0; i < n; i++) {
		const struct fab_sim_flow *fl = fab_sim_flow_spec(s, i);
		struct fab_flow_stats st = fab_sim_flow_stat(s, i);
		bool done = st.finish_ps != FAB_TIME_NEVER;
		uint64_t fct = done ? st.finish_ps - fl->start_ps : 0;
		const char *src = t->nodes[t->nic_node[fl->src_nic]].name;
		const char *dst = t->nodes[t->nic_node[fl->dst_nic]].name;
		jw_out_u64c(o, fl->id);
		jw_out_u64c(o, fl->src_gpu);
		jw_out_u64c(o, fl->dst_gpu);
		jw_out_put(o, src, strlen(src));
		jw_out_put(o, ",", 1);
		jw_out_put(o, dst, strlen(dst));
		jw_out_put(o, ",", 1);
		jw_out_u64c(o, fl->bytes);
		jw_out_u64c(o, fl->prio);
		jw_out_u64c(o, fl->qps);
		jw_out_u64c(o, fl->start_ps);
		if (done) {
			jw_out_u64c(o, st.finish_ps);
			jw_out_u64c(o, fct);
			jw_out_u64c(o, goodput_bps(fl->bytes, fct));
		} else {
			jw_out_put(o, ",,,", 3);
		}
		jw_out_u64c(o, st.retx_pkts);
		jw_out_u64c(o, st.timeouts);
		jw_out_u64c(o, st.cnps);
		jw_out_u64(o, st.qp_errors);
		jw_out_put(o, "\n", 1);
	}
	int rc = jw_out_end(o) || ferror(f) ? FAB_EIO : 0;
	free(o);
	return rc;
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

/* the summary's first line: the flow engine's model, and what it leaves
 * out (as the document's not_modeled does) */
static const char *engine_label(const struct fab_config *c)
{
	if (c->fabric.engine != FAB_ENGINE_FLOW)
		return "";
	if (fab_flow_runs_pfc(&c->fabric)) /* (doc/flow.md: a notification a feedback window at most) */
		return ", flow engine, fluid queues, DCQCN and pauses (ECN marks not counted, CNPs one a feedback "
		       "window at most; no drops)";
	if (fab_flow_runs_dcqcn(&c->fabric))
		return ", flow engine, fluid queues and DCQCN (ECN marks not counted, CNPs one a feedback window at "
		       "most; no PFC or drops)";
	return c->fabric.flow_queues == FAB_FLOW_QUEUES_FAIR ? ", flow engine (no queues, PFC, ECN or drops)"
							     : ", flow engine, FIFO queues (no PFC, ECN or drops)";
}

/* a port by its node's name, and where parallel links join the node to
 * the same peer, its number on the node (as ports.csv and diagnose number
 * it): "leaf2 port 31" */
static void port_label(const struct fab_topo *t, uint32_t port, char *buf, size_t n)
{
	const struct fab_port *tp = &t->ports[port];
	const struct fab_node *nd = &t->nodes[tp->node];
	uint32_t peer_node = t->ports[tp->peer].node;
	bool parallel = false;
	for (uint32_t q = nd->first_port; q < nd->first_port + nd->nports && !parallel; q++)
		parallel = q != port && t->ports[t->ports[q].peer].node == peer_node;
	if (parallel)
		snprintf(buf, n, "%s port %u", nd->name, port - nd->first_port);
	else
		snprintf(buf, n, "%s", nd->name);
}

int fab_result_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s)
{
	const struct fab_topo *t = fab_sim_topo(s);
	const struct fab_sim_totals *tot = fab_sim_totals(s);
	struct fab_summary sm;
	fab_summary_compute(s, &sm);
	char a[32], b[32], d[32], e[32];
	static const char *kinds[] = {"spine-leaf", "fat-tree", "file", "ns3"};
	fprintf(f, "fabscope sim: %s, seed %llu%s\n", c->origin, (unsigned long long)c->run.seed, engine_label(c));
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
	const struct fab_cc_ops *cc = fab_cc_of(&c->fabric.cc, c->fabric.transport);
	const struct fab_transport_info *tr = fab_transport_at(c->fabric.transport);
	char line[300];
	tr->describe(&c->fabric, cc->label, cc != &fab_cc_none, line, sizeof line);
	fprintf(f, "fabric: %s\n", line);
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
	fprintf(f, "  ECN marks %llu, %s %llu, PAUSE frames %llu", (unsigned long long)sm.ecn_marks, tr->notify_counter,
		(unsigned long long)sm.cnps, (unsigned long long)sm.pause_frames);
	if (tr->host_latency) /* a host's stack */
		fprintf(f, "; host CPU %.6f s", tot->host_cpu_ps / 1e12);
	fprintf(f, "\n");
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
			char from[64];
			port_label(t, top[i], from, sizeof from);
			fprintf(f, "  %-14s -> %-14s max queue %-10s  drops %-6llu ECN %-6llu PAUSE tx %llu rx %llu\n",
				from, t->nodes[t->ports[tp->peer].node].name,
				human_bytes(x->max_queue_bytes, a, sizeof a), (unsigned long long)x->drops,
				(unsigned long long)x->ecn_marks, (unsigned long long)ptx, (unsigned long long)prx);
		}
	}
	return ferror(f) ? FAB_EIO : 0;
}
