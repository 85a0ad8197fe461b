#!/usr/bin/env python3
"""Extra summaries for the README: slowdown by path length, share > 10, p95 by start
window, queue-length monitor per direction, PFC summary.
usage: stats.py NAME.fct.csv[.gz] NAME.qlen.csv [NAME.pfc.csv]"""
import csv, gzip, sys


def tier(name):
    return 'host' if name[0] == 'h' else name.rstrip('0123456789').replace('tor', 'ToR').replace('agg', 'Agg').replace('core', 'Core')


def pct(v, p):
    return v[int(len(v) * p)]


op = gzip.open if sys.argv[1].endswith('.gz') else open
rows = list(csv.DictReader(op(sys.argv[1], 'rt')))
sd = lambda r: max(1.0, int(r['fct_ns']) / int(r['standalone_fct_ns']))
bg = [r for r in rows if r['dport'] == '100']
inc = [r for r in rows if r['dport'] == '200']
for name, sel in (('all', rows), ('background', bg), ('incast', inc)):
    if not sel:
        continue
    last = max(int(r['start_ns']) + int(r['fct_ns']) for r in sel)
    s = sorted(sd(r) for r in sel)
    print('%s: %d flows, last completion %d ns, slowdown p50 %.3f p95 %.3f p99 %.3f max %.3f, >10: %.2f %%'
          % (name, len(sel), last, pct(s, .5), pct(s, .95), pct(s, .99), s[-1],
             100.0 * sum(1 for x in s if x > 10) / len(s)))
print('background slowdown by path length:')


def path(r):
    s, d = int(r['src']), int(r['dst'])
    if s // 16 == d // 16:
        return 'same ToR'
    if s // 64 == d // 64:
        return 'same pod'
    return 'across pods'
for p in ('same ToR', 'same pod', 'across pods'):
    s = sorted(sd(r) for r in bg if path(r) == p)
    print('  %s: %d flows p50 %.3f p95 %.3f' % (p, len(s), pct(s, .5), pct(s, .95)))
print('background p95 by start window (0.5 ms):')
for w in range(10):
    s = sorted(sd(r) for r in bg if w * 500000 <= int(r['start_ns']) < (w + 1) * 500000)
    print('  %.1f-%.1f ms: %d flows p95 %.2f' % (w / 2, (w + 1) / 2, len(s), pct(s, .95)))
if inc:
    s = sorted(sd(r) for r in inc)
    f = sorted(int(r['fct_ns']) for r in inc)
    print('incast slowdown p50 %.2f p95 %.2f p99 %.2f range %.2f-%.2f; fct p50 %.3f ms p95 %.3f ms range %.3f-%.3f ms'
          % (pct(s, .5), pct(s, .95), pct(s, .99), s[0], s[-1], pct(f, .5) / 1e6, pct(f, .95) / 1e6,
             f[0] / 1e6, f[-1] / 1e6))
    ev = {}
    for r in inc:
        ev.setdefault(int(r['start_ns']), []).append(r)
    for t in sorted(ev):
        e = ev[t]
        done = sorted(int(r['fct_ns']) for r in e)
        print('  event %d us recv h%s: first done %d us, last done %d us' % (t // 1000, e[0]['dst'], done[0] // 1000, done[-1] // 1000))

print('queue monitor per direction (port-us with >= X KB; integral MB.ms):')
q = list(csv.DictReader(open(sys.argv[2])))
th = [1, 100, 400, 800, 1600, 3200]
agg = {}
for r in q:
    k = '%s -> %s' % (tier(r['switch']), tier(r['peer']))
    a = agg.setdefault(k, [0] * (len(th) + 3))
    a[0] += 1
    for i, x in enumerate(th):
        a[1 + i] += int(r['ge%dKB_ns' % x])
    a[-2] = max(a[-2], int(r['max_KB']))
    a[-1] += float(r['integral_KBus'])
print('| direction | ports | ' + ' | '.join('>=%d KB' % x for x in th) + ' | max KB | integral |')
for k in ('ToR -> host', 'ToR -> Agg', 'Agg -> ToR', 'Agg -> Core', 'Core -> Agg'):
    a = agg[k]
    print('| %s | %d | ' % (k, a[0]) + ' | '.join('{:,}'.format(round(v / 1000)) for v in a[1:1 + len(th)])
          + ' | {:,} | {:.2f} |'.format(a[-2], a[-1] / 1e6))
if len(sys.argv) > 3:
    p = list(csv.DictReader(open(sys.argv[3])))
    pa = [r for r in p if r['kind'] == 'pause']
    print('PFC: %d pause %d resume, %d..%d ns, paused nodes %d' % (
        len(pa), len(p) - len(pa), int(p[0]['time_ns']), int(p[-1]['time_ns']), len(set(r['node'] for r in pa))))
    c = {}
    for r in pa:
        k = '%s -> %s' % (tier(r['peer']), tier(r['node']))
        c[k] = c.get(k, 0) + 1
    for k, v in sorted(c.items(), key=lambda x: -x[1]):
        print('  sender %s paused: %d' % (k, v))
    # pause durations
    open_ = {}
    durs = []
    tot = 0
    for r in p:
        key = (r['node'], r['port'])
        t = int(r['time_ns'])
        if r['kind'] == 'pause':
            open_.setdefault(key, t)
        elif key in open_:
            d = t - open_.pop(key)
            durs.append(d)
    durs.sort()
    if durs:
        print('  pauses: %d, total paused port-time %.2f ms, median %.1f us p90 %.1f us p99 %.1f us max %.1f us' % (
            len(durs), sum(durs) / 1e6, pct(durs, .5) / 1e3, pct(durs, .9) / 1e3, pct(durs, .99) / 1e3, durs[-1] / 1e3))
