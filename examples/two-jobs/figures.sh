#!/bin/sh
# The figures of README.md, from the commands it shows at seeds 1 to 4
# (usage: from the repository root, sh examples/two-jobs/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/two-jobs/scenario.yaml
for s in 1 2 3 4; do
	json both$s sim $X --seed $s
	json alone$s sim $X --set jobs.1.start=1s --seed $s
done
calc '
# job a'"'"'s mean step in ms
function a(r,   i) {
	for (i = 0; (r ".jobs." i ".name") in V; i++)
		if (V[r ".jobs." i ".name"] == "a")
			return get(r ".jobs." i ".stats.mean_ps") / 1e9
	print "figures: no job a in " r > "/dev/stderr"
	exit 1
}
END {
	n = split("alone both", r, " ")
	for (i = 1; i <= n; i++) {
		lo[i] = hi[i] = a(r[i] 1)
		m[i] = 0
		for (s = 1; s <= 4; s++) {
			x = a(r[i] s)
			m[i] += x / 4
			if (x < lo[i]) lo[i] = x
			if (x > hi[i]) hi[i] = x
		}
		put(r[i], fmt("%.3f", a(r[i] 1)) " ms | " fmt("%.3f", lo[i]) " to " fmt("%.3f", hi[i]) \
			" ms, mean " fmt("%.3f", m[i]) " ms |")
		if (hi[i] / lo[i] - 1 > moves)
			moves = hi[i] / lo[i] - 1
	}
	put("slow1", fmt("%.0f", 100 * (a("both1") / a("alone1") - 1)))
	put("slowm", fmt("%.0f", 100 * (m[2] / m[1] - 1)))
	put("moves", fmt("%.0f", 100 * moves))
}' "$T/flat"
block <<'EOT'
| job a | mean step, seed 1 | seeds 1 to 4 |
|---|---|---|
| alone | {alone}
| next to job b | {both}

Lesson: jobs on different servers still meet in the fabric; the slowdown
({slow1}% here, {slowm}% on the mean of four seeds) comes from the shared uplinks,
and goes away with placement (one leaf per job) or scheduling (not at the
same time).  Two iterations are few: how the rings' flows hash onto the
uplinks and line up moves a single step by up to {moves}% from seed to seed
(`--seed N`), so compare means over seeds before acting on a difference.
EOT
