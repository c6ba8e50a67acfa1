#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench-rdma.sh - messages per second of app/rdma_echo with receive
# buffers from page_pool (the arena registered once per segment) against
# the same program registering one MR per buffer (--naive), in one QEMU
# guest with soft-RoCE, alternating the two modes so that drift of the
# (shared, noisy) host hits both alike.
#
#   bench-rdma.sh [--rounds N] [--time S] [--sizes "64 4096"] [--json FILE] BUILD_DIR
#
# BUILD_DIR  a pagepool build (non-sanitizer) with app/rdma_echo.
# Prints a table (median msgs/s of each mode per size, the ratio of the
# medians, and the range) and one JSON line. A benchmark, not a test: it
# never fails on a figure. Soft-RoCE under TCG makes absolute rates
# meaningless; the ratio is what the comparison shows.
set -u

rounds=5 secs=3 sizes="256" json=""
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--time) secs=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--rounds N] [--time S] [--sizes \"S ...\"] [--json FILE] BUILD_DIR" >&2; exit 2; }
build=$1
here=$(cd "$(dirname "$0")" && pwd)
echo_bin=$build/app/rdma_echo/rdma_echo
[ -x "$echo_bin" ] || { echo "no $echo_bin: build pagepool with libibverbs-dev installed" >&2; exit 2; }

# One guest case per run: pool then naive in each round, per size.
cases=()
for r in $(seq "$rounds"); do
	for s in $sizes; do
		cases+=("pool_${s}_$r rdma_echo --time $secs --size $s --quiet")
		cases+=("naive_${s}_$r rdma_echo --naive --time $secs --size $s --quiet")
	done
done
n=${#cases[@]}
limit=$((n * (secs + 10) + 120))
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bash "$here/../qemu/run-guest.sh" --rdma --timeout "$limit" \
	"$build/tests/rdma/qemu-cache" "$echo_bin" -- "${cases[@]}" > "$out" 2>&1
rc=$?
if [ $rc = 77 ]; then grep '^SKIP' "$out"; exit 77; fi
grep -q '"ok": true' "$out" || { cat "$out"; echo "no successful run" >&2; exit 1; }
grep -q '"ok": false' "$out" && echo "warning: a run reported a failure; its figure is left out" >&2

# The JSON lines the guest printed, in run order.
table=$(tr -d '\r' < "$out" | grep '^{"mode"' | grep '"ok": true' | python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
sizes = sorted({r["size"] for r in rows})
print("| size (B) | page_pool msgs/s (median) | naive msgs/s (median) | ratio of medians | median of paired ratios | runs | pool range | naive range |")
print("|---:|---:|---:|---:|---:|---:|---|---|")
res = []
for s in sizes:
    p = [r["msgs_per_s"] for r in rows if r["size"] == s and r["mode"] == "pool"]
    q = [r["msgs_per_s"] for r in rows if r["size"] == s and r["mode"] == "naive"]
    if not p or not q:
        continue
    mp, mq = statistics.median(p), statistics.median(q)
    # Each pool run with the naive run right after it (same round).
    pr = statistics.median(a / b for a, b in zip(p, q))
    print(f"| {s} | {mp:,.0f} | {mq:,.0f} | {mp / mq:.2f}x | {pr:.2f}x | {len(p)}+{len(q)} | {min(p):,.0f}-{max(p):,.0f} | {min(q):,.0f}-{max(q):,.0f} |")
    res.append({"size": s, "pool_median": mp, "naive_median": mq,
                "ratio": round(mp / mq, 3), "paired_ratio": round(pr, 3),
                "pool": p, "naive": q})
print(json.dumps({"bench": "rdma_echo", "results": res}))
')
echo "$table"
[ -n "$json" ] && echo "$table" | tail -n1 > "$json"
exit 0
