#!/bin/sh
# The real-network probe on loopback: the options of every test, the result
# documents, and what happens when a rank dies, hangs or a stranger calls.
# Ranks are started by --local, or one process each with torchrun-style
# variables (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT) as a launcher would.
# Usage: probe_test.sh path/to/fabscope.  Last line: "probe: N passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
pids=""
cg=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" INT TERM HUP

. "$(dirname "$0")/lib.sh"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
port=$(port_base $$)
# start N ARGS...: N ranks launcher-style in the background, rank r's output
# in $tmp/oR and $tmp/eR, its pid in $pR
start() {
	nr=$1
	shift
	port=$((port + 1))
	r=0
	while [ $r -lt "$nr" ]; do
		RANK=$r WORLD_SIZE=$nr MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=c0ffee5eed \
			"$F" probe "$@" >"$tmp/o$r" 2>"$tmp/e$r" &
		eval "p$r=$!"
		pids="$pids $!"
		r=$((r + 1))
	done
}

# -- options and documents --

# coll: --json holds the same rows as the table, with #wrong
run coll-json 0 "$F" probe --local 3 -b 4K -e 64K -f 16 -n 2 --json "$tmp/c.json" && {
	rows=$(grep -c '^ ' "$tmp/out")
	jrows=$(grep -c '"size_bytes"' "$tmp/c.json")
	[ "$rows" -eq 2 ] && [ "$jrows" -eq 2 ] && has "$tmp/c.json" '"wrong": 0' && has "$tmp/c.json" '"test": "coll"' &&
		has "$tmp/c.json" '"avg_busbw_GBps"' && ok coll-json || bad "coll-json: $rows rows, $jrows in the document"; }
# nccl-tests' layout: 13 fields, the in-place columns a second timing,
# checked too (#wrong 0 in both halves)
run coll-nccl-layout 0 "$F" probe --local 2 -b 4K -e 16K -f 4 -n 2 && {
	awk '/^ +[0-9]/ { n++; if (NF != 13 || $9 != 0 || !($10 > 0) || $13 != 0) bad = 1 } END { exit bad || n != 2 }' \
		"$tmp/out" && has "$tmp/out" "# Collective test concluded: all_reduce_perf" &&
		has "$tmp/out" "#  Rank  1 Group  0 Pid" && ok coll-nccl-layout || bad "coll-nccl-layout: $(cat "$tmp/out")"; }
# -c 0: no check run, the column says so
run coll-nocheck 0 "$F" probe --local 2 -b 64K -e 64K -n 1 -c 0 && {
	awk '/^ /{ n++; if ($9 != "N/A") bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok coll-nocheck || bad coll-nocheck; }
# one data connection or four, one channel or three: same data
for kc in "1 1" "4 3"; do
	set -- $kc
	run "coll-conns-$1-ch-$2" 0 "$F" probe --local 3 --conns "$1" --channels "$2" -b 96K -e 96K -n 1 && {
		awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok "coll-conns-$1-ch-$2" ||
			bad "coll-conns-$1-ch-$2"; }
done
# every operation the probe offers, checked
for op in allreduce allgather reducescatter broadcast alltoall; do
	run "coll-$op" 0 "$F" probe --local 4 --op $op -b 48K -e 48K -n 1 && {
		awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok "coll-$op" || bad "coll-$op"; }
done
# --out: the document and the table, the table as printed
run out-dir 0 "$F" probe --local 2 --test latency -n 50 -w 5 --out "$tmp/od" && {
	cmp -s "$tmp/out" "$tmp/od/probe.txt" && has "$tmp/od/result.json" '"t_p999_us"' &&
		has "$tmp/od/result.json" '"jitter_us"' && has "$tmp/od/result.json" '"mode": "poll"' &&
		ok out-dir || bad out-dir; }
# latency: --busy-poll says so; jitter is at most the spread of the samples
run latency-busy 0 "$F" probe --local 2 --test latency -n 200 -w 20 --busy-poll && {
	has "$tmp/out" "busy-poll" && awk '/^ [0-9]/ { min = $3; max = $4 } /^# row 1: peer 1 .*jitter/ { j = $(NF - 1) }
		END { exit !(j >= 0 && j <= max - min) }' "$tmp/out" && ok latency-busy || bad latency-busy; }
# latency: ib_send_lat's table, byte for byte its header and its 9 fields
# a row (#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%)
# between its dashed lines; the order statistics agree with one another;
# the peer and jitter on a line a row after the table
run latency-columns 0 "$F" probe --local 3 --test latency -b 64 -e 64 -n 300 -w 10 --json "$tmp/lc.json" && {
	dash=---------------------------------------------------------------------------------------
	awk -v dash="$dash" '$0 == dash { d++ } /^ [0-9]/ { n++; if (!(NF == 9 && d == 1 && $1 == 64 && $2 == 300 &&
		$3 <= $5 && $5 <= $8 && $8 <= $9 && $9 <= $4 && $3 <= $6 && $6 <= $4 && $7 >= 0 && $7 <= $4 - $3)) bad = 1 }
		/^# row [0-9]: peer [0-9] \(rank[0-9]@[^)]*\), jitter [0-9.]* usec$/ { r++ }
		END { exit bad || n != 2 || d != 2 || r != 2 }' "$tmp/out" &&
		grep -qxF ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ' "$tmp/out" &&
		has "$tmp/lc.json" '"t_stdev_us"' && ok latency-columns || bad "latency-columns: $(cat "$tmp/out")"; }
