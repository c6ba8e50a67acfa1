#!/usr/bin/env bash
# run-bench.sh - the main job: set up the machine, build pagepool in
# release mode and run the microbenchmarks (pagepool beside DPDK's
# rte_mempool in the same run). Results: a table on stdout, JSON in
# out/bench.json. Extra arguments go to pp-bench (see pp-bench --help).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
if [ ! -f build/build.ninja ]; then
	meson setup build -Dbuildtype=release >build.setup.log 2>&1 ||
		{ cat build.setup.log; exit 1; }
fi
echo "==> building"
ninja -C build >build.ninja.log 2>&1 || { tail -50 build.ninja.log; exit 1; }
mkdir -p out
echo "==> running build/app/pp-bench/pp-bench --json out/bench.json $*"
build/app/pp-bench/pp-bench --json out/bench.json "$@"
echo "==> JSON written to out/bench.json"
