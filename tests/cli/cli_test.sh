#!/bin/sh
# Golden tests of the command line: a command, its exit status, what it
# prints.  Usage: cli_test.sh path/to/fabscope.  Last line:
# "cli: N passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

run help 0 "$F" --help && { has "$tmp/out" "usage: fabscope" && ok help || bad help; }
run version 0 "$F" --version && { has "$tmp/out" "libyaml" && has "$tmp/out" "jansson" && ok version || bad version; }
for cmd in sim coll matrix diagnose probe; do
	run "version-$cmd" 0 "$F" $cmd --version && { has "$tmp/out" "libyaml" && ok "version-$cmd" || bad "version-$cmd"; }
done
run sim-help 0 "$F" sim --help && { has "$tmp/out" "--set KEY=VALUE" && ok sim-help || bad sim-help; }
run no-command 2 "$F" && ok no-command
run unknown-command 2 "$F" frobnicate && { has "$tmp/err" "unknown command 'frobnicate'" && ok unknown-command || bad unknown-command; }
run bad-format 2 "$F" sim --format xml && { has "$tmp/err" 'expected text, json or csv' && ok bad-format || bad bad-format; }
run two-scenarios 2 "$F" sim a.yaml b.yaml && ok two-scenarios
run bad-option 2 "$F" sim --frob && ok bad-option
run missing-file 4 "$F" sim "$tmp/nope.yaml" && { has "$tmp/err" "cannot open scenario" && ok missing-file || bad missing-file; }

# every malformed scenario: exit 3, the message, and no output files
for y in tests/scenarios/bad/*.yaml; do
	n=$(basename "$y" .yaml)
	want=$(cat "tests/scenarios/bad/$n.expect")
	if run "bad-$n" 3 "$F" sim "$y" --out "$tmp/out-$n"; then
		if ! has "$tmp/err" "fabscope: $y$want"; then
			bad "bad-$n: message: $(cat "$tmp/err") / want: $y$want"
		elif [ -e "$tmp/out-$n" ] && [ -n "$(ls -A "$tmp/out-$n")" ]; then
			bad "bad-$n: wrote output files"
		elif [ -s "$tmp/out" ]; then
			bad "bad-$n: printed on stdout"
		else
			ok "bad-$n"
		fi
	fi
done
run set-unknown 3 "$F" sim --set topology.spinez=2 && { has "$tmp/err" "fabscope: --set topology.spinez: unknown key (did you mean 'spines'?)" && ok set-unknown || bad set-unknown; }

# the built-in scenario: text, JSON twice (byte-identical), CSV, files
run demo-text 0 "$F" sim && { has "$tmp/out" "80 of 80 flows done" && has "$tmp/out" "oversubscription 1:1" && ok demo-text || bad demo-text; }
run demo-json-1 0 "$F" sim --format json -q --out "$tmp/o1" && ok demo-json-1
[ ! -s "$tmp/out" ] && ok quiet-prints-nothing || bad quiet-prints-nothing
run demo-json-2 0 "$F" sim --format json && { cp "$tmp/out" "$tmp/j2" && ok demo-json-2 || bad demo-json-2; }
if cmp -s "$tmp/o1/result.json" "$tmp/j2"; then ok same-seed-same-bytes; else bad same-seed-same-bytes; fi
has "$tmp/j2" '"schema": "fabscope.result/1"' && has "$tmp/j2" '"seed": 1' && ok json-schema-and-seed || bad json-schema-and-seed
run other-seed 0 "$F" sim --format json --seed 5 && { ! cmp -s "$tmp/out" "$tmp/j2" && has "$tmp/out" '"seed": 5' && ok other-seed-other-bytes || bad other-seed-other-bytes; }
for f in result.json flows.csv ports.csv summary.txt; do
	[ -s "$tmp/o1/$f" ] && ok "out-$f" || bad "out-$f missing"
done
[ -z "$(ls -A "$tmp/o1" | grep '^\.' | grep -v '^\.fabscope-files$')" ] && ok no-temp-files-left || bad no-temp-files-left
run demo-csv 0 "$F" sim --format csv && { head -1 "$tmp/out" | grep -q '^id,src_gpu,dst_gpu,src_nic,dst_nic,bytes,' && has "$tmp/out" "node,port,peer,peer_port,rate_bps" && ok demo-csv || bad demo-csv; }
# the busiest queues: a port joined to its peer by parallel links (4 a
# leaf and spine here) by its number on the node, which ports.csv gives
# that peer and those ECN marks; a NIC's one link by the node alone
awk -F, 'FNR == NR { if (FNR > 1) { peer[$1 " port " $2] = $3; ecn[$1 " port " $2] = $11 }; next }
	/ port [0-9]+ +-> / { n++; split($0, w, " +-> "); sub(/^ +/, "", w[1]); split(w[2], p, " ");
		e = $0; sub(/.* ECN +/, "", e); sub(/ .*/, "", e)
		if (peer[w[1]] != p[1] || ecn[w[1]] != e) bad = 1 }
	/^  leaf0 +-> server0.nic0 / { nic = 1 }
	END { exit !(n >= 3 && !bad && nic) }' "$tmp/o1/ports.csv" "$tmp/o1/summary.txt" &&
	ok busiest-queues-name-ports || bad busiest-queues-name-ports
