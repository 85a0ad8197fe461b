#!/bin/sh
# Man pages from the program's own --help, so the two cannot disagree:
#   man.sh FABSCOPE OUTDIR    writes OUTDIR/fabscope.1 and fabscope-CMD.1
# The usage line becomes the synopsis, the text before "options" the
# description, the rest (options, exit status) is kept as it is printed.
F=$1
out=$2
mkdir -p "$out"
ver=$("$F" --version | head -1 | sed 's/^fabscope //; s/ .*//')
page() { # page NAME TITLE HELP-FILE
	{
		printf '.TH %s 1 "" "fabscope %s" "fabscope manual"\n' "$(echo "$1" | tr a-z A-Z)" "$ver"
		printf '.SH NAME\n%s \\- %s\n' "$1" "$2"
		printf '.SH SYNOPSIS\n.nf\n'
		sed -n '1s/^usage: //p' "$3" | sed 's/\\/\\\\/g; s/^\./\\\&./; s/^-/\\-/g'
		printf '.fi\n.SH DESCRIPTION\n.nf\n'
		# everything after the usage line, as printed (no fill: the help's
		# columns stay aligned)
		sed '1d' "$3" | sed 's/\\/\\\\/g; s/^\./\\\&./; s/^'"'"'/\\\&'"'"'/'
		printf '.fi\n.SH SEE ALSO\n'
		printf '%s\n' "fabscope(1), fabscope-sim(1), fabscope-coll(1), fabscope-matrix(1), fabscope-diagnose(1), fabscope-probe(1), fabscope-report(1), fabscope-plan(1)"
	} >"$out/$1.1"
}
tmp=$(mktemp)
"$F" --help >"$tmp"
page fabscope "design, run, break, measure and diagnose the network of an AI training cluster" "$tmp"
for c in sim coll matrix diagnose probe report plan; do
	"$F" $c --help >"$tmp"
	case $c in
	sim) t="simulate a scenario packet by packet, or flow by flow" ;;
	coll) t="nccl-tests in simulation" ;;
	matrix) t="every NIC pair's latency and bandwidth, in simulation" ;;
	diagnose) t="name the suspect link, NIC, port or path in result documents" ;;
	probe) t="collectives, latency, bandwidth and the all-pairs matrix on a real network" ;;
	report) t="one self-contained HTML page from result documents" ;;
	plan) t="design the fabric for a number of GPUs and write its scenario" ;;
	esac
	page "fabscope-$c" "$t" "$tmp"
done
rm -f "$tmp"
