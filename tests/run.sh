#!/bin/sh
# Runs every test binary given as arguments and the script suites,
# printing each suite's lines as it ends, then the failures again and one
# closing line: "tests: N passed, N failed".  Exit status 1 on failure.
#
# The suites run in TEST_LANES lanes at once (default 2: the programs are
# single-threaded, and two lanes halve the time on two cores).  Every lane
# walks the same list, longest suite first, and runs each suite no other lane
# has taken (mkdir is the lock), so the lanes end together.  The output comes
# in the order the suites end, each suite's line with its wall time in
# seconds.

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lanes=${TEST_LANES:-2}

# one line per suite in $work/list:
#   bin|PATH            a cmocka binary
#   sh|TAG|SCRIPT|INTERPRETER|LABEL
#                       a script whose last line is "TAG: N passed, N failed"
list=$work/list
: >"$list"
# bin NAME: the binary of that name among the arguments
bin() {
	for t in $binaries; do
		case $t in */"$1") echo "bin|$t" >>"$list" ;; esac
	done
}
binaries="$*"
suite() { echo "sh|$1|$2|${4:-sh}|$3" >>"$list"; }

# every figure of examples/*/README.md from its figures.sh, the same in
# every build: with the plain build only (test_examples runs every example
# under ASan); first, the longest there (about 80 s of CPU)
if [ "${BUILD:-build}" = build ]; then
	suite examples tests/cli/examples_test.sh "example figures"
else
	echo "note: the example figures run with the plain build only"
fi
# longest first (their order under AddressSanitizer on two cores)
bin test_examples
bin test_diagnose
# every example's result documents against doc/schema/ (python3-jsonschema),
# with the plain build only: both builds write the same bytes, and every
# example runs under ASan in test_examples or the CLI tests (the suite took
# 90 s of CPU there, re-running them)
if [ "${BUILD:-build}" != build ]; then
	echo "note: the JSON Schema tests run with the plain build only"
elif command -v python3 >/dev/null; then
	suite schema tests/cli/schema_test.py "JSON Schema" python3
else
	echo "skip: the JSON Schema tests need python3-jsonschema"
fi
# the README's samples check what the program prints, the same in every
# build: with the plain build only (under ASan they took two minutes of CPU;
# the schema suite runs every example there)
if [ "${BUILD:-build}" = build ]; then
	suite readme tests/cli/readme_test.sh "README and doc/ samples"
else
	echo "note: the README samples run with the plain build only"
fi
# every result of tests/golden/golden.sh against the committed baseline
# (the plain build only: the same bytes in every build)
if [ "${BUILD:-build}" = build ]; then
	suite golden tests/golden/verify.sh "golden results (tests/golden/baseline.sha256)"
fi
suite probe tests/cli/probe_test.sh "probe tests (loopback)"
bin test_physics
suite cli tests/cli/cli_test.sh "CLI tests"
suite estimate tests/cli/estimate_test.sh "--estimate against the runs"
suite report tests/cli/report_test.sh "report (and in Chromium where installed)"
bin test_collsim
bin test_job
suite plan tests/cli/plan_test.sh "fabscope plan"
suite twin tests/cli/twin_test.sh "fabscope calibrate and twin"
bin test_flow
bin test_coll
suite sweep tests/cli/sweep_test.sh "fabscope sweep (-j, mpirun, Slurm array)"
suite parallel tests/cli/parallel_test.sh "the packet engine over threads"
suite bad tests/bad/run.sh "malformed inputs"
# malformed documents given to report (one change each to a document
# fabscope wrote: doc/schema/'s types, ranges, required keys)
if command -v python3 >/dev/null; then
	suite docs tests/bad/docs.py "malformed documents" python3
else
	echo "skip: the malformed documents need python3"
fi
# the probe between network namespaces (skips without root)
suite net tests/net/probe_netns.sh "namespace tests"
suite twin-net tests/net/twin_netns.sh "the twin on a namespace cluster"
# make install into a scratch prefix (the plain build only: it links a
# program against the installed library)
if [ "${BUILD:-build}" = build ]; then
	suite install tests/install.sh "make install"
fi
# the other binaries, those not listed above
for t in $binaries; do
	grep -qxF "bin|$t" "$list" || echo "bin|$t" >>"$list"
done
suite layers tests/layers.sh "layer rules"
suite size tests/size.sh "file and function sizes (800 and 150 lines)"

# run_bin PATH: a cmocka binary; "passed failed" into $work/$n.n
run_bin() {
	out=$("$1" 2>&1)
	rc=$?
	run=$(printf '%s\n' "$out" | grep -c '^\[ RUN      \]')
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out"
		bad=$rc
		[ "$bad" -gt "$run" ] && bad=$run
		[ "$bad" -eq 0 ] && bad=1
		echo "FAIL: $1 ($((run - bad)) of $run, $(($(date +%s) - t0)) s)"
		echo "$((run - bad)) $bad" >"$work/$n.n"
	else
		echo "ok: $1 ($run, $(($(date +%s) - t0)) s)"
		echo "$run 0" >"$work/$n.n"
	fi
}

# run_suite TAG SCRIPT INTERPRETER LABEL: a script suite; its failures and
# notes are shown
run_suite() {
	out=$($3 "$2" "${FABSCOPE:-./build/fabscope}" 2>&1)
	printf '%s\n' "$out" | grep -v "^$1: " | grep -v '^ok ' || true
	line=$(printf '%s\n' "$out" | grep "^$1: " | tail -1)
	sp=$(echo "$line" | sed -n "s/^$1: \([0-9]*\) passed.*/\1/p")
	sf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -n "$sp" ] && [ -n "$sf" ]; then
		st=ok
		[ "$sf" -ne 0 ] && st=FAIL
		echo "$st: $4 ($sp passed, $sf failed, $(($(date +%s) - t0)) s)"
		echo "$sp $sf" >"$work/$n.n"
	fi
}

# each suite's lines go out as it ends (one write: a small file cat'ed at
# once), so the run shows its progress; the summary at the end repeats the
# failures
lane() {
	n=0
	while IFS='|' read -r kind a b c d; do
		n=$((n + 1))
		mkdir "$work/taken.$n" 2>/dev/null || continue
		t0=$(date +%s)
		if [ "$kind" = bin ]; then
			run_bin "$a"
		else
			run_suite "$a" "$b" "$c" "$d"
		fi </dev/null >"$work/$n.out" 2>&1
		cat "$work/$n.out"
	done <"$list"
}

i=0
while [ "$i" -lt "$lanes" ]; do
	lane &
	i=$((i + 1))
done
wait

passed=0
failed=0
n=0
echo "----"
while IFS='|' read -r kind a b c d; do
	n=$((n + 1))
	grep '^FAIL' "$work/$n.out" 2>/dev/null
	if [ -s "$work/$n.n" ]; then
		read -r sp sf <"$work/$n.n"
		passed=$((passed + sp))
		failed=$((failed + sf))
	else
		failed=$((failed + 1))
		if [ "$kind" = bin ]; then echo "FAIL: $a did not finish"; else echo "FAIL: $d did not finish"; fi
	fi
done <"$list"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