run print-scenario 0 "$F" sim --print-scenario && { cmp -s "$tmp/out" examples/default/scenario.yaml && ok print-scenario-is-example || bad print-scenario-is-example; }
# the built-in scenario is examples/default/scenario.yaml: same results
if run example-file 0 "$F" sim examples/default/scenario.yaml --format json; then
	grep -v '"scenario":' "$tmp/out" >"$tmp/a"
	grep -v '"scenario":' "$tmp/j2" >"$tmp/b"
	cmp -s "$tmp/a" "$tmp/b" && ok example-file-equals-built-in || bad example-file-equals-built-in
fi
# the training-step models: tokens per second times the step is the step's
# tokens, and the MFU stays under that of the compute alone
for m in gpt3 llama; do
	run "training-step-$m" 0 "$F" sim "examples/training-step/$m.yaml" && {
		awk -v m="$m" '$1 == m && $4 == "x" { step = $9 / 1e3 }
			$1 == m ":" { for (i = 1; i <= NF; i++) {
				if ($i == "tokens/s,") tps = $(i - 1)
				if ($i == "tokens),") tok = substr($(i - 1), 2)
				if ($i == "MFU") mfu = $(i + 1) + 0
				if ($i == "alone") alone = $(i + 1) + 0 } }
			END { exit !(tok > 0 && step > 0 && (tps * step / tok - 1) ^ 2 < 1e-6 && mfu > 0 && mfu < alone) }' \
			"$tmp/out" && ok "training-step-$m" || bad "training-step-$m: $(tail -2 "$tmp/out")"
	}
done

# --out: two runs at once into one directory publish a whole document;
# a symbolic link planted at a result's name is replaced, its target left
# alone; temporary files of a writer that is gone are removed; a file the
# previous run wrote and this one does not is removed
mkdir -p "$tmp/oc"
echo keep >"$tmp/victim"
"$F" sim -q --out "$tmp/oc" --set fabric.series_interval=50us 2>/dev/null # its series.csv goes stale below
rm "$tmp/oc/result.json"
ln -s "$tmp/victim" "$tmp/oc/result.json"
: >"$tmp/oc/.result.json.999999999.AbCdEf"
: >"$tmp/oc/mine.txt"
"$F" sim -q --out "$tmp/oc" --seed 2 2>"$tmp/e_a" &
pa=$!
"$F" sim -q --out "$tmp/oc" --seed 3 2>"$tmp/e_b"
rb=$?
wait $pa
ra=$?
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ ! -L "$tmp/oc/result.json" ] && [ "$(cat "$tmp/victim")" = keep ] &&
	grep -q '"seed": [23]' "$tmp/oc/result.json" && tail -1 "$tmp/oc/result.json" | grep -q '^}$' &&
	[ -z "$(ls -A "$tmp/oc" | grep '^\.result\.json\.')" ] && [ ! -e "$tmp/oc/series.csv" ] && [ -e "$tmp/oc/mine.txt" ]; then
	ok out-concurrent-and-stale
else
	bad "out-concurrent-and-stale: exit $ra/$rb: $(ls -A "$tmp/oc" | tr '\n' ' ') $(cat "$tmp/e_a" "$tmp/e_b")"
fi
# a manifest planted or copied into an --out directory removes nothing of
# the user's: names fabscope does not write (thesis.tex), a file of ours
# whose name it lists but that is not the file the run wrote (replaced, a
# link, another manifest's record), an old-style list of names
mkdir -p "$tmp/om"
echo mine >"$tmp/om/thesis.tex"
echo mine >"$tmp/om/series.csv"
echo mine >"$tmp/om/coll.csv"
echo target >"$tmp/om-target"
ln -s "$tmp/om-target" "$tmp/om/coll.txt"
ino=$(stat -c %i "$tmp/om/series.csv")
dev=$(stat -c %d "$tmp/om/series.csv")
printf 'fabscope-files 2\nthesis.tex\t%s\t%s\t5\t0\nseries.csv\t%s\t%s\t5\t0\ncoll.txt\t1\t1\t1\t1\n../om-target\t1\t1\t1\t1\n' \
	"$dev" "$(stat -c %i "$tmp/om/thesis.tex")" "$dev" "$ino" >"$tmp/om/.fabscope-files"
run manifest-planted 0 "$F" sim -q --out "$tmp/om" && {
	[ "$(cat "$tmp/om/thesis.tex")" = mine ] && [ "$(cat "$tmp/om/series.csv")" = mine ] && [ -L "$tmp/om/coll.txt" ] &&
		[ "$(cat "$tmp/om-target")" = target ] && ok manifest-planted || bad "manifest-planted: $(ls -A "$tmp/om" | tr '\n' ' ')"; }
printf 'coll.csv\nthesis.tex\n' >"$tmp/om/.fabscope-files" # the old plain list
run manifest-old-list 0 "$F" sim -q --out "$tmp/om" && {
	[ "$(cat "$tmp/om/coll.csv")" = mine ] && [ -e "$tmp/om/thesis.tex" ] && ok manifest-old-list || bad manifest-old-list; }
