#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pagepool's virtio_user port against DPDK's net_vhost (a back-end no one
# here wrote): testpmd forwards everything it receives back out of its
# vhost port (io forwarding, loop topology), fwd does the same on its side
# with --verify, so numbered frames circulate pagepool -> vhost ->
# pagepool and every one is checked at each pass through fwd and
# accounted for at the end (back intact exactly once, or counted as
# dropped). Then testpmd's own counters must balance too.
#
# usage: testpmd-vhost.sh <dpdk-testpmd> <fwd> <case>
#   case: client   fwd connects to testpmd's socket (64 and 1514 bytes),
#                  128 frames in flight: the loop runs near the
#                  benchmark's rates (8.7 Mpps at 64 bytes with a release
#                  build here),
#                  and still none may be lost
#         server   fwd listens (server=1), testpmd connects (client=1)
#         queues   two queue pairs on both sides
#         macswap  fwd --mac-swap, mergeable RX buffers on (mrg_rxbuf=1)
#         noinorder as client, without VIRTIO_F_IN_ORDER (in_order=0): the
#                  general path, which takes ids back one by one
#         peerdies testpmd is killed (SIGKILL) while frames flow: fwd's
#                  port notices and waits to reconnect, fwd runs on,
#                  closes its port cleanly and has every page back
#         restart  testpmd is killed and a new one started on the same
#                  socket, generating frames (flowgen): fwd's port
#                  reconnects by itself and the new one gets its frames
#                  back
#         frag     as client, RX buffers 2 KiB fragments (frag=2048):
#                  frames received into fragments go back out on TX
#                  from them (64 and 1514 bytes)
#         fragnoinorder  frag, without VIRTIO_F_IN_ORDER (the by-id RX)
#         fragrestart    restart with frag=2048: fragments out on the RX
#                  ring when the back-end dies go home from the
#                  reconnect thread, and the ring refills with fragments
#         jumbo    MTU 9000 on both sides (fwd --mtu 9000, testpmd
#                  --max-pkt-len 9018): mergeable RX buffers and indirect
#                  TX negotiated by the MTU; 9000- and 9018-byte frames
#                  (three or four buffers each way), and 64 and 1514
#                  among them at the same MTU
#         jumbonoinorder jumbo without VIRTIO_F_IN_ORDER (by id)
#         jumbofrag      jumbo with RX into 2 KiB fragments (frag=2048:
#                  five or six buffers a frame)
#         pcap     as client, fwd --pcap: the loop topology's capture,
#                  what goes back out of the port; tcpdump reads it back
#                  and every packet must be the generator's frame
#                  (tests/net/check-fwd-pcap.py), as many as fwd
#                  delivered (64 and 1514 bytes; a short run: every
#                  packet is read back)
#         pcapjumbo      pcap at MTU 9000, 9018-byte frames: multi-buffer
#                  packets, one record each
testpmd=$1
fwd=$2
case=$3

command -v "$testpmd" >/dev/null 2>&1 ||
	{ echo "SKIP: dpdk-testpmd not found (install dpdk)"; exit 77; }
[ -x "$fwd" ] || { echo "SKIP: $fwd is not built"; exit 77; }
# net_vhost is a plugin in DPDK's driver directory or linked in.
if ! ldconfig -p 2>/dev/null | grep -q librte_net_vhost &&
   ! ls /usr/lib/*/dpdk/pmds-*/librte_net_vhost.so* /usr/local/lib/*/dpdk/pmds-*/librte_net_vhost.so* >/dev/null 2>&1; then
	echo "SKIP: DPDK's net_vhost driver (librte_net_vhost) is not installed"
	exit 77
