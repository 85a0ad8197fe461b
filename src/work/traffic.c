/*
 * traffic.c - flow lists and traffic generators.
 *
 * Generators draw from their own PRNG stream (scenario seed, generator
 * index), so adding a generator never changes another's pairs.  The
 * permutation is a uniformly shuffled derangement repaired by random swaps
 * until every pair is allowed by its scope.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "../base/tok.h"
#include "cdf.h"
#include "traffic.h"

struct flow_vec {
	struct fab_sim_flow *v;
	size_t n, cap;
	bool over;         /* a flow past FAB_MAX_FLOWS was asked for (and dropped) */
	uint8_t transport; /* of the flows pushed now: 0 the fabric's, else kind + 1 */
};

static void push_flow(struct flow_vec *fv, const struct fab_topo *t, uint32_t src, uint32_t dst, fab_bytes bytes,
		      fab_time_ps start, uint32_t prio, uint32_t qps)
{
	if (fv->n == FAB_MAX_FLOWS) {
		fv->over = true;
		return;
	}
	if (fv->n == fv->cap) {
		fv->cap = fv->cap ? 2 * fv->cap : 64;
		fv->v = fab_xrealloc(fv->v, fv->cap, sizeof *fv->v);
	}
	fv->v[fv->n] = (struct fab_sim_flow){
		.id = (uint32_t)fv->n,
		.src_gpu = src,
		.dst_gpu = dst,
		.src_nic = fab_topo_gpu_nic(t, src),
		.dst_nic = fab_topo_gpu_nic(t, dst),
		.bytes = bytes,
		.start_ps = start,
		.prio = (uint8_t)prio,
		.transport = fv->transport,
		.qps = qps,
	};
	fv->n++;
}

static bool pair_allowed(const struct fab_topo *t, int scope, uint32_t a, uint32_t b)
{
	uint32_t na = fab_topo_gpu_nic(t, a), nb = fab_topo_gpu_nic(t, b);
	if (na == nb)
		return false;
	switch (scope) {
	case FAB_SCOPE_CROSS_SERVER:
		return fab_topo_gpu_server(t, a) != fab_topo_gpu_server(t, b);
	case FAB_SCOPE_CROSS_LEAF:
		return fab_topo_nic_leaf(t, na) != fab_topo_nic_leaf(t, nb);
	}
	return true;
}

static int loc_err(struct fab_err *err, const struct fab_src_loc *loc, const char *fmt, const char *detail)
{
	return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s: %s%s", loc->origin ? loc->origin : "?", loc->line, loc->col,
			   loc->what, fmt, detail ? detail : "");
}

static int gen_permutation(const struct fab_gen_spec *g, const struct fab_topo *t, struct fab_rng *r,
			   struct flow_vec *fv, struct fab_err *err)
{
	uint32_t n = t->ngpus;
	uint32_t *p = fab_xcalloc(n, sizeof *p);
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)fab_rng_below(r, i);
		uint32_t tmp = p[i - 1];
		p[i - 1] = p[j];
		p[j] = tmp;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (pair_allowed(t, g->scope, i, p[i]))
			continue;
		bool fixed = false;
		for (uint32_t tries = 0; tries < 8 * n && !fixed; tries++) {
			uint32_t j = (uint32_t)fab_rng_below(r, n);
			if (pair_allowed(t, g->scope, i, p[j]) && pair_allowed(t, g->scope, j, p[i])) {
				uint32_t tmp = p[i];
				p[i] = p[j];
				p[j] = tmp;
				fixed = true;
			}
		}
		for (uint32_t j = 0; j < n && !fixed; j++)
			if (pair_allowed(t, g->scope, i, p[j]) && pair_allowed(t, g->scope, j, p[i])) {
				uint32_t tmp = p[i];
				p[i] = p[j];
				p[j] = tmp;
				fixed = true;
			}
		if (!fixed) {
			free(p);
			return loc_err(err, &g->loc, "no permutation satisfies this scope on this topology", NULL);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		push_flow(fv, t, i, p[i], g->bytes, g->start_ps, g->priority, g->qps);
	free(p);
	return 0;
}

