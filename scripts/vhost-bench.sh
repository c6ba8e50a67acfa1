#!/usr/bin/env bash
# vhost-bench.sh - pagepool's virtio_user port against DPDK's own
# net_virtio_user, each as the device under test (DUT) behind the same
# vhost-user peer, runs alternated.
#
# The peer is dpdk-testpmd with a net_vhost port in flowgen mode: it
# generates frames of one size as fast as it can on CPU 1 and counts what
# comes back (its main lcore shares CPU 1 and wakes once a second to print
# the rates). The DUT forwards every frame back out of the port it came
# in on (loop topology), one core (CPU 0):
#   pp:   examples/fwd --port virtio_user:path=SOCK (one port: loop)
#   dpdk: dpdk-testpmd --vdev net_virtio_user0,path=SOCK io forwarding,
#         --port-topology=loop, its forwarding lcore on CPU 0 (its main
#         lcore sleeps on CPU 1)
# Both sides use --in-memory --single-file-segments (DPDK's virtio_user
# fails with "Too many memory regions" without single-file segments).
#
# Figures per run: the peer's received rate, the median of its per-second
# counts (testpmd --stats-period 1) while the DUT runs, less the first and
# last; and the DUT's cycles per forwarded frame: TSC cycles spent in polls
# that brought frames, divided by the frames (fwd's "cycles:" line;
# testpmd's --record-core-cycles "CPU cycles/packet"). A configuration's
# figure is the median of its runs. Frame sizes include the 4-byte FCS
# (testpmd --txpkts is the size without it); Gb/s counts the frame, and
# the line-rate columns are the packet rates of 10/25/40 GbE at that size
# (frame + 20 bytes of preamble and gap).
#
# The load average (/proc/loadavg) is printed before each size and at the
# end, and goes into the JSON: figures taken while other work ran are
# noise, and say so.
#
# Needs root, 2 MiB hugepages, dpdk-testpmd with net_vhost and
# net_virtio_user. Writes out/vhost-bench/ (logs, vhost-bench.json).
#
#   PP_VHOST_DURATION  seconds each DUT runs (default 5)
#   PP_VHOST_REPEAT    runs per configuration (default 3)
#   PP_VHOST_SIZES     frame sizes (default "64 128 512 1518")
#   PP_BUILD_DIR       build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_VHOST_DURATION:-5}
rep=${PP_VHOST_REPEAT:-3}
sizes=${PP_VHOST_SIZES:-64 128 512 1518}
build=${PP_BUILD_DIR:-build}
outdir=out/vhost-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.log "$outdir"/*.json
testpmd=$(command -v dpdk-testpmd || true)

step() { printf '==> %s\n' "$*"; }
die() { echo "vhost-bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (hugepages for testpmd): run it as root"
[ -n "$testpmd" ] || die "dpdk-testpmd not found: install DPDK (apt-get install dpdk)"
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building fwd"
ninja -C "$build" examples/fwd/fwd >"$outdir/build.log" 2>&1 ||
	{ tail -20 "$outdir/build.log"; die "fwd did not build"; }
fwd=$build/examples/fwd/fwd

sock=$(mktemp -u /tmp/pp-vhost-bench.XXXXXX.sock)
peer_pid=
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null || true
	rm -f "$sock"
}
trap cleanup EXIT

eal=(--no-pci --no-telemetry --in-memory --single-file-segments -m 512)

# The peer: flowgen on lcore 1, its log in $1, frames of $2 bytes. With
# --stats-period testpmd runs until SIGINT (peer_stop).
peer_start() {
	rm -f "$sock"
	timeout $((dur + 30)) "$testpmd" --lcores 0@1,1@1 --main-lcore 0 "${eal[@]}" \
		--file-prefix pp-vhost-peer \
		--vdev "net_vhost0,iface=$sock" -- \
		--forward-mode=flowgen --txpkts="$2" --nb-cores=1 \
		--stats-period 1 </dev/null >"$1" 2>&1 &
	peer_pid=$!
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		sleep 0.1
	done
	die "the peer made no socket in 10 s (see $1)"
}

peer_stop() {
	kill -INT "$peer_pid" 2>/dev/null || true
	wait "$peer_pid" 2>/dev/null || true
	peer_pid=
}

# Median of the numbers on stdin (one a line); "nan" when none.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "nan"; exit }
		printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The peer's per-second RX rates while the DUT ran: the non-zero seconds
# less the first and the last (partial) ones, when three or more are
# left; on a loaded machine the peer's main lcore prints less often.
peer_rate() {
	{ grep -o 'Rx-pps: *[0-9]*' "$1" || true; } | awk '{ print $2 }' |
		awk '$1 > 0 { v[++n] = $1 }
		END { lo = n >= 3 ? 2 : 1; hi = n >= 3 ? n - 1 : n
		      for (i = lo; i <= hi; i++) print v[i] }' | median
}

run_one() { # dut size run
	local dut=$1 size=$2 r=$3 len=$(($2 - 4))
	local plog=$outdir/peer-$dut-$size-$r.log dlog=$outdir/dut-$dut-$size-$r.log
	peer_start "$plog" "$len"
	sleep 1
	if [ "$dut" = pp ]; then
		timeout $((dur + 20)) "$fwd" --port "virtio_user:path=$sock" \
			--cpus 0 --duration "$dur" >"$dlog" 2>&1 || true
		cpp=$(sed -n 's/^cycles: \([0-9.]*\) per.*/\1/p' "$dlog")
	else
		(sleep $((dur + 1)); echo) | timeout $((dur + 20)) "$testpmd" \
			--lcores 0@1,1@0 --main-lcore 0 "${eal[@]}" \
			--file-prefix pp-vhost-dut \
			--vdev "net_virtio_user0,path=$sock,queues=1" -- \
			--forward-mode=io --port-topology=loop --nb-cores=1 \
			--record-core-cycles >"$dlog" 2>&1 || true
		cpp=$(sed -n 's/.*CPU cycles\/packet=\([0-9.]*\).*/\1/p' "$dlog" | tail -1)
	fi
	peer_stop
	pps=$(peer_rate "$plog")
	echo "$dut $size $r ${pps:-nan} ${cpp:-nan}" >>"$outdir/runs.txt"
	printf '   %-4s %5s B run %s: peer RX %8.3f Mpps, DUT %7s cycles/frame\n' \
		"$dut" "$size" "$r" "$(awk -v p="${pps:-0}" 'BEGIN { print p / 1e6 }')" "${cpp:-nan}"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(loadavg)
