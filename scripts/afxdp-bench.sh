#!/usr/bin/env bash
# afxdp-bench.sh - pagepool's af_xdp driver against DPDK testpmd's
# net_af_xdp, on the same veth pair, with the same traffic source and the
# same core layout, runs alternated.
#
# The near end of a veth pair stays here, the far end goes into a network
# namespace, where xdp_bench sends 64-byte frames as fast as it can on
# CPU 1: by default with an XDP_TX program run over live frames
# (BPF_PROG_RUN, no socket buffers; Linux 5.18), or through an AF_PACKET
# socket (sendmmsg, qdisc bypassed; PP_AFXDP_SOURCE=packet), which is
# several times slower and leaves the receivers idle. The
# receiver polls the near end's queue 0 on CPU 0: pagepool's xdp_bench
# (recv) or dpdk-testpmd (its forwarding lcore on CPU 0, its main lcore
# sharing CPU 0 and asleep). Two workloads: rxonly (drop every frame) and
# fwd (swap MACs and send back out of the same port: testpmd's macswap).
# Each receiver reports its RX rate once a second; a run's figure is the
# median of the seconds while the sender runs, less the first and the
# last (partial) ones; a configuration's figure is the median of its runs.
#
# Needs root, iproute2, and dpdk-testpmd for the comparison (without it
# only pagepool's figures are printed). Writes out/afxdp-bench/.
#
# Jumbo frames (PP_AFXDP_SIZE above what one 4 KiB UMEM frame holds):
# both ends of the pair get the MTU, the receiver opens its port with it
# (multi-buffer AF_XDP, Linux 6.6), and the source is the packet socket
# (BPF_PROG_RUN refuses live frames larger than a page). DPDK 22.11's
# net_af_xdp has no multi-buffer: testpmd is run with --max-pkt-len and
# its refusal is printed as the DPDK column.
#
# Before/after: PP_AFXDP_BASE_BUILD names a second build directory (of
# another commit, configured the same); its xdp_bench runs as "base",
# alternated with this build's in the same run, and the table gives
# pagepool / base.
#
#   PP_AFXDP_DURATION  seconds the sender runs per run (default 4)
#   PP_AFXDP_REPEAT    runs per configuration (default 5)
#   PP_AFXDP_SOURCE    xdp (default) or packet: the traffic source
#   PP_AFXDP_SIZE      frame size in bytes (default 64; up to 9014)
#   PP_AFXDP_MTU       the pair's and the port's MTU (default 1500, or
#                      9000 when the frames do not fit 1500)
#   PP_AFXDP_BASE_BUILD  a second build directory to compare with
#   PP_AFXDP_COUNTERS  1 (default): one more run of each receiver and
#                      workload with counters (system calls, the kernel's
#                      XDP_STATISTICS, veth's XDP counters; perf, ethtool);
#                      0: none
#   PP_AFXDP_NO_DPDK   1: leave testpmd out
#   PP_BUILD_DIR       build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_AFXDP_DURATION:-4}
rep=${PP_AFXDP_REPEAT:-5}
size=${PP_AFXDP_SIZE:-64}
mtu=${PP_AFXDP_MTU:-1500}
[ -n "${PP_AFXDP_MTU:-}" ] || [ "$size" -le 1514 ] || mtu=9000
if [ "$size" -gt $((mtu + 14)) ]; then
	echo "afxdp-bench: $size-byte frames do not fit MTU $mtu (at most $((mtu + 14)) bytes untagged)" >&2
	exit 2
fi
# BPF_PROG_RUN takes live frames up to a page less its head- and tailroom.
source=${PP_AFXDP_SOURCE:-xdp}
if [ "$source" = xdp ] && [ "$size" -gt 3000 ]; then
	[ -z "${PP_AFXDP_SOURCE:-}" ] || echo "afxdp-bench: $size-byte frames are above what BPF_PROG_RUN takes as live frames: the packet socket sends them" >&2
	source=packet