/* n distinct random GPUs that may send to dst (incast: any means other
 * servers), in GPU order, into cand[0..n); false when fewer can */
static bool pick_senders(const struct fab_topo *t, int scope, uint32_t dst, uint32_t n, struct fab_rng *r,
			 uint32_t *cand, uint32_t *ncand)
{
	uint32_t nc = 0;
	for (uint32_t i = 0; i < t->ngpus; i++)
		if (pair_allowed(t, scope == FAB_SCOPE_ANY ? FAB_SCOPE_CROSS_SERVER : scope, i, dst))
			cand[nc++] = i;
	*ncand = nc;
	if (n > nc || !n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i + (uint32_t)fab_rng_below(r, nc - i);
		uint32_t tmp = cand[i];
		cand[i] = cand[j];
		cand[j] = tmp;
	}
	/* senders in GPU order: stable, readable flow lists */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t k = i; k > 0 && cand[k - 1] > cand[k]; k--) {
			uint32_t tmp = cand[k];
			cand[k] = cand[k - 1];
			cand[k - 1] = tmp;
		}
	return true;
}

static int gen_incast(const struct fab_gen_spec *g, const struct fab_topo *t, struct fab_rng *r, struct flow_vec *fv,
		      struct fab_err *err)
{
	char detail[96];
	if (g->dst >= t->ngpus) {
		snprintf(detail, sizeof detail, "%u, but the cluster has GPUs 0..%u", g->dst, t->ngpus - 1);
		return loc_err(err, &g->loc, "dst is GPU ", detail);
	}
	uint32_t *cand = fab_xcalloc(t->ngpus, sizeof *cand), nc;
	if (!pick_senders(t, g->scope, g->dst, g->senders, r, cand, &nc)) {
		snprintf(detail, sizeof detail, "%u asked, %u GPUs can send to GPU %u", g->senders, nc, g->dst);
		free(cand);
		return loc_err(err, &g->loc, "senders: ", detail);
	}
	for (uint32_t i = 0; i < g->senders; i++)
		push_flow(fv, t, cand[i], g->dst, g->bytes, g->start_ps, g->priority, g->qps);
	free(cand);
	return 0;
}

/* the most flows one generator may make */

/* an exponential gap of the given mean (ps) */
static fab_time_ps exp_gap(struct fab_rng *r, double mean_ps)
{
	return (fab_time_ps)(-log1p(-fab_rng_unit(r)) * mean_ps);
}

static int cmp_flow_start(const void *a, const void *b)
{
	const struct fab_sim_flow *x = a, *y = b;
	if (x->start_ps != y->start_ps)
		return x->start_ps < y->start_ps ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id; /* the order drawn */
}

/*
 * Poisson arrivals as HPCC's traffic generator makes them: every GPU starts
 * flows at exponential gaps of mean (mean size x 8) / (load x its share of
 * its NIC's line rate), each to a uniformly drawn other GPU (scope
 * permitting) with a size from the CDF; incast events on top arrive at
 * exponential gaps of (senders x bytes x 8) / (incast_load x the sum of
 * the NICs' line rates), each to a uniformly drawn GPU from incast_senders
 * random GPUs on other servers.  Arrivals in [start, start + duration);
 * flows in order of start time (ties in the order drawn).
 */
