#!/usr/bin/env bash
# fwd-bench.sh - the seed's workload, end to end: null RX -> XDP-like
# REDIRECT into veth0 -> veth1 RX -> PASS to the stack, one core per side,
# with veth1's page_pool refilled by the single-page call, the bulk list
# and the bulk array; and the same with bulk array refill where veth1
# copies each frame into a fragment of its pool instead of a page
# (frag=2048 and frag=auto on the veth pair), interleaved with the page
# rows so that one run gives the ratio. Beside it: null -> null redirect
# on one core, DPDK testpmd io-forward on two net_null ports (when DPDK
# is installed), and (as root, with DPDK's net_vhost) fwd's virtio_user
# port in the loop topology behind a testpmd net_vhost flowgen peer.
#
# Builds build/ (release) if needed, prints a table, and writes
# out/fwd-bench.json and out/fwd-bench.png (with gnuplot). Each figure is
# the median of PP_FWD_REPEAT runs of PP_FWD_DURATION seconds; the refill
# modes are interleaved so that drift in machine load hits them alike.
#
#   PP_FWD_DURATION  seconds per run (default 3)
#   PP_FWD_REPEAT    runs per configuration (default 5)
#   PP_BUILD_DIR     build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_FWD_DURATION:-3}
rep=${PP_FWD_REPEAT:-5}
build=${PP_BUILD_DIR:-build}
outdir=out/fwd-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.json "$outdir"/*.log

step() { printf '==> %s\n' "$*"; }

# ---- build ----
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building the forwarder"
targets=(examples/fwd/fwd app/pp-bench/pp-bench)
ninja -C "$build" "${targets[@]}" >"$outdir/build.log" 2>&1 ||
	{ tail -40 "$outdir/build.log"; exit 1; }
fwd=$build/examples/fwd/fwd

# ---- AF_XDP row (root, af_xdp built): fwd's RX on the near end of a veth
# pair whose far end is in a netns, where xdp_bench sends on CPU 1 ----
afxdp=0
if [ "$(id -u)" = 0 ] &&
	ninja -C "$build" tests/netns/xdp_bench >>"$outdir/build.log" 2>&1; then
	xns=ppfwd$$ xnear=ppfw$(( $$ % 100000 ))a xfar=ppfw$(( $$ % 100000 ))b
	trap 'ip link del "$xnear" >/dev/null 2>&1; ip netns del "$xns" >/dev/null 2>&1' EXIT
	ip netns add "$xns" &&
		ip link add "$xnear" type veth peer name "$xfar" netns "$xns" &&
		ip link set "$xnear" up && ip -n "$xns" link set "$xfar" up &&
		afxdp=1
fi
run_afxdp() { # name
	# The XDP live-frames source; AF_PACKET where the kernel lacks it
	# (before Linux 5.18).
	(taskset -c 1 "$build/tests/netns/xdp_bench" send-xdp "$xns" "$xfar" \
		$((dur + 2)) ||
	 taskset -c 1 "$build/tests/netns/xdp_bench" send "$xns" "$xfar" \
		$((dur + 2))) >"$outdir/$1.send.log" 2>&1 &
	run_fwd "$1" --port "af_xdp:$xnear" --port null0 --mode redirect
	wait
}

# ---- vhost-user row (root, dpdk-testpmd with net_vhost): fwd's one
# virtio_user port in the loop topology, a testpmd net_vhost flowgen peer
# sending 64-byte frames on CPU 1 (scripts/vhost-bench.sh compares with
# DPDK's own virtio_user) ----
vhost=0
if [ "$(id -u)" = 0 ] && command -v dpdk-testpmd >/dev/null &&
	{ ldconfig -p 2>/dev/null | grep -q librte_net_vhost ||
	  ls /usr/lib/*/dpdk/pmds-*/librte_net_vhost.so* >/dev/null 2>&1; }; then
	vhost=1
	vsock=/tmp/pp-fwd-bench-$$.sock
