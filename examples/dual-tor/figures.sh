#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/dual-tor/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/dual-tor/scenario.yaml
one="--set topology.nic_ports=1 --set topology.dual_tor=false --set topology.host_rate=400Gbps
--set topology.leaves=1 --set topology.servers_per_leaf=4 --set faults.0.node=server0.nic0"
healthy="--set faults.0.start=1s"
down="--set faults.0.kind=down --set faults.0.start=300us"
# shellcheck disable=SC2086
{
	json two_ok coll $X $healthy
	json two_slow coll $X
	json two_down coll $X $down
	json one_ok coll $X $one $healthy
	json one_slow coll $X $one --set faults.0.rate=100Gbps
	# one port down: the collective never ends (exit 5)
	run_rc one_down 5 coll $X $one $down --format json
}
sed -n 's/.*did not finish: \([0-9]*\) queue pairs failed.*/one_down_qps\t\1/p' "$T/one_down.err" >>"$T/v"
calc '
function cell(r) {
	return fmt("%.1f", get(r ".collective.rows.0.time_us")) " us, " \
		fmt("%.1f", get(r ".collective.rows.0.busbw_GBps")) " GB/s"
}
END {
	n = split("two_ok two_slow two_down one_ok one_slow", r, " ")
	for (i = 1; i <= n; i++)
		put(r[i], cell(r[i]))
	put("moved", get("two_down.summary.failovers"))
	put("resent", get("two_down.summary.retx_pkts"))
	put("failed", get("two_down.summary.qp_errors") == 0 ? "none" : get("two_down.summary.qp_errors"))
	put("x_one", fmt("%.0f", get("one_slow.collective.rows.0.time_us") / get("one_ok.collective.rows.0.time_us")))
	put("x_two", fmt("%.0f", get("two_slow.collective.rows.0.time_us") / get("two_ok.collective.rows.0.time_us")))
}' "$T/flat" "$T/v"
block <<'EOT'
| NICs | healthy | one port at a quarter of its speed | one port down at 300 us |
|---|---|---|---|
| 1 x 400G, one leaf | {one_ok} | {one_slow} | never finishes: {one_down_qps} queue pairs fail (exit 5) |
| 2 x 200G, dual ToR | {two_ok} | {two_slow} | {two_down}: {moved} queue pairs move, {resent} packets resent, {failed} fail |

Lesson: a ring runs at its slowest channel, so one bad NIC sets the pace
of the whole collective.  With one port, that NIC's degradation is the
collective's ({x_one}x slower), and a port that goes down takes the collective
with it.  With two ports on two ToRs, the NIC's queue pairs spread over
both; a port that comes up slow is passed over when queue pairs are
opened, and one that goes down hands its queue pairs to the other port,
whose transport resends what was lost: the NIC keeps half its bandwidth,
and the collective finishes {x_two}x slower instead of {x_one}x slower or never (a
ToR that fails takes a port of every NIC under it, and every server stays
reachable).  `summary.failovers` counts the queue pairs moved.
EOT
