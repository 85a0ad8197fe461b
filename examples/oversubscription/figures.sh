#!/bin/sh
# The figures of README.md, from the commands it shows, and the rank-order
# ring at seeds 2 to 6 (usage: from the repository root,
# sh examples/oversubscription/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/oversubscription/scenario.yaml
two="--set topology.oversubscription=2:1"
# coll NAME ARG...: the busbw of the one size, its algorithm and protocol
coll() {
	c_name=$1
	shift
	run "$c_name" coll $X "$@" --format csv
	awk -F, -v n="$c_name" 'NR == 2 { print n ".busbw\t" $8; print n ".algo\t" $9; print n ".proto\t" $10 }' \
		"$T/$c_name.out" >>"$T/v"
}
coll rank1 --ring-order rank
coll rank2 --ring-order rank $two
coll topo1 --ring-order topology
coll topo2 --ring-order topology $two
for s in 2 3 4 5 6; do
	coll rank1s$s --ring-order rank --seed $s
	coll rank2s$s --ring-order rank $two --seed $s
done
calc '
END {
	n = split("rank1 rank2 topo1 topo2", r, " ")
	for (i = 1; i <= n; i++)
		put(r[i], fmt("%.1f", get(r[i] ".busbw")) " GB/s")
	lo = hi = get("rank2.busbw") / get("rank1.busbw")
	put("ratio", fmt("%.2f", lo))
	for (s = 2; s <= 6; s++) {
		x = get("rank2s" s ".busbw") / get("rank1s" s ".busbw")
		if (x < lo) lo = x
		if (x > hi) hi = x
	}
	put("lo", fmt("%.2f", lo))
	put("hi", fmt("%.2f", hi))
	put("rank1.busbw1", fmt("%.1f", get("rank1.busbw")))
	put("topo1.busbw1", fmt("%.1f", get("topo1.busbw")))
	# the algorithm and protocol auto chose, if the same on every run
	a = get("rank1.algo") " with " get("rank1.proto")
	for (k in V)
		if (k ~ /\.algo$/ && V[k] != get("rank1.algo") || k ~ /\.proto$/ && V[k] != get("rank1.proto"))
			a = "different algorithms"
	put("auto", a)
}' "$T/v"
block <<'EOT'
| ring order | 1:1 busbw | 2:1 busbw |
|---|---|---|
| rank (every server hop crosses the spine) | {rank1} | {rank2} |
| topology (one hop per leaf crosses) | {topo1} | {topo2} |

(`auto` runs the {auto} here.)
EOT
block <<'EOT'
ECMP collisions already cost the rank-order ring at 1:1 ({rank1.busbw1} GB/s where
the topology order gets {topo1.busbw1}), by an amount that moves with the seed, so
its 2:1/1:1 ratio is {ratio} here and {lo} to {hi} over seeds 1 to 6.
EOT