# a file of ours the previous run wrote, since rewritten by someone: kept
"$F" sim -q --out "$tmp/om" --set fabric.series_interval=50us 2>/dev/null
echo edited >"$tmp/om/series.csv"
run manifest-edited 0 "$F" sim -q --out "$tmp/om" && { [ "$(cat "$tmp/om/series.csv")" = edited ] && ok manifest-edited || bad manifest-edited; }
# the stderr line measures the whole command
run speed-line 0 "$F" sim && { grep -q 'events in [0-9.]* s (.*the whole command [0-9.]* s wall, peak RSS [0-9]* MiB' "$tmp/err" &&
	ok speed-line || bad "speed-line: $(cat "$tmp/err")"; }
run out-not-dir 4 "$F" sim -q --out "$tmp/victim" && { has "$tmp/err" "not a directory" && ok out-not-dir || bad out-not-dir; }

# a buffer that does not cover the PFC headroom at dynamic thresholds: a
# warning naming the buffer and the first such switch, on every command
# that runs the fabric, and the run goes on; none where it covers it
# (small sizes: the warning comes before the run)
for c in sim coll matrix; do
	small=""
	[ $c = coll ] && small="-b 1M -e 1M"
	[ $c = matrix ] && small="--set matrix.bytes=64KiB"
	# shellcheck disable=SC2086
	run "pfc-uncovered-$c" 0 "$F" $c -q --set fabric.pfc.threshold=dynamic --set fabric.buffer=2MiB $small && {
		has "$tmp/err" 'warning: fabric.buffer (2.00 MiB) does not cover the PFC headroom' &&
			has "$tmp/err" '4 switches (leaf0: 3.44 MiB)' && ok "pfc-uncovered-$c" || bad "pfc-uncovered-$c"; }
done
run pfc-covered 0 "$F" sim -q --set fabric.pfc.threshold=dynamic --set fabric.buffer=4MiB && {
	! has "$tmp/err" 'warning' && ok pfc-covered || bad pfc-covered; }
# the paper's DCQCN with a clamped target: the flow engine says its cuts
# are not to be trusted (doc/flow.md), and not without it
run flow-clamp 0 "$F" sim --engine flow --set flow.queues=dcqcn --set fabric.dcqcn.preset=paper --format json && {
	has "$tmp/out" "the fluid cuts are not to be trusted" && ok flow-clamp || bad flow-clamp; }
run flow-noclamp 0 "$F" sim --engine flow --set flow.queues=dcqcn --format json && {
	! has "$tmp/out" "clamped target rate" && ok flow-noclamp || bad flow-noclamp; }
# the summary's first line names the fluid model and what it leaves out
# (not "no queues": that is the fair shares'), and without DCQCN the FIFO
# queues it runs
run flow-dcqcn-text 0 "$F" sim --engine flow --set flow.queues=dcqcn && {
	has "$tmp/out" 'flow engine, fluid queues, DCQCN and pauses (ECN marks not counted' &&
		! has "$tmp/out" 'no queues' && ok flow-dcqcn-text || bad flow-dcqcn-text; }
run flow-dcqcn-nopfc-text 0 "$F" sim --engine flow --set flow.queues=dcqcn --set fabric.pfc.enabled=false && {
	has "$tmp/out" 'flow engine, fluid queues and DCQCN (ECN marks not counted, CNPs one a feedback window at most; no PFC or drops)' &&
		ok flow-dcqcn-nopfc-text || bad flow-dcqcn-nopfc-text; }
run flow-dcqcn-off-text 0 "$F" sim --engine flow --set flow.queues=dcqcn --set fabric.dcqcn.enabled=false && {
	has "$tmp/out" 'flow engine, FIFO queues (no PFC, ECN or drops)' && ok flow-dcqcn-off-text ||
		bad flow-dcqcn-off-text; }
# and the document says the same: neither DCQCN nor pauses (fifo.c and
# both outputs read one rule: fab_flow_runs_dcqcn, fab_flow_runs_pfc)
run flow-dcqcn-off-json 0 "$F" sim --engine flow --set flow.queues=dcqcn --set fabric.dcqcn.enabled=false \
	--format json && {
	has "$tmp/out" '"ECN and DCQCN"' && has "$tmp/out" '"PFC"' && ! has "$tmp/out" 'PFC frames' &&
		ok flow-dcqcn-off-json || bad flow-dcqcn-off-json; }
# DCQCN is RoCE's: on a TCP fabric (the built-in scenario gives PFC and
# DCQCN on) flow.queues dcqcn runs the FIFO queues alone, says so, and its
# flows end as fifo's do (it ran TCP at DCQCN's rates with fluid pauses)
run flow-dcqcn-tcp 0 "$F" sim --engine flow --set flow.queues=dcqcn --set fabric.transport=tcp --out "$tmp/fq-d" && {
	has "$tmp/out" 'flow engine, FIFO queues (no PFC, ECN or drops)' &&
		"$F" sim --engine flow --set flow.queues=fifo --set fabric.transport=tcp --out "$tmp/fq-f" -q &&
		cmp -s "$tmp/fq-d/flows.csv" "$tmp/fq-f/flows.csv" && ok flow-dcqcn-tcp || bad flow-dcqcn-tcp; }
