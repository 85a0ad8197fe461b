#!/bin/sh
# make install as a user runs it: into a fresh prefix, then a program built
# against the installed library through pkg-config (shared and static),
# the man pages, bash completion.  Usage: install.sh (from the source tree;
# BUILD names the build folder).  Last line: "install: N passed, N failed".
B=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli/lib.sh"
P=$tmp/prefix
if ! make -s --no-print-directory install PREFIX="$P" BUILD="$B" >"$tmp/make.log" 2>&1; then
	bad "make install: $(tail -5 "$tmp/make.log")"
	echo "install: $pass passed, $fail failed"
	exit 1
fi
ok make-install
"$P/bin/fabscope" --version | grep -q '^fabscope ' && ok installed-binary || bad installed-binary
# the headers side by side under include/fabscope/, none reaching outside it
if [ -f "$P/include/fabscope/fabscope.h" ] && [ -f "$P/include/fabscope/base.h" ] && [ ! -e "$P/include/fabscope/src" ] &&
	[ ! -e "$P/include/fabscope/include" ] && ! grep -q '#include "\.\./' "$P"/include/fabscope/*.h; then
	ok headers-layout
else
	bad "headers-layout: $(cd "$P/include" && find . | head -20 | tr '\n' ' ')"
fi
cat >"$tmp/t.c" <<'C'
#include <fabscope.h>

int main(void)
{
	struct fab_err err = {0};
	struct fab_config *c = fab_config_load(NULL, NULL, 0, &err);
	struct fab_run *r = c ? fab_run_new(c, &err) : NULL;
	if (!r || fab_run_exec(r, NULL, NULL))
		return 1;
	json_t *doc = fab_run_json(r);
	printf("%lld\n", (long long)json_integer_value(json_object_get(json_object_get(doc, "summary"), "flows_done")));
	json_decref(doc);
	fab_run_free(r);
	fab_config_free(c);
	return 0;
}
C
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
if cc -o "$tmp/t" "$tmp/t.c" $(pkg-config --cflags --libs fabscope) 2>"$tmp/cc.log" &&
	[ "$(LD_LIBRARY_PATH="$P/lib" "$tmp/t")" = 80 ]; then
	ok pkg-config-shared
else
	bad "pkg-config-shared: $(head -5 "$tmp/cc.log")"
fi
if cc -o "$tmp/ts" "$tmp/t.c" $(pkg-config --cflags fabscope) "$P/lib/libfabscope.a" $(pkg-config --static --libs-only-l fabscope | sed 's/-lfabscope//') 2>"$tmp/cc.log" &&
	[ "$("$tmp/ts")" = 80 ]; then
	ok pkg-config-static
else
	bad "pkg-config-static: $(head -5 "$tmp/cc.log")"
fi
for m in fabscope fabscope-sim fabscope-coll fabscope-matrix fabscope-diagnose fabscope-probe fabscope-report fabscope-plan fabscope-sweep; do
	grep -q '^\.TH ' "$P/share/man/man1/$m.1" 2>/dev/null || { bad "man page $m"; continue; }
	ok "man-$m"
done
grep -q -- '--minbytes' "$P/share/man/man1/fabscope-coll.1" && ok man-from-help || bad man-from-help
# the sections a man page has; within 80 columns where man renders them;
# fabscope(1) does not list itself under SEE ALSO
m=$P/share/man/man1
for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "SEE ALSO"; do
	for p in fabscope fabscope-sim fabscope-coll fabscope-probe fabscope-sweep; do
		grep -q "^\.SH $sec\$" "$m/$p.1" || bad "man-sections: $p.1 has no $sec"
	done
done
for p in fabscope-sim fabscope-coll fabscope-probe fabscope-sweep; do
	grep -q '^\.SH ENVIRONMENT$' "$m/$p.1" || bad "man-sections: $p.1 has no ENVIRONMENT"
done
grep -q '^\.SH EXAMPLES$' "$m/fabscope-coll.1" && grep -q '^\.B NCCL_TESTS_MIN_BW$' "$m/fabscope-coll.1" &&
	! sed -n '/^\.SH SEE ALSO/,$p' "$m/fabscope.1" | grep -q 'fabscope(1)' && ok man-sections || bad man-sections-coll
if command -v man >/dev/null && MANWIDTH=80 man -l "$m/fabscope.1" >/dev/null 2>&1; then
	wide=$(for p in "$m"/*.1; do MANWIDTH=80 man -l "$p" 2>/dev/null | awk -v p="$(basename "$p")" 'length > 80 { print p ": " $0 }'; done)
	[ -z "$wide" ] && ok man-80-columns || bad "man-80-columns: $(echo "$wide" | head -3)"
else
	echo "skip man-80-columns: no man to render the pages"
fi
if command -v bash >/dev/null; then
	got=$(PATH="$P/bin:$PATH" bash -c ". '$P/share/bash-completion/completions/fabscope'
		COMP_WORDS=(fabscope co); COMP_CWORD=1; _fabscope; echo \${COMPREPLY[*]}
		COMP_WORDS=(fabscope pl); COMP_CWORD=1; _fabscope; echo \${COMPREPLY[*]}
		COMP_WORDS=(fabscope coll --algo-c); COMP_CWORD=2; _fabscope; echo \${COMPREPLY[*]}")
	[ "$(echo "$got" | head -1)" = coll ] && [ "$(echo "$got" | sed -n 2p)" = plan ] &&
		[ "$(echo "$got" | tail -1)" = --algo-column ] && ok bash-completion ||
		bad "bash-completion: $got"
	# option values and --set's keys and values, the line as bash splits it
	# (at '=' too)
	got=$(PATH="$P/bin:$PATH" bash -c ". '$P/share/bash-completion/completions/fabscope'
		t() { COMP_LINE=\"\$1\"; COMP_POINT=\${#1}; read -ra COMP_WORDS <<<\"\$1\"; COMP_CWORD=\${#COMP_WORDS[@]}; _fabscope; echo \"\${COMPREPLY[*]}\"; }
		t 'fabscope coll --algo ri'; t 'fabscope sim --set fabric.tcp.c'; t 'fabscope sim --set fabric.transport=t'
		t 'fabscope sim --engine f'")
	[ "$(echo "$got" | sed -n 1p)" = ring ] && echo "$got" | sed -n 2p | grep -qw 'fabric.tcp.cc=' &&
		[ "$(echo "$got" | sed -n 3p)" = tcp ] && [ "$(echo "$got" | sed -n 4p)" = flow ] && ok bash-completion-values ||
		bad "bash-completion-values: $got"
fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
