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
#   pp:   app/fwd --port virtio_user:path=SOCK (one port: loop)
#   dpdk: dpdk-testpmd --vdev net_virtio_user0,path=SOCK io forwarding,
#         --port-topology=loop, its forwarding lcore on CPU 0 (its main
#         lcore sleeps on CPU 1)
# Both sides use --in-memory --single-file-segments (DPDK's virtio_user
# fails with "Too many memory regions" without single-file segments).
#
# Figures per run: the peer's received rate, read from its counters over
# DPDK telemetry (/ethdev/stats) at two instants inside the DUT's run:
# the window opens half a second after the first frame comes back and
# lasts PP_VHOST_DURATION - 2 seconds, timed on this side with a
# monotonic clock, so both DUTs are measured over the same kind of
# window and neither start-up nor shutdown falls in it. (testpmd's own
# --stats-period prints are no good here: it sleeps a second and prints
# only when a whole TSC "second" went by, and with a TSC estimated above
# the real clock that is every other time; a 2 s interval that straddles
# the connection then halved a run's rate.) And the DUT's cycles per
# forwarded frame: TSC cycles spent in polls that brought frames, divided
# by the frames (fwd's "cycles:" line; testpmd's --record-core-cycles
# "CPU cycles/packet"), and from it the DUT's busy share of its CPU
# (cycles per frame x rate / TSC Hz): a DUT well below 100% is not what
# limits the rate, the peer is, and the rate is then the peer's ceiling
# in that pairing. A configuration's figure is the median of its runs.
# Frame sizes include the 4-byte FCS (testpmd --txpkts is the size
# without it); Gb/s counts the frame, and the line-rate columns are the
# packet rates of 10/25/40 GbE at that size (frame + 20 bytes of
# preamble and gap).
#
# The load average (/proc/loadavg) is printed before each size and at the
# end, and goes into the JSON: figures taken while other work ran are
# noise, and say so.
#
# Needs root, 2 MiB hugepages, dpdk-testpmd with net_vhost and
# net_virtio_user, python3. Writes out/vhost-bench/ (logs, vhost-bench.json).
#
#   PP_VHOST_DURATION  seconds each DUT runs (default 5, at least 3)
#   PP_VHOST_REPEAT    runs per configuration (default 3)
#   PP_VHOST_SIZES     frame sizes (default "64 128 512 1518")
#   PP_BUILD_DIR       build directory (default build)
#   PP_VHOST_PP_ARGS   more devargs for pp's port (",frag=2048": RX into
#                      2 KiB fragments)
#   PP_VHOST_BASE_FWD  a second fwd binary (another commit's build, e.g.
#                      the one before a change): a third DUT, "base", run
#                      in the same rounds, alternated (pp, base, dpdk),
#                      and a before/after table (sizes up to 1518 only:
#                      an older fwd may not know --mtu)
#   PP_VHOST_MTU       the MTU for frames over 1518 bytes (default 9000)
#   PP_VHOST_DPDK_ARGS more testpmd arguments for DPDK's DUT (e.g.
#                      --mbuf-size=4224: 4 KiB buffers, as pp's pages)
#
# Jumbo frames (a size over 1518): pp's port gets fwd --mtu (mergeable
# RX buffers and indirect TX are negotiated from it); DPDK's
# net_virtio_user gets mrg_rxbuf=1 and testpmd --max-pkt-len (the MTU
# + 18) --enable-scatter (mbufs chained over its 2 KiB buffers); the peer
# takes 10 KiB mbufs, so that its flowgen frames are one segment. Cycles
# per frame count packets there (fwd's own line counts segments: its
# busy cycles are divided by the packets it delivered). After the
# rounds of such a size, one fwd --verify pass (numbered frames of that
# size looped through a testpmd io peer, every byte checked) says
# whether every frame came back intact.
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_VHOST_DURATION:-5}
[ "$dur" -ge 3 ] 2>/dev/null || { echo "vhost-bench: PP_VHOST_DURATION must be 3 or more (seconds)" >&2; exit 1; }
rep=${PP_VHOST_REPEAT:-3}
sizes=${PP_VHOST_SIZES:-64 128 512 1518}
build=${PP_BUILD_DIR:-build}
pp_args=${PP_VHOST_PP_ARGS:-}
base_fwd=${PP_VHOST_BASE_FWD:-}
jmtu=${PP_VHOST_MTU:-9000}
dpdk_args=${PP_VHOST_DPDK_ARGS:-}
[ -z "$base_fwd" ] || [ -x "$base_fwd" ] || { echo "vhost-bench: PP_VHOST_BASE_FWD=$base_fwd is not an executable" >&2; exit 1; }
outdir=out/vhost-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.log "$outdir"/*.json
testpmd=$(command -v dpdk-testpmd || true)

step() { printf '==> %s\n' "$*"; }
die() { echo "vhost-bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (hugepages for testpmd): run it as root"
[ -n "$testpmd" ] || die "dpdk-testpmd not found: install DPDK (apt-get install dpdk)"
command -v python3 >/dev/null || die "python3 reads the peer's counters over telemetry: apt-get install python3"
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/setup.log" 2>&1 ||
		{ cat "$outdir/setup.log"; exit 1; }
fi
step "building fwd"
ninja -C "$build" app/fwd/fwd >"$outdir/build.log" 2>&1 ||
	{ tail -20 "$outdir/build.log"; die "fwd did not build"; }
fwd=$build/app/fwd/fwd

sock=$(mktemp -u /tmp/pp-vhost-bench.XXXXXX.sock)
peer_pid=
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null || true
	rm -f "$sock"
}
trap cleanup EXIT

eal=(--in-memory --single-file-segments --no-pci -m 512)
telemetry=/var/run/dpdk/pp-vhost-peer/dpdk_telemetry.v2

# The peer: flowgen on lcore 1, its log in $1, frames of $2 bytes. With
# --stats-period testpmd runs until SIGINT (peer_stop); the period is
# long because the rate is read over telemetry (peer_window). The DUT
# runs with --no-telemetry.
peer_start() {
	# A socket left by a peer that was killed would pass the wait below.
	rm -f "$sock" "$telemetry"
	local big=()
	# Jumbo: one 10 KiB mbuf a frame (--mbuf-size before --txpkts,
	# which is checked against it).
	[ "$2" -le 1514 ] || big=(--mbuf-size=10240 --max-pkt-len=$((jmtu + 18)))
	timeout $((dur + 30)) "$testpmd" --lcores 0@1,1@1 --main-lcore 0 "${eal[@]}" \
		--file-prefix pp-vhost-peer \
		--vdev "net_vhost0,iface=$sock" -- "${big[@]}" \
		--forward-mode="${3:-flowgen}" --txpkts="$2" --nb-cores=1 \
		--stats-period 3600 </dev/null >"$1" 2>&1 &
	peer_pid=$!
	for _ in $(seq 100); do
		[ -S "$sock" ] && [ -S "$telemetry" ] && return 0
		sleep 0.1
	done
	die "the peer made no socket in 10 s (see $1)"
}

peer_stop() {
	kill -INT "$peer_pid" 2>/dev/null || true
	wait "$peer_pid" 2>/dev/null || true
	peer_pid=
}

# The peer's RX rate over a window inside the DUT's run: wait (up to 20
# s) for the first frames back, half a second more, then read ipackets
# at both ends of a $1-second window. Prints frames per second; nan when
# no frame came back, or when the count stopped moving right after the
# window (the DUT ended inside it).
peer_window() {
	python3 - "$telemetry" "$1" <<'EOF'
import json, socket, sys, time

path, window = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
for attempt in range(50):  # the socket file appears before it listens
    try:
        s.connect(path)
        break
    except OSError:
        time.sleep(0.1)
else:
    print("nan")
    sys.exit(0)
s.recv(16384)  # the greeting: version, pid, max_output_len


def rx():
    s.send(b"/ethdev/stats,0")
    return json.loads(s.recv(65536))["/ethdev/stats"]["ipackets"]


deadline = time.monotonic() + 20
while rx() == 0:
    if time.monotonic() > deadline:
        print("nan")
        sys.exit(0)
    time.sleep(0.05)
time.sleep(0.5)
t0, n0 = time.monotonic(), rx()
time.sleep(window)
t1, n1 = time.monotonic(), rx()
time.sleep(0.2)
print("nan" if rx() == n1 else "%.0f" % ((n1 - n0) / (t1 - t0)))
EOF
}

# Median of the numbers on stdin (one a line); "nan" when none.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "nan"; exit }
		printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

run_one() { # dut size run
	local dut=$1 size=$2 r=$3 len=$(($2 - 4)) dut_pid
	local plog=$outdir/peer-$dut-$size-$r.log dlog=$outdir/dut-$dut-$size-$r.log
	local mtu=() dpdk_big=() vdev_big=
	if [ "$len" -gt 1514 ]; then
		mtu=(--mtu "$jmtu")
		dpdk_big=(--max-pkt-len=$((jmtu + 18)) --enable-scatter)
		vdev_big=,mrg_rxbuf=1
	fi
	peer_start "$plog" "$len"
	if [ "$dut" = pp ] || [ "$dut" = base ]; then
		timeout $((dur + 20)) "$([ "$dut" = pp ] && echo "$fwd" || echo "$base_fwd")" \
			--port "virtio_user:path=$sock$pp_args" \
			--cpus 0 --duration "$dur" "${mtu[@]}" >"$dlog" 2>&1 &
	else
		(sleep $((dur + 1)); echo) | timeout $((dur + 20)) "$testpmd" \
			--lcores 0@1,1@0 --main-lcore 0 "${eal[@]}" --no-telemetry \
			--file-prefix pp-vhost-dut \
			--vdev "net_virtio_user0,path=$sock,queues=1$vdev_big" -- \
			$dpdk_args "${dpdk_big[@]}" \
			--forward-mode=io --port-topology=loop --nb-cores=1 \
			--record-core-cycles >"$dlog" 2>&1 &
	fi
	dut_pid=$!
	pps=$(peer_window $((dur - 2))) || pps=nan
	wait "$dut_pid" || true
	if [ "$dut" != dpdk ] && [ "$len" -gt 1514 ]; then
		# Per packet: busy cycles over the packets delivered.
		cpp=$(awk '/^summary:/ { for (i = 1; i <= NF; i++) if ($i ~ /^\([0-9]+$/) p = substr($i, 2) + 0 }
			/^cycles:/ { for (i = 1; i <= NF; i++) if ($i == "cycles,") c = $(i - 1) }
			END { if (p > 0 && c > 0) printf "%.1f", c / p }' "$dlog")
	elif [ "$dut" != dpdk ]; then
		cpp=$(sed -n 's/^cycles: \([0-9.]*\) per.*/\1/p' "$dlog")
	else
		cpp=$(sed -n 's/.*CPU cycles\/packet=\([0-9.]*\).*/\1/p' "$dlog" | tail -1)
		mhz=$(sed -n 's/.*at \([0-9]*\) MHz Clock.*/\1/p' "$dlog" | tail -1)
		[ -z "$mhz" ] || tsc_mhz=$mhz
	fi
	peer_stop
	echo "$dut $size $r ${pps:-nan} ${cpp:-nan}" >>"$outdir/runs.txt"
	printf '   %-4s %5s B run %s: peer RX %8.3f Mpps, DUT %7s cycles/frame\n' \
		"$dut" "$size" "$r" "$(awk -v p="${pps:-0}" 'BEGIN { print p / 1e6 }')" "${cpp:-nan}"
}

