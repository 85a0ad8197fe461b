#!/bin/sh
# fabscope report: one self-contained page from the documents of sim (with
# a time series), coll (two runs overlaid), matrix (a suspect) and jobs;
# the same bytes twice; bad input refused; each section alone; and, where
# Chromium is installed (the plain build's pass), the page as a browser
# shows it (it loads with no console
# error, every section and picture is in its DOM, the screenshot is not
# blank).  Usage: report_test.sh path/to/fabscope.
# Last line: "report: N passed, N failed".
F=${1:-./build/fabscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

"$F" sim -q --set fabric.series_interval=20us --out "$tmp/sim" &&
	"$F" coll -q -b 1K -e 16M -f 16 --out "$tmp/roce" &&
	"$F" coll -q -b 1K -e 16M -f 16 --set fabric.transport=ib --out "$tmp/ib" &&
	"$F" matrix -q examples/autoneg-downgrade/scenario.yaml --out "$tmp/mat" &&
	"$F" sim -q examples/overlap/scenario.yaml --out "$tmp/jobs" &&
	"$F" sim -q examples/loose-cable/scenario.yaml --out "$tmp/lc" || { bad "runs"; echo "report: $pass passed, $fail failed"; exit 1; }
docs="$tmp/sim/result.json $tmp/roce/result.json $tmp/ib/result.json $tmp/mat/result.json $tmp/jobs/result.json $tmp/lc/result.json"
run report 0 "$F" report $docs -o "$tmp/r.html" && ok report
R=$tmp/r.html
for want in 'id="documents"' 'id="suspects"' 'id="busbw"' 'id="sim-1"' 'id="matrix-4"' 'class="job"' \
	'link leaf0 &lt;-&gt; server1.nic3' 'href="#matrix-4"' 'sender (rows), receiver (columns)' 'GB/s</text>' \
	'the busiest queues over time' 'flow completion times' 'PAUSE frames sent, ECN marks and drops per interval' \
	'FCT slowdown' 'class="topo"' 'utilisation (the busier direction)' 'class="comm"><title>communication'; do
	has "$R" "$want" && ok "has $want" || bad "report lacks $want"
done
# the topology: of all the links drawn, only the loose cable lost frames
# (dashed), and it is outlined as diagnose's suspect; the switch ports that
# sent PAUSE frames in the lossless default run show on its links
lossy=$(grep -c 'class="lossy"' "$R")
[ "$lossy" -eq 1 ] && grep 'class="lossy"' "$R" | grep -q 'leaf3 - server13.nic1\|server13.nic1 - leaf3' && ok topology-lossy-link ||
	bad "topology-lossy-link: $lossy dashed links: $(grep 'class="lossy"' "$R" | head -2)"
# (the matrix's suspect, leaf0 <-> server1.nic3, exists in the healthy
# runs' topologies too, and is not outlined there: nothing shows on it)
grep -q 'class="suspect-link"><title>suspect [0-9]*: link leaf3 &lt;-&gt; server13.nic1' "$R" &&
	[ "$(grep -c 'class="suspect-link"' "$R")" -eq 1 ] && ok topology-suspect ||
	bad "topology-suspect: $(grep -o 'class="suspect-link"><title>[^<]*' "$R")"
[ "$(grep -c 'class="pause"><title>PAUSE' "$R")" -ge 1 ] && ok topology-pause || bad topology-pause
# no two marks touch, on any topology of the page (the loose cable's has
# 128 NICs: 7 px apart on their row); parallel links between the same two
# switches are drawn as one line, their marks as one
command -v python3 >/dev/null && { python3 - "$R" <<'PY' && ok topology-marks-apart || bad "topology-marks-apart"
import re, sys
page = open(sys.argv[1]).read()
n = 0
for svg in re.findall(r'<svg class="topo".*?</svg>', page, re.S):
    boxes = []
    for x, y, w, h in re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)" class="pause"', svg):
        x, y, w, h = map(float, (x, y, w, h))
        boxes.append((x, y, x + w, y + h))
    for x, y, r in re.findall(r'<circle cx="([-\d.]+)" cy="([-\d.]+)" r="([\d.]+)" class="ecn"', svg):
        x, y, r = map(float, (x, y, r))
        boxes.append((x - r, y - r, x + r, y + r))
    boxes = sorted(set(boxes))
    n += len(boxes)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if b[0] >= a[2]:
                break
            assert b[1] >= a[3] or a[1] >= b[3], ("marks touch", a, b)
assert n > 100, n
PY
}
# a long series (7,000 flows' FCTs) is drawn by pixel columns: at most
# four points a column of the 880-pixel chart, the caption says so, and
# the page stays small
printf 'topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, spines: 2}\ntraffic: {generators: [{kind: poisson, cdf: websearch, load: 0.5, duration: 60ms}]}\n' >"$tmp/many.yaml"
"$F" sim "$tmp/many.yaml" --engine flow -q --out "$tmp/many" && run report-long-series 0 "$F" report "$tmp/many/result.json" && {
	pts=$(grep -o '<polyline[^>]*points="[^"]*"' "$tmp/out" | head -1 | sed 's/.*points="//' | wc -w)
	flows=$(grep -c '"fct_ps":' "$tmp/many/result.json")
	[ "$flows" -gt 5000 ] && [ "$pts" -le 3600 ] && [ "$pts" -gt 100 ] && has "$tmp/out" "a series of more than 2000 points drawn by each pixel column" &&
		[ "$(wc -c <"$tmp/out")" -lt 60000 ] && ok "report-long-series ($flows flows, $pts points)" ||
		bad "report-long-series: $flows flows, $pts points, $(wc -c <"$tmp/out") bytes"; }
