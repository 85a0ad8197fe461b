#!/bin/sh
# fabscope sweep: a grid's points are the runs that sim/coll give for the
# same settings; -j 2, two Open MPI ranks (mpirun --oversubscribe -np 2)
# and the Slurm script's array tasks (run with the Slurm variables set) all
# merge into the table -j 1 gives, byte for byte; a sweep interrupted or
# with points removed resumes without redoing the points it has; a failed
# point is reported and the others run; bad grids are told at their line.
# Usage: sweep_test.sh path/to/fabscope.  Last line: "sweep: N passed, N failed".
F=${1:-./build/fabscope}
case $F in /*) ;; *) F=$(pwd)/$F ;; esac
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

cat >grid.yaml <<EOF
# 2 x 2 x 2 seeds: 8 points
scenario: $ex/oversubscription/scenario.yaml
command: coll
set:
  collective.min_bytes: 4MiB
  collective.max_bytes: 4MiB
vary:
  topology.oversubscription: [1:1, 2:1]
  collective.algo: [ring, tree]
seeds: [1, 2]
results:
  busbw: collective.rows[0].busbw_GBps
  time_us: collective.rows[-1].time_us
  cnps: summary.cnps
  time_ms: collective.rows[-1].time_us / 1000
EOF

run sweep-j1 0 "$F" sweep grid.yaml -o j1 -q && {
	[ "$(wc -l <j1/sweep.csv)" -eq 9 ] && [ "$(ls j1/points | wc -l)" -eq 8 ] &&
		has j1/sweep.csv "point,topology.oversubscription,collective.algo,seed,status,busbw,time_us,cnps,time_ms,id" &&
		has "$tmp/out" "8 points: 8 ok, 0 failed, 0 not run" && ok sweep-j1 || bad "sweep-j1: $(head -3 j1/sweep.csv)"; }
# the table's row is what coll gives for the same settings: point 6 is
# 2:1, tree, seed 1
run sweep-vs-coll 0 "$F" coll "$ex/oversubscription/scenario.yaml" -b 4M -e 4M --algo tree --seed 1 --out colldir \
	--set topology.oversubscription=2:1 && {
	row=$(awk -F, '$1 == 6' j1/sweep.csv)
	busbw=$(echo "$row" | cut -d, -f6)
	ref=$(tr -d ' \n' <colldir/result.json | grep -o '"busbw_GBps":[0-9.e+-]*' | head -1 | cut -d: -f2)
	echo "$row" | grep -q '^6,2:1,tree,1,ok,' && [ -n "$busbw" ] && [ -n "$ref" ] &&
		awk -v a="$busbw" -v b="$ref" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * b) }' &&
		ok sweep-vs-coll || bad "sweep-vs-coll: row [$row], coll busbw $ref"; }
# report draws the sweep: busbw against the first swept key (2 seeds
# averaged), a line and a legend entry for each of the other key's values,
# the points' table; --x and --y choose; a key not swept, a document of
# the wrong shape are refused with where
run report-sweep 0 "$F" report j1/sweep.json -o sweep.html && {
	[ "$(grep -c '<polyline' sweep.html)" -eq 2 ] && [ "$(grep -c 'class="tick legend"' sweep.html)" -eq 2 ] &&
		has sweep.html '>busbw against topology.oversubscription<' && has sweep.html '>collective.algo=ring<' &&
		[ "$(grep -c '<tr><td>' sweep.html)" -eq 8 ] && ok report-sweep || bad "report-sweep: $(grep -c '<polyline' sweep.html) lines"; }
run report-sweep-xy 0 "$F" report j1/sweep.json --x collective.algo --y time_us && {
	has "$tmp/out" '>time_us against collective.algo<' && has "$tmp/out" 'collective.algo along the axis: 1 = ring, 2 = tree' &&
		ok report-sweep-xy || bad report-sweep-xy; }
run report-sweep-badx 3 "$F" report j1/sweep.json --x topology.spines && { has "$tmp/err" "--x topology.spines: not a key the sweep varies" &&
	ok report-sweep-badx || bad "report-sweep-badx: $(cat "$tmp/err")"; }
sed 's/"status": "ok"/"status": 7/' j1/sweep.json >bad-sweep.json
run report-sweep-bad 3 "$F" report bad-sweep.json && { has "$tmp/err" "bad-sweep.json: points[0].status: expected one of ok, failed, missing, got a number" &&
	ok report-sweep-bad || bad "report-sweep-bad: $(cat "$tmp/err")"; }
# a scaled column: time_ms is time_us / 1000
awk -F, '$1 ~ /^[0-9]/ { d = $7 / 1000 - $9; if (d < 0) d = -d; if (d > 1e-9 * $7 || $9 == "") bad = 1; n++ } END { exit bad || n != 8 }' j1/sweep.csv &&
	ok sweep-scaled || bad "sweep-scaled: $(cut -d, -f7,9 j1/sweep.csv | tr '\n' ' ')"
# a tree's AllReduce moves less over the spine than a ring's here: faster
awk -F, '$1 ~ /^[0-9]/ { bw[$3] += $6; n[$3]++ } END { exit !(bw["tree"] / n["tree"] > 1.5 * bw["ring"] / n["ring"]) }' j1/sweep.csv &&
	ok sweep-tree-faster || bad "sweep-tree-faster: $(cut -d, -f3,6 j1/sweep.csv | tr '\n' ' ')"

same() { cmp -s j1/sweep.csv "$1/sweep.csv" && cmp -s j1/sweep.json "$1/sweep.json"; }
run sweep-j2 0 "$F" sweep grid.yaml -o j2 -j 2 -q && { same j2 && ok sweep-j2 || bad "sweep-j2: tables differ"; }

# two MPI ranks, each its share, rank 0 merges
if command -v mpirun >/dev/null; then
	run sweep-mpi 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=false \
		mpirun --oversubscribe -np 2 "$F" sweep grid.yaml -o mpi && {
		[ "$(grep -c 'points in this share: 4 to run' "$tmp/err")" -eq 2 ] && same mpi &&
			[ ! -e mpi/ranks ] && ok sweep-mpi || bad "sweep-mpi: $(head -c 300 "$tmp/err")"; }
else
	echo "skip: sweep-mpi (no mpirun: Debian's openmpi-bin)"
fi

# rank 0 does not wait for ever: a rank that failed says so, and
# --timeout ends a wait in which no point is finished (the launcher's
# variables set by hand, every point already done)
cp -r j1 t1 && cp -r j1 t2
run sweep-rank-timeout 4 env FABSCOPE_TOKEN=sweeptest PMI_RANK=0 PMI_SIZE=2 "$F" sweep grid.yaml -o t1 --timeout 2 -q && {
	has "$tmp/err" "rank 1 of 2 has not finished its share, and no point was finished for 2 s" && [ ! -e t1/sweep.csv.new ] &&
		ok sweep-rank-timeout || bad "sweep-rank-timeout: $(cat "$tmp/err")"; }
run sweep-rank1-done 0 env FABSCOPE_TOKEN=sweeptest PMI_RANK=1 PMI_SIZE=2 "$F" sweep grid.yaml -o t2 -q && {
	for m in t2/ranks/*.1.done; do mv "$m" "${m%.done}.failed"; done
	run sweep-rank-failed 4 env FABSCOPE_TOKEN=sweeptest PMI_RANK=0 PMI_SIZE=2 "$F" sweep grid.yaml -o t2 -q && {
		has "$tmp/err" "rank 1 of 2 failed; the table is not merged" && ok sweep-rank-failed ||
			bad "sweep-rank-failed: $(cat "$tmp/err")"; }
}
run sweep-timeout-bad 2 "$F" sweep grid.yaml --timeout 0 && has "$tmp/err" "--timeout 0: expected a whole number" &&
	ok sweep-timeout-bad || bad "sweep-timeout-bad: $(cat "$tmp/err")"

# the Slurm array: the script's tasks, one after another, then --merge
run sweep-slurm-script 0 "$F" sweep grid.yaml --slurm --tasks 3 -o slurm && {
	has slurm/sweep.sbatch "#SBATCH --array=0-2" && has slurm/sweep.sbatch "--run '$tmp/slurm' --tasks 3" &&
		ok sweep-slurm-script || bad "sweep-slurm-script: $(cat slurm/sweep.sbatch)"; }
t_ok=1
for t in 0 1 2; do
	SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_COUNT=3 SLURM_CPUS_PER_TASK=1 bash slurm/sweep.sbatch >/dev/null 2>"slurm-$t.err" || t_ok=0
done
grep -q "3 points in this share: 3 to run" slurm-0.err && grep -q "2 points in this share: 2 to run" slurm-2.err || t_ok=0
run sweep-slurm-merge 0 "$F" sweep --merge slurm && { [ $t_ok = 1 ] && same slurm && ok sweep-slurm-merge ||
	bad "sweep-slurm-merge: tasks ok $t_ok; $(cat slurm-0.err | head -2)"; }
run sweep-run-no-task 2 "$F" sweep --run slurm --tasks 3 && ok sweep-run-no-task
run sweep-run-bad-task 2 env SLURM_ARRAY_TASK_ID=3 "$F" sweep --run slurm --tasks 3 && ok sweep-run-bad-task
# a negative or malformed index is refused by name (it was a null pointer read)
for v in -1 -5 abc 1x ""; do
	run "sweep-run-task-[$v]" 2 env SLURM_ARRAY_TASK_ID="$v" "$F" sweep --run slurm --tasks 3 && {
		has "$tmp/err" "SLURM_ARRAY_TASK_ID (the task's index) is \"$v\": expected a whole number from 0" &&
			ok "sweep-run-task-[$v]" || bad "sweep-run-task-[$v]: $(cat "$tmp/err")"; }
done

# resume: two points' documents gone, the other six kept as they are
cp -r j1 res
rm "res/points/$(sed -n 3p res/sweep.csv | awk -F, '{print $NF}').json" \
	"res/points/$(sed -n 8p res/sweep.csv | awk -F, '{print $NF}').json"
ls -l --time-style=+%s.%N res/points >before.txt
sleep 0.05
run sweep-resume 0 "$F" sweep grid.yaml -o res && {
	has "$tmp/err" "8 points in the grid: 2 to run, 6 already done" && same res &&
		[ "$(grep -c ': ok in' "$tmp/err")" -eq 2 ] && ok sweep-resume || bad "sweep-resume: $(head -2 "$tmp/err")"; }
ls -l --time-style=+%s.%N res/points | grep -F -x -c -f before.txt >kept.txt
[ "$(cat kept.txt)" -eq 6 ] && ok sweep-resume-untouched || bad "sweep-resume-untouched: $(cat kept.txt) of 6 unchanged"

# an interrupt (SIGINT) in the middle: what is done stays done
cat >slow.yaml <<EOF
scenario: $ex/oversubscription/scenario.yaml
command: coll
vary:
  collective.algo: [ring, tree]
seeds: 3
EOF
"$F" sweep slow.yaml -o slow -q >/dev/null 2>slow.err &
pid=$!
i=0
while [ "$(ls slow/points 2>/dev/null | grep -c json)" -lt 1 ] && [ $i -lt 300 ]; do
	sleep 0.02
	i=$((i + 1))
done
kill -INT $pid
wait $pid
irc=$?
n=$(ls slow/points | grep -c '\.json$')
if [ "$n" -lt 6 ]; then
	run sweep-interrupt 0 "$F" sweep slow.yaml -o slow && {
		[ "$irc" -eq 130 ] && has "$tmp/err" "6 points in the grid: $((6 - n)) to run, $n already done" &&
			has "$tmp/out" "6 points: 6 ok" && ok sweep-interrupt ||
			bad "sweep-interrupt: exit $irc, $n done; $(head -1 "$tmp/err")"; }
else
	bad "sweep-interrupt: the sweep ended before the interrupt ($n points done)"
fi
# no half-written document left behind (temporary files are .NAME.PID.XXXXXX)
[ -z "$(find slow -name '.*.[0-9]*.*')" ] && ok sweep-interrupt-no-partial ||
	bad "sweep-interrupt-no-partial: $(find slow | head)"

# a point that fails (more GPUs than the cluster has) is reported; the
# others run; running again tries it again and only it
cat >fail.yaml <<EOF
scenario: $ex/oversubscription/scenario.yaml
command: coll
set: {collective.min_bytes: 1MiB, collective.max_bytes: 1MiB}
vary:
  collective.gpus: [16, 128, 32]
EOF
run sweep-failed 1 "$F" sweep fail.yaml -o fail && {
	has "$tmp/out" "3 points: 2 ok, 1 failed" && has "$tmp/err" "point 1 failed:" && has "$tmp/err" "128 GPUs asked" &&
		grep -q '^1,128,failed,,' fail/sweep.csv && grep -q '"error": ".*128 GPUs asked' fail/sweep.json &&
		ok sweep-failed || bad "sweep-failed: $(cat "$tmp/out" "$tmp/err" | head -5)"; }
run sweep-failed-again 1 "$F" sweep fail.yaml -o fail && {
	has "$tmp/err" "1 to run, 2 already done" && ok sweep-failed-again || bad "sweep-failed-again: $(head -1 "$tmp/err")"; }

# bad grids: exit 3, at the line and column
printf 'vary:\n  collective.algo: [ring, trees]\n' >b1.yaml
run sweep-bad-value 3 "$F" sweep b1.yaml && {
	has "$tmp/err" "b1.yaml:2:27: vary: collective.algo=trees" && [ ! -e b1.sweep ] && ok sweep-bad-value ||
		bad "sweep-bad-value: $(cat "$tmp/err")"; }
printf 'vary:\n  topology.leafs: [2, 4]\n' >b2.yaml
run sweep-bad-key 3 "$F" sweep b2.yaml && { has "$tmp/err" "unknown key (did you mean 'leaves'?)" && ok sweep-bad-key || bad "sweep-bad-key: $(cat "$tmp/err")"; }
printf 'vary:\n  topology.leaves: [2]\nbogus: 1\n' >b3.yaml
run sweep-bad-top 3 "$F" sweep b3.yaml && { has "$tmp/err" "b3.yaml:3:1: unknown key \"bogus\"" && ok sweep-bad-top || bad "sweep-bad-top: $(cat "$tmp/err")"; }
printf 'scenario: nowhere.yaml\nseeds: 2\n' >b4.yaml
run sweep-bad-scenario 4 "$F" sweep b4.yaml && { has "$tmp/err" "b4.yaml:1:11: scenario: nowhere.yaml" && ok sweep-bad-scenario || bad "sweep-bad-scenario: $(cat "$tmp/err")"; }
printf 'vary:\n  topology.leaves: [2, 2]\n' >b5.yaml
run sweep-bad-twice 3 "$F" sweep b5.yaml && { has "$tmp/err" "a value given twice" && ok sweep-bad-twice || bad "sweep-bad-twice: $(cat "$tmp/err")"; }
printf 'seeds: 2\nresults:\n  x: "summary..drops"\n' >b6.yaml
run sweep-bad-path 3 "$F" sweep b6.yaml && { has "$tmp/err" "b6.yaml:3:6: results: x: expected a path" && ok sweep-bad-path || bad "sweep-bad-path: $(cat "$tmp/err")"; }
# a plan that is not one
cp -r j1 corrupt && echo '{"schema": "fabscope.sweep-plan/1", "command": "coll"}' >corrupt/plan.json
run sweep-bad-plan 3 "$F" sweep --merge corrupt && { has "$tmp/err" "plan.json:" && ok sweep-bad-plan || bad "sweep-bad-plan: $(cat "$tmp/err")"; }
run sweep-usage 2 "$F" sweep && ok sweep-usage
# a results path that no point's document has (misspelled): warned after
# the merge, the table still written
printf 'scenario: %s/default/scenario.yaml\ncommand: coll\nset: {collective.min_bytes: 1KiB, collective.max_bytes: 1KiB}\nvary: {collective.algo: [ring]}\nresults:\n  busbw: collective.rows[-1].busbw_GBps\n  ecn: summary.ecn_markz\n' "$ex" >b7.yaml
run sweep-absent-field 0 "$F" sweep b7.yaml -o b7.sweep -q && {
	has "$tmp/err" "warning: results.ecn: summary.ecn_markz is in no point's result document" &&
		! has "$tmp/err" "results.busbw" && ok sweep-absent-field || bad "sweep-absent-field: $(cat "$tmp/err")"; }

echo "sweep: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
