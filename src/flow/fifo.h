/*
 * fifo.h - the fluid FIFO queues' own declarations (flow.queues: fifo and
 * dcqcn), shared by the files that model them: fifo.c and the fifo_*.c
 * beside it.  The engine reaches them only through their queue models'
 * tables (queue.h).
 */
#ifndef FAB_FLOW_FIFO_H
#define FAB_FLOW_FIFO_H

#include "flow_int.h"
#include "queue.h"

/* the hooks of fifo's table (queue.h), which dcqcn's shares */
void fq_init(struct flsim *s);
void fq_free(struct flsim *s);
void fq_caps(struct flsim *s);
void fq_rest(struct flsim *s);
void fq_start(struct flsim *s, uint32_t id, struct fl_qp *q);
void fq_stop(struct flsim *s, uint32_t id, struct fl_qp *q);
bool fq_impulse(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
bool fq_sent(struct flsim *s, uint32_t id, struct fl_qp *q, const struct fl_msg *m);
void fq_nics(struct flsim *s);
void fq_refresh(struct flsim *s);
void fq_event(struct flsim *s, const struct fab_ev *ev);
void fq_timer(struct flsim *s, uint32_t i);
void fq_port_rate(struct flsim *s, uint32_t port, double r);
double fq_port_sent(const struct flsim *s, uint32_t port, double *queue);
void fq_port_pfc(const struct flsim *s, uint32_t port, fab_bytes *headroom, fab_bytes *xoff);

/* the source sends queue pair id at r (bytes per ps) from now */
void fq_source_rate(struct flsim *s, uint32_t id, double r);

#endif
