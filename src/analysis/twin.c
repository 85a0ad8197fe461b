/*
 * twin.c - the simulated cluster fitted to the measured one (twin.h).
 *
 * Each measured pair is divided by what the design's simulation gives the
 * same pair in the same rounds: a pair's ratio is the lower of its two
 * directions.  The cluster's factor is the median ratio of the pairs that
 * are not low (first against the upper quartile, then against that
 * median): what every host achieves of what the fabric allows.  A pair
 * under tolerance x the factor is low.  The candidates are each host's link
 * and the fabric between each two switches; a candidate explains its pairs
 * when at least `share` of the pairs that cross it are low.  They are taken
 * greedily, the one that explains most low pairs not yet explained first
 * (ties: the lower ratio), until none explains another; a low pair left
 * over is its path's.  Latency: each host's median over its pairs against
 * the hosts' median.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin.h"

void fab_twin_defaults(struct fab_twin_params *p)
{
	*p = (struct fab_twin_params){.tolerance = 0.8, .share = 0.75, .lat_factor = 3, .lat_min_us = 50};
}

/* a candidate: a host's link (sw_b < 0) or the fabric between two switches */
struct cand {
	int host, sw_a, sw_b;
	uint32_t pairs, low, covers;
	bool picked;
};

struct fit {
	uint32_t n;
	double *bw_m, *bw_e, *lat_m, *lat_e; /* n x n, NAN where not measured */
	double *ratio;                       /* n x n, the pair's (i < j) */
	int *sw;                             /* each rank's switch */
	const char **sw_name;
	uint32_t nsw;
	bool *low, *explained;
	double factor;       /* what every host achieves of the design's rate */
	double low_ref;      /* the pairs' own median, the lower direction each: low is under tolerance x this */
	const uint32_t *map; /* rank -> design endpoint, or NULL */
};

