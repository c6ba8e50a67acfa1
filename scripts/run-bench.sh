#!/usr/bin/env bash
# run-bench.sh - the main job: set up the machine (only what the
# benchmark needs: scripts/setup.sh --bench), build pagepool in
# release mode and run scripts/fwd-bench.sh: its headline is io
# forwarding between two null ports in both directions on one core,
# fwd --bidir beside DPDK testpmd io-forward in alternated runs; beside
# it the seed's workload (null RX -> REDIRECT into veth -> PASS on the
# peer, the RX page_pool refilled by single-page, bulk list and bulk
# array allocation). Prints the table; writes out/fwd-bench.txt,
# out/fwd-bench.json and out/fwd-bench.png. The allocator and page_pool
# microbenchmarks are build/app/pp-bench/pp-bench (doc/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --bench
exec bash scripts/fwd-bench.sh "$@"