: >"$outdir/runs.txt"
for size in $sizes; do
	step "$size-byte frames, $rep alternated runs of ${dur} s (load average $(loadavg))"
	for r in $(seq "$rep"); do
		run_one pp "$size" "$r"
		run_one dpdk "$size" "$r"
	done
done

# ---- table and JSON ----
line() { # Mpps at line rate: gbps size
	awk -v g="$1" -v s="$2" 'BEGIN { printf "%.2f", g * 1e9 / ((s + 20) * 8) / 1e6 }'
}
printf '\n%6s | %9s %7s %9s | %9s %7s %9s | %6s %6s | %6s %6s %6s\n' \
	size "pp Mpps" "Gb/s" "cyc/pkt" "dpdk Mpps" "Gb/s" "cyc/pkt" \
	rate cycles "10G" "25G" "40G"
load_end=$(loadavg)
json="{\"duration_s\":$dur,\"repeat\":$rep,\"loadavg_start\":\"$load_start\",\"loadavg_end\":\"$load_end\",\"sizes\":["
first=1
for size in $sizes; do
	for dut in pp dpdk; do
		p=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $4 != "nan" { print $4 }' "$outdir/runs.txt" | median)
		c=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $5 != "nan" { print $5 }' "$outdir/runs.txt" | median)
		eval "pps_$dut=\$p cyc_$dut=\$c"
	done
	ratio=$(awk -v a="$pps_pp" -v b="$pps_dpdk" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
	cratio=$(awk -v a="$cyc_pp" -v b="$cyc_dpdk" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
	gb() { awk -v p="$1" -v s="$size" 'BEGIN { printf "%.2f", p * s * 8 / 1e9 }'; }
	printf '%6s | %9.3f %7s %9s | %9.3f %7s %9s | %6s %6s | %6s %6s %6s\n' \
		"$size" "$(awk -v p="$pps_pp" 'BEGIN { print p / 1e6 }')" "$(gb "$pps_pp")" "$cyc_pp" \
		"$(awk -v p="$pps_dpdk" 'BEGIN { print p / 1e6 }')" "$(gb "$pps_dpdk")" "$cyc_dpdk" \
		"$ratio" "$cratio" "$(line 10 "$size")" "$(line 25 "$size")" "$(line 40 "$size")"
	[ $first = 1 ] || json+=","
	first=0
	json+="{\"size\":$size,\"pp_pps\":$pps_pp,\"pp_cycles_per_packet\":$cyc_pp,"
	json+="\"dpdk_pps\":$pps_dpdk,\"dpdk_cycles_per_packet\":$cyc_dpdk,"
	json+="\"line_mpps\":{\"10G\":$(line 10 "$size"),\"25G\":$(line 25 "$size"),\"40G\":$(line 40 "$size")}}"
done
json+="]}"
echo "$json" >"$outdir/vhost-bench.json"
echo
echo "rate: pp / dpdk peer-received Mpps (higher is better); cycles: pp / dpdk cycles per frame (lower is better)"
echo "load average: $load_start at the start, $load_end at the end"
echo "JSON: $outdir/vhost-bench.json"
