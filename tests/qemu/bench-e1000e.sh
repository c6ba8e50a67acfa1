#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench-e1000e.sh - pagepool's e1000e driver against DPDK testpmd with its
# e1000 (em) driver, io forwarding between the same two e1000e NICs in one
# QEMU guest (TCG, emulated IOMMU, both NICs bound to vfio-pci), runs
# alternating pagepool / testpmd so that drifts of a shared host hit both.
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
bench=$build/tests/qemu/bench_e1000e
[ -x "$bench" ] || { echo "FAIL: $bench not built (ninja -C $build)"; exit 1; }

# testpmd: interactive commands on stdin. Throughput is what the second
# "show port stats" reports since the first, so EAL start-up time is not
# counted; the first show comes 8 s after start, which covers EAL init
# under TCG.
tp_cmd="{ echo 'start tx_first'; sleep 8; echo 'show port stats all'; sleep $secs; echo 'show port stats all'; echo stop; sleep 1; echo quit; } | dpdk-testpmd -l 0-1 -n 1 --iova-mode va --no-telemetry -d /bin/${e1000##*/} -d /bin/${ring##*/} -a \$PP_TEST_NIC0 -a \$PP_TEST_NIC1 -- -i --forward-mode=io --total-num-mbufs=8192 --rxq=1 --txq=1"
pp_cmd="bench_e1000e --warmup 2 --duration $secs"

tests=()
for i in $(seq 1 "$runs"); do
	tests+=("pagepool_$i $pp_cmd" "testpmd_$i $tp_cmd")
done
out=$(mktemp)
"$here/run-guest.sh" --timeout $((runs * (2 * secs + 30) + 60)) \
	"$build/tests/qemu/qemu-cache" "$bench" "$testpmd" "$e1000" "$ring" \
	-- "${tests[@]}" > "$out" 2>&1
rc=$?
[ $rc = 77 ] && { cat "$out"; rm -f "$out"; exit 77; }

# One figure per run: pagepool's own line; testpmd's Rx-pps of both ports
# in the last "show port stats" of the run.
tr -d '\r' < "$out" | awk '
/^PPGUEST run / { name = $3; sub(":", "", name); sum = 0; n = 0; next }
/^BENCH pagepool/ { split($3, kv, "="); print name, kv[2] }
/Rx-pps:/ { if (++n > 2) { n = 1; sum = 0 } sum += $2; if (n == 2) last[name] = sum }
END { for (k in last) print k, last[k] }' | python3 -c '
import json, statistics, sys
runs = int(sys.argv[1])
pps = dict((l.split()[0], float(l.split()[1])) for l in sys.stdin if l.strip())
a = [pps.get("pagepool_%d" % i, 0.0) for i in range(1, runs + 1)]
b = [pps.get("testpmd_%d" % i, 0.0) for i in range(1, runs + 1)]
for i in range(runs):
    print("run %d: pagepool %.0f pps, testpmd %.0f pps" % (i + 1, a[i], b[i]))
ma, mb = statistics.median(a), statistics.median(b)
r = ma / mb if mb else 0.0
print()
print("| forwarder (io, 2 x e1000e, TCG guest) | median pps | runs |")
print("|---|---|---|")
print("| pagepool e1000e | %.0f | %d |" % (ma, runs))
print("| DPDK testpmd, em PMD | %.0f | %d |" % (mb, runs))
print("| ratio pagepool / DPDK | %.3f | |" % r)
print(json.dumps({"bench": "e1000e_io_fwd", "runs": runs, "pagepool_pps": a,
                  "testpmd_pps": b, "pagepool_median_pps": ma,
                  "testpmd_median_pps": mb, "ratio": round(r, 4)}))
' "$runs"
if [ $rc != 0 ]; then
	echo "the guest run failed (exit $rc); its console:"
	cat "$out"
fi
rm -f "$out"
exit $rc
