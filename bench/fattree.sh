#!/bin/sh
# The packet engine's cost as the fabric grows: a 2 MiB permutation over
# 3-tier k-ary fat trees at 100 Gbps (k^3/4 hosts: 1,024 at k = 16, 3,456
# at 24, 8,192 at 32, 16,000 at 40), RoCE with PFC and no congestion
# control, as htsim's htsim_roce runs it.  Per size: events, CPU seconds,
# microseconds of CPU per event (and its ratio to the first size's) and
# peak RSS; reported, not asserted.
# FATTREE_K lists the sizes (default "16 24 32"; 40 takes minutes).
# With HTSIM_ROCE=path/to/htsim_roce (built from Broadcom/csg-htsim's
# sim/: make), htsim runs the same permutation (hosts in the same order:
# under their ToR, the ToRs in their pod) at the same MTU, PFC on, no
# congestion control, and each size gets a line with its CPU, mean and
# p99 FCT beside fabscope's.  htsim reseeds its random paths from the
# clock (sim/roce.cpp, srand(time(NULL))): its FCTs move run to run.
F=${1:-./build/fabscope}
case $HTSIM_ROCE in "" | /*) ;; *) HTSIM_ROCE=$(pwd)/$HTSIM_ROCE ;; esac
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
# htsim_roce on the permutation fabscope just ran (its flows.csv)
htsim() { # K fabscope's USER SYS seconds
	n=$(($1 * $1 * $1 / 4))
	awk -F, -v n="$n" 'NR == 1 { print "Nodes " n; print "Connections " n; next }
		{ printf "%d->%d id %d start 0 size %d\n", $2, $3, $1 + 1, $6 }' "$tmp/out$1/flows.csv" >"$tmp/perm.cm"
	# (in $tmp: htsim writes idmap.txt and its log where it runs)
	(cd "$tmp" && /usr/bin/time -f "%U %S %M" -o "$tmp/htime" "$HTSIM_ROCE" -nodes "$n" -tiers 3 -linkspeed 100000 \
		-mtu 4096 -q 64 -queue_type lossless_input -strat ecmp_host -paths 256 -tm "$tmp/perm.cm" -end 1000000 \
		-o "$tmp/logout.dat" >"$tmp/hout" 2>&1) || { tail -3 "$tmp/hout"; return; }
	read -r hu hs hr <"$tmp/htime"
	awk '/^Flow .* finished at /{ print $6 }' "$tmp/hout" | sort -n >"$tmp/hfct"
	awk -F, 'NR > 1 { print $11 / 1e6 }' "$tmp/out$1/flows.csv" | sort -n >"$tmp/ffct"
	awk -v hu="$hu" -v hs="$hs" -v fu="$2" -v fs="$3" -v hr="$hr" -v hf="$tmp/hfct" -v ff="$tmp/ffct" '
		function stats(f,   x, n, s, v) { n = 0; s = 0; while ((getline x < f) > 0) { v[++n] = x; s += x }
			close(f); mean = n ? s / n : 0; p99 = n ? v[int(0.99 * n + 0.999)] : 0; return n }
		BEGIN { hn = stats(hf); hm = mean; h99 = p99; fnn = stats(ff)
			printf "  htsim_roce: %.2f s CPU (fabscope %.1fx less), peak RSS %d MiB; FCT mean %.1f us, p99 %.1f us over %d flows (fabscope %.1f, %.1f over %d)\n",
				hu + hs, (hu + hs) / (fu + fs), hr / 1024, hm, h99, hn, mean, p99, fnn }' </dev/null
}
for k in ${FATTREE_K:-16 24 32}; do
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$F" sim "$tmp/ft.yaml" --set topology.k="$k" \
		--out "$tmp/out$k" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	events=$(sed -n 's/^fabscope: \([0-9]*\) events in.*/\1/p' "$tmp/err")
	read -r user sys rss <"$tmp/time"
	upe=$(awk -v e="$events" -v u="$user" -v s="$sys" 'BEGIN { printf "%.6f", (u + s) * 1e6 / e }')
	[ -n "$first_upe" ] || first_upe=$upe first_k=$k
	awk -v k="$k" -v e="$events" -v u="$user" -v s="$sys" -v r="$rss" -v upe="$upe" -v f="$first_upe" -v fk="$first_k" 'BEGIN {
		printf "fat-tree k=%d (%d hosts) permutation 2 MiB: %d events, %.2f s CPU, %.3f us per event", k, k * k * k / 4, e, u + s, upe
		if (k != fk) printf " (%.1fx k=%d'"'"'s)", upe / f, fk
		printf ", peak RSS %d MiB\n", r / 1024 }'
	if [ -n "$HTSIM_ROCE" ]; then htsim "$k" "$user" "$sys"; fi
done
