/*
 * job.h - training jobs on the simulated cluster.
 *
 * A job is dp x tp x pp GPUs.  Rank (stage s, replica d, tensor index j)
 * is s*dp*tp + d*tp + j, so a tensor-parallel group is tp consecutive
 * ranks (one server when tp divides the GPUs of a server).  Every
 * iteration: for each micro-batch, forward compute with tp_collectives
 * tensor-parallel all-reduces, activations to the next stage; then the
 * backward pass in reverse, gradients of activations to the previous
 * stage; the last backward produces the weight gradients in buckets, each
 * all-reduced over the data-parallel group (one communicator per stage and
 * tensor index).  With overlap a bucket's all-reduce starts as soon as
 * every replica has produced it; without, after the whole backward pass.
 * The next iteration starts when every gradient is reduced.
 */
#ifndef FAB_JOB_H
#define FAB_JOB_H

#include "comm.h"
#include "model.h"
#include "traffic.h"

enum fab_pipe_schedule { FAB_SCHED_GPIPE, FAB_SCHED_1F1B };

struct fab_job_spec {
	char name[32];
	uint32_t gpus;      /* 0: dp from tp x pp and what is given */
	int placement;      /* enum fab_placement, or FAB_PLACE_LIST */
	uint32_t *gpu_list; /* placement list: the GPUs, in rank order */
	uint32_t ngpu_list;
	int ring_order; /* enum fab_ring_order */
	uint32_t iterations;
	fab_time_ps compute_ps; /* forward + backward compute of one iteration (a stage's) */
	fab_bytes grad_bytes;   /* gradient bytes each GPU all-reduces per iteration */
	uint32_t buckets;
	bool overlap;
	bool replay; /* collectives inside one server repeated, once run (comm_replay.c) */
	uint32_t tp, pp, microbatches;
	int schedule;                /* enum fab_pipe_schedule */
	struct fab_model_spec model; /* when model.layers: compute and volumes come from it */
	uint32_t virtual_stages;     /* model chunks per stage (interleaved 1F1B) */
	fab_bytes tp_bytes;          /* per tensor-parallel all-reduce */
	uint32_t tp_collectives;     /* tensor-parallel all-reduces per forward pass of a micro-batch */
	fab_bytes pp_bytes;          /* activations per micro-batch between stages, per GPU */
	int algo;                    /* data-parallel all-reduce algorithm (auto) */
	uint32_t channels, qps_per_conn;
	fab_time_ps start_ps;
	uint32_t priority;
	int transport; /* 0: the fabric's; else enum fab_transport_kind + 1 */
	struct fab_src_loc loc;
};

struct fab_job_iter {
	fab_time_ps start_ps, end_ps;
	fab_time_ps compute_ps; /* the spec's compute per iteration */
	fab_time_ps comm_ps;    /* time with at least one of the job's collectives running */
	fab_time_ps exposed_ps; /* end - start - compute: GPUs waiting */
	uint32_t last_worker;   /* the worker whose backward pass ended last */
	fab_time_ps lag_ps;     /* how long after the median worker it ended */
};

struct fab_job_stats {
	double mean_ps, p50_ps, p99_ps, max_ps, min_ps;
	double idle_fraction; /* exposed / iteration time, over all iterations */
};

struct fab_job_worker;

struct fab_job {
	struct fab_job_spec spec;
	struct fab_work *w;
	const struct fab_topo *t;
	uint32_t n, dp, tp, pp, M;
	uint32_t v; /* model chunks per stage */
	bool has_model;
	struct fab_model_volumes vol; /* the model's, when has_model */
	/* MoE: ep consecutive replicas share out the experts (vol.ep) */
	struct fab_comm *ep_comm;  /* [pp * dp / ep * tp]: all-to-alls within each expert-parallel group */
	struct fab_comm *edp_comm; /* [pp * ep * tp], when 1 < ep < dp: the dp / ep replicas of the same experts */
	uint32_t *a2a_arrived;     /* [pp * dp / ep]: workers of the group at the all-to-all */
	uint32_t *a2a_left;        /* [pp * dp / ep]: all-to-alls of the group still running */
	uint32_t *gpu;             /* rank -> GPU */
	struct fab_comm *dp_comm;  /* [pp * tp] */
	struct fab_comm *tp_comm;  /* [pp * dp], when tp > 1 */
	uint32_t *pp_conn;         /* [(pp-1) * dp * tp * 2]: activations down, gradients up */
	struct fab_job_worker *wk; /* [pp * dp] */
	/* data-parallel buckets of the iteration */
	uint32_t *bucket_ready; /* [pp * buckets]: replicas that produced it */
	uint32_t *dp_next;      /* [pp * tp]: next bucket each DP communicator reduces */
	bool *dp_busy;
	uint32_t dp_pending; /* bucket all-reduces not yet finished */
	uint32_t workers_done;
	fab_time_ps *done_at; /* per worker, this iteration */
	uint32_t iter;
	fab_time_ps iter_start;
	uint32_t active_ops;
	fab_time_ps comm_since, comm_acc;
	struct fab_job_iter *iters;
	uint32_t niters;
	bool finished;
	int rc;
	struct fab_err err;
};

/* slow (may be NULL): per GPU, how many times longer its compute takes; a
 * worker computes at its slowest GPU's pace. */
int fab_job_init(struct fab_job *j, struct fab_work *w, const struct fab_job_spec *spec, const uint32_t *gpus,
		 const double *slow, struct fab_err *err);
void fab_job_start(struct fab_job *j);
void fab_job_free(struct fab_job *j);
void fab_job_stats(const struct fab_job *j, struct fab_job_stats *out);
/* Picks GPUs for a job: the placement over servers no earlier job took.
 * server_used marks servers taken (in and out); random placement draws
 * from the scenario seed's stream for job `index`. */
int fab_job_place(const struct fab_topo *t, const struct fab_job_spec *spec, uint32_t ngpus, uint64_t seed,
		  uint64_t index, bool *server_used, uint32_t *gpus, struct fab_err *err);

#endif
