/*
 * coll_out.c - collective sweeps as nccl-tests prints them, as CSV rows and
 * as the "collective" section of the result document.
 */
#include <math.h>
#include <string.h>

#include "nccl_json.h"
#include "nccl_table.h"
#include "result.h"

static int root_col(const struct fab_config *c)
{
	return c->coll.op == FAB_OP_BROADCAST || c->coll.op == FAB_OP_REDUCE ? (int)c->coll.root : -1;
}

/* the run's parameters as nccl-tests' "# nThread" line gives them */
static struct fab_nccl_params_line coll_params(const struct fab_config *c, const struct fab_comm *comm)
{
	return (struct fab_nccl_params_line){
		.op = c->coll.op,
		.nthreads = 1,
		.ngpus = comm->nranks,
		.minb = c->coll.min_bytes,
		.maxb = c->coll.max_bytes,
		.step = c->coll.step_bytes ? c->coll.step_bytes : c->coll.factor,
		.step_factor = !c->coll.step_bytes,
		.warmup = c->coll.warmup,
		.iters = c->coll.iters,
		.check = 0,
	};
}

json_t *fab_coll_json(const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
		      const struct fab_sweep *sw)
{
	json_t *doc = fab_result_json(c, s);
	json_object_set_new(doc, "kind", json_string("coll"));
	json_t *o = json_object();
	static const char *placements[] = {"packed", "spread", "random", "scatter"};
	json_object_set_new(o, "op", json_string(fab_coll_op_name(c->coll.op)));
	json_object_set_new(o, "algo", json_string(fab_coll_algo_name(c->coll.algo)));
	json_object_set_new(o, "ranks", json_integer(comm->nranks));
	json_object_set_new(o, "servers", json_integer(comm->nservers));
	json_object_set_new(o, "channels", json_integer(comm->channels));
	json_object_set_new(o, "placement", json_string(placements[c->coll.placement]));
	static const char *orders[] = {"topology", "rank", "flat"};
	json_object_set_new(o, "ring_order", json_string(orders[c->coll.ring_order]));
	json_object_set_new(o, "datatype", json_string(fab_dtype_name(c->coll.dtype)));
	json_object_set_new(o, "busbw_factor", json_real(fab_coll_busbw_factor(c->coll.op, comm->nranks)));
	json_t *gpus = json_array();
	for (uint32_t r = 0; r < comm->nranks; r++)
		json_array_append_new(gpus, json_integer(comm->gpu[r]));
	json_object_set_new(o, "gpus", gpus);
	json_t *rows = json_array();
	for (uint32_t i = 0; i < sw->nrows; i++) {
		const struct fab_sweep_row *r = &sw->rows[i];
		json_t *x = json_object();
		json_object_set_new(x, "size_bytes", json_integer((json_int_t)r->bytes));
		json_object_set_new(x, "count", json_integer((json_int_t)r->count));
		json_object_set_new(x, "type", json_string(fab_dtype_name(c->coll.dtype)));
		json_object_set_new(x, "redop", json_string(fab_redop_name(c->coll.op)));
		json_object_set_new(x, "root", json_integer(root_col(c)));
		json_object_set_new(x, "algo", json_string(fab_coll_algo_name(r->algo)));
		json_object_set_new(x, "proto", json_string(fab_proto_name(r->proto)));
		json_object_set_new(x, "time_us", json_real(r->time_us));
		json_object_set_new(x, "algbw_GBps", json_real(r->algbw_GBps));
		json_object_set_new(x, "busbw_GBps", json_real(r->busbw_GBps));
		json_object_set_new(x, "iterations_simulated", json_integer(r->iters_run));
		json_object_set_new(x, "start_ps", json_integer((json_int_t)r->start_ps));
		json_object_set_new(x, "end_ps", json_integer((json_int_t)r->end_ps));
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "avg_busbw_GBps", json_real(fab_sweep_avg_busbw(sw)));
	json_object_set_new(doc, "collective", o);
	return doc;
}

