#!/bin/sh
# The sample outputs of README.md and doc/*.md are what the program
# prints: every console block's "$ ./build/fabscope ..." (or "$ fabscope
# ...") command is run (from a scratch copy of the paths it names), and
# every line the page shows under it, but for "..." lines, must appear in
# its output in that order; "$ echo $?" checks the exit status.  Commands
# on a real network (fabscope probe, launchers) and those that read what
# such a command wrote are not run.  Usage: readme_test.sh path/to/fabscope.
# Last line: "readme: N passed, N failed".
F=$(cd "$(dirname "${1:-./build/fabscope}")" && pwd)/$(basename "${1:-./build/fabscope}")
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cp -r examples tests bench "$tmp/" 2>/dev/null
# the blocks, as files: cmd.N (the command), want.N (the lines shown)
awk -v d="$tmp" '
	/^```console/ { on = 1; next }
	/^```/ { on = 0; next }
	!on { next }
	/^\$ / { n++; cur = ""; sub(/^\$ /, ""); print > (d "/cmd." n); close(d "/cmd." n); printf "" > (d "/want." n)
		print FILENAME > (d "/from." n); close(d "/from." n); next }
	{ print >> (d "/want." n) }
' README.md doc/*.md
n=0
last_rc=0
for c in $(ls "$tmp" | grep '^cmd\.' | sed 's/cmd\.//' | sort -n); do
	cmd=$(sed -e 's/ *#.*//' -e 's|^fabscope |./build/fabscope |' "$tmp/cmd.$c")
	case "$cmd" in
	*" probe "* | *" probe" | *" diagnose m.json"* | *" diagnose mb.json"*) continue ;; # a real network's
	"echo \$?")
		want=$(head -1 "$tmp/want.$c")
		[ "$want" = "$last_rc" ] && ok "exit-status-$c ($want)" || bad "exit status: README says $want, got $last_rc"
		continue
		;;
	./build/fabscope*) ;;
	*) continue ;; # a real network or another program
	esac
	args=${cmd#./build/fabscope}
	# shellcheck disable=SC2086
	(cd "$tmp" && "$F" $args) >"$tmp/out.$c" 2>&1
	last_rc=$?
	# the README's lines, in order, in the output
	if awk -v want="$tmp/want.$c" '
		BEGIN { i = 0; k = 0; while ((getline l < want) > 0) if (l !~ /^ *\.\.\.$/ && l != "") w[k++] = l }
		{ if (i < k && $0 == w[i]) i++ }
		END { if (i < k) { print "missing: " w[i]; exit 1 } }' "$tmp/out.$c" >"$tmp/why.$c"; then
		ok "sample-$c ($(cat "$tmp/from.$c")): $cmd"
	else
		bad "sample-$c ($(cat "$tmp/from.$c")): $cmd: $(cat "$tmp/why.$c")"
	fi
done
echo "readme: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
