/*
 * TCP in the packet engine (src/packet/tcp.c, src/cc/tcpcc.c) against its
 * specifications and published behaviour: the framing of RFC 9293 with
 * timestamps, a lone flow at line rate x header efficiency for every
 * congestion control, DCTCP's queue near K with the link kept busy (Alizadeh
 * et al., SIGCOMM 2010), recovery from losses by fast retransmit, NewReno
 * against the square-root law of Mathis et al. (1997), a lossy
 * incast that delivers every byte, CUBIC's window against its cubic
 * function (RFC 8312).  Every run also checks byte conservation.
 */
#include <math.h>

#include "testutil.h"

#include "../../src/cc/tcpcc.h"

#define LINE 400e9
#define TCP_FRAME 70 /* Ethernet 14 + IPv4 20 + TCP 20 + timestamps 12 + FCS 4 */
#define TCP_EFF(mss) ((double)(mss) / ((mss) + TCP_FRAME + 20))

static void test_tcp_framing(void **state)
{
	(void)state;
	const struct fab_wire *w = fab_wire_of(FAB_TRANSPORT_TCP);
	assert_int_equal(w->data_overhead, TCP_FRAME);
	assert_int_equal(w->ack_frame, TCP_FRAME);
	assert_int_equal(w->notify_frame, 0);
	assert_true(w->ack_frame >= 64); /* Ethernet's minimum */
	assert_int_equal(fab_wire_data_bytes(w, 1448), 1448 + 90);
}

/* One 256 MiB flow alone: goodput at line rate x 4096/4186 (391.40 Gbps)
 * within 1% for every congestion control (slow start from 10 segments
 * takes a few round trips of a few microseconds), nothing retransmitted,
 * every segment acknowledged (one ACK each), and the host CPU time the
 * keys give. */
static void test_tcp_lone_flow_line_rate(void **state)
{
	(void)state;
	static const char *ccs[] = {"newreno", "cubic", "dctcp"};
	for (size_t i = 0; i < FAB_ARRAY_LEN(ccs); i++) {
		char cc[64];
		snprintf(cc, sizeof cc, "fabric.tcp.cc=%s", ccs[i]);
		const char *sets[] = {"fabric.transport=tcp", cc};
		struct trun t = trun_yaml_sets(ONE_LEAF(2) "traffic: {flows: [{src: 0, dst: 1, bytes: 256MiB}]}\n",
					       sets, 2);
		const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
		const struct fab_sim_totals *tot = fab_sim_totals(t.run->sim);
		double bytes = 256.0 * (1 << 20), goodput = bytes * 8 / ((double)st[0].finish_ps / 1e12);
		double want = LINE * TCP_EFF(4096);
		print_message("%s: goodput %.3f Gbps, line x efficiency %.3f Gbps, host CPU %.4f s\n", ccs[i],
			      goodput / 1e9, want / 1e9, tot->host_cpu_ps / 1e12);
		assert_true(rel_err(goodput, want) < 0.01);
		assert_int_equal(tot->retx_pkts, 0);
		assert_int_equal(tot->timeouts, 0);
		/* CPU: 65536 segments and 65536 ACKs, each 800 ns at both ends; 100 ps per
		 * payload byte at both ends */
		double segs = bytes / 4096, cpu = 4 * segs * 800e3 + 2 * bytes * 100;
		assert_true(rel_err(tot->host_cpu_ps, cpu) < 1e-6);
		trun_free(&t);
	}
}

/* The flow engine takes TCP's framing: a lone flow at line x 4096/4186
 * within 0.2% (the rest is the flow's latency) */
