/*
 * counters.c - what the packet engine counts beyond each frame's own
 * counters: the time series (every switch port's queue depth and what it
 * sent, dropped, marked and paused in each interval; every unfinished
 * flow's delivered bytes and mean rate) and the books closed at the end of
 * the run (queue-depth integrals and paused time up to the last event).
 */
#include "../sim/tp_tcp.h"
#include "llfc.h"
#include "transport.h"

void counters_sample(struct psim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		struct sim_port *port = &s->ports[i];
		if (!port->is_switch)
			continue;
		uint64_t ptx, prx;
		sim_port_pauses(&port->st, &ptx, &prx);
		*sim_series_row(&s->c) = (struct fab_series_row){
			s->c.now_ps,
			i,
			port->qbytes_total,
			port->st.tx_bytes - port->series_tx_mark,
			port->st.tx_wire_bytes - port->series_wire_mark,
			(uint32_t)(port->st.drops - port->series_drop_mark),
			(uint32_t)(port->st.ecn_marks - port->series_ecn_mark),
			(uint32_t)(ptx - port->series_ptx_mark),
			(uint32_t)(prx - port->series_prx_mark),
		};
		port->series_tx_mark = port->st.tx_bytes;
		port->series_wire_mark = port->st.tx_wire_bytes;
		port->series_drop_mark = port->st.drops;
		port->series_ecn_mark = port->st.ecn_marks;
		port->series_ptx_mark = ptx;
		port->series_prx_mark = prx;
	}
	for (uint32_t i = 0; i < s->c.nflows; i++) {
		struct sim_flow *f = sim_flow_at(&s->c, i);
		if (f->spec.start_ps > s->c.now_ps || f->st.finish_ps != FAB_TIME_NEVER)
			continue;
		double rate = 0;
		for (uint32_t k = 0; k < f->nqps; k++)
			rate += qp_transport(pkt_qp(s, f->first_qp + k))->rate_bps(pkt_qp(s, f->first_qp + k));
		*sim_flow_series_row(&s->c) = (struct fab_flow_series_row){
			s->c.now_ps, i, sim_flow_delivered(&s->c, i) - f->series_mark, rate / f->nqps};
		f->series_mark = sim_flow_delivered(&s->c, i);
	}
	sim_series_instant(&s->c);
	/* nothing else will ever happen (a workload stuck on a failed queue
	 * pair): sampling stops too */
	if (fab_eq_len(&s->c.eq))
		fab_eq_push(&s->c.eq, s->c.now_ps + s->c.fp.series_interval_ps, EV_SAMPLE, NULL, 0);
}

void counters_close(struct psim *s)
{
	for (uint32_t i = 0; i < s->c.topo->nports; i++) {
		sim_port_queue_area(s, &s->ports[i]);
		s->llfc->finish(s, &s->ports[i]);
	}
	counters_books(s);
}

void counters_books(struct psim *s)
{
	s->c.tot.events = s->c.eq.popped;
	/* the end: when the last flow finished, or when the run was stopped */
	s->c.tot.end_ps = s->idle_ps != FAB_TIME_NEVER ? s->idle_ps : s->c.now_ps;
	s->c.tot.data_inflight_bytes = s->live_data_payload;
	/* (the host's stack: TCP's, the one transport that counts host packets) */
	const struct fab_tcp_params *tcp = fab_transport_params(&s->c.fp, FAB_TRANSPORT_TCP);
	s->c.tot.host_cpu_ps = (double)s->host_pkts * (double)tcp->cpu_packet_ps +
		(double)s->host_bytes * tcp->cpu_byte_ps;
}