# Jumbo frames intact: fwd --tx-first 32 numbered frames of @1 bytes
# (less the FCS), --verify, looped through a testpmd io peer.
verify_one() {
	local size=$1 len=$(($1 - 4)) plog=$outdir/verify-peer-$1.log vlog=$outdir/verify-$1.log
	peer_start "$plog" "$len" io
	timeout 30 "$fwd" --port "virtio_user:path=$sock$pp_args" --cpus 0 \
		--duration 3 --mtu "$jmtu" --tx-first 32 --tx-len "$len" --verify \
		>"$vlog" 2>&1 || true
	peer_stop
	v=$(grep '^verify:' "$vlog" || echo "verify: no result (see $vlog)")
	printf '   %s B: %s\n' "$size" "$v"
	echo "$size $v" >>"$outdir/verify.txt"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
[ -z "$pp_args" ] || step "pp's port: virtio_user:path=SOCK$pp_args"
tsc_mhz=
load_start=$(loadavg)
: >"$outdir/runs.txt"
: >"$outdir/verify.txt"
for size in $sizes; do
	step "$size-byte frames, $rep alternated runs of ${dur} s (load average $(loadavg))"
	for r in $(seq "$rep"); do
		run_one pp "$size" "$r"
		[ -z "$base_fwd" ] || [ "$size" -gt 1518 ] || run_one base "$size" "$r"
		run_one dpdk "$size" "$r"
	done
	[ "$size" -le 1518 ] || verify_one "$size"
done

# ---- table and JSON ----
line() { # Mpps at line rate: gbps size
	awk -v g="$1" -v s="$2" 'BEGIN { printf "%.2f", g * 1e9 / ((s + 20) * 8) / 1e6 }'
}
# A figure for the JSON: null where there is none.
jnum() { if [ "$1" = nan ]; then echo null; else echo "$1"; fi; }
# The DUT's busy share of its CPU: cycles per frame x frames per second
# over the TSC rate (testpmd prints it; both DUTs run on this machine).
busy() { # cycles pps
	awk -v c="$1" -v p="$2" -v m="${tsc_mhz:-0}" 'BEGIN {
		if (m > 0 && c + 0 > 0 && p + 0 > 0) printf "%.0f", 100 * c * p / (m * 1e6); else print "nan" }'
}
printf '\n%6s | %9s %7s %8s %5s | %9s %7s %8s %5s | %6s %6s | %6s %6s %6s\n' \
	size "pp Mpps" "Gb/s" "cyc/pkt" busy% "dpdk Mpps" "Gb/s" "cyc/pkt" busy% \
	rate cycles "10G" "25G" "40G"