static double cell(const json_t *m, uint32_t i, uint32_t j)
{
	const json_t *v = json_array_get(json_array_get(m, i), j);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the median of v[0..n) (sorted in place); NAN when n is 0 */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool crosses(const struct fit *f, const struct cand *c, uint32_t i, uint32_t j)
{
	if (c->sw_b < 0)
		return c->host == (int)i || c->host == (int)j;
	int a = f->sw[i], b = f->sw[j];
	return (a == c->sw_a && b == c->sw_b) || (a == c->sw_b && b == c->sw_a);
}

static double pair_ratio(const struct fit *f, uint32_t i, uint32_t j)
{
	return f->ratio[(size_t)(i < j ? i : j) * f->n + (i < j ? j : i)];
}

/* i -> j's measured over simulated; NAN where either is missing */
static double dir_ratio(const struct fit *f, uint32_t i, uint32_t j)
{
	size_t ij = (size_t)i * f->n + j;
	return f->bw_e[ij] > 0 ? f->bw_m[ij] / f->bw_e[ij] : NAN;
}

/* The pairs that are not low: those whose lower direction is within
 * tolerance of the upper quartile, then of the median of those (a pair is
 * low by its lower direction).  The factor: the median of both directions
 * of the pairs that are not low (each direction's own, so that the noise
 * between a pair's two directions does not pull it down). */
static void fit_factor(struct fit *f, const struct fab_twin_params *p, double *tmp)
{
	size_t k = 0;
	for (uint32_t i = 0; i < f->n; i++)
		for (uint32_t j = i + 1; j < f->n; j++)
			if (!isnan(pair_ratio(f, i, j)))
				tmp[k++] = pair_ratio(f, i, j);
	qsort(tmp, k, sizeof *tmp, cmp_d);
	double ref = tmp[(k * 3) / 4];
	for (int round = 0; round < 2; round++) {
		size_t m = 0;
		for (size_t x = 0; x < k; x++)
			if (tmp[x] >= p->tolerance * ref)
				tmp[k + m++] = tmp[x];
		ref = median(tmp + k, m);
		qsort(tmp, k, sizeof *tmp, cmp_d);
	}
	size_t m = 0;
	for (uint32_t i = 0; i < f->n; i++)
		for (uint32_t j = i + 1; j < f->n; j++) {
			f->low[(size_t)i * f->n + j] = pair_ratio(f, i, j) < p->tolerance * ref;
			if (!(pair_ratio(f, i, j) >= p->tolerance * ref))
				continue;
			double a = dir_ratio(f, i, j), b = dir_ratio(f, j, i);
			if (!isnan(a))
				tmp[m++] = a;
			if (!isnan(b))
				tmp[m++] = b;
		}
	f->factor = m ? median(tmp, m) : ref;
	f->low_ref = ref;
}

static int switch_of(struct fit *f, const char *name)
{
	for (uint32_t s = 0; s < f->nsw; s++)
		if (!strcmp(f->sw_name[s], name))
			return (int)s;
	f->sw_name[f->nsw] = name;
	return (int)f->nsw++;
}

/* the design's link between a and b: its rate, and how many there are */
static double link_rate(const json_t *design, const char *a, const char *b, int *count)
{
	size_t i;
	const json_t *pt;
	double rate = 0;
	*count = 0;
	json_array_foreach(json_object_get(design, "ports"), i, pt)
	{
		const char *nd = json_string_value(json_object_get(pt, "node"));
		const char *pr = json_string_value(json_object_get(pt, "peer"));
		if (nd && pr && !strcmp(nd, a) && !strcmp(pr, b)) {
			rate = json_number_value(json_object_get(pt, "rate_bps"));
			(*count)++;
		}
	}
	return rate;
}

static json_t *rate_text(double bps)
{
	char buf[48];
	fab_rate_bps r = (fab_rate_bps)llround(bps / 1e3) * 1000;
	return json_string(fab_fmt_rate(r > 0 ? r : 1000, buf, sizeof buf));
}

/* one departure of candidate c: its figures over the low pairs it explains */
static json_t *departure(const struct fit *f, const struct cand *c, const json_t *ends, const json_t *design,
			 double *tmp)
{
	size_t k = 0, km = 0, ke = 0;
	double *m = tmp + (size_t)f->n * f->n, *e = m + (size_t)f->n * f->n;
	json_t *lows = json_array();
	for (uint32_t i = 0; i < f->n; i++)
		for (uint32_t j = 0; j < f->n; j++) {
			if (i == j || !crosses(f, c, i, j) || !f->low[(size_t)(i < j ? i : j) * f->n + (i < j ? j : i)])
				continue;
			if (i < j) {
				tmp[k++] = pair_ratio(f, i, j) / f->factor;
				json_array_append_new(lows, json_pack("[II]", (json_int_t)i, (json_int_t)j));
			}
			if (!isnan(f->bw_m[(size_t)i * f->n + j])) {
				m[km++] = f->bw_m[(size_t)i * f->n + j];
				e[ke++] = f->bw_e[(size_t)i * f->n + j] * f->factor;
			}
		}
	double ratio = median(tmp, k);
	json_t *d = json_object();
	const char *node, *peer;
	char target[200];
	if (c->sw_b < 0) {
		node = json_string_value(json_array_get(json_object_get(json_object_get(design, "matrix"), "endpoints"),
							f->map ? f->map[c->host] : (size_t)c->host));
		peer = f->sw_name[f->sw[c->host]];
		snprintf(target, sizeof target, "link of %s (%s - %s)",
			 json_string_value(json_array_get(ends, c->host)), node, peer);
	} else {
		node = f->sw_name[c->sw_a];
		peer = f->sw_name[c->sw_b];
		snprintf(target, sizeof target, "fabric between %s and %s", node, peer);
	}
	json_object_set_new(d, "kind", json_string(c->sw_b < 0 ? "link" : "fabric"));
	json_object_set_new(d, "target", json_string(target));
	json_object_set_new(d, "ratio", json_real(ratio));
	json_object_set_new(d, "pairs", json_integer(c->pairs));
	json_object_set_new(d, "low_pairs", json_integer(c->low));
	json_object_set_new(d, "explains", lows);
	json_object_set_new(d, "measured_GBps", json_real(median(m, km)));
	json_object_set_new(d, "expected_GBps", json_real(median(e, ke)));
	int links;
	double rate = link_rate(design, node, peer, &links);
	if (links == 1 && rate > 0) {
		json_t *fault = json_object();
		json_object_set_new(fault, "kind", json_string("degrade"));
		json_object_set_new(fault, "node", json_string(node));
		json_object_set_new(fault, "peer", json_string(peer));
		json_object_set_new(fault, "rate", rate_text(rate * fmin(ratio, 1)));
		json_object_set_new(d, "design_bps", json_real(rate));
		json_object_set_new(d, "fault", fault);
	}
	return d;
}

static json_t *path_departure(const struct fit *f, uint32_t i, uint32_t j, const json_t *ends)
{
	char target[200];
	snprintf(target, sizeof target, "path between %s and %s", json_string_value(json_array_get(ends, i)),
		 json_string_value(json_array_get(ends, j)));
	json_t *d = json_object();
	json_object_set_new(d, "kind", json_string("path"));
	json_object_set_new(d, "target", json_string(target));
	json_object_set_new(d, "ratio", json_real(pair_ratio(f, i, j) / f->factor));
	json_object_set_new(d, "pairs", json_integer(1));
	json_object_set_new(d, "low_pairs", json_integer(1));
	json_object_set_new(d, "explains", json_pack("[[II]]", (json_int_t)i, (json_int_t)j));
	double m = fmin(f->bw_m[(size_t)i * f->n + j], f->bw_m[(size_t)j * f->n + i]);
	json_object_set_new(d, "measured_GBps", json_real(m));
	json_object_set_new(d, "expected_GBps", json_real(f->bw_e[(size_t)i * f->n + j] * f->factor));
	return d;
}

/* the hosts' latency: each one's median over its pairs, the median of
 * those, and a departure for each host far above it */
static double fit_latency(struct fit *f, const struct fab_twin_params *p, const json_t *ends, const json_t *dends,
			  double *tmp, json_t *deps, json_t *rows, double *expected)
{
	double *own = tmp + (size_t)2 * f->n * f->n, *exp_own = own + f->n;
	for (int which = 0; which < 2; which++) {
		const double *lat = which ? f->lat_e : f->lat_m;
		for (uint32_t i = 0; i < f->n; i++) {
			size_t k = 0;
			for (uint32_t j = 0; j < f->n; j++)
				if (j != i && !isnan(lat[(size_t)i * f->n + j]))
					tmp[k++] = lat[(size_t)i * f->n + j];
			(which ? exp_own : own)[i] = median(tmp, k);
		}
	}
	size_t k = 0, ke = 0;
	for (uint32_t i = 0; i < f->n; i++) {
		if (!isnan(own[i]))
			tmp[k++] = own[i];
		if (!isnan(exp_own[i]))
			tmp[f->n + ke++] = exp_own[i];
	}
	double typical = median(tmp, k);
	*expected = median(tmp + f->n, ke);
	for (uint32_t i = 0; i < f->n; i++) {
		json_object_set_new(json_array_get(rows, i), "lat_us", isnan(own[i]) ? json_null() : json_real(own[i]));
		if (isnan(own[i]) || own[i] <= p->lat_factor * typical || own[i] - typical < p->lat_min_us)
			continue;
		/* a slow host's late ACKs cost its pairs some bandwidth: its
		 * pairs down to half the factor are its, not a link's */
		for (uint32_t j = 0; j < f->n; j++) {
			size_t ij = (size_t)(i < j ? i : j) * f->n + (i < j ? j : i);
			if (j != i && pair_ratio(f, i, j) >= 0.5 * f->low_ref)
				f->explained[ij] = true;
		}
		char target[200];
		snprintf(target, sizeof target, "host %s", json_string_value(json_array_get(ends, i)));
		json_t *d = json_object();
		json_object_set_new(d, "kind", json_string("host"));
		json_object_set_new(d, "target", json_string(target));
		json_object_set_new(d, "ratio", json_real(own[i] / typical));
		json_object_set_new(d, "measured_us", json_real(own[i]));
		json_object_set_new(d, "expected_us", json_real(typical));
		/* the host's extra time, each way, on its link */
		char delay[48];
		const char *nic = json_string_value(json_array_get(dends, f->map ? f->map[i] : i));
		/* a delay fault adds at most 1 s */
		bool fits = own[i] - typical <= 1e6;
		if (fits)
			fab_fmt_time((fab_time_ps)llround((own[i] - typical) * 1e3) * 1000, delay, sizeof delay);
		if (nic && fits)
			json_object_set_new(d, "fault",
					    json_pack("{ss ss ss ss}", "kind", "delay", "node", nic, "peer",
						      f->sw_name[f->sw[i]], "delay", delay));
		json_array_append_new(deps, d);
	}
	return typical;
}

/* how far below (or above, for latency) what is expected: ranks them */
static double score(const json_t *d)
{
	double r = json_number_value(json_object_get(d, "ratio"));
	return r > 1 ? 1 - 1 / r : 1 - r;
}

static int cmp_dep(const void *a, const void *b)
{
	double x = score(*(json_t *const *)a), y = score(*(json_t *const *)b);
	return (x < y) - (x > y);
}

static json_t *key_row(const char *key, const char *value, const char *design, const char *why)
{
	json_t *k = json_object();
	json_object_set_new(k, "key", json_string(key));
	json_object_set_new(k, "value", json_string(value));
	json_object_set_new(k, "design", json_string(design));
	json_object_set_new(k, "why", json_string(why));
	return k;
}

/* what every host shares, as scenario keys: the rate a NIC achieves and
 * TCP's per-message latency */
static json_t *fit_keys(const struct fit *f, const json_t *design, const json_t *dends, const uint32_t *map,
			double lat_m, double lat_e)
{
	json_t *keys = json_array(), *cfg = json_object_get(design, "config");
	char why[240], v[48], dv[48];
	const char *pcie = json_string_value(json_object_get(json_object_get(cfg, "topology"), "pcie_rate"));
	fab_rate_bps cap = 0;
	char e[80];
	if (pcie && !fab_parse_rate(pcie, &cap, e, sizeof e) && f->factor < 0.97) {
		double line = 0;
		for (uint32_t i = 0; i < f->n; i++) {
			const char *nic = json_string_value(json_array_get(dends, map ? map[i] : i));
			const json_t *links = json_object_get(json_object_get(design, "matrix"), "links");
			const char *sw = json_string_value(
				json_object_get(json_array_get(links, map ? map[i] : i), "switch"));
			int count;
			double r = nic && sw ? link_rate(design, nic, sw, &count) : 0;
			if (r > 0 && (line == 0 || r < line))
				line = r;
		}
		double base = fmin(line, (double)cap);
		snprintf(why, sizeof why,
			 "the pairs that are not low move %.3f of what the design allows: a NIC achieves %.3f x %s",
			 f->factor, f->factor, fab_fmt_rate((fab_rate_bps)base, dv, sizeof dv));
		/* no slower than the slowest rate a scenario takes */
		fab_fmt_rate((fab_rate_bps)llround(fmax(base * f->factor, 1e6) / 1e3) * 1000, v, sizeof v);
		json_array_append_new(keys, key_row("topology.pcie_rate", v, pcie, why));
	}
	const char *tp = json_string_value(json_object_get(json_object_get(cfg, "fabric"), "transport"));
	const char *kl = json_string_value(
		json_object_get(json_object_get(json_object_get(cfg, "fabric"), "tcp"), "kernel_latency"));
	fab_time_ps klps;
	if (tp && !strcmp(tp, "tcp") && kl && !fab_parse_time(kl, &klps, e, sizeof e) && !isnan(lat_m) &&
	    !isnan(lat_e) && fabs(lat_m - lat_e) > 0.05 * lat_e) {
		double want = (double)klps / 1e6 + lat_m - lat_e;
		snprintf(why, sizeof why,
			 "the pairs that depart in nothing run %+.2f us one way against the design (the median): the "
			 "kernel's part moved by that%s",
			 lat_m - lat_e, want < 0 ? " (no less than 0)" : "");
		fab_fmt_time((fab_time_ps)llround(fmax(want, 0) * 1e3) * 1000, v, sizeof v);
		json_array_append_new(keys, key_row("fabric.tcp.kernel_latency", v, kl, why));
	}
	return keys;
}

/* the candidates that explain the low pairs, greedily (see the top) */
static void explain(struct fit *f, const struct fab_twin_params *p, struct cand *c, uint32_t nc, const json_t *ends,
		    const json_t *design, double *tmp, json_t *deps)
{
	for (uint32_t x = 0; x < nc; x++)
		for (uint32_t i = 0; i < f->n; i++)
			for (uint32_t j = i + 1; j < f->n; j++)
				if (!isnan(pair_ratio(f, i, j)) && crosses(f, &c[x], i, j)) {
					c[x].pairs++;
					c[x].low += f->low[(size_t)i * f->n + j];
				}
	for (;;) {
		int best = -1;
		for (uint32_t x = 0; x < nc; x++) {
			c[x].covers = 0;
			if (c[x].picked || c[x].pairs < 2 || c[x].low < p->share * c[x].pairs)
				continue;
			for (uint32_t i = 0; i < f->n; i++)
				for (uint32_t j = i + 1; j < f->n; j++)
					c[x].covers += f->low[(size_t)i * f->n + j] &&
						!f->explained[(size_t)i * f->n + j] && crosses(f, &c[x], i, j);
			if (c[x].covers && (best < 0 || c[x].covers > c[best].covers))
				best = (int)x;
		}
		if (best < 0)
			break;
		c[best].picked = true;
		for (uint32_t i = 0; i < f->n; i++)
			for (uint32_t j = i + 1; j < f->n; j++)
				if (crosses(f, &c[best], i, j))
					f->explained[(size_t)i * f->n + j] = true;
		json_array_append_new(deps, departure(f, &c[best], ends, design, tmp));
	}
	for (uint32_t i = 0; i < f->n; i++)
		for (uint32_t j = i + 1; j < f->n; j++)
			if (f->low[(size_t)i * f->n + j] && !f->explained[(size_t)i * f->n + j])
				json_array_append_new(deps, path_departure(f, i, j, ends));
}

/* the probe's bandwidth matrix, n x n (NAN where not measured), a pair
 * re-tested alone taken from its round (before_GBps), as the simulated
 * matrix runs it; NULL and err when a re-tested figure is no bandwidth */
static double *measured_matrix(const json_t *pm, size_t n, struct fab_err *err)
{
	double *m = fab_xcalloc(n * n + 1, sizeof *m);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			m[i * n + j] = cell(json_object_get(pm, "bw_GBps"), (uint32_t)i, (uint32_t)j);
	size_t x;
	const json_t *rt;
	json_array_foreach(json_object_get(pm, "retested"), x, rt)
	{
		const json_t *pair = json_object_get(rt, "pair"), *before = json_object_get(rt, "before_GBps");
		json_int_t i = json_integer_value(json_array_get(pair, 0)),
			   j = json_integer_value(json_array_get(pair, 1));
		if (i < 0 || j < 0 || i >= (json_int_t)n || j >= (json_int_t)n || i == j)
			continue;
		for (int d = 0; d < 2; d++) {
			const json_t *v = json_array_get(before, (size_t)d);
			double bv = json_is_number(v) ? json_number_value(v) : NAN;
			if (v && !json_is_null(v) && !(bv >= 0 && isfinite(bv))) {
				free(m);
				fab_err_set(
					err, FAB_EINVAL,
					"matrix.retested[%zu].before_GBps[%d]: expected a number of at least 0 or null",
					x, d);
				return NULL;
			}
			m[d ? (size_t)j * n + (size_t)i : (size_t)i * n + (size_t)j] = bv;
		}
	}
	return m;
}

/* the two documents' matrices side by side; 0, or an error */
static int load(struct fit *f, const json_t *probe, const json_t *design, const uint32_t *map, struct fab_err *err)
{
	const json_t *pm = json_object_get(probe, "matrix"), *dm = json_object_get(design, "matrix");
	if (!json_is_object(pm) || !json_is_object(dm))
		return fab_err_set(err, FAB_EINVAL, "%s",
				   !json_is_object(pm) ? "the probe document has no matrix section"
						       : "the design's document has no matrix section");
	size_t n = json_array_size(json_object_get(pm, "endpoints")),
	       m = json_array_size(json_object_get(dm, "endpoints"));
	if (n < 2 || n > 65536)
		return fab_err_set(err, FAB_EINVAL, "the probe's matrix has %zu endpoints: 2 to 65,536 expected", n);
	if (!map && n != m)
		return fab_err_set(
			err, FAB_EINVAL,
			"the probe measured %zu hosts and the scenario has %zu NICs: give a map (--map FILE)", n, m);
	json_int_t pb = json_integer_value(json_object_get(pm, "bytes")),
		   db = json_integer_value(json_object_get(dm, "bytes"));
	if (pb != db)
		return fab_err_set(err, FAB_EINVAL, "the probe sent %lld bytes a pair, the design's matrix %lld",
				   (long long)pb, (long long)db);
	f->n = (uint32_t)n;
	f->map = map;
	size_t nn = n * n;
	f->bw_m = fab_xcalloc(5 * nn, sizeof *f->bw_m);
	f->bw_e = f->bw_m + nn;
	f->lat_m = f->bw_e + nn;
	f->lat_e = f->lat_m + nn;
	f->ratio = f->lat_e + nn;
	f->low = fab_xcalloc(2 * nn, sizeof *f->low);
	f->explained = f->low + nn;
	f->sw = fab_xcalloc(n, sizeof *f->sw);
	f->sw_name = fab_xcalloc(n, sizeof *f->sw_name);
	size_t measured = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t di = map ? map[i] : i;
		const char *sw = json_string_value(
			json_object_get(json_array_get(json_object_get(dm, "links"), di), "switch"));
		f->sw[i] = switch_of(f, sw ? sw : "?");
		for (uint32_t j = 0; j < n; j++) {
			uint32_t dj = map ? map[j] : j;
			f->bw_e[i * n + j] = cell(json_object_get(dm, "bw_GBps"), di, dj);
			f->lat_m[i * n + j] = cell(json_object_get(pm, "lat_us"), i, j);
			f->lat_e[i * n + j] = cell(json_object_get(dm, "lat_us"), di, dj);
		}
	}
	double *mm = measured_matrix(pm, n, err);
	if (!mm)
		return FAB_EINVAL;
	memcpy(f->bw_m, mm, nn * sizeof *mm);
	free(mm);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++) {
			double a = f->bw_m[i * n + j] / f->bw_e[i * n + j], b = f->bw_m[j * n + i] / f->bw_e[j * n + i];
			if (!(f->bw_e[i * n + j] > 0))
				a = NAN;
			if (!(f->bw_e[j * n + i] > 0))
				b = NAN;
			f->ratio[i * n + j] = isnan(a) ? b : isnan(b) ? a : fmin(a, b);
			measured += !isnan(f->ratio[i * n + j]);
		}
	if (!measured)
		return fab_err_set(err, FAB_EINVAL, "no pair was measured by both the probe and the design's matrix");
	return 0;
}

