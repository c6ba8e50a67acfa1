#!/usr/bin/env bash
# mempool-bench.sh - pagepool as a DPDK mempool driver, beside DPDK's own.
#
#  1. testpmd io-forward on two net_null ports, one forwarding core, with
#     the mbuf pool on ring_mp_mc, stack and pagepool ops. The three run
#     in turn within each round, the order rotating from round to round,
#     so that drift in machine load hits them alike. A run's figure is
#     the median of testpmd's per-second Rx-pps (both ports summed),
#     leaving out the first second (start-up); the table gives the median over rounds and
#     the median of the per-round ratios to ring_mp_mc.
#  2. The mempool_perf_autotest-style matrix (app/pp-mempool-perf):
#     lcores 1/2 x cache 0/512 x bulk 1/4/32/128, ring_mp_mc against
#     pagepool, alternating.
#  3. Bytes per object of pktmbuf pools under ring_mp_mc and pagepool
#     (pp-mempool-perf --memory), not a timing.
#
# Before/after: PP_MP_BASELINE=<another librte_mempool_pagepool.so> (an
# older build of the driver) adds a fourth testpmd entry, "pagepool-base",
# the same ops from that plugin, in the same rotation; and the matrix is
# run a second time with it, so that both builds' ratios to ring_mp_mc
# (the common yardstick) come from the same session.
#
# Builds the release build if needed; prints tables and writes
# testpmd.json, matrix.json and memory.json under out/mempool-bench
# (PP_MP_OUT). Needs root, DPDK
# (dpdk-dev and dpdk for testpmd), python3, two CPUs and about 100 free
# 2 MiB hugepages (about 220 for the memory table: a 256 MiB EAL heap
# and the largest pagepool arena, 155 MiB).
#
#   PP_MP_ROUNDS   testpmd rounds (default 5)
#   PP_MP_SECS     seconds per testpmd run (default 6)
#   PP_MP_RUNS     runs per matrix cell (default 5)
#   PP_MP_MS       milliseconds per matrix measurement (default 200)
#   PP_MP_CPUS     the two CPUs: main lcore, forwarding lcore (default 0,1)
#   PP_MP_BASELINE a second pagepool plugin to compare against (optional)
#   PP_MP_MBCACHE  testpmd's --mbcache (default: testpmd's own, 250); 0
#                  sends every mbuf allocation and free to the driver
#   PP_MP_SKIP_MATRIX=1  testpmd only (no matrix, no memory table)
#   PP_MP_OUT      where logs and JSON go (default out/mempool-bench)
#   PP_BUILD_DIR   build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${PP_MP_ROUNDS:-5}
secs=${PP_MP_SECS:-6}
runs=${PP_MP_RUNS:-5}
ms=${PP_MP_MS:-200}
cpus=${PP_MP_CPUS:-0,1}
build=${PP_BUILD_DIR:-build}
baseline=${PP_MP_BASELINE:-}
mbcache=${PP_MP_MBCACHE:-}
outdir=${PP_MP_OUT:-out/mempool-bench}
mkdir -p "$outdir"
rm -f "$outdir"/*.json "$outdir"/*.log

step() { printf '==> %s\n' "$*"; }
die() { echo "mempool-bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (the EAL maps hugepages)"
command -v python3 >/dev/null || die "python3 is needed for the tables (apt-get install python3)"
testpmd=$(command -v dpdk-testpmd || true)
[ -n "$testpmd" ] || die "dpdk-testpmd not found (apt-get install dpdk)"
pkg-config --exists libdpdk || die "DPDK headers not found (apt-get install dpdk-dev)"

# ---- build ----
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building the driver and pp-mempool-perf"
ninja -C "$build" drivers/mempool/dpdk/librte_mempool_pagepool.so \
	app/pp-mempool-perf/pp-mempool-perf >"$outdir/build.log" 2>&1 ||
	{ tail -40 "$outdir/build.log"; die "build failed (is DPDK found? see $build/meson-logs)"; }
plugin=$(realpath "$build/drivers/mempool/dpdk/librte_mempool_pagepool.so")
perf=$build/app/pp-mempool-perf/pp-mempool-perf

free2m=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages)
[ "$free2m" -ge 100 ] ||
	die "only $free2m free 2 MiB hugepages; 100 are needed (echo 1024 > /proc/sys/vm/nr_hugepages)"

# DPDK refuses plugins under a world-writable directory (a checkout in
# /tmp): load a private copy.
plugin_dir=$(mktemp -d -p /run pagepool-dpdk.XXXXXX)
cp "$plugin" "$plugin_dir/plugin.so"
plugin=$plugin_dir/plugin.so
trap 'rm -rf "$plugin_dir"' EXIT
ops_list=(ring_mp_mc stack pagepool)
if [ -n "$baseline" ]; then
	[ -r "$baseline" ] || die "PP_MP_BASELINE=$baseline is not readable"
	cp "$baseline" "$plugin_dir/base.so"
	ops_list+=(pagepool-base)
fi

# ---- testpmd ----
total=$(( rounds * ${#ops_list[@]} ))
n=0
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#ops_list[@]}; k++)); do
		ops=${ops_list[$(( (k + r) % ${#ops_list[@]} ))]}
		n=$((n + 1))
		log=$outdir/testpmd-$ops-$r.log
		step "[$n/$total] testpmd io-forward, mbuf pool ops $ops (${secs}s)"
		so=$plugin
		if [ "$ops" = pagepool-base ]; then
			so=$plugin_dir/base.so
			ops=pagepool
		fi
		# The plugin is loaded in every run, so the runs differ only in
		# the ops the pool uses. SIGINT makes testpmd stop and report.
		timeout -s INT "$secs" "$testpmd" -l "$cpus" --no-pci \
			--no-telemetry --in-memory -m 64 --socket-limit=64 \
			-d "$so" --vdev net_null0 --vdev net_null1 \
			--mbuf-pool-ops-name="$ops" -- --forward-mode=io \
			--nb-cores=1 --total-num-mbufs=8192 --stats-period 1 \
			${mbcache:+--mbcache="$mbcache"} \
			</dev/null >"$log" 2>&1 || true
		grep -q "preferred mempool ops selected: $ops" "$log" ||
			die "testpmd did not use $ops; see $log"
	done
done

python3 - "$outdir" "$rounds" "$secs" "$testpmd" "${mbcache:-250}" "${ops_list[@]}" <<'EOF'
import json, re, statistics, sys, glob, os, subprocess, datetime
outdir, rounds, secs, testpmd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
mbcache = int(sys.argv[5])
ops_list = sys.argv[6:]
pps = {o: [] for o in ops_list}
for o in ops_list:
    for r in range(rounds):
        text = open(f"{outdir}/testpmd-{o}-{r}.log", errors="replace").read()
        vals = [int(v) for v in re.findall(r"Rx-pps:\s+(\d+)", text)]
        # one value per port per period: sum the pairs, drop the first
        sums = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)][1:]
        if not sums:
            sys.exit(f"mempool-bench: no Rx-pps samples in testpmd-{o}-{r}.log")
        pps[o].append(statistics.median(sums))
ratios = {o: statistics.median([pps[o][r] / pps["ring_mp_mc"][r] for r in range(rounds)])
          for o in ops_list}
print()
print(f"testpmd io-forward, 2 x net_null, 1 forwarding core, mbuf cache {mbcache}; {rounds} rounds x {secs}s; Mpps (both ports), medians")
print(f"{'ops':<14} {'Mpps':>8} {'min':>8} {'max':>8} {'vs ring_mp_mc':>14}")
for o in ops_list:
    print(f"{o:<14} {statistics.median(pps[o]) / 1e6:8.2f} {min(pps[o]) / 1e6:8.2f} "
          f"{max(pps[o]) / 1e6:8.2f} {ratios[o]:13.2f}x")
print("per round (Mpps): " + "; ".join(
    "/".join(f"{pps[o][r] / 1e6:.1f}" for o in ops_list) for r in range(rounds))
    + f"  ({'/'.join(ops_list)})")
if "pagepool-base" in ops_list:
    nb = statistics.median([pps["pagepool"][r] / pps["pagepool-base"][r] for r in range(rounds)])
    print(f"pagepool / pagepool-base, median of per-round ratios: {nb:.2f}x")
out = {"date": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
       "testpmd": testpmd, "rounds": rounds, "secs": secs, "mbcache": mbcache,
       "pps": pps, "median_mpps": {o: statistics.median(pps[o]) / 1e6 for o in ops_list},
       "ratio_to_ring_mp_mc": ratios}
json.dump(out, open(f"{outdir}/testpmd.json", "w"), indent=1)
EOF

# ---- the matrix ----
if [ "${PP_MP_SKIP_MATRIX:-0}" = 1 ]; then
	echo "json: $outdir/testpmd.json"
	exit 0
fi
step "mempool_perf-style matrix ($runs runs x ${ms} ms per cell)"
echo
"$perf" -d "$plugin" --runs "$runs" --ms "$ms" --cores "$cpus" \
	--json "$outdir/matrix.json" 2>"$outdir/matrix.log" ||
	{ tail -20 "$outdir/matrix.log"; die "pp-mempool-perf failed"; }
if [ -n "$baseline" ]; then
	step "the same matrix with the baseline plugin ($baseline)"
	echo
	"$perf" -d "$plugin_dir/base.so" --runs "$runs" --ms "$ms" \
		--cores "$cpus" --json "$outdir/matrix-base.json" \
		2>"$outdir/matrix-base.log" ||
		{ tail -20 "$outdir/matrix-base.log"; die "pp-mempool-perf failed"; }
fi
step "bytes per object, ring_mp_mc and pagepool pktmbuf pools"
echo
"$perf" -d "$plugin" --memory --cores "$cpus" \
	--json "$outdir/memory.json" 2>"$outdir/memory.log" ||
	{ tail -20 "$outdir/memory.log"; die "pp-mempool-perf --memory failed"; }
echo
echo "note: a shared, noisy 2-core machine; compare ratios within this run, not across runs"
echo "json: $outdir/testpmd.json $outdir/matrix.json $outdir/memory.json"
