#!/bin/sh
# Collectives at the scale clusters are planned at (reported, not
# asserted): `fabscope plan` fabrics of 4,096 and 16,384 GPUs (radix 64,
# 8 NICs a server), 1:1 and rail-optimized, and with SCALE_131K=1 one of
# 131,072 GPUs (4 NICs a server: radix 64 reaches 65,536 NIC ports in
# three tiers); `coll --engine flow` with algorithm auto at 1 MiB, 64 MiB
# and 1 GiB, each size its own command and one operation (-w 0 -n 1;
# coll's default of 5 + 20 iterations costs three on the flow engine, whose
# rows repeat from the third): the row's time, what auto chose,
# CPU (user + system), peak memory and events per second; then the
# training steps of examples/training-scale (16,384 GPUs and the 4,096-GPU
# mixture of experts, about 45 s; with SCALE_131K=1
# the 131,072-GPU one too, about 4 minutes).
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plans="4096: 16384: 4096:--rail-optimized 16384:--rail-optimized"
[ -n "$SCALE_131K" ] && plans="$plans 131072:--nics-per-server=4"
echo "coll on planned fabrics, flow engine, auto:"
for p in $plans; do
	gpus=${p%%:*}
	opt=$(echo "${p#*:}" | tr = ' ')
	"$F" plan --gpus "$gpus" --radix 64 $opt -o "$tmp/plan.yaml" >/dev/null || exit 1
	total=0
	for size in 1M 64M 1G; do
		/usr/bin/time -f "%U %S %M" "$F" coll "$tmp/plan.yaml" --engine flow -b $size -e $size -w 0 -n 1 --algo-column \
			>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
		set -- $(tail -1 "$tmp/err")
		cpu=$(echo "$1 $2" | awk '{ printf "%.2f", $1 + $2 }')
		rss=$(($3 / 1024))
		ev=$(awk '/ events in /{ print $2 }' "$tmp/err")
		row=$(awk '/^ /{ printf "%s us %s", $6, $NF }' "$tmp/out")
		printf '  %6s GPUs %-17s %4s: %-28s %6.2f s CPU %5d MiB %9s events (%.2f M/s)\n' "$gpus" "$opt" $size \
			"$row" "$cpu" "$rss" "$ev" "$(echo "$ev $cpu" | awk '{ print ($2 > 0 ? $1 / $2 / 1e6 : 0) }')"
		total=$(echo "$total $cpu" | awk '{ print $1 + $2 }')
	done
	printf '  %6s GPUs %-17s all three: %.2f s CPU\n' "$gpus" "$opt" "$total"
done
# training steps at scale (examples/training-scale), flow engine
echo "training steps on planned fabrics, flow engine:"
steps="training-scale/gpt3-16k training-scale/llama-16k training-scale/llama-moe-4k"
[ -n "$SCALE_131K" ] && steps="$steps training-131k/gpt3-131k"
for f in $steps; do
	/usr/bin/time -f "%U %S %M" "$F" sim "examples/$f.yaml" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; exit 1; }
	set -- $(tail -1 "$tmp/err")
	ev=$(awk '/ events in /{ print $2 }' "$tmp/err")
	awk -v f=$f -v u="$1" -v s="$2" -v m="$3" -v ev="$ev" '/tokens\/s/ { sub(/^ +/, ""); line = $0 }
		END { cpu = u + s; sub(/.*\//, "", f); printf "  %-10s %6.2f s CPU %5d MiB %9s events (%.2f M/s)\n    %s\n", f, cpu, m / 1024, ev,
			(cpu > 0 ? ev / cpu / 1e6 : 0), line }' "$tmp/out"
done
