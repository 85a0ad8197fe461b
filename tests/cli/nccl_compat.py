#!/usr/bin/env python3
"""Reads a table and a -J file as nccl-tests' own parsers would, and checks
them byte for byte against what nccl-tests 2.19.6 prints for the same
values: every line below is rebuilt from its format strings (src/util.cu:
writeDeviceReport, writeResultHeader, writeBenchmarkLinePreamble,
writeBenchmarkLineBody, writeResultFooter, finalizeFooter, writeErrors; the
JSON writer's jsonKey, jsonStr, jsonInt, jsonDouble, jsonBool) and compared
with what fabscope wrote.  Then two parsers of nccl-tests' output read it:
one by fixed character columns, one by the JSON's keys, and both must find
the rows the table holds.

usage: nccl_compat.py TABLE JSON [OTHER_LINES_PREFIX]
Exit 0 when every check holds; else the first difference on stderr."""
import json
import re
import sys


def float_str(v, width):
    """nccl-tests' getFloatStr"""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (width, v)
        if len(s) <= width:
            return s
    return ((width >= 7 and "%*.1e" or "%*.0e") % (width, v))[:width]


def fail(msg):
    sys.stderr.write("nccl_compat: " + msg + "\n")
    sys.exit(1)


def same(got, want, what):
    if got != want:
        fail("%s:\n  got  %r\n  want %r" % (what, got, want))


def check_table(lines, doc):
    cfg = doc["config"]
    it = iter(enumerate(lines))
    i, line = next(it)
    if line.startswith("# Writing JSON output to "):  # nccl-tests' first line with -J
        i, line = next(it)
    m = re.fullmatch(r"# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)", line)
    if not m:
        fail("line 1 is not nccl-tests' version line: %r" % line)
    same(m.group(1), "2.19.6", "the version")
    i, line = next(it)
    m = re.fullmatch(r"# Collective test starting: (\S+)", line)
    if not m:
        fail("line 2: %r" % line)
    program = m.group(1)
    i, line = next(it)
    step = ("%d(factor)" % cfg["step_factor"]) if "step_factor" in cfg else ("%d(bytes)" % cfg["step_bytes"])
    want = ("# nThread %d nGpus %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d agg iters: %d "
            "validation: %d graph: %d unalign: %d") % (cfg["nthreads"], cfg["ngpus"], cfg["minimum_bytes"],
                                                      cfg["maximum_bytes"], step, cfg["warmup_iters"],
                                                      cfg["iterations"], cfg["aggregated_iterations"],
                                                      cfg["validation"], cfg["graph"], 0)
    same(line, want, "the nThread line")
    # nccl-tests' optional "# ..." lines, then "#" and the devices
    for i, line in it:
        if line == "#":
            break
        if not line.startswith("# "):
            fail("line %d: %r between the nThread line and '#'" % (i + 1, line))
    i, line = next(it)
    same(line, "# Using devices", "the devices' title")
    devs = cfg["devices"]
    k = 0
    for i, line in it:
        if not line.startswith("#  Rank"):
            break
        d = devs[k]
        want = "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s" % (
            d["rank"], d["group"], d["pid"], d["hostname"], d["device"], d["device_hex"], d["device_info"])
        same(line, want, "device line %d" % k)
        k += 1
    if k < len(devs):
        if not re.fullmatch(r"#  \.\.\. and %d more ranks? \(.*\)" % (len(devs) - k), line):
            fail("%d device lines of %d and no line that counts the rest: %r" % (k, len(devs), line))
        i, line = next(it)
    same(line, "#", "the line before the column names")
    heads = [
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % (
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
            "#wrong", 0, ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % (
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, ""),
    ]
    for h in heads:
        i, line = next(it)
        same(line, h, "column names, line %d" % (i + 1))
    rows = doc["results"]
    for r in rows:
        i, line = next(it)
        want = "%12d  %12d  %8s  %6s  %6s" % (r["size"], r["count"], r["type"], r["redop"], r["root"])
        for place in ("out_of_place", "in_place"):
            p = place in r and r[place]
            body = "  %7s  %6s  %6s" % (float_str(p["time"], 7), float_str(p["alg_bw"], 6), float_str(p["bus_bw"], 6))
            body += "    N/A" if p["nwrong"] is None else "  %6g" % p["nwrong"]
            want += body
        # the JSON keeps six decimals: the table's two must agree with them
        same(line, want, "row %d" % (i + 1))
    i, line = next(it)
    ob = doc["out_of_bounds"]
    same(line, "# %-20s : %d %s" % ("Out of bounds values", ob["count"], "FAILED" if ob["count"] else "OK"),
         "out of bounds")
    i, line = next(it)
    ab = doc["average_bus_bandwidth"]
    m = re.fullmatch(r"# Avg bus bandwidth    : (\S+) (.*)", line)
    if not m:
        fail("the average bus bandwidth line: %r" % line)
    if abs(float(m.group(1)) - ab["bandwidth"]) > 1e-5 * max(1, ab["bandwidth"]):
        fail("the average %s in the table, %s in the JSON" % (m.group(1), ab["bandwidth"]))
    same(m.group(2), {"unchecked": "", "true": "OK", "false": "FAILED"}[ab["okay"]], "the average's verdict")
    rest = [l for _, l in it]
    same(rest, ["#", "# Collective test concluded: %s" % program, "#", ""], "the closing lines")
    return len(rows)


def nccl_json_text(doc):
    """the bytes nccl-tests' writer gives for these values"""
    def val(v):
        if v is None:
            return "null"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("/", "\\/").replace(
                "\n", "\\n").replace("\t", "\\t") + '"'
        if isinstance(v, bool):
            fail("a JSON true/false: nccl-tests writes booleans as strings")
        if isinstance(v, int):
            return "%d" % v
        if isinstance(v, float):
            return "%f" % v
        if isinstance(v, list):
            return "[" + ",".join(val(x) for x in v) + "]"
        return "{" + ",".join(val(k) + ":" + val(x) for k, x in v.items()) + "}"
    return val(doc)


def check_json(raw, doc):
    same(list(doc), ["version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
                     "average_bus_bandwidth", "errors", "end_time"], "the JSON's keys")
    same(list(doc["config"]), ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes",
                               "step_factor" if "step_factor" in doc["config"] else "step_bytes", "warmup_iters",
                               "iterations", "aggregated_iterations", "validation", "graph", "blocking_collectives",
                               "per_iter_timing", "per_iter_skip", "parallel_init", "devices"], "the config's keys")
    for r in doc["results"]:
        same(list(r), ["size", "count", "type", "redop", "root", "out_of_place", "in_place", "actual_iterations",
                       "experiment_name"], "a result's keys")
        for p in ("out_of_place", "in_place"):
            same(list(r[p]), ["time", "alg_bw", "bus_bw", "nwrong"], "a result's " + p)
    for t in ("start_time", "end_time"):
        if not re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", doc[t]):
            fail("%s %r is not %%Y-%%m-%%d %%H:%%M:%%S" % (t, doc[t]))
    same(raw, nccl_json_text(doc), "the JSON's bytes")


