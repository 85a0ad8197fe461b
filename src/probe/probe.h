/*
 * probe.h - the real network: ranks in processes, TCP between them, and the
 * collective schedules of src/coll/ executed on real float data.
 *
 * A job of n ranks meets at rank 0 (rendezvous: every rank sends its rank,
 * the job token and its data port; rank 0 answers with everyone's address),
 * then connects a full mesh, each connection checked by the token.  A
 * collective is the same schedule the simulator runs; each process runs
 * only its own rank's steps, over non-blocking sockets.
 */
#ifndef FAB_PROBE_H
#define FAB_PROBE_H

#include "../base/base.h"
#include "../coll/coll.h"

struct fab_probe;

struct fab_probe_params {
	uint32_t nranks, rank;
	int rendezvous_fd;      /* rank 0: a listening socket, or -1 to open master_port */
	char master[64];        /* rank 0's address */
	uint16_t master_port;
	uint64_t token;         /* the job's; a connection without it is refused */
	double timeout_s;       /* no progress for this long: fail, naming the peer */
};

struct fab_probe *fab_probe_connect(const struct fab_probe_params *p, struct fab_err *err);
void fab_probe_close(struct fab_probe *pr);
/* "rank3@10.0.0.4": the rank and the address it joined from (as rank 0 saw it) */
void fab_probe_rank_name(const struct fab_probe *pr, uint32_t rank, char *buf, size_t len);

struct fab_probe_result {
	double time_s;          /* this rank's time for the operation */
	uint64_t wrong;         /* output elements that differ from the definition (rank 0: all ranks') */
};

/* Runs one collective (args.nranks must be the job's) on real float data. */
int fab_probe_coll(struct fab_probe *pr, const struct fab_coll_args *args,
		   struct fab_probe_result *res, struct fab_err *err);

enum fab_probe_test { FAB_PROBE_LATENCY, FAB_PROBE_BW };

/* Point-to-point tests between rank 0 and every other rank in turn (perftest
 * style: one pair at a time, so each number is that pair's path alone), on
 * the mesh connection.  Every rank calls it.  At rank 0, out receives:
 * latency: (n-1) x iters one-way times (half the round trip of a message of
 * `bytes` each way), peer-major; bw: (n-1) times to stream iters messages of
 * `bytes` to each peer until its acknowledgement.  Seconds. */
int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters,
		  uint32_t warmup, double *out, struct fab_err *err);

/* The all-pairs matrix (the matrix test of `fabscope matrix`, on the real
 * network): n-1 rounds of disjoint pairs (circle method), all pairs of a
 * round at once.  A pair ping-pongs 8 bytes lat_iters times (latency: half
 * the median round trip), then sends `bytes` each way at once (bandwidth of
 * i -> j: bytes over the time j took to receive them).  Every rank calls it;
 * at rank 0, lat_us and bw_GBps ([n*n], row = sender) are filled. */
int fab_probe_matrix(struct fab_probe *pr, size_t bytes, uint32_t lat_iters, double *lat_us, double *bw_GBps,
		     struct fab_err *err);

/* Rank and size from the launcher's environment: Open MPI
 * (OMPI_COMM_WORLD_RANK/SIZE), MPICH/PMI (PMI_RANK/PMI_SIZE), Slurm
 * (SLURM_PROCID/SLURM_NTASKS) or torchrun-style (RANK/WORLD_SIZE); the
 * master from MASTER_ADDR/MASTER_PORT; the token from FABSCOPE_TOKEN.
 * Returns the launcher's name, or NULL when none is found. */
const char *fab_probe_env(struct fab_probe_params *p);

#endif
