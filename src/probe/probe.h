/*
 * probe.h - the real network: ranks in processes, TCP between them, and the
 * collective schedules of src/coll/ executed on real float data.
 *
 * A job of n ranks meets at rank 0 (rendezvous: every rank sends its rank,
 * the job token, its data address and port; rank 0 answers with everyone's
 * address).  The rendezvous connection stays open as the rank's control
 * connection to rank 0 (barriers, reports, abort); the ranks then connect a
 * full mesh of data connections, `conns` per pair, each checked by the
 * token.  A collective is the same schedule the simulator runs; each process
 * runs only its own rank's steps, over non-blocking sockets.
 */
#ifndef FAB_PROBE_H
#define FAB_PROBE_H

#include "../base/base.h"
#include "../coll/coll.h"

struct fab_probe;

#define FAB_PROBE_MAX_CONNS 16
/* ranks a probe job may have (a launcher's size beyond it is refused) */
#define FAB_PROBE_MAX_RANKS 65536u
#define FAB_PROBE_TOKEN_BYTES 16
/* a connection has this long to present the job token */
#define FAB_PROBE_HELLO_S 5.0

/* An IPv4 or IPv6 address, network byte order: family 4 (the first 4 bytes
 * of a) or 6; 0: none. */
struct fab_ip {
	uint8_t family;
	uint8_t a[16];
};
/* its text ("10.0.0.1", "fd00::2"; "?" for none), into buf */
const char *fab_ip_str(const struct fab_ip *ip, char *buf, size_t len);
/* A listening TCP socket on ip (family 0: any IPv4 address) at *port (0:
 * any; the port taken is written back), or -1 with errno: the local
 * launcher's rendezvous socket. */
int fab_probe_listen(const struct fab_ip *ip, uint16_t *port);

