/*
 * diagnose.c - suspects from result documents.
 *
 * Each check adds suspects with a score and evidence lines; suspects about
 * the same target (a link named by its two ends) merge, keeping the higher
 * score and every line.  Checks:
 *  - link errors: ports that received bad frames (a lossy cable);
 *  - matrix: endpoints whose median bandwidth to and from the others is far
 *    below the cluster's (median and MAD over endpoints), or with many pairs
 *    under half the median; named with the GPUs behind them and their link;
 *  - failed pairs (a probe's matrix): an endpoint that fails with many of
 *    its peers (its link), else each failed pair (the path between them);
 *  - PFC storm: a NIC port sending PAUSE far beyond the other NICs;
 *  - congestion: drops concentrated on a few switch ports;
 *  - ECMP: a tier whose busiest uplink carries far more than the mean;
 *  - jobs: iterations far above the job's median (synchronisation jumps);
 *  - baseline: endpoints and jobs worse than in a healthy run.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"

void fab_diag_defaults(struct fab_diag_params *p)
{
	p->slow_fraction = 0.15;
	p->mad_k = 5;
	p->bad_pair_share = 0.10;
	p->pause_factor = 10;
	p->pause_min = 100;
	p->ecmp_max_over_mean = 3.0;
	p->iter_jump = 1.3;
	p->baseline_drop = 0.2;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, fab_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double mad(const double *v, size_t n, double med)
{
	double *d = fab_xcalloc(n ? n : 1, sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	double m = median(d, n);
	free(d);
	return 1.4826 * m;
}

static struct fab_suspect *suspect(struct fab_diagnosis *d, const char *kind, const char *target, double score)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].target, target)) {
			if (score > d->s[i].score)
				d->s[i].score = score;
			return &d->s[i];
		}
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 8;
		d->s = fab_xrealloc(d->s, (size_t)d->cap, sizeof *d->s);
	}
	struct fab_suspect *s = &d->s[d->n++];
	memset(s, 0, sizeof *s);
	snprintf(s->kind, sizeof s->kind, "%s", kind);
	snprintf(s->target, sizeof s->target, "%s", target);
	s->score = score;
	return s;
}

static void evidence(struct fab_suspect *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void evidence(struct fab_suspect *s, const char *fmt, ...)
{
	if (s->nevidence == 6)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->evidence[s->nevidence++], sizeof s->evidence[0], fmt, ap);
	va_end(ap);
}

/* "a <-> b", ends in name order so both directions name one link */
static void link_name(char *buf, size_t len, const char *a, const char *b)
{
	if (strcmp(a, b) > 0) {
		const char *t = a;
		a = b;
		b = t;
	}
	snprintf(buf, len, "link %s <-> %s", a, b);
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "?";
}

static double jnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void check_link_errors(json_t *doc, struct fab_diagnosis *d)
{
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;
	json_array_foreach(ports, i, p)
	{
		double err = jnum(p, "rx_errors"), rx = jnum(p, "rx_pkts");
		if (err <= 0)
			continue;
		char t[160];
		link_name(t, sizeof t, jstr(p, "node"), jstr(p, "peer"));
		double share = err / (err + rx);
		struct fab_suspect *s = suspect(d, "link", t, 1.0 + share);
		evidence(s, "%s port %d received %.0f bad frames from %s (%.3f%% of its frames)", jstr(p, "node"),
			 (int)jnum(p, "port"), err, jstr(p, "peer"), share * 100);
	}
}

#define CELL(M, a, b) json_array_get(json_array_get(M, a), b)

/* the median bandwidth of the measured pairs that leave endpoint i out, in
 * v (room for n x n); with more than 64 endpoints one endpoint's pairs are
 * under 3% of all, and the median of all (gmed) stands for it */
