#!/bin/sh
# The figures of README.md, from the commands it shows (usage: from the
# repository root, sh examples/rails/figures.sh [FABSCOPE]).
. tests/cli/figures_lib.sh
X=examples/rails/scenario.yaml
a2a="--op alltoall --algo direct -b 64M -e 64M"
json ring coll $X
json cross coll $X --set nccl.cross_nic=true
# shellcheck disable=SC2086
json pxn coll $X $a2a
# shellcheck disable=SC2086
json nopxn coll $X $a2a --set nccl.pxn=false
calc '
# the bytes the NICs sent, and those the leaves sent up to the spines
$1 ~ /\.ports\.[0-9]+\.node$/ { split($1, k, "."); node[k[1] "." k[3]] = $2 }
$1 ~ /\.ports\.[0-9]+\.peer$/ { split($1, k, "."); peer[k[1] "." k[3]] = $2 }
$1 ~ /\.ports\.[0-9]+\.tx_bytes$/ { split($1, k, "."); tx[k[1] "." k[3]] = $2 }
END {
	for (p in tx) {
		split(p, k, ".")
		if (node[p] ~ /\.nic[0-9]+$/)
			nic[k[1]] += tx[p]
		else if (node[p] ~ /^leaf/ && peer[p] ~ /^spine/)
			up[k[1]] += tx[p]
	}
	n = split("ring cross pxn nopxn", r, " ")
	for (i = 1; i <= n; i++) {
		p = r[i] ".collective.rows.0."
		put(r[i], fmt("%.1f", get(p "time_us")) " us | " fmt("%.1f", get(p "busbw_GBps")) " GB/s | " \
			fmt("%.3f", up[r[i]] / nic[r[i]]) " | " commas(get(r[i] ".summary.ecn_marks")) " | " \
			commas(get(r[i] ".summary.pause_frames")))
	}
	put("proto", get("ring.collective.rows.0.proto"))
	put("algo", get("ring.collective.rows.0.algo"))
	# 8 NICs of 400 Gbps, 4096 bytes of payload in each 4178-byte frame
	put("frac", fmt("%.2f", get("ring.collective.rows.0.busbw_GBps") / (8 * 400 / 8 * 4096 / 4178)))
	put("x_cross", fmt("%.1f", get("cross.collective.rows.0.time_us") / get("ring.collective.rows.0.time_us")))
	put("x_pxn", fmt("%.1f", get("nopxn.collective.rows.0.time_us") / get("pxn.collective.rows.0.time_us")))
}' "$T/flat"
block <<'EOT'
| operation | NCCL setting | time | busbw | bytes through the spine / bytes from NICs | ECN marks | PAUSE |
|---|---|---|---|---|---|---|
| ring AllReduce, 256 MiB | rail-aligned (default) | {ring} |
| | `nccl.cross_nic: true` | {cross} |
| AllToAll, 64 MiB | PXN (default) | {pxn} |
| | `nccl.pxn: false` | {nopxn} |

(`auto` ran the {algo} with {proto}; LL128's 120 of 128 bytes bound its busbw
at 0.94 of the 8 NICs' 392 GB/s, and it reaches {frac} of them.)

Lesson: on rail-optimized wiring a GPU's own leaf reaches only the same
GPU of the other servers.  NCCL keeps each ring channel on one rail: it
enters and leaves a server through NICs of the same rail, the hop from
the last GPU of a server to the NIC of the next rail crossing NVLink
instead of the fabric, and the channels rotate over the 8 NICs.  Not one
byte crosses the spine, and the bus bandwidth is the sum of the server's
NICs.  Let the channels change rail at every server and every byte goes
through the spine, where ECMP collides them and the 2:1 uplinks queue,
mark and pause: {x_cross}x slower.  An AllToAll has 7/8 of its bytes for other
rails; PXN sends them through the NIC on the destination's rail (NVLink
first), so they too stay under the leaves: {x_pxn}x faster than sending each
from the GPU's own NIC across the spine.  `--debug` prints each ring
channel's hops with the NICs they take.
EOT