struct fab_probe_params {
	uint32_t nranks, rank;
	int rendezvous_fd; /* rank 0: a listening socket, or -1 to open master_port */
	char master[64];   /* rank 0's address */
	bool master_given; /* by a flag (--master): fab_probe_env need not find it */
	uint16_t master_port;
	struct fab_ip bind; /* every socket of this rank binds it; family 0: chosen as below */
	uint32_t conns;     /* data connections per peer pair, 1..FAB_PROBE_MAX_CONNS (0: 1) */
	bool busy_poll;     /* the point-to-point tests spin on their sockets instead of sleeping in poll */
	uint8_t token[FAB_PROBE_TOKEN_BYTES]; /* the job's (never all zero); a connection without it is refused */
	double timeout_s;                     /* no progress for this long: fail, naming the peer */
	/* told of what goes on but does not stop the job (a connection refused
	 * for want of the token); NULL: not told */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

struct fab_probe *fab_probe_connect(const struct fab_probe_params *p, struct fab_err *err);
void fab_probe_close(struct fab_probe *pr);
/* Every rank calls it once with its value: *out is the least of them all
 * (what every rank can afford, when each says what it can). */
int fab_probe_agree_min(struct fab_probe *pr, uint32_t mine, uint32_t *out, struct fab_err *err);
/* A message between ranks: bytes and their count. */
struct fab_probe_msg {
	uint8_t *data;
	size_t len;
};
/* Every rank calls it with out[j], its message for rank j (out[me] is not
 * sent); it returns 0 once this rank's are sent and in[j] holds rank j's
 * to it (allocated: the caller frees each data; in[me] empty).  tag must be
 * the same on every rank (a count of exchanges: a rank out of step is
 * refused), and max bounds what a rank may send.  -1 (err names the rank):
 * a connection closed, a message out of step or too long, or nothing from a
 * rank for the probe's timeout. */
int fab_probe_exchange(struct fab_probe *pr, uint32_t tag, const struct fab_probe_msg *out, struct fab_probe_msg *in,
		       size_t max, struct fab_err *err);
/* "rank3@10.0.0.4": the rank and its data address */
void fab_probe_rank_name(const struct fab_probe *pr, uint32_t rank, char *buf, size_t len);

struct fab_probe_result {
	double time_s;  /* this rank's time for the operation (rank 0: the mean over ranks) */
	uint64_t wrong; /* output elements that differ from the definition (rank 0: all ranks') */
};

/* Runs one collective (args.nranks must be the job's) on real float data.
 * Messages of channel c travel on data connection c mod conns; a receive
 * whose dependencies are done lands straight in place (a reduction is
 * applied as the bytes come in).  With check, the input is filled with the
 * pattern of fab_coll_input_value and every output element is compared
 * with the definition (nccl-tests' check pass); without, the buffers keep
 * what they hold and wrong is 0. */
int fab_probe_coll(struct fab_probe *pr, const struct fab_coll_args *args, bool check, struct fab_probe_result *res,
		   struct fab_err *err);

enum fab_probe_test { FAB_PROBE_LATENCY, FAB_PROBE_BW, FAB_PROBE_BW_BIDIR };

/* Point-to-point tests between rank 0 and every other rank in turn (perftest
 * style: one pair at a time, so each number is that pair's path alone).
 * Every rank calls it.  At rank 0, out receives: latency: (n-1) x iters
 * one-way times in the order measured (half the round trip of a message of
 * `bytes` each way, on the first data connection), peer-major; bw: (n-1)
 * times to stream iters messages of `bytes` to each peer (striped over the
 * pair's data connections) until its acknowledgement; bidirectional: both
 * ways at once, the time until both sides have everything.  Seconds.  bw
 * gives 3 values per peer: that time, the peak rate (bytes/s: a message
 * over the shortest time between two arrivals at the receiver, perftest's
 * BW peak) and the messages timed (run may make the run time-based). */
struct fab_probe_p2p_run {
	double duration_s; /* bw: stream for this long instead of iters (0: iters) */
	double interval_s; /* bw with a duration: report every this long, on a clock (0: once) */
	/* at rank 0, each batch: its peer, its span from the start, its bytes */
	void (*interval)(void *ctx, uint32_t peer, double from_s, double to_s, double bytes);
	void *ctx;
};
int fab_probe_p2p(struct fab_probe *pr, enum fab_probe_test kind, size_t bytes, uint32_t iters, uint32_t warmup,
		  const struct fab_probe_p2p_run *run, double *out, struct fab_err *err);

struct fab_probe_matrix_opts {
	size_t bytes;          /* each way, per pair */
	uint32_t lat_iters;    /* 8-byte ping-pongs per pair */
	double pair_timeout_s; /* a pair not done by then is recorded failed */
	double retest_below;   /* re-test alone the pairs under this fraction of the median (0: none) */
	bool serial;           /* one pair at a time instead of rounds of disjoint pairs */
};

struct fab_probe_retest {
	uint32_t a, b;
	double before[2], after[2]; /* GB/s a -> b, b -> a; NaN: failed */
};

struct fab_probe_matrix_res {
	double *lat_us, *bw_GBps;         /* [n*n], row = sender; a failed pair: NaN */
	uint8_t *failed;                  /* [n*n] */
	uint32_t stages;                  /* rounds (or pairs, serial) */
	uint32_t nretest, retest_skipped; /* re-tested pairs; suspicious pairs over the cap of 2n */
	struct fab_probe_retest *retest;
};

/* The all-pairs matrix (the matrix test of `fabscope matrix`, on the real
 * network): n-1 rounds of disjoint pairs (circle method; odd n: one rank
 * sits out each round), all pairs of a round at once, or one pair at a
 * time.  A pair ping-pongs 8 bytes lat_iters times (latency: half the
 * median round trip), then sends `bytes` each way at once (bandwidth of
 * i -> j: bytes over the time j took to receive them).  A pair that breaks
 * or misses its timeout is recorded failed and the test goes on.  Then the
 * suspicious pairs (failed, or either way under retest_below x the median)
 * are measured again one at a time, and those numbers are reported.
 * Every rank calls it; at rank 0, res is filled (free with
 * fab_probe_matrix_free). */
int fab_probe_matrix(struct fab_probe *pr, const struct fab_probe_matrix_opts *o, struct fab_probe_matrix_res *res,
		     struct fab_err *err);
void fab_probe_matrix_free(struct fab_probe_matrix_res *res);

/* Rank and size from the launcher's environment: Open MPI
 * (OMPI_COMM_WORLD_RANK/SIZE), MPICH/PMI (PMI_RANK/PMI_SIZE), Slurm
 * (SLURM_PROCID/SLURM_NTASKS) or torchrun-style (RANK/WORLD_SIZE); and,
 * launcher or not, the master from MASTER_ADDR/MASTER_PORT (under Slurm,
 * without them: the first node of SLURM_STEP_NODELIST or SLURM_NODELIST,
 * port 20000 + (job id x 16 + step id) mod 20000).  Returns the launcher's
 * name; NULL when none is found, or, with why (len bytes) saying which
 * variable and what was expected, when its rank or size is not a number
 * in range (a size from 1 to FAB_PROBE_MAX_RANKS, a rank under it). */
const char *fab_probe_env(struct fab_probe_params *p, char *why, size_t len);

/* The job token, the same on every rank: FABSCOPE_TOKEN (any string of 8
 * characters or more), else the launcher's job id (Slurm's job and step,
 * PMIx's namespace, Open MPI's job id, torchrun's run id), hashed to
 * FAB_PROBE_TOKEN_BYTES.  *source names where it came from.  -1 (why says
 * what to set) when there is none or FABSCOPE_TOKEN is too short. */
int fab_probe_env_token(struct fab_probe_params *p, const char **source, char *why, size_t len);
/* A string hashed into a token (never all zero). */
void fab_probe_token_of(const char *s, uint8_t token[FAB_PROBE_TOKEN_BYTES]);

/* The first host of a Slurm node list ("gpu[07-09,12],login1" -> "gpu07"),
 * into out; -1 when the list is malformed or the name does not fit. */
int fab_slurm_first_host(const char *list, char *out, size_t len);

/* A host name or an address (IPv6 may be in brackets) into *ip: the first
 * address getaddrinfo gives, of that family when family is 4 or 6; -1 with
 * why when it does not resolve. */
int fab_probe_resolve_host(const char *host, int family, struct fab_ip *ip, char *why, size_t len);

/* An IPv4 or IPv6 address, or an interface name (its first IPv4 address,
 * else its first IPv6 address that is not link-local), into *ip; -1 when it
 * is neither. */
int fab_probe_resolve_bind(const char *what, struct fab_ip *ip);

#endif