# bw --bidir: both ways, the sum reported; ib_write_bw --report_gbits's table (#bytes
# #iterations, BW peak and average in Gb/s, MsgRate in Mpps), then the peer,
# the time (us) and GB/s: GB/s x 8 = Gb/s, bytes/time = GB/s x 2, messages/time
# = MsgRate x 2, the peak at least the average
run bw-bidir 0 "$F" probe --local 2 --test bw --bidir -b 256K -e 256K -n 20 --json "$tmp/b.json" && {
	awk '/^ [0-9]/ { n++; if (NF != 5) bad = 1; sz = $1; it = $2; pk = $3; av = $4; mr = $5 }
		/^# row 1: peer 1 / { t = $(NF - 3); gb = $(NF - 1) }
		END { d = gb * 8 - av; e = 2 * sz * it / (t * 1e3) - gb; m = 2 * it / t - mr
		exit bad || n != 1 || !(gb > 0 && d * d < 1e-4 && e * e < 1e-4 + 1e-4 * gb * gb && m * m < 1e-10 + 1e-4 * mr * mr && pk >= av) }' "$tmp/out" &&
		grep -qxF ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]' "$tmp/out" &&
		has "$tmp/out" "both ways" && has "$tmp/b.json" '"direction": "bidirectional"' && ok bw-bidir || bad bw-bidir; }
