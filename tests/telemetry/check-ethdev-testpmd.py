#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-ethdev-testpmd.py FWD [DPDK_TELEMETRY_PY] - pagepool's /ethdev
commands against real DPDK's. Starts DPDK's dpdk-testpmd on two net_null
ports and the forwarder on two null ports, both with telemetry under a
temporary runtime directory, sends /ethdev/list, /ethdev/info,0,
/ethdev/stats,0 and /ethdev/xstats,0 to both over their sockets (the
protocol spoken directly: SOCK_SEQPACKET, the greeting, one request, one
reply) and compares what a collector depends on: the key sets and the
value types. /ethdev/info and /ethdev/stats must have DPDK's keys exactly;
/ethdev/xstats must hold every one of DPDK's generic names for the queues
that exist (pagepool adds its own and its drivers' after them, as a DPDK
driver does). Then DPDK's own dpdk-telemetry.py reads the forwarder's
/ethdev/stats,0. Exit 77 (skipped) when dpdk-testpmd is not installed."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
fwd = sys.argv[1]
script = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/dpdk-telemetry.py"
testpmd = shutil.which("dpdk-testpmd")
if not testpmd:
    print("SKIP: dpdk-testpmd is not installed, the DPDK whose replies "
          "pagepool's are compared with (Debian: apt-get install dpdk-dev, "
          "in scripts/setup.sh's packages)")
    sys.exit(SKIP)

QUERIES = ["/ethdev/list", "/ethdev/info,0", "/ethdev/stats,0",
           "/ethdev/xstats,0"]

# DPDK's generic xstats (eth_dev_get_xstats_basic), before the queues'.
GENERIC = ["rx_good_packets", "tx_good_packets", "rx_good_bytes",
           "tx_good_bytes", "rx_missed_errors", "rx_errors", "tx_errors",
           "rx_mbuf_allocation_errors"]
QUEUE_XSTAT = re.compile(r"^(rx_q\d+_(packets|bytes|errors)|"
                         r"tx_q\d+_(packets|bytes))$")


def wait_socket(path, proc, what, log):
    for _ in range(400):
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit(f"{what} did not create {path} (exit {proc.poll()}):\n"
             + log())


def query(path, requests):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    greet = json.loads(s.recv(4096).decode())
    n = greet["max_output_len"]
    out = {}
    for q in requests:
        s.send(q.encode())
        out[q] = json.loads(s.recv(n).decode())
    s.close()
    return greet, out


