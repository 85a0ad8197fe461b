#!/usr/bin/env python3
"""Every result document the examples make holds to doc/schema/.

Runs sim on every example, coll and matrix on those made for them, the
probe's four tests on loopback and diagnose on what they wrote, and
validates each document against its JSON Schema (draft 2020-12).  Then
checks that the schemas reject what they must: a missing key, an unknown
key, a value of the wrong type, a wrong kind.  Skipped, with a message,
where python3-jsonschema is not installed.

usage: schema_test.py [FABSCOPE]
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("skip: schema tests need python3-jsonschema (Debian package)")
    sys.exit(0)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
F = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "fabscope"))
X = os.path.join(ROOT, "examples")
passed = failed = 0


def ok(name):
    global passed
    passed += 1
    print("ok " + name)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def schema(name):
    with open(os.path.join(ROOT, "doc", "schema", name + ".schema.json")) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


RESULT, PROBE, DIAG, SWEEP = schema("result"), schema("probe"), schema("diagnosis"), schema("sweep")
PLAN, COMPARE = schema("plan"), schema("compare")


def errors(validator, doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))


def run(name, args, want_rc=(0,), path=None):
    """The command's document: stdout, or the file at path."""
    p = subprocess.run([F] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode not in want_rc:
        bad(name, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:300]))
        return None
    try:
        if path:
            with open(path) as f:
                return json.load(f)
        return json.loads(p.stdout)
    except (OSError, ValueError) as e:
        bad(name, "no document: %s" % e)
        return None


def check(name, validator, doc):
    if doc is None:
        return
    errs = errors(validator, doc)
    if errs:
        e = errs[0]
        bad(name, "%d errors; first at /%s: %s" % (len(errs), "/".join(map(str, e.absolute_path)), e.message[:200]))
    else:
        ok(name)


tmp = tempfile.mkdtemp()
docs = {}

# sim on every example (the training-step models as well), both engines on the built-in one; of
# the training steps at scale the 4k one only (the others take from seconds to minutes of CPU,
# and make the same document)
SLOW = ("gpt3-16k.yaml", "llama-16k.yaml", "gpt3-131k.yaml", "llama-moe-4k.yaml")
for ex in sorted(os.listdir(X)):
    for y in sorted(os.listdir(os.path.join(X, ex))):
        if y.endswith(".yaml") and y not in ("grid.yaml", "designs.yaml") + SLOW:  # a sweep's grid, plan's designs
            path = os.path.join(X, ex, y)
            with open(path) as f:
                runs = any(l.startswith(("traffic:", "jobs:", "faults:")) for l in f)
            if runs:
                docs["sim-%s-%s" % (ex, y[:-5])] = run(ex, ["sim", path, "--format", "json"])
            else:  # a cluster for coll and matrix (sim refuses it: nothing to simulate)
                docs["coll-%s-%s" % (ex, y[:-5])] = run(ex, ["coll", path, "-b", "1M", "-e", "1M", "-w", "0", "-n",
                                                             "1", "--format", "json"])
docs["sim-series"] = run("sim-series", ["sim", "--format", "json", "--set", "fabric.series_interval=50us"])
docs["sim-flow"] = run("sim-flow", ["sim", "--format", "json", "--engine", "flow"])
docs["sim-flow-dcqcn"] = run("sim-flow-dcqcn", ["sim", "--format", "json", "--engine", "flow", "--set",
                                                "flow.queues=dcqcn"])
docs["sim-unfinished"] = run("sim-unfinished", ["sim", "--format", "json", "--set", "run.end=20us"])
for t in ("tcp", "ib"):
    docs["sim-" + t] = run("sim-" + t, ["sim", "--format", "json", "--set", "fabric.transport=" + t])
# coll and matrix
docs["coll-default"] = run("coll", ["coll", "-b", "1K", "-e", "1M", "--format", "json"])
docs["coll-tree-queues"] = run("coll-tq", ["coll", os.path.join(X, "tree-queues", "scenario.yaml"), "--format", "json"])
docs["coll-flow"] = run("coll-flow", ["coll", "-b", "1M", "-e", "1M", "--engine", "flow", "--format", "json"])
for ex in ("autoneg-downgrade", "pfc-storm"):
    docs["matrix-" + ex] = run(ex, ["matrix", os.path.join(X, ex, "scenario.yaml"), "--format", "json"])
for name, doc in sorted(docs.items()):
    check("result " + name, RESULT, doc)

