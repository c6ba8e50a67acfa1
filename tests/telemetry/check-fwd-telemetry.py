#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-fwd-telemetry.py FWD [DPDK_TELEMETRY_PY] - run the forwarder on
null ports with --telemetry under a temporary runtime directory, holding
8 RX frames it never returns (--keep 8: a stuck application), query it
twice from outside, a second apart, stop it with SIGINT (so a slow or
sanitized build is queried while it runs) and check that the port's
packet counters moved, that /pagepool/inflight names the 8 pages' holder
(app_rx of null0, queue 0) and their age growing, that the pool's
destroy said the same, the socket is gone, and fwd printed where it was. The queries go through DPDK's dpdk-telemetry.py when it
is given and exists (non-interactive: commands on stdin, one JSON reply
per line), else through this script's own SOCK_SEQPACKET client, which
speaks the same protocol."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

fwd = sys.argv[1]
script = sys.argv[2] if len(sys.argv) > 2 else ""
if not script or not os.path.exists(script):
    script = ""
PREFIX = "pp-fwd-test"
QUERIES = ["/info", "/pagepool/ports", "/pagepool/port,null0",
           "/pagepool/pools", "/pagepool/pool,null0-rxq0",
           "/pagepool/allocators", "/pagepool/allocator,fwd",
           "/pagepool/inflight", "/pagepool/inflight,null0-rxq0"]
KEEP = 8


def query_script(env):
    p = subprocess.run([sys.executable, script, "-f", PREFIX],
                       input="\n".join(QUERIES) + "\n", env=env,
                       capture_output=True, text=True, timeout=20)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or len(lines) != len(QUERIES):
        sys.exit(f"dpdk-telemetry.py: exit {p.returncode}, output:\n"
                 f"{p.stdout}{p.stderr}")
    return [json.loads(l) for l in lines]


def query_own(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    greet = json.loads(s.recv(1024).decode())
    n = greet["max_output_len"]
    out = []
    for q in QUERIES:
        s.send(q.encode())
        out.append(json.loads(s.recv(n).decode()))
    s.close()
    return out


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, XDG_RUNTIME_DIR=tmp)
    env.pop("RUNTIME_DIRECTORY", None)
    if os.getuid() == 0:   # DPDK's rule puts root's under /var/run
        env["RUNTIME_DIRECTORY"] = tmp
    path = os.path.join(tmp, "dpdk", PREFIX, "dpdk_telemetry.v2")
    cmd = [fwd, "--port", "null0", "--port", "null1", "--duration", "60",
           "--arena-mb", "64", "--telemetry", PREFIX, "--keep", str(KEEP)]
    print(" ".join(cmd), "| queries through",
          script or "this script's client")
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if os.path.exists(path) or p.poll() is not None:
            break
        time.sleep(0.05)
    replies = []
    try:
        if p.poll() is not None or not os.path.exists(path):
            sys.exit("fwd did not create " + path)
        time.sleep(0.3)
        for i in range(2):
            replies.append(query_script(env) if script else
                           query_own(path))
            time.sleep(1)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        print(out, end="")
        print(err, end="", file=sys.stderr)
    if p.returncode != 0:
        sys.exit(f"fwd exited with {p.returncode}")
    socket_gone = not os.path.exists(path)

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


for r in replies:
    for q, a in zip(QUERIES, r):
        key = q.split(",")[0]
        check(list(a) == [key] and a[key] is not None, f"{q}: {a}")
a, b = replies
check(a[0]["/info"]["pid"] == p.pid, "/info names fwd's pid")
check(a[1]["/pagepool/ports"] == ["null0", "null1"], "both ports listed")
check(a[3]["/pagepool/pools"] == ["null0-rxq0", "null1-rxq0"],
      "both pools listed")
check(a[5]["/pagepool/allocators"] == ["fwd"], "allocator listed")
rx1 = a[2]["/pagepool/port"]["rxq"][0]["packets"]
rx2 = b[2]["/pagepool/port"]["rxq"][0]["packets"]
check(rx2 > rx1 > 0, f"null0's RX packets moved: {rx1} then {rx2}")
# A reply names the pool as it was asked for (fwd registers
# PORT-rxqN; the pool's own name is PORT-rxN).
check(a[4]["/pagepool/pool"]["name"] == "null0-rxq0",
      f"the pool's reply names it null0-rxq0, as asked: "
      f"{a[4]['/pagepool/pool']['name']!r}")
f1 = a[4]["/pagepool/pool"]["alloc_fast"]
f2 = b[4]["/pagepool/pool"]["alloc_fast"]
check(f2 > f1, f"the pool's alloc_fast moved: {f1} then {f2}")
check("zones" in a[6]["/pagepool/allocator"], "allocator zones")
check(socket_gone, "the socket is removed at exit")
# fwd says where it serves, and how to ask.
want = "fwd: telemetry at %s (dpdk-telemetry.py -f %s)" % (path, PREFIX)
check(want in out.splitlines(), "fwd prints '%s'" % want)
# The stuck pages: where they are, and for how long.
def kept(reply):
    pool = reply["/pagepool/inflight"]
    hs = [h for h in pool["holders"] if h["holder"] == "app_rx"]
    return pool, hs


for r in (a, b):
    every = r[7]["/pagepool/inflight"]
    names = [x["name"] for x in every["pools"]]
    check(names == ["null0-rxq0", "null1-rxq0"],
          f"/pagepool/inflight lists the registered pools: {names}")
    check(every["total"]["pages"] >= KEEP and every["tsc_hz"] > 0,
          f"/pagepool/inflight totals: {every['total']}")
    pool, hs = kept(r[8])
    check(pool["name"] == "null0-rxq0" and pool["state"] == "live",
          f"one pool by name: {pool['name']} {pool['state']}")
    check(len(hs) == 1 and hs[0]["pages"] == KEEP and
          hs[0]["port"] == "null0" and hs[0]["queue"] == 0 and
          hs[0]["bytes"] == KEEP * 4096,
          f"{KEEP} pages held by app_rx of null0 queue 0: {hs}")
    check(pool["oldest"] is not None and
          pool["oldest"]["holder"] == "app_rx",
          f"the oldest page is the application's: {pool['oldest']}")
    check(pool["inflight"] >= KEEP and
          pool["inflight_mem"] == pool["inflight"] * 4096,
          f"inflight and inflight_mem: {pool['inflight']} "
          f"{pool['inflight_mem']}")
age1 = kept(a[8])[1][0]["oldest_ms"] if kept(a[8])[1] else 0
age2 = kept(b[8])[1][0]["oldest_ms"] if kept(b[8])[1] else 0
check(age1 > 200 and 700 < age2 - age1 < 5000,
      f"the kept pages age between the queries: {age1} then {age2} ms")
check(f"held by: {KEEP} pages ({KEEP * 4096} bytes) app_rx of port null0"
      in err, "the pool's destroy says who holds the pages")
if errors:
    sys.exit("FAILED: " + "; ".join(errors))
print(f"ok: null0 RX {rx1} -> {rx2} packets between two queries")
