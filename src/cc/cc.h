/*
 * cc.h - congestion control: what happens to a connection in, how fast it
 * may send out; and the registry of every model.
 *
 * A congestion control is a pure state machine, with no simulator inside,
 * so that it is unit-tested alone and any engine can run it.  A transport
 * keeps one state per queue pair (at most FAB_CC_STATE_MAX bytes, inside its
 * own queue-pair struct) and feeds it events: data sent, acknowledged,
 * congestion notified (RoCE's CNP, TCP's ECN echo), loss, its timer, and,
 * for a model that asks (wants), a sample per acknowledgement: its round
 * trip, the bytes it acknowledged and how many of them were marked, and the
 * in-band telemetry the switches on the path stamped.  It answers with a
 * rate (the pacing the NIC enforces) and a window (the bytes in flight
 * allowed; UINT64_MAX when it is purely rate-based).  Where it needs a
 * timer it says when (a delay from now; 0 for none), and the transport owns
 * the event.
 *
 * Each model is one ops table (its name, the transports it runs on, what
 * feedback it wants, its parameter family: the struct, its scenario keys
 * with their defaults and its presets) and one line in registry.c.  Models
 * that share parameters share a family (DCQCN as the paper has it and as
 * NIC firmware runs it; TCP's NewReno, CUBIC and DCTCP).  The parameters of
 * every family live in one block of the fabric's parameters (struct
 * fab_cc_choice), each family at the offset the registry gives it, so the
 * engines and the scenario layer know no model by name.
 */
#ifndef FAB_CC_H
#define FAB_CC_H

#include "../base/base.h"
#include "../base/keydef.h"

#define FAB_CC_STATE_MAX 256
/* the parameters of every family together (registry.c checks) */
#define FAB_CC_PARAMS_BYTES 512

/* How the receiver tells the sender of CE-marked packets. */
enum fab_cc_feedback {
	FAB_CC_FEEDBACK_NONE, /* it does not */
	FAB_CC_FEEDBACK_CNP,  /* congestion notification packets, paced per queue pair (RoCE CNPs) */
	FAB_CC_FEEDBACK_ECHO, /* an echo on the ACK of each marked packet (TCP's ECE, firmware DCQCN) */
};

/* Which transports a model runs on: bit (1 << enum fab_transport_kind). */
enum { FAB_CC_ON_ROCE = 1, FAB_CC_ON_TCP = 2, FAB_CC_ON_IB = 4 };

/* What a model wants beyond the events every model gets. */
enum {
	FAB_CC_WANTS_SAMPLE = 1, /* on_sample per acknowledgement: RTT, bytes acknowledged and marked */
	FAB_CC_WANTS_INT = 2,    /* and the switches' in-band telemetry on its data */
	FAB_CC_WANTS_ECT = 4,    /* its data ECN-capable whatever the transport's setting (DCTCP) */
	FAB_CC_WANTS_STEP = 8,   /* switches that mark at one threshold, kmin = kmax, unless the scenario sets them */
};

/* What a queue pair's model is told when it starts, beyond its
 * parameters: the path it runs on. */
struct fab_cc_env {
	double line_bps;         /* the most the sender can send */
	uint32_t mss;            /* payload bytes of a full packet */
	uint32_t frame_bytes;    /* a full packet's frame on the wire */
	uint32_t init_cwnd;      /* TCP: the initial window in segments (fabric.tcp.init_cwnd) */
	fab_time_ps base_rtt_ps; /* a full packet there and its ACK back through empty queues */
	uint32_t hops;           /* the switches on the way there */
};

/* One switch egress's in-band telemetry (HPCC): when the packet left, the
 * bytes the port had sent by then, its queue, and its rate. */
struct fab_int_hop {
	fab_time_ps ts_ps;
	uint64_t tx_bytes;
	uint32_t qlen_bytes;
	fab_rate_bps rate_bps;
};
#define FAB_CC_INT_HOPS 5