static double others_median(json_t *bw, size_t n, size_t i, double *v, double gmed)
{
	if (n > 64)
		return gmed;
	size_t k = 0;
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++)
			if (a != b && a != i && b != i && json_is_number(CELL(bw, a, b)))
				v[k++] = json_number_value(CELL(bw, a, b));
	return median(v, k);
}

static void check_matrix(json_t *doc, const struct fab_diag_params *pr, struct fab_diagnosis *d)
{
	json_t *m = json_object_get(doc, "matrix");
	if (!m)
		return;
	json_t *ep = json_object_get(m, "endpoints"), *bw = json_object_get(m, "bw_GBps");
	json_t *lat = json_object_get(m, "lat_us"), *gpus = json_object_get(m, "gpus");
	json_t *links = json_object_get(m, "links");
	size_t n = json_array_size(ep);
	if (n < 3)
		return;
	double *all = fab_xcalloc(n * n, sizeof *all), *med = fab_xcalloc(n, sizeof *med);
	double *bad = fab_xcalloc(n, sizeof *bad), *lmed = fab_xcalloc(n, sizeof *lmed);
	double *row = fab_xcalloc(2 * n, sizeof *row), *lrow = fab_xcalloc(2 * n, sizeof *lrow);
	size_t na = 0;
	/* pairs not measured (a sampled baseline) are null and left out */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j && json_is_number(CELL(bw, i, j)))
				all[na++] = json_number_value(CELL(bw, i, j));
	if (na < 2 * n) { /* too few pairs to compare endpoints */
		free(all), free(med), free(bad), free(lmed), free(row), free(lrow);
		return;
	}
	double gmed = median(all, na);
	for (size_t i = 0; i < n; i++) {
		size_t c = 0;
		for (size_t j = 0; j < n; j++) {
			if (j == i || !json_is_number(CELL(bw, i, j)) || !json_is_number(CELL(bw, j, i)))
				continue;
			row[c] = json_number_value(CELL(bw, i, j));
			lrow[c++] = json_number_value(CELL(lat, i, j));
			row[c] = json_number_value(CELL(bw, j, i));
			lrow[c++] = json_number_value(CELL(lat, j, i));
		}
		if (!c)
			continue;
		size_t under = 0;
		for (size_t k = 0; k < c; k++)
			under += row[k] < gmed / 2;
		bad[i] = (double)under / (double)c;
		med[i] = median(row, c);
		lmed[i] = median(lrow, c);
	}
	double *tmp = fab_xcalloc(n, sizeof *tmp);
	memcpy(tmp, med, n * sizeof *tmp);
	double mmed = median(tmp, n), mmad = mad(med, n, mmed);
	memcpy(tmp, bad, n * sizeof *tmp);
	double bmed = median(tmp, n);
	memcpy(tmp, lmed, n * sizeof *tmp);
	double lm = median(tmp, n), lmad = mad(lmed, n, lm);
	for (size_t i = 0; i < n; i++) {
		/* far below the spread, or below half the median whatever the spread:
		 * with a handful of endpoints one uneven healthy one inflates the MAD,
		 * and a slow one drags every other endpoint's median towards its own
		 * (with 4 it is in a third of each one's pairs), so half the median of
		 * the pairs without it counts too */
		double rest = others_median(bw, n, i, all, gmed);
		bool slow = (med[i] < (1 - pr->slow_fraction) * mmed &&
			     (mmed - med[i] > pr->mad_k * mmad || med[i] < mmed / 2)) ||
			med[i] < rest / 2;
		bool flaky = bad[i] >= pr->bad_pair_share && bad[i] >= 4 * (bmed + 0.01);
		bool laggy = lmed[i] > 1.5 * lm && lmed[i] - lm > pr->mad_k * lmad;
		if (!slow && !flaky && !laggy)
			continue;
		const char *name = json_string_value(json_array_get(ep, i));
		json_t *l = json_array_get(links, i);
		char t[160];
		if (l)
			link_name(t, sizeof t, name, jstr(l, "switch"));
		else /* a probe's matrix: the host is known, its switch port is not */
			snprintf(t, sizeof t, "link of %s", name);
		double score = FAB_MAX(1 - med[i] / FAB_MAX(mmed, rest), bad[i]);
		struct fab_suspect *s = suspect(d, "link", t, 0.5 + score);
		char g[96] = "";
		json_t *gl = json_array_get(gpus, i), *gv;
		size_t k;
		size_t o = 0;
		json_array_foreach(gl, k, gv)
		{
			if (o < sizeof g - 12)
				o += (size_t)snprintf(g + o, sizeof g - o, "%s%lld", k ? ", " : "",
						      (long long)json_integer_value(gv));
		}
		char gl2[112] = "";
		if (*g)
			snprintf(gl2, sizeof gl2, " (GPUs %s)", g);
		evidence(
			s,
			"matrix: %s%s moves %.4g GB/s median to and from the others, the cluster's median %.4g GB/s (MAD %.3g)",
			name, gl2, med[i], mmed, mmad);
		if (med[i] < rest / 2)
			evidence(s, "matrix: the pairs without %s run at %.4g GB/s median, over twice its own", name,
				 rest);
		if (flaky)
			evidence(
				s,
				"matrix: %.0f%% of %s's pairs ran under half the median pair bandwidth (%.2f GB/s); the typical NIC: %.0f%%",
				bad[i] * 100, name, gmed / 2, bmed * 100);
		if (laggy)
			evidence(s, "matrix: %s's median latency %.3f us vs %.3f us for the cluster", name, lmed[i],
				 lm);
		if (l)
			evidence(
				s,
				"the link is %s port %d; the ports report their configured speed, the measurement does not agree",
				jstr(l, "switch"), (int)jnum(l, "switch_port"));
	}
	free(all);
	free(med);
	free(bad);
	free(lmed);
	free(row);
	free(lrow);
	free(tmp);
}