static int gen_poisson(const struct fab_gen_spec *g, const struct fab_topo *t, struct fab_rng *r, struct flow_vec *fv,
		       struct fab_err *err)
{
	struct fab_cdf cdf;
	char detail[600];
	int rc = fab_cdf_load(&cdf, g->cdf, err);
	if (rc) {
		snprintf(detail, sizeof detail, "%s", err->msg);
		return fab_err_set(err, rc, "%s:%u:%u: %s: cdf: %s", g->loc.origin ? g->loc.origin : "?", g->loc.line,
				   g->loc.col, g->loc.what, detail);
	}
	struct flow_vec mine = {0};
	uint32_t *cand = fab_xcalloc(t->ngpus, sizeof *cand);
	fab_time_ps end = g->start_ps + g->duration_ps;
	double mean = fab_cdf_mean(&cdf);
	for (uint32_t src = 0; src < t->ngpus && g->load > 0; src++) {
		uint32_t nic = fab_topo_gpu_nic(t, src), sharing = 0;
		for (uint32_t k = fab_topo_gpu_server(t, src) * t->gpus_per_server;
		     k < (fab_topo_gpu_server(t, src) + 1) * t->gpus_per_server; k++)
			sharing += fab_topo_gpu_nic(t, k) == nic;
		double rate = (double)t->ports[t->nodes[t->nic_node[nic]].first_port].rate_bps / sharing;
		double gap_ps = mean * 8 / (g->load * rate) * 1e12;
		for (fab_time_ps at = g->start_ps + exp_gap(r, gap_ps); at < end; at += exp_gap(r, gap_ps)) {
			uint32_t dst, tries = 0;
			do
				dst = (uint32_t)fab_rng_below(r, t->ngpus);
			while (!pair_allowed(t, g->scope, src, dst) && ++tries < 100000);
			if (tries >= 100000) {
				rc = loc_err(err, &g->loc, "no GPU may receive from this one with this scope", NULL);
				goto out;
			}
			if (mine.n >= FAB_MAX_FLOWS) {
				rc = loc_err(err, &g->loc, "more than 10,000,000 flows: shorten duration or lower load",
					     NULL);
				goto out;
			}
			push_flow(&mine, t, src, dst, fab_cdf_draw(&cdf, r), at, g->priority, g->qps);
		}
	}
	if (g->incast_load > 0) {
		double cap = 0;
		for (uint32_t k = 0; k < t->nnics; k++)
			cap += (double)t->ports[t->nodes[t->nic_node[k]].first_port].rate_bps;
		double gap_ps = (double)g->incast_senders * (double)g->incast_bytes * 8 / (g->incast_load * cap) * 1e12;
		for (fab_time_ps at = g->start_ps + exp_gap(r, gap_ps); at < end; at += exp_gap(r, gap_ps)) {
			uint32_t dst = (uint32_t)fab_rng_below(r, t->ngpus), nc;
			if (!pick_senders(t, g->scope, dst, g->incast_senders, r, cand, &nc)) {
				snprintf(detail, sizeof detail, "%u asked, %u GPUs can send to GPU %u",
					 g->incast_senders, nc, dst);
				rc = loc_err(err, &g->loc, "incast_senders: ", detail);
				goto out;
			}
			if (mine.n + g->incast_senders > FAB_MAX_FLOWS) {
				rc = loc_err(err, &g->loc, "more than 10,000,000 flows: shorten duration or lower load",
					     NULL);
				goto out;
			}
			for (uint32_t i = 0; i < g->incast_senders; i++)
				push_flow(&mine, t, cand[i], dst, g->incast_bytes, at, g->priority, g->qps);
		}
	}
	if (mine.n) /* (qsort wants an array, even of none) */
		qsort(mine.v, mine.n, sizeof *mine.v, cmp_flow_start);
	for (size_t i = 0; i < mine.n; i++)
		push_flow(fv, t, mine.v[i].src_gpu, mine.v[i].dst_gpu, mine.v[i].bytes, mine.v[i].start_ps,
			  mine.v[i].prio, mine.v[i].qps);
out:
	free(mine.v);
	free(cand);
	fab_cdf_free(&cdf);
	return rc;
}

