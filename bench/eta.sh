#!/bin/sh
# The progress line's "about N s left" against the time that was really
# left, over the examples that run for more than a few seconds: each
# command runs under script(1) (stderr a terminal, so every progress
# update is kept), and every estimate made after the first half second
# with more than a second really left is compared.  Prints, per command,
# the geometric mean of estimate / truth (1: right; 2: twice too long),
# its range, and the overall geometric mean.  Usage: bench/eta.sh
# [path/to/fabscope].  Measured: doc/collectives.md, "Progress".
F=${1:-./build/fabscope}
command -v script >/dev/null || { echo "skip: bench/eta.sh needs script (bsdutils)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eta() {
	t0=$(date +%s.%N)
	script -qfec "$F $* >/dev/null" /dev/null | tr '\r' '\n' >"$tmp/err"
	t1=$(date +%s.%N)
	awk -v total="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v cmd="$*" '
	/about [0-9]+ s left/ {
		for (i = 1; i < NF; i++) { if ($(i + 1) == "events,") ev = $i; if ($(i + 1) == "events/s,") rt = $i }
		sub(/M/, "", ev); sub(/M/, "", rt)
		el = rt > 0 ? ev / rt : 0
		match($0, /about [0-9]+ s left/); left = substr($0, RSTART + 6, RLENGTH - 13) + 0
		real = total - el
		if (real > 1 && el > 0.5) { n++; r = (left + 0.5) / real; s += log(r); if (r > mx) mx = r; if (n == 1 || r < mn) mn = r }
	}
	END { if (n) printf "%6.1f s  %4d  %5.2f  %5.2f-%-5.2f  %s\n", total, n, exp(s / n), mn, mx, cmd
	      else printf "%6.1f s     0      -  -            %s\n", total, cmd
	      if (n) printf "%f %d\n", s, n > "/dev/stderr" }' "$tmp/err" 2>>"$tmp/sum"
}
: >"$tmp/sum"
echo "  wall   lines  ratio  range        command"
eta coll examples/ring-vs-tree/scenario.yaml --gpus 512 --algo ring -b 4K -e 64M -i 67104768
eta coll examples/ring-vs-tree/scenario.yaml --gpus 512 --algo tree -b 4K -e 64M -i 67104768
eta coll examples/ring-vs-tree/scenario.yaml --gpus 512 --algo auto -b 4K -e 64M -f 4
eta coll examples/transports/scenario.yaml -b 256M -e 256M --set fabric.transport=tcp
eta coll examples/oversubscription/scenario.yaml --ring-order rank --set topology.oversubscription=2:1
eta coll examples/dual-tor/scenario.yaml
eta coll examples/rails/scenario.yaml --op alltoall --algo direct -b 64M -e 64M
eta sim examples/training-step/gpt3.yaml
eta sim examples/training-step/llama.yaml
eta sim examples/loose-cable/scenario.yaml
eta sim examples/two-jobs/scenario.yaml
eta sim examples/overlap/scenario.yaml
eta sim examples/ecmp-polarization/scenario.yaml
awk '{ s += $1; n += $2 } END { if (n) printf "all: %d estimates, geometric mean of estimate / truth %.2f\n", n, exp(s / n) }' "$tmp/sum"
