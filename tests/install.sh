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
if command -v bash >/dev/null; then
	got=$(PATH="$P/bin:$PATH" bash -c ". '$P/share/bash-completion/completions/fabscope'
		COMP_WORDS=(fabscope co); COMP_CWORD=1; _fabscope; echo \${COMPREPLY[*]}
		COMP_WORDS=(fabscope pl); COMP_CWORD=1; _fabscope; echo \${COMPREPLY[*]}
		COMP_WORDS=(fabscope coll --algo-c); COMP_CWORD=2; _fabscope; echo \${COMPREPLY[*]}")
	[ "$(echo "$got" | head -1)" = coll ] && [ "$(echo "$got" | sed -n 2p)" = plan ] &&
		[ "$(echo "$got" | tail -1)" = --algo-column ] && ok bash-completion ||
		bad "bash-completion: $got"
fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