static void fit_free(struct fit *f)
{
	free(f->bw_m);
	free(f->low);
	free(f->sw);
	free(f->sw_name);
}

json_t *fab_twin_fit(const json_t *probe, const json_t *design, const uint32_t *map, const struct fab_twin_params *p,
		     struct fab_err *err)
{
	struct fit f = {0};
	if (load(&f, probe, design, map, err)) {
		fit_free(&f);
		return NULL;
	}
	uint32_t n = f.n;
	double *tmp = fab_xcalloc(3 * (size_t)n * n + 2 * n, sizeof *tmp);
	fit_factor(&f, p, tmp);
	if (!(f.factor > 0 && isfinite(f.factor))) {
		free(tmp);
		fit_free(&f);
		fab_err_set(err, FAB_EINVAL, "no measured pair moved any bytes: nothing to fit");
		return NULL;
	}
	/* the candidates: every host's link, the fabric between every two
	 * switches that hold hosts */
	struct cand *c = fab_xcalloc(n + (size_t)f.nsw * f.nsw, sizeof *c);
	uint32_t nc = 0;
	for (uint32_t i = 0; i < n; i++)
		c[nc++] = (struct cand){.host = (int)i, .sw_b = -1};
	for (uint32_t a = 0; a < f.nsw; a++)
		for (uint32_t b = a + 1; b < f.nsw; b++)
			c[nc++] = (struct cand){.host = -1, .sw_a = (int)a, .sw_b = (int)b};
	const json_t *ends = json_object_get(json_object_get(probe, "matrix"), "endpoints");
	const json_t *dends = json_object_get(json_object_get(design, "matrix"), "endpoints");
	json_t *deps = json_array(), *rows = json_array();
	for (uint32_t i = 0; i < n; i++) {
		size_t k = 0;
		for (uint32_t j = 0; j < n; j++)
			if (j != i && !isnan(pair_ratio(&f, i, j)))
				tmp[k++] = pair_ratio(&f, i, j) / f.factor;
		json_t *r = json_object();
		json_object_set(r, "endpoint", json_array_get(ends, i));
		json_object_set(r, "nic", json_array_get(dends, map ? map[i] : i));
		json_object_set_new(r, "switch", json_string(f.sw_name[f.sw[i]]));
		json_object_set_new(r, "ratio", k ? json_real(median(tmp, k)) : json_null());
		json_array_append_new(rows, r);
	}
	double lat_e, lat_m = fit_latency(&f, p, ends, dends, tmp, deps, rows, &lat_e);
	explain(&f, p, c, nc, ends, design, tmp, deps);
	size_t nd = json_array_size(deps), pairs = 0, low = 0;
	json_t **sorted = fab_xcalloc(nd + 1, sizeof *sorted);
	for (size_t i = 0; i < nd; i++)
		sorted[i] = json_incref(json_array_get(deps, i));
	qsort(sorted, nd, sizeof *sorted, cmp_dep);
	json_array_clear(deps);
	for (size_t i = 0; i < nd; i++)
		json_array_append_new(deps, sorted[i]);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++) {
			pairs += !isnan(pair_ratio(&f, i, j));
			low += f.low[(size_t)i * n + j];
		}
	json_t *out = json_object();
	json_object_set_new(out, "schema", json_string("fabscope.calibration/1"));
	json_object_set_new(out, "ranks", json_integer(n));
	json_object_set(out, "bytes", json_object_get(json_object_get(probe, "matrix"), "bytes"));
	json_object_set_new(out, "tolerance", json_real(p->tolerance));
	json_object_set_new(out, "factor", json_real(f.factor));
	json_object_set_new(out, "pairs", json_integer((json_int_t)pairs));
	json_object_set_new(out, "low_pairs", json_integer((json_int_t)low));
	json_t *lat = json_object();
	json_object_set_new(lat, "measured_us", isnan(lat_m) ? json_null() : json_real(lat_m));
	json_object_set_new(lat, "expected_us", isnan(lat_e) ? json_null() : json_real(lat_e));
	json_object_set_new(out, "latency", lat);
	/* TCP's per-message latency from the pairs that depart in nothing:
	 * the median of measured minus designed over them */
	size_t nl = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++) {
			size_t ij = (size_t)i * n + j;
			double dl = f.lat_m[ij] - f.lat_e[ij];
			if (!f.low[ij] && !f.explained[ij] && !isnan(dl))
				tmp[nl++] = dl;
		}
	double lat_shift = nl ? median(tmp, nl) : lat_m - lat_e;
	json_object_set_new(out, "keys", fit_keys(&f, design, dends, map, lat_e + lat_shift, lat_e));
	json_object_set_new(out, "endpoints", rows);
	json_object_set_new(out, "departures", deps);
	free(sorted);
	free(c);
	free(tmp);
	fit_free(&f);
	return out;
}

