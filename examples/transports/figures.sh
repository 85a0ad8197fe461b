#!/bin/sh
# The figures of README.md, from the commands it shows and the 256 MiB
# AllReduce alone at seeds 1 to 6 (usage: from the repository root,
# sh examples/transports/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/transports/scenario.yaml
for t in roce cubic dctcp ib; do
	case $t in
	roce) set -- ;;
	cubic) set -- --set fabric.transport=tcp ;;
	dctcp) set -- --set fabric.transport=tcp --set fabric.tcp.cc=dctcp ;;
	ib) set -- --set fabric.transport=ib ;;
	esac
	json $t coll $X "$@"
	json $t.incast sim $X "$@"
	for s in 1 2 3 4 5 6; do
		run c coll $X "$@" -b 256M -e 256M --seed $s --format csv
		awk -F, -v k="$t.seed$s" 'NR == 2 { print k "\t" $8 }' "$T/c.out" >>"$T/v"
	done
done
calc '
function s(r, k) { return (r ".summary." k) in V ? V[r ".summary." k] + 0 : 0 }
# the sweep'"'"'s figure, then the incast'"'"'s where it differs
function two(a, b) { return a == b ? a : a ", " b }
function med(t,   i, j, n, x, y) {
	for (i = 1; i <= 6; i++)
		x[i] = get(t ".seed" i) + 0
	for (i = 1; i <= 6; i++)
		for (j = i + 1; j <= 6; j++)
			if (x[j] < x[i]) { y = x[i]; x[i] = x[j]; x[j] = y }
	lo[t] = x[1]
	hi[t] = x[6]
	return (x[3] + x[4]) / 2
}
END {
	n = split("roce cubic dctcp ib", r, " ")
	for (i = 1; i <= n; i++) {
		t = r[i]
		m[t] = med(t)
		cpu = s(t, "host_cpu_s") == 0 && s(t ".incast", "host_cpu_s") == 0 ? "0" : \
			fmt("%.2f", s(t, "host_cpu_s")) " s, " fmt("%.3f", s(t ".incast", "host_cpu_s")) " s"
		put(t, fmt("%.1f", get(t ".collective.rows.0.time_us")) " us | " \
			fmt("%.0f", get(t ".collective.rows.2.time_us")) " us (" fmt("%.1f", get(t ".collective.rows.2.busbw_GBps")) " GB/s) | " \
			fmt("%.0f", m[t]) " GB/s (" fmt("%.0f", lo[t]) " to " fmt("%.0f", hi[t]) ") | " \
			fmt("%.0f", s(t ".incast", "fct_ps.p99") / 1e6) " us | " two(s(t, "drops"), s(t ".incast", "drops")) " | " \
			two(s(t, "retx_pkts"), s(t ".incast", "retx_pkts")) " | " two(s(t, "pause_frames"), s(t ".incast", "pause_frames")) " | " cpu " |")
		put(t ".med", fmt("%.0f", m[t]))
	}
	put("cubic.timeouts", s("cubic", "timeouts"))
	put("tcp.x", fmt("%.1f", get("cubic.collective.rows.0.time_us") / get("roce.collective.rows.0.time_us")))
	put("tcp.cpu", fmt("%.1f", s("cubic", "host_cpu_s")))
	put("roce.lo", fmt("%.0f", lo["roce"]))
	put("roce.hi", fmt("%.0f", hi["roce"]))
	put("cubic.drops", s("cubic", "drops"))
	put("cubic.retx", s("cubic", "retx_pkts"))
	# who loses packets in the incast
	for (i = 1; i <= n; i++)
		if (s(r[i] ".incast", "drops") > 0)
			lossy = lossy (lossy == "" ? "" : " and ") r[i]
	put("lossy", lossy == "" ? "none loses a packet" : "only " (lossy == "cubic" ? "CUBIC" : lossy) " loses packets to do it")
}' "$T/flat" "$T/v"
block <<'EOT'
| transport | AllReduce 1 MiB | AllReduce 256 MiB (busbw) | 256 MiB alone, seeds 1 to 6: median busbw (range) | incast FCT p99 | drops | retransmitted | PAUSE | host CPU (AllReduce sweep, incast) |
|---|---|---|---|---|---|---|---|---|
| RoCEv2, PFC + DCQCN | {roce}
| TCP CUBIC, lossy | {cubic}
| TCP DCTCP, K = 100 KiB | {dctcp}
| InfiniBand, credits | {ib}

(drops, retransmissions and PAUSE frames: the AllReduce sweep's, then the
incast's where they differ; `fabric.tcp.min_rto` is 1 ms in this
scenario, as datacenters tune it; Linux's 200 ms would turn each of
CUBIC's {cubic.timeouts} timeouts in the sweep into a 200 ms stall.)

Lesson: small messages are latency-bound, and TCP pays the kernel on
every one (`fabric.tcp.kernel_latency`, 5 us a message): its 1 MiB
AllReduce takes {tcp.x}x RoCE's, where InfiniBand matches RoCE.  TCP also
costs the hosts CPU that RDMA offloads ({tcp.cpu} CPU-seconds for the sweep,
`summary.host_cpu_s`).  Large messages are bandwidth-bound, and two
things decide: where ECMP puts the eight channels' flows on the two
spines (a ring is as fast as its most crowded uplink: RoCE's 256 MiB
runs at {roce.lo} to {roce.hi} GB/s from seed to seed), and how the transport meets
congestion, which shows over seeds: CUBIC fills the 8 MiB buffers, drops
and resends ({cubic.drops} segments dropped, {cubic.retx} resent, {cubic.timeouts} timeouts at seed 1;
median {cubic.med} GB/s); RoCE stays lossless but pays with PAUSE frames and
DCQCN's rate cuts ({roce.med} GB/s); InfiniBand's credits hold each sender back
hop by hop with no loss and no PAUSE ({ib.med} GB/s); DCTCP marks early at one
threshold and keeps the queues short ({dctcp.med} GB/s).  In the incast all four
deliver every byte; {lossy}.
EOT