# bw -t/-i (iperf3's): a run of about -t seconds, an interval line every
# -i, the intervals' bytes adding up to the row's; refused outside bw
run bw-timed 0 "$F" probe --local 2 --test bw -b 256K -e 256K -t 1 -i 0.25 -w 2 --json "$tmp/t.json" && {
	! command -v python3 >/dev/null && echo "skip: bw-timed's checks need python3" ||
	python3 - "$tmp/t.json" "$tmp/out" <<'PY' && has "$tmp/out" "[ ID] Interval" && ok bw-timed || bad "bw-timed: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))["bandwidth"]
iv, row = d["intervals"], d["rows"][0]
total = sum(i["bytes"] for i in iv)
span = iv[-1]["to_s"]
# on a clock, as iperf3's timer: 4 intervals ending at 0.25, 0.5 and 0.75 s
# (each at the first message to end past it: 256 KiB take well under a
# millisecond here, 50 ms allowed for a loaded machine), the last at the
# run's end, which comes on time
assert len(iv) == 4, [(i["from_s"], i["to_s"]) for i in iv]
assert all(0 <= i["to_s"] - 0.25 * (k + 1) < 0.05 for k, i in enumerate(iv[:3])), iv
assert abs(total - row["size_bytes"] * row["iters"]) <= 1e-6 * total, (total, row)
assert 1.0 <= span <= 1.1 and abs(row["time_us"] / 1e6 - span) < 1e-3, (span, row["time_us"])
assert all(abs(a["to_s"] - b["from_s"]) < 1e-9 for a, b in zip(iv, iv[1:]))
# iperf3's lines, rebuilt from its format strings (src/iperf_locale.c
# report_bw_format, src/units.c unit_snprintf, adaptive): each interval,
# then its separator, header, and the sender and receiver summaries
def units(v, bits):
    base, labels = (1000.0, ["bit", "Kbit", "Mbit", "Gbit", "Tbit"]) if bits else (1024.0, ["Byte", "KByte", "MByte", "GByte", "TByte"])
    v, c = v * 8 if bits else v, 0
    while v >= base and c < 4:
        v, c = v / base, c + 1
    return ("%4.2f %s" if v < 9.995 else "%4.1f %s" if v < 99.95 else "%4.0f %s") % (v, labels[c])
def line(peer, a, b, nbytes, role):
    return "[%3d] %6.2f-%-6.2f sec  %ss  %ss/sec                  %s" % (peer, a, b, units(nbytes, False), units(nbytes / (b - a), True), role)
out = open(sys.argv[2]).read().split("\n")
for i in iv:
    want = line(i["peer"], i["from_s"], i["to_s"], i["bytes"], "")
    assert want in out, (want, out)
k = out.index("- - - - - - - - - - - - - - - - - - - - - - - - -")
t = row["time_us"] / 1e6
assert out[k + 1] == "[ ID] Interval           Transfer     Bitrate", out[k + 1]
for j, role in ((2, "sender"), (3, "receiver")):
    got = out[k + j].split()
    assert got[-1] == role and got[0] + got[1] == "[1]" and abs(float(got[2].split("-")[1]) - t) < 0.006, out[k + j]
PY
}
# -J: iperf3's JSON (its -J: start, intervals, end), the same numbers as
# the table and the document; latency has no such file
run bw-iperf-json 0 "$F" probe --local 2 --test bw -b 64K -e 64K -t 0.5 -i 0.1 -w 2 -J "$tmp/i.json" --json "$tmp/id.json" && {
	if ! command -v python3 >/dev/null; then echo "skip: bw-iperf-json's checks need python3"; else
	python3 - "$tmp/i.json" "$tmp/id.json" "$tmp/out" <<'PY' && ok bw-iperf-json || bad "bw-iperf-json: $(cat "$tmp/out")"
import json, sys
j, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["bandwidth"]
out = open(sys.argv[3]).read().split("\n")
assert out[0] == "# Writing JSON output to " + sys.argv[1], out[0]
ts = j["start"]["test_start"]
assert ts["protocol"] == "TCP" and ts["blksize"] == 65536 and ts["interval"] == 0.1 and ts["bidir"] == 0, ts
iv, row = j["intervals"], d["rows"][0]
assert len(iv) == len(d["intervals"]) == 5, len(iv)
for a, b in zip(iv, d["intervals"]):
    s = a["sum"]
    assert s == {k: v for k, v in a["streams"][0].items() if k != "socket"}, a
    assert abs(s["start"] - b["from_s"]) < 1e-9 and abs(s["end"] - b["to_s"]) < 1e-9 and s["bytes"] == round(b["bytes"]), (a, b)
    assert abs(s["bits_per_second"] - 8 * s["bytes"] / s["seconds"]) < 1e-6 * s["bits_per_second"], s
    assert s["bytes"] % 65536 == 0 and s["sender"] is True and s["omitted"] is False, s
e = j["end"]
total = sum(a["sum"]["bytes"] for a in iv)
for k in ("sum_sent", "sum_received"):
    assert e[k]["bytes"] == total == row["size_bytes"] * row["iters"], (k, e[k], total)
    assert abs(e[k]["seconds"] - row["time_us"] / 1e6) < 1e-9 and e[k]["start"] == 0, e[k]
    assert abs(e[k]["bits_per_second"] - row["Gbps"] * 1e9) < 1e-6 * e[k]["bits_per_second"], (e[k], row)
assert e["streams"][0]["sender"]["bytes"] == total, e["streams"]
PY
	fi
}
run json-latency 2 "$F" probe --local 2 --test latency -J "$tmp/l.json" && {
	has "$tmp/err" "iperf3's for --test bw" && [ ! -e "$tmp/l.json" ] && ok json-latency || bad json-latency; }
# coll -J: nccl-tests' JSON of the table's rows, never over a file (the
# second run's goes to FILE.0)
run coll-nccl-json 0 "$F" probe --local 3 -b 1K -e 16K -J "$tmp/n.json" && run coll-nccl-json-2 0 "$F" probe --local 3 -b 1K -e 1K -J "$tmp/n.json" && {
	if ! command -v python3 >/dev/null; then echo "skip: coll-nccl-json's checks need python3"; else
	python3 - "$tmp/n.json" "$tmp/n.json.0" <<'PY' && ok coll-nccl-json || bad coll-nccl-json
import json, sys
j, j2 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert j["version"] == 3 and len(j["config"]["devices"]) == 3 and j["config"]["minimum_bytes"] == 1024, j["config"]
assert [r["size"] for r in j["results"]] == [1024, 4096, 16384], j["results"]
for r in j["results"]:
    for h in ("out_of_place", "in_place"):
        x = r[h]
        assert x["nwrong"] == 0 and x["time"] > 0, r
        # AllReduce on 3 ranks: busbw = algbw x 2(n-1)/n, algbw = size / time
        assert abs(x["alg_bw"] - r["size"] / x["time"] / 1e3) < 1e-3 * x["alg_bw"] + 2e-6, r
        assert abs(x["bus_bw"] - x["alg_bw"] * 4 / 3) < 1e-3 * x["bus_bw"] + 2e-6, r
assert j["out_of_bounds"] == {"count": 0, "okay": "true"} and j2["results"][0]["size"] == 1024
PY
	fi
}
# -J and --json on one file, and a -J that cannot be written: refused
# before any rank joins
run json-same-file 2 "$F" probe --local 2 --test bw -n 5 -J "$tmp/same.json" --json "$tmp/same.json" && {
	has "$tmp/err" "two documents, one file" && [ ! -e "$tmp/same.json" ] && ok json-same-file || bad "json-same-file: $(cat "$tmp/err")"; }
