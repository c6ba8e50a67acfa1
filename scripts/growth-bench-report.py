#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""growth-bench-report.py - the report of scripts/growth-bench.sh: reads
the JSON of each `pp-bench growth` run in OUTDIR (run-N.json), prints the
median of each figure over the runs with its range, writes them to
RESULT.json with the timeline of the median run (by the growth side's
idle/peak), and draws that timeline, hugepages held over time for each
side, as RESULT.svg. Python's standard library only: the SVG is written
by hand.

usage: growth-bench-report.py OUTDIR RESULT.json RESULT.svg
"""
import datetime
import glob
import json
import os
import statistics as st
import sys
from xml.sax.saxutils import escape

SIDES = ("grow", "fixed", "dpdk")
WORDS = {"grow": "pagepool, growth on", "fixed": "pagepool, growth off",
         "dpdk": "DPDK rte_mempool"}
COLOURS = {"grow": "#1f77b4", "fixed": "#7f7f7f", "dpdk": "#d62728"}


def load(outdir):
    paths = sorted(glob.glob(os.path.join(outdir, "run-*.json")),
                   key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))
    if not paths:
        sys.exit(f"growth-bench-report: no run-*.json in {outdir}")
    return [json.load(open(p)) for p in paths]


def window_wait(doc, side):
    """Runqueue wait (ms) of the side's traffic thread in the 100 ms
    samples that overlap a window around the growth run's grow events:
    where it is not 0, the p99.9 there includes time the CPU was
    another task's, not the allocator's."""
    g = doc["sides"].get("grow")
    s = doc["sides"].get(side)
    if not g or g["status"] != "ok" or not s or s["status"] != "ok":
        return 0.0
    w = doc["parameters"]["window_ms"] / 1000.0
    ev = [e["t_s"] for e in g["events"] if e["kind"] == "grow"]
    tl = s["timeline"]
    wait = tl.get("wait_ms")
    if not wait:
        return 0.0
    total = 0.0
    for i in range(1, len(tl["t_s"])):
        a, b = tl["t_s"][i - 1], tl["t_s"][i]
        if any(a <= t + w and t - w <= b for t in ev):
            total += wait[i] - wait[i - 1]
    return total


def figures(doc, side):
    """The figures of one side of one run, flat, or None when skipped."""
    s = doc["sides"].get(side)
    if not s or s["status"] != "ok":
        return None
    f = {
        "peak_mib": s["memory"]["peak_mib"],
        "idle_mib": s["memory"]["idle_mib"],
        "idle_over_peak": s["memory"]["idle_over_peak"],
        "peak_sys_mib": s["memory"]["peak_sys_mib"],
        "idle_sys_mib": s["memory"]["idle_sys_mib"],
        "lost": s["frames"]["lost"],
        "damaged": s["frames"]["damaged"],
        "missed": s["frames"].get("missed", 0),
        "bursts_run": s.get("bursts_run", s["frames"]["bursts"]),
        "runqueue_wait_ms": s["frames"].get("runqueue_wait_ms", 0),
        "voluntary_switches": s["frames"].get("voluntary_switches", 0),
        "late_max_ms": s["frames"]["late_max_ms"],
        "median_cycles": s["burst_cycles"]["median"],
        "p99_9_cycles": s["burst_cycles"]["p99_9"],
        "grow_windows_median": s["around_grow"]["median"],
        "grow_windows_p99_9": s["around_grow"]["p99_9"],
        "grow_windows_bursts": s["around_grow"]["bursts"],
        "grow_windows_wait_ms": window_wait(doc, side),
        "shrink_windows_median": s["around_shrink"]["median"],
        "shrink_windows_p99_9": s["around_shrink"]["p99_9"],
    }
    if "zone" in s:
        for k in ("grows", "shrinks", "grow_failures", "drains_cancelled"):
            f[k] = s["zone"][k]
        for k in ("committed_mib", "pool_cache_pages", "pool_ring_pages",
                  "thread_cache_pages", "drained_committed_mib",
                  "drained_held_mib"):
            f["end_" + k] = s["end"][k]
    if "pool" in s:
        f["pool_memory_mib"] = s["pool"]["memory_mib"]
    return f


def summarise(runs):
    out = {}
    for side in SIDES:
        per = [f for f in (figures(d, side) for d in runs) if f]
        if not per:
            continue
        out[side] = {k: {"median": st.median(f[k] for f in per),
                         "min": min(f[k] for f in per),
                         "max": max(f[k] for f in per)}
                     for k in per[0]}
        out[side]["runs"] = len(per)
    return out


def median_run(runs):
    """The run whose growth side's idle/peak is the median (the first
    run when the growth side did not run)."""
    scored = [(figures(d, "grow") or {}).get("idle_over_peak", 0)
              for d in runs]
    order = sorted(range(len(runs)), key=lambda i: scored[i])
    return order[len(order) // 2]


def table(summary, params, n):
    print(f"\npp-bench growth, median of {n} run(s) (range in brackets); "
          f"peak {params['peak_rate']:.0f} buffers/s x "
          f"{params['delay_ms']:.0f} ms = {params['peak_inflight']} in "
          f"flight, sized {params['sized_mib']} MiB")
    print("(lost, missed: the most of any run)")
    print(f"{'side':22} {'peak MiB':>9} {'idle MiB':>16} {'idle/peak':>18} "
          f"{'lost':>6} {'missed':>7} {'med cyc':>8} {'p99.9 cyc':>16}")
    for side in SIDES:
        s = summary.get(side)
        if not s:
            continue
        print(f"{WORDS[side]:22} {s['peak_mib']['median']:9.0f} "
              f"{s['idle_mib']['median']:6.0f} "
              f"({s['idle_mib']['min']:.0f}-{s['idle_mib']['max']:.0f}) "
              f"{s['idle_over_peak']['median']:7.3f} "
              f"({s['idle_over_peak']['min']:.2f}-"
              f"{s['idle_over_peak']['max']:.2f}) "
              f"{s['lost']['max']:6.0f} {s['missed']['max']:7.0f} "
              f"{s['median_cycles']['median']:8.0f} "
              f"{s['p99_9_cycles']['median']:6.0f} "
              f"({s['p99_9_cycles']['min']:.0f}-"
              f"{s['p99_9_cycles']['max']:.0f})")
    g = summary.get("grow")
    if g and "end_drained_held_mib" in g:
        print(f"\ngrowth run: {g['grows']['median']:.0f} grows, "
              f"{g['shrinks']['median']:.0f} shrinks, "
              f"{g['grow_failures']['max']:.0f} failed; at the end the "
              f"page_pool's cache held {g['end_pool_cache_pages']['max']:.0f}"
              f" and its ring {g['end_pool_ring_pages']['max']:.0f} pages "
              f"(most of any run)")
    print("traffic thread, runqueue wait ms (another task had its CPU) / "
          "voluntary switches (slept on a lock), median of the runs:")
    for side in SIDES:
        s = summary.get(side)
        if s:
            print(f"  {WORDS[side]:22} {s['runqueue_wait_ms']['median']:8.1f}"
                  f" ({s['runqueue_wait_ms']['min']:.1f}-"
                  f"{s['runqueue_wait_ms']['max']:.1f})  "
                  f"{s['voluntary_switches']['median']:6.0f}")
    print("\nper-burst cycles within +-%.0f ms of the growth run's grow "
          "events (same moments in the others):" % params["window_ms"])
    for side in SIDES:
        s = summary.get(side)
        if not s:
            continue
        print(f"  {WORDS[side]:22} median {s['grow_windows_median']['median']:6.0f}"
              f"  p99.9 {s['grow_windows_p99_9']['median']:7.0f} "
              f"({s['grow_windows_p99_9']['min']:.0f}-"
              f"{s['grow_windows_p99_9']['max']:.0f}), runqueue wait "
              f"in them {s['grow_windows_wait_ms']['median']:.1f} ms"
              f"   shrink windows: median "
              f"{s['shrink_windows_median']['median']:6.0f}  p99.9 "
              f"{s['shrink_windows_p99_9']['median']:7.0f}")


def svg(doc, path):
    """Hugepages held over time, one line per side, the schedule shaded
    behind, the growth run's grow and shrink events as ticks."""
    W, H, L, R, T, B = 1040, 460, 70, 20, 40, 70
    params = doc["parameters"]
    sides = [s for s in SIDES if doc["sides"].get(s, {}).get("status") == "ok"]
    tmax = params["run_s"]
    ymax = 1.0
    for s in sides:
        tl = doc["sides"][s]["timeline"]
        ymax = max([ymax] + tl["held_mib"] + tl["committed_mib"])
    step = 100 if ymax > 400 else 50 if ymax > 150 else 10
    ymax = (int(ymax / step) + 1) * step

    def x(t):
        return L + (W - L - R) * t / tmax

    def y(v):
        return H - B - (H - T - B) * v / ymax

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="15">'
         f'Hugepages held under bursty traffic (peak '
         f'{params["peak_inflight"]} buffers of 4 KiB in flight)</text>']
    t0 = 0.0
    for ph in params["schedule"]:
        t1 = t0 + ph["secs"]
        shade = 0.05 + 0.25 * ph["pct"] / 100.0
        o.append(f'<rect x="{x(t0):.1f}" y="{T}" width="{x(t1) - x(t0):.1f}" '
                 f'height="{H - T - B}" fill="#2ca02c" fill-opacity="{shade:.2f}"/>')
        o.append(f'<text x="{(x(t0) + x(t1)) / 2:.1f}" y="{T + 14}" '
                 f'text-anchor="middle" fill="#2a6b2a">{ph["pct"]:g}%</text>')
        t0 = t1
    for v in range(0, int(ymax) + 1, step):
        o.append(f'<line x1="{L}" x2="{W - R}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                 f'stroke="#ddd"/><text x="{L - 6}" y="{y(v) + 4:.1f}" '
                 f'text-anchor="end">{v}</text>')
    for t in range(0, int(tmax) + 1, 5):
        o.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{H - B}" '
                 f'y2="{H - B + 5}" stroke="black"/><text x="{x(t):.1f}" '
                 f'y="{H - B + 18}" text-anchor="middle">{t}</text>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - B + 34}" '
             f'text-anchor="middle">seconds (green: offered rate, % of peak)'
             f'</text>')
    o.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 16 {(T + H - B) / 2})">MiB of hugepages '
             f'held by the process</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" '
             f'fill="none" stroke="black"/>')
    # The data in flight, for scale: what a perfect allocator would hold.
    g = doc["sides"].get("grow") or doc["sides"][sides[0]]
    tl = g["timeline"]
    pts = " ".join(f"{x(t):.1f},{y(n * 4096 / 1048576):.1f}"
                   for t, n in zip(tl["t_s"], tl["inflight"]))
    o.append(f'<polyline points="{pts}" fill="none" stroke="#2ca02c" '
             f'stroke-width="1.5" stroke-dasharray="2,3"/>')
    for s in sides:
        tl = doc["sides"][s]["timeline"]
        pts = " ".join(f"{x(t):.1f},{y(v):.1f}"
                       for t, v in zip(tl["t_s"], tl["held_mib"]))
        dash = ' stroke-dasharray="6,4"' if s == "fixed" else ""
        o.append(f'<polyline points="{pts}" fill="none" '
                 f'stroke="{COLOURS[s]}" stroke-width="2"{dash}/>')
    if "grow" in sides and "isolated_mib" in doc["sides"]["grow"]["timeline"]:
        tl = doc["sides"]["grow"]["timeline"]
        pts = " ".join(f"{x(t):.1f},{y(v):.1f}"
                       for t, v in zip(tl["t_s"], tl["isolated_mib"]))
        o.append(f'<polyline points="{pts}" fill="none" stroke="#9467bd" '
                 f'stroke-width="1.5" stroke-dasharray="4,2"/>')
    if "grow" in sides:
        for ev in doc["sides"]["grow"]["events"]:
            c = {"grow": "#1f77b4", "shrink": "#ff7f0e"}.get(ev["kind"],
                                                             "black")
            o.append(f'<line x1="{x(ev["t_s"]):.1f}" x2="{x(ev["t_s"]):.1f}" '
                     f'y1="{H - B}" y2="{H - B - 8}" stroke="{c}"/>')
    legend = [(WORDS[s], COLOURS[s], "6,4" if s == "fixed" else "")
              for s in sides]
    legend.append(("buffers in flight x 4 KiB", "#2ca02c", "2,3"))
    if "grow" in sides:
        legend.append(("isolated (set aside, still held)", "#9467bd", "4,2"))
    lx = L + 10
    for i, (name, colour, dash) in enumerate(legend):
        ly = H - 18
        d = f' stroke-dasharray="{dash}"' if dash else ""
        o.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" '
                 f'stroke="{colour}" stroke-width="2"{d}/>'
                 f'<text x="{lx + 30}" y="{ly + 4}">{escape(name)}</text>')
        lx += 46 + 7 * len(name)
    if "grow" in sides:
        o.append(f'<text x="{W - R - 4}" y="{H - B - 12}" text-anchor="end" '
                 f'font-size="10" fill="#555">ticks: the growth run\'s grows '
                 f'(blue), shrinks (orange), isolations undone (black)</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    outdir, result, plot = sys.argv[1:]
    runs = load(outdir)
    summary = summarise(runs)
    k = median_run(runs)
    params = runs[0]["parameters"]
    table(summary, params, len(runs))
    doc = runs[k]
    keep = {}
    for side in SIDES:
        s = doc["sides"].get(side)
        if s and s["status"] == "ok":
            keep[side] = {"timeline": s["timeline"], "events": s["events"],
                          "setup": s["setup"]}
    out = {
        "benchmark": "growth",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "tool": {k2: runs[0].get(k2) for k2 in ("version", "commit")},
        "machine": runs[0].get("machine"),
        "load_end": os.getloadavg()[0],
        "runs": len(runs),
        "parameters": params,
        "median": summary,
        "per_run": [{side: figures(d, side) for side in SIDES
                     if figures(d, side)} for d in runs],
        "timeline_run": k + 1,
        "timeline": keep,
    }
    with open(result, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    svg(doc, plot)
    print(f"\nload average at the end: {out['load_end']:.2f}; timeline of "
          f"run {k + 1}; wrote {result} and {plot}")


if __name__ == "__main__":
    main()
