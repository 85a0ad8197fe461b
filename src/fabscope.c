/*
 * fabscope.c - the library facade: from a loaded scenario to a finished run.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/rng.h"
#include "engines.h"
#include "run.h"

const char *fab_version_string(void)
{
	static char buf[128];
	snprintf(buf, sizeof buf, "fabscope %s (libyaml %s, jansson %s)", FABSCOPE_VERSION, yaml_get_version_string(),
		 JANSSON_VERSION);
	return buf;
}

/* Builder messages start with the key they are about; put the key's
 * position in the scenario in front. */
static void locate(const struct fab_config *c, struct fab_err *err)
{
	char key[96], where[320], msg[sizeof err->msg];
	size_t n = strcspn(err->msg, ": ");
	if (n == 0 || n >= sizeof key || err->msg[n] != ':')
		return;
	memcpy(key, err->msg, n);
	key[n] = 0;
	fab_config_where(c, key, where, sizeof where);
	if (!where[0])
		snprintf(where, sizeof where, "%s: ", c->origin);
	msg[0] = 0;
	strncat(msg, where, sizeof msg - 1);
	strncat(msg, err->msg, sizeof msg - 1 - strlen(msg));
	memcpy(err->msg, msg, sizeof msg);
}

static int setup_jobs(struct fab_run *r, const struct fab_config *c, bool log, struct fab_err *err)
{
	if (!c->njobs)
		return 0;
	r->work = fab_xcalloc(1, sizeof *r->work);
	fab_work_init(r->work, r->sim, r->topo);
	r->work->nccl = c->nccl;
	r->work->log.enabled = log;
	r->jobs = fab_xcalloc(c->njobs, sizeof *r->jobs);
	bool *used = fab_xcalloc(r->topo->nservers, sizeof *used);
	/* slow GPUs: every job computes at its slowest GPU's pace */
	double *slow = fab_xcalloc(r->topo->ngpus, sizeof *slow);
	for (uint32_t g = 0; g < r->topo->ngpus; g++)
		slow[g] = 1;
	for (size_t i = 0; i < c->nfaults; i++)
		if (c->faults[i].kind == FAB_FAULT_SLOW_GPU && c->faults[i].gpu < r->topo->ngpus)
			slow[c->faults[i].gpu] = c->faults[i].factor;
	int rc = 0;
	for (size_t i = 0; i < c->njobs && !rc; i++) {
		const struct fab_job_spec *js = &c->jobs[i];
		uint32_t *gpus = fab_xcalloc(js->gpus, sizeof *gpus);
		rc = fab_job_place(r->topo, js, js->gpus, c->run.seed, i, used, gpus, err);
		if (!rc) {
			rc = fab_job_init(&r->jobs[i], r->work, js, gpus, slow, err);
			r->njobs = (uint32_t)i + 1;
		}
		free(gpus);
		if (rc) {
			char msg[sizeof err->msg];
			snprintf(msg, sizeof msg, "%s:%u:%u: %s: %s", js->loc.origin, js->loc.line, js->loc.col,
				 js->loc.what, err->msg);
			memcpy(err->msg, msg, sizeof msg);
		}
	}
	free(used);
	free(slow);
	return rc;
}

struct fab_run *fab_run_new(const struct fab_config *c, struct fab_err *err)
{
	return fab_run_new_log(c, false, err);
}

/* dynamic PFC thresholds at 0: the buffer left after every port's
 * headroom and reserve (the first such switch's, for the message) */
static void pfc_warning(struct fab_run *r)
{
	uint32_t v;
	double aside;
	uint32_t n = fab_sim_pfc_uncovered(r->sim, &v, &aside);
	if (!n)
		return;
	snprintf(r->warning, sizeof r->warning,
		 "fabric.buffer (%.2f MiB) does not cover the PFC headroom and reserves of the ports of %u "
		 "switch%s (%s: %.2f MiB): at dynamic thresholds every ingress port pauses at its first byte",
		 (double)r->config->fabric.buffer_bytes / (1 << 20), n, n == 1 ? "" : "es", r->topo->nodes[v].name,
		 aside / (1 << 20));
}

const char *fab_run_warning(const struct fab_run *r)
{
	return r->warning[0] ? r->warning : NULL;
}