static int check_flow(const struct fab_flow_spec *f, const struct fab_topo *t, struct fab_err *err)
{
	char detail[128];
	if (f->src >= t->ngpus || f->dst >= t->ngpus) {
		snprintf(detail, sizeof detail, "%u does not exist; the cluster has GPUs 0..%u",
			 f->src >= t->ngpus ? f->src : f->dst, t->ngpus - 1);
		return loc_err(err, &f->loc, f->src >= t->ngpus ? "src: GPU " : "dst: GPU ", detail);
	}
	if (fab_topo_gpu_nic(t, f->src) == fab_topo_gpu_nic(t, f->dst)) {
		snprintf(detail, sizeof detail, "GPUs %u and %u share NIC %s", f->src, f->dst,
			 t->nodes[t->nic_node[fab_topo_gpu_nic(t, f->src)]].name);
		return loc_err(err, &f->loc, "a flow must cross the fabric: ", detail);
	}
	return 0;
}

int fab_traffic_expand(const struct fab_traffic_params *tp, const struct fab_topo *t, uint64_t seed,
		       struct fab_sim_flow **out, size_t *nout, struct fab_err *err)
{
	struct flow_vec fv = {0};
	struct fab_flow_spec *csv = NULL;
	size_t ncsv = 0;
	int rc = 0;
	for (size_t i = 0; i < tp->nflows; i++) {
		if ((rc = check_flow(&tp->flows[i], t, err)))
			goto fail;
		const struct fab_flow_spec *f = &tp->flows[i];
		fv.transport = (uint8_t)f->transport;
		push_flow(&fv, t, f->src, f->dst, f->bytes, f->start_ps, f->priority, f->qps);
	}
	fv.transport = 0;
	if (tp->flows_csv) {
		if ((rc = fab_traffic_read_csv(tp->flows_csv, &csv, &ncsv, err)))
			goto fail;
		for (size_t i = 0; i < ncsv; i++) {
			if ((rc = check_flow(&csv[i], t, err)))
				goto fail;
			push_flow(&fv, t, csv[i].src, csv[i].dst, csv[i].bytes, csv[i].start_ps, csv[i].priority,
				  csv[i].qps);
		}
	}
	if (tp->flows_ns3) {
		free(csv);
		csv = NULL;
		if ((rc = fab_traffic_read_ns3(tp->flows_ns3, t, &csv, &ncsv, err)))
			goto fail;
		for (size_t i = 0; i < ncsv; i++) {
			if ((rc = check_flow(&csv[i], t, err)))
				goto fail;
			push_flow(&fv, t, csv[i].src, csv[i].dst, csv[i].bytes, csv[i].start_ps, csv[i].priority,
				  csv[i].qps);
		}
	}
	for (size_t gi = 0; gi < tp->ngens; gi++) {
		const struct fab_gen_spec *g = &tp->gens[gi];
		struct fab_rng r;
		fab_rng_init(&r, seed, fab_rng_stream(FAB_RNG_TRAFFIC_GEN, gi));
		fv.transport = (uint8_t)g->transport;
		switch (g->kind) {
		case FAB_GEN_PERMUTATION:
			rc = gen_permutation(g, t, &r, &fv, err);
			break;
		case FAB_GEN_ALL_TO_ALL:
			for (uint32_t a = 0; a < t->ngpus && !fv.over; a++)
				for (uint32_t b = 0; b < t->ngpus; b++)
					if (a != b && pair_allowed(t, g->scope, a, b))
						push_flow(&fv, t, a, b, g->bytes, g->start_ps, g->priority, g->qps);
			break;
		case FAB_GEN_INCAST:
			rc = gen_incast(g, t, &r, &fv, err);
			break;
		case FAB_GEN_POISSON:
			rc = gen_poisson(g, t, &r, &fv, err);
			break;
		case FAB_GEN_RANDOM_PAIRS:
			for (uint32_t k = 0; k < g->pairs && !fv.over; k++) {
				uint32_t a, b, tries = 0;
				do {
					a = (uint32_t)fab_rng_below(&r, t->ngpus);
					b = (uint32_t)fab_rng_below(&r, t->ngpus);
				} while (!pair_allowed(t, g->scope, a, b) && ++tries < 100000);
				if (tries >= 100000) {
					rc = loc_err(err, &g->loc, "no pair satisfies this scope", NULL);
					goto fail;
				}
				push_flow(&fv, t, a, b, g->bytes, g->start_ps, g->priority, g->qps);
			}
			break;
		}
		if (!rc && fv.over) {
			char what[64];
			snprintf(what, sizeof what, "%u", FAB_MAX_FLOWS);
			rc = loc_err(err, &g->loc, "together with the flows before it, more flows than the limit of ",
				     what);
		}
		if (rc)
			goto fail;
	}
	if (fv.over) {
		rc = fab_err_set(err, FAB_EINVAL, "traffic: more than %u flows", FAB_MAX_FLOWS);
		goto fail;
	}
	free(csv);
	*out = fv.v;
	*nout = fv.n;
	return 0;
fail:
	free(csv);
	free(fv.v);
	return rc;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

/* the columns of a flow list, as colmap numbers them */
static const char *const csv_cols[] = {"src", "dst", "bytes", "start", "priority", "qps"};

/* a line's fields: l (the line trimmed) split at its commas, each trimmed,
 * into fields[0..*nf), with their columns in line (from 1) in fcol */
static int csv_fields(const char *path, unsigned lineno, char *line, char *l, char *fields[8], unsigned fcol[8],
		      unsigned *nf, struct fab_err *err)
{
	unsigned k = 0;
	for (char *q = l;;) {
		if (k == 8)
			return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: too many columns", path, lineno,
					   (unsigned)(q - line) + 1);
		fcol[k] = (unsigned)(q - line) + 1;
		fields[k++] = q;
		char *comma = strchr(q, ',');
		if (!comma)
			break;
		*comma = 0;
		q = comma + 1;
	}
	for (unsigned i = 0; i < k; i++) {
		char *tr = trim(fields[i]);
		fcol[i] += (unsigned)(tr - fields[i]);
		fields[i] = tr;
	}
	*nf = k;
	return 0;
}

