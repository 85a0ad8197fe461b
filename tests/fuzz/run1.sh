#!/bin/sh
# One fuzz target for SECONDS on a fresh copy of its seed corpus (the
# shared one and its own); one line on success, its log's tail on failure
# (exit 1).  make fuzz-run runs the targets through this, one per core.
t=$1
secs=$2
rm -rf "build-fuzz/corpus-$t" && cp -r tests/fuzz/corpus "build-fuzz/corpus-$t" || exit 1
if [ -d "tests/fuzz/corpus-$t" ]; then
	cp "tests/fuzz/corpus-$t"/* "build-fuzz/corpus-$t/" || exit 1
fi
if ! "./build-fuzz/$t" -max_total_time="$secs" -max_len=4096 -artifact_prefix="build-fuzz/$t-" \
	"build-fuzz/corpus-$t" 2>"build-fuzz/$t.log"; then
	tail -40 "build-fuzz/$t.log"
	echo "fuzz: $t: FAILED"
	exit 1
fi
echo "fuzz: $t: $(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$t.log" || tail -1 "build-fuzz/$t.log")"
