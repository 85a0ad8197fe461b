/*
 * work.h - what workloads share: a dispatcher for the engine's callbacks,
 * and a text log.
 *
 * The engine hands back a 32-bit cookie when a posted message arrives and
 * a 32-bit argument when a timer fires.  The dispatcher turns each into a
 * one-shot (function, object, value) slot, so several communicators and
 * jobs can share one engine.
 */
#ifndef FAB_WORK_H
#define FAB_WORK_H

#include <stdio.h>

#include "../sim/sim.h"

typedef void (*fab_work_fn)(void *obj, uint32_t val);

struct fab_work_slot {
	fab_work_fn fn;
	void *obj;
	uint32_t val;
	uint32_t next_free;
};

/* A growable text buffer: the library logs here, the CLI prints it. */
struct fab_log {
	char *buf;
	size_t len, cap;
	bool enabled;
};

void fab_log_printf(struct fab_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fab_log_free(struct fab_log *log);

/* NCCL's protocols: how a step's bytes travel (LL: 4 bytes of data and a
 * 4-byte flag per 8; LL128: 120 of 128; Simple: all) and what each costs in
 * latency. */
enum fab_proto { FAB_PROTO_LL, FAB_PROTO_LL128, FAB_PROTO_SIMPLE, FAB_PROTO_AUTO, FAB_NPROTO = FAB_PROTO_AUTO };

/* What NCCL's environment decides for every communicator (NCCL_CROSS_NIC,
 * NCCL_PXN_DISABLE, NCCL_PROTO, the tuner's latencies): the scenario's
 * nccl section. */
struct fab_nccl_params {
	bool cross_nic;                  /* rings may enter a server on one rail and leave on another */
	bool pxn;                        /* point-to-point sends leave through the NIC on the destination's rail */
	bool split_data_on_qps;          /* a message striped over all of a connection's queue pairs */
	int proto;                       /* enum fab_proto; FAB_PROTO_AUTO: the cost model chooses */
	fab_time_ps base_ps[FAB_NPROTO]; /* per operation: launch and setup */
	fab_time_ps hop_ps[FAB_NPROTO];  /* per step, on top of moving its bytes */
	fab_time_ps net_ps[FAB_NPROTO];  /* per step that crosses the network, on top of hop_ps */
	fab_time_ps nvls_ps;             /* an NVLS AllReduce's latency */
	fab_time_ps sharp_ps;            /* a SHARP AllReduce's latency */
};

const char *fab_proto_name(int proto); /* "LL", "LL128", "Simple", "auto" */

struct fab_work {
	struct fab_sim *sim;
	const struct fab_topo *topo;
	struct fab_work_slot *slots;
	uint32_t nslots, cap_slots, free_head;
	struct fab_log log;
	struct fab_nccl_params nccl; /* the facade copies the scenario's */
	uint32_t *nvl_users;         /* per GPU: who may send over its NVLink (comm_replay.c) */
};

void fab_work_init(struct fab_work *w, struct fab_sim *sim, const struct fab_topo *topo);
void fab_work_free(struct fab_work *w);
/* A cookie for fab_sim_post / fab_sim_post_local: fn(obj, val) on arrival. */
uint32_t fab_work_cookie(struct fab_work *w, fab_work_fn fn, void *obj, uint32_t val);
/* Counts one more sender over GPU gpu's NVLink (before the run). */
void fab_work_nvl_use(struct fab_work *w, uint32_t gpu);
/* fn(obj, val) at simulated time at_ps. */
void fab_work_timer(struct fab_work *w, fab_time_ps at_ps, fab_work_fn fn, void *obj, uint32_t val);

#endif
