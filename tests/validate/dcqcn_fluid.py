#!/usr/bin/env python3
"""The DCQCN paper's fluid model (Zhu et al., SIGCOMM 2015, section 5),
integrated for N long flows into one bottleneck: the reaction point's
target rate, current rate and alpha as the paper's differential equations
give them (fast recovery, additive increase by timer and byte counter; no
hyper increase, as the model has none), the marking probability from RED
on the queue one feedback delay earlier.  Prints the queue's p50 and p95
over the steady part of the run (from 10 ms), the total rate at the end
and alpha.  Usage: dcqcn_fluid.py N [RATE_GBPS] [SECONDS]."""
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
GBPS = float(sys.argv[2]) if len(sys.argv) > 2 else 40.0
END = float(sys.argv[3]) if len(sys.argv) > 3 else 0.06
PKT = 1024.0  # bytes a packet (the scenario's MTU)
C = GBPS * 1e9 / 8 / PKT  # the bottleneck, packets per second
KMIN, KMAX, PMAX = 5e3 / PKT, 200e3 / PKT, 0.01  # RED, in packets
G = 1 / 256.0
TAU = 50e-6  # the CNP interval
TAU_A = 55e-6  # alpha's timer
T = 55e-6  # the rate-increase timer
B = 10e6 / PKT  # the byte counter, packets
F = 5  # fast-recovery steps
R_AI = 40e6 / 8 / PKT  # additive increase, packets per second
R_MIN = 100e6 / 8 / PKT
DT = 1e-7
DELAY = 4e-6  # feedback: marks reach the sender one round trip later


def red(q):
    if q <= KMIN:
        return 0.0
    if q >= KMAX:
        return 1.0
    return (q - KMIN) / (KMAX - KMIN) * PMAX


def hit(p, n):
    """the chance that n packets carry at least one mark"""
    return 1.0 if p >= 1 else 1 - (1 - p) ** n


def main():
    rc = rt = C
    alpha = 1.0
    q = 0.0
    lag = [0.0] * (int(DELAY / DT) + 1)
    qs = []
    i = 0
    t = 0.0
    while t < END:
        p = red(lag[i % len(lag)])
        lag[i % len(lag)] = q
        i += 1
        if 0 < p < 1:
            inc_b = rc * p / ((1 - p) ** (-B) - 1)
            inc_t = rc * p / ((1 - p) ** (-T * rc) - 1)
            ai_b = R_AI * rc * (1 - p) ** (F * B) * p / ((1 - p) ** (-B) - 1)
            ai_t = R_AI * rc * (1 - p) ** (F * T * rc) * p / ((1 - p) ** (-T * rc) - 1)
        elif p == 0:
            inc_b, inc_t, ai_b, ai_t = rc / B, 1 / T, R_AI * rc / B, R_AI / T
        else:
            inc_b = inc_t = ai_b = ai_t = 0.0
        d_alpha = G / TAU_A * (hit(p, TAU_A * rc) - alpha)
        d_rt = -(rt - rc) / TAU * hit(p, TAU * rc) + ai_b + ai_t
        d_rc = -rc * alpha / (2 * TAU) * hit(p, TAU * rc) + (rt - rc) / 2 * (inc_b + inc_t)
        alpha += d_alpha * DT
        rt = min(rt + d_rt * DT, C)
        rc = max(min(rc + d_rc * DT, C), R_MIN)
        q = max(0.0, q + (N * rc - C) * DT)
        t += DT
        if t > 0.01 and i % 10 == 0:
            qs.append(q * PKT)
    qs.sort()
    print("%.1f %.1f %.2f %.4f" % (qs[len(qs) // 2] / 1e3, qs[int(len(qs) * 0.95)] / 1e3,
                                   N * rc * PKT * 8 / 1e9, alpha))


main()
