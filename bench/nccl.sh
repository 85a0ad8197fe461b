#!/bin/sh
# nccl-tests-style AllReduce sweeps on the flow engine (reported, not
# asserted): 1 KiB to 1 GiB by factors of 32, and 8 GiB, with `auto` (NCCL's choice of
# algorithm and protocol), on 16, 128 and 1,024 GPUs of 8-GPU servers with
# one 400G NIC per GPU, rail-optimized and not.  One table row per size:
# time, bus bandwidth and the choice; then each run's wall time.  The table
# in doc/collectives.md comes from here.
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep() { # NAME GPUS SETS...
	name=$1
	gpus=$2
	shift 2
	start=$(date +%s.%N)
	"$F" coll --engine flow -g "$gpus" -b 1K -e 1G -f 32 -w 0 -n 1 --format csv "$@" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; exit 1; }
	"$F" coll --engine flow -g "$gpus" -b 8G -e 8G -w 0 -n 1 --format csv "$@" 2>"$tmp/err" | tail -n +2 >>"$tmp/out" ||
		{ cat "$tmp/err"; exit 1; }
	end=$(date +%s.%N)
	awk -F, -v n="$name" 'NR > 1 { printf "| %s | %s | %.1f | %.1f | %s/%s |\n", n, $1, $6, $8, $9, $10 }' "$tmp/out"
	awk -v n="$name" -v a="$start" -v b="$end" 'BEGIN { printf "  %s: %.1f s\n", n, b - a }' >>"$tmp/walls"
}
echo "| GPUs, fabric | size (B) | time (us) | busbw (GB/s) | auto |"
echo "|---|---|---|---|---|"
sweep "16, rail-optimized" 16 --set topology.rail_optimized=true --set topology.leaves=8 \
	--set topology.servers_per_leaf=2
sweep "16, 2 leaves" 16 --set topology.leaves=2 --set topology.servers_per_leaf=1
sweep "128, rail-optimized" 128 --set topology.rail_optimized=true --set topology.leaves=8 \
	--set topology.servers_per_leaf=16
sweep "128, 4 leaves" 128 --set topology.leaves=4 --set topology.servers_per_leaf=4
sweep "1024, rail-optimized" 1024 --set topology.rail_optimized=true --set topology.leaves=16 \
	--set topology.servers_per_leaf=64 --set topology.radix=256 --set topology.spines=16
sweep "1024, 32 leaves" 1024 --set topology.leaves=32 --set topology.servers_per_leaf=4 \
	--set topology.spines=16 --set topology.links_per_spine=2
echo
echo "wall time per sweep:"
cat "$tmp/walls"
