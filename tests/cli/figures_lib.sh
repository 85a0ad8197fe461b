# Shared by examples/*/figures.sh, which print the figures of their
# README: the text between each "<!-- figures.sh: begin -->" line and the
# "<!-- figures.sh: end -->" line after it, markers included, in order.
# tests/cli/examples_test.sh compares that output with the README, byte for
# byte; "make figures" writes it into the README.
#
# A figures.sh runs from the repository root:
#     . tests/cli/figures_lib.sh
# which sets $F (the program: $1, default ./build/fabscope) and $T (a
# scratch folder, removed on exit: every file goes there), and defines
#     run NAME ARG...   "$F ARG...", its stdout in $T/NAME.out, its stderr
#                       in $T/NAME.err; an exit status other than 0 ends
#                       the script with an error (run_rc NAME RC ARG...:
#                       other than RC)
#     json NAME ARG...  run NAME ARG... --format json, and the document
#                       appended to $T/flat as "NAME.path<TAB>value" lines:
#                       NAME.summary.drops, NAME.jobs.0.name (a string
#                       without its quotes); where $FIG_KEEP is set, only
#                       the paths (without NAME.) that match it, an awk
#                       regular expression (and $T/NAME.out is emptied)
#     flat NAME FILE [KEEP]  FILE's JSON as such lines, on stdout
#     calc PROGRAM FILE...   awk -F '\t' with the functions below before
#                       PROGRAM, over FILE... ("key<TAB>value" lines: $T/flat,
#                       $T/v); what it prints is appended to $T/v
#     fill VALUES       the template on stdin with each {name} replaced by
#                       its value from VALUES ("name<TAB>value" lines); a
#                       name without a value is an error
#     block             "<!-- figures.sh: begin -->", the template on stdin
#                       filled from $T/v, "<!-- figures.sh: end -->"
# and the awk functions, for calc:
#     commas(x)      a whole number with thousands separators: 16,384
#     get(key)       the value of key from the lines read (an error where
#                    there is none); V[key] holds them all
#     put(key, val)  a "key<TAB>value" line, for $T/v
#     fmt(f, x)      sprintf(f, x), but never "-0" or "-0.0"
set -u
F=${1:-./build/fabscope}
case $F in /*) ;; *) F=$(pwd)/$F ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
: >"$T/v"
: >"$T/flat"

FIG_AWK='
function commas(x,   s, r) {
	s = sprintf("%.0f", x)
	r = ""
	while (length(s) > 3) {
		r = "," substr(s, length(s) - 2) r
		s = substr(s, 1, length(s) - 3)
	}
	return s r
}
function get(k) {
	if (!(k in V)) {
		print "figures: no value for " k > "/dev/stderr"
		exit 1
	}
	return V[k]
}
function put(k, x) { print k "\t" x }
function fmt(f, x,   s) {
	s = sprintf(f, x)
	if (s ~ /^-0(\.0*)?$/)
		s = substr(s, 2)
	return s
}
{ V[$1] = substr($0, index($0, "\t") + 1) }
'

die() {
	echo "figures: $*" >&2
	exit 1
}

run_rc() {
	r_name=$1
	r_want=$2
	shift 2
	"$F" "$@" >"$T/$r_name.out" 2>"$T/$r_name.err"
	r_rc=$?
	[ "$r_rc" -eq "$r_want" ] ||
		die "fabscope $*: exit $r_rc, want $r_want: $(head -c 300 "$T/$r_name.err")"
}

run() {
	r_name=$1
	shift
	run_rc "$r_name" 0 "$@"
}

flat() {
	awk -v pre="$1" -v keep="${3:-}" '{
		s = $0
		sub(/^[ \t]+/, "", s)
		sub(/,$/, "", s)
		if (s == "}" || s == "]") { d--; next }
		k = ""
		if (s ~ /^"[^"]*": /) {
			k = substr(s, 2, index(s, "\": ") - 2)
			s = substr(s, index(s, "\": ") + 3)
		} else if (d > 0 && arr[d])
			k = n[d]++
		path = d > 0 ? p[d] "." k : pre
		if (s == "{" || s == "[") {
			d++
			p[d] = path
			arr[d] = s == "["
			n[d] = 0
			next
		}
		if (s ~ /^".*"$/) {
			s = substr(s, 2, length(s) - 2)
			gsub(/\\"/, "\"", s)
		}
		if (keep == "" || substr(path, length(pre) + 2) ~ keep)
			print path "\t" s
	}' "$2"
}

json() {
	j_name=$1
	shift
	run "$j_name" "$@" --format json
	flat "$j_name" "$T/$j_name.out" "${FIG_KEEP:-}" >>"$T/flat" || die "$j_name: not JSON"
	# a large document: only what was kept
	[ -z "${FIG_KEEP:-}" ] || : >"$T/$j_name.out"
}

calc() {
	c_prog=$1
	shift
	awk -F '\t' "$FIG_AWK
$c_prog" "$@" >"$T/calc" || die "calc failed"
	cat "$T/calc" >>"$T/v"
}

fill() {
	awk -F '\t' '
		FNR == NR { v[$1] = substr($0, index($0, "\t") + 1); next }
		{
			s = $0
			o = ""
			while (match(s, /\{[A-Za-z0-9_.]+\}/)) {
				k = substr(s, RSTART + 1, RLENGTH - 2)
				if (!(k in v)) {
					print "figures: no value for {" k "}" > "/dev/stderr"
					bad = 1
				}
				o = o substr(s, 1, RSTART - 1) v[k]
				s = substr(s, RSTART + RLENGTH)
			}
			print o s
		}
		END { exit bad }' "$1" -
}

block() {
	echo "<!-- figures.sh: begin -->"
	fill "$T/v"
	echo "<!-- figures.sh: end -->"
}
