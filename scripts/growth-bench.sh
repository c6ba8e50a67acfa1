#!/usr/bin/env bash
# growth-bench.sh - memory that follows the traffic (doc/benchmarks.md,
# "Growth"): runs `pp-bench growth` PP_GROWTH_REPEAT times (default 3),
# each run the three sides one after the other (pagepool with growth on,
# with growth off, DPDK's rte_mempool sized for the peak), about three
# and a half minutes a run with the default schedule. Prints each run's
# table and the medians over the runs, and writes
# doc/results/growth-bench.json (medians, ranges, each run's figures, the
# timeline of the median run) and doc/results/growth-bench.svg (hugepages
# held over time). Arguments are passed to pp-bench growth (--peak-rate,
# --schedule, --sides...; see pp-bench growth --help).
#
#   PP_GROWTH_REPEAT  runs (default 3)
#   PP_BUILD_DIR      build directory (default build)
#   PP_RESULTS_DIR    where the JSON and SVG go (default doc/results)
set -euo pipefail
cd "$(dirname "$0")/.."

rep=${PP_GROWTH_REPEAT:-3}
build=${PP_BUILD_DIR:-build}
results=${PP_RESULTS_DIR:-doc/results}
outdir=out/growth-bench
mkdir -p "$outdir" "$results"
rm -f "$outdir"/run-*.json "$outdir"/run-*.txt

if [ ! -f "$build/build.ninja" ]; then
	echo "==> configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
echo "==> building pp-bench"
ninja -C "$build" app/pp-bench/pp-bench >"$outdir/build.log" 2>&1 ||
	{ tail -40 "$outdir/build.log"; exit 1; }

read -r load_start _ </proc/loadavg
for r in $(seq "$rep"); do
	echo "==> run $r/$rep"
	"$build/app/pp-bench/pp-bench" growth --json "$outdir/run-$r.json" "$@" |
		tee "$outdir/run-$r.txt"
done
echo "load average at the start: $load_start"
python3 scripts/growth-bench-report.py "$outdir" \
	"$results/growth-bench.json" "$results/growth-bench.svg"