static void test_tcp_flow_engine(void **state)
{
	(void)state;
	const char *sets[] = {"fabric.transport=tcp", "engine=flow"};
	struct trun t = trun_yaml_sets(ONE_LEAF(2) "traffic: {flows: [{src: 0, dst: 1, bytes: 256MiB}]}\n", sets, 2);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	double goodput = 256.0 * (1 << 20) * 8 / ((double)st[0].finish_ps / 1e12), want = LINE * TCP_EFF(4096);
	print_message("flow engine, TCP: %.3f Gbps, line x efficiency %.3f Gbps\n", goodput / 1e9, want / 1e9);
	assert_true(rel_err(goodput, want) < 0.002);
	trun_free(&t);
}

/* DCTCP, N = 8 long flows into one port, marking at K = 100 KiB: after slow
 * start the queue stays near K, at most about K + N segments (the paper's
 * analysis: the windows grow by one segment a round trip each), and above
 * K - N segments' worth of drain; the port stays busy, since K far exceeds
 * C x RTT / 7 (about 10 KB here); nothing is dropped. */
static void test_tcp_dctcp_queue_near_k(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF(9) "fabric: {transport: tcp, tcp: {cc: dctcp}, series_interval: 2us}\n"
				       "traffic:\n  flows:\n"
				       "    - {src: 1, dst: 0, bytes: 48MiB}\n    - {src: 2, dst: 0, bytes: 48MiB}\n"
				       "    - {src: 3, dst: 0, bytes: 48MiB}\n    - {src: 4, dst: 0, bytes: 48MiB}\n"
				       "    - {src: 5, dst: 0, bytes: 48MiB}\n    - {src: 6, dst: 0, bytes: 48MiB}\n"
				       "    - {src: 7, dst: 0, bytes: 48MiB}\n    - {src: 8, dst: 0, bytes: 48MiB}\n";
	struct trun t = trun_yaml(yaml);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	fab_time_ps first_done = FAB_TIME_NEVER;
	for (int i = 0; i < 8; i++)
		first_done = FAB_MIN(first_done, st[i].finish_ps);
	size_t n;
	const struct fab_series_row *rows = fab_sim_series(t.run->sim, &n);
	uint32_t bott = port_between(t.run->topo, "leaf0", "server0.nic0");
	double wire = 0, qmax = 0, qsum = 0, from = 1e9, to = 0; /* after the first millisecond */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].port == bott && rows[i].t_ps > FAB_PS_PER_MS && rows[i].t_ps <= first_done) {
			wire += (double)rows[i].tx_wire_bytes;
			qmax = fmax(qmax, (double)rows[i].queue_bytes);
			qsum += (double)rows[i].queue_bytes;
			from = fmin(from, (double)rows[i].t_ps);
			to = fmax(to, (double)rows[i].t_ps);
			k++;
		}
	double util = wire * 8 / ((to - from + 2e6) / 1e12) / LINE, K = 100 * 1024, seg = 4096 + TCP_FRAME;
	struct fab_summary sm;
	fab_summary_compute(t.run->sim, &sm);
	print_message("DCTCP x8: queue max %.0f B, mean %.0f B (K %.0f, K + 8 segments %.0f), port %.2f%% busy, "
		      "%llu marks\n",
		      qmax, qsum / (double)k, K, K + 8 * seg, util * 100, (unsigned long long)sm.ecn_marks);
	assert_true(k > 100);
	assert_true(qmax <= K + 8 * seg * 1.25);
	assert_true(qsum / (double)k > K - 8 * seg && qsum / (double)k < K + 8 * seg);
	assert_true(util > 0.97);
	assert_int_equal(sm.drops, 0);
	assert_int_equal(sm.flows_done, 8);
	trun_free(&t);
}

/* Every 100th segment lost on the sender's link: each loss is repaired by a
 * fast retransmit (three duplicate ACKs; the receiver holds what came
 * after), not by a timeout; every byte arrives once. */
