/*
 * matrix.c - the all-pairs matrix on the real network: stages of disjoint
 * pairs (circle method, or one pair at a time), per-pair timeouts, reports
 * to rank 0, and re-tests of the pairs that look wrong.
 */
#include "probe_int.h"

static uint32_t to_ns(double s)
{
	return s * 1e9 >= (double)(UINT32_MAX - 1) ? UINT32_MAX - 1 : (uint32_t)(s * 1e9);
}

/* round r of the circle method over n endpoints (fab_circle_pair, as the
 * simulated matrix pairs them): the partner of j, or NO_RANK */
static uint32_t partner(uint32_t n, uint32_t r, uint32_t j)
{
	for (uint32_t k = 0; k < (n + 1) / 2; k++) {
		uint32_t a, b;
		if (!fab_circle_pair(n, r, k, &a, &b))
			continue;
		if (a == j)
			return b;
		if (b == j)
			return a;
	}
	return NO_RANK;
}

/* stage st's pairs: part[j] = j's partner or NO_RANK */
static void stage_pairs(const struct fab_probe *pr, const struct fab_probe_matrix_opts *o, bool retest, uint32_t st,
			uint32_t *part)
{
	uint32_t n = pr->n;
	for (uint32_t j = 0; j < n; j++)
		part[j] = NO_RANK;
	if (retest) {
		uint32_t a = pr->plan[st] >> 16, b = pr->plan[st] & 0xffff;
		part[a] = b;
		part[b] = a;
	} else if (o->serial) {
		/* pair st in the order (0,1), (0,2), ..., (1,2), ... */
		for (uint32_t a = 0, k = 0; a < n; a++)
			for (uint32_t b = a + 1; b < n; b++, k++)
				if (k == st) {
					part[a] = b;
					part[b] = a;
				}
	} else {
		for (uint32_t j = 0; j < n; j++) {
			part[j] = partner(n, st, j);
		}
	}
}

/* one pair's latency: 8-byte ping-pongs, half the median round trip
 * (the lower rank leads and reports it) */
static int pair_latency(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, uint32_t peer, double end,
			double *rtt, uint32_t *lat_ns)
{
	bool lead = pr->me < peer;
	uint8_t ping[8] = {0};
	for (uint32_t it = 0; it < o->lat_iters; it++) {
		double t0 = pr_now_s();
		if (pr_xfer(pr, peer, 1, ping, lead ? 8 : 0, ping, lead ? 0 : 8, end, NULL) ||
		    pr_xfer(pr, peer, 1, ping, lead ? 0 : 8, ping, lead ? 8 : 0, end, NULL))
			return -1;
		rtt[it] = pr_now_s() - t0;
	}
	qsort(rtt, o->lat_iters, sizeof *rtt, fab_cmp_double);
	*lat_ns = lead ? to_ns(rtt[(o->lat_iters - 1) / 2] / 2) : 0;
	return 0;
}

/* one pair's bandwidth: `bytes` each way at once; the time this rank took
 * to receive them */
static int pair_bandwidth(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, uint32_t peer, double end,
			  uint8_t *sbuf, uint8_t *rbuf, uint32_t *rx_ns)
{
	double t_rx = 0;
	if (pr_xfer(pr, peer, pr->nc, sbuf, o->bytes, rbuf, o->bytes, end, &t_rx))
		return -1;
	*rx_ns = FAB_MAX(to_ns(t_rx), 1u);
	return 0;
}

/* rank 0: a stage's reports into the matrices */
static void absorb(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, const uint32_t *part,
		   struct fab_probe_matrix_res *res)
{
	uint32_t n = pr->n;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t p = part[j];
		if (p == NO_RANK || j > p)
			continue;
		size_t jp = (size_t)j * n + p, pj = (size_t)p * n + j;
		if (pr->rep[2 * j] == FAILED || pr->rep[2 * p] == FAILED) {
			res->failed[jp] = res->failed[pj] = 1;
			res->bw_GBps[jp] = res->bw_GBps[pj] = NAN;
			res->lat_us[jp] = res->lat_us[pj] = NAN;
			continue;
		}
		res->failed[jp] = res->failed[pj] = 0;
		res->lat_us[jp] = res->lat_us[pj] = pr->rep[2 * j] / 1e3; /* j < p leads */
		res->bw_GBps[pj] = (double)o->bytes / (pr->rep[2 * j + 1] / 1e9) / 1e9;
		res->bw_GBps[jp] = (double)o->bytes / (pr->rep[2 * p + 1] / 1e9) / 1e9;
	}
}

struct susp {
	uint32_t a, b;
	double low;
};

static int cmp_susp(const void *x, const void *y)
{
	const struct susp *p = x, *q = y;
	return p->low < q->low    ? -1
		: p->low > q->low ? 1
				  : (p->a != q->a ? (p->a < q->a ? -1 : 1) : (p->b < q->b ? -1 : p->b > q->b));
}

