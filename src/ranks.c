/*
 * ranks.c - a run split over the processes a launcher started (mpirun,
 * srun, RANK/WORLD_SIZE): the probe's rendezvous and mesh (src/probe/)
 * carry the packet engine's window messages (src/packet/parallel_ranks.c).
 * Every rank builds the same run from the same scenario; each runs its
 * partition of the fabric; rank 0 ends with the whole run's results.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "run.h"

struct fab_rank_link {
	struct fab_probe *pr;
	uint32_t n, me, tag;
	size_t max;                    /* the longest message a rank may send */
	struct fab_probe_msg *po, *pi; /* [n]: a window's messages, as the probe takes them */
	struct fab_err err;
};

static int exchange(void *ctx, const struct fab_sim_msg *out, struct fab_sim_msg *in)
{
	struct fab_rank_link *l = ctx;
	for (uint32_t j = 0; j < l->n; j++)
		l->po[j] = (struct fab_probe_msg){out[j].data, out[j].len};
	int rc = fab_probe_exchange(l->pr, l->tag++, l->po, l->pi, l->max, &l->err);
	for (uint32_t j = 0; j < l->n; j++)
		in[j] = (struct fab_sim_msg){l->pi[j].data, l->pi[j].len};
	return rc;
}

/* what a split run cannot hold (as run.threads refuses it) */
static const char *unsplittable(const struct fab_config *c)
{
	return c->njobs                               ? "jobs"
		: c->nfaults                          ? "faults"
		: c->fabric.series_interval_ps        ? "time series (fabric.series_interval)"
		: c->fabric.engine == FAB_ENGINE_FLOW ? "the flow engine"
		: c->fabric.threads > 1               ? "run.threads above 1 (one partition a rank)"
		: c->fabric.partitions                ? "run.partitions (one partition a rank)"
						      : NULL;
}

int fab_run_join_ranks(struct fab_run *r, const char *master, double timeout_s, uint32_t *rank, uint32_t *nranks,
		       struct fab_err *err)
{
	struct fab_probe_params p = {.rendezvous_fd = -1, .conns = 1, .timeout_s = timeout_s, .master_given = master};
	char bad[400];
	const char *launcher = fab_probe_env(&p, bad, sizeof bad);
	if (!launcher && bad[0])
		return fab_err_set(err, FAB_EUSAGE, "--ranks: %s", bad);
	if (!launcher || p.nranks < 1 || p.rank >= p.nranks)
		return fab_err_set(err, FAB_EUSAGE,
				   "--ranks: no rank and size from a launcher (mpirun, srun, or RANK and WORLD_SIZE)");
	*rank = p.rank;
	*nranks = p.nranks;
	if (p.nranks == 1)
		return 0; /* one rank: the whole run here */
	const char *what = unsplittable(r->config);
	if (what)
		return fab_err_set(err, FAB_EINVAL,
				   "--ranks: %s run in one process (ranks split the packet engine's flows)", what);
	if (p.nranks > r->topo->nnics)
		return fab_err_set(err, FAB_EINVAL, "--ranks: %u ranks for %u NICs (at most one rank a NIC)", p.nranks,
				   r->topo->nnics);
	if (master) {
		const char *colon = strrchr(master, ':');
		char *end;
		errno = 0;
		unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
		if (!colon || colon == master || (size_t)(colon - master) >= sizeof p.master || errno || *end ||
		    port < 1 || port > 65535)
			return fab_err_set(err, FAB_EUSAGE, "--master: expected HOST:PORT, got \"%s\"", master);
		snprintf(p.master, sizeof p.master, "%.*s", (int)(colon - master), master);
		p.master_port = (uint16_t)port;
	}
	if (!p.master[0] || !p.master_port)
		return fab_err_set(err, FAB_EUSAGE,
				   "--ranks under %s: rank 0's address unknown: set MASTER_ADDR and MASTER_PORT on "
				   "every rank (mpirun -x MASTER_ADDR -x MASTER_PORT), or --master HOST:PORT",
				   launcher);
	const char *source;
	char why[320];
	if (fab_probe_env_token(&p, &source, why, sizeof why))
		return fab_err_set(err, FAB_EUSAGE, "--ranks: %s", why);
	struct fab_rank_link *l = fab_xcalloc(1, sizeof *l);
	l->pr = fab_probe_connect(&p, err);
	if (!l->pr) {
		free(l);
		return err->code ? err->code : FAB_EIO;
	}
	l->n = p.nranks;
	l->me = p.rank;
	l->po = fab_xcalloc(l->n, sizeof *l->po);
	l->pi = fab_xcalloc(l->n, sizeof *l->pi);
	/* a window's frames or the end's runs: the whole run's state, and room */
	size_t flows = fab_sim_nflows(r->sim);
	l->max = ((size_t)256 << 20) + flows * 512 + (size_t)r->topo->nports * 512 + (size_t)fab_sim_nqps(r->sim) * 2;
	if (l->max > UINT32_MAX)
		l->max = UINT32_MAX;
	r->ranks = l;
	struct fab_sim_ranks sr = {l->n, l->me, exchange, l};
	fab_sim_set_ranks(r->sim, &sr);
	return 0;
}

const char *fab_run_rank_error(const struct fab_run *r)
{
	return r->ranks && r->ranks->err.code ? r->ranks->err.msg : NULL;
}

void fab_run_ranks_free(struct fab_run *r)
{
	if (!r->ranks)
		return;
	fab_probe_close(r->ranks->pr);
	free(r->ranks->po);
	free(r->ranks->pi);
	free(r->ranks);
	r->ranks = NULL;
}