const char *fab_run_idle(const struct fab_run *r)
{
	const struct fab_config *c = r->config;
	if (fab_sim_nflows(r->sim) || r->njobs || c->run.end_ps || c->nfaults)
		return NULL;
	if (c->traffic.ngens || c->traffic.flows_csv || c->traffic.flows_ns3)
		return "traffic: its generators and flow files give no flow (a higher load, a longer duration), and "
		       "there are no jobs";
	return "nothing to simulate: no traffic (traffic.flows, traffic.generators, traffic.flows_csv, "
	       "traffic.flows_ns3) and no jobs; give some, or run.end for a run of that length";
}

struct fab_run *fab_run_new_log(const struct fab_config *c, bool log, struct fab_err *err)
{
	struct fab_run *r = fab_xcalloc(1, sizeof *r);
	r->config = c;
	r->topo = fab_topo_build(&c->topo, err);
	if (!r->topo) {
		locate(c, err);
		goto fail;
	}
	struct fab_sim_flow *flows = NULL;
	size_t nflows = 0;
	if (fab_traffic_expand(&c->traffic, r->topo, c->run.seed, &flows, &nflows, err))
		goto fail;
	/* a flow costs about 3.2 KB in all (engine state, per-flow results and
	 * their JSON: 3.18 GB for a million, measured); refuse a run that would
	 * not fit rather than die in it */
	uint64_t need = (uint64_t)nflows * 3300, avail = fab_mem_available();
	if (avail && need > avail / 10 * 8) {
		fab_err_set(err, FAB_EINVAL,
			    "traffic: %zu flows need about %.1f GiB (engine state and per-flow results), more than "
			    "this machine's %.1f GiB available; fewer flows, or shorter generators",
			    nflows, (double)need / (1 << 30), (double)avail / (1 << 30));
		free(flows);
		goto fail;
	}
	r->sim = fab_sim_new(r->topo, &c->fabric, c->run.seed, flows, nflows, err);
	free(flows);
	if (!r->sim)
		goto fail;
	fab_sim_set_server(r->sim, &c->server);
	for (size_t i = 0; i < c->nfaults; i++) {
		struct fab_fault f;
		if (fab_fault_resolve(&c->faults[i], r->topo, c->fabric.engine, c->fabric.transport, &f, err))
			goto fail;
		fab_sim_add_fault(r->sim, &f);
	}
	if (setup_jobs(r, c, log, err))
		goto fail;
	pfc_warning(r);
	return r;
fail:
	fab_run_free(r);
	return NULL;
}

int fab_run_exec(struct fab_run *r, fab_progress_fn progress, void *ctx)
{
	if (progress)
		fab_sim_set_progress(r->sim, progress, ctx);
	for (uint32_t i = 0; i < r->njobs; i++)
		fab_job_start(&r->jobs[i]);
	int rc = fab_sim_run(r->sim, r->config->run.end_ps);
	for (uint32_t i = 0; i < r->njobs && !rc; i++)
		rc = r->jobs[i].rc;
	return rc;
}

void fab_run_free(struct fab_run *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->njobs; i++)
		fab_job_free(&r->jobs[i]);
	free(r->jobs);
	if (r->work) {
		fab_work_free(r->work);
		free(r->work);
	}
	fab_sim_free(r->sim);
	fab_topo_free(r->topo);
	fab_run_ranks_free(r);
	free(r);
}

/* a workload's callbacks act across the fabric at no delay: one thread */
static bool one_thread(const struct fab_config *c, const char *what, struct fab_err *err)
{
	if (c->fabric.threads <= 1)
		return true;
	char where[256];
	fab_config_where(c, "run.threads", where, sizeof where);
	fab_err_set(err, FAB_EINVAL, "%srun.threads: %s run on one thread (above 1: the packet engine's flows)", where,
		    what);
	return false;
}