run pfc-uncovered-flow 0 "$F" sim --engine flow --set flow.queues=dcqcn --format json \
	--set fabric.pfc.threshold=dynamic --set fabric.buffer=2MiB && {
	has "$tmp/out" 'not to be trusted where the buffer does not cover the headroom' && ok pfc-uncovered-flow ||
		bad pfc-uncovered-flow; }

# the flow engine: the same scenario, the engine named with what it leaves
# out, every flow done, the same bytes twice; faults it does not model are
# refused at their line
run flow-json-1 0 "$F" sim --engine flow --format json && cp "$tmp/out" "$tmp/f1" && {
	has "$tmp/f1" '"engine": "flow"' && has "$tmp/f1" '"not_modeled"' && has "$tmp/f1" '"flows_done": 80' &&
		ok flow-engine-json || bad flow-engine-json; }
run flow-json-2 0 "$F" sim --engine flow --format json && { cmp -s "$tmp/out" "$tmp/f1" && ok flow-same-bytes || bad flow-same-bytes; }
# FIFO queues: said in the result, queueing no longer left out, the same
# bytes twice, every flow done
run flow-fifo-json 0 "$F" sim --engine flow --set flow.queues=fifo --format json && cp "$tmp/out" "$tmp/q1" && {
	has "$tmp/q1" '"queues": "fifo"' && ! has "$tmp/q1" '"queueing delay"' && has "$tmp/f1" '"queueing delay"' &&
		has "$tmp/q1" '"flows_done": 80' && ok flow-fifo-json || bad flow-fifo-json; }
run flow-fifo-json-2 0 "$F" sim --engine flow --set flow.queues=fifo --format json && {
	cmp -s "$tmp/out" "$tmp/q1" && ok flow-fifo-same-bytes || bad flow-fifo-same-bytes; }
run flow-bad-queues 3 "$F" sim --engine flow --set flow.queues=wfq && {
	has "$tmp/err" "flow.queues" && ok flow-bad-queues || bad flow-bad-queues; }
run flow-bad-engine 3 "$F" sim --engine fluid && { has "$tmp/err" "engine" && ok flow-bad-engine || bad flow-bad-engine; }
run flow-lossy-refused 3 "$F" sim examples/loose-cable/scenario.yaml --engine flow && {
	has "$tmp/err" "scenario.yaml:23:" && has "$tmp/err" "the flow engine models degrade and slow-gpu faults only" &&
		ok flow-lossy-refused || bad flow-lossy-refused; }

# coll and matrix are deterministic too
run coll-json-1 0 "$F" coll -b 1K -e 64K -f 8 --format json && cp "$tmp/out" "$tmp/c1" && ok coll-json-1
run coll-json-2 0 "$F" coll -b 1K -e 64K -f 8 --format json && { cmp -s "$tmp/out" "$tmp/c1" && ok coll-same-bytes || bad coll-same-bytes; }
# the table on stdout is written row by row as each size is done, and is
# the same bytes as the one --out keeps
run coll-stream 0 "$F" coll -b 1K -e 4M -f 8 --out "$tmp/streamdir" && {
	cmp -s "$tmp/out" "$tmp/streamdir/coll.txt" && ok coll-stream || bad "coll-stream: stdout differs from coll.txt"; }
# a run stopped half way has already printed the sizes it finished
timeout -s INT 2 "$F" coll -b 1K -e 8G -f 2 >"$tmp/part" 2>/dev/null
if [ "$(grep -c '^ *[0-9]' "$tmp/part")" -ge 3 ] && ! grep -q "Avg bus bandwidth" "$tmp/part"; then
	ok coll-stream-partial
else
	bad "coll-stream-partial: $(wc -l <"$tmp/part") lines"
fi
# on a terminal, the progress line says how much is done, and that share only grows
if command -v script >/dev/null; then
	script -qec "'$F' coll -b 8M -e 16M -f 2 >/dev/null" /dev/null | tr '\r' '\n' >"$tmp/tty" 2>&1
	grep -ao '[0-9]*% done' "$tmp/tty" | tr -d '% done' >"$tmp/pct"
	if [ "$(wc -l <"$tmp/pct")" -ge 3 ] && sort -n -c "$tmp/pct" 2>/dev/null && [ "$(tail -1 "$tmp/pct")" -ge 50 ]; then
		ok coll-progress
	else
		bad "coll-progress: $(tr '\n' ' ' <"$tmp/pct")"
	fi
fi
# a size's row does not depend on the sizes before it (the fabric rests
# between sizes, congestion control and draws start again): the 16 MiB
# AllReduce row alone and after three smaller sizes, on RoCE with DCQCN,
# InfiniBand, TCP and the flow engine with each queue model (fluid DCQCN's
# row moved by 28% with the sizes before it); and a 16 MiB AllGather row
# whose history moved it by 14% before
for o in roce "--set fabric.transport=ib" "--set fabric.transport=tcp" "--engine flow" \
	"--engine flow --set flow.queues=fifo" "--engine flow --set flow.queues=dcqcn" "-o allgather"; do
	n=row-alone-$(echo "$o" | sed 's/.*[= ]//')
	[ "$o" = roce ] && o=
	"$F" coll -b 16M -e 16M $o 2>/dev/null | awk '$1 == 16777216 { print $6 }' >"$tmp/alone"
	"$F" coll -b 256K -e 16M -f 4 $o 2>/dev/null | awk '$1 == 16777216 { print $6 }' >"$tmp/swept"
	if [ -s "$tmp/alone" ] && cmp -s "$tmp/alone" "$tmp/swept"; then ok "$n"; else bad "$n: $(cat "$tmp/alone") alone, $(cat "$tmp/swept") in a sweep"; fi
