#!/bin/sh
# Every malformed input of cases.txt, plus a few generated ones (nesting,
# size, NUL bytes, long lines, devices): the exit status, the message, no
# output files and nothing on stdout.  Usage: run.sh path/to/fabscope.
# Last line: "bad: N passed, N failed".
F=$(cd "$(dirname "${1:-./build/fabscope}")" && pwd)/$(basename "${1:-./build/fabscope}")
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../cli/lib.sh"
TOPO="topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 2, nics_per_server: 2, spines: 1, links_per_spine: 1}"
: >"$tmp/file"
printf '# a scenario\ntopology: {leaves: 2}\n' >"$tmp/sc.yaml"
# a sweep's folder whose plan.json is a FIFO (a read would hang)
mkdir "$tmp/fifo" && mkfifo "$tmp/fifo/plan.json"

# check NAME WANT MSG: exit status, message (@ is $path), stdout, --out
check() {
	c_msg=$(printf '%s' "$3" | sed -e "s|@|$path|g" -e "s|%D%|$tmp|g")
	if [ "$rc" -ne "$2" ]; then
		bad "$1: exit $rc, want $2: $(head -c 300 "$tmp/err")"
	elif ! has "$tmp/err" "$c_msg"; then
		bad "$1: message: $(head -c 400 "$tmp/err") / want: $c_msg"
	elif [ "$2" -ne 0 ] && [ -s "$tmp/out" ]; then
		bad "$1: printed on stdout"
	elif [ -d "$tmp/o" ] && [ -n "$(ls -A "$tmp/o")" ]; then
		bad "$1: wrote output files"
	else
		ok "$1"
	fi
	rm -rf "$tmp/o"
}

n=0
while IFS= read -r line; do
	case "$line" in '#'* | '') continue ;; esac
	n=$((n + 1))
	kind=$(printf '%s' "$line" | awk -F' [|] ' '{print $1}')
	want=$(printf '%s' "$line" | awk -F' [|] ' '{print $2}')
	msg=$(printf '%s' "$line" | awk -F' [|] ' '{print $3}')
	content=$(printf '%s' "$line" | awk -F' [|] ' '{ s = $4; for (i = 5; i <= NF; i++) s = s " | " $i; print s }')
	content=$(printf '%s' "$content" | sed -e "s|%T%|$TOPO|g" -e "s|%D%|$tmp|g")
	name="$n-$kind"
	content_env=$(printf '%s' "$content" | tr ' ' '\n' | grep '=' | tr '\n' ' ')
	content_args=$(printf '%s' "$content" | tr ' ' '\n' | grep -v '=' | tr '\n' ' ')
	case "$kind" in
	yaml | coll)
		path=$tmp/c.yaml
		printf '%b\n' "$content" >"$path"
		cmd=sim
		[ "$kind" = coll ] && cmd=coll
		"$F" $cmd "$path" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
		;;
	topo | ns3)
		path=$tmp/t.topo
		printf '%b\n' "$content" >"$path"
		printf 'topology: {kind: %s, file: %s, gpus_per_server: 1, nics_per_server: 1}\n' \
			"$([ "$kind" = topo ] && echo file || echo ns3)" "$path" >"$tmp/c.yaml"
		"$F" sim "$tmp/c.yaml" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
		;;
	csv)
		path=$tmp/f.csv
		printf '%b\n' "$content" >"$path"
		printf '%s\ntraffic: {flows_csv: %s}\n' "$TOPO" "$path" >"$tmp/c.yaml"
		"$F" sim "$tmp/c.yaml" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
		;;
	cdf)
		path=$tmp/s.cdf
		printf '%b\n' "$content" >"$path"
		printf '%s\ntraffic: {generators: [{kind: poisson, cdf: %s, load: 0.3, duration: 50us}]}\n' \
			"$TOPO" "$path" >"$tmp/c.yaml"
		"$F" sim "$tmp/c.yaml" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
		;;
	doc)
		path=$tmp/d.json
		printf '%b' "$content" >"$path"
		"$F" diagnose "$path" --svg "$tmp/o/m.svg" >"$tmp/out" 2>"$tmp/err"
		;;
	grid)
		path=$tmp/g.yaml
		printf '%b\n' "$content" >"$path"
		"$F" sweep "$path" -o "$tmp/o/sw" -q >"$tmp/out" 2>"$tmp/err"
		;;
	compare)
		path=$tmp/cmp.yaml
		printf '%b\n' "$content" >"$path"
		"$F" plan --compare "$path" --out "$tmp/o/c" -q >"$tmp/out" 2>"$tmp/err"
		;;
	flows3)
		path=$tmp/f3.txt
		printf '%b\n' "$content" >"$path"
		printf 'topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1, spines: 1, links_per_spine: 1}\ntraffic: {flows_ns3: %s}\n' "$path" >"$tmp/c.yaml"
		"$F" sim "$tmp/c.yaml" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
		;;
	ecmd)
		path=$tmp
		# shellcheck disable=SC2086
		(cd "$tmp" && exec env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u FABSCOPE_TOKEN \
			-u SLURM_PROCID -u SLURM_JOB_ID -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u PMIX_NAMESPACE \
			-u OMPI_MCA_ess_base_jobid -u TORCHELASTIC_RUN_ID $content_env "$F" $content_args) >"$tmp/out" 2>"$tmp/err"
		;;
	cmd)
		path=$tmp
		# shellcheck disable=SC2086
		(cd "$tmp" && exec "$F" $content) >"$tmp/out" 2>"$tmp/err"
		;;
	*)
		bad "$name: unknown kind $kind"
		continue
		;;
	esac
	rc=$?
	check "$name" "$want" "$msg"
