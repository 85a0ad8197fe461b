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
		printf '%s\n' "$see"
	} >"$out/$1.1"
}
tmp=$(mktemp)
"$F" --help >"$tmp"
# the commands and their one-line summaries, as fabscope --help lists them
cmds=$(awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' "$tmp")
see="fabscope(1)"
for c in $cmds; do see="$see, fabscope-$c(1)"; done
page fabscope "design, run, break, measure and diagnose the network of an AI training cluster" "$tmp"
for c in $cmds; do
	t=$(awk -v c="$c" '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && $1 == c { sub(/^ +/, ""); t = substr($0, index($0, "  ")); sub(/^ +/, "", t); print t }' "$tmp")
	"$F" "$c" --help >"$tmp.c"
	page "fabscope-$c" "$t" "$tmp.c"
done
rm -f "$tmp" "$tmp.c"