# a matrix of 300 endpoints is drawn by blocks of 2 x 2 pairs (150 cells a
# side, not 300), each coloured by its slowest pair: a slow pair planted at
# (17, 201) shows in its block's title
command -v python3 >/dev/null && python3 - "$tmp/mat/result.json" "$tmp/big.json" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
m, n = d["matrix"], 300
m["endpoints"] = ["server%d.nic0" % i for i in range(n)]
m["bw_GBps"] = [[None if i == j else 40.0 + (i * 7 + j) % 5 / 10 for j in range(n)] for i in range(n)]
m["bw_GBps"][17][201] = 5.0
m["lat_us"] = [[None if i == j else 5.0 for j in range(n)] for i in range(n)]
m["gpus"] = [[8 * i] for i in range(n)]
m["links"] = [m["links"][0]] * n
m.pop("failed_pairs", None)
json.dump(d, open(sys.argv[2], "w"))
PY
	run report-matrix-blocks 0 "$F" report "$tmp/big.json" -s matrix-1 && {
		cells=$(grep -c '<rect x="[0-9]*" y="[0-9]*" width="4" height="4" fill=' "$tmp/out")
		[ "$cells" -eq 22500 ] && has "$tmp/out" "300 endpoints: a cell is a block of 2 x 2 pairs" &&
			has "$tmp/out" "server16.nic0..server17.nic0 to server200.nic0..server201.nic0: slowest 5 GB/s" &&
			ok "report-matrix-blocks ($cells cells)" || bad "report-matrix-blocks: $cells cells"; }
# self-contained: nothing fetched, no script
if grep -qiE '<script|<link|src=|@import|url\(|https?://' "$R"; then bad "self-contained: $(grep -oiE '<script|<link|src=|@import|url\(|https?://' "$R" | head -3)"; else ok self-contained; fi
[ "$(grep -c '<polyline' "$R")" -ge 4 ] && ok charts || bad charts
run report-again 0 "$F" report $docs && { cmp -s "$tmp/out" "$R" && ok same-bytes || bad same-bytes; }
# extreme numbers cannot stall a chart's axes (they hung, and the page grew
# in memory): a busbw of 1.7e308, another of 1e299, two sizes 2 bytes apart
# at 1e18; each page is written at once
if command -v python3 >/dev/null; then
	python3 - "$tmp/roce/result.json" "$tmp" <<'PY'