/* rank 0: the pairs to measure again, alone */
static void plan_retest(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, struct fab_probe_matrix_res *res)
{
	uint32_t n = pr->n;
	double *v = fab_xcalloc((size_t)n * n, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < (size_t)n * n; i++)
		if (i / n != i % n && !res->failed[i])
			v[k++] = res->bw_GBps[i];
	double med = 0;
	if (k) {
		qsort(v, k, sizeof *v, fab_cmp_double);
		med = v[(k - 1) / 2];
	}
	free(v);
	struct susp *s = fab_xcalloc((size_t)n * n / 2 + 1, sizeof *s);
	size_t ns = 0;
	for (uint32_t a = 0; a < n && o->retest_below > 0 && n <= 0xffff; a++)
		for (uint32_t b = a + 1; b < n; b++) {
			size_t ab = (size_t)a * n + b, ba = (size_t)b * n + a;
			double low = res->failed[ab] ? -1 : FAB_MIN(res->bw_GBps[ab], res->bw_GBps[ba]);
			if (res->failed[ab] || low < o->retest_below * med)
				s[ns++] = (struct susp){a, b, low};
		}
	qsort(s, ns, sizeof *s, cmp_susp);
	uint32_t cap = 2 * n, take = (uint32_t)FAB_MIN(ns, cap);
	res->retest_skipped = (uint32_t)(ns - take);
	res->nretest = take;
	res->retest = fab_xcalloc(take + 1, sizeof *res->retest);
	free(pr->plan);
	pr->plan = fab_xcalloc(take + 1, sizeof *pr->plan);
	pr->nplan = take;
	for (uint32_t i = 0; i < take; i++) {
		uint32_t a = s[i].a, b = s[i].b;
		pr->plan[i] = a << 16 | b;
		res->retest[i] = (struct fab_probe_retest){
			a, b, {res->bw_GBps[(size_t)a * n + b], res->bw_GBps[(size_t)b * n + a]}, {0, 0}};
	}
	free(s);
	for (uint32_t j = 1; j < n; j++) {
		pr_enqueue_ctrl(pr, j, F_PLAN, take);
		for (uint32_t i = 0; i < take; i++)
			pr_enqueue_ctrl(pr, j, F_PLAN, pr->plan[i]);
	}
}

/* runs nstages stages of disjoint pairs; rank 0 absorbs each one's reports */
static int run_stages(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, bool retest, uint32_t nstages,
		      struct fab_probe_matrix_res *res, struct fab_err *err)
{
	uint32_t n = pr->n;
	uint32_t *part = fab_xcalloc(n, sizeof *part);
	uint8_t *sbuf = fab_xcalloc(o->bytes, 1), *rbuf = fab_xcalloc(o->bytes, 1);
	double *rtt = fab_xcalloc(o->lat_iters, sizeof *rtt);
	int rc = 0;
	for (uint32_t st = 0; st <= nstages && !rc; st++) {
		/* a stage's reports come in before the next barrier completes */
		if ((rc = pr_raw_barrier(pr, err)))
			break;
		if (pr->me == 0 && st) {
			stage_pairs(pr, o, retest, st - 1, part);
			absorb(pr, o, part, res);
			if (retest) {
				struct fab_probe_retest *t = &res->retest[st - 1];
				t->after[0] = res->bw_GBps[(size_t)t->a * n + t->b];
				t->after[1] = res->bw_GBps[(size_t)t->b * n + t->a];
			}
		}
		if (st == nstages)
			break;
		stage_pairs(pr, o, retest, st, part);
		uint32_t peer = part[pr->me], lat_ns = 0, rx_ns = 0;
		/* every pair's ping-pongs, then every pair's bytes at once: no
		 * ping waits behind another pair's data, and the pairs of a
		 * round share the fabric from the start, as the simulated
		 * matrix's do */
		double end = pr_now_s() + o->pair_timeout_s;
		int bad = peer == NO_RANK ? 0 : pair_latency(pr, o, peer, end, rtt, &lat_ns);
		if ((rc = pr_raw_barrier(pr, err)))
			break;
		if (peer == NO_RANK)
			continue;
		if (bad || pair_bandwidth(pr, o, peer, pr_now_s() + o->pair_timeout_s, sbuf, rbuf, &rx_ns)) {
			/* recorded, and the connections dropped: their state is unknown */
			lat_ns = FAILED;
			for (uint32_t k = 0; k < pr->nc; k++)
				pr_drop(C(pr, peer, 1 + k));
		}
		if (pr->me == 0) {
			pr->rep[0] = lat_ns;
			pr->rep[1] = rx_ns;
		} else {
			pr_enqueue_ctrl(pr, 0, F_REP_LAT, lat_ns);
			pr_enqueue_ctrl(pr, 0, F_REP_BW, rx_ns);
		}
	}
	free(part);
	free(sbuf);
	free(rbuf);
	free(rtt);
	return rc;
}

int fab_probe_matrix(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, struct fab_probe_matrix_res *res,
		     struct fab_err *err)
{
	if (!o->bytes || !o->lat_iters)
		return fab_err_set(err, FAB_EINVAL, "the matrix test needs at least 1 byte and 1 ping-pong");
	uint32_t n = pr->n, m = n + (n & 1);
	memset(res, 0, sizeof *res);
	res->stages = o->serial ? n * (n - 1) / 2 : m - 1;
	if (pr->me == 0) {
		pr->rep = fab_xcalloc(2 * (size_t)n, sizeof *pr->rep);
		res->lat_us = fab_xcalloc((size_t)n * n, sizeof *res->lat_us);
		res->bw_GBps = fab_xcalloc((size_t)n * n, sizeof *res->bw_GBps);
		res->failed = fab_xcalloc((size_t)n * n, 1);
	}
	int rc = run_stages(pr, o, false, res->stages, res, err);
	/* the re-test plan travels ahead of the next barrier's GO */
	if (!rc && pr->me == 0)
		plan_retest(pr, o, res);
	if (!rc)
		rc = pr_raw_barrier(pr, err);
	if (!rc && pr->nplan)
		rc = run_stages(pr, o, true, pr->nplan, res, err);
	free(pr->rep);
	pr->rep = NULL;
	free(pr->plan);
	pr->plan = NULL;
	pr->nplan = 0;
	if (rc)
		fab_probe_matrix_free(res);
	return rc;
}

void fab_probe_matrix_free(struct fab_probe_matrix_res *res)
{
	free(res->lat_us);
	free(res->bw_GBps);
	free(res->failed);
	free(res->retest);
	memset(res, 0, sizeof *res);
}