double fab_twin_refine(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map, double tol)
{
	const json_t *pm = json_object_get(probe, "matrix");
	size_t n = json_array_size(json_object_get(pm, "endpoints"));
	double *mm = measured_matrix(pm, n, NULL);
	const json_t *qm = json_object_get(json_object_get(pred, "matrix"), "bw_GBps");
	size_t nd = json_array_size(json_object_get(fit, "departures"));
	double worst = 0, v[2 * 4096], *scale = fab_xcalloc(nd + 1, sizeof *scale);
	size_t x;
	json_t *d;
	json_array_foreach(json_object_get(fit, "departures"), x, d)
	{
		json_t *flt = json_object_get(d, "fault");
		const json_t *pr;
		size_t k, nv = 0;
		fab_rate_bps rate;
		char why[80];
		scale[x] = NAN;
		if (!flt || !json_object_get(flt, "rate") ||
		    fab_parse_rate(json_string_value(json_object_get(flt, "rate")), &rate, why, sizeof why))
			continue;
		json_array_foreach(json_object_get(d, "explains"), k, pr)
		{
			json_int_t i = json_integer_value(json_array_get(pr, 0)),
				   j = json_integer_value(json_array_get(pr, 1));
			for (int dir = 0; dir < 2 && nv < sizeof v / sizeof *v; dir++) {
				json_int_t a = dir ? j : i, b = dir ? i : j;
				double mv = mm ? mm[(size_t)a * n + (size_t)b] : NAN;
				const json_t *qv = json_array_get(json_array_get(qm, map ? map[a] : (size_t)a),
								  map ? map[b] : (size_t)b);
				if (!isnan(mv) && json_number_value(qv) > 0)
					v[nv++] = mv / json_number_value(qv);
			}
		}
		scale[x] = median(v, nv);
		if (!isnan(scale[x]))
			worst = fmax(worst, fabs(scale[x] - 1));
	}
	json_array_foreach(json_object_get(fit, "departures"), x, d)
	{
		json_t *flt = json_object_get(d, "fault");
		fab_rate_bps rate;
		char why[80];
		/* a degraded link runs no faster than its design */
		double cap = json_number_value(json_object_get(d, "design_bps"));
		if (worst >= tol && !isnan(scale[x]) && flt &&
		    !fab_parse_rate(json_string_value(json_object_get(flt, "rate")), &rate, why, sizeof why))
			json_object_set_new(flt, "rate",
					    rate_text(fmin((double)rate * scale[x], cap > 0 ? cap : INFINITY)));
	}
	free(scale);
	free(mm);
	return worst;
}