/* the header line: each field a column's name (colmap[i]: which column),
 * none twice, src, dst and bytes among them */
static int csv_header(const char *path, unsigned lineno, char *const *fields, const unsigned *fcol, unsigned nf,
		      int *colmap, struct fab_err *err)
{
	for (unsigned i = 0; i < nf; i++) {
		colmap[i] = -1;
		for (unsigned c = 0; c < FAB_ARRAY_LEN(csv_cols); c++)
			if (!strcmp(fields[i], csv_cols[c]))
				colmap[i] = (int)c;
		if (colmap[i] < 0)
			return fab_err_set(
				err, FAB_EINVAL,
				"%s:%u:%u: unknown column '%s' (expected src, dst, bytes, start, priority, qps)", path,
				lineno, fcol[i], fields[i]);
	}
	bool have[6] = {0};
	for (unsigned i = 0; i < nf; i++) {
		if (have[colmap[i]])
			return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: column '%s' appears twice", path, lineno,
					   fcol[i], fields[i]);
		have[colmap[i]] = true;
	}
	if (!have[0] || !have[1] || !have[2])
		return fab_err_set(err, FAB_EINVAL, "%s:%u:1: the header needs at least src, dst and bytes", path,
				   lineno);
	return 0;
}

/* a flow's line: its fields, by the header's colmap, into fs (priority 3
 * and one queue pair unless they say) */
