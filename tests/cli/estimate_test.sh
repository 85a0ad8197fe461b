#!/bin/sh
# --estimate against the runs it estimates: the packet engine's events
# (2 per frame and link, data and acknowledgements, from the flow engine's
# books) within 10-15% of a packet run's, its memory bound above the run's
# peak, the same table whatever --engine says, and nothing written.
# Usage: estimate_test.sh path/to/fabscope.  Last line: "estimate: N
# passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

cat >"$tmp/ft.yaml" <<'YAML'
topology: {kind: fat-tree, k: 8, gpus_per_server: 1, nics_per_server: 1,
           host_rate: 100Gbps, fabric_rate: 100Gbps, core_rate: 100Gbps}
fabric: {dcqcn: {enabled: false}}
traffic:
  generators:
    - {kind: permutation, bytes: 512KiB}
YAML
est_events() { awk '$1 == "events" { print $2; exit }' "$1"; }
# the packet engine's events as the run reports them on stderr
run_events() { sed -n 's/^fabscope: \([0-9]*\) events in.*/\1/p' "$1"; }
peak_mib() { sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' "$1"; }
within() { # NAME ESTIMATE ACTUAL TOLERANCE
	awk -v e="$2" -v a="$3" -v t="$4" 'BEGIN { exit !(a > 0 && e / a - 1 <= t && 1 - e / a <= t) }' &&
		ok "$1 ($2 estimated, $3 run)" || bad "$1: $2 estimated, $3 run (tolerance $4)"
}

# flows: a permutation on a fat-tree (no congestion control, PFC)
if run ft-estimate 0 "$F" sim "$tmp/ft.yaml" --estimate; then
	cp "$tmp/out" "$tmp/ft.est"
	run ft-run 0 "$F" sim "$tmp/ft.yaml" --format json &&
		within ft-events "$(est_events "$tmp/ft.est")" "$(run_events "$tmp/err")" 0.10
	# the memory: the model and workload plus frames in flight at most,
	# above the run's peak (less the 8 MiB a process starts with)
	# (not under AddressSanitizer, whose allocator takes its own)
	case $F in *asan*) ;; *)
	mem=$(awk '$1 == "memory" { print $2 + $6 }' "$tmp/ft.est")
	peak=$(peak_mib "$tmp/err")
	[ -n "$peak" ] && [ "$((peak - 8))" -le "${mem:-0}" ] && ok "ft-memory ($peak MiB at most ${mem} + 8)" ||
		bad "ft-memory: the run's peak $peak MiB, estimated at most $mem MiB"
	;; esac
fi
# the built-in scenario: an incast under PFC beside a permutation
run default-estimate 0 "$F" sim --estimate && cp "$tmp/out" "$tmp/def.est" &&
	run default-run 0 "$F" sim && within default-events "$(est_events "$tmp/def.est")" "$(run_events "$tmp/err")" 0.10
# a collective sweep (ring and tree AllReduces on the built-in cluster)
run coll-estimate 0 "$F" coll -b 1M -e 16M --estimate && cp "$tmp/out" "$tmp/coll.est" &&
	run coll-run 0 "$F" coll -b 1M -e 16M && within coll-events "$(est_events "$tmp/coll.est")" "$(run_events "$tmp/err")" 0.15
# the same table whatever engine the command line names
run engine-flow 0 "$F" coll -b 1M -e 16M --estimate --engine flow &&
	[ "$(grep -E '^  (events|data)' "$tmp/out")" = "$(grep -E '^  (events|data)' "$tmp/coll.est")" ] &&
	ok engine-either || bad "engine-either: --engine flow changed the estimate"
# it runs nothing and writes nothing
run estimate-out 2 "$F" sim --estimate --out "$tmp/o" && { has "$tmp/err" "--estimate runs nothing" && [ ! -e "$tmp/o" ] &&
	ok estimate-out || bad "estimate-out: $(cat "$tmp/err")"; }
run estimate-json 2 "$F" coll --estimate --format json && ok estimate-json
run estimate-J 2 "$F" coll --estimate -J "$tmp/j.json" && { [ ! -e "$tmp/j.json" ] && ok estimate-J || bad "estimate-J: wrote $tmp/j.json"; }
echo "estimate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
