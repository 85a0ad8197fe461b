/*
 * result.c - the result document of a finished run: its parts in order,
 * as jansson values (fab_result_json) or written as they are produced
 * (fab_result_write_json: the long tables from the run, result_rows.c).
 */
#include <stdlib.h>
#include <string.h>

#include "result_int.h"
#include "jsonw.h"
#include "../cc/dcqcn.h"
#include "slowdown.h"

/* A list of items (flows, generators) as their keys' canonical text. */
static json_t *items_json(const struct fab_key_def *keys, size_t nkeys, const void *items, size_t stride, size_t n)
{
	json_t *arr = json_array();
	size_t nx;
	bool faults = keys == fab_config_fault_keys(&nx);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		for (size_t k = 0; k < nkeys; k++) {
			char val[128];
			/* a fault's delay only on a delay fault */
			if (faults && !strcmp(keys[k].path, "delay") &&
			    ((const struct fab_fault_spec *)items)[i].kind != FAB_FAULT_DELAY)
				continue;
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
		if (!strcmp(keys[i].path, "run.threads") || !strcmp(keys[i].path, "run.partitions") ||
		    !fab_config_key_shown(c, i))
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

/* the flow engine: what its numbers leave out, and its work */
/* the fluid DCQCN runs the paper's with a clamped target rate */
static bool clamped_dcqcn(const struct fab_fabric_params *fp)
{
	const struct fab_cc_ops *ops = fab_cc_of(&fp->cc, fp->transport);
	const struct fab_dcqcn_params *d = fab_cc_params(&fp->cc, ops);
	return ops == &fab_cc_dcqcn && d->clamp_target;
}

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
		else if (clamped_dcqcn(&c->fabric)) /* (doc/flow.md: measured 12-28% long on p50) */
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
	json_object_set_new(doc, "summary", res_summary_json(s, &sm));
	json_object_set_new(doc, "ecmp", res_ecmp_json(s));
	json_object_set_new(doc, "ecmp_groups", res_ecmp_groups_json(s));
	json_object_set_new(doc, "flows", lean ? json_string(MARK_FLOWS) : res_rows_json(s, ROWS_FLOWS));
	json_t *sd = fab_slowdown_json(s);
	if (sd)
		json_object_set_new(doc, "slowdown", sd);
	json_object_set_new(doc, "ports", lean ? json_string(MARK_PORTS) : res_rows_json(s, ROWS_PORTS));
	if (c->fabric.series_interval_ps) {
		json_object_set_new(doc, "series", lean ? json_string(MARK_SERIES) : res_rows_json(s, ROWS_SERIES));
		json_object_set_new(doc, "flow_series",
				    lean ? json_string(MARK_FLOW_SERIES) : res_rows_json(s, ROWS_FLOW_SERIES));
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

/* which table a member of the lean document stands in for */
static enum res_rows stand_in(const json_t *v)
{
	static const char *const marks[] = {[ROWS_FLOWS] = MARK_FLOWS,
					    [ROWS_SERIES] = MARK_SERIES,
					    [ROWS_FLOW_SERIES] = MARK_FLOW_SERIES,
					    [ROWS_PORTS] = MARK_PORTS};
	if (json_is_string(v))
		for (int i = 0; i < ROWS_NONE; i++)
			if (!strcmp(json_string_value(v), marks[i]))
				return (enum res_rows)i;
	return ROWS_NONE;
}

/* the lean document walked member by member, each stand-in replaced by its
 * table written from the run */
int fab_result_write_json(FILE *f, json_t *lean, const struct fab_sim *s)
{
	struct jw *w = fab_xcalloc(1, sizeof *w);
	jw_init(w, f, JSON_INDENT(2));
	const char *key;
	json_t *v;
	jw_obj(w);
	json_object_foreach(lean, key, v)
	{
		enum res_rows which = stand_in(v);
		jw_key(w, key);
		if (which == ROWS_NONE)
			jw_json(w, v);
		else
			res_rows_write(w, s, which);
	}
	jw_obj_end(w);
	int rc = jw_end(w);
	free(w);
	return rc;
}
