#!/usr/bin/env python3
"""Convert HPCC ns-3 outputs (fct, qlen monitor, pfc) into the CSV formats of
shared/reference/hpcc-ns3/README.md.

usage: convert.py FLOWFILE(hpcc format) FCT_TXT QLEN_TXT PFC_TXT OUTPREFIX [incast_dport]
"""
import sys, math
from fractions import Fraction

TOPO = 'shared/reference/hpcc-ns3/topology.txt'
T0 = 2_000_000_000


def node_name(i):
    if i < 320:
        return 'h%d' % i
    if i < 340:
        return 'tor%d' % (i - 320)
    if i < 360:
        return 'agg%d' % (i - 340)
    return 'core%d' % (i - 360)


def node_id(s):
    if s[0] == 'h':
        return int(s[1:])
    if s.startswith('tor'):
        return 320 + int(s[3:])
    if s.startswith('agg'):
        return 340 + int(s[3:])
    return 360 + int(s[4:])


def ports():
    """(node, port) -> (peer, rate); port k = k-th link naming the node."""
    cnt = {}
    res = {}
    for line in open(TOPO):
        if not line.startswith('link'):
            continue
        _, a, b, rate, delay = line.split()
        a, b = node_id(a), node_id(b)
        for x, y in ((a, b), (b, a)):
            cnt[x] = cnt.get(x, 0) + 1
            res[(x, cnt[x])] = (y, rate)
    return res


def ip2id(h):
    return (int(h, 16) >> 8) & 0xffff


def main():
    flowfile, fcttxt, qlentxt, pfctxt, out = sys.argv[1:6]
    # --- flows (HPCC format), with sport numbering as in third.cc
    lines = open(flowfile).read().split('\n')
    n = int(lines[0].split()[0])
    flows = []
    nextport = {}
    for l in lines[1:1 + n]:
        s, d, pg, dport, size, t = l.split()
        s, d = int(s), int(d)
        sp = nextport.get((s, d), 10000)
        nextport[(s, d)] = sp + 1
        start = math.floor(Fraction(float(t)) * 10**9)  # what ns-3's Seconds(double) gives
        flows.append((s, d, sp, int(dport), int(size), start))
    assert len(flows) == n
    # --- fct
    done = {}
    for l in open(fcttxt):
        f = l.split()
        if not f:
            continue
        sip, dip, sp, dp, size, st, fct, sa = f
        key = (ip2id(sip), ip2id(dip), int(sp))
        assert key not in done, key
        done[key] = (int(dp), int(size), int(st), int(fct), int(sa))
    missing = 0
    startmis = 0
    with open(out + '.fct.csv', 'w') as fo:
        fo.write('src,dst,sport,dport,bytes,start_ns,fct_ns,standalone_fct_ns\n')
        for (s, d, sp, dp, size, start) in flows:
            r = done.get((s, d, sp))
            if r is None:
                missing += 1
                continue
            rdp, rsize, st, fct, sa = r
            assert rdp == dp and rsize == size, (s, d, sp)
            if st != start:
                startmis += 1
            fo.write('%d,%d,%d,%d,%d,%d,%d,%d\n' % (s, d, sp, dp, size, st - T0, fct, sa))
    print('flows', n, 'finished', len(done), 'missing', missing,
          'start mismatches vs flow file', startmis)
    last = max(st + fct for (_, _, st, fct, _) in done.values()) - T0
    print('last completion (ns after 2 s):', last)
    # --- pfc
    pm = ports()
    pfc = [l.split() for l in open(pfctxt) if l.strip()]
    if pfc:
        with open(out + '.pfc.csv', 'w') as fo:
            fo.write('time_ns,node,port,peer,kind\n')
            for t, node, ntype, ifidx, typ in pfc:
                node, ifidx = int(node), int(ifidx)
                peer = pm[(node, ifidx)][0]
                fo.write('%d,%s,%d,%s,%s\n' % (int(t) - T0, node_name(node), ifidx,
                                               node_name(peer),
                                               'pause' if typ == '1' else 'resume'))
    npause = sum(1 for p in pfc if p[4] == '1')
    print('pfc frames', len(pfc), 'pause', npause, 'resume', len(pfc) - npause)
    if pfc:
        print('pfc first/last ns', int(pfc[0][0]) - T0, int(pfc[-1][0]) - T0)
    # --- qlen: last dump block
    blocks = []
    cur = None
    for l in open(qlentxt):
        if l.startswith('time:'):
            cur = [int(l.split()[1]), []]
            blocks.append(cur)
        elif l.strip():
            cur[1].append([int(x) for x in l.split()])
    print('qlen dumps at', [b[0] for b in blocks])
    tlast, rows = blocks[-1]
    th = [1, 100, 200, 400, 800, 1600, 3200, 6400]
    with open(out + '.qlen.csv', 'w') as fo:
        fo.write('switch,port,peer,rate,samples,' +
                 ','.join('ge%dKB_ns' % x for x in th) + ',max_KB,integral_KBus\n')
        for r in rows:
            sw, port, cnt = r[0], r[1], r[2:]
            samples = sum(cnt)
            ge = [sum(cnt[x:]) * 100 for x in th]
            mx = max((k for k, c in enumerate(cnt) if c), default=0)
            integ = sum(k * c for k, c in enumerate(cnt))  # KB x samples; x 100 ns = /10 KB.us
            peer, rate = pm[(sw, port)]
            fo.write('%s,%d,%s,%s,%d,%s,%d,%d.%d\n' % (
                node_name(sw), port, node_name(peer), rate, samples,
                ','.join(str(g) for g in ge), mx, integ // 10, integ % 10))
    print('qlen rows', len(rows), 'samples/port', sum(rows[0][2:]))


if __name__ == '__main__':
    main()
