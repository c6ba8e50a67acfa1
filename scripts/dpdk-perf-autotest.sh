#!/usr/bin/env bash
# dpdk-perf-autotest.sh - DPDK's own mempool_perf_autotest (dpdk-test)
# with the pagepool plugin loaded, ring_mp_mc and pagepool in one run.
#
# mempool_perf_autotest (DPDK 22.11) times each configuration for 5
# seconds and runs four sections in this order: a ring_mp_mc pool without
# cache; the same pool made with the default ops (rte_mbuf_best_mempool_ops(),
# which --mbuf-pool-ops-name=pagepool makes the pagepool driver), without
# cache; ring_mp_mc with a cache; with a user-owned cache. A section is 60
# configurations (get bulk 1/4/8/32 x put bulk 1/4/8/32 x n_keep
# 32/128/512, and again with a constant n where both bulks are equal) on
# 1, 2 and all lcores: 180 x 5 s, 15 minutes. The first two sections are
# the comparison: the same configurations on the same pool geometry,
# ring_mp_mc and pagepool, in one process. The binary fixes the 5 seconds
# and the order, so the pagepool lines start 15 minutes in whatever is
# done; the script stops dpdk-test once the pagepool section has done its
# one-lcore configurations (about 21 minutes in all), or its 2- and
# all-lcore ones too with PP_PERF_FULL=1 (31 minutes), or at
# PP_PERF_TIMEOUT seconds.
# Then it prints a table of the configurations both sections reached:
# objects per second for ring_mp_mc and pagepool, and their ratio.
#
# Needs root, dpdk-test (Debian's dpdk package), 2 CPUs and 64 free 2 MiB
# hugepages. Not a test: it checks no figure.
#
# usage: scripts/dpdk-perf-autotest.sh [librte_mempool_pagepool.so]
#   (default: build-test's, then build's)
#   PP_PERF_FULL     1: the pagepool section on 2 and all lcores too
#   PP_PERF_TIMEOUT  seconds before dpdk-test is stopped (default 2400)
#   PP_PERF_LCORES   the EAL's lcores (default -l0,1)
#   PP_PERF_OUT      where the raw log goes (default out/dpdk-perf-autotest)
set -uo pipefail
cd "$(dirname "$0")/.."

plugin=${1:-}
if [ -z "$plugin" ]; then
	for b in build-test build; do
		p=$b/drivers/mempool/dpdk/librte_mempool_pagepool.so
		[ -r "$p" ] && { plugin=$p; break; }
	done
fi
[ -n "$plugin" ] && [ -r "$plugin" ] ||
	{ echo "no plugin: build one (ninja -C build-test) or name it" >&2; exit 1; }
command -v dpdk-test >/dev/null ||
	{ echo "dpdk-test not found (apt-get install dpdk)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (hugepages)" >&2; exit 1; }

out=${PP_PERF_OUT:-out/dpdk-perf-autotest}
mkdir -p "$out"
log=$out/dpdk-test.log
# The EAL refuses a plugin under a world-writable directory.
priv=$(mktemp -d -p /run pagepool-perf.XXXXXX)
cp "$plugin" "$priv/plugin.so"
trap 'rm -rf "$priv"' EXIT

echo "dpdk-test mempool_perf_autotest, plugin $plugin, log $log"
echo "(the ring_mp_mc section takes 15 minutes, then pagepool's)"
start=$(date +%s)
# stdbuf: dpdk-test's stdout is a pipe here; see each line as it comes.
DPDK_TEST=mempool_perf_autotest timeout "${PP_PERF_TIMEOUT:-2400}" \
	stdbuf -oL dpdk-test ${PP_PERF_LCORES:--l0,1} --no-pci --no-telemetry \
	--in-memory -d "$priv/plugin.so" --mbuf-pool-ops-name=pagepool \
	</dev/null 2>&1 | {
	pp=0
	while IFS= read -r line; do
		case $line in
		"start performance test for"*) pp=1; echo "  $line" ;;
		"start performance test (with cache)"*)
			# Both sections done: stop dpdk-test.
			pkill -TERM -P $$ -x timeout 2>/dev/null
			break ;;
		"start performance test"*) echo "  $line" ;;
		*" cores=1 "*) ;;
		*rate_persec*)
			# The pagepool section's first line past one lcore.
			if [ $pp = 1 ] && [ "${PP_PERF_FULL:-0}" != 1 ]; then
				pkill -TERM -P $$ -x timeout 2>/dev/null
				break
			fi ;;
		esac
		printf '%s\n' "$line" >>"$log.tmp"
	done
	}
mv "$log.tmp" "$log"
echo "ran $(($(date +%s) - start)) s"

python3 - "$log" <<'EOF'
import re, sys
sec, rows = None, {}
for line in open(sys.argv[1]):
    if line.startswith("start performance test for"):
        sec = "pagepool"
    elif line.startswith("start performance test (without cache)"):
        sec = "ring_mp_mc"
    elif line.startswith("start performance test"):
        sec = None
    m = re.match(r"mempool_autotest (.*) rate_persec=(\d+)", line)
    if m and sec:
        rows.setdefault(m.group(1), {})[sec] = int(m.group(2))
keys = [k for k, v in rows.items() if len(v) == 2]
if not keys:
    sys.exit("no configuration reached by both sections")
print("| cores | get bulk | put bulk | n_keep | constant n | ring_mp_mc (M/s) | pagepool (M/s) | pagepool / ring |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
ratios = []
for k in keys:
    f = dict(kv.split("=") for kv in k.split())
    r, p = rows[k]["ring_mp_mc"], rows[k]["pagepool"]
    ratios.append(p / r)
    print(f"| {f['cores']} | {f['n_get_bulk']} | {f['n_put_bulk']} | {f['n_keep']} | {f['constant_n']} | {r / 1e6:.1f} | {p / 1e6:.1f} | {p / r:.2f} |")
ratios.sort()
n = len(ratios)
med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
print(f"\n{n} configurations in both sections; pagepool / ring_mp_mc: median {med:.2f}, min {ratios[0]:.2f}, max {ratios[-1]:.2f}")
EOF
