#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-fwd-growth.py FWD CASE [DPDK_TELEMETRY_PY] - the forwarder over a
growable arena (--arena-max, doc/growth.md).

  verify   a veth pair's wire loop (--bidir --tx-first N --verify, 4 KiB
           buffers) whose frames need four times the arena it starts
           with: the allocator's pp-grow thread grows it as the first
           bursts take its pages (fwd waits for it when a pool runs dry,
           and before forwarding until the --grow-wmark margin is back)
           and while the frames flow (the pools' rings fill). fwd must
           exit 0, --verify must account for every frame
           (back intact, none damaged, dropped, duplicated or missing),
           its JSON must say the zone grew (grows >= 1, committed peak
           above the start), and /pagepool/allocator,fwd, queried twice
           while it runs (through DPDK's dpdk-telemetry.py when given,
           else this script's own client), must carry the growth fields:
           growable, the committed bytes (above the start), grows.
  verify9000  the same with 9000-byte frames, three pages each, checked
           byte by byte across their segments: eight times the arena.
  refused  the command lines fwd refuses before building anything (exit
           2, a message that says why): --arena-max with an af_xdp or
           virtio_user port, --grow-step or --shrink-delay without
           --arena-max, --arena-max below --arena-mb.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

fwd, case = sys.argv[1], sys.argv[2]
script = sys.argv[3] if len(sys.argv) > 3 else ""
if not script or not os.path.exists(script):
    script = ""
PREFIX = "pp-fwd-growth"
QUERY = "/pagepool/allocator,fwd"
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)
    print(("ok:   " if cond else "FAIL: ") + what)


def finish():
    if errors:
        sys.exit("FAILED: " + "; ".join(errors))
    print("all checks passed")
    sys.exit(0)


def query(env, path):
    if script:
        p = subprocess.run([sys.executable, script, "-f", PREFIX],
                           input=QUERY + "\n", env=env,
                           capture_output=True, text=True, timeout=20)
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or len(lines) != 1:
            sys.exit(f"dpdk-telemetry.py: exit {p.returncode}, output:\n"
                     f"{p.stdout}{p.stderr}")
        return json.loads(lines[0])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    n = json.loads(s.recv(1024).decode())["max_output_len"]
    s.send(QUERY.encode())
    r = json.loads(s.recv(n).decode())
    s.close()
    return r


def zone(reply):
    """The allocator's (one) zone in a reply."""
    a = reply.get("/pagepool/allocator") or {}
    zones = a.get("zones") or []
    return zones[0] if zones else {}


def refused():
    runs = [
        (["--port", "af_xdp:lo", "--arena-max", "64"],
         "--port af_xdp:lo cannot use a growable arena: the kernel "
         "registers an AF_XDP UMEM once"),
        (["--port", "virtio_user:path=/nonexistent", "--arena-max", "64"],
         "--port virtio_user:path=/nonexistent cannot use a growable "
         "arena: the vhost-user back-end maps the memory table once"),
        (["--port", "null0", "--port", "null1", "--grow-step", "4"],
         "--grow-step tunes a growable arena: add --arena-max MB"),
        (["--port", "null0", "--port", "null1", "--shrink-delay", "10"],
         "--shrink-delay tunes a growable arena: add --arena-max MB"),
        (["--port", "null0", "--port", "null1", "--grow-wmark", "16"],
         "--grow-wmark tunes a growable arena: add --arena-max MB"),
        (["--port", "null0", "--port", "null1", "--arena-mb", "64",
          "--arena-max", "32"],
         "--arena-max 32 is below --arena-mb 64"),
    ]
    for args, want in runs:
        p = subprocess.run([fwd] + args + ["--duration", "1"],
                           capture_output=True, text=True, timeout=60)
        print("$ fwd " + " ".join(args))
        print(p.stderr, end="")
        check(p.returncode == 2 and want in p.stderr,
              f"fwd {' '.join(args)}: exit 2 ({p.returncode}) saying "
              f"'{want}'")
    finish()


def run(extra, tx_first, ring, duration):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XDG_RUNTIME_DIR=tmp)
        env.pop("RUNTIME_DIRECTORY", None)
        if os.getuid() == 0:   # DPDK's rule puts root's under /var/run
            env["RUNTIME_DIRECTORY"] = tmp
        path = os.path.join(tmp, "dpdk", PREFIX, "dpdk_telemetry.v2")
        js = os.path.join(tmp, "fwd.json")
        # The margin (--grow-wmark) above what the forwarding's start
        # takes at once (the pools' rings filling, ~9 MiB): a smaller
        # one loses frames while the thread commits a step.
        cmd = [fwd, "--port", f"veth0,peer=veth1,ring={ring}", "--bidir",
               "--tx-first", str(tx_first), "--verify",
               "--duration", str(duration), "--arena-mb", "8",
               "--arena-max", "256", "--grow-step", "4",
               "--grow-wmark", "16",
               "--telemetry", PREFIX, "--json", js] + extra
        print("$ " + " ".join(cmd))
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        replies = []
        try:
            for _ in range(600):
                if os.path.exists(path) or p.poll() is not None:
                    break
                time.sleep(0.05)
            if p.poll() is None and os.path.exists(path):
                time.sleep(0.5)
                for _ in range(2):
                    if p.poll() is not None:
                        break
                    replies.append(query(env, path))
                    time.sleep(1)
        finally:
            out, err = p.communicate(timeout=120)
            print(out, end="")
            print(err, end="", file=sys.stderr)
        summary = None
        if os.path.exists(js):
            with open(js) as f:
                summary = json.load(f)
    return p.returncode, out, replies, summary


