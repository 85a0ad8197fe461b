#!/bin/sh
# The probe between hosts made of network namespaces, each rank started
# torchrun-style (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT) in its own.
# Two hosts on a veth pair, one direction shaped by tbf: the bandwidth test
# measures the shaped rate times TCP's goodput per wire byte; an AllReduce
# between the hosts checks its data; the latency test gives ordered
# percentiles within sane bounds.  Four hosts on a bridge, one link
# downgraded: the matrix and diagnose name it; then an MTU black hole
# between two hosts: the matrix records that pair failed and goes on, and
# diagnose names the path (see below).
# KEEP=DIR keeps the matrix documents, tables and diagnose's outputs there.
# Needs root and `ip netns`; prints "skip" otherwise.  Last line:
# "net: N passed, N failed".
F=${1:-./build/fabscope}
. "$(dirname "$0")/../cli/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
	echo "skip: the namespace tests need root, ip and tc"
	echo "net: 0 passed, 0 failed"
	exit 0
fi
A=fabscope-a-$$
B=fabscope-b-$$
tmp=$(mktemp -d)
cleanup() {
	[ -n "$KEEP" ] && cp "$tmp"/m*.json "$tmp"/diag* "$tmp"/matrix*.txt "$KEEP" 2>/dev/null
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" INT TERM HUP PIPE
if ! ip netns add "$A" 2>/dev/null || ! ip netns add "$B" 2>/dev/null ||
	! ip link add fsa$$ netns "$A" type veth peer name fsb$$ netns "$B" 2>/dev/null; then
	echo "skip: cannot create network namespaces here"
	echo "net: 0 passed, 0 failed"
	exit 0
fi
ip -n "$A" addr add 10.199.0.1/24 dev fsa$$
ip -n "$B" addr add 10.199.0.2/24 dev fsb$$
ip -n "$A" link set fsa$$ up
ip -n "$B" link set fsb$$ up
ip -n "$A" link set lo up
ip -n "$B" link set lo up
RATE=200 # Mbit/s, rank 0 -> rank 1
ip netns exec "$A" tc qdisc add dev fsa$$ root tbf rate ${RATE}mbit burst 64kb latency 100ms

# pair NAME ARGS...: rank 0 in A, rank 1 in B; rank 0's stdout in $tmp/out
pair() {
	name=$1
	shift
	port=$(port_base $$)
	ip netns exec "$B" env RANK=1 WORLD_SIZE=2 MASTER_ADDR=10.199.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe "$@" >"$tmp/out1" 2>"$tmp/err1" &
	p1=$!
	ip netns exec "$A" env RANK=0 WORLD_SIZE=2 MASTER_ADDR=10.199.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe "$@" >"$tmp/out" 2>"$tmp/err0"
	r0=$?
	wait $p1
	r1=$?
	if [ $r0 -ne 0 ] || [ $r1 -ne 0 ]; then
		bad "$name: exit $r0/$r1: $(cat "$tmp/err0" "$tmp/err1" | head -c 300)"
		return 1
	fi
	return 0
}

# Goodput per wire byte: 1448 payload bytes (MSS with timestamps) per
# 1514-byte frame that tbf counts; the average must land within 10 % above
# and 20 % below, the peak (the best 32 MiB window) too: a receive buffer
# read at memory speed must not pass for the link's rate.  (Below: on a
# 2-vCPU machine running the unit tests in the other lane the two ends get
# less CPU than they need; 0.84 to 0.89 seen there, 0.94 to 0.99 alone.)
# Time-based (-t 3 -i 1, as iperf3): three interval lines, each within
# 15 % above and 25 % below.
pair bw --test bw -b 1M -e 1M -t 3 -i 1 -w 2 && {
	awk -v rate=$RATE '/^ [0-9]/{ got = $4 * 1000; peak = $3 * 1000; n++ }
		/^\[ *1\] / && $NF != "sender" && $NF != "receiver" { m++; v = $(NF - 1) * ($NF == "Gbits/sec" ? 1000 : 1)
			r = v / (rate * 1448 / 1514); if (r < 0.75 || r > 1.15) badiv = 1 }
		/^\[ *1\] .* (sender|receiver)$/ { s++ }
		END { want = rate * 1448 / 1514; r = got / want; rp = peak / want
		      printf "bw: %.1f Mb/s measured, peak %.1f, %.1f Mb/s expected (ratio %.3f, peak %.3f), %d intervals\n",
			got, peak, want, r, rp, m
		      exit !(n == 1 && r > 0.80 && r < 1.10 && rp >= r && rp < 1.10 && m == 3 && s == 2 && !badiv) }' "$tmp/out" &&
		ok bw-shaped || bad "bw-shaped: $(cat "$tmp/out")"; }

# the unshaped direction is not limited by the shaper: rank 1 -> rank 0 is
# what an AllReduce ring also uses, and its data must be right
pair allreduce --test coll -b 256K -e 256K -n 1 -w 0 && {
	awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok allreduce-2hosts || bad allreduce-2hosts; }

# latency over a veth: positive, ordered percentiles, well under 10 ms
pair latency --test latency -n 200 -w 20 && {
	awk '/^ [0-9]/{ n++; if (!(NF == 9 && $3 > 0 && $3 <= $5 && $5 <= $8 && $8 <= $9 && $9 <= $4 && $4 < 10000)) bad = 1 }
		END { exit bad || n != 1 }' "$tmp/out" && ok latency-2hosts || bad latency-2hosts; }

# The matrix on four hosts behind a bridge, every link shaped to 1 Gbit/s
# both ways and host 2's to 100 Mbit/s (a port that negotiated down): every
# pair with rank 2
# runs at about the shaped rate, and the matrix names rank 2 slowest, and so
# does diagnose from its result document.  Each direction's ACKs queue
# behind the other direction's data in the same shaper, which costs up to
# ~15 % (0.88 seen under ASan, 1.02 without: tbf's 64 KiB burst passes at
# full speed), and a 2-vCPU machine running ASan's unit tests beside it
# starves the ranks of CPU (0.826 seen), so the window is 0.75 .. 1.1.  The fastest pair of two
# 1 Gbit/s hosts must run at least 3x faster than rank 2's median: the
# stages do not hold it to rank 2's rate (10x apart on the links).  The
# 1 Gbit/s pairs are bound by CPU, not by tbf: 0.06 to 0.09 GB/s without
# ASan; under ASan on a 2-vCPU machine running the unit tests in the other
# lane one pair ran at 0.016 GB/s and the fastest at 0.066.
C=fabscope-c-$$
D=fabscope-d-$$
E=fabscope-e-$$
S=fabscope-s-$$
cleanup3() {
	for ns in "$C" "$D" "$E" "$S"; do ip netns del "$ns" 2>/dev/null; done
	cleanup
}
trap cleanup3 EXIT
if ip netns add "$C" && ip netns add "$D" && ip netns add "$E" && ip netns add "$S" &&
	ip -n "$S" link add br0 type bridge && ip -n "$S" link set br0 up; then
	i=0
	for ns in "$A" "$C" "$D" "$E"; do
		ip link add h$i$$ netns "$ns" type veth peer name p$i$$ netns "$S"
		ip -n "$ns" addr add 10.198.0.$((i + 1))/24 dev h$i$$
		ip -n "$ns" link set h$i$$ up
		ip -n "$S" link set p$i$$ master br0 up
		# every link at 1 Gbit/s both ways, host 2's at 100 Mbit/s
		rate=1000mbit
		[ $i -eq 2 ] && rate=100mbit
		ip netns exec "$ns" tc qdisc add dev h$i$$ root tbf rate $rate burst 64kb latency 100ms
		ip netns exec "$S" tc qdisc add dev p$i$$ root tbf rate $rate burst 64kb latency 100ms
		i=$((i + 1))
	done
	port=$(port_base $(($$ + 7)))
	r=0
	for ns in "$C" "$D" "$E"; do
		r=$((r + 1))
		ip netns exec "$ns" env RANK=$r WORLD_SIZE=4 MASTER_ADDR=10.198.0.1 MASTER_PORT=$port \
			FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe --test matrix -e 2M -n 5 >/dev/null 2>"$tmp/err$r" &
	done
	ip netns exec "$A" env RANK=0 WORLD_SIZE=4 MASTER_ADDR=10.198.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe --test matrix -e 2M -n 5 --json "$tmp/m.json" \
		>"$tmp/out" 2>"$tmp/err0"
	r0=$?
	wait
	if [ $r0 -ne 0 ]; then
		bad "matrix-4hosts: exit $r0: $(cat "$tmp/err0" "$tmp/err1" "$tmp/err2" "$tmp/err3" | head -c 300)"
	else
		# rank 2's median: 100 Mbit/s x 1448/1514 = 0.011955 GB/s
		awk '/^slowest/ { s = 1; next } s == 1 { rank = $2; med = $3; s = 2 }
			/^ +[0-9]+ +(-|[0-9]+\.[0-9]+) / && $1 != 2 {
				for (j = 2; j <= NF; j++) if (j - 2 != 2 && j - 2 != $1 && $j > fast) fast = $j }
			END { r = med / (0.1 * 1448 / 1514 / 8);
			      printf "matrix: slowest rank %s at %.4g GB/s (ratio %.3f to the shaped rate), fastest pair without it %s GB/s\n", rank, med, r, fast;
			      exit !(rank == 2 && r > 0.75 && r < 1.1 && fast > 3 * med) }' "$tmp/out" &&
			ok matrix-4hosts || { cat "$tmp/out"; bad matrix-4hosts; }
		# diagnose reads the document and names rank 2's link first (a
		# pair that stalls elsewhere, a TCP retransmission timeout, is
		# re-tested alone before it is reported, so it does not widen the
		# spread enough to hide rank 2)
		cp "$tmp/out" "$tmp/matrix.txt"
		"$F" diagnose "$tmp/m.json" >"$tmp/diag" 2>&1
		rd=$?
		if [ $rd -eq 1 ] && grep -m1 '^ *1[.)]' "$tmp/diag" | grep -q 'rank2@10.198.0.3'; then
			echo "diagnose: $(grep -m1 '^ *1[.)]' "$tmp/diag")"
			ok diagnose-4hosts
		else
			cat "$tmp/diag"
			bad "diagnose-4hosts: exit $rd"
		fi
	fi

	# An MTU black hole between hosts 1 and 3: both hosts (and host 1's
	# bridge port) are set to 9000-byte frames, host 3's bridge port stays
	# at 1500.  Connections open and small messages pass, but their full
	# frames are dropped, as a jumbo-frame mismatch does on a real switch;
	# with hosts 0 and 2 (1500) TCP agrees on small segments and all is
	# well.  The matrix records that pair failed within --pair-timeout
	# (again when re-tested alone) and goes on; every other pair is
	# measured; diagnose names the path between them first.
	# Linux's bridge forwards a GSO batch of jumbo segments to a 1500-byte
	# port unchecked (is_skb_forwardable passes any GSO skb), so on some
	# kernels most of the pair's data got through and the pair passed.  A
	# switch port drops every frame over its MTU, batched or not: host 3's
	# shapers (its own and its bridge port's) get a 3000-byte peak bucket,
	# which makes tbf drop any frame, or any GSO segment, longer than that.
	if ! ip -n "$C" link set h1$$ mtu 9000 || ! ip -n "$S" link set p1$$ mtu 9000 ||
		! ip -n "$E" link set h3$$ mtu 9000 ||
		! ip netns exec "$E" tc qdisc replace dev h3$$ root tbf rate 1000mbit burst 64kb latency 100ms \
			peakrate 10gbit mtu 3000 ||
		! ip netns exec "$S" tc qdisc replace dev p3$$ root tbf rate 1000mbit burst 64kb latency 100ms \
			peakrate 10gbit mtu 3000; then
		echo "skip: matrix-blackhole (cannot set jumbo frames or the shapers here)"
	else
		port=$((port + 1))
		r=0
		for ns in "$C" "$D" "$E"; do
			r=$((r + 1))
			ip netns exec "$ns" env RANK=$r WORLD_SIZE=4 MASTER_ADDR=10.198.0.1 MASTER_PORT=$port \
				FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe --test matrix -e 1M -n 5 --pair-timeout 2 \
				>/dev/null 2>"$tmp/err$r" &
		done
		t0=$(date +%s)
		ip netns exec "$A" env RANK=0 WORLD_SIZE=4 MASTER_ADDR=10.198.0.1 MASTER_PORT=$port \
			FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe --test matrix -e 1M -n 5 --pair-timeout 2 \
			--json "$tmp/mb.json" >"$tmp/out" 2>"$tmp/err0"
		r0=$?
		wait
		dt=$(($(date +%s) - t0))
		fp=$(tr -d ' \n' <"$tmp/mb.json" | sed -n 's/.*"failed_pairs":\(\[[^]]*\]*\]\).*/\1/p')
		cp "$tmp/out" "$tmp/matrix-blackhole.txt"
		"$F" diagnose "$tmp/mb.json" >"$tmp/diag-blackhole" 2>&1
		rd=$?
		if [ $r0 -eq 0 ] && [ "$fp" = "[[1,3]]" ] && grep -q 'failed pairs.* 1<->3$' "$tmp/out" && [ $dt -lt 20 ] &&
			[ $rd -eq 1 ] && grep -m1 '^ *1[.)]' "$tmp/diag-blackhole" | grep -q 'path between rank1@10.198.0.2 and rank3@10.198.0.4'; then
			echo "blackhole: failed pairs $fp in a $dt s run; diagnose: $(grep -m1 '^ *1[.)]' "$tmp/diag-blackhole")"
			ok matrix-blackhole
		else
			cat "$tmp/out" "$tmp/diag-blackhole" "$tmp/err0"
			bad "matrix-blackhole: exit $r0, diagnose $rd, failed pairs $fp, $dt s"
		fi
	fi
else
	bad "matrix-4hosts: cannot build the bridge"
fi

echo "net: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
