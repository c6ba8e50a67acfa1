#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fwd-bench-report.py OUTDIR DURATION REPEAT LOAD_START - the main job's
report, from the runs scripts/fwd-bench.sh left in OUTDIR (each fwd run's
JSON, each testpmd run's log, pp-bench's JSON).

Prints the table (and writes it to out/fwd-bench.txt), writes
out/fwd-bench.json (the header every tool's JSON has, then every figure
with the runs it is the median of) and, with gnuplot, out/fwd-bench.png.
Exits 1 when a run leaked a page."""
import datetime
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

outdir, dur, rep = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
load_start = float(sys.argv[4])

# Spread above this, or a machine this loaded, makes a ratio unreliable.
SPREAD_WARN = 15.0


def load_json(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def runs(prefix):
    """The JSON of every run named PREFIX-N, in round order."""
    out = []
    for i in range(1, rep + 1):
        r = load_json(f"{outdir}/{prefix}-{i}.json")
        if r is not None:
            out.append(r)
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    """(max - min) / median of the runs, in percent."""
    m = med(xs)
    return (max(xs) - min(xs)) / m * 100 if xs and m else 0.0


def testpmd_run(path):
    """One testpmd run: the median of its full one-second periods (both
    ports' Rx-pps summed; the warm-up's zero periods and the first partial
    one skipped) and its busy cycles per frame (--record-core-cycles)."""
    try:
        text = open(path).read()
    except OSError:
        return None
    vals = [int(v) for v in re.findall(r"Rx-pps:\s+(\d+)", text)]
    sums = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)]
    sums = [x for x in sums if x > 0][1:]
    cyc = re.search(r"CPU cycles/packet=([0-9.]+)", text)
    if not sums:
        return None
    return {"pps": med(sums), "periods_pps": sums,
            "cycles_per_frame": float(cyc.group(1)) if cyc else None}


lines = []


def out(s=""):
    print(s)
    lines.append(s)


# ---- gather ----
leaks = 0
res = {}
passes = {}
for r in ("single", "list", "array"):
    rs = runs(f"pass-{r}")
    leaks += sum(x["leaked_pages"] for x in rs)
    passes[r] = {
        "pps": med([x["pps"] for x in rs]),
        "pps_runs": [x["pps"] for x in rs],
        "drops_per_s": med([x["drops"] / x["duration_s"] for x in rs]),
        "alloc_ns_per_page_fwd": med([x["alloc_ns_per_page"] for x in rs]),
        "sink_cpu_ns_per_frame": med([x["sink_cpu_ns_per_frame"]
                                      for x in rs]),
    }
# Fragment rows: each fragment run sits beside its page run (array
# refill) in the round, so the ratio is taken run by run.
frags = {}
for fr in ("2048", "auto"):
    rs = runs(f"fragpass-{fr}")
    leaks += sum(x["leaked_pages"] for x in rs)
    ratios = []
    for i in range(1, rep + 1):
        a = load_json(f"{outdir}/pass-array-{i}.json")
        b = load_json(f"{outdir}/fragpass-{fr}-{i}.json")
        if a and b and a["pps"]:
            ratios.append(b["pps"] / a["pps"])
    frags[fr] = {
        "pps": med([x["pps"] for x in rs]),
        "pps_runs": [x["pps"] for x in rs],
        "ratio_vs_page_runs": ratios,
        "ratio_vs_page": med(ratios),
        "sink_cpu_ns_per_frame": med([x["sink_cpu_ns_per_frame"]
                                      for x in rs]),
    }
one_way = runs("redirect-null")
leaks += sum(x["leaked_pages"] for x in one_way)
bidir = runs("bidir-null")
leaks += sum(x["leaked_pages"] for x in bidir)
tp_runs = [t for t in (testpmd_run(f"{outdir}/testpmd-{i}.log")
                       for i in range(1, rep + 1)) if t]
ax = runs("afxdp")
leaks += sum(x["leaked_pages"] for x in ax)
vh = runs("vhost")
leaks += sum(x["leaked_pages"] for x in vh)

# pp-bench: release + refill per page, by refill mode.
pb = load_json(f"{outdir}/pp-bench.json") or {"cases": []}
for c in pb.get("cases", []):
    m = re.match(r"release, refill (\w+)", c.get("name", ""))
    if c.get("group") == "page_pool" and m and m.group(1) in passes:
        passes[m.group(1)]["alloc_ns_per_page_ppbench"] = c["ns"]["median"]

# ---- the header: what ran, where, when, how loaded ----
ident = (bidir or one_way or [{}])[0]
load_end = os.getloadavg()[0]
res.update({
    "tool": "fwd-bench",
    "version": ident.get("version"),
    "commit": ident.get("commit"),
    "date": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
    "machine": ident.get("machine", {}),
    "load": {"start": load_start, "end": load_end},
    "duration_s": dur, "repeat": rep, "notes": [],
})
mach = res["machine"]
where = (f"{mach.get('cpu_model', '?')}, {mach.get('cores', '?')} CPUs, "
         f"kernel {mach.get('kernel', '?')}")
out(f"fwd-bench {res['version']} at {res['commit']}, {res['date']}")
out(f"machine: {where}; load average {load_start:.2f} at the start, "
    f"{load_end:.2f} at the end")
worst = 0.0

# ---- the seed's workload ----
base = passes["single"]["pps"]
kernel = {"single": (3771046, ""), "list": (3940242, "+4.49%"),
          "array": (4249224, "+12.68%")}
out()
out(f"XDP-redirect into veth, PASS to the stack: null0 -> veth0 -> veth1, "
    f"one core per side, median of {rep} x {dur:g} s")
out(f"{'refill':8} {'Mpps':>8} {'spread':>7} {'vs single':>10} {'drops/s':>10} "
    f"{'alloc ns/page':>14} {'pp-bench':>9}   {'kernel 5.13 pps':>22}")
for r in ("single", "list", "array"):
    p = passes[r]
    delta = (p["pps"] / base - 1) * 100 if base else 0
    p["delta_pct"] = delta
    p["spread_pct"] = spread(p["pps_runs"])
    worst = max(worst, p["spread_pct"])
    ppb = p.get("alloc_ns_per_page_ppbench")
    out(f"{r:8} {p['pps'] / 1e6:8.2f} {p['spread_pct']:6.1f}% {delta:+9.2f}% "
        f"{p['drops_per_s'] / 1e6:9.2f}M {p['alloc_ns_per_page_fwd']:14.2f} "
        f"{(f'{ppb:.2f}' if ppb is not None else '-'):>9}   "
        f"{kernel[r][0]:>12,} {kernel[r][1]:>9}")
out("  spread: (max - min) / median over the runs")
out("  alloc ns/page: the pool's allocation path per page, pages leaving "
    "as on PASS (fwd's probe);")
out("  pp-bench: 'release, refill <mode>' per page (release + refill), "
    "when pp-bench is built")
out()
out("veth1 copies into fragments (frag= on the pair), bulk array refill:")
out(f"{'buffer':10} {'Mpps':>8} {'spread':>7} {'vs page':>8} "
    f"{'rx ns/frame':>12} {'cpu vs page':>12}   per-run ratio")
pa = passes["array"]
pcpu = pa["sink_cpu_ns_per_frame"]
out(f"{'page':10} {pa['pps'] / 1e6:8.2f} {pa['spread_pct']:6.1f}% {1:8.3f} "
    f"{pcpu:12.2f} {1:12.3f}")
for fr in ("2048", "auto"):
    p = frags[fr]
    if not p["pps"]:
        continue
    p["spread_pct"] = spread(p["pps_runs"])
    worst = max(worst, p["spread_pct"])
    rr = " ".join(f"{x:.2f}" for x in p["ratio_vs_page_runs"])
    fcpu = p["sink_cpu_ns_per_frame"]
    p["cpu_ratio_vs_page"] = pcpu / fcpu if fcpu else None
    out(f"{'frag=' + fr:10} {p['pps'] / 1e6:8.2f} {p['spread_pct']:6.1f}% "
        f"{p['ratio_vs_page'] or 0:8.3f} {fcpu:12.2f} "
        f"{p['cpu_ratio_vs_page'] or 0:12.3f}   {rr}")
out("  vs page: median of the per-run ratios (each fragment run beside its")
out("  page run in the round); rx ns/frame: veth1's thread CPU time per frame")
out("  delivered (median), steadier than Mpps on a shared machine; cpu vs")
out("  page: page's rx ns/frame over the row's (above 1: cheaper)")
res["pass"] = passes
res["frag_pass"] = frags

# ---- other rows ----
out()
ow = [x["pps"] for x in one_way]
res["redirect_null_one_way"] = {"pps": med(ow), "pps_runs": ow,
                                "spread_pct": spread(ow)}
out(f"null0 -> null1 redirect, one direction, one core: {med(ow) / 1e6:8.2f} Mpps"
    f"   (spread {spread(ow):.1f}%; no testpmd mode does this)")
if ax:
    axr = [x["in_pps"] for x in ax]
    res["afxdp_rx_redirect"] = {"pps": med(axr), "pps_runs": axr}
    out(f"AF_XDP RX (veth, XDP sender in a netns on the other core) -> null "
        f"redirect: {med(axr) / 1e6:.2f} Mpps")
if vh:
    vr = [x["pps"] for x in vh]
    res["vhost_loop"] = {"pps": med(vr), "pps_runs": vr,
                         "cycles_per_frame": med([x["cycles_per_frame"]
                                                  for x in vh])}
    out(f"virtio_user loop (testpmd net_vhost flowgen peer, 64 B, other core): "
        f"{med(vr) / 1e6:.2f} Mpps, {res['vhost_loop']['cycles_per_frame']:.0f}"
        f" cycles/frame (scripts/vhost-bench.sh compares with DPDK's)")

# ---- the headline: like for like ----
bd = [x["pps"] for x in bidir]
bd_cyc = [x["cycles_per_frame"] for x in bidir]
tp = [t["pps"] for t in tp_runs]
tp_cyc = [t["cycles_per_frame"] for t in tp_runs
          if t["cycles_per_frame"] is not None]
head = {
    "what": "io forwarding, two null ports, both directions, one core: "
            "frames forwarded per second (both directions summed)",
    "pagepool": {"command": "fwd --port null0 --port null1 --bidir",
                 "pps": med(bd), "pps_runs": bd, "spread_pct": spread(bd),
                 "cycles_per_frame": med(bd_cyc),
                 "cycles_per_frame_runs": bd_cyc},
    "dpdk": {"command": "dpdk-testpmd --vdev net_null0 --vdev net_null1 "
                        "-- --forward-mode=io --record-core-cycles",
             "pps": med(tp), "pps_runs": tp, "spread_pct": spread(tp),
             "cycles_per_frame": med(tp_cyc),
             "cycles_per_frame_runs": tp_cyc, "runs": tp_runs},
}
worst = max(worst, spread(bd), spread(tp))
out()
out(f"Headline, like for like: io forwarding between two null ports, both "
    f"directions, one core;")
out(f"frames forwarded per second (the two directions summed), median of "
    f"{len(bd)} alternated runs of {dur:g} s")
out(f"{'side':34} {'Mpps':>8} {'spread':>7} {'cycles/frame':>13}   runs (Mpps)")
out(f"{'pagepool fwd --bidir':34} {(med(bd) or 0) / 1e6:8.2f} "
    f"{spread(bd):6.1f}% {med(bd_cyc) or 0:13.1f}   "
    + " ".join(f"{x / 1e6:.1f}" for x in bd))
if tp:
    out(f"{'DPDK testpmd io, 2 x net_null':34} {med(tp) / 1e6:8.2f} "
        f"{spread(tp):6.1f}% {med(tp_cyc) or 0:13.1f}   "
        + " ".join(f"{x / 1e6:.1f}" for x in tp))
    rounds = [a / b for a, b in zip(bd, tp) if b]
    head["ratio"] = med(bd) / med(tp)
    head["ratio_runs"] = rounds
    head["cycles_ratio"] = (med(tp_cyc) / med(bd_cyc)
                            if tp_cyc and med(bd_cyc) else None)
    out(f"pagepool / DPDK: {head['ratio']:.2f}x by rate (round by round "
        f"{min(rounds):.2f}x-{max(rounds):.2f}x)"
        + (f", {head['cycles_ratio']:.2f}x by busy cycles per frame"
           if head["cycles_ratio"] else ""))
    out("  cycles/frame: TSC cycles of the polls that brought frames, over "
        "those frames (fwd's")
    out("  cycles line; testpmd --record-core-cycles): the same count on both "
        "sides")
else:
    out("DPDK testpmd io-forward: not measured (dpdk-testpmd not installed)")
res["headline"] = head

out(f"pages leaked over all runs: {leaks}")
res["leaked_pages"] = leaks
cpus = os.cpu_count() or 1
# The load before the first run is what others put on the machine; the
# load at the end counts the benchmark's own busy threads too.
if worst > SPREAD_WARN or load_start > 0.5 * cpus:
    msg = (f"warning: the runs spread up to {worst:.0f}% and the load average "
           f"was {load_start:.1f} -> {load_end:.1f} on {cpus} CPUs: the "
           f"machine is busy, so differences between rows smaller than the "
           f"spread mean nothing; rerun on a quiet machine, or with more "
           f"runs (PP_FWD_REPEAT)")
    res["notes"].append(msg)
    out(msg)

with open("out/fwd-bench.json", "w") as f:
    json.dump(res, f, indent=1)
with open("out/fwd-bench.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print("results: out/fwd-bench.json, out/fwd-bench.txt")


# ---- the picture: two panels, every run shown ----
def points(path, groups):
    """One line per run: x (the group's slot), Mpps; and the medians."""
    with open(path, "w") as f:
        for x, (_, rs) in enumerate(groups):
            for v in rs:
                f.write(f"{x} {v / 1e6:.3f}\n")
    with open(path + ".med", "w") as f:
        for x, (label, rs) in enumerate(groups):
            if rs:
                f.write(f'{x} {med(rs) / 1e6:.3f} "{label}" '
                        f'{max(rs) / 1e6:.3f}\n')


left = [(f"PASS\\n{r}", passes[r]["pps_runs"])
        for r in ("single", "list", "array")]
left += [(f"PASS\\nfrag={fr}", frags[fr]["pps_runs"]) for fr in ("2048", "auto")]
right = [("pagepool\\nfwd --bidir", bd)]
if tp:
    right.append(("DPDK testpmd\\nio", tp))
points(f"{outdir}/left.dat", left)
points(f"{outdir}/right.dat", right)
title_l = ("veth PASS by refill mode (the seed's workload):\\n"
           "null0 -> veth0 -> veth1, one core each side")
title_r = ("Like for like: io forwarding, 2 null ports,\\n"
           "both directions, one core"
           + (f": pagepool / DPDK = {head['ratio']:.2f}x" if tp else ""))
foot = (f"pagepool {res['version']} at {res['commit']}, {res['date']}, "
        f"{rep} rounds of {dur:g} s; dots: runs, bars: medians\\n"
        f"{where}; load average {load_start:.2f} -> {load_end:.2f}")
if res["notes"]:
    foot += ("\\nWARNING: a busy machine or a wide spread: the ratios are "
             "unreliable (out/fwd-bench.txt)")


def esc(s):
    """For a double-quoted gnuplot string, where \\n is a line break."""
    return s.replace('"', '\\"')


def panel(data, n, title, colour):
    return f"""set title "{esc(title)}"
set xrange [-0.6:{n - 0.4}]
plot '{data}.med' using 1:2:xtic(3) with boxes lc rgb '{colour}', \\
     '' using 1:($4*1.03):(sprintf('%.1f', $2)) with labels offset 0,0.6, \\
     '{data}' using 1:2 with points pt 7 ps 0.8 lc rgb '#202020'
"""


gp = f"""set terminal pngcairo size 1280,680 font ',11' noenhanced
set output 'out/fwd-bench.png'
set multiplot
set style fill solid 0.35 border -1
set boxwidth 0.6
set grid ytics
set ylabel 'Mpps'
set yrange [0:*]
set offsets 0,0,graph 0.08,0
unset key
set size 0.56,0.86
set origin 0,0.14
{panel(f"{outdir}/left.dat", len(left), title_l, '#3a6ea5')}
set size 0.44,0.86
set origin 0.56,0.14
{panel(f"{outdir}/right.dat", len(right), title_r, '#4a9a4a')}
set size 1,0.14
set origin 0,0
unset title
unset ylabel
unset border
unset tics
unset grid
set offsets 0,0,0,0
set xrange [0:1]
set yrange [0:1]
set label 1 "{esc(foot)}" at 0.5,0.5 center font ',10'
plot -1
unset multiplot
"""
if shutil.which("gnuplot"):
    with open(f"{outdir}/plot.gp", "w") as f:
        f.write(gp)
    p = subprocess.run(["gnuplot", f"{outdir}/plot.gp"], capture_output=True,
                       text=True)
    if p.returncode == 0:
        print("plot: out/fwd-bench.png")
    else:
        print(f"warning: gnuplot failed: {p.stderr.strip()[-400:]}",
              file=sys.stderr)
else:
    print("note: gnuplot not installed (scripts/setup.sh installs it): no plot",
          file=sys.stderr)
sys.exit(1 if leaks else 0)
