#!/usr/bin/env python3
"""Malformed documents given to fabscope report: each line of docs.txt
changes one field of a document that fabscope itself wrote (a coll, sim
and matrix result, the probe's four tests, a sweep's sweep.json, plan
--compare's compare.json, all made here on a tiny cluster and loopback)
and expects report to refuse it with the exit status and the message the
line gives, writing no page.  The lines follow from doc/schema/ (a type, a
minimum or maximum, a required key, an enum or const, a key a closed
object does not have) and, where diagnosis reads the field first, from
src/analysis/validate.c's words for it.

Line: BASE | PATH | VALUE | EXIT | MESSAGE.  PATH is dotted with [i]
indices; VALUE a JSON literal, or - to delete the key; MESSAGE what
stderr must hold, after "FILE: ".

Usage: docs.py path/to/fabscope.  Last line: "docs: N passed, N failed".
Under a sanitizer build (BUILD other than "build", as make asan sets it)
every third line runs: the same checks of the same code, a third of the
time (77 s of a two-core machine's ASan run, all of them).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

F = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./build/fabscope")
HERE = os.path.dirname(os.path.abspath(__file__))
TINY = "topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 2, nics_per_server: 1, spines: 1, links_per_spine: 1}\n"


def run(args, cwd):
    return subprocess.run([F] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def make_bases(d):
    """the documents the cases change, written by fabscope here"""
    with open(os.path.join(d, "tiny.yaml"), "w") as f:
        f.write(TINY)
    with open(os.path.join(d, "sim.yaml"), "w") as f:
        f.write(TINY + "fabric: {series_interval: 2us}\n"
                "traffic: {flows: [{src: 0, dst: 2, bytes: 64KiB}, {src: 1, dst: 3, bytes: 16KiB}]}\n"
                "jobs: [{name: j, gpus: 4, iterations: 2, compute: 10us, gradient_bytes: 64KiB}]\n")
    with open(os.path.join(d, "g.yaml"), "w") as f:
        f.write("scenario: tiny.yaml\ncommand: coll\nset: {collective.min_bytes: 1KiB, collective.max_bytes: 1KiB}\n"
                "vary:\n  collective.algo: [ring, tree]\n")
    with open(os.path.join(d, "c.yaml"), "w") as f:
        f.write("cluster: {gpus: 16, gpus_per_server: 4, nics_per_server: 1, radix: 8}\n"
                "designs:\n  - name: a\n  - name: b\n    oversubscription: \"2:1\"\n"
                "workload: {command: coll, set: {collective.min_bytes: 1KiB, collective.max_bytes: 1KiB}}\n")
    cmds = {
        "coll": (["coll", "tiny.yaml", "-b", "1K", "-e", "4K", "-q", "--out", "coll"], "coll/result.json"),
        "sim": (["sim", "sim.yaml", "-q", "--out", "sim"], "sim/result.json"),
        "matrix": (["matrix", "tiny.yaml", "-q", "--out", "matrix"], "matrix/result.json"),
        "pcoll": (["probe", "--local", "2", "-b", "1K", "-e", "1K", "--json", "pcoll.json"], "pcoll.json"),
        "pbw": (["probe", "--local", "2", "--test", "bw", "-b", "64K", "-e", "64K", "-t", "0.2", "-i", "0.1",
                 "--json", "pbw.json"], "pbw.json"),
        "plat": (["probe", "--local", "2", "--test", "latency", "-n", "10", "--json", "plat.json"], "plat.json"),
        "pmat": (["probe", "--local", "3", "--test", "matrix", "-e", "64K", "-n", "2", "--json", "pmat.json"],
                 "pmat.json"),
        "sweep": (["sweep", "g.yaml", "-o", "sw", "-q"], "sw/sweep.json"),
        "compare": (["plan", "--compare", "c.yaml", "-q", "--out", "cmp"], "cmp/compare.json"),
    }
    bases = {}
    for name, (args, out) in cmds.items():
        r = run(args, d)
        if r.returncode != 0:
            print("FAIL base %s: exit %d: %s" % (name, r.returncode, r.stderr[:300]))
            continue
        with open(os.path.join(d, out)) as f:
            bases[name] = json.load(f)
    return bases


def steps(path):
    return [int(m[1:-1]) if m.startswith("[") else m for m in re.findall(r"\[\d+\]|[^.\[\]]+", path)]


def change(doc, path, value):
    """doc with the field at path set to value (or deleted: None)"""
    doc = json.loads(json.dumps(doc))
    *head, last = steps(path)
    x = doc
    for s in head:
        x = x[s]
    if value is None:
        del x[last]
    else:
        x[last] = value
    return doc


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        bases = make_bases(d)
        with open(os.path.join(HERE, "docs.txt")) as f:
            lines = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
        if os.environ.get("BUILD", "build") != "build":
            lines = lines[::3]
        for n, line in enumerate(lines, 1):
            base, path, value, want, msg = [p.strip() for p in line.split(" | ", 4)]
            name = "%d-%s %s=%s" % (n, base, path, value)
            if base not in bases:
                failed += 1
                print("FAIL %s: no base document %s" % (name, base))
                continue
            try:
                doc = change(bases[base], path, None if value == "-" else json.loads(value))
            except (KeyError, IndexError, TypeError) as e:
                failed += 1
                print("FAIL %s: the path is not in the base document (%s)" % (name, e))
                continue
            p = os.path.join(d, "case.json")
            with open(p, "w") as f:
                json.dump(doc, f)
            page = os.path.join(d, "page.html")
            r = run(["report", p, "-o", page], d)
            if r.returncode != int(want):
                failed += 1
                print("FAIL %s: exit %d, want %s: %s" % (name, r.returncode, want, r.stderr[:300]))
            elif p + ": " + msg not in r.stderr:
                failed += 1
                print("FAIL %s: message: %s / want: %s" % (name, r.stderr.strip()[:300], msg))
            elif os.path.exists(page) or r.stdout:
                failed += 1
                print("FAIL %s: wrote a page" % name)
            else:
                passed += 1
                print("ok %s" % name)
    print("docs: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