void fab_coll_text_head(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			bool algo_col, bool all_devices)
{
	const struct fab_topo *t = fab_sim_topo(s);
	char rate[32], host[32];
	struct fab_nccl_params_line p = coll_params(c, comm);
	fab_nccl_table_params(f, &p);
	/* fabscope's own lines, where nccl-tests prints its optional ones */
	fprintf(f, "# fabscope coll: %s, %u ranks on %u servers (%u GPUs each), %u channels, algorithm %s%s\n",
		fab_coll_op_title(c->coll.op), comm->nranks, comm->nservers, t->gpus_per_server, comm->channels,
		fab_coll_algo_name(c->coll.algo),
		c->fabric.engine != FAB_ENGINE_FLOW                     ? ""
			: c->fabric.flow_queues == FAB_FLOW_QUEUES_FIFO ? ", flow engine, FIFO queues"
									: ", flow engine");
	fprintf(f, "# %s, %u NICs per server at %s, seed %llu; simulated: in place is out of place (no copies)\n",
		c->origin, t->nics_per_server,
		fab_fmt_rate(t->ports[t->nodes[t->nic_node[0]].first_port].rate_bps, rate, sizeof rate),
		(unsigned long long)c->run.seed);
	fab_nccl_table_devices(f);
	uint32_t shown = all_devices ? comm->nranks : FAB_MIN(comm->nranks, FAB_NCCL_DEVICE_LINES);
	for (uint32_t r = 0; r < shown; r++) {
		uint32_t g = comm->gpu[r];
		snprintf(host, sizeof host, "server%u", fab_topo_gpu_server(t, g));
		fab_nccl_table_device(f, r, 0, host, g % t->gpus_per_server, "simulated GPU");
	}
	if (shown < comm->nranks)
		fab_nccl_table_devices_more(f, comm->nranks - shown, "-v lists every one");
	fab_nccl_table_head(f, algo_col);
}

/* row i of the sweep as nccl-tests' table has it */
static struct fab_nccl_row nccl_row(const struct fab_config *c, const struct fab_sweep *sw, uint32_t i)
{
	const struct fab_sweep_row *r = &sw->rows[i];
	return (struct fab_nccl_row){
		.bytes = r->bytes,
		.count = r->count,
		.type = fab_dtype_name(c->coll.dtype),
		.redop = fab_redop_name(c->coll.op),
		.root = root_col(c),
		.time_us = {r->time_us, r->time_us},
		.algbw_GBps = {r->algbw_GBps, r->algbw_GBps},
		.busbw_GBps = {r->busbw_GBps, r->busbw_GBps},
	};
}

void fab_coll_text_row(FILE *f, const struct fab_config *c, const struct fab_sweep *sw, uint32_t i, bool algo_col)
{
	const struct fab_sweep_row *r = &sw->rows[i];
	char algo[48];
	snprintf(algo, sizeof algo, "%s/%s", fab_coll_algo_name(r->algo), fab_proto_name(r->proto));
	struct fab_nccl_row row = nccl_row(c, sw, i);
	row.algo = algo_col ? algo : NULL;
	fab_nccl_table_row(f, &row);
}

int fab_coll_write_nccl_json(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			     const struct fab_sweep *sw, int argc, char *const *argv, char *const *envp,
			     const char *start)
{
	const struct fab_topo *t = fab_sim_topo(s);
	struct fab_nccl_params_line p = coll_params(c, comm);
	fab_nccl_json_head(f, argc, argv, envp, start, &p);
	char host[32], end[64];
	for (uint32_t r = 0; r < comm->nranks; r++) {
		uint32_t g = comm->gpu[r];
		snprintf(host, sizeof host, "server%u", fab_topo_gpu_server(t, g));
		fab_nccl_json_device(f, !r, r, 0, host, g % t->gpus_per_server, "simulated GPU");
	}
	fab_nccl_json_results(f);
	for (uint32_t i = 0; i < sw->nrows; i++) {
		struct fab_nccl_row row = nccl_row(c, sw, i);
		fab_nccl_json_row(f, !i, &row, c->coll.iters);
	}
	fab_nccl_json_time(end, sizeof end);
	fab_nccl_json_end(f, 0, fab_sweep_avg_busbw(sw), fab_nccl_min_bw(), end);
	return ferror(f) ? FAB_EIO : 0;
}

