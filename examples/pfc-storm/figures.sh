#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/pfc-storm/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/pfc-storm/scenario.yaml
run storm matrix $X --out "$T/storm" -q
run base matrix $X --set faults.0.start=1s --set faults.0.end=2s --out "$T/base" -q
run_rc d 1 diagnose "$T/storm/result.json" --baseline "$T/base/result.json"
flat storm "$T/storm/result.json" >>"$T/flat"
# the maximum latency of each matrix; diagnose's first suspect and evidence
for m in storm base; do
	sed -n "s/^latency us:.* max \([0-9.]*\).*/$m.lat\t\1/p" "$T/$m/matrix.txt" >>"$T/v"
done
awk '
	/^1\. / { sub(/^1\. /, ""); print "suspect\t" $0; on = 1; next }
	/^[0-9]+\. / { on = 0 }
	on && / PAUSE frames to .*; the median NIC sent / {
		for (i = 1; i <= NF; i++) if ($i == "sent") s[++n] = $(i + 1)
		print "sent\t" s[1]
		print "median\t" (s[2] == 0 ? "none" : s[2])
	}
	on && / was paused / { for (i = 1; i <= NF; i++) if ($i == "paused") print "paused\t" $(i + 1) " " $(i + 2) }' \
	"$T/d.out" >>"$T/v"
calc '
END {
	put("drops", get("storm.summary.drops") == 0 ? "Nothing is dropped" : get("storm.summary.drops") " packets are dropped")
	put("lat", fmt("%.0f", get("storm.lat")))
	put("base_lat", fmt("%.1f", get("base.lat")))
}' "$T/flat" "$T/v"
block <<'EOT'
A NIC sends PAUSE for 2 ms (its leaf's port toward it is paused
{paused}).  {drops} (PFC is lossless), but the matrix's maximum
latency is {lat} us against {base_lat} us without the storm.
Diagnose's first suspect: `{suspect}`, {sent} PAUSE frames
sent where the median NIC sent {median}.
EOT
