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
        if "ns" not in c or "median" not in c["ns"]:
            fail(f"case '{c['name']}' has no median")
    print(f"ok: {len(doc['baselines'])} baselines, {len(doc['cases'])} cases, "
          f"dpdk: {doc['dpdk']['status']}")


if __name__ == "__main__":
    main()
