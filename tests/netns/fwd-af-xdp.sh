#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# fwd-af-xdp.sh FWD - the example forwarder on two AF_XDP ports over a
# real wire: the two ends of a kernel veth pair (one queue each), in a
# throwaway network namespace. fwd injects 64 numbered frames and
# forwards them back and forth until 200000 have gone through; it checks
# every frame at every hop and exits 1 unless each came back exactly
# once, none dropped, every page back in the allocator.
#
# Then the same at MTU 9000 (both ends of the pair too), 9018-byte
# frames: multi-buffer AF_XDP, three descriptors a frame each way, on
# Linux 6.6 and later; before, the open must be refused with the message
# that says what to do (the QEMU guest's 6.1 takes that branch).
#
# Exit 77 (skipped, with the reason) without root, iproute2 or veth.
set -u
fwd=$1
# PP_TEST_IP names iproute2's ip where a busybox shell would run its own.
[ -n "${PP_TEST_IP:-}" ] && ip() { "$PP_TEST_IP" "$@"; }
ns=ppfwd$$
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, XDP programs)"
command -v ip >/dev/null || skip "no ip command: apt-get install iproute2"
ip netns add $ns || skip "cannot create a network namespace (ip netns add)"
trap 'ip netns del $ns 2>/dev/null' EXIT INT TERM
# No IPv6 chatter (router solicitations, MLD): the wire carries only
# fwd's frames, so anything else would count as damaged. Through
# /proc/sys: a minimal Debian has no sysctl (procps); a kernel without
# IPv6 has neither the files nor the chatter.
if [ -e /proc/sys/net/ipv6 ]; then
	ip netns exec $ns sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 &&
		echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6' || exit 1
fi
ip -n $ns link add ppfa type veth peer name ppfb ||
	skip "cannot create a veth pair (kernel without veth?)"
ip -n $ns link set ppfa up && ip -n $ns link set ppfb up || exit 1

out=$(ip netns exec $ns "$fwd" --port af_xdp:ppfa --port af_xdp:ppfb \
	--bidir --tx-first 32 --verify --count 200000 --duration 60 \
	--arena-mb 32 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || exit 1
echo "$out" | grep -q "dropped 0 .*missing 0: OK" || exit 1
echo "$out" | grep -q "pages leaked 0" || exit 1
# Nothing of ours stays on either end.
ip -n $ns link show ppfa | grep -q xdp && { echo "XDP program left on ppfa"; exit 1; }
ip -n $ns link show ppfb | grep -q xdp && { echo "XDP program left on ppfb"; exit 1; }

# MTU 9000: veth forwards a frame only up to the receiving end's MTU.
ip -n $ns link set ppfa mtu 9000 && ip -n $ns link set ppfb mtu 9000 || exit 1
out=$(ip netns exec $ns "$fwd" --port af_xdp:ppfa --port af_xdp:ppfb \
	--bidir --tx-first 32 --verify --count 50000 --duration 60 \
	--arena-mb 32 --mtu 9000 --tx-len 9018 2>&1)
rc=$?
echo "$out"
kver=$(uname -r)
kmaj=${kver%%.*}
kmin=${kver#*.}
kmin=${kmin%%.*}
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -ge 6 ]; }; then
	[ $rc = 0 ] || exit 1
	echo "$out" | grep -q "dropped 0 .*missing 0: OK" || exit 1
	echo "$out" | grep -q "pages leaked 0" || exit 1
else
	[ $rc != 0 ] || { echo "MTU 9000 opened on Linux $kver, which has no AF_XDP multi-buffer"; exit 1; }
	echo "$out" | grep -q "this kernel has no AF_XDP multi-buffer (XDP_USE_SG, Linux 6.6): run Linux 6.6 or later, or open the port with an MTU of at most 3822" ||
		{ echo "the refusal does not say what to do"; exit 1; }
fi
ip -n $ns link show ppfa | grep -q xdp && { echo "XDP program left on ppfa"; exit 1; }
ip -n $ns link show ppfb | grep -q xdp && { echo "XDP program left on ppfb"; exit 1; }
exit 0
