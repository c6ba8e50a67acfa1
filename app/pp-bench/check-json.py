#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-json.py - the bench-smoke test: run pp-bench (the arguments are its
command line, ending in '--json -'), and check that it exits 0 and prints
one JSON document with every section and a result for every case. It never
looks at a figure: timings are not pass/fail.
"""
import json
import subprocess
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_scale(doc):
    """pp-bench scale: a point per workload, implementation and thread
    count, each measured or skipped with a reason, never failed."""
    for key in ("machine", "parameters", "dpdk", "cases"):
        if key not in doc:
            fail(f"JSON has no '{key}'")
    threads = doc["parameters"]["threads"]
    impls = ["pagepool"] + (["dpdk"] if doc["dpdk"]["ok"] else [])
    seen = {(c["workload"], c["impl"], c["threads"]): c for c in doc["cases"]}
    for w in ("bulk", "pair", "pool"):
        for i in impls:
            for t in threads:
                c = seen.get((w, i, t))
                if c is None:
                    fail(f"no {w}/{i} point for {t} threads")
                if c["status"] == "failed":
                    fail(f"{w}/{i} at {t} threads failed: {c['reason']}")
                if c["status"] == "ok" and not c["ns_per_page_per_thread"] > 0:
                    fail(f"{w}/{i} at {t} threads has no figure")
                if c["status"] == "skipped" and not c["reason"]:
                    fail(f"{w}/{i} at {t} threads skipped without a reason")
    print(f"ok: scale, {len(doc['cases'])} points, threads {threads}, "
          f"dpdk: {doc['dpdk']['status']}")


def check_memory(doc):
    """pp-bench memory: a case per frame size, every column measured or
    skipped with a reason, the pagepool columns measured."""
    cols = ("pages", "fragments_4k_blocks", "fragments_32k_blocks",
            "dpdk_mbuf_fit", "dpdk_mbuf_default")
    if "machine" not in doc or len(doc.get("cases", [])) != 2:
        fail("memory: expected the machine and two frame sizes")
    for c in doc["cases"]:
        for col in cols:
            cell = c.get(col)
            if cell is None:
                fail(f"memory: {c['frame_bytes']} B has no '{col}'")
            if cell["status"] == "ok" and not cell["bytes_per_frame"] > 0:
                fail(f"memory: {c['frame_bytes']} B {col} has no figure")
            if cell["status"] != "ok" and not cell.get("reason"):
                fail(f"memory: {c['frame_bytes']} B {col} skipped "
                     "without a reason")
        for col in ("pages", "fragments_4k_blocks"):
            if c[col]["status"] != "ok":
                fail(f"memory: {c['frame_bytes']} B {col}: "
                     f"{c[col]['reason']}")
    print(f"ok: memory, frames {doc['frames']}")


def check_stats(doc):
    """pp-bench stats: every workload beside every kind of second thread
    measured, and the two ratios of each workload."""
    for key in ("machine", "parameters", "cases", "ratios"):
        if key not in doc:
            fail(f"stats: JSON has no '{key}'")
    seen = {(c["workload"], c["mode"]): c for c in doc["cases"]}
    for w in ("single", "bulk64"):
        for m in ("idle", "rate", "spin", "full"):
            c = seen.get((w, m))
            if c is None or not c["ns_per_page"]["median"] > 0:
                fail(f"stats: no figure for {w} beside {m}")
        for r, b in (("rate", "idle"), ("full", "spin")):
            if not any(x["workload"] == w and x["reader"] == r and
                       x["baseline"] == b and x["median"] > 0
                       for x in doc["ratios"]):
                fail(f"stats: no {r}/{b} ratio for {w}")
    print(f"ok: stats, {len(doc['cases'])} cases, "
          f"{len(doc['ratios'])} ratios")


def check_growth(doc):
    """pp-bench growth: each side it ran is ok, with a timeline whose
    series have one value per sample and bursts counted, or skipped with
    a reason; when none could run (no hugepages), the test is skipped."""
    for key in ("machine", "parameters", "windows", "sides"):
        if key not in doc:
            fail(f"growth: JSON has no '{key}'")
    ok = 0
    for name, s in doc["sides"].items():
        if s["status"] != "ok":
            if not s.get("reason"):
                fail(f"growth: side {name} skipped without a reason")
            print(f"growth: side {name} skipped: {s['reason']}")
            continue
        tl = s["timeline"]
        n = len(tl["t_s"])
        if n == 0 or any(len(v) != n for v in tl.values()):
            fail(f"growth: side {name} has a ragged or empty timeline")
        if not s["frames"]["bursts"] > 0:
            fail(f"growth: side {name} ran no burst")
        ok += 1
    if not ok:
        print("growth: no side could run")
        sys.exit(77)
    print(f"ok: growth, {ok} side(s), "
          f"{doc['windows']['grow_events']} grow events")


def main():
    if len(sys.argv) < 2:
        fail("usage: check-json.py PP-BENCH [ARGS...] --json -")
    proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    # The table goes to stderr with '--json -': show it in the test log.
    sys.stdout.write(proc.stderr)
    if proc.returncode == 77:
        sys.exit(77)
    if proc.returncode != 0:
        fail(f"pp-bench exited with status {proc.returncode}")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail(f"output is not valid JSON: {e}")

    if doc.get("benchmark") == "scale":
        check_scale(doc)
        return
    if doc.get("benchmark") == "memory":
        check_memory(doc)
        return
    if doc.get("benchmark") == "stats":
        check_stats(doc)
        return
    if doc.get("benchmark") == "growth":
        check_growth(doc)
        return
    for key in ("machine", "build", "parameters", "dpdk", "baselines",
                "cases"):
        if key not in doc:
            fail(f"JSON has no '{key}'")
    groups = {c["group"] for c in doc["cases"]}
    for g in ("allocator", "page_pool", "sunrpc"):
        if g not in groups:
            fail(f"no '{g}' case in the JSON")
    if not doc["baselines"]:
        fail("no baselines in the JSON")
    for c in doc["baselines"] + doc["cases"]:
        if c["failed"]:
            fail(f"case '{c['name']}' (bulk {c['bulk']}) failed: {c['error']}")
        if c.get("skipped"):
            if not c.get("reason"):
                fail(f"case '{c['name']}' skipped without a reason")
            continue
        if "ns" not in c or "median" not in c["ns"]:
            fail(f"case '{c['name']}' has no median")
    print(f"ok: {len(doc['baselines'])} baselines, {len(doc['cases'])} cases, "
          f"dpdk: {doc['dpdk']['status']}")


if __name__ == "__main__":
    main()
