/*
 * probe_int.h - the probe's internal state, shared by its files: net.c
 * (sockets), rendezvous.c (finding each other, the mesh), mesh.c (the poll
 * loop, control frames, failures), coll.c (collectives), p2p.c (latency and
 * bandwidth), matrix.c (all pairs).
 *
 * Connections come in two kinds.  The control connection (rank 0 to every
 * other rank: the rendezvous connection, kept) carries 8-byte frames only:
 * barrier DONE/GO, matrix reports and plans, ABORT.  Data connections
 * (`conns` per pair of ranks) carry the collectives' messages, each with an
 * 8-byte header (the id of the receive step it is for, the same on every
 * rank, and its length), or the raw bytes of a point-to-point test, which
 * only ever run between barriers that read control connections alone.
 * Sends queue per connection and go out as the socket takes them; a send is
 * done when the kernel has its last byte.  A received message lands in
 * place when its receive step may run, else waits in an inbox.  One poll
 * loop drives it all.
 */
#ifndef FAB_PROBE_INT_H
#define FAB_PROBE_INT_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <malloc.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../coll/exec.h"
#include "probe.h"

/* the first bytes on every connection: 40, no padding */
struct hello {
	uint32_t rank;
	uint16_t port;  /* rendezvous: the data port; mesh: the connection's index */
	uint8_t family; /* rendezvous: the data address's family, 4 or 6 */
	uint8_t pad;
	uint8_t ip[16]; /* rendezvous: the data address */
	uint8_t token[FAB_PROBE_TOKEN_BYTES];
};

/* a rendezvous or mesh listener's callers: take() is given each one that
 * presented the token; it returns 1 (taken: the fd is its), 0 (not: closed
 * and counted refused) or -1 (the rendezvous fails: err is set) */
struct accept_pool {
	uint32_t want, taken, refused;
	int (*take)(struct fab_probe *pr, void *ctx, int fd, const struct hello *h, const struct fab_ip *from);
	void *ctx;
};

/* a rank's data address in rank 0's table: 20 bytes */
struct addr {
	uint8_t ip[16];
	uint16_t port;
	uint8_t family;
	uint8_t pad;
};

static inline struct fab_ip pr_addr_ip(const struct addr *a)
{
	struct fab_ip ip = {a->family, {0}};
	memcpy(ip.a, a->ip, sizeof ip.a);
	return ip;
}

struct out_msg {
	struct out_msg *next;
	uint32_t step;       /* the send step, or a control frame's kind */
	uint32_t hdr[2];     /* receive step (or kind), length (or value) */
	const uint8_t *data; /* the payload, in the rank's buffer: the schedule
			      * keeps it unchanged until the send is done */
	size_t len, sent;    /* header + payload */
};

enum { IN_INBOX, IN_DIRECT, IN_REDUCE };
#define BOUNCE_BYTES (256u << 10)

struct in_state {
	uint8_t hdr[8];
	size_t hgot;
	uint32_t step, len, got;
	int mode;
	uint8_t *buf;    /* inbox: the whole message */
	uint8_t *dst;    /* direct, reduce: its place */
	uint8_t *bounce; /* reduce: bytes not yet added */
	size_t held;     /* bytes in bounce (less than a float) */
	uint64_t added;  /* floats added so far */
};

struct conn {
	int fd;
	uint32_t peer;
	bool ctl;
	struct out_msg *qh, *qt;
	struct in_state in;
};

/* control frames */
#define F_DONE 1    /* barrier: a rank finished (to rank 0), value: a count */
#define F_GO 2      /* barrier: everyone finished (from rank 0) */
#define F_REP_LAT 3 /* matrix: a rank's latency (ns), to rank 0; FAILED: the pair failed */
#define F_REP_BW 4  /* matrix: a rank's receive time (ns) */
#define F_PLAN 5    /* matrix: the re-test plan, from rank 0: a count, then pairs a << 16 | b */
#define F_ABORT 6   /* from rank 0: the job failed, value: the failed rank */
#define F_BEAT 7    /* heartbeat, both ways, from every wait loop */
#define F_STUCK 8   /* to rank 0: no data for the timeout, value: from whom it is due */
#define F_TURN 9    /* from rank 0: the point-to-point test with you starts */
#define F_TIME 10   /* to rank 0: a rank's time for the operation, in 0.1 us */
#define F_MIN 11    /* both ways: a value to agree on (the least of every rank's) */
#define FAILED UINT32_MAX
#define NO_RANK UINT32_MAX