json_t *fab_twin_pairs(const json_t *fit, const json_t *probe, const json_t *exp, const json_t *pred,
		       const uint32_t *map)
{
	const json_t *pm = json_object_get(probe, "matrix");
	const json_t *em = json_object_get(json_object_get(exp, "matrix"), "bw_GBps");
	const json_t *qm = json_object_get(json_object_get(pred, "matrix"), "bw_GBps");
	/* expected: the design at the factor (exp already runs at it where
	 * the fit wrote topology.pcie_rate) */
	double factor = json_number_value(json_object_get(fit, "factor"));
	size_t x;
	const json_t *k;
	json_array_foreach(json_object_get(fit, "keys"), x, k)
	{
		if (!strcmp(json_string_value(json_object_get(k, "key")), "topology.pcie_rate"))
			factor = 1;
	}
	size_t n = json_array_size(json_object_get(pm, "endpoints"));
	double *mm = measured_matrix(pm, n, NULL);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double m = mm ? mm[i * n + j] : NAN;
			size_t di = map ? map[i] : i, dj = map ? map[j] : j;
			const json_t *e = json_array_get(json_array_get(em, di), dj);
			const json_t *q = json_array_get(json_array_get(qm, di), dj);
			if (i == j || isnan(m) || !json_is_number(e) || !json_is_number(q))
				continue;
			json_array_append_new(out,
					      json_pack("{sI sI sf sf sO}", "from", (json_int_t)i, "to", (json_int_t)j,
							"measured_GBps", m, "expected_GBps",
							json_number_value(e) * factor, "predicted_GBps", q));
		}
	free(mm);
	return out;
}