fi
base=${PP_AFXDP_BASE_BUILD:-}
case "$source" in
xdp) send_cmd=send-xdp ;;
packet) send_cmd=send ;;
*) echo "afxdp-bench: PP_AFXDP_SOURCE must be xdp or packet, not '$source'" >&2; exit 2 ;;
esac
build=${PP_BUILD_DIR:-build}
outdir=out/afxdp-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.log "$outdir"/*.json

step() { printf '==> %s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	echo "afxdp-bench: needs root (network namespaces, XDP programs): run it as root" >&2
	exit 1
fi

# ---- build ----
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building xdp_bench"
ninja -C "$build" tests/netns/xdp_bench >"$outdir/build.log" 2>&1 || {
	tail -20 "$outdir/build.log"
	echo "afxdp-bench: xdp_bench did not build; is the af_xdp driver on (libxdp-dev, libbpf-dev; see meson's summary)?" >&2
	exit 1
}
bench=$build/tests/netns/xdp_bench
if [ -n "$base" ]; then
	step "building xdp_bench in $base (base)"
	ninja -C "$base" tests/netns/xdp_bench >"$outdir/build-base.log" 2>&1 || {
		tail -20 "$outdir/build-base.log"
		echo "afxdp-bench: xdp_bench did not build in $base" >&2
		exit 1
	}
fi

# ---- the veth pair, removed on every way out ----
ns=ppxbench$$
near=ppxb$(( $$ % 100000 ))a
far=ppxb$(( $$ % 100000 ))b
cleanup() {
	ip link del "$near" >/dev/null 2>&1 || true
	ip netns del "$ns" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$ns"
ip link add "$near" type veth peer name "$far" netns "$ns"
# Through /proc/sys: a minimal Debian has no sysctl command (procps).
echo 1 >"/proc/sys/net/ipv6/conf/$near/disable_ipv6" 2>/dev/null || true
ip netns exec "$ns" sh -c "echo 1 >/proc/sys/net/ipv6/conf/$far/disable_ipv6" 2>/dev/null || true
# Both ends: veth forwards a frame only up to the receiving end's MTU.
# Before any XDP program: veth caps the peer's MTU at a page's worth
# while a program that is not frags-aware is attached.
if [ "$mtu" != 1500 ]; then
	ip link set "$near" mtu "$mtu"
	ip -n "$ns" link set "$far" mtu "$mtu"
fi
ip link set "$near" up
ip -n "$ns" link set "$far" up

have_dpdk=0
command -v dpdk-testpmd >/dev/null && have_dpdk=1
[ $have_dpdk = 1 ] || echo "afxdp-bench: dpdk-testpmd not found (apt-get install dpdk): pagepool only" >&2
[ "${PP_AFXDP_NO_DPDK:-0}" = 1 ] && have_dpdk=0

# Counter runs (PP_AFXDP_COUNTERS, default 1): after the timed runs, one
# more run of each receiver and workload whose rate is not used, with the
# counters read over 2 s in its middle: the receiver's system calls
# (perf stat on its process: sendto, recvfrom, poll), the kernel's
# XDP_STATISTICS and busy-polling settings of its socket
# (scripts/xsk-stats.py), and veth's XDP counters of the near end
# (ethtool -S). Counting system calls costs the one that makes more of
# them, which is why the timed runs count nothing.
counters=${PP_AFXDP_COUNTERS:-1}
if [ "$counters" = 1 ] && ! command -v perf >/dev/null; then
	echo "afxdp-bench: perf not found (apt-get install linux-perf): no counter runs" >&2
	counters=0
fi
if [ "$counters" = 1 ] && [ "$dur" -lt 4 ]; then
	echo "afxdp-bench: no counter runs: their 2 s window needs runs of 4 s or more (PP_AFXDP_DURATION)" >&2
	counters=0
fi
have_ethtool=0
command -v ethtool >/dev/null && have_ethtool=1
probe=0

veth_counters() { # file
	if [ $have_ethtool = 1 ]; then
		ethtool -S "$near" >"$1" 2>/dev/null || true
	fi
}

# While a counter run's sender runs: counters of receiver process $1
# into $2.* over 2 s, starting 1.5 s in.
probe_counters() { # pid log
	sleep 1.5
	date +%s.%N >"$2.t0"
	scripts/xsk-stats.py "$1" >"$2.xsk0.json" 2>"$2.xsk.err" || true
	veth_counters "$2.veth0"
	date +%s.%N >>"$2.t0"
	perf stat -x, -e syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_poll \
		-p "$1" -- sleep 2 2>"$2.syscalls" >/dev/null || true
	date +%s.%N >"$2.t1"
	scripts/xsk-stats.py "$1" >"$2.xsk1.json" 2>>"$2.xsk.err" || true
	veth_counters "$2.veth1"
	date +%s.%N >>"$2.t1"
}

# The sender on CPU 1 for $dur s, against receiver process $1.
send_to() { # pid log
	taskset -c 1 "$bench" $send_cmd "$ns" "$far" "$dur" "$size" >"$2.send.json" &
	local spid=$!
	[ $probe = 1 ] && probe_counters "$1" "$2"
	wait $spid
}

# One run: receiver up on CPU 0, then the sender on CPU 1 for $dur s.
# The MTU argument only where it is not the default, so that a base
# build from before it existed runs the same command line.
run_xdp_bench() { # bench mode log
	local extra=()
	[ "$mtu" = 1500 ] || extra=("$mtu")
	taskset -c 0 "$1" recv "af_xdp:$near" "$2" $((dur + 3)) "${extra[@]}" \
		>"$3.json" 2>"$3" &
	local pid=$!
	sleep 1
	send_to $pid "$3"
	wait $pid
}

run_pp() { # mode log
	run_xdp_bench "$bench" "$@"
}

run_base() { # mode log
	run_xdp_bench "$base/tests/netns/xdp_bench" "$@"
}

run_dpdk() { # mode log
	local fwd=rxonly
	local extra=()
	[ "$1" = fwd ] && fwd=macswap
	# The largest frame the MTU makes (testpmd counts the header and
	# the CRC in it): net_af_xdp refuses what one UMEM frame cannot hold.
	[ "$mtu" = 1500 ] || extra=("--max-pkt-len=$((mtu + 18))")
	# A counter run also counts testpmd's bursts (for the mean burst).
	[ $probe = 1 ] && extra+=(--record-burst-stats)
	# Forwarding lcore 1 and main lcore 0 both on CPU 0: the main lcore
	# only prints statistics, once a second.
	timeout -s INT $((dur + 4)) dpdk-testpmd --lcores 0@0,1@0 --no-pci \
		--no-huge -m 512 --file-prefix "$ns" \
		--vdev "net_af_xdp0,iface=$near,start_queue=0,queue_count=1" -- \
		--forward-mode=$fwd --port-topology=loop --auto-start \
		--stats-period 1 --total-num-mbufs=16384 "${extra[@]}" >"$2" 2>&1 &
	local pid=$!
	sleep 2
	# testpmd is timeout's child.
	send_to "$(pgrep -P $pid -x dpdk-testpmd || echo $pid)" "$2"
	wait $pid || true
}

read -r load_start _ </proc/loadavg
impls=(pp)
[ -n "$base" ] && impls+=(base)
[ $have_dpdk = 1 ] && impls+=(dpdk)
total=$(( rep * 2 * ${#impls[@]} ))
n=0
for i in $(seq 1 "$rep"); do
	for mode in rxonly fwd; do
		# Alternate which one goes first, so drift hits all alike.
		order="${impls[*]}"
		[ $((i % 2)) = 0 ] && order=$(printf '%s\n' "${impls[@]}" | tac | xargs)
		for impl in $order; do
			n=$((n + 1))
			step "[$n/$total] $impl $mode ${size}B (${dur}s)"
			"run_$impl" "$mode" "$outdir/$impl-$mode-$i.log"
		done
	done
done
if [ "$counters" = 1 ]; then
	probe=1
	for mode in rxonly fwd; do
		for impl in "${impls[@]}"; do
			step "counters: $impl $mode ${size}B (${dur}s, rate not used)"
			"run_$impl" "$mode" "$outdir/count-$impl-$mode.log"
		done
	done
fi

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ "$commit" = unknown ] || git diff --quiet HEAD -- 2>/dev/null || commit="$commit+changes"
python3 - "$outdir" "$rep" "$dur" "$source" "$size" "$mtu" "$commit" "$load_start" <<'EOF'
import datetime, glob, json, os, re, statistics, sys
outdir, rep, dur, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
size, mtu = int(sys.argv[5]), int(sys.argv[6])
commit, load_start = sys.argv[7], float(sys.argv[8])

def series(path):
    # Both receivers print one RX rate a second: ours "...: N pps",
    # testpmd "Rx-pps: N".
    vals = []
    for line in open(path, errors="replace"):
        m = re.search(r"Rx-pps:\s+(\d+)", line) or re.search(r": (\d+) pps$", line)
        if m:
            vals.append(int(m.group(1)))
    vals = [v for v in vals if v > 0]
    # The first and last seconds with traffic are partial.
    core = vals[1:-1] if len(vals) > 2 else vals
    return statistics.median(core) if core else 0

def sent(path):
    try:
        return json.load(open(path))["pps"]
    except Exception:
        return 0

def refusal(path):
    # What testpmd said when it would not run (no Rx-pps at all).
    keep = []
    for line in open(path, errors="replace"):
        if re.search(r"(?i)fail|error|invalid|not supported|exceed|cannot|too (big|large)|mtu", line):
            keep.append(line.strip())
    return keep[:4]

res = {}
for impl in ("pp", "base", "dpdk"):
    for mode in ("rxonly", "fwd"):
        runs = sorted(glob.glob(f"{outdir}/{impl}-{mode}-*.log"))
        if not runs:
            continue
        pps = [series(r) for r in runs]
        src = [sent(r + ".send.json") for r in runs]
        res[f"{impl}_{mode}"] = {"runs": pps, "pps": statistics.median(pps),
                                 "sender_pps": statistics.median(src)}
        if impl == "dpdk" and not any(pps):
            res[f"{impl}_{mode}"]["unsupported"] = refusal(runs[0])
# Run i of one receiver beside run i of the other (alternated rounds).
for mode in ("rxonly", "fwd"):
    for other in ("dpdk", "base"):
        a, b = res.get(f"pp_{mode}"), res.get(f"{other}_{mode}")
        if a and b and len(a["runs"]) == len(b["runs"]) and all(b["runs"]):
            pairs = [x / y for x, y in zip(a["runs"], b["runs"])]
            a[f"pair_ratios_{other}"] = pairs
            a[f"pair_ratio_{other}_median"] = statistics.median(pairs)

def counter_run(impl, mode):
    """What a counter run measured, per second and per frame."""
    log = f"{outdir}/count-{impl}-{mode}.log"
    if not os.path.exists(log):
        return None
    r = {"pps": series(log), "sender_pps": sent(log + ".send.json")}
    window = 0
    try:
        for line in open(log + ".syscalls"):
            f = line.strip().split(",")
            m = re.match(r"syscalls:sys_enter_(\w+)", f[2]) if len(f) > 3 else None
            if m and f[0].isdigit():
                window = int(f[3]) / 1e9 or window
                r[m.group(1) + "_per_s"] = int(f[0]) / (int(f[3]) / 1e9)
    except (OSError, ValueError, ZeroDivisionError):
        pass
    if window:
        r["window_s"] = round(window, 3)
    # The snapshots before and after perf's window are a little further
    # apart than it (the tools' own start-up): their deltas divide by
    # the time between them, each taken as the middle of the
    # timestamps around it.
    try:
        def mid(path):
            t = [float(x) for x in open(path).read().split()]
            return sum(t) / len(t)
        span = mid(log + ".t1") - mid(log + ".t0")
    except (OSError, ValueError, ZeroDivisionError):
        span = window
    try:
        x0 = json.load(open(log + ".xsk0.json"))["sockets"]
        x1 = json.load(open(log + ".xsk1.json"))["sockets"]
        if x0 and x1 and span:
            for k in ("rx_dropped", "rx_ring_full", "rx_fill_ring_empty_descs",
                      "tx_ring_empty_descs"):
                if x1[0].get(k) is not None and x0[0].get(k) is not None:
                    r[k + "_per_s"] = (x1[0][k] - x0[0][k]) / span
            for k in ("napi_id", "busy_poll_us", "prefer_busy_poll"):
                r[k] = x1[0].get(k)
    except (OSError, ValueError, KeyError, IndexError):
        pass
    try:
        def ethtool(path):
            return {m.group(1): int(m.group(2)) for line in open(path)
                    for m in [re.match(r"\s*rx_queue_0_(\w+): (\d+)", line)] if m}
        v0, v1 = ethtool(log + ".veth0"), ethtool(log + ".veth1")
        if span:
            for k in ("xdp_packets", "xdp_redirect", "drops"):
                if k in v0 and k in v1:
                    r["veth_" + k + "_per_s"] = (v1[k] - v0[k]) / span
    except OSError:
        pass
    if impl == "dpdk":
        for line in open(log, errors="replace"):
            m = re.match(r"\s*(RX|TX)-bursts\s*:\s*(\d+)\s*\[(.*)\]", line)
            if m:
                r[m.group(1).lower() + "_bursts"] = f"{m.group(2)} [{m.group(3).strip()}]"
    else:
        try:
            j = json.load(open(log + ".json"))
            if j["polls"] > j["empty_polls"]:
                r["frames_per_busy_poll"] = j["frames"] / (j["polls"] - j["empty_polls"])
        except (OSError, ValueError, KeyError):
            pass
    # Frames over the window: those the kernel put in the socket (veth's
    # count), else the run's median rate.
    frames = r.get("veth_xdp_redirect_per_s") or r["pps"]
    if frames:
        calls = sum(r.get(k + "_per_s", 0) for k in ("sendto", "recvfrom", "poll"))
        r["syscalls_per_frame"] = calls / frames
        if r.get("sendto_per_s"):
            r["frames_per_sendto"] = frames / r["sendto_per_s"]
    return r

counts = {}
for impl in ("pp", "base", "dpdk"):
    for mode in ("rxonly", "fwd"):
        c = counter_run(impl, mode)
        if c:
            counts[f"{impl}_{mode}"] = c
if counts:
    res["counters"] = counts
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
res.update({
    "tool": "afxdp-bench", "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "machine": {"cpu_model": cpu, "cores": os.cpu_count(), "kernel": os.uname().release},
    "load": {"start": load_start, "end": os.getloadavg()[0]},
})
res["repeat"] = rep
res["duration_s"] = dur
res["source"] = source
res["size"] = size
res["mtu"] = mtu
json.dump(res, open(f"{outdir}/afxdp-bench.json", "w"), indent=1)

def mpps(r):
    return f"{r['pps'] / 1e6:.3f}" if r else "-"

def spread(r):
    lo, hi = min(r["runs"]), max(r["runs"])
    return f"{lo / 1e6:.3f}-{hi / 1e6:.3f}"

print()
m = res["machine"]
print(f"commit {commit}, {res['date']}; {m['cpu_model']}, {m['cores']} CPUs, kernel "
      f"{m['kernel']}; load average {load_start:.2f} at the start, {res['load']['end']:.2f} at the end")
what = "an XDP live-frames" if source == "xdp" else "an AF_PACKET"
print(f"AF_XDP on a veth pair (MTU {mtu}), {size}-byte frames from {what} sender in a netns "
      f"(CPU 1), receiver on CPU 0; median of {rep} runs of {dur}s, runs alternated")
print(f"{'workload':<10} {'pagepool Mpps':>14} {'Gbit/s':>7} {'base Mpps':>10} {'pp/base':>8} "
      f"{'DPDK Mpps':>10} {'pp/DPDK':>8} {'sender Mpps (pp)':>17}")
for mode in ("rxonly", "fwd"):
    pp = res.get(f"pp_{mode}")
    bs = res.get(f"base_{mode}")
    dp = res.get(f"dpdk_{mode}")
    if not pp:
        continue
    rb = f"{pp['pps'] / bs['pps']:.3f}x" if bs and bs["pps"] else "-"
    rd = f"{pp['pps'] / dp['pps']:.2f}x" if dp and dp["pps"] else "-"
    gbit = pp["pps"] * size * 8 / 1e9
    print(f"{mode:<10} {mpps(pp):>14} {gbit:>7.2f} {mpps(bs):>10} {rb:>8} "
          f"{mpps(dp) if dp and dp['pps'] else ('unsupp.' if dp else '-'):>10} {rd:>8} "
          f"{pp['sender_pps'] / 1e6:>17.3f}")
for mode in ("rxonly", "fwd"):
    for impl in ("pp", "base", "dpdk"):
        r = res.get(f"{impl}_{mode}")
        if r and any(r["runs"]):
            print(f"  {impl} {mode} runs (min-max Mpps): {spread(r)}")
for mode in ("rxonly", "fwd"):
    pp = res.get(f"pp_{mode}")
    for other in ("dpdk", "base"):
        if pp and f"pair_ratios_{other}" in pp:
            rs = ", ".join(f"{x:.2f}" for x in pp[f"pair_ratios_{other}"])
            print(f"  pp/{other} {mode}, run by run: {rs}; median "
                  f"{pp[f'pair_ratio_{other}_median']:.2f}x")
if counts:
    def val(c, k, fmt, scale=1):
        return format(c[k] / scale, fmt) if c.get(k) is not None else "-"
    print("\nCounter runs (one more run each, its rate not used above; counters over "
          f"{next(iter(counts.values())).get('window_s', 2)} s in its middle):")
    print(f"{'receiver':<6} {'workload':<8} {'Mpps':>6} {'sender':>7} {'sendto/s':>9} "
          f"{'fr/sendto':>9} {'recvfrom/s':>10} {'calls/fr':>8} {'ringfull/s':>10} "
          f"{'fillempty/s':>11} {'busy poll':>9} {'napi':>4}")
    for mode in ("rxonly", "fwd"):
        for impl in ("pp", "base", "dpdk"):
            c = counts.get(f"{impl}_{mode}")
            if not c:
                continue
            bp = (f"{c['busy_poll_us']}us/{c['prefer_busy_poll']}"
                  if c.get("busy_poll_us") is not None else "-")
            print(f"{impl:<6} {mode:<8} {val(c, 'pps', '.3f', 1e6):>6} "
                  f"{val(c, 'sender_pps', '.2f', 1e6):>7} {val(c, 'sendto_per_s', '.0f'):>9} "
                  f"{val(c, 'frames_per_sendto', '.1f'):>9} {val(c, 'recvfrom_per_s', '.0f'):>10} "
                  f"{val(c, 'syscalls_per_frame', '.3f'):>8} {val(c, 'rx_ring_full_per_s', '.0f'):>10} "
                  f"{val(c, 'rx_fill_ring_empty_descs_per_s', '.0f'):>11} {bp:>9} "
                  f"{c.get('napi_id') if c.get('napi_id') is not None else '-':>4}")
    for key, c in counts.items():
        extra = []
        if "frames_per_busy_poll" in c:
            extra.append(f"{c['frames_per_busy_poll']:.1f} frames per poll that found any")
        for k in ("rx_bursts", "tx_bursts"):
            if k in c:
                extra.append(f"{k.replace('_', '-')} {c[k]}")
        if "veth_xdp_redirect_per_s" in c:
            extra.append(f"veth: {c['veth_xdp_packets_per_s'] / 1e6:.2f} Mpps into XDP, "
                         f"{c['veth_xdp_redirect_per_s'] / 1e6:.2f} Mpps to the socket")
        if extra:
            print(f"  {key}: " + "; ".join(extra))
for mode in ("rxonly", "fwd"):
    dp = res.get(f"dpdk_{mode}")
    if dp and "unsupported" in dp:
        print(f"  DPDK {mode}: no traffic; testpmd said:")
        for line in dp["unsupported"] or ["(nothing matching; see the logs)"]:
            print(f"    {line}")
print(f"\nJSON: {outdir}/afxdp-bench.json")
EOF