fi
[ "$(id -u)" = 0 ] || { echo "SKIP: testpmd with hugepages needs root"; exit 77; }
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
# testpmd's 256 MiB and fwd's arena (96 MiB for two queues).
[ "$free" -ge 192 ] ||
	{ echo "SKIP: fewer than 192 free 2 MiB hugepages (echo 512 > /proc/sys/vm/nr_hugepages)"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs two CPUs (testpmd's forwarding core and fwd's)"; exit 77; }

dir=$(mktemp -d)
sock=$dir/vhost.sock
tlog=$dir/testpmd.log
flog=$dir/fwd.log
tpid= fpid=
cleanup() {
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
fail() {
	echo "--- testpmd:"; tail -25 "$tlog"
	echo "--- fwd:"; tail -25 "$flog"
	echo "FAIL: $*"
	exit 1
}

queues=1 vhost_extra= fwd_extra= dev_extra= lens="64 1514" server=0 in_flight=32
duration=2 pcap=0 mtu=1500
testpmd_extra=
case $case in
client) in_flight=128 ;;
server) server=1; vhost_extra=",client=1"; dev_extra=",server=1"; lens=64 ;;
queues) queues=2; lens=64 ;;
macswap) fwd_extra="--mac-swap"; dev_extra=",mrg_rxbuf=1"; lens=512 ;;
noinorder) dev_extra=",in_order=0" ;;
peerdies|restart) lens=64 ;;
frag) dev_extra=",frag=2048" ;;
fragnoinorder) dev_extra=",frag=2048,in_order=0" ;;
fragrestart) dev_extra=",frag=2048"; lens=64 ;;
pcap|pcapjumbo)
	pcap=1 duration=0.001
	command -v tcpdump >/dev/null 2>&1 ||
		{ echo "SKIP: tcpdump not found (apt-get install tcpdump)"; exit 77; }
	if "$fwd" --port null0 --pcap / 2>&1 | grep -q "built without libpcap"; then
		echo "SKIP: fwd was built without libpcap (install libpcap-dev and rebuild)"
		exit 77
	fi
	if [ $case = pcapjumbo ]; then
		lens=9018 mtu=9000
		fwd_extra="--mtu 9000"
		testpmd_extra="--max-pkt-len=9018"
	fi
	;;
jumbo|jumbonoinorder|jumbofrag)
	lens="9000 9018 1514 64"
	fwd_extra="--mtu 9000"
	testpmd_extra="--max-pkt-len=9018"
	case $case in
	jumbonoinorder) dev_extra=",in_order=0" ;;
	jumbofrag) dev_extra=",frag=2048" ;;
	esac
	;;
*) echo "usage: $0 <testpmd> <fwd> client|server|queues|macswap|noinorder|peerdies|restart|frag|fragnoinorder|fragrestart|jumbo|jumbonoinorder|jumbofrag|pcap|pcapjumbo"; exit 2 ;;
esac
case $case in
frag*|jumbofrag) fwd_extra="$fwd_extra --json $dir/fwd.json" ;;
esac

# testpmd: the vhost port alone, io forwarding back out of it, main lcore
# 0 and one forwarding lcore 1; it runs until a line arrives on stdin.
# --no-flush-rx: testpmd empties its RX queues before it starts to
# forward, and would take fwd's first burst off the wire when fwd is
# connected by then (server mode).
start_testpmd() {
	local mode=${2:-io}

	(sleep "$1"; echo) | timeout 60 "$testpmd" -l 0,1 --no-pci \
		--no-telemetry --in-memory --single-file-segments -m 256 \
		--file-prefix "pp-vhost-$$" \
		--vdev "net_vhost0,iface=$sock,queues=$queues$vhost_extra" -- \
		--forward-mode="$mode" --port-topology=loop --nb-cores=1 --no-flush-rx \
		--rxq=$queues --txq=$queues $testpmd_extra >"$tlog" 2>&1 &
	tpid=$!
}

# With frag=, the RX pool handed out fragments (its frag_alloc in fwd's
# --json statistics).
frag_used() {
	case $dev_extra in
	*frag=*)
		set -- $(grep -o '"frag_alloc":[0-9]*' "$dir/fwd.json" | cut -d: -f2)
		[ "${1:-0}" -gt 0 ] ||
			fail "the RX pool handed out no fragments (frag_alloc ${1:-none})"
		echo "RX fragments handed out: $1"
		;;
	esac
}

# With MTU 9000 the port asked for, and got, mergeable RX buffers (bit
# 15) and indirect descriptors (bit 28): net_vhost logs the features.
jumbo_negotiated() {
	case $case in
	jumbo*)
		set -- $(sed -n 's/.*negotiated Virtio features: \(0x[0-9a-f]*\).*/\1/p' "$tlog" | tail -1)
		[ -n "$1" ] || fail "no 'negotiated Virtio features' line in testpmd's log"
		(( ($1 >> 15) & 1 && ($1 >> 28) & 1 )) ||
			fail "features $1 lack VIRTIO_NET_F_MRG_RXBUF or VIRTIO_RING_F_INDIRECT_DESC"
		echo "features $1: mergeable RX buffers, indirect descriptors"
		;;
	esac
}

wait_sock() {
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		sleep 0.1
	done
	fail "no socket at $sock after 10 s"
}