import json, sys
for name, edit in (("huge", lambda r: r[0].update(busbw_GBps=1.7e308)), ("big", lambda r: r[0].update(busbw_GBps=1e299)),
                   ("close", lambda r: (r[0].update(size_bytes=10**18), r[1].update(size_bytes=10**18 + 2)))):
    d = json.load(open(sys.argv[1]))
    edit(d["collective"]["rows"])
    json.dump(d, open("%s/%s.json" % (sys.argv[2], name), "w"))
PY
	for x in huge big close; do
		run "report-extreme-$x" 0 timeout 20 "$F" report "$tmp/$x.json" -o "$tmp/$x.html" &&
			{ [ "$(wc -c <"$tmp/$x.html")" -lt 200000 ] && grep -q '<polyline' "$tmp/$x.html" && ok "report-extreme-$x" || bad "report-extreme-$x"; }
	done
fi
# each run named by what differs in its scenario (the two built-in coll
# runs: their transport), or by --label; a table of contents links every
# section; queue depths in binary units, the bytes on hover; the heatmap's
# scale from 0, said in its caption; legends below their plots
has "$R" "roce/result.json (transport=roce" && has "$R" "ib/result.json (transport=ib" && ok labels-what-differs ||
	bad "labels-what-differs: $(grep -o '<td>[^<]*result.json[^<]*' "$R" | head -3)"
run report-label 0 "$F" report "$tmp/roce/result.json" "$tmp/ib/result.json" --label "RoCE 1:1" --label "IB 1:1" && {
	[ "$(grep -c 'class="tick legend">RoCE 1:1<' "$tmp/out")" -eq 1 ] && has "$tmp/out" 'class="tick legend">IB 1:1<' &&
		ok report-label || bad report-label; }
run report-labels-many 2 "$F" report "$tmp/roce/result.json" --label a --label b && ok report-labels-many
toc=$(sed -n '/<nav class="toc">/,/<\/nav>/p' "$R" | grep -c '<li><a href="#')
[ "$toc" -eq "$(grep -c '<section id=' "$R")" ] && ok "contents ($toc sections)" || bad "contents: $toc links"
grep -q '<span title="[0-9]* bytes">[0-9.]* [KMG]iB</span>' "$R" && ! grep -q '[0-9] B</td>' "$R" && ok queue-units || bad queue-units
has "$R" "the colour scale from 0 to the highest" && ok heatmap-from-zero || bad heatmap-from-zero
# the topology names its tiers (with their counts) and its switches; a
# NIC link's PAUSE mark sits near the NIC, so marks do not merge into bars
grep -q 'class="axis tier">spine (4)<' "$R" && grep -q 'class="axis tier">leaf (4)<' "$R" &&
	grep -q 'class="axis tier">NICs (64)<' "$R" && grep -q 'class="tick nodename" text-anchor="middle">leaf0<' "$R" &&
	ok topology-names || bad "topology-names: $(grep -o 'class="axis tier">[^<]*' "$R" | head -4)"
# the job's step timeline has a time axis: ticks in ms from 0 up to its
# longest iteration
awk '/<section class="job"/ { on = 1 } on && /<\/section>/ { on = 0 } on && /class="tick" text-anchor="middle">[0-9.]+ ms<\/text>/ { n++ }
	END { exit n < 3 }' "$R" && grep -q 'text-anchor="middle">0 ms</text>' "$R" && ok job-time-axis || bad job-time-axis
awk '/<svg class="chart"/ { h = $0; sub(/.*viewBox="0 0 [0-9]* /, "", h); sub(/".*/, "", h); lim = h }
	/class="tick legend"/ { y = $0; sub(/.* y="/, "", y); sub(/".*/, "", y); if (y + 0 < 300) bad = 1 }
	END { exit bad }' "$R" && ok legends-below || bad legends-below
