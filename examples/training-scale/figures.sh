#!/bin/sh
# The figures of README.md, from the commands it shows and the variants its
# text quotes (usage: from the repository root,
# sh examples/training-scale/figures.sh [FABSCOPE]).  About 45 s of CPU,
# most of it the mixture-of-experts step; `make test` runs it.  The
# 131,072-GPU step and the 16k mixture-of-experts step are
# examples/training-131k's.  Wall-clock times and memory are measured, not
# simulated: the README gives them outside the blocks.
. tests/cli/figures_lib.sh
D=examples/training-scale
# what the figures need of the documents
FIG_KEEP='^(config[.]jobs[.]0[.]model[.]|jobs[.]0[.](dp|tp|pp)$|jobs[.]0[.](stats|model|iterations[.]0)[.]|summary[.])'
json g4k sim $D/gpt3-4k.yaml
json g16k sim $D/gpt3-16k.yaml
json l16k sim $D/llama-16k.yaml
json moe4k sim $D/llama-moe-4k.yaml
calc '
function j(r, k) { return get(r ".jobs.0." k) }
function ms(x) { return fmt("%.1f", x / 1e9) " ms" }
END {
	n = split("g4k g16k l16k moe4k", r, " ")
	for (i = 1; i <= n; i++) {
		B = get(r[i] ".config.jobs.0.model.global_batch")
		s = get(r[i] ".config.jobs.0.model.seq_len")
		put(r[i], "tp " j(r[i], "tp") " x pp " j(r[i], "pp") " x dp " j(r[i], "dp") " | " commas(B) " x " \
			commas(s) (i == 1 ? " tokens" : "") " | " j(r[i], "model.microbatches") " | " ms(j(r[i], "stats.mean_ps")) \
			" | " ms(j(r[i], "iterations.0.compute_ps")) " | " ms(j(r[i], "iterations.0.exposed_ps")) " | " \
			fmt("%.1f", 100 * j(r[i], "stats.idle_fraction")) "% | " fmt("%.1f", 100 * j(r[i], "stats.mfu")) \
			"% | " commas(j(r[i], "stats.tokens_per_s")) " |")
	}
	for (i = 1; i <= 2; i++) {
		pp = j(r[i], "pp")
		put(r[i] ".bubble", (pp - 1) " of " (j(r[i], "model.microbatches") + pp - 1))
		put(r[i] ".m", j(r[i], "model.microbatches"))
		put(r[i] ".pp", pp)
	}
	put("l16k.m", j("l16k", "model.microbatches"))
	put("l16k.pp", j("l16k", "pp"))
	put("l16k.dp", j("l16k", "dp"))
	put("l16k.exposed", fmt("%.0f", 100 * j("l16k", "iterations.0.exposed_ps") / j("l16k", "stats.mean_ps")))
	put("l16k.grad", fmt("%.1f", j("l16k", "model.gradient_bytes") / 1e9))
	put("moe4k.exposed", fmt("%.0f", j("moe4k", "iterations.0.exposed_ps") / 1e9))
	put("moe4k.step", fmt("%.0f", j("moe4k", "stats.mean_ps") / 1e9))
	put("moe4k.ep", j("moe4k", "model.expert_parallel"))
	put("g16k.events", fmt("%.1f", get("g16k.summary.events") / 1e6) " M")
}' "$T/flat"
block <<'EOT'
| scenario | parallelism | batch | micro-batches | step | compute | exposed communication | GPUs idle | MFU | tokens/s |
|---|---|---|---|---|---|---|---|---|---|
| GPT-3 175B, 4,096 GPUs | {g4k}
| GPT-3 175B, 16,384 GPUs | {g16k}
| Llama-2-70B, 16,384 GPUs | {l16k}
| Llama-2-70B with 8 experts a layer (ep {moe4k.ep}), 4,096 GPUs | {moe4k}
EOT
block <<'EOT'
- At a fixed micro-batch count per replica the bubble, (pp - 1) slots of
  (m + pp - 1), sets most of what is exposed: GPT-3 with {g4k.pp} stages loses
  {g4k.bubble} slots at 4k GPUs ({g4k.m} micro-batches) and {g16k.bubble} at 16k ({g16k.m}).
- Llama-70B at 16k GPUs with {l16k.pp} stages and a 4,096-sequence batch has only
  {l16k.m} micro-batches a replica: {l16k.exposed}% of the step is exposed, and its {l16k.grad} GB of
  gradients a stage go round data-parallel groups of {l16k.dp} ranks (trees,
  run aggregated: doc/flow.md).  A larger batch, or more stages with
  interleaving, is what such a run needs.
EOT
block <<'EOT'
- These runs take seconds because what would be billions of steps is
  aggregated or replayed: each tensor-parallel group's all-reduces, alone
  on its server's NVLink, run once and then repeat their time to the
  picosecond (the job's `replay`, doc/jobs.md: the 16k GPT-3 step runs
  {g16k.events} events), and the data-parallel rings and trees, once their
  schedules, counted with every group running alongside, pass 4 M steps
  (rings) and 2^28 steps x servers (trees), run one transfer an edge
  (`flow.ring`, `flow.tree`, doc/flow.md).
EOT
block <<'EOT'
- A mixture-of-experts step at 4,096 GPUs (llama-moe-4k.yaml: the Llama
  model with 8 experts a layer, each group of 8 data-parallel replicas
  sharing them out, `model.ep` 8) spends more time communicating than
  computing: its all-to-alls, two a layer each way, and the experts'
  gradients, reduced over 16 replicas, leave {moe4k.exposed} ms of the {moe4k.step} ms step
  exposed.  The scenario sets `flow.solve: local` (doc/flow.md);
  examples/training-131k compares it with re-solving whole components.
EOT