struct fab_coll_run *fab_coll_run_new(const struct fab_config *c, bool log, struct fab_err *err)
{
	if (!one_thread(c, "collectives", err))
		return NULL;
	struct fab_coll_run *r = fab_xcalloc(1, sizeof *r);
	struct fab_config quiet;
	const struct fab_config *use = c;
	if (!c->coll.background) {
		/* the collective alone: the traffic section waits for another run */
		quiet = *c;
		memset(&quiet.traffic, 0, sizeof quiet.traffic);
		use = &quiet;
	}
	if (c->njobs) {
		/* jobs run under fabscope sim; the sweep has the cluster to itself */
		if (use != &quiet)
			quiet = *c;
		quiet.jobs = NULL;
		quiet.njobs = 0;
		use = &quiet;
	}
	r->run = fab_run_new(use, err);
	if (!r->run)
		goto fail;
	r->run->config = c;
	fab_work_init(&r->work, r->run->sim, r->run->topo);
	r->work.nccl = c->nccl;
	r->work.log.enabled = log;
	const struct fab_topo *t = r->run->topo;
	uint32_t n = c->coll.gpus ? c->coll.gpus : t->ngpus;
	r->gpus = fab_xcalloc(n, sizeof *r->gpus);
	if (c->coll.placement == FAB_PLACE_LIST) {
		fab_err_set(err, FAB_EINVAL, "collective.placement: list is for jobs (jobs[].gpu_list)");
		locate(c, err);
		goto fail;
	}
	if (fab_place(t, c->coll.placement, n, c->run.seed, FAB_RNG_COLL_INDEX, NULL, r->gpus, err)) {
		locate(c, err);
		goto fail;
	}
	struct fab_comm_params cp = {
		.name = "coll",
		.nranks = n,
		.gpus = r->gpus,
		.ring_order = c->coll.ring_order,
		.channels = c->coll.channels,
		.chunk_bytes = c->coll.chunk_bytes,
		.prio = (uint8_t)c->coll.priority,
		.reduce_bps = c->coll.reduce_bps,
		.qps_per_conn = c->coll.qps_per_conn,
	};
	if (fab_comm_init(&r->comm, &r->work, &cp, err))
		goto fail;
	if (fab_sweep_start(&r->sweep, &r->comm, &c->coll, err)) {
		locate(c, err);
		goto fail;
	}
	return r;
fail:
	fab_coll_run_free(r);
	return NULL;
}

void fab_coll_run_set_row_hook(struct fab_coll_run *r, void (*fn)(void *ctx, uint32_t row), void *ctx)
{
	r->sweep.row_done = fn;
	r->sweep.row_ctx = ctx;
}

int fab_coll_run_write_nccl_json(FILE *f, const struct fab_coll_run *r, int argc, char *const *argv, char *const *envp,
				 const char *start)
{
	return fab_coll_write_nccl_json(f, r->run->config, r->run->sim, &r->comm, &r->sweep, argc, argv, envp, start);
}

void fab_coll_run_list_devices(struct fab_coll_run *r, bool all)
{
	r->all_devices = all;
}