done
run coll-table 0 "$F" coll -b 1K -e 4K -f 4 && { has "$tmp/out" "# Avg bus bandwidth" && has "$tmp/out" "(GB/s)" && ok coll-table || bad coll-table; }
# nccl-tests' layout, read as its parsers read it: 13 fields a row (size,
# count, type, redop, root, then time, algbw, busbw, #wrong out of place and
# in place), busbw = algbw x 2(n-1)/n for AllReduce on 64 ranks, the header
# and closing lines; nccl-tests' options; NCCL_TESTS_MIN_BW
run nccl-layout 0 "$F" coll -b 1M -e 16M -f 4 -o sum -a 1 -c 1 -z 0 -G 0 -C 0 -T 30 && {
	awk '/^ +[0-9]/ { n++; if (NF != 13 || $3 != "float" || $4 != "sum" || $5 != -1 || $2 * 4 != $1) bad = 1
			  d = $8 - $7 * 2 * 63 / 64; if (d * d > 1e-3 || $6 != $10 || $8 != $12) bad = 1 }
	     END { exit bad || n != 3 }' "$tmp/out" && has "$tmp/out" "# nThread 1 nGpus 64 minBytes 1048576" &&
		has "$tmp/out" "# Using devices" && has "$tmp/out" "# Out of bounds values : 0 OK" &&
		has "$tmp/out" "# Collective test concluded: all_reduce_perf" && ok nccl-layout || bad "nccl-layout: $(head -c 600 "$tmp/out")"; }
run nccl-algo-column 0 "$F" coll -b 1M -e 1M --algo-column && {
	awk '/^ +[0-9]/ { n++; if (NF != 14 || $14 !~ /\//) bad = 1 } END { exit bad || n != 1 }' "$tmp/out" &&
		ok nccl-algo-column || bad nccl-algo-column; }
run nccl-threads 0 "$F" coll -t 2 -g 8 -b 1M -e 1M && { has "$tmp/out" "nGpus 16" && ok nccl-threads || bad nccl-threads; }
run nccl-op-prod 2 "$F" coll -o prod && { has "$tmp/err" "-o prod: only sum is simulated" && ok nccl-op-prod || bad nccl-op-prod; }
run nccl-average-range 2 "$F" coll -a 7 && ok nccl-average-range
run nccl-cputime 2 "$F" coll -C 1 && { has "$tmp/err" "-C 1: a simulation has no host CPU time" && ok nccl-cputime || bad nccl-cputime; }
run nccl-collective-by-op 0 "$F" coll --op allgather -a ring -b 1M -e 1M && {
	has "$tmp/out" "all_gather_perf" && awk '/^ +[0-9]/ { if ($4 != "none") bad = 1 } END { exit bad }' "$tmp/out" &&
		ok nccl-collective-by-op || bad nccl-collective-by-op; }
run nccl-min-bw 1 env NCCL_TESTS_MIN_BW=1000 "$F" coll -b 1M -e 1M && {
	has "$tmp/out" "# Avg bus bandwidth    : " && grep -q "Avg bus bandwidth.*FAILED" "$tmp/out" && ok nccl-min-bw || bad nccl-min-bw; }
run nccl-min-bw-ok 0 env NCCL_TESTS_MIN_BW=1 "$F" coll -b 1M -e 1M && { grep -q "Avg bus bandwidth.* OK" "$tmp/out" && ok nccl-min-bw-ok || bad nccl-min-bw-ok; }
# -J: nccl-tests' JSON, never over a file (FILE.0 next, as nccl-tests),
# named on the table's first line; the table and the JSON byte for byte
# as nccl-tests' format strings give them, read by a fixed-column parser
# and by the JSON's keys (tests/cli/nccl_compat.py); more than 64 ranks
# summarised unless -v
run nccl-json-file 0 "$F" coll -b 8 -e 128M -f 8 -w 0 -n 1 -J "$tmp/nt.json" -S 1 && {
	head -1 "$tmp/out" | grep -qxF "# Writing JSON output to $tmp/nt.json" && cp "$tmp/out" "$tmp/nt.txt" &&
		has "$tmp/nt.json" '"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":' &&
		ok nccl-json-file || bad "nccl-json-file: $(head -2 "$tmp/out")"; }
run nccl-json-next 0 "$F" coll -b 1M -e 1M -w 0 -n 1 -J "$tmp/nt.json" && { head -1 "$tmp/out" | grep -qxF "# Writing JSON output to $tmp/nt.json.0" &&
	[ -s "$tmp/nt.json.0" ] && ok nccl-json-next || bad "nccl-json-next: $(head -1 "$tmp/out")"; }
ln -s "$tmp/json-victim" "$tmp/link.json"
run nccl-json-link 0 "$F" coll -b 1M -e 1M -w 0 -n 1 -J "$tmp/link.json" -q && { [ ! -e "$tmp/json-victim" ] && [ -s "$tmp/link.json.0" ] &&
	ok nccl-json-link || bad "nccl-json-link: wrote through a symbolic link"; }
