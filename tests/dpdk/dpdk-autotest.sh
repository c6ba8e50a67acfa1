#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One of DPDK's own autotests (dpdk-test, from the dpdk package's test
# binary) with the pagepool plugin loaded and chosen as the mbuf pool
# ops, so that every pool the test gives the default ops to (including
# the ones it populates with anonymous or its own memory) runs on the
# pagepool driver. dpdk-test's DPDK_TEST mode runs one test and exits
# with its result: 0 passed, anything else failed.
#
# Skips (exit 77, with a SKIP: line) when dpdk-test is missing, without
# root, or when the EAL cannot get hugepages; any other failure fails.
#
# usage: dpdk-autotest.sh <dpdk-test> <librte_mempool_pagepool.so> <test name>
dpdk_test=$1
plugin=$2
name=$3

command -v "$dpdk_test" >/dev/null 2>&1 ||
	{ echo "SKIP: dpdk-test not found (install the dpdk package, which ships /usr/bin/dpdk-test)"; exit 77; }
[ -r "$plugin" ] || { echo "SKIP: the plugin $plugin is not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: dpdk-test with hugepages needs root"; exit 77; }
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
# Measured: mempool_autotest takes at most 15 pages (its own pools, the
# driver's arenas); 64 leaves room for other DPDK builds' larger sizes.
[ "$free" -ge 64 ] ||
	{ echo "SKIP: fewer than 64 free 2 MiB hugepages (echo 1024 > /proc/sys/vm/nr_hugepages)"; exit 77; }
# mempool_autotest's single-producer/single-consumer case needs a second
# lcore; on one CPU both lcores share it.
if [ "$(nproc)" -ge 2 ]; then
	lcores=-l0,1
else
	lcores="--lcores=0@0,1@0"
fi

log=$(mktemp)
# DPDK refuses plugins under a world-writable directory (a checkout in
# /tmp): load a private copy.
priv=$(mktemp -d -p /run pagepool-dpdk.XXXXXX)
cp "$plugin" "$priv/plugin.so"
trap 'rm -f "$log"; rm -rf "$priv"' EXIT
DPDK_TEST=$name timeout 300 "$dpdk_test" "$lcores" --no-pci --no-telemetry \
	--in-memory -d "$priv/plugin.so" --mbuf-pool-ops-name=pagepool \
	</dev/null >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ] && ! grep -q 'RTE>>' "$log" &&
	grep -qE 'Cannot init memory|Cannot get hugepage information|Not enough memory available|No free .*hugepages' "$log"; then
	# The EAL never reached the test: no memory for it.
	grep -E '^EAL' "$log" | tail -5
	echo "SKIP: the EAL could not get hugepage memory (another process may hold them; rerun)"
	exit 77
fi
# Logs go to the meson test log; the driver's messages are the ones to read.
grep -E 'pagepool|Test assert|failed|Test (OK|Failed|Skipped)' "$log" | tail -20
if [ $rc -ne 0 ]; then
	tail -30 "$log"
	echo "FAIL: $name exited with $rc"
	exit 1
fi
# A skipped autotest exits 0 too: not a pass.
if grep -q 'Test Skipped' "$log"; then
	echo "SKIP: dpdk-test skipped $name"
	exit 77
fi
grep -q 'Test OK' "$log" || { tail -30 "$log"; echo "FAIL: $name printed no result"; exit 1; }
echo "PASS: $name with the pagepool driver"
