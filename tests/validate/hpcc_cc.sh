#!/bin/sh
# make validate: fabscope's HPCC (fabric.cc: hpcc) against HPCC's own ns-3
# (alibaba-edu/High-Precision-Congestion-Control, CC_MODE 3) on FB_Hadoop
# at 30% load over 5 ms, 49,720 flows on its 320-host fat tree (100G hosts,
# 400G fabric), without and with 13 incast events of 60 senders: the
# reference's completion times are in
# tests/validate/hpcc-cc/ (its README gives every setting), its flows and
# topology in shared/reference/hpcc-ns3/ (skipped where that is absent).
# HPCC's settings as keys: eta 0.95, no forced multiplicative stage
# (MI_THRESH 0), R_AI 40 Mbps, one T for every queue pair (GLOBAL_T: the
# longest path's base round trip, 12.24 us as HPCC's ns-3 computes it: six
# 1 us links both ways plus a 1000-byte payload's serialisation at each
# hop), the window R x T (VAR_WIN), fast reaction, 42 bytes of telemetry
# on data packets and ACKs; the framing, buffer and PFC as
# tests/validate/hpcc.sh has them.  Prints the FCT slowdown per 5% size bin
# beside the reference's and asserts the aim: mean |p95 error| at most 10%
# over the 20 bins, at least 18 bins within 20%, no PAUSE frame and no drop
# (the reference has none).  Two minutes or so.
F=${1:-./build/fabscope}
. "$(dirname "$0")/ref_bins.sh"
here=$(cd "$(dirname "$0")" && pwd)
REF=${HPCC_REF:-$here/../../../shared/reference/hpcc-ns3}
CC_REF=$here/hpcc-cc
if [ ! -f "$REF/fbhadoop30.flows.csv.gz" ]; then
	echo "hpcc-cc: no reference flows in $REF (set HPCC_REF), skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$REF/topology.txt" "$tmp/"

# compare NAME CPU_REF: the reference's run NAME (which took CPU_REF
# seconds, its README) against fabscope's
compare() {
	gzip -dc "$REF/$1.flows.csv.gz" |
		awk -F, 'NR == 1 { print "src,dst,bytes,start"; next } { printf "%s,%s,%s,%sns\n", $1, $2, $3, $4 }' >"$tmp/flows.csv"
	cat >"$tmp/hpcc.yaml" <<'YAML'
topology: {kind: file, file: topology.txt, gpus_per_server: 1, nics_per_server: 1}
fabric:
  mtu: 1000
  wire: {data_overhead: 48, ack_frame: 60, preamble_ifg: 0}
  buffer: 32MiB
  control_priority: 3
  nic: {rto: 100ms}
  cc: hpcc
  hpcc: {eta: 0.95, max_stage: 0, rai: 40Mbps, base_rtt: 12.24us, fast_react: true, int_bytes: 42}
  ecn: {kmin: 400KB, kmax: 1600KB, pmax: 0.2, ref_rate: 100Gbps, mark_at: dequeue-after}
  pfc: {threshold: dynamic, shift: 3, shift_rate: 100Gbps, reserve: 4KiB, resume_offset: 3KiB,
        headroom_delays: 3, until_resume: true}
traffic:
  flows_csv: flows.csv
YAML
	/usr/bin/time -f "%U %S %M" "$F" sim "$tmp/hpcc.yaml" --out "$tmp/out" >/dev/null 2>"$tmp/time" || {
		cat "$tmp/time"
		return 1
	}
	# the reference's rows are the flows file's, in order: the same flows
	gzip -dc "$REF/$1.flows.csv.gz" | tail -n +2 | cut -d, -f1-3 >"$tmp/in"
	gzip -dc "$CC_REF/$1-hpcc.fct.csv.gz" | tail -n +2 | cut -d, -f1,2,5 >"$tmp/refin"
	cmp -s "$tmp/in" "$tmp/refin" || {
		echo "hpcc-cc: the reference's flows are not the flows file's: FAIL"
		return 1
	}
	# the reference's bins by the same definitions as fabscope's slowdown.csv
	ref_bins "$CC_REF/$1-hpcc.fct.csv.gz" >"$tmp/ref.txt"
	tail -n +2 "$tmp/out/slowdown.csv" | tr ',' ' ' >"$tmp/ours.txt"
	pause=$(grep -m1 '"pause_frames"' "$tmp/out/result.json" | tr -dc '0-9')
	drops=$(grep -m1 '"drops"' "$tmp/out/result.json" | tr -dc '0-9')
	name=$1
	cpu_ref=$2
	set -- $(tail -1 "$tmp/time")
	echo "HPCC's ns-3 (CC_MODE 3) against fabscope's HPCC: $name, 320 hosts; FCT slowdown per 5% size bin"
	echo "bin  max size (B)    p50 ref   fabscope    p95 ref   fabscope   error    p99 ref   fabscope"
	paste -d ' ' "$tmp/ref.txt" "$tmp/ours.txt" | awk -v name="$name" -v cpu_ref="$cpu_ref" -v pause="$pause" -v drops="$drops" -v u="$1" -v sy="$2" -v rss="$3" '{
		# ref: bin size p50 p95 p99; ours: bin size flows p50 p95 p99
		e = ($10 / $4 - 1) * 100; ae = e < 0 ? -e : e; sum += ae; if (ae <= 20) within++
		if ($2 != $7) sizes = 1
		printf "%3d %13d %10.3f %10.3f %10.3f %10.3f %+7.1f%% %10.3f %10.3f\n", $1, $2, $3, $9, $4, $10, e, $5, $11
		n++
	} END {
		mean = sum / n
		printf "p95: mean |error| %.1f%% (aim 10%%), %d of %d bins within 20%% (aim 18)\n", mean, within, n
		printf "PFC: fabscope %d PAUSE frames, drops %d; the reference none of either\n", pause, drops
		printf "CPU: fabscope %.1f s (peak RSS %d MiB), HPCC ns-3 %.1f s: %.0fx less\n", u + sy, rss / 1024, cpu_ref, cpu_ref / (u + sy)
		if (sizes) print "the bins do not hold the same flows: the inputs differ"
		ok = n == 20 && !sizes && mean <= 10 && within >= 18 && pause == 0 && drops == 0
		print (ok ? "hpcc-cc " name ": ok" : "hpcc-cc " name ": FAIL")
		exit !ok
	}'
}
compare fbhadoop30 370.8 || exit 1
compare fbhadoop30-incast 456.5 || exit 1
