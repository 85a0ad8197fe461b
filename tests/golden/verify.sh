#!/bin/sh
# make test's golden suite: every case of golden.sh against the committed
# baseline (tests/golden/baseline.sha256).  Last line: "golden: N passed,
# N failed".
exec sh "$(dirname "$0")/golden.sh" verify "${1:-./build/fabscope}"
