#!/usr/bin/env bash
# fwd-bench.sh - the main job. Its headline compares like with like:
# io forwarding between two null ports in both directions on one core,
# pagepool's fwd --bidir against DPDK testpmd io-forward on two net_null
# ports, both counted as frames forwarded per second by that core (the
# sum of the two directions), in alternated runs. Beside it the seed's
# workload: null RX -> XDP-like REDIRECT into veth0 -> veth1 RX -> PASS
# to the stack, one core per side, with veth1's page_pool refilled by
# the single-page call, the bulk list and the bulk array; the same with
# bulk array refill where veth1 copies each frame into a fragment of its
# pool (frag=2048 and frag=auto on the veth pair); null -> null redirect
# in one direction (its own row: testpmd has no such mode); and, as root,
# AF_XDP RX and fwd's virtio_user port behind a testpmd net_vhost peer.
#
# Builds build/ (release) if needed, prints a table (also written to
# out/fwd-bench.txt), and writes out/fwd-bench.json and out/fwd-bench.png
# (with gnuplot). Each figure is the median of PP_FWD_REPEAT runs of
# PP_FWD_DURATION seconds; every configuration runs once per round, so
# that drift in machine load hits them alike.
#
#   PP_FWD_DURATION  seconds per run (default 3)
#   PP_FWD_REPEAT    rounds (default 5; at least 3 for the headline)
#   PP_BUILD_DIR     build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_FWD_DURATION:-3}
rep=${PP_FWD_REPEAT:-5}
build=${PP_BUILD_DIR:-build}
outdir=out/fwd-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.json "$outdir"/*.log
if [ "$rep" -lt 3 ]; then
	echo "fwd-bench: PP_FWD_REPEAT=$rep: the headline's ratio needs at least 3 alternated rounds" >&2
	exit 2
fi
# The load before anything of ours runs: the report prints it beside the
# load at the end.
read -r load_start _ </proc/loadavg

step() { printf '==> %s\n' "$*"; }

# ---- build ----
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building the forwarder"
targets=(app/fwd/fwd app/pp-bench/pp-bench)
ninja -C "$build" "${targets[@]}" >"$outdir/build.log" 2>&1 ||
	{ tail -40 "$outdir/build.log"; exit 1; }
fwd=$build/app/fwd/fwd

# ---- AF_XDP row (root, af_xdp built): fwd's RX on the near end of a veth
# pair whose far end is in a netns, where xdp_bench sends on CPU 1 ----
afxdp=0
if [ "$(id -u)" = 0 ] &&
	ninja -C "$build" tests/netns/xdp_bench >>"$outdir/build.log" 2>&1; then
	xns=ppfwd$$ xnear=ppfw$(( $$ % 100000 ))a xfar=ppfw$(( $$ % 100000 ))b
	trap 'ip link del "$xnear" >/dev/null 2>&1; ip netns del "$xns" >/dev/null 2>&1' EXIT
	ip netns add "$xns" &&
		ip link add "$xnear" type veth peer name "$xfar" netns "$xns" &&
		ip link set "$xnear" up && ip -n "$xns" link set "$xfar" up &&
		afxdp=1
fi
run_afxdp() { # name
	# The XDP live-frames source; AF_PACKET where the kernel lacks it
	# (before Linux 5.18).
	(taskset -c 1 "$build/tests/netns/xdp_bench" send-xdp "$xns" "$xfar" \
		$((dur + 2)) ||
	 taskset -c 1 "$build/tests/netns/xdp_bench" send "$xns" "$xfar" \
		$((dur + 2))) >"$outdir/$1.send.log" 2>&1 &
	run_fwd "$1" --port "af_xdp:$xnear" --port null0 --mode redirect
	wait
}

# ---- vhost-user row (root, dpdk-testpmd with net_vhost): fwd's one
# virtio_user port in the loop topology, a testpmd net_vhost flowgen peer
# sending 64-byte frames on CPU 1 (scripts/vhost-bench.sh compares with
# DPDK's own virtio_user) ----
vhost=0
if [ "$(id -u)" = 0 ] && command -v dpdk-testpmd >/dev/null &&
	{ ldconfig -p 2>/dev/null | grep -q librte_net_vhost ||
	  ls /usr/lib/*/dpdk/pmds-*/librte_net_vhost.so* >/dev/null 2>&1; }; then
	vhost=1
	vsock=/tmp/pp-fwd-bench-$$.sock
fi
run_vhost() { # name
	rm -f "$vsock"
	timeout --preserve-status -s INT -k 10 $((dur + 15)) dpdk-testpmd \
		--lcores 0@1,1@1 --main-lcore 0 --no-pci --no-telemetry \
		--in-memory --single-file-segments -m 256 \
		--file-prefix pp-fwd-bench-$$ --vdev "net_vhost0,iface=$vsock" \
		-- --forward-mode=flowgen --txpkts=60 --nb-cores=1 \
		--stats-period 1 </dev/null >"$outdir/$1.peer.log" 2>&1 &
	local peer=$!
	for _ in $(seq 100); do
		[ -S "$vsock" ] && break
		sleep 0.1
	done
	run_fwd "$1" --port "virtio_user:path=$vsock" --cpus 0
	# --stats-period: testpmd runs until SIGINT, not until its input ends.
	kill -INT "$peer" 2>/dev/null
	wait "$peer" 2>/dev/null
	rm -f "$vsock"
}

