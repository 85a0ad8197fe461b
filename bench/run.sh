#!/bin/sh
# Benchmarks, reported and not asserted: wall time, events, events/s, data
# packets/s and peak RSS for fixed scenarios, plus callgrind's instruction
# count (repeatable on a noisy machine) when valgrind is installed.
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# measure NAME CMD SCENARIO [ARGS...]: one run, its line
measure() {
	name=$1
	cmd=$2
	shift 2
	"$F" $cmd "$@" --out "$tmp/$name" >/dev/null 2>"$tmp/$name.err" || { cat "$tmp/$name.err"; exit 1; }
	line=$(grep 'events in' "$tmp/$name.err")
	events=$(echo "$line" | sed -n 's/^fabscope: \([0-9]*\) events in.*/\1/p')
	wall=$(echo "$line" | sed -n 's/.*events in \([0-9.]*\) s (.*/\1/p')
	whole=$(echo "$line" | sed -n 's/.*the whole command \([0-9.]*\) s wall.*/\1/p')
	rss=$(echo "$line" | sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p')
	pkts=$(grep -m1 '"data_pkts"' "$tmp/$name/result.json" | tr -dc '0-9')
	simt=$(grep -m1 '"sim_time_ps"' "$tmp/$name/result.json" | tr -dc '0-9')
	awk -v n="$name" -v e="$events" -v w="$wall" -v a="$whole" -v r="$rss" -v p="$pkts" -v t="$simt" 'BEGIN {
		printf "%s: %.3f ms simulated in %.3f s wall (%.3f s the whole command); %d events, %.2f M events/s, %.2f M data packets/s, peak RSS %d MiB\n",
			n, t / 1e9, w, a, e, e / w / 1e6, p / w / 1e6, r }'
	if [ "$cmd" = coll ]; then
		grep -v '^#' "$tmp/$name/coll.txt" | sed "s/^/  $name: /"
	fi
}
for s in bench/*.yaml; do
	name=$(basename "$s" .yaml)
	case "$name" in flow-* | compare-*) continue ;; esac # bench/flow.sh runs those
	cmd=sim
	case "$name" in coll-*) cmd=coll ;; esac
	# a collective's cost per operation: one a size (-w 0 -n 1)
	if [ $cmd = coll ]; then measure "$name" coll "$s" -w 0 -n 1; else measure "$name" sim "$s"; fi
done
# the 128-server permutation over each transport (TCP with its CUBIC over
# lossy Ethernet, InfiniBand with credits)
measure permutation-128-tcp sim bench/permutation-128.yaml --set fabric.transport=tcp
measure permutation-128-dctcp sim bench/permutation-128.yaml --set fabric.transport=tcp --set fabric.tcp.cc=dctcp
measure permutation-128-ib sim bench/permutation-128.yaml --set fabric.transport=ib
