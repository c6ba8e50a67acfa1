#!/usr/bin/env bash
# setup.sh - prepare a Debian 12 machine for pagepool: the packages it
# builds, benchmarks and tests with, and hugepage reservations.
# Idempotent; it only ever raises reservations. Run as root.
#
#   setup.sh [--bench | --test] [--print-packages]
#
#   --bench           what scripts/run-bench.sh needs: the build, DPDK
#                     (testpmd, the mempool driver), gnuplot for the plot,
#                     the AF_XDP row (libxdp, libbpf, clang for the XDP
#                     program, iproute2 for the veth pairs and the netns),
#                     2 MiB hugepages and bpffs
#   --test            (the default) all of that, and what only the test
#                     suites need: QEMU and the tools that pack the guest's
#                     initramfs, rdma-core and libibverbs, clang's
#                     libFuzzer runtime and llvm; 1 GiB hugepages too
#   --print-packages  print the chosen set's Debian packages, one a line,
#                     and exit: nothing is installed or reserved, and
#                     root is not needed
#
#   PP_HUGEPAGES_2M  2 MiB pages to have reserved (default 1024 = 2 GiB)
#   PP_HUGEPAGES_1G  1 GiB pages to try to reserve (default 2 for --test,
#                    0 for --bench; a fragmented machine may give fewer,
#                    and the 1 GiB tests then skip)
set -euo pipefail

profile="test"
print_only=0
for arg in "$@"; do
	case $arg in
	--bench) profile=bench ;;
	--test) profile="test" ;;
	--print-packages) print_only=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0 ;;
	*)
		echo "setup: unknown argument '$arg' (--bench, --test, --print-packages)" >&2
		exit 2 ;;
	esac
done

# The benchmark: build, DPDK beside pagepool, the plot, the AF_XDP row
# (and perf and ethtool for scripts/afxdp-bench.sh's counter runs: the
# receivers' system calls, veth's XDP counters), libpcap for fwd --pcap.
bench_packages=(
	build-essential meson ninja-build pkg-config python3
	libnuma-dev
	dpdk-dev
	gnuplot-nox
	libxdp-dev libbpf-dev clang iproute2 linux-perf ethtool
	libpcap-dev
)
# Only the tests: the qemu and rdma suites' guests (QEMU, a static
# busybox, cpio, xz for the kernel's modules), the verbs DMA mode
# (rdma-core's libibverbs and its soft-RoCE provider), the fuzzers'
# libFuzzer and llvm-symbolizer, numactl for a look at the nodes, and
# procps for the vhost suite's pkill (a minimal Debian has none), tcpdump,
# which reads fwd --pcap's captures back, and tmux for pp-top's screen (a
# real terminal: tests/telemetry/check-pp-top.py); systemd for
# systemd-analyze, which verifies pagepool-hugepages.service (a container's
# Debian may have none); groff and man-db, which render the man pages and
# read their NAME lines as lintian does (tests/docs/check-man.py),
# shellcheck for the bash completions (tests/completion); debhelper,
# dpkg-dev, lintian and debootstrap build the Debian packages, lint them
# and make the fresh Debian root they are installed into
# (scripts/check-packages.sh).
test_packages=(
	"${bench_packages[@]}"
	numactl procps tcpdump tmux systemd
	groff-base man-db shellcheck
	debhelper dpkg-dev lintian debootstrap
	llvm libclang-rt-dev
	qemu-system-x86 busybox-static cpio xz-utils
	rdma-core libibverbs-dev ibverbs-providers
)
if [ $profile = bench ]; then
	packages=("${bench_packages[@]}")
	want_1g=${PP_HUGEPAGES_1G:-0}
else
	packages=("${test_packages[@]}")
	want_1g=${PP_HUGEPAGES_1G:-2}
fi
want_2m=${PP_HUGEPAGES_2M:-1024}

if [ $print_only = 1 ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

log() { printf 'setup: %s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	echo "setup: must run as root (packages and hugepage reservations)" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# This runs before anything is built, so it cannot use pp-hugepages;
# after a build, the same by hand (doc/hugepages.md), though -r sets the
# count where this only raises it:
#   pp-hugepages -r 1024 --pages -p 2M; pp-hugepages -r 2 --pages -p 1G
#   pp-hugepages                  (what the kernel gave, per node)
#   pp-hugepages --persistent     (the same at every boot)
# Raise a reservation to at least $2 pages; print what the kernel gave.
reserve() {
	local file=$1 want=$2 have
	have=$(cat "$file")
	if [ "$have" -lt "$want" ]; then
		echo "$want" >"$file" 2>/dev/null || true
		have=$(cat "$file")
	fi
	echo "$have"
}

h2=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
h1=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
if [ -w "$h2" ]; then
	got=$(reserve "$h2" "$want_2m")
	log "2 MiB hugepages reserved: $got (wanted $want_2m)"
else
	log "no 2 MiB hugepage support: hugepage tests will skip"
fi
if [ "$want_1g" -gt 0 ]; then
	if [ -w "$h1" ]; then
		got=$(reserve "$h1" "$want_1g")
		log "1 GiB hugepages reserved: $got (wanted $want_1g)"
		[ "$got" -ge "$want_1g" ] ||
			log "memory too fragmented for 1 GiB pages: those tests will skip"
	else
		log "no 1 GiB hugepage support: those tests will skip"
	fi
fi

# The af_xdp driver's libxdp keeps its state in bpffs (the driver mounts
# it too when it runs as root; mounting here makes it visible to tools).
if [ -d /sys/fs/bpf ] && ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf && log "mounted bpffs at /sys/fs/bpf" ||
		log "cannot mount bpffs at /sys/fs/bpf: af_xdp tests will skip"
fi