fi
run_vhost() { # name
	rm -f "$vsock"
	timeout --preserve-status -s INT -k 10 $((dur + 15)) dpdk-testpmd \
		--lcores 0@1,1@1 --main-lcore 0 --no-pci --no-telemetry \
		--in-memory --single-file-segments -m 256 \
		--file-prefix pp-fwd-bench-$$ --vdev "net_vhost0,iface=$vsock" \
		-- --forward-mode=flowgen --txpkts=60 --nb-cores=1 \
		--stats-period 1 </dev/null >"$outdir/$1.peer.log" 2>&1 &
	local peer=$!
	for _ in $(seq 100); do
		[ -S "$vsock" ] && break
		sleep 0.1
	done
	run_fwd "$1" --port "virtio_user:path=$vsock" --cpus 0
	# --stats-period: testpmd runs until SIGINT, not until its input ends.
	kill -INT "$peer" 2>/dev/null
	wait "$peer" 2>/dev/null
	rm -f "$vsock"
}

# ---- memory: fwd wants about 64 MiB of 2 MiB pages per run ----
free2m=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free2m:-0}" -lt 32 ]; then
	h2=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	if [ -w "$h2" ]; then
		step "reserving 32 more 2 MiB hugepages"
		echo $(( $(cat "$h2") + 32 - free2m )) >"$h2" 2>/dev/null || true
		free2m=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
	fi
	[ "${free2m:-0}" -ge 32 ] ||
		echo "warning: too few free 2 MiB hugepages ($free2m): fwd falls back to 4 KiB pages (slower; run scripts/setup.sh as root)" >&2
fi

# ---- runs ----
total=$(( rep * (6 + afxdp + vhost) ))
n=0
run_fwd() { # name, then fwd arguments
	local name=$1
	shift
	n=$((n + 1))
	step "[$n/$total] fwd $* (${dur}s)"
	"$fwd" "$@" --duration "$dur" --json "$outdir/$name.json" |
		sed -u 's/^/    /'
}
for i in $(seq "$rep"); do
	for r in single list array; do
		run_fwd "pass-$r-$i" --port null0 --port veth0,peer=veth1 \
			--mode pass --refill "$r"
	done
	# Fragments on the receiving veth end only: its copy and PASS path,
	# the kernel's veth page_pool fragments (the sender stays a page per
	# frame, as a NIC's RX would be, so the row differs in one thing).
	for fr in 2048 auto; do
		run_fwd "fragpass-$fr-$i" --port null0 \
			--port "veth0,peer=veth1,frag=$fr" --mode pass \
			--refill array
	done
	run_fwd "redirect-null-$i" --port null0 --port null1 --mode redirect
	[ $afxdp = 0 ] || run_afxdp "afxdp-$i"
	[ $vhost = 0 ] || run_vhost "vhost-$i"
done

if command -v dpdk-testpmd >/dev/null; then
	step "DPDK testpmd io-forward, net_null0 + net_null1, 1 forwarding core ($((dur + 5))s)"
	# With --stats-period testpmd runs until a signal (it ignores the end
	# of its input): SIGINT after the run's time, which it handles by
	# stopping the ports and exiting 0; SIGKILL 10 s later if it hangs.
	# About 2 s of its start-up report no traffic: 5 s more than a run.
	# 256 MiB of EAL memory, no files in hugetlbfs.
	tp_rc=0
	timeout --preserve-status -s INT -k 10 $((dur + 5)) dpdk-testpmd -l 0,1 \
		--no-pci --in-memory -m 256 --vdev net_null0 --vdev net_null1 \
		--log-level=lib.eal:warning -- --forward-mode=io \
		--stats-period 1 --no-lsc-interrupt \
		</dev/null >"$outdir/testpmd.log" 2>&1 || tp_rc=$?
	if [ "$tp_rc" != 0 ] && [ "$tp_rc" != 130 ]; then
		echo "warning: testpmd exited $tp_rc; see $outdir/testpmd.log" >&2
	fi
	grep -q 'Rx-pps' "$outdir/testpmd.log" ||
		{ echo "warning: testpmd gave no statistics; see $outdir/testpmd.log" >&2; }
else
	echo "note: dpdk-testpmd not installed (apt-get install dpdk): no DPDK column" >&2
fi