load_end=$(loadavg)
json="{\"duration_s\":$dur,\"pp_devargs\":\"$pp_args\",\"repeat\":$rep,\"tsc_mhz\":${tsc_mhz:-null},\"loadavg_start\":\"$load_start\",\"loadavg_end\":\"$load_end\",\"sizes\":["
first=1
for size in $sizes; do
	for dut in pp dpdk; do
		p=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $4 != "nan" { print $4 }' "$outdir/runs.txt" | median)
		c=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $5 != "nan" { print $5 }' "$outdir/runs.txt" | median)
		eval "pps_$dut=\$p cyc_$dut=\$c busy_$dut=\$(busy \$c \$p)"
	done
	ratio=$(awk -v a="$pps_pp" -v b="$pps_dpdk" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
	cratio=$(awk -v a="$cyc_pp" -v b="$cyc_dpdk" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
	gb() { awk -v p="$1" -v s="$size" 'BEGIN { printf "%.2f", p * s * 8 / 1e9 }'; }
	printf '%6s | %9.3f %7s %8s %5s | %9.3f %7s %8s %5s | %6s %6s | %6s %6s %6s\n' \
		"$size" "$(awk -v p="$pps_pp" 'BEGIN { print p / 1e6 }')" "$(gb "$pps_pp")" "$cyc_pp" "$busy_pp" \
		"$(awk -v p="$pps_dpdk" 'BEGIN { print p / 1e6 }')" "$(gb "$pps_dpdk")" "$cyc_dpdk" "$busy_dpdk" \
		"$ratio" "$cratio" "$(line 10 "$size")" "$(line 25 "$size")" "$(line 40 "$size")"
	[ $first = 1 ] || json+=","
	first=0
	json+="{\"size\":$size,\"pp_pps\":$(jnum $pps_pp),\"pp_cycles_per_packet\":$(jnum $cyc_pp),\"pp_busy_pct\":$(jnum $busy_pp),"
	json+="\"dpdk_pps\":$(jnum $pps_dpdk),\"dpdk_cycles_per_packet\":$(jnum $cyc_dpdk),\"dpdk_busy_pct\":$(jnum $busy_dpdk),"
	json+="\"line_mpps\":{\"10G\":$(line 10 "$size"),\"25G\":$(line 25 "$size"),\"40G\":$(line 40 "$size")}}"
done
json+="]"
# Before/after: pp against the base fwd, from the same rounds, with
# each one's spread (the lowest and highest run).
if [ -n "$base_fwd" ]; then
	printf '\nbefore/after (base: %s)\n%6s | %9s %17s | %9s %17s | %6s | %8s %8s %6s\n' \
		"$base_fwd" size "base Mpps" "base min-max" "pp Mpps" "pp min-max" rate \
		"base cyc" "pp cyc" cycles
	json+=",\"base\":[" first=1
	for size in $sizes; do
		[ "$size" -le 1518 ] || continue
		for dut in pp base; do
			p=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $4 != "nan" { print $4 }' "$outdir/runs.txt" | median)
			c=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $5 != "nan" { print $5 }' "$outdir/runs.txt" | median)
			mm=$(awk -v d=$dut -v s=$size '$1 == d && $2 == s && $4 != "nan" {
				if (n++ == 0 || $4 < lo) lo = $4; if ($4 > hi) hi = $4 }
				END { if (n) printf "%.3f-%.3f", lo / 1e6, hi / 1e6; else print "-" }' "$outdir/runs.txt")
			eval "pps_$dut=\$p cyc_$dut=\$c mm_$dut=\$mm"
		done
		ratio=$(awk -v a="$pps_pp" -v b="$pps_base" 'BEGIN { if (b + 0 > 0) printf "%.3fx", a / b; else print "-" }')
		cratio=$(awk -v a="$cyc_pp" -v b="$cyc_base" 'BEGIN { if (b + 0 > 0) printf "%.3fx", a / b; else print "-" }')
		printf '%6s | %9.3f %17s | %9.3f %17s | %6s | %8s %8s %6s\n' "$size" \
			"$(awk -v p="$pps_base" 'BEGIN { print p / 1e6 }')" "$mm_base" \
			"$(awk -v p="$pps_pp" 'BEGIN { print p / 1e6 }')" "$mm_pp" "$ratio" \
			"$cyc_base" "$cyc_pp" "$cratio"
		[ $first = 1 ] || json+=","
		first=0
		json+="{\"size\":$size,\"base_pps\":$(jnum $pps_base),\"base_cycles_per_packet\":$(jnum $cyc_base),\"pp_pps\":$(jnum $pps_pp),\"pp_cycles_per_packet\":$(jnum $cyc_pp)}"
	done
	json+="]"
fi
json+="}"
echo "$json" >"$outdir/vhost-bench.json"
[ ! -s "$outdir/verify.txt" ] || { echo; echo "jumbo frames under fwd --verify:"; sed 's/^/  /' "$outdir/verify.txt"; }
echo
echo "rate: pp / dpdk peer-received Mpps (higher is better); cycles: pp / dpdk cycles per frame (lower is better)"
echo "busy%: the DUT's share of its CPU (cycles per frame x rate / TSC); well below 100 the peer sets the rate"
echo "load average: $load_start at the start, $load_end at the end"
echo "JSON: $outdir/vhost-bench.json"