struct fab_probe {
	uint32_t n, me, nc, stride; /* stride: connections per peer (control + nc data) */
	struct conn *c;             /* [n * stride]: c[peer * stride + 0] control, + 1 + k data */
	struct fab_ip *ip;          /* every rank's data address */
	uint8_t token[FAB_PROBE_TOKEN_BYTES];
	double timeout_s;
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	bool busy;
	struct pollfd *pf;
	uint32_t *pfk;
	/* barriers (rank 0: DONE frames per rank, GO sent) */
	uint32_t *dcount, gen;
	uint64_t done_sum, time_sum;
	bool go, ctl_only;
	uint32_t lost;               /* the rank whose control connection closed, or NO_RANK */
	uint32_t aborted;            /* rank 0 said this rank failed, or NO_RANK */
	uint32_t stuck_by, stuck_on; /* rank 0: a rank reported it waits in vain for another */
	uint32_t turn;               /* the last F_TURN seen */
	uint32_t min_val, min_got;   /* F_MIN: the least so far, how many came (rank 0) */
	bool min_done;
	uint32_t suspect; /* the rank this rank's failure points at, or NO_RANK */
	bool abort_sent, settled;
	double *heard; /* when a control frame last came from each rank */
	double last_beat, beat_iv, wait_since;
	/* matrix */
	uint32_t *rep; /* rank 0: [2n] latency, receive time (ns) */
	uint32_t *plan, nplan, plan_got;
	bool plan_head;
	/* the operation in progress */
	struct fab_exec ex;
	const struct fab_sched *s;
	uint8_t **inbox;
	uint8_t *rxseen; /* [nsteps]: a message for this receive step has begun (a second is refused) */
	float *buf[FAB_NBUF];
	size_t bufcap[FAB_NBUF];
	uint32_t mine_left;
	struct fab_err *err;
	int failed;
};

static inline struct conn *C(struct fab_probe *pr, uint32_t peer, uint32_t k)
{
	return &pr->c[(size_t)peer * pr->stride + k];
}

static inline struct conn *ctl_of(struct fab_probe *pr, uint32_t peer)
{
	return C(pr, peer, 0);
}

/* a probe with no connection yet (every fd -1): fab_probe_connect, the fuzzer */
struct fab_probe *pr_alloc(const struct fab_probe_params *p);
double pr_now_s(void);
int pr_full_io(int fd, void *buf, size_t len, bool wr, double timeout_s);
void pr_tune(int fd, bool data);
/* a listening socket on ip (family 0: any IPv4 address), port 0: any */
int pr_listen_on(const struct fab_ip *ip, uint16_t *port);
/* connects, retrying until the timeout; binds bind first when it is of
 * ip's family */
int pr_connect_to(const struct fab_ip *ip, uint16_t port, const struct fab_ip *bind, double timeout_s);
/* the socket address of ip and port; the address of a socket address */
socklen_t pr_sockaddr(const struct fab_ip *ip, uint16_t port, struct sockaddr_storage *ss);
void pr_ip_of(const struct sockaddr *sa, struct fab_ip *ip);
bool pr_token_eq(const uint8_t *a, const uint8_t *b);
int pr_accept_pool(struct fab_probe *pr, int lfd, struct accept_pool *ap);
const char *pr_rname(const struct fab_probe *pr, uint32_t rank, char buf[64]);
void pr_free_queue(struct conn *c);
void pr_enqueue(struct conn *c, struct out_msg *m);
void pr_enqueue_ctrl(struct fab_probe *pr, uint32_t peer, uint32_t what, uint32_t value);
/* the first failure wins; suspect: the rank it points at, or NO_RANK */
void pr_fail(struct fab_probe *pr, uint32_t suspect, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pr_drop(struct conn *c);
bool pr_flush_out(struct fab_probe *pr, struct conn *c);
void pr_add_floats(float *restrict d, const float *restrict s, size_t n);
void pr_beat(struct fab_probe *pr);
bool pr_progress(struct fab_probe *pr, int wait_ms);
bool pr_check_peers(struct fab_probe *pr);
void pr_settle(struct fab_probe *pr);
int pr_barrier(struct fab_probe *pr, uint32_t value, bool ctl_only, struct fab_err *err);
int pr_xfer(struct fab_probe *pr, uint32_t peer, uint32_t nc, const uint8_t *sbuf, size_t slen, uint8_t *rbuf,
	    size_t rlen, double deadline, double *t_rx);
int pr_raw_barrier(struct fab_probe *pr, struct fab_err *err);

#endif