if [ -x "$build/app/pp-bench/pp-bench" ]; then
	step "pp-bench --quick: the allocation cost per page of each refill"
	"$build/app/pp-bench/pp-bench" --quick --no-dpdk --arena-mb 64 \
		--json "$outdir/pp-bench.json" >"$outdir/pp-bench.log" 2>&1 ||
		echo "warning: pp-bench failed; see $outdir/pp-bench.log" >&2
fi

# ---- report ----
python3 - "$outdir" "$dur" "$rep" <<'EOF'
import glob, json, os, platform, re, statistics, sys

outdir, dur, rep = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])

def runs(prefix):
    out = []
    for f in sorted(glob.glob(f"{outdir}/{prefix}-*.json")):
        with open(f) as fh:
            out.append(json.load(fh))
    return out

def med(xs):
    return statistics.median(xs) if xs else None

def spread(xs):
    """(max - min) / median of the runs, in percent."""
    m = med(xs)
    return (max(xs) - min(xs)) / m * 100 if xs and m else 0.0

# Spread above this, or a machine this loaded, makes a ratio unreliable.
SPREAD_WARN = 15.0

res = {"machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                   "cpu": next((l.split(":", 1)[1].strip()
                                for l in open("/proc/cpuinfo")
                                if l.startswith("model name")), "?")},
       "duration_s": dur, "repeat": rep, "pass": {}, "notes": []}
leaks = 0
for r in ("single", "list", "array"):
    rs = runs(f"pass-{r}")
    leaks += sum(x["leaked_pages"] for x in rs)
    res["pass"][r] = {
        "pps": med([x["pps"] for x in rs]),
        "pps_runs": [x["pps"] for x in rs],
        "drops_per_s": med([x["drops"] / x["duration_s"] for x in rs]),
        "alloc_ns_per_page_fwd": med([x["alloc_ns_per_page"] for x in rs]),
    }
# Fragment rows: medians, and the ratio to the page row (array refill)
# run by run (each fragment run sits beside its page run in the loop).
res["frag_pass"] = {}
for fr in ("2048", "auto"):
    rs = runs(f"fragpass-{fr}")
    leaks += sum(x["leaked_pages"] for x in rs)
    ratios = []
    for i in range(1, rep + 1):
        try:
            a = json.load(open(f"{outdir}/pass-array-{i}.json"))["pps"]
            b = json.load(open(f"{outdir}/fragpass-{fr}-{i}.json"))["pps"]
            ratios.append(b / a)
        except (OSError, KeyError, ZeroDivisionError):
            pass
    res["frag_pass"][fr] = {
        "pps": med([x["pps"] for x in rs]),
        "pps_runs": [x["pps"] for x in rs],
        "ratio_vs_page_runs": ratios,
        "ratio_vs_page": med(ratios),
        "sink_cpu_ns_per_frame": med([x["sink_cpu_ns_per_frame"]
                                      for x in rs]),
    }
res["pass"]["array"]["sink_cpu_ns_per_frame"] = med(
    [x["sink_cpu_ns_per_frame"] for x in runs("pass-array")])
nn = runs("redirect-null")
leaks += sum(x["leaked_pages"] for x in nn)
res["redirect_null"] = {"pps": med([x["pps"] for x in nn]),
                        "pps_runs": [x["pps"] for x in nn]}
ax = runs("afxdp")
leaks += sum(x["leaked_pages"] for x in ax)
if ax:
    res["afxdp_rx_redirect"] = {"pps": med([x["in_pps"] for x in ax]),
                                "pps_runs": [x["in_pps"] for x in ax]}
vh = runs("vhost")
leaks += sum(x["leaked_pages"] for x in vh)
if vh:
    res["vhost_loop"] = {"pps": med([x["pps"] for x in vh]),
                         "pps_runs": [x["pps"] for x in vh],
                         "cycles_per_frame": med([x["cycles_per_frame"]
                                                  for x in vh])}
res["leaked_pages"] = leaks

# testpmd: per period, one Rx-pps line per port; sum the pair, skip the
# warm-up periods (zero), take the median.
tp, tp_periods = None, []
try:
    vals = [int(v) for v in re.findall(r"Rx-pps:\s+(\d+)",
                                       open(f"{outdir}/testpmd.log").read())]
    sums = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)]
    sums = [s for s in sums if s > 0][1:]   # first partial period
    tp = med(sums)
    tp_periods = sums
