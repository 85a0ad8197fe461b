#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/overlap/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/overlap/scenario.yaml
json off sim $X --debug
json on sim $X --set jobs.0.overlap=true
# the first bucket's AllReduce in the debug log: its algorithm and time
awk '/ AllReduce opCount 0 / {
	for (i = 1; i <= NF; i++) {
		if ($i == "algo") print "algo\t" $(i + 1)
		if ($i == "proto") print "proto\t" $(i + 1)
		if ($i == "time") print "ar\t" sprintf("%.1f", $(i + 1))
	}
}' "$T/off.err" >>"$T/v"
calc '
END {
	n = split("off on", r, " ")
	for (i = 1; i <= n; i++) {
		put(r[i] ".step", fmt("%.3f", get(r[i] ".jobs.0.stats.mean_ps") / 1e9))
		put(r[i] ".idle", fmt("%.1f", 100 * get(r[i] ".jobs.0.stats.idle_fraction")))
	}
	put("off.idle0", fmt("%.0f", 100 * get("off.jobs.0.stats.idle_fraction")))
	put("comm", fmt("%.3f", get("off.jobs.0.iterations.0.comm_ps") / 1e9))
}' "$T/flat"
block <<'EOT'
Each bucket's AllReduce runs as a {algo} with {proto}, as NCCL's model chooses,
in {ar} us: {comm} ms of communication a step.

| overlap | step time | GPUs idle |
|---|---|---|
| off | {off.step} ms | {off.idle}% |
| on | {on.step} ms | {on.idle}% |

Lesson: without overlap the step is compute + communication and the GPUs
wait {off.idle0}% of the time; all-reducing each bucket while the backward pass
produces the next hides all but the last bucket.
EOT