/* pairs of a probe's matrix that broke or missed their timeout, twice (the
 * re-test alone failed too) */
static void check_failed_pairs(json_t *doc, struct fab_diagnosis *d)
{
	json_t *m = json_object_get(doc, "matrix");
	json_t *fp = json_object_get(m, "failed_pairs"), *ep = json_object_get(m, "endpoints"), *pair;
	size_t n = json_array_size(ep), k;
	if (!json_array_size(fp) || n < 2)
		return;
	uint32_t *cnt = fab_xcalloc(n, sizeof *cnt);
	json_array_foreach(fp, k, pair)
	{
		json_int_t a = json_integer_value(json_array_get(pair, 0)),
			   b = json_integer_value(json_array_get(pair, 1));
		if (a >= 0 && b >= 0 && (size_t)a < n && (size_t)b < n && a != b)
			cnt[a]++, cnt[b]++;
	}
	/* an endpoint that fails with at least half its peers (and two): its link */
	bool *named = fab_xcalloc(n, sizeof *named);
	for (size_t i = 0; i < n; i++) {
		if (cnt[i] < 2 || 2 * cnt[i] < n - 1)
			continue;
		named[i] = true;
		const char *name = json_string_value(json_array_get(ep, i));
		char t[160];
		snprintf(t, sizeof t, "link of %s", name);
		struct fab_suspect *s = suspect(d, "link", t, 2.0 + (double)cnt[i] / (double)(n - 1));
		evidence(s,
			 "matrix: %s failed with %u of its %zu peers (no answer within the pair timeout or the "
			 "connection broke, again when re-tested alone)",
			 name, cnt[i], n - 1);
	}
	json_array_foreach(fp, k, pair)
	{
		json_int_t a = json_integer_value(json_array_get(pair, 0)),
			   b = json_integer_value(json_array_get(pair, 1));
		if (a < 0 || b < 0 || (size_t)a >= n || (size_t)b >= n || a == b || named[a] || named[b])
			continue;
		const char *na = json_string_value(json_array_get(ep, (size_t)a));
		const char *nb = json_string_value(json_array_get(ep, (size_t)b));
		char t[200];
		snprintf(t, sizeof t, "path between %s and %s", na, nb);
		struct fab_suspect *s = suspect(d, "path", t, 1.8);
		evidence(s,
			 "matrix: the pair failed (no answer within the pair timeout or the connection broke, again "
			 "when re-tested alone) while each end worked with its other peers: the path between them "
			 "(a switch port, an ACL, an MTU mismatch)");
	}
	free(cnt);
	free(named);
}