/* What one acknowledgement tells a model that wants samples. */
struct fab_cc_sample {
	fab_time_ps now_ps;
	fab_time_ps rtt_ps;     /* from the acknowledged packet's send to now; 0 when resent (Karn) */
	fab_bytes acked_bytes;  /* newly acknowledged */
	fab_bytes marked_bytes; /* of them, echoed as CE-marked */
	uint64_t acked_seq;     /* bytes acknowledged so far, all told */
	uint64_t sent_seq;      /* bytes sent so far (the highest) */
	uint32_t nhops;         /* in-band telemetry of the acknowledged packet, one a switch hop */
	const struct fab_int_hop *hops;
};

struct fab_cc_ops {
	const char *name;  /* fabric.cc's value */
	const char *label; /* in the text summary: "DCQCN" */
	unsigned transports;
	unsigned wants;
	bool flow_model;                       /* the flow engine's flow.queues dcqcn runs it (fluid) */
	const struct fab_param_family *family; /* NULL: no parameters */
	size_t state_size;
	int feedback; /* enum fab_cc_feedback */
	/* params: the family's struct, kept by pointer; line_bps: the most the
	 * sender can send */
	void (*init)(void *st, const void *params, double line_bps);
	/* after init, where a model needs its path (NULL: it does not) */
	void (*attach)(void *st, const struct fab_cc_env *env);
	/* bytes it adds to every data packet and ACK (telemetry; NULL: none) */
	uint32_t (*header_bytes)(const void *params);
	void (*on_sent)(void *st, fab_bytes bytes);
	/* whether on_sent changes nothing in this state (no byte counter
	 * running); NULL: it may */
	bool (*sent_ignored)(const void *st);
	void (*on_ack)(void *st, fab_bytes acked, fab_time_ps now);
	/* wants FAB_CC_WANTS_SAMPLE: per acknowledgement that moves the
	 * window, after on_ack */
	void (*on_sample)(void *st, const struct fab_cc_sample *smp);
	/* returns the delay after which on_timer is due (a new timer replaces
	 * the old), 0 for no change */
	fab_time_ps (*on_congestion)(void *st, fab_time_ps now);
	void (*on_loss)(void *st, fab_time_ps now);
	/* a retransmission timeout (NULL: nothing beyond on_loss's) */
	void (*on_rto)(void *st, fab_time_ps now);
	/* returns the delay to the next expiry, 0 for none */
	fab_time_ps (*on_timer)(void *st, fab_time_ps now);
	double (*rate_bps)(const void *st);
	uint64_t (*window_bytes)(const void *st);
};

/* The transports a choice is kept for (enum fab_transport_kind: sim.h
 * checks the count). */
#define FAB_CC_TRANSPORTS 3

/* The choice and every family's parameters, in the fabric's parameters. */
struct fab_cc_choice {
	int model[FAB_CC_TRANSPORTS]; /* by transport kind: an index in the registry (fab_cc_at) */
	_Alignas(16) unsigned char params[FAB_CC_PARAMS_BYTES];
};

/* the registry (registry.c): models by index and by name */
size_t fab_cc_count(void);
const struct fab_cc_ops *fab_cc_at(size_t i);
const struct fab_cc_ops *fab_cc_find(const char *name);
int fab_cc_index(const struct fab_cc_ops *ops);
/* the distinct families, in the order of the first model that names each */
size_t fab_cc_family_count(void);
const struct fab_param_family *fab_cc_family_at(size_t i);
/* where a family's parameters start in fab_cc_choice.params */
size_t fab_cc_family_offset(const struct fab_param_family *f);

/* the model a queue pair of transport kind t runs */
static inline const struct fab_cc_ops *fab_cc_of(const struct fab_cc_choice *ch, int t)
{
	return fab_cc_at((size_t)ch->model[t]);
}

/* the parameters a model reads (NULL: it has none) */
static inline const void *fab_cc_params(const struct fab_cc_choice *ch, const struct fab_cc_ops *ops)
{
	return ops->family ? ch->params + fab_cc_family_offset(ops->family) : NULL;
}

static inline void *fab_cc_params_rw(struct fab_cc_choice *ch, const struct fab_param_family *f)
{
	return ch->params + fab_cc_family_offset(f);
}

extern const struct fab_cc_ops fab_cc_none;
#endif