run json-bad-dir 4 "$F" probe --local 2 -J "$tmp/nodir/x.json" && {
	has "$tmp/err" "-J $tmp/nodir/x.json: No such file or directory" && ! has "$tmp/err" "connection" &&
		ok json-bad-dir || bad "json-bad-dir: $(cat "$tmp/err")"; }
run bw-timed-coll 2 "$F" probe --local 2 -t 2 && { has "$tmp/err" "only for --test bw" && ok bw-timed-coll || bad bw-timed-coll; }
run bw-interval-alone 2 "$F" probe --local 2 --test bw -i 1 && { has "$tmp/err" "give -t SECONDS" && ok bw-interval-alone || bad bw-interval-alone; }
# --bind: an address, an interface, and neither
run bind-addr 0 "$F" probe --local 2 --bind 127.0.0.1 --test latency -n 20 -w 2 && ok bind-addr
run bind-iface 0 "$F" probe --local 2 --bind lo --test bw -n 5 -w 1 --json "$tmp/bi.json" && {
	has "$tmp/bi.json" '"rank1@127.0.0.1"' && ok bind-iface || bad bind-iface; }
run bind-bad 2 "$F" probe --local 2 --bind nosuch0 && { has "$tmp/err" '"nosuch0" is neither' && ok bind-bad || bad bind-bad; }
# IPv6: --local on ::1, and launcher-style ranks with MASTER_ADDR=::1 and
# --master [::1]:PORT (skipped where loopback has no IPv6)
if grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
	run ipv6-local 0 "$F" probe --local 3 --bind ::1 -b 4K -e 16K -f 4 -n 1 --json "$tmp/v6.json" && {
		has "$tmp/v6.json" '"rank2@::1"' && awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 2 }' "$tmp/out" &&
			ok ipv6-local || bad "ipv6-local: $(cat "$tmp/out")"; }
	port=$((port + 1))
	RANK=0 WORLD_SIZE=2 MASTER_ADDR=::1 MASTER_PORT=$port FABSCOPE_TOKEN=c0ffee5eed \
		"$F" probe --test latency -n 20 -w 2 --json "$tmp/v6b.json" >"$tmp/o0" 2>"$tmp/e0" &
	p0=$!
	pids="$pids $p0"
	FABSCOPE_TOKEN=c0ffee5eed "$F" probe --rank 1 --size 2 --master "[::1]:$port" --test latency -n 20 -w 2 \
		>"$tmp/o1" 2>"$tmp/e1"
	r1=$?
	wait "$p0"
	r0=$?
	[ $r0 -eq 0 ] && [ $r1 -eq 0 ] && has "$tmp/v6b.json" '"rank1@::1"' && ok ipv6-launcher ||
		bad "ipv6-launcher: exit $r0/$r1: $(cat "$tmp/e0" "$tmp/e1")"
else
	echo "note: no IPv6 on loopback: IPv6 tests skipped"
fi
# matrix: --serial pairs one at a time; --retest 1 re-tests the pairs under
# the median, and the numbers reported are those (to the digits printed);
# --retest 0 none
run matrix-serial 0 "$F" probe --local 4 --test matrix --serial -e 128K -n 3 --retest 0 --json "$tmp/ms.json" && {
	has "$tmp/out" "6 pairs one at a time" && has "$tmp/ms.json" '"mode": "serial"' && ! has "$tmp/out" "re-tested" &&
		has "$tmp/ms.json" '"retested": []' && has "$tmp/ms.json" '"failed_pairs": []' && ok matrix-serial || bad matrix-serial; }
run matrix-retest 0 "$F" probe --local 4 --test matrix -e 128K -n 3 --retest 1 --json "$tmp/mr.json" && {
	n=$(grep -c '^  [0-9]* <-> [0-9]*' "$tmp/out")
	# each re-tested pair's "after" numbers are the matrix's
	awk '/^re-tested/ { r = 1; next } /^ +[0-9]+ +(-|[0-9]+\.[0-9]+) / { for (j = 2; j <= NF; j++) m[$1, j - 2] = $j }
	     r && /<->/ { a = $1; b = $3; want[a, b] = $8; want[b, a] = $10 }
	     END { for (k in want) { split(k, x, SUBSEP); d = m[x[1], x[2]] - want[k]; e = 0.001 + 0.001 * want[k]
		   if (d * d > e * e) bad = 1 } # the table prints 3 decimals, the re-tests 4 digits
		   exit bad }' "$tmp/out" &&
		[ "$n" -ge 1 ] && [ "$n" -le 6 ] && ok "matrix-retest ($n pairs)" || { cat "$tmp/out"; bad matrix-retest; }; }