static void test_tcp_fast_retransmit(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF(2) "fabric: {transport: tcp, tcp: {cc: newreno}}\n"
				       "traffic: {flows: [{src: 0, dst: 1, bytes: 16MiB}]}\n"
				       "faults: [{kind: lossy, node: server0.nic0, peer: leaf0, drop_every: 100}]\n";
	struct trun t = trun_yaml(yaml);
	const struct fab_sim_totals *tot = fab_sim_totals(t.run->sim);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	print_message("%llu lost, %llu retransmitted, %llu timeouts\n", (unsigned long long)tot->wire_losses,
		      (unsigned long long)tot->retx_pkts, (unsigned long long)tot->timeouts);
	assert_int_equal(st[0].delivered_bytes, 16 << 20);
	assert_true(tot->wire_losses >= 40);
	assert_int_equal(tot->timeouts, 0);
	assert_true(tot->retx_pkts >= tot->wire_losses && tot->retx_pkts <= 2 * tot->wire_losses);
	trun_free(&t);
}

/* NewReno under random losses (probability p on the sender's link, ACKs
 * spared) on a 400 us round trip: throughput against Mathis et al.'s
 * square-root law, MSS / RTT x C / sqrt(p) with C = sqrt(3/2) (periodic
 * losses; random ones give a slightly larger C).  About 60 losses a run,
 * the throughput measured over the second half (slow start and the first
 * cuts from its large window are behind): each within [0.85, 1.45] x the
 * law, and the slope of log throughput against log p within 0.1 of -1/2. */
static void test_tcp_mathis(void **state)
{
	(void)state;
	static const double ps[] = {2e-3, 5e-4, 1e-4};
	double lx[3], ly[3];
	for (int i = 0; i < 3; i++) {
		char drop[64], bytes[64];
		snprintf(drop, sizeof drop, "faults.0.drop=%g", ps[i]);
		snprintf(bytes, sizeof bytes, "traffic.flows.0.bytes=%.0f", 60 / ps[i] * 4096);
		const char *sets[] = {drop, bytes};
		struct trun t = trun_yaml_sets(
			"topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1, spines: 1, "
			"links_per_spine: 1, host_delay: 100us}\n"
			"fabric: {transport: tcp, tcp: {cc: newreno, min_rto: 2ms}, series_interval: 5ms}\n"
			"traffic: {flows: [{src: 0, dst: 1, bytes: 1MiB}]}\n"
			"faults: [{kind: lossy, node: server0.nic0, peer: leaf0, drop: 0.001}]\n",
			sets, 2);
		const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
		size_t n;
		const struct fab_flow_series_row *fs = fab_sim_flow_series(t.run->sim, &n);
		double half = (double)st[0].finish_ps / 2, got = 0, from = 1e18, to = 0;
		for (size_t k = 0; k < n; k++)
			if ((double)fs[k].t_ps > half) {
				got += (double)fs[k].delivered_bytes;
				from = fmin(from, (double)fs[k].t_ps);
				to = fmax(to, (double)fs[k].t_ps);
			}
		double rtt = 4 * 100e-6 + 2 * (4096 + TCP_FRAME + 20) * 8 / LINE;
		double bw = got * 8 / ((to - from + 5e9) / 1e12);
		double law = 4096 * 8 / rtt * sqrt(1.5) / sqrt(ps[i]);
		print_message("p %g: %.3f Gbps, the law %.3f Gbps (x %.3f), %llu retransmitted, %llu timeouts\n", ps[i],
			      bw / 1e9, law / 1e9, bw / law, (unsigned long long)st[0].retx_pkts,
			      (unsigned long long)st[0].timeouts);
		assert_true(bw / law > 0.85 && bw / law < 1.45);
		lx[i] = log(ps[i]);
		ly[i] = log(bw);
		trun_free(&t);
	}
	double mx = (lx[0] + lx[1] + lx[2]) / 3, my = (ly[0] + ly[1] + ly[2]) / 3, sxy = 0, sxx = 0;
	for (int i = 0; i < 3; i++) {
		sxy += (lx[i] - mx) * (ly[i] - my);
		sxx += (lx[i] - mx) * (lx[i] - mx);
	}
	print_message("slope of log throughput against log p: %.3f\n", sxy / sxx);
	assert_true(fabs(sxy / sxx + 0.5) < 0.1);
}

