#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# testpmd io-forward on two net_null ports, one forwarding core, with its
# mbuf pool on the pagepool ops driver, for a few seconds; then the
# forwarded counts are checked: some packets moved, and every packet
# received was either sent or counted as a TX drop.
#
# usage: testpmd-fwd.sh <dpdk-testpmd> <librte_mempool_pagepool.so> [seconds]
testpmd=$1
plugin=$2
secs=${3:-3}

command -v "$testpmd" >/dev/null 2>&1 ||
	{ echo "SKIP: dpdk-testpmd not found (install dpdk)"; exit 77; }
[ -r "$plugin" ] || { echo "SKIP: the plugin $plugin is not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: testpmd with hugepages needs root"; exit 77; }
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
# 64 MiB of EAL heap plus a 4,096-object arena (16 MiB) and slack.
[ "$free" -ge 48 ] ||
	{ echo "SKIP: fewer than 48 free 2 MiB hugepages (echo 128 > /proc/sys/vm/nr_hugepages)"; exit 77; }
lcores=0,1
[ "$(nproc)" -ge 2 ] || { echo "SKIP: testpmd needs two CPUs (main and forwarding lcore)"; exit 77; }

log=$(mktemp)
# DPDK refuses plugins under a world-writable directory (a checkout in
# /tmp): load a private copy.
priv=$(mktemp -d -p /run pagepool-dpdk.XXXXXX)
cp "$plugin" "$priv/plugin.so"
plugin=$priv/plugin.so
trap 'rm -f "$log"; rm -rf "$priv"' EXIT
# Non-interactive testpmd forwards until a line arrives on stdin.
(sleep "$secs"; echo) | timeout 60 "$testpmd" -l $lcores --no-pci \
	--no-telemetry --in-memory -m 64 --socket-limit=64 \
	-d "$plugin" --vdev net_null0 --vdev net_null1 \
	--mbuf-pool-ops-name=pagepool -- \
	--forward-mode=io --nb-cores=1 --total-num-mbufs=4096 >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -30 "$log"
	echo "FAIL: testpmd exited with $rc"
	exit 1
fi
grep -q "preferred mempool ops selected: pagepool" "$log" ||
	{ tail -30 "$log"; echo "FAIL: testpmd did not select the pagepool ops"; exit 1; }

# The "Accumulated forward statistics" block: RX-packets, then TX-packets
# and TX-dropped on the next line.
set -- $(awk '/Accumulated forward statistics/ { acc = 1; next }
	acc && /RX-packets:/ { rx = $2 }
	acc && /TX-packets:/ { tx = $2; drop = $4; print rx, tx, drop; exit }' "$log")
rx=$1 tx=$2 drop=$3
echo "forwarded: RX $rx, TX $tx, TX dropped $drop in ${secs}s"
if [ -z "$rx" ] || [ -z "$tx" ] || [ -z "$drop" ]; then
	tail -30 "$log"
	echo "FAIL: no accumulated forward statistics in testpmd's output"
	exit 1
fi
[ "$rx" -gt 0 ] && [ "$tx" -gt 0 ] ||
	{ echo "FAIL: nothing was forwarded"; exit 1; }
[ "$rx" -eq $((tx + drop)) ] ||
	{ echo "FAIL: RX $rx != TX $tx + dropped $drop"; exit 1; }
if grep -q "still in use" "$log"; then
	grep "still in use" "$log"
	echo "FAIL: the pool was freed with objects outstanding"
	exit 1
fi
echo "ok"
