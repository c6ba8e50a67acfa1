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
#   PP_AFXDP_DURATION  seconds the sender runs per run (default 4)
#   PP_AFXDP_REPEAT    runs per configuration (default 5)
#   PP_AFXDP_SOURCE    xdp (default) or packet: the traffic source
#   PP_BUILD_DIR       build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_AFXDP_DURATION:-4}
rep=${PP_AFXDP_REPEAT:-5}
source=${PP_AFXDP_SOURCE:-xdp}
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
ip link set "$near" up
ip -n "$ns" link set "$far" up

have_dpdk=0
command -v dpdk-testpmd >/dev/null && have_dpdk=1
[ $have_dpdk = 1 ] || echo "afxdp-bench: dpdk-testpmd not found (apt-get install dpdk): pagepool only" >&2

# One run: receiver up on CPU 0, then the sender on CPU 1 for $dur s.
run_pp() { # mode log
	taskset -c 0 "$bench" recv "af_xdp:$near" "$1" $((dur + 3)) \
		>"$2.json" 2>"$2" &
	local pid=$!
	sleep 1
	taskset -c 1 "$bench" $send_cmd "$ns" "$far" "$dur" >"$2.send.json"
	wait $pid
}

run_dpdk() { # mode log
	local fwd=rxonly
	[ "$1" = fwd ] && fwd=macswap
	# Forwarding lcore 1 and main lcore 0 both on CPU 0: the main lcore
	# only prints statistics, once a second.
	timeout -s INT $((dur + 4)) dpdk-testpmd --lcores 0@0,1@0 --no-pci \
		--no-huge -m 512 --file-prefix "$ns" \
		--vdev "net_af_xdp0,iface=$near,start_queue=0,queue_count=1" -- \
		--forward-mode=$fwd --port-topology=loop --auto-start \
		--stats-period 1 --total-num-mbufs=16384 >"$2" 2>&1 &
	local pid=$!
	sleep 2
	taskset -c 1 "$bench" $send_cmd "$ns" "$far" "$dur" >"$2.send.json"
	wait $pid || true
}

total=$(( rep * 2 * (1 + have_dpdk) ))
n=0
for i in $(seq 1 "$rep"); do
	for mode in rxonly fwd; do
		# Alternate which one goes first, so drift hits both alike.
		order="pp dpdk"
		[ $((i % 2)) = 0 ] && order="dpdk pp"
		for impl in $order; do
			[ $impl = dpdk ] && [ $have_dpdk = 0 ] && continue
			n=$((n + 1))
			step "[$n/$total] $impl $mode (${dur}s)"
			"run_$impl" "$mode" "$outdir/$impl-$mode-$i.log"
		done
	done
done

python3 - "$outdir" "$rep" "$dur" "$source" <<'EOF'
import glob, json, re, statistics, sys
outdir, rep, dur, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

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

res = {}
for impl in ("pp", "dpdk"):
    for mode in ("rxonly", "fwd"):
        runs = sorted(glob.glob(f"{outdir}/{impl}-{mode}-*.log"))
        if not runs:
            continue
        pps = [series(r) for r in runs]
        src = [sent(r + ".send.json") for r in runs]
        res[f"{impl}_{mode}"] = {"runs": pps, "pps": statistics.median(pps),
                                 "sender_pps": statistics.median(src)}
res["repeat"] = rep
res["duration_s"] = dur
res["source"] = source
json.dump(res, open(f"{outdir}/afxdp-bench.json", "w"), indent=1)

print()
what = "an XDP live-frames" if source == "xdp" else "an AF_PACKET"
print(f"AF_XDP on a veth pair, 64-byte frames from {what} sender in a netns "
      f"(CPU 1), receiver on CPU 0; median of {rep} runs of {dur}s, runs alternated")
print(f"{'workload':<10} {'pagepool Mpps':>14} {'DPDK Mpps':>10} {'ratio':>7} {'sender Mpps (pp/dpdk)':>22}")
for mode in ("rxonly", "fwd"):
    pp = res.get(f"pp_{mode}")
    dp = res.get(f"dpdk_{mode}")
    if not pp:
        continue
    ratio = f"{pp['pps'] / dp['pps']:.2f}x" if dp and dp["pps"] else "-"
    dps = f"{dp['pps'] / 1e6:.3f}" if dp else "-"
    dsend = f"{dp['sender_pps'] / 1e6:.3f}" if dp else "-"
    print(f"{mode:<10} {pp['pps'] / 1e6:>14.3f} {dps:>10} {ratio:>7} "
          f"{pp['sender_pps'] / 1e6:>10.3f} / {dsend}")
print(f"\nJSON: {outdir}/afxdp-bench.json")
EOF