static bool is_nic(const char *name)
{
	return strstr(name, ".nic") != NULL || !strncmp(name, "nic", 3);
}

static void check_pfc_storm(json_t *doc, const struct fab_diag_params *pr, struct fab_diagnosis *d)
{
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i, n = 0;
	double *v = fab_xcalloc(json_array_size(ports) + 1, sizeof *v);
	json_array_foreach(ports, i, p) if (is_nic(jstr(p, "node"))) v[n++] = jnum(p, "pause_tx");
	double med = median(v, n);
	free(v);
	double drops = jnum(json_object_get(doc, "summary"), "drops");
	json_array_foreach(ports, i, p)
	{
		double tx = jnum(p, "pause_tx");
		if (!is_nic(jstr(p, "node")) || tx < (double)pr->pause_min || tx < pr->pause_factor * (med + 1))
			continue;
		char t[160];
		snprintf(t, sizeof t, "NIC %s (PFC storm)", jstr(p, "node"));
		struct fab_suspect *s = suspect(d, "pfc-storm", t, 2.0 + log10(tx / (med + 1)) / 10);
		evidence(s, "%s sent %.0f PAUSE frames to %s; the median NIC sent %.0f", jstr(p, "node"), tx,
			 jstr(p, "peer"), med);
		/* what the pause did to the switch port facing it */
		json_t *q;
		size_t k;
		json_array_foreach(ports, k, q)
		{
			if (!strcmp(jstr(q, "node"), jstr(p, "peer")) && !strcmp(jstr(q, "peer"), jstr(p, "node")))
				evidence(
					s,
					"%s port %d toward it was paused %.3f ms and sent %.0f PAUSE frames upstream; drops in the run: %.0f",
					jstr(q, "node"), (int)jnum(q, "port"), jnum(q, "paused_ps") / 1e9,
					jnum(q, "pause_tx"), drops);
		}
	}
}

static void check_congestion(json_t *doc, struct fab_diagnosis *d)
{
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;
	double total = 0, best = 0;
	json_t *top = NULL;
	json_array_foreach(ports, i, p)
	{
		double dr = jnum(p, "drops");
		total += dr;
		if (dr > best) {
			best = dr;
			top = p;
		}
	}
	if (!top || best < 100 || best < 0.5 * total)
		return;
	char t[160];
	snprintf(t, sizeof t, "congestion at %s port %d (toward %s)", jstr(top, "node"), (int)jnum(top, "port"),
		 jstr(top, "peer"));
	struct fab_suspect *s = suspect(d, "congestion", t, 0.6 + best / total / 10);
	evidence(s, "%.0f of the run's %.0f drops happened at this port; its queue peaked at %.0f bytes", best, total,
		 jnum(top, "max_queue_bytes"));
}