except (OSError, ValueError):
    pass
res["testpmd_io_pps"] = tp

# pp-bench: release + refill per page, by refill mode.
try:
    pb = json.load(open(f"{outdir}/pp-bench.json"))
    for c in pb["cases"]:
        m = re.match(r"release, refill (\w+)", c.get("name", ""))
        if c.get("group") == "page_pool" and m and m.group(1) in res["pass"]:
            res["pass"][m.group(1)]["alloc_ns_per_page_ppbench"] = c["ns"]["median"]
except (OSError, ValueError, KeyError):
    pass

base = res["pass"]["single"]["pps"]
kernel = {"single": (3771046, ""), "list": (3940242, "+4.49%"),
          "array": (4249224, "+12.68%")}
print()
print(f"XDP-redirect into veth, PASS to the stack: null0 -> veth0 -> veth1, "
      f"one core per side, median of {rep} x {dur:g} s")
print(f"{'refill':8} {'Mpps':>8} {'spread':>7} {'vs single':>10} {'drops/s':>10} "
      f"{'alloc ns/page':>14} {'pp-bench':>9}   {'kernel 5.13 pps':>22}")
worst = 0.0
for r in ("single", "list", "array"):
    p = res["pass"][r]
    delta = (p["pps"] / base - 1) * 100 if base else 0
    p["delta_pct"] = delta
    p["spread_pct"] = spread(p["pps_runs"])
    worst = max(worst, p["spread_pct"])
    pb = p.get("alloc_ns_per_page_ppbench")
    print(f"{r:8} {p['pps'] / 1e6:8.2f} {p['spread_pct']:6.1f}% {delta:+9.2f}% "
          f"{p['drops_per_s'] / 1e6:9.2f}M {p['alloc_ns_per_page_fwd']:14.2f} "
          f"{(f'{pb:.2f}' if pb is not None else '-'):>9}   "
          f"{kernel[r][0]:>12,} {kernel[r][1]:>9}")
print("  spread: (max - min) / median over the runs")
print("  alloc ns/page: the pool's allocation path per page, pages leaving "
      "as on PASS (fwd's probe);")
print("  pp-bench: 'release, refill <mode>' per page (release + refill), "
      "when pp-bench is built")
print()
print("veth1 copies into fragments (frag= on the pair), bulk array refill:")
print(f"{'buffer':10} {'Mpps':>8} {'spread':>7} {'vs page':>8} "
      f"{'rx ns/frame':>12} {'cpu vs page':>12}   per-run ratio")
pa = res["pass"]["array"]
pcpu = pa["sink_cpu_ns_per_frame"]
print(f"{'page':10} {pa['pps'] / 1e6:8.2f} {pa['spread_pct']:6.1f}% {1:8.3f} "
      f"{pcpu:12.2f} {1:12.3f}")
for fr in ("2048", "auto"):
    p = res["frag_pass"][fr]
    if not p["pps"]:
        continue
    p["spread_pct"] = spread(p["pps_runs"])
    worst = max(worst, p["spread_pct"])
    rr = " ".join(f"{x:.2f}" for x in p["ratio_vs_page_runs"])
    fcpu = p["sink_cpu_ns_per_frame"]
    p["cpu_ratio_vs_page"] = pcpu / fcpu if fcpu else None
    print(f"{'frag=' + fr:10} {p['pps'] / 1e6:8.2f} {p['spread_pct']:6.1f}% "
          f"{p['ratio_vs_page'] or 0:8.3f} {fcpu:12.2f} "
          f"{p['cpu_ratio_vs_page'] or 0:12.3f}   {rr}")
print("  vs page: median of the per-run ratios (each fragment run beside its")
print("  page run in the loop); rx ns/frame: veth1's thread CPU time per frame")
print("  delivered (median), steadier than Mpps on a shared machine; cpu vs")
print("  page: page's rx ns/frame over the row's (above 1: cheaper)")
nnp = res["redirect_null"]["pps"]
res["redirect_null"]["spread_pct"] = spread(res["redirect_null"]["pps_runs"])
worst = max(worst, res["redirect_null"]["spread_pct"])
print()
print(f"null0 -> null1 redirect, one core:            {nnp / 1e6:8.2f} Mpps"
      f"   (spread {res['redirect_null']['spread_pct']:.1f}%)")
