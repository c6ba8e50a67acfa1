#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-fwd.py FWD IN OUT MODE REFILL [FRAG] - run the forwarder for two
seconds and check its summary: frames were delivered, the program's
verdicts add up, and no page leaked (the allocator balances after the
ports close). With FRAG, fwd runs with --frag FRAG: every frame the RX
queues took sat in a fragment (the pools' frag_alloc), and passed frames
went back to the sink's pool instead of leaving it.

MODE bidir runs --mode redirect --bidir: each port forwards to the other
and both directions count. In one direction the worker receives on IN
only: OUT's RX counters stay at 0 and the frames of the busy polls are
the frames received on IN (a worker that also polled OUT once halved the
headline and nothing noticed)."""
import json
import os
import subprocess
import sys
import tempfile

fwd, dev_in, dev_out, mode, refill = sys.argv[1:6]
frag = sys.argv[6] if len(sys.argv) > 6 else None
bidir = mode == "bidir"
if bidir:
    mode = "redirect"
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "fwd.json")
    cmd = [fwd, "--port", dev_in, "--port", dev_out, "--mode", mode,
           "--refill", refill, "--duration", "2", "--arena-mb", "64",
           "--json", out]
    if frag:
        cmd += ["--frag", frag]
    if bidir:
        cmd += ["--bidir"]
    print(" ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=50)
    print(p.stdout, end="")
    print(p.stderr, end="", file=sys.stderr)
    if p.returncode != 0:
        sys.exit(f"fwd exited with {p.returncode}")
    with open(out) as f:
        s = json.load(f)

errors = []
def check(cond, what):
    if not cond:
        errors.append(what)

check(s["mode"] == mode and s["refill"] == refill, "mode/refill echoed")
check(s["frag"] == (frag or "off"), "frag echoed")
check(s["packets"] > 0, "frames delivered")
check(s["in_packets"] >= s["packets"], "delivered <= received")
check(s["leaked_pages"] == 0, "no page leaked")
check(s["allocator_check"] == 0, "allocator invariants hold")
check("summary:" in p.stdout, "summary line printed")
check(p.stdout.count("Mpps") >= 2, "per-second lines printed")
rx_in = s["ports"]["in"]["rxq"][0]
rx_out = s["ports"]["out"]["rxq"][0]
tx_in = s["ports"]["in"]["txq"][0]
tx_out = s["ports"]["out"]["txq"][0]
sink = s["ports"]["sink"]
# Every frame the workers' busy polls took is a frame received on a port
# the run counts as input, or by the sink's own thread; none elsewhere.
check(s["bidir"] == bidir, "bidir echoed")
busy_want = s["in_packets"] + (sink["rxq"][0]["packets"] if sink else 0)
check(s["busy_frames"] == busy_want,
      f"busy-poll frames {s['busy_frames']} == frames in {busy_want}")
if bidir:
    check(rx_in["packets"] > 0 and rx_out["packets"] > 0,
          "both ports received")
    check(rx_in["xdp_redirect"] == rx_in["packets"] and
          rx_out["xdp_redirect"] == rx_out["packets"],
          "both ports redirected all they received")
    check(s["in_packets"] == rx_in["packets"] + rx_out["packets"],
          "frames in: both directions")
    check(s["total_packets"] == tx_in["packets"] + tx_out["packets"],
          "delivered: both directions")
    check(tx_out["packets"] == rx_in["packets"] and
          tx_in["packets"] == rx_out["packets"],
          "each port sent what the other received")
else:
    check(rx_out["packets"] == 0,
          f"one direction: out received nothing (got {rx_out['packets']})")
    check(s["in_packets"] == rx_in["packets"], "frames in: the input port")
if bidir:
    pass
elif sink:
    check(rx_in["xdp_redirect"] == rx_in["packets"], "in: all redirected")
    rx = sink["rxq"][0]
    verdict = "xdp_pass" if mode == "pass" else "xdp_drop"
    check(rx[verdict] == rx["packets"], f"sink: all {verdict}")
    if mode == "pass" and not frag:
        # Pages left the sink's pool with every frame, so it refilled.
        check(rx["pool"]["release"] >= rx["xdp_pass"], "sink pool released")
    if frag:
        # Each frame copied into a fragment of the sink's pool; passed
        # fragments stay in the pool, so none was released.
        check(rx["pool"]["frag_alloc"] == rx["packets"], "sink: fragments")
        check(0 < rx["pool"]["frag_pages"] < rx["pool"]["frag_alloc"],
              "sink: several fragments per page")
        check(rx["pool"]["release"] == 0, "sink: no fragment left its pool")
elif mode == "pass":
    check(rx_in["xdp_pass"] == rx_in["packets"], "in: all passed")
else:
    check(s["ports"]["out"]["txq"][0]["packets"] == s["packets"],
          "out: every redirected frame sent")
if frag:
    check(rx_in["pool"]["frag_alloc"] == rx_in["packets"], "in: fragments")
check(s["alloc_ns_per_page"] > 0, "allocation cost measured")
if errors:
    sys.exit("FAILED: " + "; ".join(errors))
print(f"ok: {s['pps'] / 1e6:.2f} Mpps delivered, {s['drops']} drops")
