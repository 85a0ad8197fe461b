#!/bin/sh
# Runs every test binary given as arguments and the CLI tests, then prints
# one closing line: "tests: N passed, N failed".  Exit status 1 on failure.
passed=0
failed=0
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
# CLI tests print "cli: N passed, N failed" as their last line
out=$(sh tests/cli/cli_test.sh "${FABSCOPE:-./build/fabscope}" 2>&1)
printf '%s\n' "$out" | grep -v '^cli: ' | grep -v '^ok ' || true
line=$(printf '%s\n' "$out" | grep '^cli: ' | tail -1)
cp=$(echo "$line" | sed -n 's/^cli: \([0-9]*\) passed.*/\1/p')
cf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
if [ -z "$cp" ]; then
	failed=$((failed + 1))
	echo "FAIL: CLI tests did not finish"
else
	passed=$((passed + cp))
	failed=$((failed + cf))
	echo "ok: CLI tests ($cp passed, $cf failed)"
fi
# the probe between two network namespaces (skips without root)
out=$(sh tests/net/probe_netns.sh "${FABSCOPE:-./build/fabscope}" 2>&1)
printf '%s\n' "$out" | grep -v '^net: ' | grep -v '^ok ' || true
line=$(printf '%s\n' "$out" | grep '^net: ' | tail -1)
np=$(echo "$line" | sed -n 's/^net: \([0-9]*\) passed.*/\1/p')
nf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
if [ -z "$np" ]; then
	failed=$((failed + 1))
	echo "FAIL: namespace tests did not finish"
else
	passed=$((passed + np))
	failed=$((failed + nf))
	echo "ok: namespace tests ($np passed, $nf failed)"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
