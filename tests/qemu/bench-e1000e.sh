#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench-e1000e.sh - pagepool's forwarder (app/fwd) on its
# e1000e driver against DPDK testpmd with its e1000 (em) driver: io
# forwarding between the same two e1000e NICs, cabled to each other, in one
# QEMU guest (TCG, emulated IOMMU, both NICs bound to vfio-pci). Both start
# the traffic the same way (32 frames of 64 bytes on each port, testpmd's
# "start tx_first"; fwd --bidir --tx-first 32), forward every frame from
# one port to the other with one polling thread, and are measured after
# a warm-up. Runs alternate pagepool / testpmd so that drifts of a shared
# host hit both.
#
#   tests/qemu/bench-e1000e.sh BUILD_DIR [RUNS] [SECONDS]
#
# Needs what run-guest.sh needs, plus dpdk-testpmd and its e1000 and
# mempool_ring PMDs (Debian's dpdk package). Prints one line per run, a
# table of medians and their ratio, and a JSON line. Under TCG the absolute
# figures measure QEMU's device emulation; only the ratio means something.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: $0 BUILD_DIR [RUNS] [SECONDS]}
runs=${2:-5}
secs=${3:-10}

testpmd=$(command -v dpdk-testpmd) || { echo "SKIP: dpdk-testpmd not found (apt-get install dpdk)"; exit 77; }
pmd_dir=$(ls -d /usr/lib/x86_64-linux-gnu/dpdk/pmds-* 2>/dev/null | head -n1)
e1000=$(ls "$pmd_dir"/librte_net_e1000.so.* 2>/dev/null | head -n1)
ring=$(ls "$pmd_dir"/librte_mempool_ring.so.* 2>/dev/null | head -n1)
[ -n "$e1000" ] && [ -n "$ring" ] || { echo "SKIP: DPDK's e1000 or mempool_ring PMD not found"; exit 77; }
fwd=$build/app/fwd/fwd
[ -x "$fwd" ] || { echo "FAIL: $fwd not built (ninja -C $build)"; exit 1; }

# testpmd: interactive commands on stdin. Throughput is what the second
# "show port stats" reports since the first, so EAL start-up time is not
# counted; the first show comes 8 s after start, which covers EAL init
# under TCG.
tp_cmd="{ echo 'start tx_first'; sleep 8; echo 'show port stats all'; sleep $secs; echo 'show port stats all'; echo stop; sleep 1; echo quit; } | dpdk-testpmd -l 0-1 -n 1 --iova-mode va --no-telemetry -d /bin/${e1000##*/} -d /bin/${ring##*/} -a \$PP_TEST_NIC0 -a \$PP_TEST_NIC1 -- -i --forward-mode=io --total-num-mbufs=8192 --rxq=1 --txq=1"
# fwd: rates from the end of a 2 s warm-up (the ports are up before it
# starts); its JSON summary goes to the console.
pp_cmd="fwd --port e1000e:\$PP_TEST_NIC0 --port e1000e:\$PP_TEST_NIC1 --bidir --tx-first 32 --warmup 2 --duration $secs --arena-mb 32 --json /tmp/fwd.json && cat /tmp/fwd.json"

tests=()
for i in $(seq 1 "$runs"); do
	tests+=("pagepool_$i $pp_cmd" "testpmd_$i $tp_cmd")
done
out=$(mktemp)
"$here/run-guest.sh" --timeout $((runs * (2 * secs + 30) + 60)) \
	"$build/tests/qemu/qemu-cache" "$fwd" "$testpmd" "$e1000" "$ring" \
	-- "${tests[@]}" > "$out" 2>&1
rc=$?
[ $rc = 77 ] && { cat "$out"; rm -f "$out"; exit 77; }

# One figure per run: fwd's JSON summary (frames forwarded per second,
# both directions); testpmd's Rx-pps of both ports in the last
# "show port stats all" of the run.
tr -d '\r' < "$out" | python3 -c '
import json, re, statistics, sys
runs = int(sys.argv[1])
pps, name, rx = {}, None, []
for line in sys.stdin:
    m = re.match(r"PPGUEST run (\S+):", line)
    if m:
        name, rx = m.group(1), []
    elif name and line.startswith("{\"mode\""):
        pps[name] = float(json.loads(line)["pps"])
    elif name and "Rx-pps:" in line:
        rx.append(float(line.split()[1]))
        if len(rx) % 2 == 0:
            pps[name] = rx[-1] + rx[-2]
a = [pps.get("pagepool_%d" % i, 0.0) for i in range(1, runs + 1)]
b = [pps.get("testpmd_%d" % i, 0.0) for i in range(1, runs + 1)]
for i in range(runs):
    r = a[i] / b[i] if b[i] else 0.0
    print("run %d: pagepool %.0f pps, testpmd %.0f pps, ratio %.3f" % (i + 1, a[i], b[i], r))
ma, mb = statistics.median(a), statistics.median(b)
r = ma / mb if mb else 0.0
print()
print("| forwarder (io, 2 x e1000e, TCG guest) | median pps | min | max | runs |")
print("|---|---|---|---|---|")
print("| pagepool app/fwd, e1000e driver | %.0f | %.0f | %.0f | %d |" % (ma, min(a), max(a), runs))
print("| DPDK testpmd, em PMD | %.0f | %.0f | %.0f | %d |" % (mb, min(b), max(b), runs))
pr = statistics.median([x / y for x, y in zip(a, b) if y])
ahead = sum(1 for x, y in zip(a, b) if x > y)
print("| ratio of medians pagepool / DPDK | %.3f | | | |" % r)
print("| median of the pairs\x27 ratios | %.3f | | | |" % pr)
print("pagepool ahead in %d of %d pairs" % (ahead, runs))
print(json.dumps({"bench": "e1000e_io_fwd", "runs": runs, "seconds": float(sys.argv[2]),
                  "pagepool": "app/fwd --bidir --tx-first 32",
                  "pagepool_pps": a, "testpmd_pps": b, "pagepool_median_pps": ma,
                  "testpmd_median_pps": mb, "ratio": round(r, 4),
                  "median_pair_ratio": round(pr, 4), "pairs_ahead": ahead}))
if not all(a) or not all(b):
    print("some runs gave no figure: see the console below")
    sys.exit(1)
' "$runs" "$secs" || rc=1
if [ $rc != 0 ]; then
	echo "the guest run failed (exit $rc); its console:"
	cat "$out"
fi
rm -f "$out"
exit $rc
