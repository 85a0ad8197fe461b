#!/bin/sh
# The packet engine's cost as the fabric grows: a 2 MiB permutation over
# 3-tier k-ary fat trees at 100 Gbps (k^3/4 hosts: 1,024 at k = 16, 3,456
# at 24, 8,192 at 32, 16,000 at 40), RoCE with PFC and no congestion
# control, as htsim's htsim_roce runs it.  Per size: events, CPU seconds,
# microseconds of CPU per event and peak RSS; reported, not asserted.
# FATTREE_K lists the sizes (default "16 24 32"; 40 takes minutes).
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/ft.yaml" <<'YAML'
topology: {kind: fat-tree, k: 16, gpus_per_server: 1, nics_per_server: 1,
           host_rate: 100Gbps, fabric_rate: 100Gbps, core_rate: 100Gbps}
fabric: {dcqcn: {enabled: false}}
traffic:
  generators:
    - {kind: permutation, bytes: 2MiB}
YAML
for k in ${FATTREE_K:-16 24 32}; do
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$F" sim "$tmp/ft.yaml" --set topology.k="$k" \
		--out "$tmp/out$k" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	events=$(sed -n 's/^fabscope: \([0-9]*\) events in.*/\1/p' "$tmp/err")
	read -r user sys rss <"$tmp/time"
	awk -v k="$k" -v e="$events" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
		printf "fat-tree k=%d (%d hosts) permutation 2 MiB: %d events, %.2f s CPU, %.3f us per event, peak RSS %d MiB\n",
			k, k * k * k / 4, e, u + s, (u + s) * 1e6 / e, r / 1024 }'
done