# The back-end dies mid-run: the port must survive it (no crash, no
# hang), say so, and give every page back. With restart, a new back-end,
# a flowgen generator this time, starts on the same socket: the port (the
# client) reconnects by itself and the new one gets back what it sends.
# Frames in the rings when the first died are lost, not leaked.
[ "$case" = fragrestart ] && case=restart
if [ "$case" = peerdies ] || [ "$case" = restart ]; then
	start_testpmd 10
	wait_sock
	"$fwd" --port "virtio_user:path=$sock$dev_extra" --tx-first 32 \
		--duration "$([ "$case" = restart ] && echo 9 || echo 4)" \
		--cpus 0 $fwd_extra >"$flog" 2>&1 &
	fpid=$!
	sleep 2
	# $tpid is timeout; its one child is testpmd, killed without a word.
	pkill -KILL -P "$tpid" || fail "no testpmd to kill"
	if [ "$case" = restart ]; then
		# Not waited for: the job also holds the first one's sleep.
		# The dead server's socket file stays; the new one binds
		# afresh.
		sleep 0.5
		rm -f "$sock"
		start_testpmd 4 flowgen
		wait_sock
		wait "$tpid"
		tpid=
	fi
	wait "$fpid"
	rc=$?
	fpid=
	grep -E "^(summary):" "$flog"
	[ $rc = 0 ] || fail "fwd exited with $rc after the back-end died"
	grep -q "pages leaked 0" "$flog" || fail "fwd leaked pages"
	frag_used
	grep -q "went away: its rings are emptied and the port reconnects" "$flog" ||
		fail "the port did not say the back-end was gone"
	if [ "$case" = restart ]; then
		set -- $(awk '/Accumulated forward statistics/ { acc = 1; next }
			acc && /RX-packets:/ { print $2; exit }' "$tlog")
		echo "the new back-end got back ${1:-0} frames"
		# What it gets back went through the reconnected port.
		[ "${1:-0}" -gt 1000 ] ||
			fail "the port did not reconnect: the new back-end got back only ${1:-0} frames"
	fi
	echo "ok"
	exit 0
fi

for len in $lens; do
	: >"$tlog"
	dev="virtio_user:path=$sock,queues=$queues$dev_extra"
	args=(--port "$dev" --queues "$queues" --tx-first "$in_flight" --tx-len "$len"
	      --verify --duration "$duration" --cpus 0 $fwd_extra)
	[ $pcap = 1 ] && args+=(--pcap "$dir/fwd-$len.pcap")
	if [ $server = 1 ]; then
		"$fwd" "${args[@]}" >"$flog" 2>&1 &
		fpid=$!
		wait_sock
		start_testpmd 6
	else
		start_testpmd 6
		wait_sock
		"$fwd" "${args[@]}" >"$flog" 2>&1 &
		fpid=$!
	fi
	wait "$fpid"
	rc=$?
	fpid=
	wait "$tpid"
	tpid=
	cat "$flog" | grep -E "^(verify|summary):"
	[ $rc = 0 ] || fail "fwd exited with $rc ($len-byte frames)"
	grep -q "^verify: .*: OK" "$flog" || fail "fwd --verify did not report OK"
	grep -q "pages leaked 0" "$flog" || fail "fwd leaked pages"
	frag_used
	jumbo_negotiated
	# fwd forwarded more than the first burst: the wire looped.
	set -- $(sed -n 's/^summary: .*(\([0-9]*\) frames).*/\1/p' "$flog")
	[ "${1:-0}" -gt 1000 ] || [ $pcap = 1 ] ||
		fail "only ${1:-0} frames went round in 2 s"
	if [ $pcap = 1 ]; then
		python3 "$(dirname "$0")/../net/check-fwd-pcap.py" \
			--file "$dir/fwd-$len.pcap" --len "$len" --log "$flog" \
			--snaplen $((mtu + 18)) || fail "the capture does not check ($len bytes)"
		rm -f "$dir/fwd-$len.pcap"
	fi
	# testpmd: everything it received went back or was counted.
	set -- $(awk '/Accumulated forward statistics/ { acc = 1; next }
		acc && /RX-packets:/ { rx = $2 }
		acc && /TX-packets:/ { tx = $2; drop = $4; print rx, tx, drop; exit }' "$tlog")
	[ -n "$1" ] || fail "no accumulated statistics from testpmd"
	echo "testpmd: RX $1, TX $2, TX dropped $3"
	[ "$1" -gt 0 ] && [ "$1" -eq $(($2 + $3)) ] ||
		fail "testpmd RX $1 != TX $2 + dropped $3"
done
echo "ok"