# usage errors
run usage-bidir 2 "$F" probe --local 2 --test latency --bidir && ok usage-bidir
run usage-serial 2 "$F" probe --local 2 --serial && ok usage-serial
run usage-conns 2 "$F" probe --local 2 --conns 17 && { has "$tmp/err" "--conns 17" && ok usage-conns || bad usage-conns; }
run usage-pair-timeout 2 "$F" probe --local 2 --test matrix --pair-timeout soon && ok usage-pair-timeout
run usage-retest 2 "$F" probe --local 2 --test matrix --retest 2 && ok usage-retest
run usage-extra 2 "$F" probe --local 2 extra && ok usage-extra
run usage-rank-alone 2 "$F" probe --rank 1 --master 127.0.0.1:1 && { has "$tmp/err" "go together" && ok usage-rank-alone || bad usage-rank-alone; }
run usage-rank-over 2 "$F" probe --rank 2 --size 2 --master 127.0.0.1:1 && ok usage-rank-over

# -- failures --

# a rank killed mid-sweep: the others exit 4 within a second or two, every
# one naming it; rank 0's document keeps the rows done and says what failed
start 3 -b 64K -e 64M -f 2 -n 20 -c 0 --timeout 5 --json "$tmp/k.json"
sleep 2
t0=$(now_ms)
kill -9 "$p2"
wait "$p0"
r0=$?
wait "$p1"
r1=$?
dt=$(($(now_ms) - t0))
if [ $r0 -eq 4 ] && [ $r1 -eq 4 ] && [ $dt -lt 4000 ] && has "$tmp/e0" "rank2@127.0.0.1" && has "$tmp/e1" "rank2@127.0.0.1" &&
	has "$tmp/k.json" '"error"' && grep -q '"size_bytes"' "$tmp/k.json"; then
	ok "rank-killed (others out in $dt ms)"
else
	bad "rank-killed: exit $r0/$r1 after $dt ms: $(cat "$tmp/e0" "$tmp/e1")"
fi

# a rank that hangs (stopped): the others exit 4 after about --timeout,
# naming it
start 3 -b 64K -e 64M -f 2 -n 20 -c 0 --timeout 2
sleep 2
t0=$(now_ms)
kill -STOP "$p1"
wait "$p0"
r0=$?
wait "$p2"
r2=$?
dt=$(($(now_ms) - t0))
kill -9 "$p1"
if [ $r0 -eq 4 ] && [ $r2 -eq 4 ] && [ $dt -ge 1500 ] && [ $dt -lt 6000 ] && has "$tmp/e0" "rank1@127.0.0.1" &&
	has "$tmp/e2" "rank1@127.0.0.1"; then
	ok "rank-hangs (others out in $dt ms, timeout 2 s)"
else
	bad "rank-hangs: exit $r0/$r2 after $dt ms: $(cat "$tmp/e0" "$tmp/e2")"
fi

# a point-to-point test whose next peer hangs before its turn
start 3 --test bw -b 4M -e 4M -n 1000 --timeout 2
sleep 0.5
kill -STOP "$p2"
wait "$p0"
r0=$?
wait "$p1"
r1=$?
kill -9 "$p2"
if [ $r0 -eq 4 ] && has "$tmp/e0" "rank2@127.0.0.1"; then
	ok "p2p-peer-hangs (rank 1 exit $r1)"
else
	bad "p2p-peer-hangs: exit $r0/$r1: $(cat "$tmp/e0" "$tmp/e1")"
fi

# a stranger without the token calls rank 0 during the rendezvous: refused,
# logged, and the job goes on
port=$((port + 1))
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=c0ffee5eed \
	"$F" probe -b 4K -e 4K -n 1 >"$tmp/o0" 2>"$tmp/e0" &
p0=$!
pids="$pids $p0"
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=badbadbad \
	"$F" probe -b 4K -e 4K -n 1 --timeout 3 >/dev/null 2>"$tmp/ex"
