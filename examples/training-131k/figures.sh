#!/bin/sh
# The figures of README.md, from the commands it shows and the variants its
# text quotes (usage: from the repository root,
# sh examples/training-131k/figures.sh [FABSCOPE]).  About 17 minutes of
# CPU: the 131k step twice and the 16k mixture-of-experts step twice take
# most of it; `make validate` runs it (tests/cli/examples_test.sh, with
# FABSCOPE_SLOW_EXAMPLES=1 or when named).  Wall-clock times and memory are
# measured, not simulated: the README gives them outside the blocks.
. tests/cli/figures_lib.sh
D=examples/training-scale
# what the figures need of the documents (the 131k one holds millions of
# ports)
FIG_KEEP='^(config[.]jobs[.]0[.]model[.]|jobs[.]0[.](dp|tp|pp)$|jobs[.]0[.](stats|model|iterations[.]0)[.]|summary[.])'
moe="--set jobs.0.model.experts=8"
json g16k sim $D/gpt3-16k.yaml
json moe4k sim $D/llama-moe-4k.yaml
json moe4kc sim $D/llama-moe-4k.yaml --set flow.solve=component
# shellcheck disable=SC2086
{
	json moe1k sim $D/llama-16k.yaml $moe --set jobs.0.gpus=1024 --set jobs.0.model.layers=4 \
		--set jobs.0.model.global_batch=64
	json moe16k sim $D/llama-16k.yaml $moe
	json moe16kc sim $D/llama-16k.yaml $moe --set flow.solve=component
}
json g131k sim examples/training-131k/gpt3-131k.yaml
json g131kc sim examples/training-131k/gpt3-131k.yaml --set flow.solve=component
calc '
function j(r, k) { return get(r ".jobs.0." k) }
function ms(x) { return fmt("%.1f", x / 1e9) " ms" }
function mevents(r) { return fmt("%.1f", get(r ".summary.events") / 1e6) " M" }
END {
	r = "g131k"
	B = get(r ".config.jobs.0.model.global_batch")
	s = get(r ".config.jobs.0.model.seq_len")
	put(r, "tp " j(r, "tp") " x pp " j(r, "pp") " x dp " j(r, "dp") " | " commas(B) " x " commas(s) " tokens | " \
		j(r, "model.microbatches") " | " ms(j(r, "stats.mean_ps")) " | " ms(j(r, "iterations.0.compute_ps")) \
		" | " ms(j(r, "iterations.0.exposed_ps")) " | " fmt("%.1f", 100 * j(r, "stats.idle_fraction")) "% | " \
		fmt("%.1f", 100 * j(r, "stats.mfu")) "% | " commas(j(r, "stats.tokens_per_s")) " |")
	put("moe4kc.step", fmt("%.1f", j("moe4kc", "stats.mean_ps") / 1e9))
	put("moe4k.step", fmt("%.1f", j("moe4k", "stats.mean_ps") / 1e9))
	put("moe4kc.apart", fmt("%.2f", 100 * (j("moe4k", "stats.mean_ps") / j("moe4kc", "stats.mean_ps") - 1)))
	put("moe16k.events", mevents("moe16k"))
	put("moe16k.step", fmt("%.1f", j("moe16k", "stats.mean_ps") / 1e9))
	put("moe16k.mfu", fmt("%.1f", 100 * j("moe16k", "stats.mfu")))
	put("moe16k.comp", fmt("%+.2f", 100 * (j("moe16kc", "stats.mean_ps") / j("moe16k", "stats.mean_ps") - 1)))
	put("moe1k.step", fmt("%.1f", j("moe1k", "stats.mean_ps") / 1e9))
	put("g131k.events", fmt("%.0f", get("g131k.summary.events") / 1e6) " M")
	put("g16k.events", fmt("%.0f", get("g16k.summary.events") / 1e6) " M")
	put("g131k.comp", fmt("%+.2f", 100 * (j("g131kc", "stats.mean_ps") / j("g131k", "stats.mean_ps") - 1)))
}' "$T/flat"
block <<'EOT'
| scenario | parallelism | batch | micro-batches | step | compute | exposed communication | GPUs idle | MFU | tokens/s |
|---|---|---|---|---|---|---|---|---|---|
| GPT-3 175B, 131,072 GPUs (4 NICs a server) | {g131k}
EOT
block <<'EOT'
- The 131k step runs {g131k.events} events (the 16k step: {g16k.events}): each
  pipeline send that starts or ends re-solves the fair shares of the
  transfers it shares a link with, and the data-parallel trees' transfers
  tie most of the fabric together.  On a fabric this large `flow.solve`
  (auto) re-solves only where a change reaches (doc/flow.md); re-solving
  whole components (`--set flow.solve=component`) moves the step's time
  by {g131k.comp}%.
- A mixture-of-experts step at 16,384 GPUs: `--set
  jobs.0.model.experts=8` on training-scale's Llama scenario puts one
  expert on each GPU of groups of 8 data-parallel replicas (expert
  parallelism 8, `model.ep`, doc/jobs.md), whose all-to-alls run every
  transfer: {moe16k.events} events in the step (step {moe16k.step} ms, MFU {moe16k.mfu}%);
  `--set flow.solve=component` moves its time by {moe16k.comp}%.  At 1,024 GPUs
  (adding `--set jobs.0.gpus=1024 --set jobs.0.model.layers=4 --set
  jobs.0.model.global_batch=64`) a step takes {moe1k.step} ms.
- training-scale's mixture-of-experts step at 4,096 GPUs re-solves
  where a change reaches (`flow.solve: local`); re-solving whole
  components instead (`--set flow.solve=component`) gives a step of
  {moe4kc.step} ms against {moe4k.step}, {moe4kc.apart}% apart.
EOT
