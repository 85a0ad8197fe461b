#!/bin/sh
# fabscope calibrate and twin against a cluster made in simulation: the
# design of tests/twin/ with two links slowed (a scenario on top of it,
# "base:"), its simulated matrix written as a probe's document; the fit must
# name those two links and nothing else, at their rates (within 5%), and
# the healthy cluster must give no departure.  A link with a delay fault
# (a slow host) adds its delay to its pairs' latency; the twin names that
# host alone and fits its delay within 5%.  Then bad input.
# Last line: "twin: N passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
D=tests/twin
mkdir "$tmp/other"
# the real cluster: the design with host5's link at 50 Mbit/s and the
# leaves' link at 200 (a scenario in another folder: the base's topology
# file stays relative to the base)
cat >"$tmp/other/real.yaml" <<EOT
base: $PWD/$D/cluster.yaml
faults:
  - {kind: degrade, node: host5, peer: leaf1, rate: 50Mbps}
  - {kind: degrade, node: leaf0, peer: leaf1, rate: 200Mbps}
EOT
# probe NAME SCENARIO [RANKS [SET]]: its simulated matrix (with --set SET)
# as a probe's document of RANKS ranks (6)
probe() {
	"$F" matrix "$2" --bytes 1MiB --set matrix.timeout=0 --set "${4:-matrix.nics=all}" --format json >"$tmp/$1.sim" &&
		"$F" probe --local "${3:-6}" --test matrix -e 1M -n 2 --json "$tmp/$1.json" >/dev/null 2>&1 &&
		python3 - "$tmp/$1.sim" "$tmp/$1.json" <<'EOT'
import json, sys
s = json.load(open(sys.argv[1]))["matrix"]
p = json.load(open(sys.argv[2]))
for k in ("bw_GBps", "lat_us", "mode"):
    p["matrix"][k] = s[k]
p["matrix"]["retested"] = []
json.dump(p, open(sys.argv[2], "w"))
EOT
}
if ! command -v python3 >/dev/null; then
	echo "skip: the twin tests need python3"
	echo "twin: 0 passed, 0 failed"
	exit 0
fi
probe real "$tmp/other/real.yaml" && probe healthy $D/cluster.yaml || bad "probe documents"

run calibrate 0 "$F" calibrate $D/cluster.yaml "$tmp/real.json" -o "$tmp/cal.yaml" --format json && {
	python3 - "$tmp/out" <<'EOT' && ok calibrate-names-both || bad "calibrate-names-both: $(cat "$tmp/out" | head -c 600)"
import json, sys
f = json.load(open(sys.argv[1]))
d = {x["target"].split(" (")[0]: x for x in f["departures"]}
want = {"link of rank5@127.0.0.1": 50e6, "fabric between leaf0 and leaf1": 200e6}
assert set(d) == set(want), sorted(d)
for t, rate in want.items():
    got = float(d[t]["fault"]["rate"].replace("Mbps", "")) * 1e6
    assert abs(got / rate - 1) < 0.05, (t, got)
# the healthy pairs at the design's rate: no achievable-rate key
assert abs(f["factor"] - 1) < 0.02, f["factor"]
# and the calibrated scenario gives every pair what it measured
assert f["residuals"]["median_ratio_off"] < 0.02, f["residuals"]
assert not [k for k in f["keys"] if k["key"] == "topology.pcie_rate"], f["keys"]
EOT
}
# the calibrated scenario is a scenario: base, the keys, the faults
has "$tmp/cal.yaml" "base: " && has "$tmp/cal.yaml" "kind: degrade" &&
	run cal-loads 0 "$F" matrix "$tmp/cal.yaml" --set matrix.timeout=0 && ok calibrated-scenario-runs ||
	bad calibrated-scenario-runs
run twin-departs 1 "$F" twin $D/cluster.yaml "$tmp/real.json" && has "$tmp/out" "2 departures" &&
	has "$tmp/out" "fabric between leaf0 and leaf1" && ok twin-departs || bad twin-departs
run twin-healthy 0 "$F" twin $D/cluster.yaml "$tmp/healthy.json" && has "$tmp/out" "0 departures" && ok twin-healthy || bad twin-healthy

# a slower achievable rate everywhere becomes topology.pcie_rate