rx=$?
# (the rightful rank 1 comes with flags instead of a launcher's variables)
FABSCOPE_TOKEN=c0ffee5eed "$F" probe --rank 1 --size 2 --master 127.0.0.1:$port -b 4K -e 4K -n 1 >"$tmp/o1" 2>"$tmp/e1"
r1=$?
wait "$p0"
r0=$?
if [ $r0 -eq 0 ] && [ $r1 -eq 0 ] && [ $rx -eq 4 ] && has "$tmp/e0" "refused a connection from 127.0.0.1 without the job token" &&
	awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/o0"; then
	ok foreign-refused
else
	bad "foreign-refused: exit $r0/$r1/$rx: $(cat "$tmp/e0" "$tmp/e1" "$tmp/ex")"
fi

# sizes that do not fit in memory are capped (as nccl-tests does), not an
# abort: the last row is the cap, every row checked.  Where this test can
# make a memory cgroup (root; v2 with the memory controller handed down, or
# v1's), the ranks run in one limited to 2 GiB, as a Slurm job's --mem
# does: each of the 2 ranks takes at most a quarter of it (half, split
# between them), and an all-reduce holds 4x its size, so the cap is at most
# 128 MiB.  Elsewhere the machine's memory caps it (1 GiB on 24 GiB).
mkcg() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		d=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
		grep -qw memory "$d/cgroup.subtree_control" 2>/dev/null || return 1
		mkdir "$d/fabscope-test-$$" 2>/dev/null && cg=$d/fabscope-test-$$ &&
			echo $((2 << 30)) >"$cg/memory.max" 2>/dev/null
	elif [ -d /sys/fs/cgroup/memory ]; then
		d=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}://p' /proc/self/cgroup)
		mkdir "$d/fabscope-test-$$" 2>/dev/null && cg=$d/fabscope-test-$$ &&
			echo $((2 << 30)) >"$cg/memory.limit_in_bytes" 2>/dev/null
	else
		return 1
	fi
}
if [ "$(id -u)" = 0 ] && mkcg; then
	run coll-capped-cgroup 0 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		"$F" probe --local 2 -b 64G -e 64G -n 1 -w 0 && {
		has "$tmp/err" "-e 64GiB does not fit in memory here" &&
			grep -q 'here (\([01]\.[0-9]\|2\.0\) GiB available to 2 ranks' "$tmp/err" &&
			awk '/^ /{ n++; if ($9 != 0 || $1 > 134217728 || $1 < 1048576) bad = 1 } END { exit bad || n != 1 }' \
				"$tmp/out" && ok coll-capped-cgroup || bad "coll-capped-cgroup: $(cat "$tmp/err" "$tmp/out")"; }
	rmdir "$cg" 2>/dev/null && cg=""
else
	run coll-capped 0 "$F" probe --local 2 -b 64G -e 64G -n 1 -w 0 && {
		has "$tmp/err" "-e 64GiB does not fit in memory here" && has "$tmp/err" "sizes capped at" &&
			awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok coll-capped ||
			bad "coll-capped: $(cat "$tmp/err" "$tmp/out")"; }
fi

# a sweep whose factor steps over -e is not capped (its last size fits)
run coll-not-capped 0 "$F" probe --local 2 -b 1K -e 16M -f 16 -n 1 -w 0 -c 0 && {
	! has "$tmp/err" "does not fit" && has "$tmp/out" "maxBytes 16777216" && ok coll-not-capped ||
		bad "coll-not-capped: $(cat "$tmp/err")"; }

