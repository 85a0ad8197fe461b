/*
 * matrix.h - the full-cluster matrix test in simulation: every NIC pair
 * measured for latency (a ping-pong of a small message) and bandwidth (a
 * message each way at once), in n-1 rounds of disjoint pairs (the circle
 * method) or one pair at a time.  The result has the shape the
 * real-network probe writes, so diagnose reads both.
 */
#ifndef FAB_MATRIX_H
#define FAB_MATRIX_H

#include "work.h"

struct fab_matrix_params {
	fab_bytes bytes;     /* bandwidth message per direction */
	fab_bytes lat_bytes; /* ping-pong message */
	bool serial;         /* one pair at a time instead of rounds */
	uint32_t priority;
	int nics;               /* 0: every NIC; 1: each server's first */
	uint32_t sample_pairs;  /* baseline: this many random pairs, one at a time (0 = every pair) */
	fab_time_ps timeout_ps; /* a round not done by then: its pairs fail (bandwidth 0) */
	uint64_t seed;
};

struct fab_matrix {
	struct fab_work *w;
	const struct fab_topo *t;
	struct fab_matrix_params p;
	uint32_t n;           /* endpoints: NICs */
	uint32_t *nic;        /* [n]: each endpoint's NIC */
	uint32_t *conn;       /* [n*n], UINT32_MAX until opened */
	double *bw_GBps;      /* [n*n]: i -> j */
	double *lat_us;       /* [n*n]: one way, half the round trip */
	uint32_t (*pairs)[2]; /* this round's pairs */
	uint32_t npairs, pending, round, nrounds;
	uint32_t pinged;      /* pairs of the round whose ping-pong is done */
	bool sending;         /* the round's bandwidth phase has begun */
	fab_time_ps *t0;      /* per pair: when its current phase started */
	uint8_t *left;        /* per pair: bandwidth messages still travelling */
	bool *tested;         /* [n*n]: the pair was measured */
	uint32_t failed;      /* pairs that timed out */
	double theory_GBps;   /* one pair alone: line rate x MTU/(MTU+82) */
	double theory_lat_us; /* a small message across the longest path */
	bool finished;
};

void fab_matrix_init(struct fab_matrix *m, struct fab_work *w, const struct fab_matrix_params *p);
void fab_matrix_start(struct fab_matrix *m);
void fab_matrix_free(struct fab_matrix *m);

#endif