python3 - "$tmp/healthy.json" "$tmp/slow.json" <<'EOT'
import json, sys
p = json.load(open(sys.argv[1]))
p["matrix"]["bw_GBps"] = [[None if v is None else v * 0.8 for v in r] for r in p["matrix"]["bw_GBps"]]
json.dump(p, open(sys.argv[2], "w"))
EOT
run calibrate-rate 0 "$F" calibrate $D/cluster.yaml "$tmp/slow.json" -o "$tmp/slow.yaml" &&
	grep -q 'pcie_rate: 16[0-9][.0-9]*Mbps' "$tmp/slow.yaml" && has "$tmp/out" "0 departures" &&
	ok calibrate-rate || bad "calibrate-rate: $(cat "$tmp/slow.yaml")"

# the delay fault: a link that adds 100 us each way adds 100 us to the
# one-way latency of every pair through it (half the round trip), within
# 2 us, and nothing to any other pair (within 2 us: a ping that shares the
# leaves' link with the slowed pair's data queues a little differently),
# nor 1% to any bandwidth
cat >"$tmp/other/slowhost.yaml" <<EOT
base: $PWD/$D/cluster.yaml
faults:
  - {kind: delay, node: host2, delay: 100us}
EOT
"$F" matrix $D/cluster.yaml --bytes 1MiB --set matrix.timeout=0 --format json >"$tmp/d0.json" 2>/dev/null
"$F" matrix "$tmp/other/slowhost.yaml" --bytes 1MiB --set matrix.timeout=0 --format json >"$tmp/d1.json" 2>/dev/null
python3 - "$tmp/d0.json" "$tmp/d1.json" <<'EOT' && ok delay-fault-latency || bad delay-fault-latency
import json, sys
a, b = (json.load(open(x))["matrix"] for x in sys.argv[1:])
for i in range(6):
    for j in range(6):
        if i == j:
            continue
        d = b["lat_us"][i][j] - a["lat_us"][i][j]
        want = 100 if 2 in (i, j) else 0
        assert abs(d - want) < 2, (i, j, d)
        assert abs(b["bw_GBps"][i][j] / a["bw_GBps"][i][j] - 1) < 0.01, (i, j)
EOT
# a slow host found by its latency, and put into the calibrated scenario
probe slow "$tmp/other/slowhost.yaml"
run twin-slow-host 1 "$F" twin $D/cluster.yaml "$tmp/slow.json" -o "$tmp/slowcal.yaml" --format json && {
	cp "$tmp/out" "$tmp/twin-slow.json"
	python3 - "$tmp/out" <<'EOT' && ok twin-slow-host || bad "twin-slow-host: $(head -c 600 "$tmp/out")"
import json, sys
f = json.load(open(sys.argv[1]))
d = f["departures"]
assert [x["target"] for x in d] == ["host rank2@127.0.0.1"], [x["target"] for x in d]
delay = float(d[0]["fault"]["delay"].replace("us", ""))
assert abs(delay / 100 - 1) < 0.05, delay
# the calibrated scenario's matrix gives the host's pairs what was measured
for p in f["twin"]["pairs"]:
    assert abs(p["predicted_GBps"] / p["measured_GBps"] - 1) < 0.02, p
EOT
}
# one rank a host on servers of two NICs each: the ranks meet each
# server's first NIC (matrix.nics=first), and a slow one is found there
cat >"$tmp/two.yaml" <<EOT
topology: {kind: spine-leaf, leaves: 2, spines: 2, servers_per_leaf: 2, gpus_per_server: 2, nics_per_server: 2,
  host_rate: 100Gbps, fabric_rate: 100Gbps}
EOT
cat >"$tmp/other/two-real.yaml" <<EOT
base: $tmp/two.yaml
faults: [{kind: degrade, node: server2.nic0, rate: 25Gbps}]
EOT
probe two "$tmp/other/two-real.yaml" 4 matrix.nics=first
run per-server 1 "$F" twin "$tmp/two.yaml" "$tmp/two.json" &&
	{ has "$tmp/out" "1 departure" && has "$tmp/out" "link of rank2@127.0.0.1 (server2.nic0 - leaf1)" &&
		ok twin-first-nics || bad "twin-first-nics: $(head -c 800 "$tmp/out")"; }

# the twin's document as a page: the departure, the pairs, schema-checked
run report-twin 0 "$F" report "$tmp/twin-slow.json" -o "$tmp/twin.html" && has "$tmp/twin.html" "Departures (1)" &&
	has "$tmp/twin.html" "host rank2@127.0.0.1" && has "$tmp/twin.html" "delay to 100" &&
	has "$tmp/twin.html" 'id="pairs"' && has "$tmp/twin.html" "<svg" && ok report-twin-page || bad report-twin-page
run calibrate-json 0 "$F" calibrate $D/cluster.yaml "$tmp/real.json" -o "$tmp/x.yaml" --format json &&
	cp "$tmp/out" "$tmp/cal.json" && run report-calibration 0 "$F" report "$tmp/cal.json" &&
	has "$tmp/out" "Departures (2)" && ! has "$tmp/out" 'id="pairs"' && ok report-calibration-page || bad report-calibration-page