# -- a hostile peer (tests/tools/fab_peer) on loopback --
P=${BUILD:-build}/tests/fab_peer
TOK=c0ffee5eed
# start0 ARGS...: rank 0 of 2 launcher-style in the background, a fresh port
start0() {
	port=$((port + 1))
	RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=$TOK \
		"$F" probe "$@" >"$tmp/o0" 2>"$tmp/e0" &
	p0=$!
	pids="$pids $p0"
}
rank1() {
	FABSCOPE_TOKEN=$TOK "$F" probe --rank 1 --size 2 --master 127.0.0.1:$port "$@" >"$tmp/o1" 2>"$tmp/e1"
}
if [ -x "$P" ]; then
	# three callers that say nothing, garbage and a wrong token: refused
	# each on its own clock, and the rightful rank 1 joins at once
	start0 -b 4K -e 4K -n 1 --timeout 20
	"$P" $port $TOK silent 3 15 &
	pids="$pids $!"
	"$P" $port $TOK garbage
	"$P" $port wrongtoken join 1 2 7 0
	sleep 0.3
	t0=$(now_ms)
	rank1 -b 4K -e 4K -n 1
	r1=$?
	wait "$p0"
	r0=$?
	dt=$(($(now_ms) - t0))
	if [ $r0 -eq 0 ] && [ $r1 -eq 0 ] && [ $dt -lt 4000 ] && has "$tmp/e0" "without the job token"; then
		ok "hostile-callers-refused (rank 1 joined and ran in $dt ms)"
	else
		bad "hostile-callers-refused: exit $r0/$r1 after $dt ms: $(cat "$tmp/e0" "$tmp/e1")"
	fi
	# silent callers until the timeout: the message counts the refusals
	start0 -b 4K -e 4K -n 1 --timeout 2
	"$P" $port $TOK silent 2 8 &
	pids="$pids $!"
	wait "$p0"
	r0=$?
	if [ $r0 -eq 4 ] && has "$tmp/e0" "1 of 2 ranks joined in 2 s (missing: 1); 2 connections refused"; then
		ok hostile-silent-named
	else
		bad "hostile-silent-named: exit $r0: $(cat "$tmp/e0")"
	fi
	# a joined rank (it has the token) that misbehaves: rank 0 fails
	# cleanly, naming it, at once; no crash
	for case in "plan-huge 5 0xffffffff 5 1 5 2" "abort 6 0" "go 2 0" "turn 9 3"; do
		set -- $case
		name=$1
		shift
		start0 -b 4K -e 4K -n 1 --conns 1 --timeout 10
		t0=$(now_ms)
		"$P" $port $TOK join 1 2 "$@"
		wait "$p0"
		r0=$?
		dt=$(($(now_ms) - t0))
		if [ $r0 -eq 4 ] && [ $dt -lt 8000 ] && has "$tmp/e0" "rank1@127.0.0.1 sent a control frame it may not send"; then
			ok "hostile-ctrl-$name"
		else
			bad "hostile-ctrl-$name: exit $r0 after $dt ms: $(cat "$tmp/e0")"
		fi
	done
	# data frames whose header names no step of the operation, or its step
	# with a length that is not its own (0xffffffff)
	for case in "len 0 0xffffffff" "step 0xfffffff0 4096"; do
		set -- $case
		start0 -b 4K -e 4K -n 1 --conns 1 --timeout 10
		"$P" $port $TOK data 1 2 "$2" "$3"
		wait "$p0"
		r0=$?
		if [ $r0 -eq 4 ] && has "$tmp/e0" "rank1@127.0.0.1 sent a message for no step of this operation"; then
			ok "hostile-data-$1"
		else
			bad "hostile-data-$1: exit $r0: $(cat "$tmp/e0")"
		fi
	done
	# a rank number outside the job, then the same rank twice
	start0 -b 4K -e 4K -n 1 --timeout 10
	"$P" $port $TOK join 5 2 7 0
	wait "$p0"
	r0=$?
	[ $r0 -eq 4 ] && has "$tmp/e0" "says it is rank 5 of a job of 2 ranks" && ok hostile-rank-outside ||
		bad "hostile-rank-outside: exit $r0: $(cat "$tmp/e0")"
	port=$((port + 1))
	RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=$TOK \
		"$F" probe -b 4K -e 4K -n 1 --timeout 10 >"$tmp/o0" 2>"$tmp/e0" &
	p0=$!
	"$P" $port $TOK join 1 3 7 0 &
	"$P" $port $TOK join 1 3 7 0
	wait "$p0"
	r0=$?
	[ $r0 -eq 4 ] && has "$tmp/e0" "two processes say they are rank 1" && ok hostile-rank-twice ||
		bad "hostile-rank-twice: exit $r0: $(cat "$tmp/e0")"
	# told NAME SIZE0 RANK SIZE WANT [IMPOSTOR]: rank 0 of a job of SIZE0,
	# the impostor (fab_peer join RANK SIZE) first where one is named, then
	# a rightful process as RANK of SIZE, which must hear WANT, why rank 0
	# gave up the rendezvous, not only that it failed
	told() {
		port=$((port + 1))
		RANK=0 WORLD_SIZE=$2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=$TOK \
			"$F" probe -b 4K -e 4K -n 1 --timeout 10 >"$tmp/o0" 2>"$tmp/e0" &
		p0=$!
		[ -n "${6:-}" ] && "$P" $port $TOK join "$3" "$4" 7 0 &
		sleep 0.5
		RANK=$3 WORLD_SIZE=$4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=$TOK \
			"$F" probe -b 4K -e 4K -n 1 --timeout 10 >"$tmp/o1" 2>"$tmp/e1"
		r1=$?
		wait "$p0"
		[ $r1 -eq 4 ] && has "$tmp/e1" "rank $3: rank 0 gave up the rendezvous: $5" && ok "$1" ||
			bad "$1: exit $r1: $(cat "$tmp/e1")"
	}
	# an impostor holding the token takes rank 1's place first
	told hostile-impostor-told 3 1 3 "two processes say they are rank 1" impostor
	# a process that counts more ranks than rank 0 (launchers' sizes
	# differ), though it waits for a longer table
	told hostile-sizes-told 2 2 3 "a process gave a rank outside the job"
