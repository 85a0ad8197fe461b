#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/ecmp-polarization/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/ecmp-polarization/scenario.yaml
# sim NAME ARG...: the run, its document flattened, diagnose's first line
sim() {
	s_name=$1
	shift
	run "$s_name" sim $X --out "$T/$s_name" -q "$@"
	flat "$s_name" "$T/$s_name/result.json" >>"$T/flat"
	"$F" diagnose "$T/$s_name/result.json" >"$T/$s_name.diag"
	case $? in
	0) printf '%s\thealthy\n' "$s_name.diag" ;;
	1) sed -n "s/^1\. /$s_name.diag\t/p" "$T/$s_name.diag" ;;
	*) die "diagnose $s_name failed" ;;
	esac >>"$T/v"
}
sim same
sim seeds --set fabric.ecmp.same_hash=false
sim xor --set fabric.ecmp.same_hash=false --set fabric.ecmp.hash=xor
calc '
END {
	n = split("same seeds xor", r, " ")
	for (i = 1; i <= n; i++) {
		p = r[i] ".ecmp."
		# tier 1 edge uplinks, tier 2 aggregation uplinks
		put(r[i] ".idle1", get(p "0.unused"))
		put(r[i] ".idle2", get(p "1.unused"))
		put(r[i] ".idle", get(p "0.unused") + get(p "1.unused"))
		put(r[i] ".links2", get(p "1.uplinks"))
		put(r[i] ".links", get(p "0.uplinks") + get(p "1.uplinks"))
		put(r[i] ".max2", fmt("%.1f", get(p "1.max_over_mean")))
		put(r[i] ".slowest", fmt("%.0f", get(r[i] ".summary.fct_ps.max") / 1e6))
	}
}' "$T/flat"
block <<'EOT'
With one hash seed everywhere, the aggregation switches choose the core
link the edge switches' choice already implies: {same.idle2} of {same.links2}
aggregation-to-core links carry nothing, the busiest {same.max2}x the mean, and the
slowest flow takes {same.slowest} us.  Diagnose reports `{same.diag}`
with the busiest port.  With per-switch seeds: {seeds.idle} idle links of {seeds.links}
({seeds.idle1} edge, {seeds.idle2} aggregation uplinks), the slowest flow {seeds.slowest} us, diagnose {seeds.diag}.

A weak hash undoes the seeds: with `fabric.ecmp.hash: xor` (the
5-tuple's fields XORed with the switch's seed, modulo the ports), per-switch
seeds only permute the same split at every tier, and diagnose again finds
{xor.idle2} of {xor.links2} aggregation-to-core links idle, the busiest {xor.max2}x the mean
(`{xor.diag}`):
EOT