run nccl-json-dir 4 "$F" coll -b 1M -e 1M -J "$tmp/no/such/dir/x.json" && { has "$tmp/err" "-J $tmp/no/such/dir/x.json: No such file" &&
	ok nccl-json-dir || bad "nccl-json-dir: $(cat "$tmp/err")"; }
# a run stopped half way leaves no -J file: the file made at its start is
# removed on SIGTERM
"$F" coll -b 64M -e 1G -J "$tmp/term.json" >"$tmp/term.out" 2>&1 &
tp=$!
i=0
while [ ! -e "$tmp/term.json" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
kill -TERM $tp
wait $tp
[ $i -lt 100 ] && [ ! -e "$tmp/term.json" ] && has "$tmp/term.out" "# Writing JSON output to $tmp/term.json" &&
	ok nccl-json-interrupted || bad "nccl-json-interrupted: $(ls "$tmp"/term.json* 2>&1)"
# -J's env lists the NCCL_ and FABSCOPE_ variables only; SOURCE_DATE_EPOCH
# fixes its two times
run nccl-json-env 0 env NCCL_PROTO=simple MY_SECRET=hunter2 SOURCE_DATE_EPOCH=86400 "$F" coll -b 1M -e 1M -w 0 -n 1 \
	-J "$tmp/env.json" -q && {
	has "$tmp/env.json" '"NCCL_PROTO=simple"' && ! has "$tmp/env.json" hunter2 &&
		has "$tmp/env.json" '"start_time":"1970-01-02 00:00:00"' && has "$tmp/env.json" '"end_time":"1970-01-02 00:00:00"' &&
		ok nccl-json-env || bad "nccl-json-env: $(head -c 300 "$tmp/env.json")"; }
if command -v python3 >/dev/null; then
	python3 tests/cli/nccl_compat.py "$tmp/nt.txt" "$tmp/nt.json" >"$tmp/cmp" 2>&1 && ok "nccl-compat ($(cat "$tmp/cmp"))" ||
		bad "nccl-compat: $(cat "$tmp/cmp")"
	run nccl-compat-512 0 "$F" coll -b 1M -e 4M -w 0 -n 1 --coll broadcast -r 3 --set topology.servers_per_leaf=16 \
		--set topology.radix=256 -J "$tmp/n512.json" && {
		python3 tests/cli/nccl_compat.py "$tmp/out" "$tmp/n512.json" >"$tmp/cmp" 2>&1 && has "$tmp/out" "#  ... and 448 more ranks" &&
			ok "nccl-compat-512" || bad "nccl-compat-512: $(cat "$tmp/cmp")"; }
	run nccl-verbose 0 "$F" coll -b 1M -e 1M -w 0 -n 1 --set topology.servers_per_leaf=16 --set topology.radix=256 -v &&
		{ [ "$(grep -c '^#  Rank' "$tmp/out")" -eq 512 ] && ok nccl-verbose || bad nccl-verbose; }
else
	echo "skip nccl-compat: needs python3"
fi

# a link that loses every packet: the queue pairs across it fail after their retries, exit 5 saying so
printf '%s\n' "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1, spines: 1, links_per_spine: 1}" \
	"faults: [{kind: lossy, node: server0.nic0, peer: leaf0, drop_every: 1}]" >"$tmp/dead.yaml"
run coll-qp-fail 5 "$F" coll "$tmp/dead.yaml" -b 1M -e 1M && { has "$tmp/err" "queue pairs failed (retry count exceeded" && ok coll-qp-fail || bad coll-qp-fail; }
run coll-bad-algo 3 "$F" coll --op alltoall --algo ring && { has "$tmp/err" "collective.algo: algorithm ring does not implement AllToAll" && ok coll-bad-algo || bad coll-bad-algo; }

# matrix and diagnose: a suspect is exit 1, healthy 0, bad documents 3
run matrix-healthy 0 "$F" matrix --set topology.leaves=1 --set topology.servers_per_leaf=2 --set topology.gpus_per_server=2 --set topology.nics_per_server=2 --set topology.spines=1 --set topology.links_per_spine=1 -q --out "$tmp/mh" && ok matrix-healthy
run diagnose-healthy 0 "$F" diagnose "$tmp/mh/result.json" && { has "$tmp/out" "healthy" && ok diagnose-healthy || bad diagnose-healthy; }
run matrix-downgrade 0 "$F" matrix examples/autoneg-downgrade/scenario.yaml -q --out "$tmp/md" && ok matrix-downgrade
run diagnose-suspect 1 "$F" diagnose "$tmp/md/result.json" --svg "$tmp/m.svg" && { has "$tmp/out" "1. link leaf0 <-> server1.nic3" && has "$tmp/m.svg" "<svg" && ok diagnose-suspect || bad diagnose-suspect; }
run diagnose-json 1 "$F" diagnose "$tmp/md/result.json" --format json && { has "$tmp/out" '"schema": "fabscope.diagnosis/1"' && ok diagnose-json || bad diagnose-json; }
printf '{"schema": "fabscope.result/1",\n  "ports": [1, 2,\n}\n' > "$tmp/bad.json"
run diagnose-bad-json 3 "$F" diagnose "$tmp/bad.json" && { has "$tmp/err" "bad.json:3:" && ok diagnose-bad-json || bad diagnose-bad-json; }
printf '{"hello": 1}\n' > "$tmp/foreign.json"
run diagnose-foreign 3 "$F" diagnose "$tmp/foreign.json" && { has "$tmp/err" "not a fabscope result" && ok diagnose-foreign || bad diagnose-foreign; }
run diagnose-missing 4 "$F" diagnose "$tmp/nope.json" && ok diagnose-missing
run diagnose-no-args 2 "$F" diagnose && ok diagnose-no-args

# the real-network probe on loopback: 4 ranks, real data, checked
run probe-local 0 timeout 120 "$F" probe --local 4 -b 1K -e 256K -f 16 -n 2 -w 1 && {
	[ "$(grep -c '^ ' "$tmp/out")" -eq 3 ] && ! awk '/^ /{ if ($9 != 0) bad=1 } END{exit !bad}' "$tmp/out" &&
		has "$tmp/out" "# Avg bus bandwidth" && ok probe-local || bad probe-local; }
run probe-allgather 0 timeout 120 "$F" probe --local 3 --op allgather -b 3K -e 3K -n 1 -w 0 && {
	awk '/^ /{ n++; if ($9 != 0) bad=1 } END{exit bad || n != 1}' "$tmp/out" && ok probe-allgather || bad probe-allgather; }
# point-to-point tests on loopback: one row per peer, ordered percentiles
run probe-latency 0 timeout 60 "$F" probe --local 3 --test latency -n 300 -w 10 && {
	awk '/^ [0-9]/{ n++; if (!(NF == 9 && $3 > 0 && $3 <= $5 && $5 <= $8 && $8 <= $9 && $9 <= $4 && $6 >= $3 && $6 <= $4)) bad = 1 }
		END { exit bad || n != 2 }' "$tmp/out" && ok probe-latency || bad probe-latency; }
run probe-bw 0 timeout 60 "$F" probe --local 2 --test bw -b 64K -e 1M -f 16 -n 20 && {
	# perftest's 5 fields a row, then a "# row N:" line each with the time
	# and GB/s: GB/s x 8 is the average in Gb/s, bytes over the time GB/s
	awk '/^ [0-9]/{ n++; if (NF != 5) bad = 1; sz[n] = $1; it[n] = $2; pk[n] = $3; av[n] = $4 }
		/^# row [0-9]: peer 1 / { r++; t = $(NF - 3); gb = $(NF - 1); d = gb * 8 - av[r]; e = sz[r] * it[r] / (t * 1e3) - gb
		if (!(gb > 0 && it[r] == 20 && d * d < 1e-4 && e * e < 1e-4 + 1e-4 * gb * gb && pk[r] >= av[r])) bad = 1 }
		END { exit bad || n != 2 || r != 2 }' "$tmp/out" && ok probe-bw || bad "probe-bw: $(cat "$tmp/out")"; }
# the all-pairs matrix on loopback: 5 ranks (odd: one sits out each
# round), every pair measured, every rank ranked
run probe-matrix 0 timeout 60 "$F" probe --local 5 --test matrix -e 256K -n 3 && {
	awk '/^ +[0-9]+ +(-|[0-9]+\.[0-9]+) / { rows++; for (j = 2; j <= NF; j++) if (j - 2 == $1) { if ($j != "-") bad = 1 }
				 else if (!($j > 0)) bad = 1 }
	     /^  rank / { ranked++ }
	     END { exit bad || rows != 5 || ranked != 5 }' "$tmp/out" && ok probe-matrix || bad probe-matrix; }
run probe-matrix-1rank 2 "$F" probe --local 1 --test matrix && { has "$tmp/err" "needs at least 2 ranks" && ok probe-matrix-1rank || bad probe-matrix-1rank; }
run probe-bad-test 2 "$F" probe --local 2 --test pingpong && { has "$tmp/err" "expected coll, latency, bw or matrix" && ok probe-bad-test || bad probe-bad-test; }
run probe-bad-algo 2 "$F" probe --local 2 --op alltoall --algo ring && ok probe-bad-algo
run probe-no-launcher 2 env -u RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID "$F" probe && ok probe-no-launcher

# a size's time does not hang on the sizes run before it: a queue pair's
# 5-tuple (and so its ECMP path) follows from who connects, not from when
# (opened in order of first use, 64 MiB took 768 us alone, 1018 after the
# smaller sizes' trees)
run coll-row-alone 0 "$F" coll --engine flow -b 64M -e 64M --format csv && {
	a=$(tail -1 "$tmp/out" | cut -d, -f6)
	"$F" coll --engine flow -b 1K -e 64M -f 16 --format csv >"$tmp/rows" 2>/dev/null
	b=$(tail -1 "$tmp/rows" | cut -d, -f6)
	[ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 0.001 * a) }' &&
		ok coll-row-alone || bad "coll-row-alone: 64 MiB alone $a us, after the smaller sizes $b us"; }
# nor a job's pipeline traffic on the jobs before it in the file: job b
# across both leaves of a 4:1 fabric, alone and after a job that starts a
# second later (before its 5-tuples followed from the job, 49.9 ms against
# 28.0)
pp_job() { # NAME GPUS [START]
	printf '  - {name: %s, gpus: 32, placement: list, gpu_list: [%s], pp: 2, pp_bytes: 64MiB, microbatches: 4,\n' "$1" "$2"
	printf '     iterations: 1, compute: 1ms, gradient_bytes: 1MiB, start: %s}\n' "${3:-0}"
}
pp_hdr='topology: {kind: spine-leaf, leaves: 2, servers_per_leaf: 4, links_per_spine: 1, oversubscription: 4:1}
engine: flow
jobs:'
gb=$(seq -s ', ' 16 47)
{ echo "$pp_hdr"; pp_job a "$(seq -s ', ' 0 15), $(seq -s ', ' 48 63)" 1s; pp_job b "$gb"; } >"$tmp/pp2.yaml"
{ echo "$pp_hdr"; pp_job b "$gb"; } >"$tmp/pp1.yaml"
run job-pp-alone 0 "$F" sim "$tmp/pp1.yaml" && {
	one=$(awk '$1 == "b" { print $9 }' "$tmp/out")
	"$F" sim "$tmp/pp2.yaml" >"$tmp/pp2.out" 2>/dev/null
	two=$(awk '$1 == "b" { print $9 }' "$tmp/pp2.out")
	[ -n "$one" ] && [ "$one" = "$two" ] && ok job-pp-alone || bad "job-pp-alone: job b alone $one ms, after job a $two ms"; }
# the README's sample of coll is what the program prints: its rows and its
# average, field for field
run readme-coll-sample 0 "$F" coll -b 1K -e 64M -f 16 --algo-column && {
	awk '/^\$ \.\/build\/fabscope coll -b 1K -e 64M -f 16 --algo-column$/ { on = 1; next } on && /^```/ { exit }
	     on && (/^ +[0-9]/ || /^# Avg bus/)' README.md >"$tmp/readme-rows"
	grep -E '^ +[0-9]|^# Avg bus' "$tmp/out" >"$tmp/prog-rows"
	[ -s "$tmp/readme-rows" ] && cmp -s "$tmp/readme-rows" "$tmp/prog-rows" && ok readme-coll-sample ||
		bad "readme-coll-sample: README.md's sample differs from the output: $(diff "$tmp/readme-rows" "$tmp/prog-rows" | head -5)"; }

# flow.batch_large: a halving-doubling AllReduce on 256 GPUs re-solves
# components of hundreds to thousands of transfers; with the window (the
# default) it solves fewer times, and its time stays within 1%
for b in 0 1us; do
	run "batch-large-$b" 0 "$F" coll bench/compare-256.yaml -a rhd -b 4M -e 4M -w 0 -n 1 --engine flow \
		--set flow.batch_large=$b --out "$tmp/bl$b" || continue
	eval "us_$b=\$(awk '\$1 == 4194304 { print \$6 }' \"\$tmp/out\")"
	eval "rc_$b=\$(sed -n 's/.*\"recomputes\": *\([0-9]*\).*/\1/p' \"\$tmp/bl$b/result.json\" | head -1)"
done
awk -v a="$us_0" -v b="$us_1us" -v ra="$rc_0" -v rb="$rc_1us" 'BEGIN { exit !(a > 0 && b / a - 1 < 0.01 && a / b - 1 < 0.01 && rb < 0.85 * ra) }' &&
	ok "batch-large ($us_0 us in $rc_0 recomputations, $us_1us us in $rc_1us)" ||
	bad "batch-large: $us_0 us in $rc_0 recomputations without the window, $us_1us us in $rc_1us with it"

# --progress: progress lines on a stderr that is no terminal (here a
# file), each a whole line; without it none
run progress-lines 0 "$F" coll -b 256M -e 256M -w 0 -n 2 --progress && {
	grep -q '^fabscope: simulated [0-9.]* ms, [0-9.]*M events' "$tmp/err" && ! grep -q "$(printf '\r')" "$tmp/err" &&
		ok progress-lines || bad "progress-lines: $(head -3 "$tmp/err")"; }
run progress-none 0 "$F" coll -b 256M -e 256M -w 0 -n 2 && { ! grep -q 'simulated' "$tmp/err" && ok progress-none || bad progress-none; }
# nccl-tests' -S (report_timestamps) is not --set; -b 1GB is said to be decimal
run nccl-S 0 "$F" coll -b 1M -e 1M -w 0 -n 1 -S 1 && ok nccl-S
run nccl-decimal-note 0 "$F" coll -b 1GB -e 1GB -w 0 -n 1 --engine flow && {
	has "$tmp/err" "-b 1GB is decimal (GB: 10^9 bytes); nccl-tests' 1G, or 1GiB, is binary" &&
		awk '$1 == 1000000000 { n++ } END { exit n != 1 }' "$tmp/out" && ok nccl-decimal-note || bad "nccl-decimal-note: $(cat "$tmp/err")"; }

# the key reference in doc/scenario.md is the one the program prints
run keys 0 "$F" sim --keys
if [ -f doc/scenario.md ] && awk 'NR==FNR{want=want $0 "\n"; next} {have=have $0 "\n"} END{exit index(have, want) ? 0 : 1}' "$tmp/out" doc/scenario.md; then
	ok doc-keys-current
else
	bad "doc-keys-current: doc/scenario.md does not hold the output of 'fabscope sim --keys'"
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