# the probe's four tests over loopback
probes = {}
for test, extra in (("coll", ["-b", "1K", "-e", "64K"]), ("latency", ["-n", "20", "-w", "2"]),
                    ("bw", ["-b", "64K", "-n", "5", "-w", "1"]), ("matrix", ["-e", "64K", "-n", "2"]),
                    ("bw-timed", ["-b", "64K", "-t", "0.4", "-i", "0.1", "--bidir"])):
    path = os.path.join(tmp, "probe-%s.json" % test)
    args = ["probe", "--local", "3", "--test", test.split("-")[0], "--json", path] + extra
    probes[test] = run("probe-" + test, args, path=path)
    check("probe " + test, PROBE, probes[test])

# diagnose on what they wrote (exit 1: suspects named)
for name, doc in (("matrix", docs.get("matrix-autoneg-downgrade")), ("probe", probes.get("matrix")),
                  ("jobs", docs.get("sim-two-jobs-scenario"))):
    if doc is None:
        continue
    path = os.path.join(tmp, "diag-in-%s.json" % name)
    with open(path, "w") as f:
        json.dump(doc, f)
    check("diagnosis " + name, DIAG, run("diagnose-" + name, ["diagnose", path, "--format", "json"], want_rc=(0, 1)))

# a sweep's merged table, one point failed (more GPUs than the cluster has);
# its points' documents are result documents
grid = os.path.join(tmp, "grid.yaml")
with open(grid, "w") as f:
    f.write("scenario: %s\ncommand: coll\nset: {collective.min_bytes: 1MiB, collective.max_bytes: 1MiB}\n"
            "vary:\n  collective.gpus: [16, 128]\nseeds: 2\n" % os.path.join(X, "oversubscription", "scenario.yaml"))
sweep = run("sweep", ["sweep", grid, "-q", "-o", os.path.join(tmp, "sw")], want_rc=(1,),
            path=os.path.join(tmp, "sw", "sweep.json"))
check("sweep", SWEEP, sweep)
if sweep:
    check("sweep point", RESULT, json.load(open(os.path.join(tmp, "sw", "points", sweep["points"][0]["id"] + ".json"))))

# plan's designs: two tiers, three with rails and dual ToR and 2:1 spines;
# plan --compare's table, and each design in it
plans = {}
for name, args in (("2tier", ["--gpus", "2048"]),
                   ("3tier", ["--gpus", "4096", "--rail-optimized", "--dual-tor", "--spine-oversubscription", "2:1"])):
    plans[name] = run("plan-" + name, ["plan", "--format", "json", "--radix", "64"] + args)
    check("plan " + name, PLAN, plans[name])
cmp_dir = os.path.join(tmp, "cmp")
compare = run("plan-compare", ["plan", "--compare", os.path.join(X, "plan-4k", "designs.yaml"), "-q", "--out", cmp_dir],
              path=os.path.join(cmp_dir, "compare.json"))
check("plan compare", COMPARE, compare)
for d in (compare or {}).get("designs", []):
    check("plan compare design " + d["name"], PLAN, d["plan"])


# the schemas refuse what they must
def refused(name, validator, doc, change):
    if doc is None:
        return
    d = copy.deepcopy(doc)
    change(d)
    if errors(validator, d):
        ok("refuses " + name)
    else:
        bad("refuses " + name, "the schema accepted it")


base = docs.get("coll-default")
refused("a missing summary", RESULT, base, lambda d: d.pop("summary"))
refused("an unknown key", RESULT, base, lambda d: d["summary"].__setitem__("dropz", 1))
refused("a count as a string", RESULT, base, lambda d: d["ports"][0].__setitem__("drops", "0"))
refused("another kind", RESULT, base, lambda d: d.__setitem__("kind", "simulation"))
refused("coll without its table", RESULT, base, lambda d: d.pop("collective"))
refused("a flow without its id", RESULT, docs.get("sim-series"), lambda d: d["flows"][0].pop("id"))
refused("a probe with no test", PROBE, probes.get("bw"), lambda d: d.pop("bandwidth"))
refused("a probe row's bandwidth as text", PROBE, probes.get("bw"),
        lambda d: d["bandwidth"]["rows"][0].__setitem__("GBps", "fast"))
refused("a sweep point's unknown status", SWEEP, sweep, lambda d: d["points"][0].__setitem__("status", "fine"))
refused("a plan's unknown cable", PLAN, plans.get("2tier"), lambda d: d["links"][0].__setitem__("cable", "string"))
refused("a plan without its failures", PLAN, plans.get("3tier"), lambda d: d.pop("failure"))
refused("a compared design without its plan", COMPARE, compare, lambda d: d["designs"][0].pop("plan"))
refused("a sweep without its summary", SWEEP, sweep, lambda d: d.pop("summary"))
refused("an unknown suspect kind", DIAG, {"schema": "fabscope.diagnosis/1", "documents": 1, "healthy": False,
                                           "suspects": [{"rank": 1, "kind": "gremlin", "target": "x", "score": 1,
                                                         "evidence": []}]}, lambda d: None)

subprocess.run(["rm", "-rf", tmp])
print("schema: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