static void check_ecmp(json_t *doc, const struct fab_diag_params *pr, struct fab_diagnosis *d)
{
	json_t *e = json_object_get(doc, "ecmp"), *x;
	size_t i;
	json_array_foreach(e, i, x)
	{
		/* random hashing of few flows is uneven by nature: a fault leaves
		 * uplinks idle, or piles far more than the mean on one */
		double r = jnum(x, "max_over_mean"), up = jnum(x, "uplinks"), idle = jnum(x, "unused");
		if (jnum(x, "mean_tx_bytes") < 1e6 || (r < pr->ecmp_max_over_mean && idle * 4 < up))
			continue;
		char t[160];
		snprintf(t, sizeof t, "ECMP imbalance at tier %d uplinks", (int)jnum(x, "tier"));
		struct fab_suspect *s = suspect(d, "ecmp", t, 0.4 + r / 100);
		evidence(s, "the busiest of %d uplinks carried %.2fx the mean (%.0f vs %.0f bytes); %d carried no data",
			 (int)jnum(x, "uplinks"), r, jnum(x, "max_tx_bytes"), jnum(x, "mean_tx_bytes"),
			 (int)jnum(x, "unused"));
		json_t *b = json_object_get(x, "busiest");
		if (b)
			evidence(s, "busiest: %s port %d toward %s", jstr(b, "node"), (int)jnum(b, "port"),
				 jstr(b, "peer"));
		/* the worst group of that tier, and who collides there */
		json_t *groups = json_object_get(doc, "ecmp_groups"), *g, *worst = NULL;
		size_t k;
		json_array_foreach(groups, k, g)
		{
			if (worst && jnum(g, "max_over_mean") <= jnum(worst, "max_over_mean"))
				continue;
			json_t *col = json_object_get(g, "colliding");
			if (col && json_array_size(col))
				worst = g;
		}
		if (worst) {
			json_t *col = json_object_get(worst, "colliding");
			evidence(
				s,
				"at %s the busiest uplink carries %.2fx its group's mean; %zu queue pairs collide on it, e.g. %s",
				jstr(worst, "switch"), jnum(worst, "max_over_mean"), json_array_size(col),
				json_string_value(json_array_get(col, 0)));
		}
		evidence(
			s,
			"check the hash inputs and seeds (fabric.ecmp.same_hash polarizes tiers), or add queue pairs per connection");
	}
}

static void check_jobs(json_t *doc, const struct fab_diag_params *pr, struct fab_diagnosis *d)
{
	json_t *jobs = json_object_get(doc, "jobs"), *j;
	size_t i;
	json_array_foreach(jobs, i, j)
	{
		json_t *its = json_object_get(j, "iterations"), *it;
		size_t n = json_array_size(its), k;
		if (n < 3)
			continue;
		double *v = fab_xcalloc(n, sizeof *v);
		json_array_foreach(its, k, it) v[k] = jnum(it, "time_ps");
		double med = median(v, n);
		free(v);
		if (!(med > 0))
			continue;
		json_array_foreach(its, k, it)
		{
			double t = jnum(it, "time_ps");
			if (t < pr->iter_jump * med)
				continue;
			char tg[160];
			snprintf(tg, sizeof tg, "job %s iteration %zu", jstr(j, "name"), k);
			struct fab_suspect *s = suspect(d, "job", tg, 0.3 + t / med / 100);
			evidence(s, "took %.3f ms, %.2fx the job's median %.3f ms, from %.3f ms to %.3f ms of the run",
				 t / 1e9, t / med, med / 1e9, jnum(it, "start_ps") / 1e9, jnum(it, "end_ps") / 1e9);
			/* what the counters saw in that window */
			json_t *ser = json_object_get(doc, "series"), *row;
			size_t q;
			double best = 0, bd = 0, be = 0;
			const char *bn = NULL;
			int bp = 0;
			json_array_foreach(ser, q, row)
			{
				double ts = jnum(row, "t_ps");
				if (ts < jnum(it, "start_ps") || ts > jnum(it, "end_ps"))
					continue;
				double w = jnum(row, "pause_tx") * 100 + jnum(row, "drops") * 10 +
					jnum(row, "ecn_marks");
				if (w > best) {
					best = w;
					bn = jstr(row, "node");
					bp = (int)jnum(row, "port");
					bd = jnum(row, "drops");
					be = jnum(row, "ecn_marks");
				}
			}
			if (bn)
				evidence(
					s,
					"in that window the busiest counters were at %s port %d (drops %.0f, ECN marks %.0f in one sample)",
					bn, bp, bd, be);
			else
				evidence(s,
					 "no counter samples in that window (set fabric.series_interval to see them)");
		}
	}
}

