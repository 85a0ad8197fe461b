#!/bin/sh
# Byte-for-byte regression of result documents across a change that must not
# move any result (a refactoring, an optimisation):
#   sh tests/golden/golden.sh record DIR [FABSCOPE]   before the change
#   sh tests/golden/golden.sh check DIR [FABSCOPE]    after: every file equal
#   sh tests/golden/golden.sh verify [FABSCOPE]       every case's SHA-256
#       against the committed baseline, tests/golden/baseline.sha256 (make
#       test runs it: any change of any result fails it)
#   sh tests/golden/golden.sh bless [FABSCOPE]        rewrites the baseline:
#       only in a commit that changes results on purpose, saying why
# The cases: every example as its README runs it, the benchmark scenarios at
# sizes that run in seconds, both engines and both flow queue models, faults,
# jobs, the matrix, diagnose and its SVG, the probe's documents.  Wall times
# and versions are removed before comparing.  Last line: "golden: N same, N
# differ" (verify: "golden: N passed, N failed").
cd "$(dirname "$0")/../.." || exit 2
mode=$1
base=tests/golden/baseline.sha256
case $mode in
record | check)
	dir=$2
	F=${3:-./build/fabscope}
	mkdir -p "$dir"
	;;
verify | bless)
	F=${2:-./build/fabscope}
	;;
*)
	echo "usage: golden.sh record|check DIR [FABSCOPE] | verify|bless [FABSCOPE]" >&2
	exit 2
	;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0
differ=0
# case NAME CMD...: stdout of the command (stderr kept apart), and every
# file it writes under $tmp/o
case_() {
	name=$1
	shift
	rm -rf "$tmp/o"
	"$@" >"$tmp/stdout" 2>"$tmp/stderr"
	echo "exit $?" >>"$tmp/stdout"
	{
		cat "$tmp/stdout"
		echo "== stderr"
		grep -v 'events in\|wall' "$tmp/stderr"
		if [ -d "$tmp/o" ]; then
			for f in $(cd "$tmp/o" && ls); do echo "== $f"; cat "$tmp/o/$f"; done
		fi
	} | grep -v '"wall_s"\|"version"\|"generated"\|wall time\|"fabscope_version"' >"$tmp/now"
	if [ "$mode" = bless ]; then
		echo "$(sha256sum <"$tmp/now" | cut -d' ' -f1)  $name" >>"$tmp/blessed"
	elif [ "$mode" = verify ]; then
		want=$(awk -v n="$name" '$2 == n { print $1 }' "$base")
		if [ "$(sha256sum <"$tmp/now" | cut -d' ' -f1)" = "$want" ]; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			if [ -n "$want" ]; then
				echo "FAIL: golden case $name: its output is not the baseline's (to see what moved: golden.sh record DIR at the baseline's commit, then golden.sh check DIR)"
			else
				echo "FAIL: golden case $name: not in the baseline"
			fi
		fi
	elif [ "$mode" = record ]; then
		cp "$tmp/now" "$dir/$name"
	elif cmp -s "$tmp/now" "$dir/$name"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "differ: $name"
		diff "$dir/$name" "$tmp/now" | head -10
	fi
}
O="--out $tmp/o -q"
X=examples
case_ default-text "$F" sim
case_ default-json "$F" sim --format json --set fabric.series_interval=20us
case_ default-csv "$F" sim --format csv
case_ default-seed5 "$F" sim --format json --seed 5
case_ default-flow "$F" sim --format json --engine flow
case_ default-flow-fifo "$F" sim --format json --engine flow --set flow.queues=fifo
# fluid PFC: pauses at static thresholds, and at dynamic ones in a buffer
# that barely covers the headroom
case_ default-flow-dcqcn "$F" sim --format json --engine flow --set flow.queues=dcqcn
case_ default-flow-dcqcn-dyn "$F" sim --format json --engine flow --set flow.queues=dcqcn \
	--set fabric.pfc.threshold=dynamic --set fabric.buffer=4MiB
