/*
 * parallel_int.h - what the packet engine's split run shares: parallel.c
 * (partitions, windows, threads) with parallel_ranks.c (what ranks send
 * each other: windows' frames, the gathering at rank 0).
 */
#ifndef FAB_PARALLEL_INT_H
#define FAB_PARALLEL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "transport.h"

/* a frame handed to another partition: the port whose wire it is on and
 * the frame's bytes after its link pointer (as ranks send them, too).  A
 * copy, not the frame: the sender's frame stays in its pool, hot in its
 * core's cache, and the receiver reads the boxes in order (streamed). */
#define FRAME_BYTES (sizeof(struct pkt) - offsetof(struct pkt, qp))
struct hand {
	uint32_t port;
	uint8_t frame[FRAME_BYTES];
} __attribute__((packed));
#define HAND_BYTES sizeof(struct hand)
_Static_assert(sizeof(struct hand) == 4 + FRAME_BYTES, "a handed frame is its port and its bytes");

struct hand_box {
	struct hand *v;
	size_t len, cap;
};

/* What a partition tells the others at a window's end (two slots, by the
 * window's parity: one is read while the next is written). */
struct part_report {
	uint64_t settled;    /* its flows done or failed */
	fab_time_ps next_ps; /* its next event, or the earliest frame it handed over */
	fab_time_ps idle_ps; /* when its last flow settled */
	fab_time_ps now_ps;  /* its clock */
};

struct pkt_par;

struct pkt_part {
	struct psim s; /* first: the engine's functions take it as theirs */
	uint32_t id;
	struct pkt_par *par;
	unsigned parity;
	struct hand_box *out[2];      /* [parity][destination partition] */
	fab_time_ps handed_min;       /* the earliest arrival handed over this window */
	struct part_report report[2]; /* [parity] */
	uint32_t *starts;             /* its flows, in start order */
	uint64_t before;              /* its flows settled as of its last event */
	fab_time_ps idle;             /* when its last flow settled */
	uint64_t windows;             /* windows it has run */
	atomic_uint claimed;          /* threads: the last window a worker took it for */
} __attribute__((aligned(FAB_GAP)));  /* one partition's writes never on another's lines */

/* threads: a worker runs partitions, its own first (first..first+count),
 * then any another worker has not yet taken in the window */
struct pkt_worker {
	struct pkt_par *par;
	uint32_t id, first, count;
	pthread_t thread;
};

struct pkt_par {
	struct psim *whole;
	uint32_t n;                        /* partitions (ranks: one a rank) */
	uint32_t local;                    /* those in this process: n, or 1 (ranks) */
	uint32_t workers;                  /* threads running them (ranks: 1) */
	uint64_t next_progress;            /* partition 0's progress line */
	const struct fab_sim_ranks *ranks; /* NULL: threads */
	const uint16_t *node_part;
	struct part_report *rep; /* ranks: every rank's last report */
	uint32_t tag;            /* ranks: exchanges so far */
	bool failed;             /* ranks: an exchange failed */
	struct pkt_part *parts;  /* [local] */
	fab_time_ps window_ps, end_ps;
	struct pkt_worker *worker; /* [workers] */
	/* the barrier: arrivals count up; the last one bumps the generation */
	_Alignas(FAB_GAP) atomic_uint arrived;
	_Alignas(FAB_GAP) atomic_uint generation;
	/* threads that give a core back: worker 0 says before window gen's
	 * barrier how many work after it (active[gen & 1]); its looks at the
	 * workers' CPU time (parallel.c, look) */
	_Alignas(FAB_GAP) atomic_uint active[2];
	bool adapt;                   /* look at all (not with FABSCOPE_THREADS_EXACT) */
	unsigned shrink_at;           /* FABSCOPE_THREADS_SHRINK_AT: one thread from that window on (tests) */
	unsigned grow_at;             /* FABSCOPE_THREADS_GROW_AT: back to all, one a window, from that one (tests) */
	uint64_t look_ns;             /* worker 0's last look: the monotonic clock */
	uint64_t *look_cpu;           /* [workers]: and each worker's CPU time then */
	uint64_t look_all, look_idle; /* and the cores' ticks, all and idle */
	fab_time_ps look_win;         /* and the simulated time */
	double rate;                  /* simulated ps a wall ns between the last two looks */
	double rate_before;           /* before the last thread left (0: none left on trial) */
	uint64_t hold_until_ns;       /* no leaving before (a leave that cost) */
	uint64_t hold_ns;             /* the next hold, doubling */
	/* workers that left wait here to come back (parallel_cores.c) */
	pthread_mutex_t park_mu;
	pthread_cond_t park_cv;
	uint32_t rejoin_id;  /* the worker called back (UINT32_MAX: none) */
	unsigned rejoin_gen; /* for this window */
	fab_time_ps rejoin_win;
	bool rejoin_over, over; /* the run ended then; it has ended */
	/* the outcome, identical in every partition */
	bool stopped_by_end_time;
};

/* threads and cores (parallel_cores.c): the free cores to start on; the
 * looks' state set up and freed; worker 0's look before window gen's
 * barrier: how many work after it; a worker that left waits in park until
 * called back (true: *gen and *win of the window before its first) or the
 * run is over (false); rejoin calls worker id back for window gen (over:
 * the run ended instead); over releases every parked worker */
uint32_t pkt_free_cores(void);
void pkt_par_look_init(struct pkt_par *par);
void pkt_par_look_free(struct pkt_par *par);
uint32_t pkt_par_look(struct pkt_par *par, unsigned gen, uint32_t active, fab_time_ps win);
bool pkt_par_park(struct pkt_par *par, uint32_t id, unsigned *gen, fab_time_ps *win);
void pkt_par_rejoin(struct pkt_par *par, uint32_t id, unsigned gen, fab_time_ps win, bool over);
void pkt_par_over(struct pkt_par *par);

/* the arrays rank 0 gathers: the flows, their receivers' counts, the
 * ports' counters, the queue pairs' used marks, each as bytes */
struct gathered {
	uint8_t *flows, *rx, *ports, *used;
	size_t nflows, nrx, nports, nused;
};

/* a copy of them as they are now, and its memory freed */
void pkt_gather_take(const struct psim *s, struct gathered *g);
void pkt_gather_free(struct gathered *g);

/* the counters a partition adds to the whole's, and a rank to rank 0's */
#define SUM_WORDS 19
void pkt_sum_words(struct psim *s, uint64_t *v[SUM_WORDS]);

/* ranks: this rank's report and handed frames to each other rank, theirs
 * to it, onto their wires; *all and *next: every rank's settled flows and
 * earliest next event.  -1: an exchange failed (par->failed) */
int pkt_ranks_meet(struct pkt_part *me, uint64_t *all, fab_time_ps *next);
/* ranks: each sends rank 0 its counters and what it changed since `was`;
 * rank 0 adds and lays them over its own, then closes the books again */
int pkt_ranks_gather(struct psim *s, const struct fab_sim_ranks *rk, struct gathered *was);

#endif
