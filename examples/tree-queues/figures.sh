#!/bin/sh
# The figures of README.md, from the commands it shows at seeds 1 to 4
# (usage: from the repository root, sh examples/tree-queues/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/tree-queues/scenario.yaml
for s in 1 2 3 4; do
	for e in packet fair fifo; do
		case $e in
		packet) set -- --debug ;;
		fair) set -- --engine flow ;;
		fifo) set -- --engine flow --set flow.queues=fifo ;;
		esac
		run c coll $X --seed $s --format csv "$@"
		awk -F, -v k="$e.$s" 'NR == 2 { print k "\t" $6 }' "$T/c.out" >>"$T/v"
		[ $e = packet ] && [ $s = 1 ] && awk '/ AllReduce opCount 0 / {
			for (i = 1; i <= NF; i++) {
				if ($i == "algo") print "algo\t" $(i + 1)
				if ($i == "proto") print "proto\t" $(i + 1)
				if ($i == "chunk") print "chunk\t" $(i + 1)
			}
		}' "$T/c.err" >>"$T/v"
	done
done
calc '
function abs(x) { return x < 0 ? -x : x }
END {
	n = split("packet fair fifo", e, " ")
	for (i = 1; i <= n; i++) {
		row = ""
		m[i] = 0
		for (s = 1; s <= 4; s++) {
			row = row " " fmt("%.1f", get(e[i] "." s)) " us |"
			m[i] += get(e[i] "." s) / 4
			if (i > 1 && abs(get(e[i] "." s) / get("packet." s) - 1) > worst)
				worst = abs(get(e[i] "." s) / get("packet." s) - 1)
		}
		row = row " " fmt("%.1f", m[i]) " us"
		if (i > 1) {
			row = row " (" fmt("%+.1f", 100 * (m[i] / m[1] - 1)) "%)"
			if (abs(m[i] / m[1] - 1) > worstm)
				worstm = abs(m[i] / m[1] - 1)
		}
		put(e[i], row " |")
	}
	put("worstm", fmt("%.1f", 100 * worstm))
	put("worst", fmt("%.1f", 100 * worst))
	put("chunk", commas(get("chunk")))
}' "$T/v"
block <<'EOT'
| engine | seed 1 | seed 2 | seed 3 | seed 4 | mean |
|---|---|---|---|---|---|
| packet |{packet}
| flow, fair shares (the default) |{fair}
| flow, `flow.queues: fifo` |{fifo}

(`auto` runs the {algo} with {proto}, in chunks NCCL would use: {chunk} bytes here.)

Lesson: how a tree is laid out decides what its queues do.  NCCL lays a
tree out as a chain through each server over NVLink and a binary tree
over servers between the chains' heads (`--debug` prints it as NCCL's
`Trees` lines), so per channel only one GPU of a server talks to the
network, and a parent takes at most two children's streams.  Whether the
switch serves those bytes first come, first served (the packet engine,
and `flow.queues: fifo`) or in fair shares hardly matters then: the
means differ by at most {worstm}% and each seed by at most {worst}%.
EOT