def kind(v):
    """The JSON type a collector sees: int, str, list of int, ..."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, list):
        return "list[" + ",".join(sorted({kind(x) for x in v})) + "]"
    return type(v).__name__


failures = []


def check(ok, msg):
    print(("ok   " if ok else "FAIL ") + msg)
    if not ok:
        failures.append(msg)


def same_shape(cmd, ref, pp):
    """Same keys, same value type for each."""
    check(set(ref) == set(pp),
          f"{cmd}: keys equal (DPDK only: {sorted(set(ref) - set(pp))}, "
          f"pagepool only: {sorted(set(pp) - set(ref))})")
    for k in sorted(set(ref) & set(pp)):
        if kind(ref[k]) != kind(pp[k]):
            check(False, f"{cmd}: {k} is {kind(pp[k])} in pagepool, "
                  f"{kind(ref[k])} in DPDK")


with tempfile.TemporaryDirectory() as tmp:
    # Both programs and dpdk-telemetry.py take the runtime directory from
    # $RUNTIME_DIRECTORY first (DPDK's EAL rule), so nothing lands in
    # /var/run and a running DPDK application is not disturbed.
    env = dict(os.environ, RUNTIME_DIRECTORY=tmp, XDG_RUNTIME_DIR=tmp)
    ref_prefix = f"pp-ethdev-ref-{os.getpid()}"
    pp_prefix = f"pp-ethdev-fwd-{os.getpid()}"
    ref_sock = os.path.join(tmp, "dpdk", ref_prefix, "dpdk_telemetry.v2")
    pp_sock = os.path.join(tmp, "dpdk", pp_prefix, "dpdk_telemetry.v2")
    ref_log = os.path.join(tmp, "testpmd.log")
    # No hugepages, no PCI scan: two null vdevs and a small mbuf pool
    # (the default pool does not fit -m 256 without hugepages). -i keeps
    # it running on its stdin, which stays open; "start" forwards so the
    # counters move.
    ref_cmd = [testpmd, "--no-huge", "-m", "256", "--no-pci",
               "--vdev", "net_null0", "--vdev", "net_null1",
               "--file-prefix", ref_prefix, "--", "-i",
               "--total-num-mbufs=2048"]
    pp_cmd = [fwd, "--port", "null0", "--port", "null1", "--duration",
              "60", "--arena-mb", "64", "--telemetry", pp_prefix]
    print(" ".join(ref_cmd))
    print(" ".join(pp_cmd))
    with open(ref_log, "w") as lf:
        ref = subprocess.Popen(ref_cmd, env=env, stdin=subprocess.PIPE,
                               stdout=lf, stderr=subprocess.STDOUT,
                               text=True)
    pp = subprocess.Popen(pp_cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        wait_socket(ref_sock, ref, "dpdk-testpmd",
                    lambda: open(ref_log).read())
        wait_socket(pp_sock, pp, "fwd", lambda: "")
        ref.stdin.write("start\n")
        ref.stdin.flush()
        time.sleep(1)
        ref_greet, r = query(ref_sock, QUERIES)
        pp_greet, p = query(pp_sock, QUERIES)
        print("DPDK:    ", ref_greet)
        print("pagepool:", pp_greet)
        for q in QUERIES:
            print(f"DPDK     {q}: {json.dumps(r[q])}")
            print(f"pagepool {q}: {json.dumps(p[q])}")

        # /ethdev/list: a list of port ids, both have ports 0 and 1.
        rl, pl = r["/ethdev/list"], p["/ethdev/list"]
        check(isinstance(pl, dict) and list(pl) == ["/ethdev/list"],
              "/ethdev/list: the reply is {\"/ethdev/list\": ...}")
        check(rl["/ethdev/list"] == [0, 1] and
              pl["/ethdev/list"] == [0, 1],
              "/ethdev/list: [0, 1] from both")

        # /ethdev/info,0 and /ethdev/stats,0: DPDK's keys exactly, each
        # value of DPDK's type. No DPDK key is missing: what pagepool
        # cannot know has DPDK's neutral value (telemetry_ethdev.c).
        for q in ("/ethdev/info,0", "/ethdev/stats,0"):
            cmd = q.split(",")[0]
            same_shape(q, r[q][cmd], p[q][cmd])
        for k in ("q_ipackets", "q_opackets", "q_ibytes", "q_obytes",
                  "q_errors"):
            check(len(p["/ethdev/stats,0"]["/ethdev/stats"][k]) == 16,
                  f"/ethdev/stats,0: {k} has 16 entries, "
                  "RTE_ETHDEV_QUEUE_STAT_CNTRS")
        ps = p["/ethdev/stats,0"]["/ethdev/stats"]
        check(ps["ipackets"] > 0 and ps["ipackets"] ==
              sum(ps["q_ipackets"]),
              "/ethdev/stats,0: fwd's port 0 received, ipackets is the "
              "queues' sum")

        # /ethdev/xstats,0: every DPDK generic name for the queues that
        # exist (net_null has no driver xstats: all of DPDK's names are
        # generic), in DPDK's order, all integers.
        rx = r["/ethdev/xstats,0"]["/ethdev/xstats"]
        px = p["/ethdev/xstats,0"]["/ethdev/xstats"]
        ref_generic = [k for k in rx if k in GENERIC or
                       QUEUE_XSTAT.match(k)]
        check(ref_generic == list(rx),
              "/ethdev/xstats,0: DPDK's net_null reply is generic names "
              "only")
        missing = [k for k in ref_generic if k not in px]
        check(not missing, f"/ethdev/xstats,0: pagepool has DPDK's generic "
              f"names (missing: {missing})")
        check(list(px)[:len(ref_generic)] == ref_generic,
              "/ethdev/xstats,0: in DPDK's order, before pagepool's own")
        check(all(kind(v) == "int" for v in px.values()),
              "/ethdev/xstats,0: every value an integer")

        # DPDK's own client reads the forwarder unchanged.
        if os.path.exists(script):
            out = subprocess.run([sys.executable, script, "-f", pp_prefix],
                                 input="/ethdev/stats,0\n", env=env,
                                 capture_output=True, text=True,
                                 timeout=20)
            lines = [l for l in out.stdout.splitlines()
                     if l.startswith("{")]
            print(f"dpdk-telemetry.py -f {pp_prefix} (exit "
                  f"{out.returncode}): {out.stdout.strip()}")
            ok = out.returncode == 0 and len(lines) == 1
            if ok:
                st = json.loads(lines[0]).get("/ethdev/stats")
                ok = isinstance(st, dict) and set(st) == set(
                    r["/ethdev/stats,0"]["/ethdev/stats"])
            check(ok, "dpdk-telemetry.py reads fwd's /ethdev/stats,0 "
                  "with DPDK's keys")
        else:
            print(f"note: {script} not found, DPDK's client not run")
    finally:
        if ref.poll() is None:
            try:
                ref.stdin.write("quit\n")
                ref.stdin.flush()
                ref.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                ref.kill()
                ref.wait()
        if pp.poll() is None:
            pp.send_signal(signal.SIGINT)
            try:
                pp.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                pp.kill()
                pp.communicate()

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("PASS")
