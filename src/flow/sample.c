/*
 * sample.c - the flow engine's time series (fabric.series_interval): the
 * rows the packet engine samples (counters.c), from the fluid.  The run
 * loop (flow.c) takes them outside the event queue, each once all that
 * happens at its instant has, so that sampling changes nothing.  What a
 * switch port has sent and holds is its queue model's (queue.h:
 * port_sent; fair shares have no queues: what a source sends crosses its
 * whole path at once).
 */
#include <math.h>

#include "flow_int.h"
#include "queue.h"

/* the payload bytes queue pair q has sent: its whole messages, and of
 * the one in progress what has left */
double fl_qp_sent(const struct flsim *s, const struct fl_qp *q)
{
	double sent = q->sent;
	if (q->active && q->qh < q->qn)
		sent += (double)q->q[q->qh].bytes - FAB_MAX(q->rem - q->rate * (double)(s->c.now_ps - q->t_last), 0.0);
	return sent;
}

/* fabric.series_interval: the rows the packet engine samples (counters.c),
 * from the fluid.  A switch port's queue (payload bytes; fair shares keep
 * none) and the data it sent in the interval as frames and on the wire
 * (its payload with each packet's headers; ACKs are not counted), and the
 * PAUSE episodes that began at it; an unfinished flow's payload that left
 * its NICs in the interval and its queue pairs' mean rate: DCQCN's with
 * flow.queues dcqcn (the line rate before it first sends, as the packet
 * engine's), else the share the engine gives them. */
void fl_sample(struct flsim *s)
{
	struct fl_state *fl = s->fl;
	const struct fab_topo *topo = s->c.topo;
	if (!fl->ser)
		fl->ser = fab_xcalloc(topo->nports, sizeof *fl->ser);
	const struct fl_queue_ops *ops = fl->ops;
	if (ops->sample)
		ops->sample(s);
	const struct fab_wire *w = fab_sim_wire(&s->c);
	double mtu = s->c.fp.mtu, frame = (mtu + w->data_overhead) / mtu,
	       wire = (mtu + w->data_overhead + s->c.wire.preamble_ifg) / mtu;
	for (uint32_t i = 0; i < topo->nports; i++) {
		if (!s->ports[i].is_switch)
			continue;
		struct fl_ser *r = &fl->ser[i];
		double queue;
		r->tx = ops->port_sent(s, i, &queue);
		double d = FAB_MAX(r->tx - r->mark, 0.0);
		r->mark = r->tx;
		uint64_t ptx, prx;
		sim_port_pauses(&s->ports[i].st, &ptx, &prx);
		*sim_series_row(&s->c) = (struct fab_series_row){
			.t_ps = s->c.now_ps,
			.port = i,
			.queue_bytes = (uint64_t)llround(queue),
			.tx_bytes = (uint64_t)llround(d * frame),
			.tx_wire_bytes = (uint64_t)llround(d * wire),
			.pause_tx = (uint32_t)(ptx - r->pause_tx),
			.pause_rx = (uint32_t)(prx - r->pause_rx),
		};
		r->pause_tx = ptx;
		r->pause_rx = prx;
	}
	for (uint32_t i = 0; i < s->c.nflows; i++) {
		struct sim_flow *f = sim_flow_at(&s->c, i);
		if (f->spec.start_ps > s->c.now_ps || f->st.finish_ps != FAB_TIME_NEVER)
			continue;
		double sent = (double)f->st.delivered_bytes, rate = 0;
		for (uint32_t k = 0; k < f->nqps && f->first_qp + k < fl->cap_qps; k++) {
			const struct fl_qp *q = &fl->qps[f->first_qp + k];
			if (q->active && q->qh < q->qn && q->q[q->qh].flow == i)
				sent += fl_qp_sent(s, q) - q->sent;
			rate += ops->qp_rate_bps ? ops->qp_rate_bps(s, q) : q->rate * 8e12;
		}
		uint64_t now = (uint64_t)llround(sent);
		*sim_flow_series_row(&s->c) = (struct fab_flow_series_row){
			s->c.now_ps, i, now > f->series_mark ? now - f->series_mark : 0, f->nqps ? rate / f->nqps : 0};
		f->series_mark = FAB_MAX(now, f->series_mark);
	}
	sim_series_instant(&s->c);
}
