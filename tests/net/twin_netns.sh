#!/bin/sh
# The twin on a real (namespace) cluster: six hosts, three under each of
# two leaves (bridges) joined by one link, every host link shaped by tbf to
# 200 Mbit/s both ways, the leaves' link to 100 Mbit/s where the design
# (tests/twin/cluster.yaml) has 600, and host 5's link to 50 Mbit/s.  The
# probe runs its matrix and an AllReduce with one rank per host,
# torchrun-style; calibrate and twin must name the leaves' link and host
# 5's link and nothing else, fit both rates within 10% of the shaping, and
# predict the AllReduce's busbw within 15%.  KEEP=DIR keeps the documents and outputs.
# Needs root and `ip netns`; prints "skip" otherwise.  Last line:
# "twin-net: N passed, N failed".
F=${1:-./build/fabscope}
. "$(dirname "$0")/../cli/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null || ! command -v python3 >/dev/null; then
	echo "skip: the namespace twin needs root, ip, tc and python3"
	echo "twin-net: 0 passed, 0 failed"
	exit 0
fi
tmp=$(mktemp -d)
P=fst$$
cleanup() {
	[ -n "$KEEP" ] && cp "$tmp"/*.json "$tmp"/*.txt "$tmp"/*.yaml "$KEEP" 2>/dev/null
	for n in 0 1 2 3 4 5 L0 L1; do ip netns del $P$n 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" INT TERM HUP PIPE
shape() { ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$3" burst 64kb latency 100ms; }
up() {
	for l in L0 L1; do
		ip netns add $P$l && ip -n $P$l link add br0 type bridge && ip -n $P$l link set br0 up || return 1
	done
	ip link add u0$$ netns ${P}L0 type veth peer name u1$$ netns ${P}L1 || return 1
	ip -n ${P}L0 link set u0$$ master br0 up && ip -n ${P}L1 link set u1$$ master br0 up || return 1
	shape ${P}L0 u0$$ 100mbit && shape ${P}L1 u1$$ 100mbit || return 1
	for i in 0 1 2 3 4 5; do
		l=L$((i / 3))
		rate=200mbit
		[ $i -eq 5 ] && rate=50mbit
		ip netns add $P$i && ip link add h$i$$ netns $P$i type veth peer name p$i$$ netns $P$l &&
			ip -n $P$i addr add 10.196.0.$((i + 1))/24 dev h$i$$ && ip -n $P$i link set h$i$$ up &&
			ip -n $P$i link set lo up && ip -n $P$l link set p$i$$ master br0 up &&
			shape $P$i h$i$$ $rate && shape $P$l p$i$$ $rate || return 1
	done
}
if ! up 2>"$tmp/up.err"; then
	echo "skip: cannot build the namespace cluster here: $(head -c 200 "$tmp/up.err")"
	echo "twin-net: 0 passed, 0 failed"
	exit 0
fi
# probe NAME ARGS...: one rank a host, rank 0's document in $tmp/NAME.json
probe() {
	name=$1
	shift
	port=$(port_base $(($$ + ${#name})))
	for r in 1 2 3 4 5; do
		ip netns exec $P$r env RANK=$r WORLD_SIZE=6 MASTER_ADDR=10.196.0.1 MASTER_PORT=$port \
			FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe "$@" >/dev/null 2>"$tmp/$name.err$r" &
	done
	ip netns exec ${P}0 env RANK=0 WORLD_SIZE=6 MASTER_ADDR=10.196.0.1 MASTER_PORT=$port \
		FABSCOPE_TOKEN=5eed5eed timeout 60 "$F" probe "$@" --json "$tmp/$name.json" >"$tmp/$name.txt" 2>"$tmp/$name.err0"
	r0=$?
	wait
	[ $r0 -eq 0 ] || bad "$name: exit $r0: $(cat "$tmp/$name.err"* | head -c 300)"
	return $r0
}
probe matrix --test matrix -e 1M -n 20 && probe allreduce --test coll -b 2M -e 2M -n 4 -w 1 && {
	"$F" twin tests/twin/cluster.yaml "$tmp/matrix.json" "$tmp/allreduce.json" -o "$tmp/calibrated.yaml" \
		--format json >"$tmp/twin.json" 2>"$tmp/twin.err"
	rc=$?
	"$F" twin tests/twin/cluster.yaml "$tmp/matrix.json" "$tmp/allreduce.json" >"$tmp/twin.txt" 2>&1
	if [ $rc -ne 1 ]; then
		bad "twin: exit $rc: $(head -c 300 "$tmp/twin.err")"
	else
		python3 - "$tmp/twin.json" <<'EOT' && ok twin-names-both || { cat "$tmp/twin.txt"; bad twin-names-both; }
import json, sys
f = json.load(open(sys.argv[1]))
d = {x["target"].split(" (")[0]: x for x in f["departures"]}
# both links within 10% of their shaping
want = {"link of rank5@10.196.0.6": (50e6, 0.9, 1.1), "fabric between leaf0 and leaf1": (100e6, 0.9, 1.1)}
for t, (rate, lo, hi) in want.items():
    got = float(d[t]["fault"]["rate"].replace("Mbps", "")) * 1e6 if t in d else 0
    print("twin: %s fitted at %.1f Mbit/s, shaped at %.0f" % (t, got / 1e6, rate / 1e6))
    assert lo < got / rate < hi, t
assert set(d) == set(want), sorted(d)
EOT
		python3 - "$tmp/twin.json" <<'EOT' && ok twin-predicts-allreduce || { cat "$tmp/twin.txt"; bad twin-predicts-allreduce; }
import json, sys
r = json.load(open(sys.argv[1]))["twin"]["collectives"][0]["rows"][0]
m, p = r["measured_busbw_GBps"], r["predicted_busbw_GBps"]
print("twin: AllReduce 2 MiB busbw %.5f GB/s measured, %.5f predicted (%.3f)" % (m, p, m / p))
assert abs(m / p - 1) < 0.15
EOT
	fi
}
echo "twin-net: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
