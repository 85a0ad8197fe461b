/*
 * coll_out.c - collective sweeps as nccl-tests prints them, as CSV rows and
 * as the "collective" section of the result document.
 */
#include <string.h>

#include "result.h"

static const char *redop(int op)
{
	return op == FAB_OP_ALLREDUCE || op == FAB_OP_REDUCESCATTER || op == FAB_OP_REDUCE ? "sum"
											 : "none";
}

static int root_col(const struct fab_config *c)
{
	return c->coll.op == FAB_OP_BROADCAST || c->coll.op == FAB_OP_REDUCE ? (int)c->coll.root : -1;
}

json_t *fab_coll_json(const struct fab_config *c, const struct fab_sim *s,
		      const struct fab_comm *comm, const struct fab_sweep *sw)
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
		json_object_set_new(x, "redop", json_string(redop(c->coll.op)));
		json_object_set_new(x, "root", json_integer(root_col(c)));
		json_object_set_new(x, "algo", json_string(fab_coll_algo_name(r->algo)));
		json_object_set_new(x, "time_us", json_real(r->time_us));
		json_object_set_new(x, "algbw_GBps", json_real(r->algbw_GBps));
		json_object_set_new(x, "busbw_GBps", json_real(r->busbw_GBps));
		json_object_set_new(x, "start_ps", json_integer((json_int_t)r->start_ps));
		json_object_set_new(x, "end_ps", json_integer((json_int_t)r->end_ps));
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "avg_busbw_GBps", json_real(fab_sweep_avg_busbw(sw)));
	json_object_set_new(doc, "collective", o);
	return doc;
}

int fab_coll_write_text(FILE *f, const struct fab_config *c, const struct fab_sim *s,
			const struct fab_comm *comm, const struct fab_sweep *sw)
{
	const struct fab_topo *t = fab_sim_topo(s);
	char rate[32];
	fprintf(f, "# fabscope coll: %s, %u ranks on %u servers (%u GPUs each), %u channels, algorithm %s\n",
		fab_coll_op_title(c->coll.op), comm->nranks, comm->nservers, t->gpus_per_server,
		comm->channels, fab_coll_algo_name(c->coll.algo));
	fprintf(f, "# %s, %u NICs per server at %s, seed %llu\n", c->origin, t->nics_per_server,
		fab_fmt_rate(t->ports[t->nodes[t->nic_node[0]].first_port].rate_bps, rate, sizeof rate),
		(unsigned long long)c->run.seed);
	fprintf(f, "#\n");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %12s\n", "size", "count", "type",
		"redop", "root", "time", "algbw", "busbw", "#wrong", "algo");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %12s\n", "(B)", "(elements)", "", "",
		"", "(us)", "(GB/s)", "(GB/s)", "", "");
	for (uint32_t i = 0; i < sw->nrows; i++) {
		const struct fab_sweep_row *r = &sw->rows[i];
		fprintf(f, "  %10llu  %12llu  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %6s  %12s\n",
			(unsigned long long)r->bytes, (unsigned long long)r->count,
			fab_dtype_name(c->coll.dtype), redop(c->coll.op), root_col(c), r->time_us,
			r->algbw_GBps, r->busbw_GBps, "N/A", fab_coll_algo_name(r->algo));
	}
	fprintf(f, "# Avg bus bandwidth    : %g\n", fab_sweep_avg_busbw(sw));
	fprintf(f, "#\n");
	return ferror(f) ? FAB_EIO : 0;
}

int fab_coll_write_csv(FILE *f, const struct fab_config *c, const struct fab_sweep *sw)
{
	fprintf(f, "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo\n");
	for (uint32_t i = 0; i < sw->nrows; i++) {
		const struct fab_sweep_row *r = &sw->rows[i];
		fprintf(f, "%llu,%llu,%s,%s,%d,%.3f,%.3f,%.3f,%s\n", (unsigned long long)r->bytes,
			(unsigned long long)r->count, fab_dtype_name(c->coll.dtype), redop(c->coll.op),
			root_col(c), r->time_us, r->algbw_GBps, r->busbw_GBps, fab_coll_algo_name(r->algo));
	}
	return ferror(f) ? FAB_EIO : 0;
}
