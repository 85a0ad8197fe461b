/*
 * fabscope.c - the library facade: from a loaded scenario to a finished run.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../include/fabscope.h"

const char *fab_version_string(void)
{
	static char buf[128];
	snprintf(buf, sizeof buf, "fabscope %s (libyaml %s, jansson %s)", FABSCOPE_VERSION,
		 yaml_get_version_string(), JANSSON_VERSION);
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

struct fab_run *fab_run_new(const struct fab_config *c, struct fab_err *err)
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
	r->sim = fab_sim_new(r->topo, &c->fabric, c->run.seed, flows, nflows, err);
	free(flows);
	if (!r->sim)
		goto fail;
	fab_sim_set_server(r->sim, &c->server);
	return r;
fail:
	fab_run_free(r);
	return NULL;
}

int fab_run_exec(struct fab_run *r, fab_progress_fn progress, void *ctx)
{
	if (progress)
		fab_sim_set_progress(r->sim, progress, ctx);
	return fab_sim_run(r->sim, r->config->run.end_ps);
}

void fab_run_free(struct fab_run *r)
{
	if (!r)
		return;
	fab_sim_free(r->sim);
	fab_topo_free(r->topo);
	free(r);
}

struct fab_coll_run *fab_coll_run_new(const struct fab_config *c, bool log, struct fab_err *err)
{
	struct fab_coll_run *r = fab_xcalloc(1, sizeof *r);
	struct fab_config quiet;
	const struct fab_config *use = c;
	if (!c->coll.background) {
		/* the collective alone: the traffic section waits for another run */
		quiet = *c;
		memset(&quiet.traffic, 0, sizeof quiet.traffic);
		use = &quiet;
	}
	r->run = fab_run_new(use, err);
	if (!r->run)
		goto fail;
	r->run->config = c;
	fab_work_init(&r->work, r->run->sim, r->run->topo);
	r->work.log.enabled = log;
	const struct fab_topo *t = r->run->topo;
	uint32_t n = c->coll.gpus ? c->coll.gpus : t->ngpus;
	r->gpus = fab_xcalloc(n, sizeof *r->gpus);
	if (fab_place(t, c->coll.placement, n, c->run.seed, r->gpus, err)) {
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

int fab_coll_run_exec(struct fab_coll_run *r, fab_progress_fn progress, void *ctx,
		      struct fab_err *err)
{
	int rc = fab_run_exec(r->run, progress, ctx);
	if (rc)
		return fab_err_set(err, rc, "the run failed");
	if (r->sweep.rc) {
		*err = r->sweep.err;
		return r->sweep.rc;
	}
	if (!r->sweep.finished)
		return fab_err_set(err, FAB_EINTERNAL,
				   "the collective did not finish (stopped at run.end, or a deadlock)");
	return 0;
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