case_ default-pcie "$F" sim --format json --set topology.pcie_rate=300Gbps
case_ default-nodcqcn "$F" sim --format json --set fabric.dcqcn.enabled=false
case_ default-lossy "$F" sim --format json --set fabric.pfc.enabled=false --set fabric.buffer=2MiB
case_ default-nicpause "$F" sim --format json --set fabric.pfc.nic_rx_drain=100Gbps
case_ autoneg-matrix "$F" matrix $X/autoneg-downgrade/scenario.yaml $O
cp "$tmp/o/result.json" "$tmp/autoneg.json"
case_ autoneg-diagnose "$F" diagnose "$tmp/autoneg.json" --svg "$tmp/o.svg"
case_ ecmp-pol "$F" sim $X/ecmp-polarization/scenario.yaml $O
case_ ecmp-pol-off "$F" sim $X/ecmp-polarization/scenario.yaml --set fabric.ecmp.same_hash=false --format json
case_ loose-cable "$F" sim $X/loose-cable/scenario.yaml --format json
case_ loose-cable-matrix "$F" matrix $X/loose-cable/scenario.yaml $O
case_ overlap "$F" sim $X/overlap/scenario.yaml --format json
case_ overlap-on "$F" sim $X/overlap/scenario.yaml --set jobs.0.overlap=true --format json
case_ oversub-rank "$F" coll $X/oversubscription/scenario.yaml --ring-order rank --format json
case_ oversub-2to1 "$F" coll $X/oversubscription/scenario.yaml --ring-order rank --set topology.oversubscription=2:1
case_ oversub-topo "$F" coll $X/oversubscription/scenario.yaml --ring-order topology
case_ pfc-storm "$F" matrix $X/pfc-storm/scenario.yaml $O
case_ pfc-storm-sim "$F" sim $X/pfc-storm/scenario.yaml --format json
case_ ring-vs-tree "$F" coll $X/ring-vs-tree/scenario.yaml --gpus 16 --algo tree -b 4K -e 16M
case_ ring-vs-tree-auto "$F" coll $X/ring-vs-tree/scenario.yaml --gpus 32 -b 4K -e 4M --format json
case_ tree-queues "$F" coll $X/tree-queues/scenario.yaml
case_ tree-queues-flow "$F" coll $X/tree-queues/scenario.yaml --engine flow
case_ tree-queues-fifo "$F" coll $X/tree-queues/scenario.yaml --engine flow --set flow.queues=fifo
case_ two-jobs "$F" sim $X/two-jobs/scenario.yaml --format json
case_ two-jobs-apart "$F" sim $X/two-jobs/scenario.yaml --set jobs.1.start=1s --format json
case_ perm-128 "$F" sim bench/permutation-128.yaml --format json --set traffic.generators.0.bytes=4MiB
case_ coll-128 "$F" coll bench/coll-allreduce-128.yaml -b 16M -e 16M --format json
case_ coll-128-flow "$F" coll bench/coll-allreduce-128.yaml --engine flow --format json
case_ coll-128-steps "$F" coll bench/coll-allreduce-128.yaml --engine flow --set flow.ring=steps -b 16M -e 16M
case_ flow-16k "$F" coll bench/flow-16k.yaml --engine flow -b 64M -e 64M
for a in "ring allreduce" "hierarchical allreduce" "direct alltoall" "tree allreduce" "rhd allreduce"; do
	set -- $a
	case_ "c256-$1-flow" "$F" coll bench/compare-256.yaml -a "$1" --op "$2" -b 4M -e 4M --engine flow
	case_ "c256-$1-fifo" "$F" coll bench/compare-256.yaml -a "$1" --op "$2" -b 4M -e 4M --engine flow --set flow.queues=fifo
	case_ "c256-$1-pkt" "$F" coll bench/compare-256.yaml -a "$1" --op "$2" -b 1M -e 1M
done
for op in allgather reducescatter broadcast reduce sendrecv alltoall; do
	case_ "coll-$op" "$F" coll --op "$op" -b 1K -e 4M --format json
done
case_ coll-debug "$F" coll -g 16 -b 1M -e 1M --debug
case_ faults "$F" sim tests/golden/faults.yaml --format json
case_ faults-wd "$F" sim tests/golden/faults.yaml --format json --set fabric.pfc.watchdog=20us
case_ faults-csv "$F" sim tests/golden/faults.yaml --format csv
case_ watchdog "$F" sim $X/pfc-storm/scenario.yaml --format json --set fabric.pfc.watchdog=100us
case $mode in
record) echo "golden: recorded in $dir" ;;
bless)
	mv "$tmp/blessed" "$base"
	echo "golden: $(wc -l <"$base") cases blessed in $base"
	;;
verify)
	n=$(wc -l <"$base")
	[ $((same + differ)) -eq "$n" ] || {
		echo "FAIL: the baseline has $n cases, the script ran $((same + differ))"
		differ=$((differ + 1))
	}
	echo "golden: $same passed, $differ failed"
	;;
*) echo "golden: $same same, $differ differ" ;;
esac
[ "$differ" -eq 0 ]