run report-none 2 "$F" report && ok report-none
printf '{"schema": "fabscope.result/1", "matrix": {"endpoints": ["a"]}}\n' >"$tmp/bad.json"
run report-bad 3 "$F" report "$tmp/bad.json" -o "$tmp/b.html" && { [ ! -e "$tmp/b.html" ] && ok report-bad || bad "report-bad: wrote"; }

# each section alone (--section): one <section>, its own pictures
secs="documents suspects busbw sim-1 matrix-4 job-5-1 sim-6"
for sec in $secs; do
	if "$F" report $docs --section $sec -o "$tmp/s-$sec.html" &&
		[ "$(grep -c '<section' "$tmp/s-$sec.html")" -eq 1 ] && has "$tmp/s-$sec.html" "id=\"$sec\""; then
		ok "section $sec"
	else
		bad "section $sec: not made, or not it alone"
	fi
done
run section-missing 3 "$F" report $docs --section sim-99 -o "$tmp/none.html" && {
	[ ! -e "$tmp/none.html" ] && has "$tmp/err" "no such section" && ok section-missing || bad section-missing; }

# in a browser (with the plain build: the sanitizers' pass ran the same
# report commands above, and a browser checks nothing of theirs)
B=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$B" ] && [ "${BUILD:-build}" = build ]; then
	flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0"
	if timeout 60 "$B" $flags --dump-dom "file://$R" >"$tmp/dom.html" 2>"$tmp/chr.err"; then
		n=$(grep -c '<svg' "$tmp/dom.html")
		[ "$n" -ge 10 ] && has "$tmp/dom.html" 'id="matrix-4"' && ok "browser-dom ($n pictures)" || bad "browser-dom: $n pictures"
		if grep -q 'CONSOLE' "$tmp/chr.err"; then bad "browser-console: $(grep CONSOLE "$tmp/chr.err" | head -2)"; else ok browser-no-console-error; fi
	else
		bad "browser-dom: $(tail -3 "$tmp/chr.err")"
	fi
	if timeout 60 "$B" $flags --window-size=1200,4200 --screenshot="$tmp/r.png" "file://$R" >/dev/null 2>&1 &&
		[ "$(wc -c <"$tmp/r.png")" -gt 100000 ]; then
		ok "browser-screenshot ($(wc -c <"$tmp/r.png") bytes)"
		[ -n "$REPORT_PNG" ] && cp "$tmp/r.png" "$REPORT_PNG"
	else
		bad "browser-screenshot: blank or missing"
	fi
	# each section as a browser draws it: its DOM holds its own pictures,
	# and its screenshot is not blank (a blank page compresses to under 5
	# KB) and differs from every other section's
	for sec in $secs; do
		case $sec in
		documents) want='<table' ;; suspects) want='<li' ;; busbw) want='<polyline' ;;
		sim-*) want='class="topo"' ;; matrix-*) want='sender (rows)' ;; job-*) want='<rect' ;;
		esac
		timeout 60 "$B" $flags --dump-dom "file://$tmp/s-$sec.html" >"$tmp/s-$sec.dom" 2>/dev/null
		[ "$(grep -c '<section' "$tmp/s-$sec.dom")" -eq 1 ] && has "$tmp/s-$sec.dom" "id=\"$sec\"" &&
			has "$tmp/s-$sec.dom" "$want" || bad "section $sec: its DOM lacks $want"
		timeout 60 "$B" $flags --window-size=1200,900 --screenshot="$tmp/s-$sec.png" "file://$tmp/s-$sec.html" >/dev/null 2>&1
		sz=$(wc -c <"$tmp/s-$sec.png" 2>/dev/null || echo 0)
		[ "$sz" -gt 12000 ] && ok "section $sec on screen ($sz bytes)" || bad "section $sec: blank screenshot ($sz bytes)"
	done
	[ "$(md5sum "$tmp"/s-*.png | cut -d' ' -f1 | sort -u | wc -l)" -eq 7 ] && ok sections-differ || bad sections-differ
elif [ -n "$B" ]; then
	echo "note: the browser checks of the report run with the plain build only"
else
	echo "note: Chromium is not installed: the browser checks of the report are skipped"
fi
echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
