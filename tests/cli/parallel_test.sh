#!/bin/sh
# The packet engine split over threads (run.threads, --threads): every
# output file of every scenario here is byte for byte the one thread's, for
# 2, 3 and 4 threads and partitions from 2 to one a NIC (run.partitions):
# a fat tree under Poisson traffic with incast and PFC,
# a lossy run with go-back-N recovery, TCP beside RoCE, InfiniBand's
# credits, adaptive routing, a run stopped by run.end, the built-in
# scenario.  What acts across the fabric at no delay (jobs, faults, series,
# collectives, the flow engine) is refused with run.threads named.
# Usage: parallel_test.sh path/to/fabscope.  Last line: "parallel: N passed, N failed".
F=${1:-./build/fabscope}
case $F in /*) ;; *) F=$(pwd)/$F ;; esac
# as many threads as asked, busy cores or not (a run keeps to the free
# ones otherwise, and with one it is the plain run)
export FABSCOPE_THREADS_EXACT=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

# fat tree k=4: 16 NICs in 4 pods; FB_Hadoop at 60% with incast, PFC on
cat >fat.yaml <<'Y'
topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1}
fabric: {buffer: 2MiB}
traffic:
  generators:
    - {kind: poisson, cdf: fb_hadoop, load: 0.6, duration: 300us,
       incast_load: 0.05, incast_senders: 8, incast_bytes: 200KB}
Y
# no PFC and a small buffer: drops, NAKs, timeouts
cat >lossy.yaml <<'Y'
topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1}
fabric: {buffer: 256KiB, pfc: {enabled: false}, nic: {rto: 200us}}
traffic:
  generators:
    - {kind: incast, senders: 12, dst: 0, bytes: 512KiB}
    - {kind: permutation, bytes: 1MiB}
Y
# TCP (lossy, priority 1) beside RoCE
cat >tcp.yaml <<'Y'
topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, spines: 2}
traffic:
  flows:
    - {src: 0, dst: 5, bytes: 2MiB, transport: tcp, priority: 1}
    - {src: 1, dst: 5, bytes: 2MiB}
    - {src: 6, dst: 2, bytes: 1MiB, transport: tcp, priority: 1, start: 20us}
    - {src: 7, dst: 3, bytes: 3MiB, qps: 4}
Y
cat >ib.yaml <<'Y'
topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, spines: 2}
fabric: {transport: ib}
traffic:
  generators:
    - {kind: incast, senders: 6, dst: 0, bytes: 1MiB}
    - {kind: permutation, bytes: 512KiB}
Y
cat >adaptive.yaml <<'Y'
topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, spines: 4}
fabric: {ecmp: {adaptive: true}}
traffic:
  generators:
    - {kind: permutation, bytes: 2MiB, qps: 2}
Y

same() { # NAME SCENARIO [--set ...]: --out of 1 thread against 2, 3, 4 (the
	# default partitions, 8 a thread up to one a NIC), 2 threads on 2
	# partitions and on 5, 4 threads on 3, 3 on 1,024 (one a NIC)
	name=$1
	shift
	run "$name-1" 0 "$F" sim "$@" --out one -q || return
	for n in 2 3 4 2p2 2p5 4p3 3p1024; do
		rm -rf many
		parts=0
		case $n in *p*) parts=${n#*p} ;; esac
		run "$name-$n" 0 "$F" sim "$@" --threads ${n%p*} --set run.partitions=$parts --out many -q || continue
		if diff -r -x .fabscope-files one many >/dev/null; then
			ok "$name-$n"
		else
			bad "$name-$n: $(diff -r -x .fabscope-files one many | head -5)"
		fi
	done
	rm -rf one many
}

# threads that give a core back mid-run, and take it again (forced at a
# window: the looks at CPU and idle time decide it on a shared machine): 4
# threads, then 1 from window 20 or 300; 3 then 1 on the lossy run; 1 from
# window 20, then back to 2, 3 and 4 from window 200 and 400; the same
# files as 1 thread
shrunk() { # NAME AT GROW THREADS SCENARIO (GROW: "" for none)
	name=$1 at=$2 grow=$3 th=$4
	shift 4
	"$F" sim "$@" --out one -q
	rm -rf many
	run "$name" 0 env FABSCOPE_THREADS_SHRINK_AT="$at" FABSCOPE_THREADS_GROW_AT="$grow" "$F" sim "$@" \
		--threads "$th" --out many -q &&
		{ diff -r -x .fabscope-files one many >/dev/null && ok "$name" || bad "$name: $(diff -r -x .fabscope-files one many | head -5)"; }
	rm -rf one many
}
shrunk shrink-fat-20 20 "" 4 fat.yaml
shrunk shrink-fat-300 300 "" 4 fat.yaml
shrunk shrink-lossy-50 50 "" 3 lossy.yaml
shrunk shrink-grow-fat 20 200 4 fat.yaml
shrunk shrink-grow-lossy 20 400 3 lossy.yaml

# a run too short to pay for its threads keeps to one (the lossy run: 12
# x 512 KiB and 16 x 1 MiB, some 0.1 M events); the speed line says when
# a run took more (here as many as asked)
run short-one-thread 0 env -u FABSCOPE_THREADS_EXACT "$F" sim lossy.yaml --threads 2 &&
	{ has "$tmp/err" " events in " && ! has "$tmp/err" "threads" && ok short-one-thread ||
		bad "short-one-thread: $(tail -1 "$tmp/err")"; }
run speed-line-threads 0 "$F" sim lossy.yaml --threads 2 &&
	{ has "$tmp/err" "; the run on 2 threads" && ok speed-line-threads ||
		bad "speed-line-threads: $(tail -1 "$tmp/err")"; }

same fat fat.yaml
same lossy lossy.yaml
same tcp tcp.yaml
same ib ib.yaml
same adaptive adaptive.yaml
same stopped fat.yaml --set run.end=120us
same default

# Over processes (--ranks): N ranks started here with the torchrun-style
# variables, rank 0 writing; every file as one process writes it, and the
# other ranks print and write nothing
port=$(port_base $$)
ranks_same() { # NAME N SCENARIO [--set ...]
	name=$1
	nr=$2
	shift 2
	run "$name-1" 0 "$F" sim "$@" --out one -q || return
	port=$((port + 1))
	rm -rf many other
	r=1
	while [ "$r" -lt "$nr" ]; do
		RANK=$r WORLD_SIZE=$nr MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_TOKEN=ranks-test-token \
			"$F" sim "$@" --ranks --out other >"other$r.out" 2>&1 &
		r=$((r + 1))
	done
	run "$name-r$nr" 0 env RANK=0 WORLD_SIZE=$nr MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=ranks-test-token "$F" sim "$@" --ranks --out many -q
	rc=$?
	wait
	[ "$rc" -eq 0 ] || return
	if diff -r -x .fabscope-files one many >/dev/null && [ ! -e other ] && ! [ -s other1.out ]; then
		ok "$name-r$nr"
	else
		bad "$name-r$nr: $(diff -r -x .fabscope-files one many 2>&1 | head -5) $(head -c 200 other1.out)"
	fi
	rm -rf one many other*
}
ranks_same fat 2 fat.yaml
ranks_same fat 3 fat.yaml
ranks_same lossy 2 lossy.yaml
ranks_same tcp 3 tcp.yaml
ranks_same ib 2 ib.yaml
ranks_same adaptive 2 adaptive.yaml
ranks_same stopped 2 fat.yaml --set run.end=120us
ranks_same default 2

# under Open MPI's mpirun (Debian's openmpi-bin), as a user would start it
if command -v mpirun >/dev/null; then
	"$F" sim fat.yaml --out one -q
	port=$((port + 1))
	run ranks-mpirun 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=false \
		MASTER_ADDR=127.0.0.1 MASTER_PORT=$port mpirun --oversubscribe -np 2 -x MASTER_ADDR -x MASTER_PORT \
		"$F" sim fat.yaml --ranks --out many -q && {
		diff -r -x .fabscope-files one many >/dev/null && ok ranks-mpirun || bad "ranks-mpirun: $(diff -r -x .fabscope-files one many | head -5)"; }
	rm -rf one many
else
	echo "skip: ranks-mpirun (no mpirun: Debian's openmpi-bin)"
fi

# the split run is a real one: the lossy run recovered, the stopped one stopped
"$F" sim lossy.yaml --threads 2 --format json >l.json 2>/dev/null
python3 - l.json <<'P' && ok lossy-recovered || bad "lossy-recovered: $(head -c 300 l.json)"
import json, sys
d = json.load(open(sys.argv[1]))["summary"]
assert d["drops"] > 0 and d["timeouts"] + d.get("retx_pkts", 0) > 0, d
assert d["flows_done"] == d["flows"], d
P
"$F" sim fat.yaml --threads 3 --set run.end=120us --format json >s.json 2>/dev/null
python3 - s.json <<'P' && ok stopped-at-end || bad "stopped-at-end: $(head -c 300 s.json)"
import json, sys
d = json.load(open(sys.argv[1]))["summary"]
assert d["stopped_by_end_time"] and d["sim_time_ps"] == 120000000, d
P

# refused, with the key named
cat >job.yaml <<'Y'
topology: {leaves: 1, servers_per_leaf: 2, spines: 1}
jobs:
  - {name: j, gpus: 16, iterations: 1, compute: 10us, gradient_bytes: 1MiB}
Y
run refuse-jobs 3 "$F" sim job.yaml --threads 2 && has "$tmp/err" "run.threads: jobs run on one thread" &&
	ok refuse-jobs || bad "refuse-jobs: $(head -c 300 "$tmp/err")"
run refuse-series 3 "$F" sim fat.yaml --threads 2 --set fabric.series_interval=10us &&
	has "$tmp/err" "run.threads: time series" && ok refuse-series || bad "refuse-series: $(head -c 300 "$tmp/err")"
run refuse-flow 3 "$F" sim fat.yaml --threads 2 --engine flow && has "$tmp/err" "the flow engine" &&
	ok refuse-flow || bad "refuse-flow: $(head -c 300 "$tmp/err")"
run refuse-coll 3 "$F" coll --set run.threads=2 -b 1M -e 1M && has "$tmp/err" "run.threads: collectives" &&
	ok refuse-coll || bad "refuse-coll: $(head -c 300 "$tmp/err")"
run refuse-range 3 "$F" sim fat.yaml --threads 0 && has "$tmp/err" "run.threads" &&
	ok refuse-range || bad "refuse-range: $(head -c 300 "$tmp/err")"

# --ranks refused: no launcher (usage), what a rank cannot split (the key
# named), more ranks than NICs; a rank that never comes fails rank 0 in time
run ranks-no-launcher 2 env -u RANK -u WORLD_SIZE "$F" sim fat.yaml --ranks &&
	has "$tmp/err" "no rank and size from a launcher" && ok ranks-no-launcher ||
	bad "ranks-no-launcher: $(head -c 300 "$tmp/err")"
run ranks-refuse-jobs 3 env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 FABSCOPE_TOKEN=ranks-test-token \
	"$F" sim job.yaml --ranks && has "$tmp/err" "--ranks: jobs run in one process" && ok ranks-refuse-jobs ||
	bad "ranks-refuse-jobs: $(head -c 300 "$tmp/err")"
run ranks-refuse-partitions 3 env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 \
	FABSCOPE_TOKEN=ranks-test-token "$F" sim fat.yaml --set run.partitions=4 --ranks &&
	has "$tmp/err" "run.partitions (one partition a rank)" && ok ranks-refuse-partitions ||
	bad "ranks-refuse-partitions: $(head -c 300 "$tmp/err")"
run ranks-too-many 3 env RANK=0 WORLD_SIZE=17 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 FABSCOPE_TOKEN=ranks-test-token \
	"$F" sim fat.yaml --ranks && has "$tmp/err" "17 ranks for 16 NICs" && ok ranks-too-many ||
	bad "ranks-too-many: $(head -c 300 "$tmp/err")"
run ranks-master 2 env RANK=0 WORLD_SIZE=2 FABSCOPE_TOKEN=ranks-test-token "$F" sim fat.yaml --ranks --master nowhere &&
	has "$tmp/err" "--master: expected HOST:PORT" && ok ranks-master || bad "ranks-master: $(head -c 300 "$tmp/err")"
port=$((port + 1))
run ranks-alone 4 env RANK=0 WORLD_SIZE=2 FABSCOPE_TOKEN=ranks-test-token \
	"$F" sim fat.yaml --ranks --master 127.0.0.1:$port --timeout 2 --out alone && has "$tmp/err" "1 of 2 ranks joined" &&
	[ ! -e alone ] && ok ranks-alone || bad "ranks-alone: $(head -c 300 "$tmp/err")"

echo "parallel: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
