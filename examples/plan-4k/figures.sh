#!/bin/sh
# The figures of README.md, from the command it shows (usage: from the
# repository root, sh examples/plan-4k/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
run p plan --compare examples/plan-4k/designs.yaml --out "$T/cmp" -q
flat c "$T/cmp/compare.json" >>"$T/flat"
calc '
# the distinct values, rounded, in the order met
function add(list, x) { return index(" " list " ", " " x " ") ? list : (list == "" ? x : list " " x) }
END {
	for (d = 0; ("c.designs." d ".name") in V; d++) {
		p = "c.designs." d "."
		row = "| " get(p "name") " | " commas(get(p "switches")) " | " commas(get(p "transceivers")) \
			" | " fmt("%.1f", get(p "usd") / 1e6) " M | " fmt("%.0f", get(p "watts") / 1e3) \
			" | " commas(get(p "usd") / get("c.designs.0.plan.gpus")) " | " fmt("%.1f", get(p "busbw_GBps")) \
			" | " fmt("%.1f", get(p "min")) " to " fmt("%.1f", get(p "max")) " |"
		put("row" d, row)
	}
	put("cost2", fmt("%.0f", 100 * (1 - get("c.designs.1.usd") / get("c.designs.0.usd"))))
	put("power2", fmt("%.0f", 100 * (1 - get("c.designs.1.watts") / get("c.designs.0.watts"))))
	# the busbw, to 1 GB/s, that 1:1 and 2:1 give over the seeds
	for (d = 0; d < 2; d++)
		for (s = 0; ("c.designs." d ".values." s) in V; s++)
			v = add(v, fmt("%.0f", get("c.designs." d ".values." s)))
	n = split(v, w, " ")
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (w[j] + 0 < w[i] + 0) { t = w[i]; w[i] = w[j]; w[j] = t }
	o = w[1]
	for (i = 2; i <= n; i++)
		o = o (i == n ? " or " : ", ") w[i]
	put("draws", o)
	put("cost3", fmt("%.0f", 100 * (get("c.designs.2.usd") / get("c.designs.0.usd") - 1)))
	put("x3", fmt("%.1f", get("c.designs.2.busbw_GBps") / get("c.designs.0.busbw_GBps")))
	# the rail design: the seeds at its best, the others
	max = get("c.designs.2.max")
	for (s = 0; ("c.designs.2.values." s) in V; s++) {
		ns++
		if (get("c.designs.2.values." s) == max)
			at++
		else
			low = low (low == "" ? "" : ", ") fmt("%.0f", get("c.designs.2.values." s)) " at seed " get("c.designs.2.seeds." s)
	}
	words = "zero one two three four five six seven eight nine ten"
	split(words, num, " ")
	put("rail_max", fmt("%.0f", max))
	put("rail_at", (at <= 10 ? num[at + 1] : at) " seeds of " (ns <= 10 ? num[ns + 1] : ns))
	put("rail_low", low)
}' "$T/flat"
block <<'EOT'
| design | switches | transceivers | cost (USD) | power (kW) | USD a GPU | busbw (GB/s): median of seeds 1 to 5 | range |
|---|---|---|---|---|---|---|---|
{row0}
{row1}
{row2}
EOT
block <<'EOT'
Lessons:
- A ring is as fast as its most crowded link: where ECMP puts two of its
  hops on one uplink, the whole ring runs at half speed.  One seed is one
  draw of the paths, so the file runs each design at seeds 1 to 5
  (`workload.seeds`) and the table gives the median and the range.
- 2:1 saves {cost2}% of the network's cost and {power2}% of its power and costs this
  ring nothing: 1:1 and 2:1 each give {draws} GB/s depending on the
  draw.  The ring's hops between servers mostly stay under a leaf, and its
  slowest hop is set by ECMP collisions higher up, not by the leaves'
  uplinks.  A workload with more traffic across leaves (AllToAll, a ring
  in rank order) would feel the halved uplinks.
- Rails cost {cost3}% more (active optical cables instead of copper) and give
  this ring {x3} times the bus bandwidth ({rail_max} GB/s at {rail_at},
  {rail_low}, where one collision remains): consecutive servers'
  same-rail NICs share a leaf, so most ring hops never reach a spine and
  escape the collisions.
- The prices are indicative (doc/plan.md, "Cost and power"): set your own
  under `prices:` before acting on a cost.
EOT
