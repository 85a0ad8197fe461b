#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/autoneg-downgrade/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
run m matrix examples/autoneg-downgrade/scenario.yaml --out "$T/mat" -q
flat m "$T/mat/result.json" >>"$T/flat"
run_rc d 1 diagnose "$T/mat/result.json"
# the matrix's text: the cluster's median, the slowest endpoint's
awk '/^bandwidth GB\/s:/ { for (i = 1; i < NF; i++) if ($i == "median") print "median\t" $(i + 1) }
	/^slowest endpoints/ { getline; print "slow\t" $1; print "slow_median\t" $2 }' \
	"$T/mat/matrix.txt" >>"$T/v"
# diagnose's first suspect
sed -n 's/^1\. /suspect\t/p' "$T/d.out" | head -1 >>"$T/v"
calc '
$1 ~ /^m\.ports\.[0-9]+\.rate_bps$/ { rate[$2] = 1 }
END {
	slow = get("slow")
	for (i = 0; ("m.matrix.endpoints." i) in V; i++)
		if (V["m.matrix.endpoints." i] == slow)
			s = i
	best = 0
	for (i = 0; ("m.matrix.endpoints." i) in V; i++) {
		if (V["m.matrix.bw_GBps." s "." i] + 0 > best) best = V["m.matrix.bw_GBps." s "." i] + 0
		if (V["m.matrix.bw_GBps." i "." s] + 0 > best) best = V["m.matrix.bw_GBps." i "." s] + 0
	}
	n = 0
	for (r in rate) { n++; one = r }
	put("rate", n == 1 ? fmt("%.0f", one / 1e9) : "mixed")
	put("best", fmt("%.2f", best))
	# a 100G link: a quarter of the 400G theory
	put("cap", fmt("%.2f", get("m.matrix.theory_GBps") / 4))
	put("slow_median_1", fmt("%.1f", get("slow_median")))
	put("median_1", fmt("%.1f", get("median")))
}' "$T/flat" "$T/v"
block <<'EOT'
Every port of the result reports {rate} Gbps; {slow}'s best pair moves
{best} GB/s (a 100G link carries at most {cap} GB/s of payload), its median
{slow_median_1} GB/s against the cluster's {median_1} GB/s; diagnose names
`{suspect}` from the measurement alone.
EOT