# ---- memory: fwd wants about 64 MiB of 2 MiB pages per run ----
free2m=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free2m:-0}" -lt 32 ]; then
	h2=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	if [ -w "$h2" ]; then
		step "reserving 32 more 2 MiB hugepages"
		echo $(( $(cat "$h2") + 32 - free2m )) >"$h2" 2>/dev/null || true
		free2m=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
	fi
	[ "${free2m:-0}" -ge 32 ] ||
		echo "warning: too few free 2 MiB hugepages ($free2m): fwd falls back to 4 KiB pages (slower; run scripts/setup.sh as root)" >&2
fi

# ---- testpmd io-forward on two net_null ports, one forwarding core ----
# With --stats-period testpmd runs until a signal (it ignores the end of
# its input): SIGINT after the run's time, which it handles by stopping
# the ports, printing its totals (with --record-core-cycles, the busy
# cycles per frame) and exiting 0; SIGKILL 10 s later if it hangs. About
# 2 s of its start-up report no traffic: 4 s more than a run, and the
# report takes the median of its full one-second periods. 256 MiB of EAL
# memory, no files in hugetlbfs.
testpmd=0
command -v dpdk-testpmd >/dev/null && testpmd=1
run_testpmd() { # name
	n=$((n + 1))
	step "[$n/$total] DPDK testpmd io-forward, net_null0 + net_null1, 1 forwarding core ($((dur + 4))s)"
	local rc=0
	timeout --preserve-status -s INT -k 10 $((dur + 4)) dpdk-testpmd \
		-l 0,1 --no-pci --in-memory -m 256 --vdev net_null0 \
		--vdev net_null1 --log-level=lib.eal:warning -- \
		--forward-mode=io --stats-period 1 --no-lsc-interrupt \
		--record-core-cycles </dev/null >"$outdir/$1.log" 2>&1 || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 130 ]; then
		echo "warning: testpmd exited $rc; see $outdir/$1.log" >&2
	fi
	grep -q 'Rx-pps' "$outdir/$1.log" ||
		echo "warning: testpmd gave no statistics; see $outdir/$1.log" >&2
}
[ $testpmd = 1 ] ||
	echo "note: dpdk-testpmd not installed (apt-get install dpdk): no DPDK column" >&2

# ---- runs ----
total=$(( rep * (7 + afxdp + vhost + testpmd) ))
n=0
run_fwd() { # name, then fwd arguments
	local name=$1
	shift
	n=$((n + 1))
	step "[$n/$total] fwd $* (${dur}s)"
	"$fwd" "$@" --duration "$dur" --json "$outdir/$name.json" |
		sed -u 's/^/    /'
}
for i in $(seq "$rep"); do
	for r in single list array; do
		run_fwd "pass-$r-$i" --port null0 --port veth0,peer=veth1 \
			--mode pass --refill "$r"
	done
	# Fragments on the receiving veth end only: its copy and PASS path,
	# the kernel's veth page_pool fragments (the sender stays a page per
	# frame, as a NIC's RX would be, so the row differs in one thing).
	for fr in 2048 auto; do
		run_fwd "fragpass-$fr-$i" --port null0 \
			--port "veth0,peer=veth1,frag=$fr" --mode pass \
			--refill array
	done
	run_fwd "redirect-null-$i" --port null0 --port null1 --mode redirect
	# The headline's pair, side by side in every round, which goes
	# first alternating from round to round.
	if [ $((i % 2)) = 1 ]; then
		run_fwd "bidir-null-$i" --port null0 --port null1 --bidir
		[ $testpmd = 0 ] || run_testpmd "testpmd-$i"
	else
		[ $testpmd = 0 ] || run_testpmd "testpmd-$i"
		run_fwd "bidir-null-$i" --port null0 --port null1 --bidir
	fi
	[ $afxdp = 0 ] || run_afxdp "afxdp-$i"
	[ $vhost = 0 ] || run_vhost "vhost-$i"
done

if [ -x "$build/app/pp-bench/pp-bench" ]; then
	step "pp-bench --quick: the allocation cost per page of each refill"
	"$build/app/pp-bench/pp-bench" --quick --no-dpdk --arena-mb 64 \
		--json "$outdir/pp-bench.json" >"$outdir/pp-bench.log" 2>&1 ||
		echo "warning: pp-bench failed; see $outdir/pp-bench.log" >&2
fi

# ---- report: the table, out/fwd-bench.{txt,json,png} ----
python3 scripts/fwd-bench-report.py "$outdir" "$dur" "$rep" "$load_start"