done <"$here/cases.txt"

# ---- generated ----
# gen NAME WANT MSG CMD...: runs CMD, then check
gen() {
	g_name=$1
	g_want=$2
	g_msg=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$g_name" "$g_want" "$g_msg"
}
path=$tmp/g.yaml
# nesting 100000 deep, flow and block style: refused at the 65th level
awk 'BEGIN { printf "a: "; for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; print "" }' >"$path"
gen gen-deep-flow 3 "@:1:67: nested deeper than 64 levels" "$F" sim "$path"
awk 'BEGIN { for (i = 0; i < 100; i++) { for (j = 0; j < i; j++) printf " "; print "x:" } }' >"$path"
gen gen-deep-block 3 "@:65:65: nested deeper than 64 levels" "$F" sim "$path"
# a 1 MB document that claims 100000 endpoints and has no rows for them
path=$tmp/d.json
awk 'BEGIN { printf "{\"schema\": \"fabscope.result/1\", \"matrix\": {\"endpoints\": [";
	for (i = 0; i < 100000; i++) printf "%s\"e%d\"", i ? ", " : "", i; print "], \"bw_GBps\": []}}" }' >"$path"
gen gen-doc-claims 3 "@: matrix.endpoints: 100000 endpoints, at most 65536" "$F" diagnose "$path"
# a scenario over 16 MiB (a comment)
path=$tmp/g.yaml
awk 'BEGIN { for (i = 0; i < 300000; i++) print "# padding padding padding padding padding padding padding" }' >"$path"
gen gen-huge-scenario 3 "@: scenario larger than 16 MiB" "$F" sim "$path"
# a NUL byte in a scenario and in a topology file
printf 'run: {seed: 1}\n\000\n' >"$path"
gen gen-nul-scenario 3 "@: a NUL byte: scenario is not a text file" "$F" sim "$path"
path=$tmp/t.topo
printf 'nic a\000\n' >"$path"
printf 'topology: {kind: file, file: %s, gpus_per_server: 1, nics_per_server: 1}\n' "$path" >"$tmp/c.yaml"
gen gen-nul-topo 3 "@: a NUL byte" "$F" sim "$tmp/c.yaml"
# a comment line of 5000 characters whose tail looks like a statement (a
# reader with a line buffer would parse it); a 300-character token
path=$tmp/t.topo
{
	echo "nic a"
	echo "nic b"
	echo "switch s"
	printf '# '
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "x" }'
	echo " link a b 1bps 1us"
	echo "link a s 100Gbps 1us"
	echo "link b s 100Gbps 1us"
} >"$path"
printf 'topology: {kind: file, file: %s, gpus_per_server: 1, nics_per_server: 1}\ntraffic: {flows: [{src: 0, dst: 1, bytes: 4KiB}]}\n' "$path" >"$tmp/c.yaml"
gen gen-long-comment-topo 0 "events in" "$F" sim "$tmp/c.yaml"
printf 'nic %s\n' "$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "n" }')" >"$path"
gen gen-long-token-topo 3 "@:1:5:" "$F" sim "$tmp/c.yaml"
path=$tmp/f.csv
{
	echo "src,dst,bytes"
	printf '# '
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "y" }'
	echo ",0,1,1GiB"
	echo "0,1,4KiB"
} >"$path"
printf '%s\ntraffic: {flows_csv: %s}\n' "$TOPO" "$path" >"$tmp/c.yaml"
gen gen-long-comment-csv 0 "events in" "$F" sim "$tmp/c.yaml" --format json
grep -q '"flows_done": 1,' "$tmp/out" && ok gen-long-comment-csv-one-flow || bad "gen-long-comment-csv: the comment's tail became a flow"
# a topology file with a million switches: read in well under a second
# (a quadratic name check took minutes), then refused as not connected
awk 'BEGIN { for (i = 0; i < 1000000; i++) print "switch s" i; print "nic a"; print "link a s0 100Gbps 1us" }' >"$tmp/t.topo"
path=$tmp/c.yaml
printf 'topology: {kind: file, file: %s, gpus_per_server: 1, nics_per_server: 1}\n' "$tmp/t.topo" >"$path"
gen gen-million-switches 3 "the graph is not connected" "$F" sim "$path"
# a fabric too big for the memory the process may take (here an
# address-space limit of 2 GiB, as ulimit -v sets; not under
# AddressSanitizer, which maps terabytes of shadow): refused before it is
# built
printf 'topology: {kind: fat-tree, k: 128, radix: 128, gpus_per_server: 8, nics_per_server: 8}\n' >"$path"
case $F in
*asan*) ;;
*) gen gen-k128 3 "more than this machine's" sh -c 'ulimit -v 2097152 && exec "$@"' sh "$F" sim "$path" ;;
esac

# an empty output name, and a grid of more values than a key may have
gen gen-plan-o-empty 2 "plan: -o: a file name is needed" "$F" plan --gpus 64 -o ''
path=$tmp/g.yaml
awk -v sc="$tmp/sc.yaml" 'BEGIN { printf "scenario: %s\nvary:\n  fabric.ecn.kmin: [", sc
	for (i = 1; i <= 10001; i++) printf "%s%dKiB", (i > 1 ? ", " : ""), i; print "]" }' >"$path"
gen gen-grid-values 3 "@:3:20: vary: fabric.ecn.kmin: more than 10000 values" "$F" sweep "$path" -o "$tmp/o/sw" -q
echo "bad: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