int fab_coll_run_write_head(FILE *f, const struct fab_coll_run *r, bool algo_col)
{
	fab_coll_text_head(f, r->run->config, r->run->sim, &r->comm, algo_col, r->all_devices);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_coll_run_write_row(FILE *f, const struct fab_coll_run *r, uint32_t row, bool algo_col)
{
	if (row >= r->sweep.nrows)
		return FAB_EINVAL;
	fab_coll_text_row(f, r->run->config, &r->sweep, row, algo_col);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_coll_run_write_end(FILE *f, const struct fab_coll_run *r)
{
	fab_coll_text_end(f, r->run->config, &r->sweep);
	return ferror(f) ? FAB_EIO : 0;
}

double fab_coll_run_done(struct fab_coll_run *r, uint64_t events)
{
	return fab_sweep_done(&r->sweep, events);
}

double fab_run_done(const struct fab_run *r)
{
	const struct fab_config *c = r->config;
	if (c->run.end_ps)
		return FAB_MIN(1.0, (double)fab_sim_now(r->sim) / (double)c->run.end_ps);
	size_t n = fab_sim_nflows(r->sim);
	double want = 0, got = 0;
	for (size_t i = 0; i < n; i++) {
		want += (double)fab_sim_flow_spec(r->sim, i)->bytes;
		got += (double)fab_sim_flow_stat(r->sim, i).delivered_bytes;
	}
	double iters = 0, done = 0;
	fab_time_ps now = fab_sim_now(r->sim);
	for (uint32_t j = 0; j < r->njobs; j++) {
		const struct fab_job *jb = &r->jobs[j];
		iters += jb->spec.iterations;
		done += jb->niters; /* iterations finished */
		/* and the one under way, by its time so far against the last's */
		if (!jb->finished && jb->niters && now > jb->iter_start) {
			const struct fab_job_iter *last = &jb->iters[jb->niters - 1];
			if (last->end_ps > last->start_ps)
				done += FAB_MIN(
					0.99, (double)(now - jb->iter_start) / (double)(last->end_ps - last->start_ps));
		}
	}
	if (iters && want > 0)
		return FAB_MIN(1.0, (got / want + done / iters) / 2);
	if (iters)
		return FAB_MIN(1.0, done / iters);
	return want > 0 ? FAB_MIN(1.0, got / want) : -1;
}

int fab_coll_run_exec(struct fab_coll_run *r, fab_progress_fn progress, void *ctx, struct fab_err *err)
{
	int rc = fab_run_exec(r->run, progress, ctx);
	if (rc)
		return fab_err_set(err, rc, "the run failed");
	if (r->sweep.rc) {
		*err = r->sweep.err;
		return r->sweep.rc;
	}
	uint64_t failed = fab_sim_totals(r->run->sim)->qp_errors;
	if (!r->sweep.finished && failed)
		return fab_err_set(err, FAB_EINTERNAL,
				   "the collective did not finish: %llu queue pairs failed (retry count exceeded, "
				   "fabric.nic.retry_count)",
				   (unsigned long long)failed);
	if (!r->sweep.finished)
		return fab_err_set(err, FAB_EINTERNAL,
				   "the collective did not finish (stopped at run.end, or a deadlock)");
	return 0;
}

const char *fab_coll_run_warning(const struct fab_coll_run *r)
{
	return fab_run_warning(r->run);
}

void fab_coll_run_free(struct fab_coll_run *r)
{
	if (!r)
		return;
	if (r->run) {
		fab_sweep_free(&r->sweep);
		fab_comm_free(&r->comm);
		fab_work_free(&r->work);
	}
	free(r->gpus);
	fab_run_free(r->run);
	free(r);
}

struct fab_matrix_run *fab_matrix_run_new(const struct fab_config *c, struct fab_err *err)
{
	if (!one_thread(c, "matrix tests", err))
		return NULL;
	struct fab_matrix_run *r = fab_xcalloc(1, sizeof *r);
	struct fab_config alone = *c;
	alone.jobs = NULL; /* the matrix runs alone but for the faults */
	alone.njobs = 0;
	memset(&alone.traffic, 0, sizeof alone.traffic);
	r->run = fab_run_new(&alone, err);
	if (!r->run) {
		free(r);
		return NULL;
	}
	r->run->config = c;
	if (r->run->topo->nnics < 2) {
		fab_err_set(err, FAB_EINVAL, "matrix: the topology has %u NIC: a matrix test needs at least 2",
			    r->run->topo->nnics);
		fab_run_free(r->run);
		free(r);
		return NULL;
	}
	fab_work_init(&r->work, r->run->sim, r->run->topo);
	struct fab_matrix_params mp = c->matrix;
	mp.seed = c->run.seed;
	fab_matrix_init(&r->m, &r->work, &mp);
	return r;
}

int fab_matrix_run_exec(struct fab_matrix_run *r, fab_progress_fn progress, void *ctx, struct fab_err *err)
{
	fab_matrix_start(&r->m);
	int rc = fab_run_exec(r->run, progress, ctx);
	if (rc)
		return fab_err_set(err, rc, "the run failed");
	if (!r->m.finished)
		return fab_err_set(err, FAB_EINTERNAL, "the matrix test did not finish (stopped at run.end?)");
	return 0;
}

const char *fab_matrix_run_warning(const struct fab_matrix_run *r)
{
	return fab_run_warning(r->run);
}

void fab_matrix_run_free(struct fab_matrix_run *r)
{
	if (!r)
		return;
	fab_matrix_free(&r->m);
	fab_work_free(&r->work);
	fab_run_free(r->run);
	free(r);
}

/* ---- results ---- */

json_t *fab_run_json(const struct fab_run *r)
{
	json_t *doc = fab_result_json(r->config, r->sim);
	if (r->njobs)
		json_object_set_new(doc, "jobs", fab_jobs_json(r->jobs, r->njobs));
	return doc;
}

static int write_log(FILE *f, const struct fab_log *log)
{
	return log->len && fwrite(log->buf, 1, log->len, f) != log->len ? FAB_EIO : 0;
}

bool fab_run_has_series(const struct fab_run *r)
{
	return r->config->fabric.series_interval_ps > 0;
}

int fab_run_write(FILE *f, const struct fab_run *r, enum fab_output what)
{
	switch (what) {
	case FAB_OUT_TEXT:
		return fab_result_write_text(f, r->config, r->sim) || fab_jobs_write_text(f, r->jobs, r->njobs)
			? FAB_EIO
			: 0;
	case FAB_OUT_FLOWS_CSV:
		return fab_result_write_flows_csv(f, r->sim);
	case FAB_OUT_PORTS_CSV:
		return fab_result_write_ports_csv(f, r->sim);
	case FAB_OUT_SERIES_CSV:
		return fab_run_has_series(r) ? fab_result_write_series_csv(f, r->sim) : FAB_EINVAL;
	case FAB_OUT_SERIES_JSONL:
		return fab_run_has_series(r) ? fab_result_write_series_jsonl(f, r->sim) : FAB_EINVAL;
	case FAB_OUT_LOG:
		return r->work ? write_log(f, &r->work->log) : 0;
	case FAB_OUT_SLOWDOWN_CSV:
		return fab_result_write_slowdown_csv(f, r->sim);
	case FAB_OUT_JSON: {
		json_t *doc = fab_result_json_lean(r->config, r->sim);
		if (r->njobs)
			json_object_set_new(doc, "jobs", fab_jobs_json(r->jobs, r->njobs));
		int rc = fab_result_write_json(f, doc, r->sim);
		json_decref(doc);
		return rc;
	}
	default:
		return FAB_EINVAL;
	}
}

uint64_t fab_run_events(const struct fab_run *r)
{
	return fab_sim_totals(r->sim)->events;
}

uint32_t fab_run_threads(const struct fab_run *r)
{
	return FAB_MAX(fab_sim_threads(r->sim), 1u);
}

json_t *fab_coll_run_json(const struct fab_coll_run *r)
{
	return fab_coll_json(r->run->config, r->run->sim, &r->comm, &r->sweep);
}

int fab_coll_run_write(FILE *f, const struct fab_coll_run *r, enum fab_output what)
{
	switch (what) {
	case FAB_OUT_TEXT:
	case FAB_OUT_TEXT_ALGO:
		return fab_coll_write_text(f, r->run->config, r->run->sim, &r->comm, &r->sweep,
					   what == FAB_OUT_TEXT_ALGO, r->all_devices);
	case FAB_OUT_ROWS_CSV:
		return fab_coll_write_csv(f, r->run->config, &r->sweep);
	case FAB_OUT_PORTS_CSV:
		return fab_result_write_ports_csv(f, r->run->sim);
	case FAB_OUT_LOG:
		return write_log(f, &r->work.log);
	default:
		return FAB_EINVAL;
	}
}

uint64_t fab_coll_run_events(const struct fab_coll_run *r)
{
	return fab_run_events(r->run);
}

json_t *fab_matrix_run_json(const struct fab_matrix_run *r)
{
	json_t *doc = fab_result_json(r->run->config, r->run->sim);
	json_object_set_new(doc, "kind", json_string("matrix"));
	json_object_set_new(doc, "matrix", fab_matrix_json(&r->m));
	return doc;
}

int fab_matrix_run_write(FILE *f, const struct fab_matrix_run *r, enum fab_output what)
{
	switch (what) {
	case FAB_OUT_TEXT:
		return fab_matrix_write_text(f, &r->m);
	case FAB_OUT_PORTS_CSV:
		return fab_result_write_ports_csv(f, r->run->sim);
	default:
		return FAB_EINVAL;
	}
}
