#!/bin/sh
# The figures of README.md, from the command it shows (usage: from the
# repository root, sh examples/default/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
json s sim examples/default/scenario.yaml
calc '
$1 ~ /^s\.ports\.[0-9]+\.max_queue_bytes$/ && $2 + 0 > q {
	q = $2 + 0
	p = $1
	sub(/\.max_queue_bytes$/, "", p)
}
END {
	put("done", get("s.summary.flows_done"))
	put("flows", get("s.summary.flows"))
	put("time", fmt("%.1f", get("s.summary.sim_time_ps") / 1e6))
	put("drops", commas(get("s.summary.drops")))
	put("pause", commas(get("s.summary.pause_frames")))
	put("cnps", commas(get("s.summary.cnps")))
	put("ecn", commas(get("s.summary.ecn_marks")))
	put("q", fmt("%.2f", q / 1048576))
	put("q_node", get(p ".node"))
	put("q_peer", get(p ".peer"))
}' "$T/flat"
block <<'EOT'
All {done} of {flows} flows are done in {time} us; drops {drops}, PAUSE
frames {pause}, CNPs {cnps}, ECN marks {ecn}.  The deepest queue, {q} MiB,
is {q_node}'s port to {q_peer}, the incast's.
EOT
