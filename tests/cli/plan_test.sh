#!/bin/sh
# fabscope plan against closed forms: a two-tier leaf-spine of radix R at
# 1:1 serves R^2/2 NIC ports (one more server needs a third tier); a k-ary
# fat tree has k^3/4 NIC ports and 5k^2/4 switches; the written scenario
# builds the planned topology (its report gives the planned switches and
# oversubscription); rail-optimized wiring puts NIC k of every server of a
# group under one leaf.  Usage: plan_test.sh path/to/fabscope.
# Last line: "plan: N passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

for R in 16 32 64; do
	g=$((R * R / 2)) # 8 GPUs and 8 NICs a server: as many GPUs as NIC ports
	run "plan-2tier-$R" 0 "$F" plan --gpus $g --radix $R && {
		has "$tmp/out" "design: two tiers" && has "$tmp/out" "NIC ports: $g built" &&
			has "$tmp/out" "$R leaves" && has "$tmp/out" "$((R / 2)) spines" &&
			has "$tmp/out" "oversubscription reached 1:1" && ok "plan-2tier-$R" || bad "plan-2tier-$R: $(head -3 "$tmp/out")"; }
	run "plan-3tier-$R" 0 "$F" plan --gpus $((g + 8)) --radix $R && {
		has "$tmp/out" "design: three tiers" && ok "plan-3tier-$R" || bad "plan-3tier-$R: $(head -2 "$tmp/out")"; }
	run "plan-2tier-refused-$R" 3 "$F" plan --gpus $((g + 8)) --radix $R --tiers 2 && ok "plan-2tier-refused-$R"
done
# k-ary fat trees: k^3/4 NIC ports, k^2/2 edge and aggregation, k^2/4 core
for k in 8 16 24; do
	run "plan-fat-tree-$k" 0 "$F" plan --gpus $((k * k * k / 4)) --gpus-per-server 1 --nics-per-server 1 --radix $k --tiers 3 && {
		has "$tmp/out" "k = $k ports" && has "$tmp/out" "$((k * k / 2)) edge, $((k * k / 2)) aggregation, $((k * k / 4)) core" &&
			has "$tmp/out" "NIC ports: $((k * k * k / 4)) built" && ok "plan-fat-tree-$k" || bad "plan-fat-tree-$k: $(sed -n 2p "$tmp/out")"; }
done
# 2:1 with 128 GPUs of radix 16: 8 down, 4 up a leaf; half the bisection
run plan-2to1 0 "$F" plan --gpus 128 --radix 16 --oversubscription 2:1 -o "$tmp/p.yaml" && {
	has "$tmp/out" "8 ports down, 4 up" && has "$tmp/out" "(50% of the NICs' half)" && ok plan-2to1 || bad plan-2to1; }
# the scenario builds what was planned
run plan-builds 0 "$F" sim "$tmp/p.yaml" --format json && {
	tr -d ' \n' <"$tmp/out" | grep -q '"tiers":\[{"tier":1,"name":"leaf","switches":16,[^]]*"oversubscription":"2:1"},{"tier":2,"name":"spine","switches":4' &&
		tr -d ' \n' <"$tmp/out" | grep -q '"topology":{"servers":16,"gpus":128,"nics":128' && ok plan-builds ||
		bad "plan-builds: $(tr -d ' \n' <"$tmp/out" | grep -o '"topology":{[^]]*]' | head -c 400)"; }
# rail-optimized: NIC k of each of a group's servers under leaf k of the group
run plan-rail 0 "$F" plan --gpus 256 --radix 32 --rail-optimized -o "$tmp/r.yaml" && run plan-rail-sim 0 "$F" sim "$tmp/r.yaml" --format csv && {
	# ports table (after the blank line): node,port,peer,...; NIC rows: serverS.nicK -> leaf
	awk -F, 'blank && $1 ~ /^server[0-9]+\.nic[0-9]+$/ {
			split($1, a, ".nic"); s = substr(a[1], 7) + 0; grp = int(s / 16); key = grp "/" a[2]
			if (key in leaf && leaf[key] != $3) bad = 1; leaf[key] = $3; n++
			if (($3 "") in owner && owner[$3] != key) bad = 1; owner[$3] = key }
		/^$/ { blank = 1 } END { exit bad || n != 256 }' "$tmp/out" && ok plan-rail || bad plan-rail; }
# what cannot be built, said
run plan-small-radix 3 "$F" plan --gpus 64 --radix 4 --tiers 2 && { has "$tmp/err" "fewer than a server's 8 NICs" && ok plan-small-radix || bad plan-small-radix; }
run plan-no-gpus 2 "$F" plan && ok plan-no-gpus
run plan-bad-over 2 "$F" plan --gpus 8 --oversubscription 2 && ok plan-bad-over
echo "plan: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
