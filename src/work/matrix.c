/*
 * matrix.c - all-pairs latency and bandwidth, round by round.
 *
 * Circle method: endpoint 0 stays, the others rotate; round r pairs
 * position i with position n-1-i, so every pair meets exactly once in n-1
 * rounds and no endpoint is in two pairs of a round.  Every pair of a
 * round first ping-pongs lat_bytes (latency = half the round trip); once
 * all have, every pair sends bytes each way at once (bandwidth per
 * direction = bytes / its transfer time), as the probe's matrix does.
 * The next round starts when every pair of this one is done, or at the
 * round's timeout: pairs still running then fail (bandwidth 0, latency the
 * timeout) and whatever they still deliver is ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "../coll/coll.h"
#include "matrix.h"

enum { K_PING, K_PONG, K_BW_AB, K_BW_BA };

static uint32_t conn(struct fab_matrix *m, uint32_t a, uint32_t b)
{
	uint32_t *c = &m->conn[(size_t)a * m->n + b];
	if (*c == UINT32_MAX)
		*c = fab_sim_open(m->w->sim, m->nic[a], m->nic[b], (uint8_t)m->p.priority);
	return *c;
}

static void start_round(struct fab_matrix *m);

static void post(struct fab_matrix *m, uint32_t a, uint32_t b, fab_bytes bytes, uint32_t pair, int kind);

#define ROUND_TAG(r) (((r)&0xffffu) << 16)

/* the round's bandwidth phase: every pair whose ping-pong is done sends
 * its bytes each way at once */
static void send_all(struct fab_matrix *m, fab_time_ps now)
{
	m->sending = true;
	for (uint32_t i = 0; i < m->npairs; i++)
		if (m->left[i] == 2) {
			m->t0[i] = now;
			post(m, m->pairs[i][0], m->pairs[i][1], m->p.bytes, i, K_BW_AB);
			post(m, m->pairs[i][1], m->pairs[i][0], m->p.bytes, i, K_BW_BA);
		}
}

static void arrived(void *obj, uint32_t val)
{
	struct fab_matrix *m = obj;
	if ((val & 0xffff0000u) != ROUND_TAG(m->round - 1) || m->finished)
		return; /* from a round that timed out */
	uint32_t pair = (val >> 2) & 0x3fff, kind = val & 3;
	uint32_t a = m->pairs[pair][0], b = m->pairs[pair][1];
	fab_time_ps now = fab_sim_now(m->w->sim);
	switch (kind) {
	case K_PING:
		post(m, b, a, m->p.lat_bytes, pair, K_PONG);
		return;
	case K_PONG: {
		if (m->sending)
			return; /* too late: the pair failed when its ping phase timed out */
		double us = (double)(now - m->t0[pair]) / 2 / 1e6;
		m->lat_us[(size_t)a * m->n + b] = m->lat_us[(size_t)b * m->n + a] = us;
		m->left[pair] = 2;
		/* once every pair of the round has its latency, every pair
		 * sends its bytes at once (as the probe does) */
		if (++m->pinged == m->npairs)
			send_all(m, now);
		return;
	}
	default: {
		double secs = (double)(now - m->t0[pair]) / 1e12;
		size_t idx = kind == K_BW_AB ? (size_t)a * m->n + b : (size_t)b * m->n + a;
		m->bw_GBps[idx] = secs > 0 ? (double)m->p.bytes / secs / 1e9 : 0;
		if (--m->left[pair])
			return;
		if (--m->pending == 0)
			start_round(m);
	}
	}
}

static void post(struct fab_matrix *m, uint32_t a, uint32_t b, fab_bytes bytes, uint32_t pair, int kind)
{
	fab_sim_post(m->w->sim, conn(m, a, b), bytes,
		     fab_work_cookie(m->w, arrived, m, ROUND_TAG(m->round - 1) | pair << 2 | (uint32_t)kind));
}

static void round_timeout(void *obj, uint32_t round)
{
	struct fab_matrix *m = obj;
	if (m->finished || round != m->round - 1 || !m->pending)
		return;
	double us = (double)m->p.timeout_ps / 1e6;
	if (!m->sending) {
		/* the ping phase timed out: the pairs without an answer fail,
		 * the others send, with a timeout of their own */
		fab_time_ps now = fab_sim_now(m->w->sim);
		for (uint32_t i = 0; i < m->npairs; i++) {
			size_t ab = (size_t)m->pairs[i][0] * m->n + m->pairs[i][1];
			size_t ba = (size_t)m->pairs[i][1] * m->n + m->pairs[i][0];
			if (m->left[i])
				continue;
			m->lat_us[ab] = m->lat_us[ba] = us;
			m->bw_GBps[ab] = m->bw_GBps[ba] = 0;
			m->failed++;
			m->pending--;
		}
		send_all(m, now);
		if (!m->pending)
			start_round(m);
		else
			fab_work_timer(m->w, now + m->p.timeout_ps, round_timeout, m, round);
		return;
	}
	for (uint32_t i = 0; i < m->npairs; i++) {
		uint32_t a = m->pairs[i][0], b = m->pairs[i][1];
		size_t ab = (size_t)a * m->n + b, ba = (size_t)b * m->n + a;
		/* a direction that arrived keeps its number */
		if (m->left[i] || !m->lat_us[ab]) {
			if (!m->lat_us[ab])
				m->lat_us[ab] = m->lat_us[ba] = us;
			if (!m->left[i] || m->left[i] == 2) {
				m->bw_GBps[ab] = m->left[i] ? 0 : m->bw_GBps[ab];
				m->bw_GBps[ba] = m->left[i] ? 0 : m->bw_GBps[ba];
			} else {
				/* one direction arrived: the other did not */
				if (!m->bw_GBps[ab])
					m->bw_GBps[ab] = 0;
				if (!m->bw_GBps[ba])
					m->bw_GBps[ba] = 0;
			}
			m->failed++;
		}
	}
	m->pending = 0;
	start_round(m);
}

