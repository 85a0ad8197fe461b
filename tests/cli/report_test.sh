#!/bin/sh
# fabscope report: one self-contained page from the documents of sim (with
# a time series), coll (two runs overlaid), matrix (a suspect) and jobs;
# the same bytes twice; bad input refused; and, where Chromium is
# installed, the page as a browser shows it (it loads with no console
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
	"$F" sim -q examples/overlap/scenario.yaml --out "$tmp/jobs" || { bad "runs"; echo "report: $pass passed, $fail failed"; exit 1; }
docs="$tmp/sim/result.json $tmp/roce/result.json $tmp/ib/result.json $tmp/mat/result.json $tmp/jobs/result.json"
run report 0 "$F" report $docs -o "$tmp/r.html" && ok report
R=$tmp/r.html
for want in 'id="documents"' 'id="suspects"' 'id="busbw"' 'id="sim-1"' 'id="matrix-4"' 'class="job"' \
	'link leaf0 &lt;-&gt; server1.nic3' 'href="#matrix-4"' 'sender (rows), receiver (columns)' 'GB/s</text>' \
	'the busiest queues over time' 'flow completion times'; do
	has "$R" "$want" && ok "has $want" || bad "report lacks $want"
done
# self-contained: nothing fetched, no script
if grep -qiE '<script|<link|src=|@import|url\(|https?://' "$R"; then bad "self-contained: $(grep -oiE '<script|<link|src=|@import|url\(|https?://' "$R" | head -3)"; else ok self-contained; fi
[ "$(grep -c '<polyline' "$R")" -ge 4 ] && ok charts || bad charts
run report-again 0 "$F" report $docs && { cmp -s "$tmp/out" "$R" && ok same-bytes || bad same-bytes; }
run report-none 2 "$F" report && ok report-none
printf '{"schema": "fabscope.result/1", "matrix": {"endpoints": ["a"]}}\n' >"$tmp/bad.json"
run report-bad 3 "$F" report "$tmp/bad.json" -o "$tmp/b.html" && { [ ! -e "$tmp/b.html" ] && ok report-bad || bad "report-bad: wrote"; }

# in a browser
B=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$B" ]; then
	flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0"
	if timeout 60 "$B" $flags --dump-dom "file://$R" >"$tmp/dom.html" 2>"$tmp/chr.err"; then
		n=$(grep -c '<svg' "$tmp/dom.html")
		[ "$n" -ge 5 ] && has "$tmp/dom.html" 'id="matrix-4"' && ok "browser-dom ($n pictures)" || bad "browser-dom: $n pictures"
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
else
	echo "note: Chromium is not installed: the browser checks of the report are skipped"
fi
echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
