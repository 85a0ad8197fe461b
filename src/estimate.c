/*
 * estimate.c - what a run will cost, before it runs (`--estimate`).
 *
 * The flow engine runs the scenario: that is its own figure (events, CPU,
 * memory), and its books say how many data frames cross how many links,
 * whatever the workload (flows, collectives, jobs).  The packet engine is
 * built, not run: its memory is measured, and its events follow from the
 * frames: a frame crossing a link is two events (its serialisation ends,
 * it arrives), and every data frame draws an acknowledgement back over as
 * many links (one per fabric.nic.ack_every frames; TCP acknowledges every
 * second segment).  Its CPU time is those events at the cost per event
 * measured on fat-trees of this size (doc/model.md: the cost grows with
 * the ports, whose state outgrows the caches).  What it leaves out:
 * retransmissions, PFC frames, congestion notifications and timers, which
 * a lossy or congested run adds.
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "run.h"
#include "sim/transports.h"

/* resident bytes now, with what free() holds handed back first */
static uint64_t resident(void)
{
	malloc_trim(0);
	uint64_t mapped, rss;
	fab_mem_self(&mapped, &rss);
	return rss;
}

/* the most resident bytes so far */
static uint64_t peak_resident(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_maxrss * 1024;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* The packet engine's CPU per event on a 2 MiB permutation over fat-trees
 * (bench/fattree.sh, doc/model.md): 0.13 us up to 6,144 ports (k = 16),
 * growing as the ports^0.7 beyond (0.28 us at 20,736, 0.6 at 49,152). */
static double us_per_event(uint32_t ports)
{
	return 0.13 * pow(FAB_MAX(1.0, (double)ports / 6144), 0.7);
}

/* the frames the flow engine booked, and the acknowledgements they draw */
static void frames_of(const struct fab_run *r, struct fab_estimate *e)
{
	const struct fab_port_stats *st = fab_sim_port_stats(r->sim);
	double data = 0;
	for (uint32_t i = 0; i < r->topo->nports; i++)
		data += (double)st[i].tx_data_pkts;
	const struct fab_fabric_params *fp = fab_sim_fabric(r->sim);
	double per_ack = fp->transport == FAB_TRANSPORT_TCP ? 2 : fp->nic.ack_every ? fp->nic.ack_every : 1;
	e->data_frame_links = data;
	e->ack_frame_links = data / per_ack;
}

/* the packet engine's frames in flight: no more than the switches' buffers
 * hold and the links carry, nor than the run sends */
static uint64_t frames_bound(const struct fab_run *r, double data_frames)
{
	const struct fab_fabric_params *fp = fab_sim_fabric(r->sim);
	double frame = fp->mtu + 64.0, held = (double)r->topo->nswitches * (double)fp->buffer_bytes / frame;
	held += r->topo->nports * 4.0;                      /* on the wires, a few frames a link */
	return (uint64_t)(FAB_MIN(held, data_frames) * 64); /* a frame in flight: one cache line */
}

static int flow_side(const struct fab_config *flow, bool coll, struct fab_estimate *e, struct fab_err *err)
{
	uint64_t before = resident(), built = 0;
	double t0 = cpu_s();
	struct fab_coll_run *cr = NULL;
	struct fab_run *r = NULL;
	int rc = 0;
	if (coll) {
		cr = fab_coll_run_new(flow, false, err);
		built = resident();
		rc = !cr || fab_coll_run_exec(cr, NULL, NULL, err);
		r = cr ? cr->run : NULL;
	} else {
		r = fab_run_new(flow, err);
		built = resident();
		rc = !r || fab_run_exec(r, NULL, NULL);
		if (r && rc && !err->msg[0])
			fab_err_set(err, FAB_EINTERNAL, "the flow engine's run failed");
	}
	if (!rc) {
		e->flow_cpu_s = cpu_s() - t0;
		e->flow_events = fab_sim_totals(r->sim)->events;
		e->flow_end_ps = fab_sim_totals(r->sim)->end_ps;
		/* the run's peak (the process was smaller before), and what the
		 * workload took above the model built (schedules, messages): the
		 * packet engine's run takes that too */
		uint64_t peak = FAB_MAX(peak_resident(), resident());
		built = built > before ? built - before : 0;
		e->flow_mem_bytes = FAB_MAX(peak > before ? peak - before : 0, built);
		e->work_bytes = e->flow_mem_bytes - built;
		frames_of(r, e);
		if (cr) {
			/* rows whose iterations repeat stop early on the flow
			 * engine; the packet engine's rarely repeat to 0.01%:
			 * count every iteration, bytes for bytes */
			double all = 0, ran = 0, per = flow->coll.warmup + flow->coll.iters;
			for (uint32_t i = 0; i < cr->sweep.nrows; i++) {
				all += (double)cr->sweep.rows[i].bytes * per;
				ran += (double)cr->sweep.rows[i].bytes * cr->sweep.rows[i].iters_run;
			}
			double k = ran > 0 ? all / ran : 1;
			e->data_frame_links *= k;
			e->ack_frame_links *= k;
		}
		e->pkt_frames_bytes = frames_bound(r, (double)fab_sim_totals(r->sim)->data_pkts);
	}
	if (cr)
		fab_coll_run_free(cr);
	else
		fab_run_free(r);
	return rc ? (err->code ? err->code : FAB_EINTERNAL) : 0;
}

/* A slice of the packet engine's run, from the share of the flow engine's
 * simulated time that should hold PILOT_EVENTS of its events, doubled
 * while it holds too few (a training step starts computing): its cost per
 * event on this machine, this fabric and this workload.  (A sweep's rows
 * are not sliced: a collective is costed as the fat-trees are.) */
#define PILOT_EVENTS 2e6
static void pilot(struct fab_run *r, struct fab_estimate *e)
{
	if (!e->flow_end_ps || e->pkt_events <= 0)
		return;
	double f = FAB_MIN(1.0, PILOT_EVENTS / e->pkt_events);
	fab_time_ps end = FAB_MAX((fab_time_ps)(f * (double)e->flow_end_ps), (fab_time_ps)1);
	fab_time_ps stop = r->config->run.end_ps ? r->config->run.end_ps : FAB_TIME_NEVER;
	for (uint32_t i = 0; i < r->njobs; i++)
		fab_job_start(&r->jobs[i]);
	double t0 = cpu_s();
	uint64_t events = 0;
	for (;;) {
		if (fab_sim_run(r->sim, FAB_MIN(end, stop)))
			return;
		events = fab_sim_totals(r->sim)->events;
		if (events >= PILOT_EVENTS / 2 || end >= stop || !fab_sim_busy(r->sim))
			break;
		end *= 2;
	}
	if (events < PILOT_EVENTS / 20) /* too few to time */
		return;
	e->pilot_events = events;
	e->pkt_us_per_event = (cpu_s() - t0) * 1e6 / (double)events;
}

static int packet_side(const struct fab_config *packet, bool coll, struct fab_estimate *e, struct fab_err *err)
{
	uint64_t before = resident();
	double t0 = cpu_s();
	struct fab_coll_run *cr = NULL;
	struct fab_run *r = NULL;
	if (coll) {
		cr = fab_coll_run_new(packet, false, err);
		r = cr ? cr->run : NULL;
	} else {
		r = fab_run_new(packet, err);
	}
	if (!r)
		return err->code ? err->code : FAB_EINTERNAL;
	uint64_t now = resident();
	e->pkt_build_s = cpu_s() - t0;
	e->pkt_build_bytes = now > before ? now - before : 0;
	e->ports = r->topo->nports;
	if (!coll)
		pilot(r, e);
	if (cr)
		fab_coll_run_free(cr);
	else
		fab_run_free(r);
	return 0;
}

int fab_estimate(const struct fab_config *packet, const struct fab_config *flow, bool coll, struct fab_estimate *e,
		 struct fab_err *err)
{
	memset(e, 0, sizeof *e);
	e->coll = coll;
	/* the flow engine first: the process's peak is then its run's */
	int rc = flow_side(flow, coll, e, err);
	if (rc)
		return rc;
	e->pkt_events = 2 * (e->data_frame_links + e->ack_frame_links);
	if ((rc = packet_side(packet, coll, e, err)))
		return rc;
	if (!e->pilot_events)
		e->pkt_us_per_event = us_per_event(e->ports);
	e->pkt_cpu_s = e->pkt_build_s + e->pkt_events * e->pkt_us_per_event / 1e6;
	return 0;
}

static void human_s(char *buf, size_t len, double s)
{
	if (s < 120)
		snprintf(buf, len, "%.3g s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.3g min", s / 60);
	else if (s < 3 * 86400)
		snprintf(buf, len, "%.3g h", s / 3600);
	else
		snprintf(buf, len, "%.3g days", s / 86400);
}

int fab_estimate_write(FILE *f, const struct fab_estimate *e)
{
	char pc[32], fc[32];
	human_s(pc, sizeof pc, e->pkt_cpu_s);
	human_s(fc, sizeof fc, e->flow_cpu_s);
	double mib = 1 << 20;
	fprintf(f, "estimate (%s): the flow engine ran it; the packet engine was built, not run\n",
		e->coll ? "every size of the sweep" : "the whole run");
	fprintf(f, "  %-26s %-24s %s\n", "", "packet engine", "flow engine");
	fprintf(f, "  %-26s %-24.3g %llu\n", "events", e->pkt_events, (unsigned long long)e->flow_events);
	fprintf(f, "  %-26s about %-18s %s\n", "CPU", pc, fc);
	char pm[48];
	snprintf(pm, sizeof pm, "%.0f + up to %.0f MiB", (double)(e->pkt_build_bytes + e->work_bytes) / mib,
		 (double)e->pkt_frames_bytes / mib);
	fprintf(f, "  %-26s %-24s %.0f MiB\n", "memory", pm, (double)e->flow_mem_bytes / mib);
	fprintf(f, "  data frames x links       %.4g (and %.4g of acknowledgements)\n", e->data_frame_links,
		e->ack_frame_links);
	if (e->pilot_events)
		fprintf(f,
			"  packet engine: %.3f us an event, timed on this machine over the run's first %llu events\n",
			e->pkt_us_per_event, (unsigned long long)e->pilot_events);
	else
		fprintf(f, "  packet engine: %.3f us an event, fat-trees' of %u ports on a 2-core machine\n",
			e->pkt_us_per_event, e->ports);
	fprintf(f,
		"  (memory: the model built and the workload's state, then its frames in flight at most;\n"
		"  events and CPU leave out"
		" retransmissions, PFC frames, congestion notifications and timers)\n");
	return ferror(f) ? -1 : 0;
}
