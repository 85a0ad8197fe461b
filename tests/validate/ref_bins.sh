# ref_bins FCT_CSV_GZ: a reference run's FCT slowdown per 5% size bin, by
# the definitions of HPCC's analysis and fabscope's slowdown.csv
# (doc/results.md): slowdown = fct / standalone fct, floored at 1; the
# flows sorted by size, then slowdown, in 20 bins of equal count; one line
# a bin: "bin max_size p50 p95 p99".  Sourced by hpcc.sh and hpcc_cc.sh.
ref_bins() {
	gzip -dc "$1" |
		awk -F, 'NR > 1 { s = $7 / $8; if (s < 1) s = 1; printf "%d %.17g\n", $5, s }' |
		sort -k1,1n -k2,2g |
		awk '{ b[NR] = $1; s[NR] = $2 } END {
			n = NR
			for (i = 0; i < 20; i++) {
				lo = int(i * 5 * n / 100); hi = int((i + 1) * 5 * n / 100); k = hi - lo
				m = 0
				for (j = lo + 1; j <= hi; j++) v[++m] = s[j]
				# the bin by slowdown (insertion sort: a bin is sorted by size already)
				for (a = 2; a <= m; a++) { x = v[a]; c = a - 1; while (c > 0 && v[c] > x) { v[c + 1] = v[c]; c-- } v[c + 1] = x }
				printf "%d %d %.4f %.4f %.4f\n", i, b[hi], v[int(k * 0.5) + 1], v[int(k * 0.95) + 1], v[int(k * 0.99) + 1]
			}
		}'
}
