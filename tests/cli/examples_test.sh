#!/bin/sh
# The figures of examples/*/README.md are what the program prints: each
# example's figures.sh runs the README's commands and prints the README's
# generated blocks, every line from "<!-- figures.sh: begin -->" to the
# "<!-- figures.sh: end -->" after it, tables and the sentences that quote
# figures; they must be the README's, byte for byte (the simulation is
# deterministic for a scenario and seed).  Wall-clock times and memory (a
# command's CPU seconds, wall time, peak RSS) are measured, not simulated:
# the READMEs give them outside the blocks, and they are not compared.
#
# The examples in SLOW take minutes each (training-131k about 17 minutes
# of CPU, which make validate runs; the others together about 150 s,
# training-scale's 45 and ring-vs-tree's 22 of them): they run only with
# FABSCOPE_SLOW_EXAMPLES=1, or when named.
#
# usage: examples_test.sh [--write] [FABSCOPE] [EXAMPLE...]
#   EXAMPLE   a folder name under examples/ (default: all of them)
#   --write   write what figures.sh prints into the README's blocks instead
#             ("make figures"); a README must already have as many blocks
#             as its figures.sh prints
# Last line: "examples: N passed, N failed".
SLOW="training-131k"

write=0
if [ "${1:-}" = --write ]; then
	write=1
	shift
fi
F=${1:-./build/fabscope}
[ $# -gt 0 ] && shift
case $F in /*) ;; *) F=$(pwd)/$F ;; esac
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
. tests/cli/lib.sh

named=$#
# shellcheck disable=SC2046 # the folder names, split
[ $# -eq 0 ] && set -- $(ls examples)
for x in "$@"; do
	d=examples/$x
	[ -d "$d" ] || {
		bad "$x: no such example"
		continue
	}
	if [ ! -f "$d/figures.sh" ]; then
		bad "$x: no figures.sh"
		continue
	fi
	case " $SLOW " in
	*" $x "*)
		if [ "${FABSCOPE_SLOW_EXAMPLES:-0}" != 1 ] && [ "$named" -eq 0 ]; then
			echo "skip $x: over 20 s of CPU (FABSCOPE_SLOW_EXAMPLES=1 runs it)"
			continue
		fi
		;;
	esac
	t0=$(date +%s)
	if ! sh "$d/figures.sh" "$F" >"$tmp/got" 2>"$tmp/err"; then
		bad "$x: figures.sh failed: $(head -c 300 "$tmp/err")"
		continue
	fi
	secs=$(($(date +%s) - t0))
	awk '/^<!-- figures.sh: begin -->$/ { on = 1 } on { print } /^<!-- figures.sh: end -->$/ { on = 0 }' \
		"$d/README.md" >"$tmp/want"
	if [ "$write" = 1 ]; then
		if cmp -s "$tmp/got" "$tmp/want"; then
			ok "$x: unchanged ($secs s)"
		elif awk -v out="$tmp/new" '
			FNR == NR {
				if ($0 == "<!-- figures.sh: begin -->") n++
				b[n] = b[n] $0 "\n"
				next
			}
			$0 == "<!-- figures.sh: begin -->" { k++; printf "%s", b[k] > out; skip = 1; next }
			skip { if ($0 == "<!-- figures.sh: end -->") skip = 0; next }
			{ print > out }
			END {
				if (skip) {
					print "a \"<!-- figures.sh: begin -->\" without its end"
					exit 1
				}
				if (k != n) {
					printf "the README has %d blocks, figures.sh prints %d: mark them first\n", k, n
					exit 1
				}
			}' "$tmp/got" "$d/README.md" >"$tmp/why"; then
			cp "$tmp/new" "$d/README.md"
			ok "$x: written ($secs s)"
		else
			bad "$x: $(cat "$tmp/why")"
		fi
	elif cmp -s "$tmp/got" "$tmp/want"; then
		ok "$x ($secs s)"
	else
		bad "$x: the README's figures are not what figures.sh prints (make figures writes them):
$(diff "$tmp/want" "$tmp/got" | head -20)"
	fi
done
echo "examples: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
