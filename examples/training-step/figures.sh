#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/training-step/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
G=examples/training-step/gpt3.yaml
L=examples/training-step/llama.yaml
json gpipe sim $G --set jobs.0.schedule=gpipe
json g1f1b sim $G --debug
json ginter sim $G --set jobs.0.virtual_stages=2
json l1f1b sim $L
json linter sim $L --set jobs.0.virtual_stages=2
json lflat sim $L --set topology.rail_optimized=false --set topology.leaves=4 --set topology.servers_per_leaf=4
json lmoe sim $L --set jobs.0.model.experts=8
for n in 64 128 256; do
	json s$n sim $L --set topology.servers_per_leaf=32 --set jobs.0.gpus=$n
done
# the algorithms the tensor-parallel all-reduces ran with
awk '$3 ~ /\.tp[0-9]+\.[0-9]+:$/ && $4 == "AllReduce" {
	for (i = 5; i <= NF; i++) if ($i == "algo") a[$(i + 1)] = 1
}
END { for (x in a) n++; for (x in a) print "tp_algo\t" (n > 1 ? "several algorithms" : x == "nvls" ? "NVLink SHARP" : x) }' \
	"$T/g1f1b.err" >>"$T/v"
calc '
function j(r, k) { return get(r ".jobs.0." k) }
function step(r) { return j(r, "stats.mean_ps") / 1e9 }
function row(r) {
	return "| " fmt("%.1f", step(r)) " ms | " commas(j(r, "stats.tokens_per_s")) " | " \
		fmt("%.1f", 100 * j(r, "stats.mfu")) "% | " fmt("%.1f", 100 * j(r, "stats.idle_fraction")) "% |"
}
function par(r) { return "tp " j(r, "tp") " x pp " j(r, "pp") " x dp " j(r, "dp") }
END {
	n = split("gpipe g1f1b ginter l1f1b linter lflat lmoe", r, " ")
	for (i = 1; i <= n; i++)
		put(r[i], row(r[i]))
	put("gpar", par("g1f1b"))
	put("lpar", par("l1f1b"))
	put("moe_params", fmt("%.0f", j("lmoe", "model.params") / 1e9))
	for (g = 64; g <= 256; g *= 2) {
		put("s" g, "| " g " | " j("s" g, "dp") " | " j("s" g, "model.microbatches") " | " fmt("%.1f", step("s" g)) \
			" ms | " (g == 64 ? 1 : fmt("%.2f", step("s64") / step("s" g))) " | " \
			fmt("%.1f", 100 * j("s" g, "stats.mfu")) "% |")
	}
	f = fmt("%.2e", j("g1f1b", "model.flops_per_iteration"))
	sub(/e\+/, "e", f)
	put("flops", f)
	put("gcompute", fmt("%.2f", j("g1f1b", "model.compute_ps") / 1e12))
	put("tp_mib", fmt("%.0f", j("g1f1b", "model.tp_bytes") / 1048576))
	put("tp_n", j("g1f1b", "model.tp_collectives"))
	put("inter", fmt("%.0f", 100 * (1 - step("ginter") / step("g1f1b"))))
	pp = j("s64", "pp")
	put("bub64", (pp - 1) " slots in " (j("s64", "model.microbatches") + pp - 1))
	put("bub256", (pp - 1) " in " (j("s256", "model.microbatches") + pp - 1))
	put("mfu64", fmt("%.0f", 100 * j("s64", "stats.mfu")))
	put("mfu256", fmt("%.0f", 100 * j("s256", "stats.mfu")))
	put("x128", fmt("%.2f", step("s64") / step("s128")))
	put("x256", fmt("%.2f", step("s128") / step("s256")))
}' "$T/flat" "$T/v"
block <<'EOT'
| job | parallelism | step | tokens/s | MFU | GPUs idle |
|---|---|---|---|---|---|
| GPT-3 175B (96 layers, h 12288, 2048 tokens, 64 sequences), GPipe | {gpar} {gpipe}
| same, 1F1B | {g1f1b}
| same, interleaved 1F1B, 2 chunks per stage | {ginter}
| Llama-2-70B (80 layers, h 8192, GQA 64/8, SwiGLU 28672, 4096 tokens, 64 sequences), 1F1B | {lpar} {l1f1b}
| same, interleaved, 2 chunks | {linter}
| same, not rail-optimized (4 leaves x 4 servers) | {lflat}
| same with 8 experts per layer, top 2 ({moe_params} B parameters) | {lmoe}

Strong scaling of the Llama-like job, the global batch fixed at 64
sequences (`--set topology.servers_per_leaf=32 --set jobs.0.gpus=N`):

| GPUs | dp | micro-batches | step | speed-up | MFU |
|---|---|---|---|---|---|
{s64}
{s128}
{s256}

Lessons:

- The model sets the volumes: GPT-3's step computes {flops} FLOPs, {gcompute} s
  of compute per GPU at 50% of peak; its tensor-parallel all-reduces move
  {tp_mib} MiB each, {tp_n} of them per micro-batch and stage, inside the server
  ({tp_algo}, which `auto` picks for them).
- GPipe and 1F1B have the same bubble, (pp - 1) micro-batch slots (1F1B
  differs in memory, which is not modelled); interleaving two chunks per
  stage halves the bubble and saves {inter}% of GPT-3's step.
- With the batch fixed, more GPUs mean fewer micro-batches per replica:
  the pipeline's bubble grows from {bub64} to {bub256} and MFU drops
  from {mfu64}% to {mfu256}%; the step still shrinks, by {x128}x and then {x256}x.
- Here the fabric matters little: the data-parallel all-reduce of each
  stage's gradient overlaps the backward pass, and the traffic that
  blocks (tensor parallel) stays in the server.  A MoE's all-to-alls
  cross the fabric in every layer and block every replica.
EOT
