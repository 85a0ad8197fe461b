/*
 * telemetry.c - what a data packet carries for its congestion control
 * beside its 64 bytes: when it was sent (for the round trip its ACK
 * measures), whether it was a resend (Karn's rule: no sample), and, for a
 * model that wants in-band telemetry (HPCC), each switch egress's record:
 * the time, the bytes the port had sent, its queue after the packet left,
 * its rate.  A record is taken when the packet is made, moves to the ACK
 * that answers it, and is returned when the sender has read it or the
 * packet is dropped (sim_pkt_free).  Records are the run's, numbered, on a
 * free list; a run split over threads or ranks does not carry them
 * (parallel.c runs such a scenario on one thread).
 */
#include "qdisc.h"

uint32_t pkt_tel_new(struct psim *s, bool want_hops)
{
	uint32_t t = s->free_tel;
	if (t) {
		s->free_tel = s->tels[t].next_free;
	} else {
		if (s->ntels + 1 >= s->cap_tels) {
			s->cap_tels = s->cap_tels ? 2 * s->cap_tels : 1024;
			s->tels = fab_xrealloc(s->tels, s->cap_tels, sizeof *s->tels);
		}
		t = ++s->ntels; /* slot 0 stays unused: 0 is "none" */
	}
	struct pkt_tel *r = &s->tels[t];
	r->sent_ps = s->c.now_ps;
	r->nhops = 0;
	r->resent = false;
	r->want_hops = want_hops;
	return t;
}

void pkt_tel_free(struct psim *s, uint32_t t)
{
	s->tels[t].next_free = s->free_tel;
	s->free_tel = t;
}

void pkt_tel_stamp(struct psim *s, const struct sim_port *port, struct pkt *p)
{
	struct pkt_tel *r = &s->tels[p->tel];
	if (p->kind != PKT_DATA || !r->want_hops || r->nhops >= FAB_CC_INT_HOPS)
		return;
	r->hop[r->nhops++] = (struct fab_int_hop){
		.ts_ps = s->c.now_ps,
		.tx_bytes = port->st.tx_bytes,
		.qlen_bytes = (uint32_t)FAB_MIN(port->qbytes_total, UINT32_MAX),
		.rate_bps = port->rate_bps,
	};
}

fab_time_ps pkt_base_rtt(struct psim *s, const struct sim_conn *c, uint32_t data, uint32_t ack, uint32_t *hops)
{
	uint32_t ports[32];
	fab_time_ps t = 0;
	uint32_t n = sim_path(&s->c, c->src_nic, c->dst_nic, c->hash_fwd, ports, 32);
	*hops = n ? n - 1 : 0; /* (links NIC to switch .. switch to NIC) */
	for (uint32_t i = 0; i < n; i++)
		t += s->ports[ports[i]].delay_ps + fab_ser_ps(data, s->ports[ports[i]].rate_bps);
	n = sim_path(&s->c, c->dst_nic, c->src_nic, c->hash_rev, ports, 32);
	for (uint32_t i = 0; i < n; i++)
		t += s->ports[ports[i]].delay_ps + fab_ser_ps(ack, s->ports[ports[i]].rate_bps);
	return t;
}

const struct pkt_qdisc_ops pkt_qdisc_int = {
	.name = "int",
	.doc = "int: in-band telemetry, each egress's time, bytes sent, queue and rate in a departing packet's record",
	.stamp = pkt_tel_stamp,
};
