#!/usr/bin/env python3
"""FCT slowdown per 5 % flow-size bin, as defined in the reference README
(shared/reference/hpcc-ns3/README.md, "FCT slowdown: definition used").

usage: python3 bins.py NAME.fct.csv[.gz] [dport]

- slowdown = fct_ns / standalone_fct_ns, floored at 1;
- flows sorted by (size, slowdown), cut into 20 bins:
  bin i = sorted[i*n//100 : (i+5)*n//100] for i = 0, 5, ..., 95;
- percentile p of a bin = its sorted slowdowns at index int(count * p).
- optional dport selects flows (100 = background, 200 = incast); default: all.
Standard library only.
"""
import csv
import gzip
import sys


def load(path, dport=None):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        if dport is not None and int(r['dport']) != dport:
            continue
        sd = max(1.0, int(r['fct_ns']) / int(r['standalone_fct_ns']))
        out.append((int(r['bytes']), sd))
    return out


def pct(v, p):
    return v[int(len(v) * p)]


def bins(flows):
    flows = sorted(flows)
    n = len(flows)
    res = []
    for i in range(0, 100, 5):
        b = flows[i * n // 100:(i + 5) * n // 100]
        sd = sorted(x[1] for x in b)
        res.append((i + 5, len(b), b[0][0], b[-1][0],
                    pct(sd, 0.5), pct(sd, 0.95), pct(sd, 0.99)))
    return res


def main():
    path = sys.argv[1]
    dport = int(sys.argv[2]) if len(sys.argv) > 2 else None
    flows = load(path, dport)
    print('%d flows' % len(flows))
    print()
    print('| bin | flows | size range (B) | p50 | p95 | p99 |')
    print('|---|---|---|---|---|---|')
    for q, cnt, lo, hi, p50, p95, p99 in bins(flows):
        print('| %d%% | %d | %d-%d | %.3f | %.3f | %.3f |' % (q, cnt, lo, hi, p50, p95, p99))
    print()
    print('| group | flows | p50 | p95 | p99 |')
    print('|---|---|---|---|---|')
    for name, lo, hi in (('< 100 KB', 0, 100000), ('100 KB - 1 MB', 100000, 1000000),
                         ('>= 1 MB', 1000000, 1 << 62)):
        sd = sorted(s for b, s in flows if lo <= b < hi)
        print('| %s | %d | %.3f | %.3f | %.3f |' % (name, len(sd), pct(sd, 0.5),
                                                   pct(sd, 0.95), pct(sd, 0.99)))


if __name__ == '__main__':
    main()
