#!/bin/sh
# The twin on a real (namespace) cluster: six hosts, three under each of
# two leaves (bridges) joined by one link, every host link shaped by tbf to
# 200 Mbit/s both ways; the leaves' link runs at 100 Mbit/s where the design
# (tests/twin/cluster.yaml) has 600 (a degraded link), and host 5 is slow:
# its small frames (pings, ACKs) leave through a 1 Mbit/s class of an HTB,
# a few hundred microseconds each (a host whose software adds latency; this
# kernel has no netem).  The probe runs its matrix and an AllReduce with one
# rank per host, torchrun-style; calibrate and twin must name the leaves'
# link and host 5 and nothing else, fit the link's rate within 10% of its
# shaping, and predict the AllReduce's busbw within 15%; then the same with
# the probe under Open MPI's mpirun, where it is installed.  KEEP=DIR keeps
# the documents and outputs.  Needs root and `ip netns`; prints "skip"
# otherwise.  Last line: "twin-net: N passed, N failed".
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
		ip netns add $P$i && ip link add h$i$$ netns $P$i type veth peer name p$i$$ netns $P$l &&
			ip -n $P$i addr add 10.196.0.$((i + 1))/24 dev h$i$$ && ip -n $P$i link set h$i$$ up &&
			ip -n $P$i link set lo up && ip -n $P$l link set p$i$$ master br0 up &&
			shape $P$l p$i$$ 200mbit || return 1
		[ $i -eq 5 ] || shape $P$i h$i$$ 200mbit || return 1
	done
	# host 5: frames under 128 bytes through 1 Mbit/s, the rest at 200
	ip netns exec ${P}5 tc qdisc add dev h5$$ root handle 1: htb default 20 r2q 1000 &&
		ip netns exec ${P}5 tc class add dev h5$$ parent 1: classid 1:10 htb rate 1mbit burst 1b cburst 1b &&
		ip netns exec ${P}5 tc class add dev h5$$ parent 1: classid 1:20 htb rate 200mbit burst 64kb &&
		ip netns exec ${P}5 tc filter add dev h5$$ parent 1: protocol ip prio 1 u32 match u16 0 0xff80 at 2 \
			flowid 1:10
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
# probe_mpi NAME ARGS...: the same under Open MPI's mpirun, each rank
# started into its host's namespace (rank and size from mpirun, the token
# from its job id)
probe_mpi() {
	name=$1
	shift
	port=$(port_base $(($$ + 3 + ${#name})))
	printf '#!/bin/sh\nexec ip netns exec %s$OMPI_COMM_WORLD_RANK "$@"\n' "$P" >"$tmp/rank.sh"
	timeout 90 mpirun --allow-run-as-root --oversubscribe -np 6 -x MASTER_ADDR=10.196.0.1 -x MASTER_PORT=$port \
		sh "$tmp/rank.sh" "$F" probe "$@" --json "$tmp/$name.json" >"$tmp/$name.txt" 2>"$tmp/$name.err0"
	r0=$?
	[ $r0 -eq 0 ] || bad "$name: mpirun exit $r0: $(head -c 300 "$tmp/$name.err0")"
	return $r0
}
# twin LABEL MATRIX COLL: twin must name the two departures and nothing
# else, and predict the AllReduce
twin() {
	"$F" twin tests/twin/cluster.yaml "$tmp/$2.json" "$tmp/$3.json" -o "$tmp/calibrated$1.yaml" \
		--format json >"$tmp/twin$1.json" 2>"$tmp/twin$1.err"
	rc=$?
	"$F" twin tests/twin/cluster.yaml "$tmp/$2.json" "$tmp/$3.json" >"$tmp/twin$1.txt" 2>&1
	if [ $rc -ne 1 ]; then
		bad "twin$1: exit $rc: $(head -c 300 "$tmp/twin$1.err")"
		return
	fi
	python3 - "$tmp/twin$1.json" <<'EOT' && ok "twin$1-names-both" || { cat "$tmp/twin$1.txt"; bad "twin$1-names-both"; }
import json, sys
f = json.load(open(sys.argv[1]))
d = {x["target"].split(" (")[0]: x for x in f["departures"]}
assert set(d) == {"fabric between leaf0 and leaf1", "host rank5@10.196.0.6"}, sorted(d)
got = float(d["fabric between leaf0 and leaf1"]["fault"]["rate"].replace("Mbps", "")) * 1e6
print("twin: the leaves' link fitted at %.1f Mbit/s, shaped at 100" % (got / 1e6))
assert 0.9 < got / 100e6 < 1.1
h = d["host rank5@10.196.0.6"]
print("twin: host 5 at %.1f us one way, the hosts' median %.1f us; its link delays by %s" %
      (h["measured_us"], h["expected_us"], h["fault"]["delay"]))
assert h["measured_us"] > 100 and h["ratio"] > 5
EOT
	python3 - "$tmp/twin$1.json" <<'EOT' && ok "twin$1-predicts-allreduce" || { cat "$tmp/twin$1.txt"; bad "twin$1-predicts-allreduce"; }
import json, sys
r = json.load(open(sys.argv[1]))["twin"]["collectives"][0]["rows"][0]
m, p = r["measured_busbw_GBps"], r["predicted_busbw_GBps"]
print("twin: AllReduce 4 MiB busbw %.5f GB/s measured, %.5f predicted (%.3f)" % (m, p, m / p))
assert abs(m / p - 1) < 0.15
EOT
}
probe matrix --test matrix -e 1M -n 20 && probe allreduce --test coll -b 4M -e 4M -n 6 -w 2 &&
	twin "" matrix allreduce
if command -v mpirun >/dev/null; then
	probe_mpi matrix-mpi --test matrix -e 1M -n 20 && probe_mpi allreduce-mpi --test coll -b 4M -e 4M -n 6 -w 2 &&
		twin -mpi matrix-mpi allreduce-mpi
else
	echo "skip: the twin under mpirun (no mpirun)"
fi
echo "twin-net: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
