/*
 * queue.h - the flow engine's queue models (flow.queues), behind one table.
 *
 * The engine (flow.c, lines.c, sample.c) keeps the queue pairs, their messages, the
 * transfer at each one's head, its NIC's round robin, the completions and
 * the books; a queue model decides the rates those transfers get and what
 * their bytes meet on the way: fair shares (fair.c: max-min over the
 * ports, no queues), fluid FIFO queues (fifo.c and the fifo_*.c beside it)
 * and those queues with DCQCN at the sources and fluid PFC between hops
 * (fifo_dcqcn.c).  Each is one line in models.c, whose order is
 * flow.queues' choices'; fl_init (flow.c) looks the model up once, by
 * flow.queues; the engine calls through fl->ops from then on.
 *
 * A hook marked optional may be NULL: the engine then does what the
 * comment says.  The hooks of events, timers and refreshes run only when
 * the model has scheduled one (fair shares schedule none).
 */
#ifndef FAB_FLOW_QUEUE_H
#define FAB_FLOW_QUEUE_H

#include "../base/base.h"

struct fab_ev;
struct fl_msg;
struct fl_qp;
struct flsim;
struct sim_flow;

struct fl_queue_ops {
	const char *name; /* flow.queues' value */
	const char *doc;  /* its line in that key's meaning */
	/* each queue pair's places in its ports' lists (fl_qp.pos) come with
	 * its path (walk); false: the model allocates them (fifo: with its
	 * rates, when the queue pair first has a transfer) */
	bool pos_with_path;
	/* optional: the model's state, after the engine's (fl_init) */
	void (*init)(struct flsim *s);
	/* optional: what init took */
	void (*free)(struct flsim *s);
	/* optional: the ports' payload rates (fl_port.payload_per_ps) were set
	 * again (the server's PCIe cap) */
	void (*caps)(struct flsim *s);
	/* an idle queue pair's head message becomes its transfer: it joins
	 * its ports (at least its NIC's) and is due a rate */
	void (*start)(struct flsim *s, uint32_t id, struct fl_qp *q);
	/* its last message's last byte has left (q->active is false): it
	 * leaves its ports, its rate goes to 0 */
	void (*stop)(struct flsim *s, uint32_t id, struct fl_qp *q);
	/* optional: a message of `bytes` (> 0) posted to an idle queue pair
	 * with nothing queued; true if the model took it (fifo: a message of a
	 * packet at most rides its token: an impulse) and the engine keeps
	 * nothing of it */
	bool (*impulse)(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
	/* optional: message m's last byte has left its NIC (booked); true if
	 * the model carries it to the receiver (fifo: a token through the
	 * queues); false or NULL: it is delivered after the path's latencies */
	bool (*sent)(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
	/* the ports in fl->dirty (fl_mark_dirty) have their transfers' rates
	 * set again; the list is emptied */
	void (*rates)(struct flsim *s);
	/* the ports in fl->touch are refreshed, at the end of an instant */
	void (*refresh)(struct flsim *s);
	/* an event of the model's own (the delay lines' or the event queue's:
	 * enum fl_ev_type); optional: none */
	void (*event)(struct flsim *s, const struct fab_ev *ev);
	/* timer i of fl->timers is due */
	void (*timer)(struct flsim *s, uint32_t i);
	/* a degraded link: the port's payload rate is r (bytes per ps) from
	 * now */
	void (*port_rate)(struct flsim *s, uint32_t port, double r);
	/* optional: flow f has finished (its last ACK is back) */
	void (*flow_done)(struct flsim *s, const struct sim_flow *f);
	/* optional: the time series' samples are due: brings fl->ser's tx up
	 * to now where port_sent reads it */
	void (*sample)(struct flsim *s);
	/* the payload bytes switch port `port` has sent, and *queue the bytes
	 * it holds now (payload; fair shares: 0) */
	double (*port_sent)(const struct flsim *s, uint32_t port, double *queue);
	/* optional: queue pair q's rate as the time series report it, bits per
	 * second; NULL: the rate the model gives it (q->rate) */
	double (*qp_rate_bps)(const struct flsim *s, const struct fl_qp *q);
	/* optional: a switch port's PFC headroom and its XOFF on an empty
	 * switch (NULL: 0 and 0, no pauses) */
	void (*port_pfc)(const struct flsim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff);
	/* optional: a run stops (fl_run returns) */
	void (*rest)(struct flsim *s);
	/* optional: the fabric has rested, nothing in flight (fab_sim_rest):
	 * what the model keeps of the past starts again */
	void (*restart)(struct flsim *s);
};

extern const struct fl_queue_ops fl_queues_fair;  /* fair.c */
extern const struct fl_queue_ops fl_queues_fifo;  /* fifo.c */
extern const struct fl_queue_ops fl_queues_dcqcn; /* fifo_dcqcn.c */
/* the model flow.queues' value i names (models.c) */
const struct fl_queue_ops *fl_queue_model(int i);

#endif