sed 's/"factor": /"factor": -/' "$tmp/cal.json" >"$tmp/bad.json"
run report-twin-bad 3 "$F" report "$tmp/bad.json" && has "$tmp/err" "factor: expected a number of at least 0" &&
	ok report-twin-schema || bad report-twin-schema
has "$tmp/slowcal.yaml" "kind: delay" && run slowcal-runs 0 "$F" matrix "$tmp/slowcal.yaml" --set matrix.timeout=0 &&
	ok calibrated-delay-runs || bad calibrated-delay-runs
# a delay that ends mid-run: the frames after it never overtake those
# before (every byte delivered, in order), and 0 is refused
cat >"$tmp/other/dend.yaml" <<EOT
base: $PWD/$D/cluster.yaml
traffic:
  flows:
    - {src: 0, dst: 4, bytes: 2MB}
    - {src: 1, dst: 3, bytes: 2MB}
faults:
  - {kind: delay, node: leaf0, peer: leaf1, delay: 300us, start: 10ms, end: 30ms}
EOT
run delay-ends 0 "$F" sim "$tmp/other/dend.yaml" --format json && python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
c = s["conservation"]
assert s["flows_done"] == 2 and c["sent_bytes"] == c["delivered_bytes"] == 4000000, s' "$tmp/out" &&
	ok delay-ends-in-order || bad delay-ends-in-order
printf '  - {kind: delay, node: host0, delay: 0us}\n' >>"$tmp/other/dend.yaml"
run delay-zero 3 "$F" sim "$tmp/other/dend.yaml" && has "$tmp/err" "dend.yaml:8:5: faults[1]: delay: a delayed link adds more than 0" &&
	ok delay-zero-refused || bad delay-zero-refused
run delay-flow 3 "$F" matrix "$tmp/other/slowhost.yaml" --engine flow && has "$tmp/err" "packet" && ok delay-not-on-flow || bad delay-not-on-flow

# a probe run one pair at a time is simulated one pair at a time: a
# healthy cluster whose leaves' link would slow pairs sharing it in a round
sed 's/leaf0 leaf1 600Mbps/leaf0 leaf1 200Mbps/' $D/cluster.topo >"$tmp/narrow.topo"
sed 's/file: cluster.topo/file: narrow.topo/' $D/cluster.yaml >"$tmp/narrow.yaml"
probe serial "$tmp/narrow.yaml" 6 matrix.serial=true
run twin-serial 0 "$F" twin "$tmp/narrow.yaml" "$tmp/serial.json" &&
	{ has "$tmp/out" "0 departures" && ok twin-serial || bad "twin-serial: $(head -c 600 "$tmp/out")"; }

# a link down: its pairs fail at the round's timeout, the others of the
# round are measured (their ping-pongs answered)
cat >"$tmp/other/down.yaml" <<EOT
base: $PWD/$D/cluster.yaml
faults: [{kind: down, node: host5, peer: leaf1}]
EOT
run matrix-down 0 "$F" matrix "$tmp/other/down.yaml" --set matrix.timeout=50ms --format json &&
	python3 -c '
import json, sys
bw = json.load(open(sys.argv[1]))["matrix"]["bw_GBps"]
for i in range(6):
    for j in range(6):
        if i != j:
            assert (bw[i][j] == 0) == (5 in (i, j)), (i, j, bw[i][j])' "$tmp/out" && ok matrix-down-only-its-pairs ||
	bad matrix-down-only-its-pairs

