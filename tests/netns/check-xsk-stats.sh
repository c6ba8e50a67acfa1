#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-xsk-stats.sh XSK_STATS XDP_BENCH - scripts/xsk-stats.py, which
# scripts/afxdp-bench.sh uses to read the receivers' XDP sockets, against
# a real one: xdp_bench forwards on one end of a veth pair in a
# throwaway namespace while the other end sends, and the tool must find
# exactly that process's one XDP socket, with the kernel's counters
# (frames dropped for want of a fill buffer counted, none for a full RX
# ring: the driver holds the kernel to one ring's worth) and its
# busy-polling settings (none set). Then the operator's errors: no such
# process, no argument.
#
# Exit 77 (skipped, with the reason) without root, iproute2, veth or
# python3.
set -u
tool=$1
bench=$2
ns=ppxs$$
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, XDP programs)"
command -v ip >/dev/null || skip "no ip command: apt-get install iproute2"
command -v python3 >/dev/null || skip "no python3"
ip netns add $ns || skip "cannot create a network namespace (ip netns add)"
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; ip netns del $ns 2>/dev/null' EXIT INT TERM
ip -n $ns link add ppxsa type veth peer name ppxsb ||
	skip "cannot create a veth pair (kernel without veth?)"
ip -n $ns link set ppxsa up && ip -n $ns link set ppxsb up || exit 1

# fwd: the kernel's transmit holds the receiver below what the sender
# offers, so the kernel has frames it has no buffer for.
ip netns exec $ns "$bench" recv af_xdp:ppxsa fwd 4 >/dev/null 2>&1 &
pid=$!
sleep 1
# A second of traffic (the sender enters the namespace itself): the
# XDP live-frames source (Linux 5.18), else a packet socket. Whether the
# receiver keeps up or not, no drop may be for a full RX ring.
"$bench" send-xdp $ns ppxsb 1 64 >/dev/null 2>&1 ||
	"$bench" send $ns ppxsb 1 64 >/dev/null 2>&1 ||
	fail "neither sender ran"
out=$("$tool" $pid) || fail "xsk-stats.py $pid failed"
echo "$out"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
socks = d["sockets"]
assert len(socks) == 1, f"{len(socks)} XDP sockets, not 1"
s = socks[0]
for k in ("rx_dropped", "rx_invalid_descs", "tx_invalid_descs", "rx_ring_full",
          "rx_fill_ring_empty_descs", "tx_ring_empty_descs", "napi_id",
          "busy_poll_us", "prefer_busy_poll"):
    assert isinstance(s.get(k), int), f"{k}: {s.get(k)!r}"
assert s["rx_ring_full"] == 0, "frames dropped for a full RX ring"
assert s["rx_dropped"] == s["rx_fill_ring_empty_descs"], "drops other than an empty fill ring"
assert s["busy_poll_us"] == 0 and s["prefer_busy_poll"] == 0, "busy polling set"
' || fail "unexpected answer"
kill $pid 2>/dev/null
wait $pid 2>/dev/null
pid=

# A process that is gone, and no argument: a message and exit 1.
msg=$("$tool" 999999999 2>&1 >/dev/null) && fail "a missing process passed"
case $msg in *"no process 999999999"*) ;; *) fail "message: $msg" ;; esac
msg=$("$tool" 2>&1 >/dev/null) && fail "no argument passed"
case $msg in *"usage: xsk-stats.py PID"*) ;; *) fail "message: $msg" ;; esac
echo "xsk-stats: ok"