/* A straggler: the same GPUs finish their backward pass last, well after
 * the others, in most iterations. */
static bool is_nic(const char *name);
static void check_stragglers(json_t *doc, struct fab_diagnosis *d)
{
	json_t *jobs = json_object_get(doc, "jobs"), *j;
	size_t i;
	json_array_foreach(jobs, i, j)
	{
		json_t *its = json_object_get(j, "iterations"), *it;
		size_t n = json_array_size(its), k, same = 0;
		if (n < 2)
			continue;
		json_t *first = json_object_get(json_array_get(its, 0), "last_gpus");
		double lag = 0, t = 0;
		json_array_foreach(its, k, it)
		{
			if (json_equal(json_object_get(it, "last_gpus"), first) &&
			    jnum(it, "lag_ps") > 0.05 * jnum(it, "compute_ps"))
				same++;
			lag += jnum(it, "lag_ps");
			t += jnum(it, "time_ps");
		}
		if (same * 2 <= n || !first || !(t > 0))
			continue;
		char g[96] = "";
		size_t o = 0, q;
		json_t *gv;
		json_array_foreach(first, q, gv)
		{
			if (o < sizeof g - 12)
				o += (size_t)snprintf(g + o, sizeof g - o, "%s%lld", q ? ", " : "",
						      (long long)json_integer_value(gv));
		}
		char tg[160];
		snprintf(tg, sizeof tg, "GPU %s (straggler in job %s)", g, jstr(j, "name"));
		struct fab_suspect *s = suspect(d, "straggler", tg, 1.5 + lag / t / 10);
		evidence(
			s,
			"in %zu of %zu iterations GPU %s finished its backward pass last, on average %.3f ms after the median worker",
			same, n, g, lag / (double)n / 1e9);
		evidence(s, "every rank waits for it at the all-reduce: a compute straggler, not the network");
	}
}

/* ECN set wrong on a switch: its queues pass the fabric's Kmax with no mark. */
static void check_ecn(json_t *doc, struct fab_diagnosis *d)
{
	json_t *ecn = json_object_get(json_object_get(json_object_get(doc, "config"), "fabric"), "ecn");
	if (!ecn || !json_is_true(json_object_get(ecn, "enabled")))
		return;
	fab_bytes kmax = 0;
	const char *ks = json_string_value(json_object_get(ecn, "kmax"));
	if (!ks || fab_parse_bytes(ks, &kmax, NULL, 0) || !kmax)
		return;
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;
	json_array_foreach(ports, i, p)
	{
		if (is_nic(jstr(p, "node")) || jnum(p, "ecn_marks") > 0 ||
		    jnum(p, "max_queue_bytes") < 4.0 * (double)kmax)
			continue;
		char t[160];
		snprintf(t, sizeof t, "ECN thresholds on %s", jstr(p, "node"));
		struct fab_suspect *s = suspect(d, "ecn", t, 0.9);
		evidence(s, "%s port %d queued %.0f bytes, %.0fx the fabric's Kmax, and marked nothing",
			 jstr(p, "node"), (int)jnum(p, "port"), jnum(p, "max_queue_bytes"),
			 jnum(p, "max_queue_bytes") / (double)kmax);
	}
}