static int csv_flow(const char *path, unsigned lineno, char *const *fields, const unsigned *fcol, unsigned nf,
		    const int *colmap, struct fab_flow_spec *fs, struct fab_err *err)
{
	memset(fs, 0, sizeof *fs);
	fs->priority = 3;
	fs->qps = 1;
	fs->loc.origin = NULL;
	for (unsigned i = 0; i < nf; i++) {
		char why[160];
		uint64_t v = 0;
		int prc = 0;
		switch (colmap[i]) {
		case 0:
		case 1:
		case 4:
		case 5:
			prc = fab_parse_uint(fields[i], &v, why, sizeof why);
			if (!prc && colmap[i] == 4 && v >= FAB_NPRIO) {
				snprintf(why, sizeof why, "priority must be 0..7, got %s", fields[i]);
				prc = FAB_EINVAL;
			}
			if (!prc && colmap[i] == 5 && (v < 1 || v > 1024)) {
				snprintf(why, sizeof why, "qps must be 1..1024, got %s", fields[i]);
				prc = FAB_EINVAL;
			}
			if (!prc && v > UINT32_MAX) {
				snprintf(why, sizeof why, "value too large: %s", fields[i]);
				prc = FAB_EINVAL;
			}
			if (colmap[i] == 0)
				fs->src = (uint32_t)v;
			else if (colmap[i] == 1)
				fs->dst = (uint32_t)v;
			else if (colmap[i] == 4)
				fs->priority = (uint32_t)v;
			else
				fs->qps = (uint32_t)v;
			break;
		case 2:
			prc = fab_parse_bytes(fields[i], &fs->bytes, why, sizeof why);
			if (!prc && !fs->bytes) {
				snprintf(why, sizeof why, "bytes must be at least 1");
				prc = FAB_EINVAL;
			}
			break;
		case 3:
			prc = fab_parse_time(fields[i], &fs->start_ps, why, sizeof why);
			break;
		}
		if (prc)
			return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s: %s", path, lineno, fcol[i],
					   csv_cols[colmap[i]], why);
	}
	fs->loc.line = lineno;
	fs->loc.col = 1;
	snprintf(fs->loc.what, sizeof fs->loc.what, "flow");
	return 0;
}

int fab_traffic_read_csv(const char *path, struct fab_flow_spec **flows, size_t *n, struct fab_err *err)
{
	char *text;
	size_t tlen;
	*flows = NULL;
	*n = 0;
	int rc = fab_read_text(path, "flow list", FAB_TOK_MAX_FILE, false, &text, &tlen, err);
	if (rc)
		return rc;
	int colmap[8];
	unsigned ncols = 0, lineno = 0;
	size_t cap = 0;
	for (char *line = text, *next; line < text + tlen; line = next) {
		/* lines of any length: the whole file is in memory */
		char *nl = memchr(line, '\n', (size_t)(text + tlen - line));
		next = nl ? nl + 1 : text + tlen;
		if (nl)
			*nl = 0;
		lineno++;
		if (*n >= FAB_MAX_FLOWS) {
			rc = fab_err_set(err, FAB_EINVAL, "%s:%u:1: more than %u flows", path, lineno, FAB_MAX_FLOWS);
			goto out;
		}
		char *l = trim(line);
		if (!*l || *l == '#')
			continue;
		char *fields[8];
		unsigned fcol[8], nf = 0;
		rc = csv_fields(path, lineno, line, l, fields, fcol, &nf, err);
		if (rc)
			goto out;
		if (!ncols) { /* the header */
			rc = csv_header(path, lineno, fields, fcol, nf, colmap, err);
			if (rc)
				goto out;
			ncols = nf;
			continue;
		}
		if (nf != ncols) {
			rc = fab_err_set(err, FAB_EINVAL, "%s:%u:1: expected %u fields, got %u", path, lineno, ncols,
					 nf);
			goto out;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*flows = fab_xrealloc(*flows, cap, sizeof **flows);
		}
		rc = csv_flow(path, lineno, fields, fcol, nf, colmap, &(*flows)[*n], err);
		if (rc)
			goto out;
		(*n)++;
	}
	if (!ncols)
		rc = fab_err_set(err, FAB_EINVAL, "%s: empty flow list (expected a header line)", path);
out:
	free(text);
	if (rc) {
		free(*flows);
		*flows = NULL;
		*n = 0;
	} else {
		/* messages about these flows name the CSV file */
		for (size_t i = 0; i < *n; i++)
			(*flows)[i].loc.origin = path;
	}
	return rc;
}

void fab_traffic_free(struct fab_traffic_params *tp)
{
	for (size_t i = 0; i < tp->ngens; i++)
		free(tp->gens[i].cdf);
	free(tp->flows);
	free(tp->gens);
	free(tp->flows_csv);
	free(tp->flows_ns3);
	memset(tp, 0, sizeof *tp);
}
