#!/bin/sh
# The flow engine (reported, not asserted): wall time and peak memory at
# scale, and the time against the packet engine where both run, for one
# operation a size (-w 0 -n 1; nccl-tests' 5 + 20 iterations, coll's
# default, cost three operations on the flow engine, whose rows repeat from
# the third).
#  - 16,384 GPUs, k=32 fat-tree, ring AllReduce 1 GiB (bench/flow-16k.yaml);
#  - with FLOW_131K=1, 131,072 GPUs on a k=64 fat-tree (about 16 s of CPU
#    and 2.2 GiB here, nearly all of it building the communicator and the
#    routes);
#  - 128 GPUs, ring AllReduce 256 MiB (bench/coll-allreduce-128.yaml): both
#    engines, the packet engine as configured and with ECN and PFC off;
#  - 256 GPUs with PCIe at 300 Gbps to 400 Gbps NICs: ring and tree;
#  - 256 GPUs (bench/compare-256.yaml): ring, hierarchical, AllToAll and
#    tree on both engines, the flow engine with fair shares and with FIFO
#    queues (fair shares take about 22 s on the tree: its transfers form one
#    large component, recomputed at every change; FIFO queues take about
#    11 s on the AllToAll: every change at a backed-up port moves all the
#    transfers through it).
F=${1:-./build/fabscope}
run() { # NAME ARGS...: one line with the time column, wall time and peak RSS
	name=$1
	shift
	/usr/bin/time -f "%e %M" "$F" coll -w 0 -n 1 "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	t=$(awk '/^ /{ print $6 }' "$tmp/out")
	set -- $(tail -1 "$tmp/err")
	printf '  %-44s %12s us  %7.2f s wall  %6d MiB peak\n' "$name" "$t" "$1" $(($2 / 1024))
	echo "$t" >"$tmp/$name.t"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "flow engine:"
run flow-16k bench/flow-16k.yaml --engine flow
run flow-16k-fifo bench/flow-16k.yaml --engine flow --set flow.queues=fifo
[ -n "$FLOW_131K" ] && run flow-131k bench/flow-131k.yaml --engine flow
run flow-128 bench/coll-allreduce-128.yaml --engine flow
run flow-128-steps bench/coll-allreduce-128.yaml --engine flow --set flow.ring=steps
run packet-128 bench/coll-allreduce-128.yaml
run packet-128-noecn-nopfc bench/coll-allreduce-128.yaml --set fabric.ecn.enabled=false \
	--set fabric.pfc.enabled=false --set fabric.buffer=4GiB
# 256 GPUs, every engine-independent algorithm: flow against packet (ECN
# and PFC off, deep buffers: the regime the flow model describes)
P="--set fabric.ecn.enabled=false --set fabric.pfc.enabled=false --set fabric.buffer=4GiB --set fabric.nic.rto=100ms"
for a in "ring allreduce 256M" "hierarchical allreduce 256M" "direct alltoall 64M" "tree allreduce 64M"; do
	set -- $a
	run "flow-256-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" --engine flow
	run "fifo-256-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" --engine flow --set flow.queues=fifo
	run "packet-256-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" $P
	awk -v f="$(cat "$tmp/flow-256-$1.t")" -v q="$(cat "$tmp/fifo-256-$1.t")" -v p="$(cat "$tmp/packet-256-$1.t")" \
		-v n="$1 $2" 'BEGIN { printf "  256 GPUs, %s: flow vs packet %+.1f%% (fair), %+.1f%% (fifo)\n", n,
			(f / p - 1) * 100, (q / p - 1) * 100 }'
done
# PCIe below the line rate (300 against 400 Gbps): both engines pace a
# NIC at it
for a in "ring allreduce 256M" "tree allreduce 16M"; do
	set -- $a
	X="--set topology.pcie_rate=300Gbps"
	run "flow-256-pcie-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" --engine flow $X
	run "fifo-256-pcie-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" --engine flow \
		--set flow.queues=fifo $X
	run "packet-256-pcie-$1" bench/compare-256.yaml -a "$1" --op "$2" -b "$3" -e "$3" $P $X
	awk -v f="$(cat "$tmp/flow-256-pcie-$1.t")" -v q="$(cat "$tmp/fifo-256-pcie-$1.t")" \
		-v p="$(cat "$tmp/packet-256-pcie-$1.t")" -v n="$1 $2 $3" 'BEGIN {
		printf "  256 GPUs, PCIe 300 Gbps, %s: flow vs packet %+.1f%% (fair), %+.1f%% (fifo)\n", n,
			(f / p - 1) * 100, (q / p - 1) * 100 }'
done
run fifo-256-direct-batch-1us bench/compare-256.yaml -a direct --op alltoall -b 64M -e 64M --engine flow \
	--set flow.queues=fifo --set flow.batch=1us
awk -v f="$(cat "$tmp/flow-128.t")" -v p="$(cat "$tmp/packet-128.t")" -v q="$(cat "$tmp/packet-128-noecn-nopfc.t")" \
	'BEGIN { printf "  128 GPUs: flow vs packet %+.1f%% (defaults), %+.1f%% (ECN and PFC off)\n", (f / p - 1) * 100, (f / q - 1) * 100 }'