def fixed_columns(lines):
    """the rows as a parser of fixed character columns reads them"""
    out = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        out.append({
            "size": int(line[0:12]), "count": int(line[14:26]), "type": line[28:36].strip(),
            "time": float(line[52:61]), "algbw": float(line[61:69]), "busbw": float(line[69:77]),
            "wrong": line[77:84].strip(), "ip_time": float(line[84:93]), "ip_busbw": float(line[101:109]),
        })
    return out


def main():
    table = open(sys.argv[1]).read()
    if not table.endswith("\n"):
        fail("the table does not end in a newline")
    lines = table[:-1].split("\n")
    raw = open(sys.argv[2]).read()
    doc = json.loads(raw)
    check_json(raw, doc)
    n = check_table(lines, doc)
    cols = fixed_columns(lines)
    same(len(cols), n, "rows read by fixed columns")
    for c, r in zip(cols, doc["results"]):
        same(c["size"], r["size"], "size by columns")
        same(c["count"], r["count"], "count by columns")
        same(c["type"], r["type"], "type by columns")
        for got, want in ((c["time"], r["out_of_place"]["time"]), (c["busbw"], r["out_of_place"]["bus_bw"]),
                          (c["algbw"], r["out_of_place"]["alg_bw"]), (c["ip_time"], r["in_place"]["time"]),
                          (c["ip_busbw"], r["in_place"]["bus_bw"])):
            if abs(got - want) > 0.0051 + 1e-3 * abs(want):
                fail("by columns %r, in the JSON %r (size %d)" % (got, want, r["size"]))
        same(c["wrong"], "N/A" if r["out_of_place"]["nwrong"] is None else "%g" % r["out_of_place"]["nwrong"],
             "#wrong by columns")
    print("nccl_compat: %d rows; the table and the JSON as nccl-tests 2.19.6 writes them" % n)


if __name__ == "__main__":
    main()
