#!/bin/sh
# The probe against the reference tools, side by side in one run on
# loopback (reported, not asserted):
#  - AllReduce bus bandwidth, 4 ranks, 1 MiB .. 256 MiB: fabscope probe vs
#    Open MPI's MPI_Allreduce over TCP (--mca btl tcp,self), from
#    bench/mpi_allreduce.c;
#  - point-to-point bandwidth: fabscope probe --test bw vs iperf3, one
#    connection and two.
# Needs mpicc, mpirun and iperf3 (make bench installs them); skips a
# comparison whose tool is missing.
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'kill $ipid 2>/dev/null; rm -rf "$tmp"' EXIT
ITERS=${ITERS:-5}

if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
	mpicc -O2 -o "$tmp/mpi_allreduce" bench/mpi_allreduce.c || exit 1
	root=""
	[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
	mpirun $root --oversubscribe -np 4 --mca btl tcp,self "$tmp/mpi_allreduce" -b 1048576 -e 268435456 \
		-n "$ITERS" -w 1 >"$tmp/mpi.txt" 2>"$tmp/mpi.err" || { cat "$tmp/mpi.err"; exit 1; }
	"$F" probe --local 4 -b 1M -e 256M -f 2 -n "$ITERS" -w 1 -c 0 >"$tmp/fab.txt" || exit 1
	echo "AllReduce, 4 ranks on loopback, busbw GB/s (fabscope probe vs Open MPI MPI_Allreduce, btl tcp):"
	printf '  %10s  %9s  %9s  %6s\n' "size(B)" "fabscope" "Open MPI" "ratio"
	awk 'FNR == 1 { f++ } /^ / { if (f == 1) m[$1] = $4; else if ($1 in m) {
		r = $8 / m[$1]; printf "  %10d  %9.2f  %9.2f  %6.2f\n", $1, $8, m[$1], r; sf += $8; sm += m[$1]; n++ } }
		END { if (n) printf "  %10s  %9.2f  %9.2f  %6.2f\n", "average", sf / n, sm / n, sf / sm }' \
		"$tmp/mpi.txt" "$tmp/fab.txt"
else
	echo "AllReduce vs MPI: skipped (no mpicc/mpirun; make bench installs openmpi-bin and libopenmpi-dev)"
fi

if command -v iperf3 >/dev/null; then
	port=$((25000 + $$ % 10000))
	iperf3 -s -1 -p $port -B 127.0.0.1 >/dev/null 2>&1 &
	ipid=$!
	sleep 0.5
	echo "point-to-point bandwidth on loopback, Gb/s (fabscope probe --test bw vs iperf3 -t 5):"
	for P in 1 2; do
		[ $P -eq 2 ] && { iperf3 -s -1 -p $port -B 127.0.0.1 >/dev/null 2>&1 & ipid=$!; sleep 0.5; }
		ip=$(iperf3 -c 127.0.0.1 -p $port -t 5 -P $P -f g 2>/dev/null |
			awk '/receiver/ { v = $(NF - 2) } END { print v }')
		fb=$("$F" probe --local 2 --test bw -b 1M -e 1M -t 5 -i 0 -w 100 --conns $P | awk '/^ [0-9]/{ print $4 }')
		awk -v p=$P -v a="$fb" -v b="$ip" 'BEGIN { r = b > 0 ? a / b : 0
			printf "  connections %d: fabscope %.2f, iperf3 %.2f, ratio %.2f\n", p, a, b, r }'
		wait $ipid 2>/dev/null
	done
else
	echo "bw vs iperf3: skipped (no iperf3; make bench installs it)"
fi
