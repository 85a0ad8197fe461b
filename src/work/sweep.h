/*
 * sweep.h - nccl-tests in simulation: one operation over a range of sizes,
 * warm-up and timed iterations back to back on one communicator, and the
 * placement of a communicator's ranks on the cluster's GPUs.
 */
#ifndef FAB_SWEEP_H
#define FAB_SWEEP_H

#include "comm.h"

enum fab_placement {
	FAB_PLACE_PACKED,
	FAB_PLACE_SPREAD,
	FAB_PLACE_RANDOM,
	FAB_PLACE_SCATTER,
	FAB_PLACE_LIST /* jobs: an explicit GPU list */
};

/* Ranks on GPUs: packed fills servers in order; spread takes servers from
 * each leaf in turn; random takes servers in a seeded random order (a
 * server's GPUs are used together, in order); scatter deals consecutive
 * ranks to different servers, round robin over as few servers as hold
 * them.  used (may be NULL) marks servers already taken: they are
 * skipped, and the servers chosen are marked.  Random placement draws from
 * seed's placement stream `index` (a job's number, or FAB_RNG_COLL_INDEX). */
int fab_place(const struct fab_topo *t, int placement, uint32_t nranks, uint64_t seed, uint64_t index, bool *used,
	      uint32_t *gpus, struct fab_err *err);

struct fab_coll_params {
	int op, algo;
	fab_bytes min_bytes, max_bytes;
	uint32_t factor;        /* size multiplier per row (nccl-tests -f) */
	fab_bytes step_bytes;   /* when set, size increment per row instead (-i) */
	uint32_t iters, warmup; /* -n, -w */
	bool every_iteration;   /* simulate iterations that repeat the last ones too */
	int dtype;              /* enum fab_dtype */
	uint32_t root;
	uint32_t gpus;  /* ranks; 0 = every GPU */
	int placement;  /* enum fab_placement */
	int ring_order; /* enum fab_ring_order */
	uint32_t channels;
	uint32_t qps_per_conn;
	fab_bytes chunk_bytes;
	fab_rate_bps reduce_bps;
	uint32_t priority;
	bool background; /* run the scenario's traffic alongside */
};

enum fab_dtype {
	FAB_DT_INT8,
	FAB_DT_UINT8,
	FAB_DT_INT32,
	FAB_DT_UINT32,
	FAB_DT_INT64,
	FAB_DT_UINT64,
	FAB_DT_HALF,
	FAB_DT_FLOAT,
	FAB_DT_DOUBLE,
	FAB_DT_BFLOAT16,
	FAB_DT_COUNT
};
uint32_t fab_dtype_bytes(int dtype);
const char *fab_dtype_name(int dtype);

struct fab_sweep_row {
	uint64_t bytes, count;
	int algo, proto;    /* what auto chose */
	double time_us;     /* mean over the timed iterations */
	uint32_t iters_run; /* warm-up and timed iterations simulated */
	double algbw_GBps, busbw_GBps;
	fab_time_ps start_ps, end_ps; /* of the timed iterations */
	double weight;                /* for progress: its events an iteration, about */
	double model_s;               /* for progress: the cost model's time (< 0: none) */
};

struct fab_sweep {
	struct fab_comm *comm;
	struct fab_coll_params p;
	struct fab_sweep_row *rows;
	uint32_t nrows, cur;
	uint32_t iter; /* warm-up iterations first, then timed */
	fab_time_ps timed_start;
	fab_time_ps iter_start; /* of the iteration under way */
	fab_time_ps last_ps;    /* the last iteration's time */
	uint32_t same;          /* iterations in a row that took last_ps */
	uint32_t expect;        /* iterations a row is expected to run (progress) */
	/* progress: the work done (weight x iterations) when last seen to
	 * change, the engine's events then, and events per weight so far */
	double seen_work;
	uint64_t seen_events;
	double events_per_weight;
	double time_per_model; /* the last iteration's time over the model's */
	bool finished;
	int rc;
	struct fab_err err;
	/* told as each row is done (its index), when set */
	void (*row_done)(void *ctx, uint32_t row);
	void *row_ctx;
};

int fab_sweep_start(struct fab_sweep *sw, struct fab_comm *c, const struct fab_coll_params *p, struct fab_err *err);
void fab_sweep_free(struct fab_sweep *sw);
double fab_sweep_avg_busbw(const struct fab_sweep *sw);
/* the share of the sweep done (0 to 1), weighting each row by its events
 * (row_weight) and each of its iterations alike, the rows to come as many
 * iterations as the last one ran (one that ended early because the fabric
 * repeated itself); -1 before it starts */
double fab_sweep_done(struct fab_sweep *sw, uint64_t events);

#endif
