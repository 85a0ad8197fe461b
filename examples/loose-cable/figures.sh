#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/loose-cable/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/loose-cable/scenario.yaml
json job sim $X
json base sim $X --set faults.0.start=1s
json rto sim $X --set fabric.nic.rto=4.294967296s
run m matrix $X --out "$T/mat" -q
run_rc d 1 diagnose "$T/mat/result.json"
# diagnose: the first suspect, the bad frames on each end, the NIC's median
awk '
	/^1\. / { sub(/^1\. /, ""); print "suspect\t" $0; on = 1; next }
	/^[0-9]+\. / { on = 0 }
	on && / received [0-9]+ bad frames/ { for (i = 1; i <= NF; i++) if ($i == "bad") b[++nb] = $(i - 1) }
	on && /^   - matrix: .* median to and from the others/ {
		s = $0
		sub(/.*\(GPUs /, "", s); sub(/\).*/, "", s); gsub(/, /, " and ", s)
		print "gpus\t" s
		for (i = 1; i <= NF; i++) if ($i == "GB/s") { if (!m++) print "nic_med\t" $(i - 1); else print "cl_med\t" $(i - 1) }
	}
	END { print "bad1\t" b[1]; print "bad2\t" b[2] }' "$T/d.out" >>"$T/v"
calc '
END {
	step = get("job.jobs.0.stats.mean_ps") / 1e9
	base = get("base.jobs.0.stats.mean_ps") / 1e9
	put("step", fmt("%.3f", step))
	put("base", fmt("%.3f", base))
	put("slower", fmt("%.0f", 100 * (step / base - 1)))
	put("lost", fmt("%.3f", 100 * get("job.summary.wire_losses") / get("job.summary.data_pkts")))
	put("frames", get("job.summary.wire_losses"))
	d = get("job.summary.drops")
	put("drops", d == 0 ? "no switch dropped anything" : "switches dropped " d)
	put("rto_step", fmt("%.1f", get("rto.jobs.0.stats.mean_ps") / 1e9))
}' "$T/flat"
block <<'EOT'
Measured: a step takes {step} ms instead of {base} ms (+{slower}%);
{lost}% of the cluster's data packets were lost ({frames} frames) and
{drops}.  The matrix and diagnose name
`{suspect}`, GPUs {gpus}, with the bad-frame
counters on both ends ({bad1} and {bad2} frames) and the NIC's median
bandwidth ({nic_med} GB/s against {cl_med} GB/s).

The scenario's NICs retransmit 1 ms after a loss no NAK reported (the
last frames of a message), as NICs with adaptive retransmission do.  With
the queue pairs' ACK timeout alone (`--set fabric.nic.rto=4.294967296s`,
the default: NCCL's `NCCL_IB_TIMEOUT` of 20), each such loss stalls the
step for 4.3 s: a step takes {rto_step} ms.
EOT