/* 16-to-1 incast of 4 MiB each through a 2 MiB buffer with no PFC: TCP
 * (CUBIC) loses segments, recovers, and delivers every byte; the same with
 * DCTCP marks early and drops far less. */
static void test_tcp_lossy_incast(void **state)
{
	(void)state;
	char yaml[2048];
	size_t o = (size_t)snprintf(yaml, sizeof yaml,
				    ONE_LEAF(17) "fabric: {transport: tcp, buffer: 2MiB, tcp: {min_rto: 1ms}}\n"
						 "traffic:\n  flows:\n");
	for (int i = 1; i <= 16; i++)
		o += (size_t)snprintf(yaml + o, sizeof yaml - o, "    - {src: %d, dst: 0, bytes: 4MiB}\n", i);
	uint64_t drops[2];
	static const char *ccs[] = {"fabric.tcp.cc=cubic", "fabric.tcp.cc=dctcp"};
	for (int c = 0; c < 2; c++) {
		const char *sets[] = {ccs[c]};
		struct trun t = trun_yaml_sets(yaml, sets, 1);
		struct fab_summary sm;
		fab_summary_compute(t.run->sim, &sm);
		const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
		for (int i = 0; i < 16; i++)
			assert_int_equal(st[i].delivered_bytes, 4 << 20);
		assert_int_equal(sm.flows_done, 16);
		assert_int_equal(sm.pause_frames, 0);
		drops[c] = sm.drops;
		print_message("%s: %llu drops, %llu retransmitted, %llu timeouts, FCT max %.3f ms\n", ccs[c],
			      (unsigned long long)sm.drops, (unsigned long long)sm.retx_pkts,
			      (unsigned long long)sm.timeouts, (double)sm.fct_max / 1e9);
		trun_free(&t);
	}
	assert_true(drops[0] > 0);
	assert_true(drops[1] < drops[0]);
}

/* Two tenants on one RoCE fabric: 8 RoCE flows (priority 3, lossless) and 8
 * TCP flows (priority 1, lossy) into one NIC through a 4 MiB buffer.  The
 * RoCE priority drops nothing; the TCP one drops and recovers; every byte
 * of both arrives; the host CPU is TCP's bytes' alone; a training job over
 * TCP on the same fabric runs and costs CPU. */
static void test_tcp_mixed_transports(void **state)
{
	(void)state;
	char yaml[4096];
	size_t o = (size_t)snprintf(yaml, sizeof yaml,
				    ONE_LEAF(17) "fabric: {buffer: 4MiB, dcqcn: {enabled: false}}\n"
						 "traffic:\n  flows:\n");
	for (int i = 1; i <= 16; i++)
		o += (size_t)snprintf(yaml + o, sizeof yaml - o, "    - {src: %d, dst: 0, bytes: 4MiB%s}\n", i,
				      i > 8 ? ", transport: tcp, priority: 1" : "");
	struct trun t = trun_yaml(yaml);
	const struct fab_flow_stats *st = fab_sim_flow_stats(t.run->sim);
	const struct fab_sim_totals *tot = fab_sim_totals(t.run->sim);
	const struct fab_port_stats *ps = fab_sim_port_stats(t.run->sim);
	uint32_t bott = port_between(t.run->topo, "leaf0", "server0.nic0");
	uint64_t retx_roce = 0, retx_tcp = 0;
	for (int i = 0; i < 16; i++) {
		assert_int_equal(st[i].delivered_bytes, 4 << 20);
		assert_true(st[i].finish_ps != FAB_TIME_NEVER);
		*(i < 8 ? &retx_roce : &retx_tcp) += st[i].retx_pkts;
	}
	print_message("drops %llu at the bottleneck, retransmitted RoCE %llu, TCP %llu; host CPU %.4f s\n",
		      (unsigned long long)ps[bott].drops, (unsigned long long)retx_roce, (unsigned long long)retx_tcp,
		      tot->host_cpu_ps / 1e12);
	assert_int_equal(retx_roce, 0);
	assert_true(ps[bott].drops > 0 && retx_tcp > 0);
	/* TCP's 8 x 4 MiB only: segments and ACKs at 800 ns each end, bytes at 100 ps */
	double segs = 8.0 * 1024, cpu_min = 4 * segs * 800e3 + 2 * 8 * 4.0 * (1 << 20) * 100;
	assert_true(tot->host_cpu_ps >= cpu_min && tot->host_cpu_ps < 1.2 * cpu_min);
	trun_free(&t);

	struct trun j = trun_yaml(ONE_LEAF(4) "jobs: [{name: dp, gpus: 4, iterations: 2, compute: 100us, "
					      "gradient_bytes: 8MiB, transport: tcp, priority: 1}]\n");
	tot = fab_sim_totals(j.run->sim);
	print_message("a data-parallel job over TCP: host CPU %.4f s\n", tot->host_cpu_ps / 1e12);
	assert_true(tot->host_cpu_ps > 0);
	trun_free(&j);
}

