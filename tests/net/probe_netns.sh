#!/bin/sh
# The probe between two hosts: two network namespaces joined by a veth pair,
# one direction shaped by tbf.  Rank 0 in one namespace, rank 1 in the other,
# started torchrun-style (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT).
# Checks: the bandwidth test measures the shaped rate times TCP's goodput
# per wire byte; an AllReduce between the hosts checks its data; the
# latency test gives ordered percentiles within sane bounds.
# Needs root and `ip netns`; prints "skip" otherwise.  Last line:
# "net: N passed, N failed".
F=${1:-./build/fabscope}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
	echo "skip: the namespace tests need root, ip and tc"
	echo "net: 0 passed, 0 failed"
	exit 0
fi
A=fabscope-a-$$
B=fabscope-b-$$
tmp=$(mktemp -d)
cleanup() {
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
	port=$((20000 + $$ % 20000))
	ip netns exec "$B" env RANK=1 WORLD_SIZE=2 MASTER_ADDR=10.199.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed timeout 60 "$F" probe "$@" >"$tmp/out1" 2>"$tmp/err1" &
	p1=$!
	ip netns exec "$A" env RANK=0 WORLD_SIZE=2 MASTER_ADDR=10.199.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed timeout 60 "$F" probe "$@" >"$tmp/out" 2>"$tmp/err0"
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
# 1514-byte frame that tbf counts; the measurement must land within 10 %.
pair bw --test bw -b 1M -e 1M -n 25 -w 2 && {
	awk -v rate=$RATE '/^ /{ got = $6 * 1000; n++ }
		END { want = rate * 1448 / 1514; r = got / want;
		      printf "bw: %.1f Mb/s measured, %.1f Mb/s expected (ratio %.3f)\n", got, want, r;
		      exit !(n == 1 && r > 0.90 && r < 1.10) }' "$tmp/out" && ok bw-shaped || bad bw-shaped; }

# the unshaped direction is not limited by the shaper: rank 1 -> rank 0 is
# what an AllReduce ring also uses, and its data must be right
pair allreduce --test coll -b 256K -e 256K -n 1 -w 0 && {
	awk '/^ /{ n++; if ($9 != 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" && ok allreduce-2hosts || bad allreduce-2hosts; }

# latency over a veth: positive, ordered percentiles, well under 10 ms
pair latency --test latency -n 200 -w 20 && {
	awk '/^ /{ n++; if (!($4 > 0 && $4 <= $6 && $6 <= $7 && $7 <= $8 && $8 <= $9 && $9 < 10000)) bad = 1 }
		END { exit bad || n != 1 }' "$tmp/out" && ok latency-2hosts || bad latency-2hosts; }

echo "net: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