size_t fab_twin_prune(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map)
{
	const json_t *pm = json_object_get(probe, "matrix");
	size_t n = json_array_size(json_object_get(pm, "endpoints"));
	double *mm = measured_matrix(pm, n, NULL);
	const json_t *qm = json_object_get(json_object_get(pred, "matrix"), "bw_GBps");
	double tol = json_number_value(json_object_get(fit, "tolerance"));
	json_t *deps = json_object_get(fit, "departures");
	size_t dropped = 0;
	for (size_t x = json_array_size(deps); x-- > 0;) {
		json_t *d = json_array_get(deps, x);
		const char *kind = json_string_value(json_object_get(d, "kind"));
		if (!kind || json_object_get(d, "fault") || (strcmp(kind, "path") && strcmp(kind, "fabric")))
			continue;
		/* every direction of every pair it names within tolerance of
		 * what the calibrated scenario gives it */
		bool explained = true;
		size_t k;
		const json_t *pr;
		json_array_foreach(json_object_get(d, "explains"), k, pr)
		{
			json_int_t i = json_integer_value(json_array_get(pr, 0)),
				   j = json_integer_value(json_array_get(pr, 1));
			for (int dir = 0; dir < 2; dir++) {
				json_int_t a = dir ? j : i, b = dir ? i : j;
				double mv = mm ? mm[(size_t)a * n + (size_t)b] : NAN;
				const json_t *qv = json_array_get(json_array_get(qm, map ? map[a] : (size_t)a),
								  map ? map[b] : (size_t)b);
				if (!isnan(mv) && json_is_number(qv) && mv < tol * json_number_value(qv))
					explained = false;
			}
		}
		if (explained) {
			json_array_remove(deps, x);
			dropped++;
		}
	}
	free(mm);
	return dropped;
}

void fab_twin_residuals(json_t *fit, const json_t *probe, const json_t *pred, const uint32_t *map)
{
	json_t *pairs = fab_twin_pairs(fit, probe, pred, pred, map);
	size_t n = json_array_size(pairs), k = 0, worst = 0;
	double *v = fab_xcalloc(n + 1, sizeof *v), far = -1;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(pairs, i);
		double m = json_number_value(json_object_get(p, "measured_GBps"));
		double q = json_number_value(json_object_get(p, "predicted_GBps"));
		if (!(q > 0) || !(m > 0))
			continue;
		double off = fabs(log(m / q));
		v[k++] = off;
		if (off > far) {
			far = off;
			worst = i;
		}
	}
	if (k) {
		const json_t *w = json_array_get(pairs, worst);
		double r = json_number_value(json_object_get(w, "measured_GBps")) /
			json_number_value(json_object_get(w, "predicted_GBps"));
		json_object_set_new(fit, "residuals",
				    json_pack("{sf sf s[OO]}", "median_ratio_off", exp(median(v, k)) - 1, "worst_ratio",
					      r, "worst_pair", json_object_get(w, "from"), json_object_get(w, "to")));
	}
	free(v);
	json_decref(pairs);
}