/* CUBIC's state machine alone: after a loss at W_max = 100 segments, ACKs
 * every 10 us of a window's worth; the window follows
 * W(t) = C (t - K)^3 + W_max (K = cbrt(W_max (1 - beta) / C) = 4.22 s) within
 * a segment or 2% while the cubic function is above the Reno estimate. */
static void test_tcp_cubic_window(void **state)
{
	(void)state;
	struct fab_tcpcc_params p = {.cubic_c = 0.4, .cubic_beta = 0.7};
	_Alignas(16) unsigned char st[FAB_CC_STATE_MAX];
	const struct fab_cc_ops *cc = &fab_cc_cubic;
	cc->init(st, &p, 1e9);
	cc->attach(st, &(struct fab_cc_env){.line_bps = 1e9, .mss = 1000, .init_cwnd = 10});
	/* slow start to 100 segments, then a loss */
	fab_time_ps now = 0;
	while (cc->window_bytes(st) < 100 * 1000) {
		cc->on_ack(st, 1000, now);
		now += 1000000;
	}
	double w_max = (double)cc->window_bytes(st) / 1000;
	cc->on_loss(st, now);
	fab_time_ps t0 = now;
	assert_true(fabs((double)cc->window_bytes(st) / 1000 - 0.7 * w_max) < 1);
	double K = cbrt(w_max * 0.3 / 0.4), worst = 0;
	/* 8 s of ACKs: a window's worth every 100 ms (an RTT), the window then
	 * compared with W at that time */
	for (int step = 1; step <= 80; step++) {
		now = t0 + (fab_time_ps)step * 100 * FAB_PS_PER_MS;
		double w = (double)cc->window_bytes(st) / 1000;
		for (int a = 0; a < (int)w; a++)
			cc->on_ack(st, 1000, now);
		double t = (double)(now - t0) / 1e12, want = 0.4 * pow(t - K, 3) + w_max;
		double got = (double)cc->window_bytes(st) / 1000, err = fabs(got - want);
		if (t > 0.5 && t < 7)
			worst = fmax(worst, err / fmax(want, 1) > 0.02 && err > 1 ? err / want : 0);
	}
	print_message("CUBIC: W_max %.1f, K %.2f s, worst relative error %.3f\n", w_max, K, worst);
	assert_true(worst == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_framing),         cmocka_unit_test(test_tcp_lone_flow_line_rate),
		cmocka_unit_test(test_tcp_flow_engine),     cmocka_unit_test(test_tcp_dctcp_queue_near_k),
		cmocka_unit_test(test_tcp_fast_retransmit), cmocka_unit_test(test_tcp_mathis),
		cmocka_unit_test(test_tcp_lossy_incast),    cmocka_unit_test(test_tcp_mixed_transports),
		cmocka_unit_test(test_tcp_cubic_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