else
	bad "hostile peer tool $P not built"
fi

# every listener binds the advertised address, never the wildcard: rank 0
# waiting for rank 1 listens (rendezvous and data) on 127.0.0.1 only
start0 -b 4K -e 4K -n 1 --timeout 20
sleep 0.5
inodes=$(ls -l /proc/$p0/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
listen=$(awk -v want=" $inodes " '$4 == "0A" && index(want, " " $10 " ") { print $2 }' /proc/net/tcp /proc/net/tcp6)
rank1 -b 4K -e 4K -n 1
wait "$p0"
if [ "$(echo "$listen" | wc -w)" -eq 2 ] && ! echo "$listen" | grep -qv '^0100007F:'; then
	ok "listeners-bound ($(echo $listen))"
else
	bad "listeners-bound: rank 0 listens on: $listen"
fi

# the job token: required outside --local, 8 characters at least
run token-missing 2 env -u FABSCOPE_TOKEN -u SLURM_JOB_ID -u PMIX_NAMESPACE -u OMPI_MCA_ess_base_jobid \
	-u TORCHELASTIC_RUN_ID RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$F" probe &&
	{ has "$tmp/err" "no job token: set FABSCOPE_TOKEN" && ok token-missing || bad "token-missing: $(cat "$tmp/err")"; }
run token-short 2 env FABSCOPE_TOKEN=5eed RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$F" probe &&
	{ has "$tmp/err" "FABSCOPE_TOKEN: at least 8 characters" && ok token-short || bad "token-short: $(cat "$tmp/err")"; }
run master-unresolved 2 env FABSCOPE_TOKEN=$TOK RANK=0 WORLD_SIZE=2 MASTER_ADDR= MASTER_PORT=1 "$F" probe &&
	{ has "$tmp/err" "cannot resolve" && ok master-unresolved || bad "master-unresolved: $(cat "$tmp/err")"; }
# under Slurm without MASTER_ADDR/PORT or a token: the master is the step's
# first node (a host name, resolved), the port and token come from the job id
job=$((100000 + $$ % 50000))
for r in 1 0; do
	env -u FABSCOPE_TOKEN -u MASTER_ADDR -u MASTER_PORT -u RANK -u WORLD_SIZE SLURM_PROCID=$r SLURM_NTASKS=2 \
		SLURM_JOB_ID=$job SLURM_STEP_ID=3 SLURM_STEP_NODELIST='localhost,node[02-04]' \
		"$F" probe -b 4K -e 4K -n 1 --timeout 20 --json "$tmp/s.json" >"$tmp/s$r" 2>"$tmp/se$r" &
	eval "s$r=$!"
done
wait "$s0"
r0=$?
wait "$s1"
r1=$?
if [ $r0 -eq 0 ] && [ $r1 -eq 0 ] && has "$tmp/s.json" '"launcher": "srun (Slurm)"'; then
	ok slurm-master-from-nodelist
else
	bad "slurm-master-from-nodelist: exit $r0/$r1: $(cat "$tmp/se0" "$tmp/se1")"
fi

# a rank stopped (SIGSTOP) under the local launcher: the job fails by the
# timeout, and the launcher kills what is left and returns
"$F" probe --local 3 -b 64K -e 64M -f 2 -n 20 -c 0 --timeout 2 >"$tmp/ol" 2>"$tmp/el" &
pl=$!
pids="$pids $pl"
sleep 1.5
kids=$(for d in /proc/[0-9]*; do
	awk -v p="$pl" '/^PPid:/ { if ($2 == p) print FILENAME }' "$d/status" 2>/dev/null
done | sed 's,/proc/\([0-9]*\)/status,\1,' | sort -n)
victim=$(echo "$kids" | tail -1)
t0=$(now_ms)
[ -n "$victim" ] && kill -STOP "$victim"
wait "$pl"
rl=$?
dt=$(($(now_ms) - t0))
sleep 0.2
left=0
for k in $kids; do kill -0 "$k" 2>/dev/null && left=$((left + 1)); done
if [ -n "$victim" ] && [ $rl -eq 4 ] && [ $dt -lt 10000 ] && [ $left -eq 0 ]; then
	ok "local-launcher-sigstop (out in $dt ms, no rank left)"
else
	bad "local-launcher-sigstop: victim '$victim', exit $rl after $dt ms, $left ranks left: $(cat "$tmp/el")"
	for k in $kids; do kill -9 "$k" 2>/dev/null; done
fi

echo "probe: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