if tp:
    res["ratio_vs_testpmd"] = nnp / tp
    print(f"DPDK testpmd io-forward, 2 x net_null, 1 core: {tp / 1e6:8.2f} Mpps"
          f"   (ours / DPDK = {nnp / tp:.2f}x)")
else:
    print("DPDK testpmd io-forward: not measured")
if ax:
    axp = res["afxdp_rx_redirect"]["pps"]
    print(f"AF_XDP RX (veth, XDP sender in a netns on the other core) -> null redirect: "
          f"{axp / 1e6:.2f} Mpps")
if vh:
    v = res["vhost_loop"]
    print(f"virtio_user loop (testpmd net_vhost flowgen peer, 64 B, other core): "
          f"{v['pps'] / 1e6:.2f} Mpps, {v['cycles_per_frame']:.0f} cycles/frame"
          f"   (scripts/vhost-bench.sh compares with DPDK's virtio_user)")
print(f"pages leaked over all runs: {leaks}")
load = os.getloadavg()[0]
res["load_average_end"] = load
if worst > SPREAD_WARN or load > 0.5 * (os.cpu_count() or 1):
    msg = (f"warning: the runs spread up to {worst:.0f}% and the load average "
           f"is {load:.1f} on {os.cpu_count()} CPUs: the machine is busy, "
           f"so differences between rows smaller than the spread mean "
           f"nothing; rerun on a quiet machine, or with more runs "
           f"(PP_FWD_REPEAT)")
    res["notes"].append(msg)
    print(msg)

with open("out/fwd-bench.json", "w") as f:
    json.dump(res, f, indent=1)
# One row per bar: label, median, min and max of the runs (Mpps).
def bar(f, label, runs_pps):
    if runs_pps:
        f.write(f'"{label}" {med(runs_pps) / 1e6:.3f} '
                f'{min(runs_pps) / 1e6:.3f} {max(runs_pps) / 1e6:.3f}\n')

with open(f"{outdir}/plot.dat", "w") as f:
    for r in ("single", "list", "array"):
        bar(f, f"PASS {r}", res["pass"][r]["pps_runs"])
    for fr in ("2048", "auto"):
        bar(f, f"PASS frag={fr}", res["frag_pass"][fr]["pps_runs"])
    bar(f, "null->null", res["redirect_null"]["pps_runs"])
    if tp:
        bar(f, "testpmd io", tp_periods)
    if ax:
        bar(f, "AF_XDP RX", res["afxdp_rx_redirect"]["pps_runs"])
    if vh:
        bar(f, "vhost loop", res["vhost_loop"]["pps_runs"])
print("results: out/fwd-bench.json")
sys.exit(1 if leaks else 0)
EOF

if command -v gnuplot >/dev/null; then
	gnuplot <<EOF 2>"$outdir/gnuplot.log" &&
set terminal pngcairo size 900,500 noenhanced
set output 'out/fwd-bench.png'
set title "pagepool fwd: veth PASS by refill mode, null->null redirect, DPDK testpmd io, AF_XDP RX, vhost-user loop\n(Mpps, log scale; bar: median of $rep x ${dur}s, whiskers: min and max of the runs)"
set style fill solid 0.8
set boxwidth 0.6
# A log axis: 2 Mpps rows stay readable beside 200 Mpps ones.
set logscale y 10
set yrange [0.5:*]
set ylabel 'Mpps'
set grid ytics mytics
unset key
plot '$outdir/plot.dat' using 0:2:xtic(1) with boxes lc rgb '#3a6ea5', \
     '' using 0:2:3:4 with yerrorbars lc rgb '#202020' lw 2 pt -1, \
     '' using 0:(\$4*1.2):(sprintf('%.1f', \$2)) with labels
EOF
		echo "plot: out/fwd-bench.png" ||
		echo "warning: gnuplot failed; see $outdir/gnuplot.log" >&2
else
	echo "note: gnuplot not installed (scripts/setup.sh installs it): no plot" >&2
fi