static void start_round(struct fab_matrix *m)
{
	if (m->round == m->nrounds) {
		m->finished = true;
		fab_sim_hold(m->w->sim, -1);
		return;
	}
	uint32_t n = m->n, r = m->round++;
	m->npairs = 0;
	if (m->p.sample_pairs) {
		struct fab_rng rng;
		fab_rng_init(&rng, m->p.seed, fab_rng_stream(FAB_RNG_MATRIX, r));
		uint32_t a = (uint32_t)fab_rng_below(&rng, n), b = (uint32_t)fab_rng_below(&rng, n - 1);
		if (b >= a)
			b++;
		m->pairs[m->npairs][0] = a;
		m->pairs[m->npairs++][1] = b;
	} else if (m->p.serial) {
		/* the r-th unordered pair */
		uint32_t a = 0, k = r;
		while (k >= n - 1 - a) {
			k -= n - 1 - a;
			a++;
		}
		m->pairs[m->npairs][0] = a;
		m->pairs[m->npairs++][1] = a + 1 + k;
	} else {
		for (uint32_t i = 0; i < (n + 1) / 2; i++) {
			uint32_t x, y;
			if (!fab_circle_pair(n, r, i, &x, &y))
				continue;
			m->pairs[m->npairs][0] = x;
			m->pairs[m->npairs++][1] = y;
		}
	}
	m->pending = m->npairs;
	m->pinged = 0;
	m->sending = false;
	fab_time_ps now = fab_sim_now(m->w->sim);
	if (m->p.timeout_ps)
		fab_work_timer(m->w, now + m->p.timeout_ps, round_timeout, m, r);
	for (uint32_t i = 0; i < m->npairs; i++) {
		m->left[i] = 0;
		m->tested[(size_t)m->pairs[i][0] * n + m->pairs[i][1]] = true;
		m->tested[(size_t)m->pairs[i][1] * n + m->pairs[i][0]] = true;
		m->t0[i] = now;
		post(m, m->pairs[i][0], m->pairs[i][1], m->p.lat_bytes, i, K_PING);
	}
}

void fab_matrix_init(struct fab_matrix *m, struct fab_work *w, const struct fab_matrix_params *p)
{
	memset(m, 0, sizeof *m);
	m->w = w;
	m->t = w->topo;
	m->p = *p;
	uint32_t step = p->nics ? w->topo->nics_per_server : 1;
	m->n = w->topo->nnics / (step ? step : 1);
	m->nic = fab_xcalloc(m->n + 1, sizeof *m->nic);
	for (uint32_t i = 0; i < m->n; i++)
		m->nic[i] = i * (step ? step : 1);
	size_t nn = (size_t)m->n * m->n;
	m->conn = fab_xcalloc(nn, sizeof *m->conn);
	for (size_t i = 0; i < nn; i++)
		m->conn[i] = UINT32_MAX;
	m->bw_GBps = fab_xcalloc(nn, sizeof *m->bw_GBps);
	m->lat_us = fab_xcalloc(nn, sizeof *m->lat_us);
	m->pairs = fab_xcalloc(m->n / 2 + 1, sizeof *m->pairs);
	m->t0 = fab_xcalloc(m->n / 2 + 1, sizeof *m->t0);
	m->left = fab_xcalloc(m->n / 2 + 1, sizeof *m->left);
	m->tested = fab_xcalloc(nn, sizeof *m->tested);
	m->nrounds = m->n < 2     ? 0
		: p->sample_pairs ? p->sample_pairs
		: p->serial       ? m->n * (m->n - 1) / 2
				  : m->n - 1 + (m->n & 1);
	/* what one pair alone should see: payload at line rate; half a round
	 * trip of the longest path (4 links across the spine, 2 under a leaf) */
	const struct fab_topo *t = w->topo;
	const struct fab_port *hp = &t->ports[t->nodes[t->nic_node[0]].first_port];
	uint32_t mtu = fab_sim_mtu(w->sim);
	m->theory_GBps = (double)hp->rate_bps / 8 * mtu / (mtu + 82) / 1e9;
	double hops = t->nswitches > 1 ? 4 : 2;
	m->theory_lat_us = hops * (double)hp->delay_ps / 1e6;
}

void fab_matrix_start(struct fab_matrix *m)
{
	fab_sim_hold(m->w->sim, +1);
	start_round(m);
}

void fab_matrix_free(struct fab_matrix *m)
{
	free(m->conn);
	free(m->nic);
	free(m->bw_GBps);
	free(m->lat_us);
	free(m->pairs);
	free(m->t0);
	free(m->left);
	free(m->tested);
	memset(m, 0, sizeof *m);
}