static void check_baseline(json_t *doc, json_t *base, const struct fab_diag_params *pr, struct fab_diagnosis *d)
{
	json_t *m = json_object_get(doc, "matrix"), *bm = json_object_get(base, "matrix");
	if (m && bm) {
		json_t *ep = json_object_get(m, "endpoints"), *bw = json_object_get(m, "bw_GBps");
		json_t *bep = json_object_get(bm, "endpoints"), *bbw = json_object_get(bm, "bw_GBps");
		size_t n = json_array_size(ep);
		if (n == json_array_size(bep)) {
			double *row = fab_xcalloc(2 * n, sizeof *row), *brow = fab_xcalloc(2 * n, sizeof *brow);
			for (size_t i = 0; i < n; i++) {
				size_t c = 0;
				for (size_t j = 0; j < n; j++) {
					if (i == j)
						continue;
					row[c] = json_number_value(json_array_get(json_array_get(bw, i), j));
					brow[c++] = json_number_value(json_array_get(json_array_get(bbw, i), j));
					row[c] = json_number_value(json_array_get(json_array_get(bw, j), i));
					brow[c++] = json_number_value(json_array_get(json_array_get(bbw, j), i));
				}
				double now = median(row, c), then = median(brow, c);
				if (then > 0 && now < (1 - pr->baseline_drop) * then) {
					char t[160];
					snprintf(t, sizeof t, "%s worse than the baseline",
						 json_string_value(json_array_get(ep, i)));
					struct fab_suspect *s = suspect(d, "baseline", t, 0.5 + 1 - now / then);
					evidence(s, "median %.2f GB/s now, %.2f GB/s in the baseline (-%.0f%%)", now,
						 then, (1 - now / then) * 100);
				}
			}
			free(row);
			free(brow);
		}
	}
	json_t *jobs = json_object_get(doc, "jobs"), *bjobs = json_object_get(base, "jobs"), *j;
	size_t i;
	json_array_foreach(jobs, i, j)
	{
		json_t *bj = json_array_get(bjobs, i);
		if (!bj)
			continue;
		double now = jnum(json_object_get(j, "stats"), "mean_ps");
		double then = jnum(json_object_get(bj, "stats"), "mean_ps");
		if (then > 0 && now > (1 + pr->baseline_drop / 2) * then) {
			char t[160];
			snprintf(t, sizeof t, "job %s slower than the baseline", jstr(j, "name"));
			struct fab_suspect *s = suspect(d, "baseline", t, 0.5 + now / then - 1);
			evidence(s, "mean step %.3f ms now, %.3f ms in the baseline (+%.0f%%)", now / 1e9, then / 1e9,
				 (now / then - 1) * 100);
		}
	}
}

static int cmp_suspect(const void *a, const void *b)
{
	const struct fab_suspect *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(x->target, y->target);
}

int fab_diagnose(json_t *const *docs, int ndocs, json_t *baseline, const struct fab_diag_params *p,
		 struct fab_diagnosis *out, struct fab_err *err)
{
	memset(out, 0, sizeof *out);
	char nm[32];
	for (int i = 0; i <= ndocs; i++) {
		json_t *doc = i < ndocs ? docs[i] : baseline;
		snprintf(nm, sizeof nm, i < ndocs ? "document %d" : "the baseline", i + 1);
		if (doc && fab_diag_validate(doc, nm, err))
			return FAB_EINVAL;
	}
	for (int i = 0; i < ndocs; i++) {
		check_link_errors(docs[i], out);
		check_matrix(docs[i], p, out);
		check_failed_pairs(docs[i], out);
		check_pfc_storm(docs[i], p, out);
		check_congestion(docs[i], out);
		check_ecmp(docs[i], p, out);
		check_jobs(docs[i], p, out);
		check_stragglers(docs[i], out);
		check_ecn(docs[i], out);
		if (baseline)
			check_baseline(docs[i], baseline, p, out);
	}
	out->documents = ndocs;
	if (out->n)
		qsort(out->s, (size_t)out->n, sizeof *out->s, cmp_suspect);
	return 0;
}

void fab_diagnosis_free(struct fab_diagnosis *d)
{
	free(d->s);
	memset(d, 0, sizeof *d);
}