def wire_loop(extra, tx_first, ring, duration):
    rc, out, replies, s = run(extra, tx_first, ring, duration)
    check(rc == 0, f"fwd exits 0 ({rc})")
    if s is None:
        check(False, "fwd wrote its JSON summary")
        finish()
    loop, g = s["loop"], s["growth"]
    check(loop["injected"] == 2 * tx_first,
          f"--tx-first injected {2 * tx_first} frames, waiting for the "
          f"growth thread when a pool ran dry ({loop['injected']})")
    check(loop["ok"] and loop["intact"] == loop["injected"] and
          loop["damaged"] == 0 and loop["duplicated"] == 0 and
          loop["dropped"] == 0 and loop["missing"] == 0,
          f"--verify: every frame back intact, none lost or damaged: {loop}")
    check(s["leaked_pages"] == 0 and s["allocator_check"] == 0,
          "no page leaked, the walker passed at the end")
    check(g is not None and g["grows"] >= 1, f"the arena grew: {g}")
    check(g["committed_mib_peak"] > g["committed_mib_start"] == 8,
          f"committed: {g['committed_mib_start']} MiB at the start, "
          f"{g['committed_mib_peak']} at the peak")
    check(g["grow_failures"] == 0, "no growth failed")
    check("growth: committed 8 MiB at the start" in out,
          "the summary's growth line")
    check(len(replies) == 2, f"/pagepool/allocator,fwd answered twice "
          f"while fwd ran ({len(replies)})")
    for r in replies:
        z = zone(r).get("growth") or {}
        print("telemetry:", json.dumps(z))
        check(z.get("growable") is True, "telemetry: growable")
        cb = z.get("committed_bytes")
        check(isinstance(cb, int) and cb > 8 << 20,
              f"telemetry: committed_bytes above the start ({cb})")
        check(isinstance(z.get("grows"), int) and z["grows"] >= 1,
              f"telemetry: grows ({z.get('grows')})")
        for k in ("shrinks", "grow_failures", "step_bytes", "max_bytes"):
            check(isinstance(z.get(k), int), f"telemetry: {k}")
        check(zone(r).get("managed_pages") == cb >> 12,
              f"telemetry: the zone manages the committed pages "
              f"({zone(r).get('managed_pages')})")
    return s


if case == "refused":
    refused()
elif case == "verify":
    wire_loop([], 4096, 8192, 3)
    finish()
elif case == "verify9000":
    wire_loop(["--tx-len", "9000"], 2048, 16384, 3)
    finish()
else:
    sys.exit(f"unknown case {case}")