void fab_coll_text_end(FILE *f, const struct fab_config *c, const struct fab_sweep *sw)
{
	fab_nccl_table_end(f, 0, fab_sweep_avg_busbw(sw), fab_nccl_min_bw(), c->coll.op);
}

int fab_coll_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s, const struct fab_comm *comm,
			const struct fab_sweep *sw, bool algo_col, bool all_devices)
{
	fab_coll_text_head(f, c, s, comm, algo_col, all_devices);
	for (uint32_t i = 0; i < sw->nrows; i++)
		fab_coll_text_row(f, c, sw, i, algo_col);
	fab_coll_text_end(f, c, sw);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_coll_write_csv(FILE *f, const struct fab_config *c, const struct fab_sweep *sw)
{
	fprintf(f, "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto\n");
	for (uint32_t i = 0; i < sw->nrows; i++) {
		const struct fab_sweep_row *r = &sw->rows[i];
		fprintf(f, "%llu,%llu,%s,%s,%d,%.3f,%.3f,%.3f,%s,%s\n", (unsigned long long)r->bytes,
			(unsigned long long)r->count, fab_dtype_name(c->coll.dtype), fab_redop_name(c->coll.op),
			root_col(c), r->time_us, r->algbw_GBps, r->busbw_GBps, fab_coll_algo_name(r->algo),
			fab_proto_name(r->proto));
	}
	return ferror(f) ? FAB_EIO : 0;
}

/* a model job's tokens per second and model FLOPs utilisation (FLOPs of
 * an iteration over the GPUs' peak for the mean iteration time) */
static void model_rates(const struct fab_job *j, const struct fab_job_stats *st, double *tps, double *mfu)
{
	double secs = st->mean_ps / 1e12;
	if (secs <= 0)
		return;
	*tps = j->vol.tokens / secs;
	*mfu = j->vol.flops / secs / ((double)j->n * j->spec.model.gpu_tflops * 1e12);
}

json_t *fab_jobs_json(const struct fab_job *jobs, uint32_t n)
{
	json_t *arr = json_array();
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_job *j = &jobs[i];
		struct fab_job_stats st;
		fab_job_stats(j, &st);
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(j->spec.name));
		json_object_set_new(o, "dp", json_integer(j->dp));
		json_object_set_new(o, "tp", json_integer(j->tp));
		json_object_set_new(o, "pp", json_integer(j->pp));
		json_object_set_new(o, "finished", json_boolean(j->finished && !j->rc));
		json_t *g = json_array();
		for (uint32_t r = 0; r < j->n; r++)
			json_array_append_new(g, json_integer(j->gpu[r]));
		json_object_set_new(o, "gpus", g);
		json_t *its = json_array();
		for (uint32_t k = 0; k < j->niters; k++) {
			const struct fab_job_iter *it = &j->iters[k];
			json_t *x = json_object();
			fab_time_ps t = it->end_ps - it->start_ps;
			json_object_set_new(x, "iteration", json_integer(k));
			json_object_set_new(x, "start_ps", json_integer((json_int_t)it->start_ps));
			json_object_set_new(x, "end_ps", json_integer((json_int_t)it->end_ps));
			json_object_set_new(x, "time_ps", json_integer((json_int_t)t));
			json_object_set_new(x, "compute_ps", json_integer((json_int_t)it->compute_ps));
			json_object_set_new(x, "comm_ps", json_integer((json_int_t)it->comm_ps));
			json_object_set_new(x, "exposed_ps", json_integer((json_int_t)it->exposed_ps));
			json_object_set_new(x, "idle_fraction", json_real(t ? (double)it->exposed_ps / (double)t : 0));
			/* the slowest worker's GPUs and how late it was */
			json_t *lg = json_array();
			uint32_t w = it->last_worker, s_ = w / j->dp, d_ = w % j->dp;
			for (uint32_t x2 = 0; x2 < j->tp; x2++)
				json_array_append_new(lg, json_integer(j->gpu[(s_ * j->dp + d_) * j->tp + x2]));
			json_object_set_new(x, "last_gpus", lg);
			json_object_set_new(x, "lag_ps", json_integer((json_int_t)it->lag_ps));
			json_array_append_new(its, x);
		}
		json_object_set_new(o, "iterations", its);
		json_t *s = json_object();
		json_object_set_new(s, "mean_ps", json_integer((json_int_t)(st.mean_ps + 0.5)));
		json_object_set_new(s, "p50_ps", json_integer((json_int_t)st.p50_ps));
		json_object_set_new(s, "p99_ps", json_integer((json_int_t)st.p99_ps));
		json_object_set_new(s, "max_ps", json_integer((json_int_t)st.max_ps));
		json_object_set_new(s, "min_ps", json_integer((json_int_t)st.min_ps));
		json_object_set_new(s, "idle_fraction", json_real(st.idle_fraction));
		if (j->has_model) {
			double tps = 0, mfu = 0;
			model_rates(j, &st, &tps, &mfu);
			json_object_set_new(s, "tokens_per_s", json_real(tps));
			json_object_set_new(s, "mfu", json_real(mfu));
		}
		json_object_set_new(o, "stats", s);
		if (j->has_model) {
			const struct fab_model_volumes *v = &j->vol;
			json_t *m = json_object();
			json_object_set_new(m, "params", json_real(v->params));
			json_object_set_new(m, "active_params", json_real(v->active_params));
			json_object_set_new(m, "flops_per_token", json_real(v->flops_per_token));
			json_object_set_new(m, "tokens_per_iteration", json_real(v->tokens));
			json_object_set_new(m, "flops_per_iteration", json_real(v->flops));
			json_object_set_new(m, "compute_ps", json_integer((json_int_t)v->compute_ps));
			json_object_set_new(m, "microbatches", json_integer(v->microbatches));
			json_object_set_new(m, "gradient_bytes", json_integer((json_int_t)v->grad_bytes));
			json_object_set_new(m, "tp_bytes", json_integer((json_int_t)v->tp_bytes));
			json_object_set_new(m, "tp_collectives", json_integer(v->tp_collectives));
			json_object_set_new(m, "pp_bytes", json_integer((json_int_t)v->pp_bytes));
			json_object_set_new(m, "a2a_bytes", json_integer((json_int_t)v->a2a_bytes));
			json_object_set_new(m, "a2a_collectives", json_integer(v->a2a_collectives));
			if (v->ep) {
				json_object_set_new(m, "expert_parallel", json_integer(v->ep));
				json_object_set_new(m, "expert_gradient_bytes",
						    json_integer((json_int_t)v->expert_grad_bytes));
			}
			json_object_set_new(o, "model", m);
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

int fab_jobs_write_text(FILE *f, const struct fab_job *jobs, uint32_t n)
{
	if (!n)
		return 0;
	fprintf(f, "\njobs:\n");
	fprintf(f, "  %-12s %5s %11s %6s %11s %11s %11s %11s %7s\n", "name", "gpus", "dp x tp x pp", "iters", "mean",
		"p50", "p99", "max", "idle");
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_job *j = &jobs[i];
		struct fab_job_stats st;
		fab_job_stats(j, &st);
		char shape[32];
		snprintf(shape, sizeof shape, "%u x %u x %u", j->dp, j->tp, j->pp);
		fprintf(f, "  %-12s %5u %11s %6u %8.3f ms %8.3f ms %8.3f ms %8.3f ms %6.1f%%%s\n", j->spec.name, j->n,
			shape, j->niters, st.mean_ps / 1e9, st.p50_ps / 1e9, st.p99_ps / 1e9, st.max_ps / 1e9,
			st.idle_fraction * 100, j->finished && !j->rc ? "" : "  (unfinished)");
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct fab_job *j = &jobs[i];
		if (!j->has_model)
			continue;
		struct fab_job_stats st;
		fab_job_stats(j, &st);
		double tps = 0, mfu = 0;
		model_rates(j, &st, &tps, &mfu);
		fprintf(f,
			"  %s: %.3g B parameters, %.3g FLOP per iteration (%.0f tokens), %u micro-batches; "
			"%.0f tokens/s, MFU %.1f%% (compute alone %.1f%%)\n",
			j->spec.name, j->vol.params / 1e9, j->vol.flops, j->vol.tokens, j->vol.microbatches, tps,
			mfu * 100, j->spec.model.efficiency * 100);
	}
	return ferror(f) ? FAB_EIO : 0;
}

static json_t *json_num_or_null(double v, bool ok)
{
	return ok ? json_real(v) : json_null();
}

json_t *fab_matrix_json(const struct fab_matrix *m)
{
	const struct fab_topo *t = m->t;
	json_t *o = json_object();
	json_object_set_new(o, "mode", json_string(m->p.serial ? "serial" : "rounds"));
	json_object_set_new(o, "rounds", json_integer(m->nrounds));
	json_object_set_new(o, "bytes", json_integer((json_int_t)m->p.bytes));
	json_object_set_new(o, "latency_bytes", json_integer((json_int_t)m->p.lat_bytes));
	json_object_set_new(o, "sampled_pairs", json_integer(m->p.sample_pairs));
	json_object_set_new(o, "theory_GBps", json_real(m->theory_GBps));
	json_object_set_new(o, "theory_lat_us", json_real(m->theory_lat_us));
	json_t *ep = json_array(), *gp = json_array(), *links = json_array();
	for (uint32_t i = 0; i < m->n; i++) {
		const struct fab_node *nd = &t->nodes[t->nic_node[m->nic[i]]];
		json_array_append_new(ep, json_string(nd->name));
		json_t *g = json_array();
		for (uint32_t x = 0; x < t->ngpus; x++)
			if (fab_topo_gpu_nic(t, x) == m->nic[i])
				json_array_append_new(g, json_integer(x));
		json_array_append_new(gp, g);
		/* the endpoint's own link: NIC port and the switch port it meets */
		const struct fab_port *pt = &t->ports[nd->first_port];
		const struct fab_node *sw = &t->nodes[t->ports[pt->peer].node];
		json_t *l = json_object();
		json_object_set_new(l, "switch", json_string(sw->name));
		json_object_set_new(l, "switch_port", json_integer(pt->peer - sw->first_port));
		json_array_append_new(links, l);
	}
	json_object_set_new(o, "endpoints", ep);
	json_object_set_new(o, "gpus", gp);
	json_object_set_new(o, "links", links);
	json_t *bw = json_array(), *lat = json_array();
	for (uint32_t i = 0; i < m->n; i++) {
		json_t *rb = json_array(), *rl = json_array();
		for (uint32_t j = 0; j < m->n; j++) {
			size_t k = (size_t)i * m->n + j;
			json_array_append_new(rb, json_num_or_null(m->bw_GBps[k], i != j && m->tested[k]));
			json_array_append_new(rl, json_num_or_null(m->lat_us[k], i != j && m->tested[k]));
		}
		json_array_append_new(bw, rb);
		json_array_append_new(lat, rl);
	}
	json_object_set_new(o, "bw_GBps", bw);
	json_object_set_new(o, "lat_us", lat);
	return o;
}

int fab_matrix_write_text(FILE *f, const struct fab_matrix *m)
{
	const struct fab_topo *t = m->t;
	size_t cnt = (size_t)m->n * (m->n - 1);
	double *v = fab_xcalloc(cnt ? cnt : 1, sizeof *v), *l = fab_xcalloc(cnt ? cnt : 1, sizeof *l);
	size_t k = 0;
	for (uint32_t i = 0; i < m->n; i++)
		for (uint32_t j = 0; j < m->n; j++)
			if (i != j && m->tested[(size_t)i * m->n + j]) {
				v[k] = m->bw_GBps[(size_t)i * m->n + j];
				l[k++] = m->lat_us[(size_t)i * m->n + j];
			}
	qsort(v, k, sizeof *v, fab_cmp_double);
	qsort(l, k, sizeof *l, fab_cmp_double);
	char b[32];
	fprintf(f, "fabscope matrix: %u NICs, %llu pairs in %u %s, %s each way, %s ping-pong\n", m->n,
		(unsigned long long)(k / 2), m->nrounds, m->p.serial ? "steps" : "rounds",
		fab_fmt_bytes(m->p.bytes, b, sizeof b), "small");
	if (k) {
		fprintf(f, "theory (a pair alone): %.2f GB/s each way, %.3f us one way\n", m->theory_GBps,
			m->theory_lat_us);
		fprintf(f, "bandwidth GB/s: min %.2f  p1 %.2f  median %.2f  max %.2f  (max %.1f%% of theory)\n", v[0],
			v[k / 100], v[k / 2], v[k - 1], v[k - 1] / m->theory_GBps * 100);
		fprintf(f, "latency us:     min %.3f  median %.3f  p99 %.3f  max %.3f\n", l[0], l[k / 2],
			l[k * 99 / 100], l[k - 1]);
	}
	/* the five endpoints with the lowest median bandwidth (as sender and receiver) */
	double *med = fab_xcalloc(m->n, sizeof *med);
	uint32_t *ord = fab_xcalloc(m->n, sizeof *ord);
	fab_matrix_endpoint_medians(m->n, m->bw_GBps, med, ord);
	if (m->p.sample_pairs) {
		free(v);
		free(l);
		free(med);
		free(ord);
		return ferror(f) ? FAB_EIO : 0;
	}
	fprintf(f, "slowest endpoints (median GB/s to and from the others):\n");
	for (uint32_t i = 0; i < m->n && i < 5; i++)
		fprintf(f, "  %-16s %.2f\n", t->nodes[t->nic_node[m->nic[ord[i]]]].name, med[ord[i]]);
	free(v);
	free(l);
	free(med);
	free(ord);
	return ferror(f) ? FAB_EIO : 0;
}

void fab_matrix_endpoint_medians(uint32_t n, const double *bw, double *med, uint32_t *ord)
{
	double *row = fab_xcalloc(2 * (size_t)n + 1, sizeof *row);
	for (uint32_t i = 0; i < n; i++) {
		size_t c = 0;
		for (uint32_t j = 0; j < n; j++)
			if (j != i) { /* NaN: not measured (a sampled matrix, a failed pair) */
				if (!isnan(bw[(size_t)i * n + j]))
					row[c++] = bw[(size_t)i * n + j];
				if (!isnan(bw[(size_t)j * n + i]))
					row[c++] = bw[(size_t)j * n + i];
			}
		qsort(row, c, sizeof *row, fab_cmp_double);
		med[i] = c ? row[c / 2] : 0;
		ord[i] = i;
	}
	for (uint32_t i = 1; i < n; i++) /* insertion sort, slowest first */
		for (uint32_t j = i; j > 0 && med[ord[j - 1]] > med[ord[j]]; j--) {
			uint32_t x = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = x;
		}
	free(row);
}
