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
