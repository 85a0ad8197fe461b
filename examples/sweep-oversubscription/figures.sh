#!/bin/sh
# The figures of README.md, from the sweep it shows run at seeds 1 to 3
# (seeds: 3; the points at seed 1 are the sweep's as the README runs it)
# (usage: from the repository root, sh examples/sweep-oversubscription/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
sed "s|^scenario: \.\./|scenario: $(pwd)/examples/|" examples/sweep-oversubscription/grid.yaml >"$T/grid.yaml"
echo "seeds: 3" >>"$T/grid.yaml"
run s sweep "$T/grid.yaml" -j 1 -q -o "$T/sw"
# oversubscription,placement,algo,seed,busbw -> "over.placement.algo.seed<TAB>busbw"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["status"] != "ok" { print "figures: point " $1 " failed" > "/dev/stderr"; exit 1 }
	{ print $c["topology.oversubscription"] "." $c["collective.placement"] "." $c["collective.algo"] "." $c["seed"] "\t" $c["busbw_GBps"] }' \
	"$T/sw/sweep.csv" >>"$T/v" || die "the sweep"
calc '
function b(o, p, a) { return get(o "." p "." a ".1") + 0 }
function cost(o, p, a) { return fmt("%.0f", 100 * (1 - b(o, p, a) / b("1:1", p, a))) }
END {
	n = split("1:1 2:1 4:1", ov, " ")
	split("packed spread", pl, " ")
	split("ring tree", al, " ")
	for (i = 1; i <= n; i++)
		for (j = 1; j <= 2; j++) {
			row = "| " ov[i] " | " pl[j] " |"
			for (k = 1; k <= 2; k++)
				row = row " " fmt("%.1f", b(ov[i], pl[j], al[k])) " GB/s |"
			for (k = 1; k <= 2; k++) {
				lo = hi = b(ov[i], pl[j], al[k])
				for (s = 2; (ov[i] "." pl[j] "." al[k] "." s) in V; s++) {
					x = get(ov[i] "." pl[j] "." al[k] "." s) + 0
					if (x < lo) lo = x
					if (x > hi) hi = x
				}
				row = row " " fmt("%.1f", lo) " to " fmt("%.1f", hi) " |"
				if (1 - lo / hi > most) {
					most = 1 - lo / hi
					which = ov[i] " " pl[j] " " al[k]
				}
			}
			put("row." i "." j, row)
		}
	put("packed2", cost("2:1", "packed", "ring"))
	put("packed4", cost("4:1", "packed", "ring"))
	put("spread2", cost("2:1", "spread", "ring"))
	put("spread4", cost("4:1", "spread", "ring"))
	put("ecmp", fmt("%.0f", 100 * (1 - b("1:1", "spread", "ring") / b("1:1", "packed", "ring"))))
	put("tree4", fmt("%.1f", b("4:1", "spread", "tree") / b("4:1", "spread", "ring")))
	put("tree1", fmt("%.0f", 100 * (1 - b("1:1", "packed", "tree") / b("1:1", "packed", "ring"))))
	put("most", fmt("%.0f", 100 * most))
	put("which", which)
}' "$T/v"
block <<'EOT'
| oversubscription | placement | ring busbw | tree busbw | ring, seeds 1 to 3 | tree, seeds 1 to 3 |
|---|---|---|---|---|---|
{row.1.1}
{row.1.2}
{row.2.1}
{row.2.2}
{row.3.1}
{row.3.2}
EOT
block <<'EOT'
Lessons:
- Packed ranks keep a rank-order ring's server hops mostly under one
  leaf: 2:1 costs it {packed2}%, 4:1 {packed4}%.
- Spread ranks send every server hop of the ring across the spine: 2:1
  costs {spread2}% and 4:1 {spread4}%, and ECMP collisions already cost {ecmp}% at 1:1.
- The tree crosses the spine less than a spread ring: at 4:1 spread it is
  {tree4} times as fast as the ring, at 1:1 packed {tree1}% slower.

The numbers move with `seeds:`, the seeds that draw the ECMP paths: the
last two columns are the range over seeds 1 to 3 (`seeds: 3` in the
grid), up to {most}% of the best seed's bus bandwidth ({which}).
EOT
