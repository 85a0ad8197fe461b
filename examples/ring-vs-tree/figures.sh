#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/ring-vs-tree/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/ring-vs-tree/scenario.yaml
# one line a size: "GPUs algo size time algo proto"
for g in 8 64 512; do
	for a in ring tree hierarchical auto; do
		run c coll $X --gpus $g --algo $a -b 4K -e 64M -i 67104768 --format csv
		awk -F, -v g=$g -v a=$a 'NR > 1 { print g "." a "." $1 "\t" $6 "\t" $9 "\t" $10 }' "$T/c.out" >>"$T/v"
	done
done
# the 64-GPU ring on a rail-optimized fabric
run rail coll $X --gpus 64 --algo ring -b 64M -e 64M --set topology.rail_optimized=true --format csv
awk -F, 'NR > 1 { print "rail\t" $6 }' "$T/rail.out" >>"$T/v"
calc '
function t(k) { return get(k) + 0 }
END {
	split("8 64 512", gs, " ")
	split("4096 67108864", sz, " ")
	split("4 KiB,64 MiB", szn, ",")
	n = split("ring tree hierarchical auto", al, " ")
	for (i = 1; i <= 3; i++)
		for (j = 1; j <= 2; j++) {
			row = "| " gs[i] " | " szn[j] " |"
			for (k = 1; k <= n; k++) {
				p = gs[i] "." al[k] "." sz[j]
				split(get(p), f, "\t")
				row = row " " fmt("%.1f", f[1]) " (" (al[k] == "auto" ? f[2] "/" : "") f[3] ") |"
			}
			put("r" i "." j, row)
		}
	put("win64", fmt("%.0f", t("64.ring.4096") / t("64.tree.4096")))
	put("win512", fmt("%.0f", t("512.ring.4096") / t("512.tree.4096")))
	put("ring64", fmt("%.1f", t("64.ring.67108864")))
	put("rail", fmt("%.1f", t("rail")))
	split(get("64.auto.67108864"), f, "\t")
	put("auto64", f[2])
	put("slower64", fmt("%.0f", 100 * (f[1] / t("64.ring.67108864") - 1)))
	split(get("512.ring.67108864"), f, "\t")
	put("ring512proto", f[3])
	put("steps512", commas(2 * (512 - 1)))
	split(get("512.auto.67108864"), f, "\t")
	put("auto512", f[2])
	put("hier512", fmt("%.0f", 100 * (1 - t("512.hierarchical.67108864") / f[1])))
	split(get("8.auto.67108864"), f, "\t")
	put("auto8", fmt("%.1f", f[1]))
	put("auto8algo", f[2] == "nvls" ? "NVLink SHARP" : f[2])
	put("ring8", fmt("%.1f", t("8.ring.67108864")))
}' "$T/v"
block <<'EOT'
| GPUs | size | ring | tree | hierarchical | auto |
|---|---|---|---|---|---|
{r1.1}
{r1.2}
{r2.1}
{r2.2}
{r3.1}
{r3.2}

Lesson: a ring pays 2(n-1) steps of latency, a tree 2 log2(n) between
servers: for small messages the tree wins by {win64}x at 64 GPUs and {win512}x at
512, and `auto` (NCCL's choice) takes it.  At 64 MiB the ring's
bandwidth wins at 64 GPUs ({ring64} us, as fast as on a rail-optimized
fabric, {rail} us), yet `auto`, like NCCL's tuner, picks the {auto64}, {slower64}%
slower (doc/collectives.md says why the model does); at 512 GPUs the
ring's {steps512} steps of {ring512proto} cost more than its bandwidth saves, and the
hierarchical algorithm (rings in servers, then across) beats the {auto512}
`auto` chooses by {hier512}%.  In one server `auto` takes {auto8algo} at 64
MiB: {auto8} us against the ring's {ring8}.  (Each size is a row of its own:
the fabric rests between sizes, doc/collectives.md.)
EOT
