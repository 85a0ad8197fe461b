#!/bin/sh
# Runs every test binary given as arguments and the CLI tests, then prints
# one closing line: "tests: N passed, N failed".  Exit status 1 on failure.
# The binaries, then the report's and the schema suites, run beside the
# other script suites (two lanes: the programs are single-threaded, and
# the suite takes half the time on two cores); their lines come after the
# other suites'.

# script_suite TAG LABEL SCRIPT [INTERPRETER]: a suite (a shell script
# unless told) whose last line is "TAG: N passed, N failed"; its failures
# and notes are shown
script_suite() {
	out=$(${4:-sh} "$3" "${FABSCOPE:-./build/fabscope}" 2>&1)
	printf '%s\n' "$out" | grep -v "^$1: " | grep -v '^ok ' || true
	line=$(printf '%s\n' "$out" | grep "^$1: " | tail -1)
	sp=$(echo "$line" | sed -n "s/^$1: \([0-9]*\) passed.*/\1/p")
	sf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$sp" ]; then
		failed=$((failed + 1))
		echo "FAIL: $2 did not finish"
	else
		passed=$((passed + sp))
		failed=$((failed + sf))
		echo "ok: $2 ($sp passed, $sf failed)"
	fi
}
passed=0
failed=0
units_out=$(mktemp)
trap 'rm -f "$units_out" "$units_out.n"' EXIT
(
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	run=$(printf '%s\n' "$out" | grep -c '^\[ RUN      \]')
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out"
		bad=$rc
		[ "$bad" -gt "$run" ] && bad=$run
		[ "$bad" -eq 0 ] && bad=1
		failed=$((failed + bad))
		passed=$((passed + run - bad))
		echo "FAIL: $t"
	else
		passed=$((passed + run))
		echo "ok: $t ($run)"
	fi
done
# two suites beside the binaries: the two lanes take about as long
script_suite report "report (and in Chromium where installed)" tests/cli/report_test.sh
# every example's result documents against doc/schema/ (python3-jsonschema)
if command -v python3 >/dev/null; then
	script_suite schema "JSON Schema" tests/cli/schema_test.py python3
else
	echo "skip: the JSON Schema tests need python3-jsonschema"
fi
echo "$passed $failed" >"$units_out.n"
) >"$units_out" 2>&1 &
units_pid=$!
script_suite layers "layer rules" tests/layers.sh
script_suite cli "CLI tests" tests/cli/cli_test.sh
script_suite bad "malformed inputs" tests/bad/run.sh
# make install into a scratch prefix (the plain build only: it links a
# program against the installed library)
if [ "${BUILD:-build}" = build ]; then
	script_suite install "make install" tests/install.sh
fi
script_suite probe "probe tests (loopback)" tests/cli/probe_test.sh
script_suite readme "README samples" tests/cli/readme_test.sh
script_suite plan "fabscope plan" tests/cli/plan_test.sh
script_suite sweep "fabscope sweep (-j, mpirun, Slurm array)" tests/cli/sweep_test.sh
script_suite parallel "the packet engine over threads" tests/cli/parallel_test.sh
# the probe between network namespaces (skips without root)
script_suite net "namespace tests" tests/net/probe_netns.sh
wait "$units_pid"
cat "$units_out"
if [ -s "$units_out.n" ]; then
	read -r up uf <"$units_out.n"
	passed=$((passed + up))
	failed=$((failed + uf))
else
	failed=$((failed + 1))
	echo "FAIL: the test binaries did not finish"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