# hostile strings: an endpoint with a line break stays in its comment;
# re-tested figures that are no bandwidth are refused
python3 - "$tmp/slow.json" "$tmp/evil.json" "$tmp/neg.json" <<'EOT'
import json, sys
p = json.load(open(sys.argv[1]))
p["matrix"]["endpoints"][2] = "x\nfabric: {transport: roce}\n#"
json.dump(p, open(sys.argv[2], "w"))
p = json.load(open(sys.argv[1]))
p["matrix"]["retested"] = [{"pair": [0, 1], "before_GBps": [-1, 0.01], "after_GBps": [0.01, 0.01]}]
json.dump(p, open(sys.argv[3], "w"))
EOT
run evil-endpoint 0 "$F" calibrate $D/cluster.yaml "$tmp/evil.json" -o "$tmp/evil.yaml" &&
	run evil-loads 0 "$F" matrix "$tmp/evil.yaml" --set matrix.timeout=0 --format json &&
	{ python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["config"]["fabric"]["transport"] == "tcp"' \
		"$tmp/out" && ok evil-endpoint-commented || bad evil-endpoint-commented; }
run negative-retest 3 "$F" calibrate $D/cluster.yaml "$tmp/neg.json" -o "$tmp/none.yaml" &&
	has "$tmp/err" "retested[0].before_GBps[0]" && ok negative-retest-refused || bad negative-retest-refused
# -o naming the scenario itself is refused, the scenario left as it was
cp $D/cluster.yaml $D/cluster.topo "$tmp/other/" 2>/dev/null
run o-is-scenario 2 "$F" calibrate "$tmp/other/cluster.yaml" "$tmp/real.json" -o "$tmp/other/cluster.yaml" &&
	cmp -s "$tmp/other/cluster.yaml" $D/cluster.yaml && ok output-not-the-scenario || bad output-not-the-scenario
# a base's list other than flows, generators, jobs and faults is replaced
printf 'fabric:\n  pfc:\n    priorities: [3]\n' >"$tmp/bb.yaml"
printf 'base: bb.yaml\nfabric:\n  pfc:\n    priorities: [4]\n' >"$tmp/bo.yaml"
run base-list 0 "$F" matrix "$tmp/bo.yaml" --format json &&
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["config"]["fabric"]["pfc"]["priorities"]; assert str(p).replace(" ", "") == "[4]", p' \
		"$tmp/out" && ok base-list-replaced || bad base-list-replaced

# bad input
run no-output 2 "$F" calibrate $D/cluster.yaml "$tmp/real.json" && ok calibrate-needs-output
"$F" matrix $D/cluster.yaml --format json >"$tmp/sim.json" 2>/dev/null
run not-probe 3 "$F" calibrate $D/cluster.yaml "$tmp/sim.json" -o "$tmp/none.yaml" &&
	{ has "$tmp/err" "not a probe's matrix" && [ ! -e "$tmp/none.yaml" ] && ok not-a-probe-document ||
		bad "not-a-probe-document: $(cat "$tmp/err")"; }
printf '0 host0\n1 host1\n2 host2\n3 host3\n4 nope\n' >"$tmp/map"
run bad-map 3 "$F" calibrate $D/cluster.yaml "$tmp/real.json" -o "$tmp/x.yaml" --map "$tmp/map" &&
	has "$tmp/err" "map:5: nope: no such NIC" && ok bad-map-nic || bad bad-map-nic
# ranks 3 and 5 swapped (one leaf): rank 5's slow link is host3's
printf '0 host0\n1 host1\n2 host2  # comment\n5 host3\n4 host4\n3 host5\n' >"$tmp/map"
run map 0 "$F" calibrate $D/cluster.yaml "$tmp/real.json" -o "$tmp/x.yaml" --map "$tmp/map" &&
	has "$tmp/out" "2 departures" && has "$tmp/out" "link of rank5@127.0.0.1 (host3 - leaf1)" && ok map-moves-ranks ||
	bad "map-moves-ranks: $(cat "$tmp/out")"
printf 'topology:\n  kind: file\n  file: cluster.topo\n  gpus_per_server: 1\n  nics_per_server: 1\n' >"$tmp/five.yaml"
sed '/host5/d' $D/cluster.topo >"$tmp/cluster.topo"
run ranks-differ 3 "$F" calibrate "$tmp/five.yaml" "$tmp/real.json" -o "$tmp/x.yaml" &&
	has "$tmp/err" "6 hosts and the scenario has 5 NICs" && ok ranks-differ || bad ranks-differ
run bad-tolerance 2 "$F" twin $D/cluster.yaml "$tmp/real.json" --tolerance 2 && ok bad-tolerance

# base: a base of its own, a missing base
printf 'base: %s\n' "$tmp/other/real.yaml" >"$tmp/two.yaml"
run base-of-base 3 "$F" matrix "$tmp/two.yaml" && has "$tmp/err" "cannot have a base of its own" && ok base-of-base || bad base-of-base
printf 'base: nowhere.yaml\n' >"$tmp/none.yaml"
run base-missing 4 "$F" matrix "$tmp/none.yaml" && has "$tmp/err" "none.yaml:1:7: base:" && ok base-missing || bad base-missing
printf 'base: %s\ntopology: {hosts_rate: 1Gbps}\n' "$PWD/$D/cluster.yaml" >"$tmp/typo.yaml"
run base-typo 3 "$F" matrix "$tmp/typo.yaml" && has "$tmp/err" "typo.yaml:2:12: topology.hosts_rate: unknown key" &&
	ok base-keys-checked || bad base-keys-checked

echo "twin: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