json_t *fab_diagnosis_json(const struct fab_diagnosis *d)
{
	json_t *o = json_object(), *arr = json_array();
	json_object_set_new(o, "schema", json_string("fabscope.diagnosis/1"));
	json_object_set_new(o, "documents", json_integer(d->documents));
	json_object_set_new(o, "healthy", json_boolean(d->n == 0));
	for (int i = 0; i < d->n; i++) {
		json_t *s = json_object(), *ev = json_array();
		json_object_set_new(s, "rank", json_integer(i + 1));
		json_object_set_new(s, "kind", json_string(d->s[i].kind));
		json_object_set_new(s, "target", json_string(d->s[i].target));
		json_object_set_new(s, "score", json_real(d->s[i].score));
		for (int k = 0; k < d->s[i].nevidence; k++)
			json_array_append_new(ev, json_string(d->s[i].evidence[k]));
		json_object_set_new(s, "evidence", ev);
		json_array_append_new(arr, s);
	}
	json_object_set_new(o, "suspects", arr);
	return o;
}

void fab_diagnosis_write_text(FILE *f, const struct fab_diagnosis *d)
{
	if (!d->n) {
		fprintf(f, "fabscope diagnose: healthy (%d result document%s, no suspect)\n", d->documents,
			d->documents == 1 ? "" : "s");
		return;
	}
	fprintf(f, "fabscope diagnose: %d suspect%s (%d result document%s)\n", d->n, d->n == 1 ? "" : "s", d->documents,
		d->documents == 1 ? "" : "s");
	for (int i = 0; i < d->n; i++) {
		fprintf(f, "%d. %s\n", i + 1, d->s[i].target);
		for (int k = 0; k < d->s[i].nevidence; k++)
			fprintf(f, "   - %s\n", d->s[i].evidence[k]);
	}
}

int fab_diagnosis_write_svg(FILE *f, json_t *const *docs, int ndocs, const struct fab_diagnosis *d)
{
	json_t *m = NULL;
	for (int i = 0; i < ndocs && !m; i++)
		m = json_object_get(docs[i], "matrix");
	if (!m)
		return FAB_EINVAL;
	json_t *ep = json_object_get(m, "endpoints"), *bw = json_object_get(m, "bw_GBps");
	size_t n = json_array_size(ep);
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			mx = FAB_MAX(mx, json_number_value(json_array_get(json_array_get(bw, i), j)));
	int cell = n > 64 ? 4 : 8, off = 140;
	int W = off + (int)n * cell + 20, H = off + (int)n * cell + 40;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"10\">\n",
		W, H);
	fprintf(f,
		"<text x=\"10\" y=\"16\" font-size=\"13\">fabscope matrix: bandwidth GB/s (sender row, receiver column), max %.1f</text>\n",
		mx);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				continue;
			double v = json_number_value(json_array_get(json_array_get(bw, i), j));
			double x = mx > 0 ? v / mx : 0; /* 0 red .. 1 green */
			int r = (int)(255 * (1 - x)), g = (int)(200 * x);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,60)\"/>\n",
				off + (int)j * cell, off + (int)i * cell, cell, cell, r, g);
		}
	for (size_t i = 0; i < n; i++) {
		const char *name = json_string_value(json_array_get(ep, i));
		bool sus = false;
		for (int k = 0; k < d->n; k++)
			if (strstr(d->s[k].target, name)) {
				const char *hit = strstr(d->s[k].target, name);
				char next = hit[strlen(name)];
				sus |= next == ' ' || next == 0 || next == ')';
			}
		if (!sus)
			continue;
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n",
			off, off + (int)i * cell, (int)n * cell, cell);
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n",
			off + (int)i * cell, off, cell, (int)n * cell);
		fprintf(f, "<text x=\"4\" y=\"%d\">%s</text>\n", off + (int)i * cell + cell, name);
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? FAB_EIO : 0;
}
