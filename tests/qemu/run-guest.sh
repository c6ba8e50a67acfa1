#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run-guest.sh - run pagepool's in-guest tests (VFIO and e1000e; with the
# profiles below, soft-RoCE, two NUMA nodes or 1 GiB pages) inside a QEMU
# guest that has an IOMMU (the host may have no VFIO at all).
#
#   run-guest.sh [--keep] [--timeout S] [--rdma] [--numa] [--netns] [--gig] CACHE BIN... -- 'NAME CMD ARGS' ...
#
# CACHE   a directory (PP_QEMU_CACHE, or /var/cache/pagepool/qemu when
#         writable, take precedence) for the guest kernel (Debian's linux-image-*-amd64,
#         downloaded with apt-get and unpacked there on first use) and the
#         initramfs it builds.
# BIN     programs to put in the guest's /bin, with the shared libraries
#         ldd finds for them.
# 'NAME CMD ARGS'  one in-guest test each: the guest runs CMD ARGS and
#         prints "PPTEST NAME <exit status>"; 77 means skipped.
#
# The guest: q35 with an emulated Intel IOMMU (caching-mode so that VFIO can
# use it), two e1000e NICs on one QEMU hub (a wire between them), two e1000
# behind one PCIe-to-PCI bridge (one IOMMU group of two devices), a busybox
# initramfs whose init loads the vfio modules, binds both NICs to vfio-pci,
# runs the tests and powers off. TCG, not KVM: KVM guests hung here at boot
# and TCG is deterministic enough; a boot takes about 10 s.
#
# --rdma (opt-in; without it the guest is exactly the one above) adds
# soft-RoCE: the rdma_rxe modules and their dependencies, the iproute2
# `rdma` tool, libibverbs' rxe provider and its driver file. The kernel's
# e1000 that already drives the second e1000 of the shared group gets an
# IPv4 address and carries rxe0, whose port init waits to see ACTIVE; the
# tests find them in PP_TEST_NETDEV and PP_TEST_RDMA_DEV. The guest gets
# 4 GiB (with less, the boot-time 1 GiB reservation fails) and one 1 GiB
# hugepage reserved at boot (hugepagesz=1G hugepages=1) for tests that
# register a 1 GiB arena.
#
# --numa (opt-in too) gives the guest two NUMA nodes, each with one CPU and
# its own RAM (memory-backend-ram objects: QEMU 7.2's q35 refuses the old
# `-numa node,mem=`), and init reserves PP_GUEST_NODE_HUGEPAGES (default
# 64) 2 MiB hugepages on each node through the per-node sysfs file instead
# of the global one. libnuma needs nothing more than /sys and /proc, which
# init mounts anyway.
#
# --netns (opt-in too) is for the netns suite on the guest's kernel
# (Debian's own, older than most hosts'): the veth module, iproute2's `ip`
# (network namespaces, veth pairs), libxdp's BPF objects (its dispatcher),
# bpffs at /sys/fs/bpf for libxdp and the loopback up. XDP sockets and
# BPF are built into Debian's kernel.
#
# --gig (opt-in too) is for the 1 GiB page paths, which a host CPU without
# pdpe1gb never takes (TCG's -cpu max has it): PP_GUEST_1G_PAGES (default
# 2, what scripts/setup.sh reserves) 1 GiB pages reserved at boot, and
# init reserves 520 x 2 MiB (vmalloc_no_1g maps 1 GiB + 4 KiB on 2 MiB
# pages; 8 spare). 5 GiB of RAM: 3 GiB of it reserved, and the short case
# of vmalloc_no_1g maps 1 GiB of base pages beside them.
#
# Exit: 0 when every test passed or skipped (and at least one passed), 1
# when any failed or the guest did not finish, 77 (skipped, the reason on
# stdout) when QEMU, busybox or the kernel package cannot be had.
set -u

keep=0
timeout_s=240
rdma=0
numa=0
netns=0
gig=0
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=1; shift ;;
	--rdma) rdma=1; shift ;;
	--numa) numa=1; shift ;;
	--netns) netns=1; shift ;;
	--gig) gig=1; shift ;;
	--timeout) timeout_s=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: $0 [--keep] [--timeout S] [--rdma] [--numa] [--netns] [--gig] CACHE BIN... -- 'NAME CMD' ..." >&2; exit 2; }
cache=$1; shift
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
tests=("$@")

skip() { echo "SKIP: $*"; exit 77; }

qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found: apt-get install qemu-system-x86"
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox=$b; break; fi
done
[ -n "$busybox" ] || skip "no static busybox: apt-get install busybox-static"
command -v cpio >/dev/null || skip "cpio not found: apt-get install cpio"

# One kernel download per machine, not per build directory, where allowed.
if [ -n "${PP_QEMU_CACHE:-}" ]; then
	cache=$PP_QEMU_CACHE
elif mkdir -p /var/cache/pagepool/qemu 2>/dev/null && [ -w /var/cache/pagepool/qemu ]; then
	cache=/var/cache/pagepool/qemu
fi
mkdir -p "$cache" || skip "cannot create $cache"
cache=$(cd "$cache" && pwd)

# ---- the guest kernel: Debian's package, unpacked, never installed ----
kroot=$cache/kernel
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* 2>/dev/null | head -n1)
if [ -z "$vmlinuz" ]; then
	command -v apt-get >/dev/null || skip "no guest kernel in $kroot and no apt-get to fetch linux-image-amd64"
	# The metapackage names the current ABI's image package.
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	      sed -n 's/.*Depends: \(linux-image-[0-9][^ ]*-amd64\).*/\1/p' | head -n1)
	[ -n "$pkg" ] || skip "apt-cache knows no linux-image-amd64: run apt-get update"
	dl=$cache/download
	mkdir -p "$dl"
	if ! (cd "$dl" && apt-get download "$pkg" >/dev/null 2>&1); then
		skip "cannot download $pkg (apt-get download): no network or no apt sources"
	fi
	rm -rf "$kroot.tmp"
	dpkg-deb -x "$(ls "$dl"/"$pkg"_*.deb | head -n1)" "$kroot.tmp" ||
		skip "cannot unpack $pkg with dpkg-deb"
	rm -rf "$kroot" && mv "$kroot.tmp" "$kroot"
	rm -rf "$dl"
	vmlinuz=$(ls "$kroot"/boot/vmlinuz-* 2>/dev/null | head -n1)
	[ -n "$vmlinuz" ] || skip "$pkg has no vmlinuz"
fi
kver=${vmlinuz##*/vmlinuz-}
moddir=$kroot/lib/modules/$kver/kernel

# ---- the initramfs ----
work=$(mktemp -d "$cache/guest.XXXXXX")
cleanup() { [ $keep = 1 ] && echo "kept $work" || rm -rf "$work"; }
trap cleanup EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,lib,lib64,modules,proc,sys,dev,tmp,etc,run}
cp "$busybox" "$root/bin/busybox"

# Order matters: each needs the ones before it. vfio-pci-core appears in
# Linux 5.15; older kernels lack it and need only vfio-pci.
mods="virt/lib/irqbypass vfio/vfio vfio/vfio_iommu_type1 vfio/vfio_virqfd
      vfio/pci/vfio-pci-core vfio/pci/vfio-pci"
modlist=""
for m in $mods; do
	base=${m##*/}
	src=""
	for d in "$moddir/$m" "$moddir/drivers/$m"; do
		for ext in .ko .ko.xz .ko.zst; do
			[ -f "$d$ext" ] && src=$d$ext && break 2
		done
	done
	[ -n "$src" ] || continue
	case "$src" in
	*.xz) xz -dc "$src" > "$root/modules/$base.ko" || skip "cannot decompress $src (xz-utils)" ;;
	*.zst) zstd -qdc "$src" > "$root/modules/$base.ko" || skip "cannot decompress $src (zstd)" ;;
	*) cp "$src" "$root/modules/$base.ko" ;;
	esac
	modlist="$modlist $base"
done
case "$modlist" in *vfio-pci*) ;; *) skip "kernel $kver has no vfio-pci module" ;; esac
# The classic e1000 driver, loaded by init only for the shared-group test.
for ext in .ko .ko.xz; do
	src=$moddir/drivers/net/ethernet/intel/e1000/e1000$ext
	[ -f "$src" ] || continue
	case "$src" in
	*.xz) xz -dc "$src" > "$root/modules/e1000.ko" ;;
	*) cp "$src" "$root/modules/e1000.ko" ;;
	esac
	break
done

# Programs and the shared libraries they load, with the dynamic loader.
copy_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
		# A library of the build tree (found through the program's
		# RUNPATH, $ORIGIN/../../lib for tests) goes where the
		# loader looks by default too.
		case "$lib" in
		/lib/* | /lib64/* | /usr/lib/* | /usr/lib64/*) ;;
		*) cp -L "$lib" "$root/lib/" ;;
		esac
	done
}

# ---- the rdma profile: soft-RoCE modules, the rdma tool, the provider ----
rdma_mods=""
if [ $rdma = 1 ]; then
	# Each needs the ones before it (rdma_rxe: ib_uverbs, ib_core,
	# udp_tunnel, ip6_udp_tunnel; its ICRC uses crc32).
	for m in crypto/crc32_generic drivers/infiniband/core/ib_core \
		 drivers/infiniband/core/ib_uverbs net/ipv4/udp_tunnel \
		 net/ipv6/ip6_udp_tunnel drivers/infiniband/sw/rxe/rdma_rxe; do
		base=${m##*/} src=""
		for ext in .ko .ko.xz .ko.zst; do
			[ -f "$moddir/$m$ext" ] && src=$moddir/$m$ext && break
		done
		case "$src" in
		"") [ $base = crc32_generic ] && continue # may be built in
		    skip "kernel $kver has no $base module" ;;
		*.xz) xz -dc "$src" > "$root/modules/$base.ko" || skip "cannot decompress $src (xz-utils)" ;;
		*.zst) zstd -qdc "$src" > "$root/modules/$base.ko" || skip "cannot decompress $src (zstd)" ;;
		*) cp "$src" "$root/modules/$base.ko" ;;
		esac
		rdma_mods="$rdma_mods $base"
	done
	rdma_tool=$(command -v rdma) || skip "no rdma tool: apt-get install iproute2"
	cp -L "$rdma_tool" "$root/bin/rdma" && copy_libs "$rdma_tool"
	provider=$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n1)
	[ -n "$provider" ] && [ -f /etc/libibverbs.d/rxe.driver ] ||
		skip "no soft-RoCE provider: apt-get install ibverbs-providers"
	mkdir -p "$root$(dirname "$provider")" "$root/etc/libibverbs.d"
	cp -L "$provider" "$root$provider" && copy_libs "$provider"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	echo "$rdma_mods" > "$root/etc/rdma"
fi
# ---- the netns profile: veth, ip, bpffs ----
if [ $netns = 1 ]; then
	src=""
	for ext in .ko .ko.xz .ko.zst; do
		[ -f "$moddir/drivers/net/veth$ext" ] && src=$moddir/drivers/net/veth$ext && break
	done
	case "$src" in
	"") grep -q '^CONFIG_VETH=y' "$kroot/boot/config-$kver" 2>/dev/null ||
	    skip "kernel $kver has no veth module" ;;
	*.xz) xz -dc "$src" > "$root/modules/veth.ko" || skip "cannot decompress $src (xz-utils)" ;;
	*.zst) zstd -qdc "$src" > "$root/modules/veth.ko" || skip "cannot decompress $src (zstd)" ;;
	*) cp "$src" "$root/modules/veth.ko" ;;
	esac
	echo "${src:+veth}" > "$root/etc/netns"
	ip_tool=$(command -v ip) || skip "no ip command: apt-get install iproute2"
	# Not /bin/ip: busybox installs its own applet there.
	mkdir -p "$root/usr/sbin"
	cp -L "$ip_tool" "$root/usr/sbin/ip" && copy_libs "$ip_tool"
	# libxdp loads its dispatcher from BPF objects that its package
	# installs beside the library (libxdp1): a real install has them.
	for o in /usr/lib/*/bpf/xdp-dispatcher.o /usr/lib/*/bpf/xsk_def_xdp_prog*.o; do
		[ -f "$o" ] || continue
		mkdir -p "$root$(dirname "$o")" && cp "$o" "$root$o"
	done
fi
# ---- the numa profile: init reserves hugepages on each node ----
if [ $numa = 1 ]; then
	echo "${PP_GUEST_NODE_HUGEPAGES:-64}" > "$root/etc/numa"
fi
# ---- the gig profile: init reserves the 2 MiB pages ----
if [ $gig = 1 ]; then
	echo 520 > "$root/etc/gig"
fi
for b in "${bins[@]}"; do
	[ -f "$b" ] || { echo "FAIL: $b not found"; exit 1; }
	cp -L "$b" "$root/bin/"
	copy_libs "$b"
done
# glibc's pthread_cancel and exit unwinding dlopen libgcc_s.
gcc_s=$(ldconfig -p 2>/dev/null | awk '/libgcc_s.so.1 .*x86-64/{print $NF; exit}')
if [ -n "$gcc_s" ]; then mkdir -p "$root$(dirname "$gcc_s")"; cp -L "$gcc_s" "$root$gcc_s"; fi

{
	for t in "${tests[@]}"; do echo "$t"; done
} > "$root/etc/tests"

cat > "$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run && mkdir -p /var && ln -s /run /var/run
mkdir -p /dev/hugepages && mount -t hugetlbfs none /dev/hugepages
if [ -f /etc/numa ]; then
	for n in /sys/devices/system/node/node[0-9]*; do
		echo $(cat /etc/numa) > $n/hugepages/hugepages-2048kB/nr_hugepages
	done
	echo "PPGUEST numa nodes $(cat /sys/devices/system/node/online) hugepages-2M $(cat /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages | tr '\n' ' ')"
elif [ -f /etc/gig ]; then
	echo $(cat /etc/gig) > /proc/sys/vm/nr_hugepages
	echo "PPGUEST gig hugepages-1G $(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages 2>/dev/null || echo none) hugepages-2M $(cat /proc/sys/vm/nr_hugepages) $(grep MemTotal /proc/meminfo)"
else
	echo 64 > /proc/sys/vm/nr_hugepages
fi
for m in $(cat /etc/modules); do
	insmod /modules/$m.ko || echo "PPGUEST insmod $m failed"
done
# Both e1000e (8086:10d3) to vfio-pci, remembering their addresses.
: > /etc/nics
for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor)" = 0x8086 ] && [ "$(cat $d/device)" = 0x10d3 ] || continue
	echo ${d##*/} >> /etc/nics
	[ -e $d/driver ] && echo ${d##*/} > $d/driver/unbind
done
echo 8086 10d3 > /sys/bus/pci/drivers/vfio-pci/new_id
# Two e1000 (8086:100e) behind one PCIe-to-PCI bridge share an IOMMU
# group: the first goes to vfio-pci, the second to the kernel's e1000, so
# that group is not viable.
: > /etc/shared
for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor)" = 0x8086 ] && [ "$(cat $d/device)" = 0x100e ] && echo ${d##*/} >> /etc/shared
done
export PP_TEST_SHARED0=$(sed -n 1p /etc/shared) PP_TEST_SHARED1=$(sed -n 2p /etc/shared)
if [ -n "$PP_TEST_SHARED1" ] && [ -f /modules/e1000.ko ]; then
	echo vfio-pci > /sys/bus/pci/devices/$PP_TEST_SHARED0/driver_override
	echo $PP_TEST_SHARED0 > /sys/bus/pci/drivers_probe
	insmod /modules/e1000.ko
else
	PP_TEST_SHARED0= PP_TEST_SHARED1=
fi
sleep 1
export PP_TEST_NIC0=$(sed -n 1p /etc/nics) PP_TEST_NIC1=$(sed -n 2p /etc/nics)
echo "PPGUEST nics $PP_TEST_NIC0 $PP_TEST_NIC1 groups $(ls /dev/vfio | tr '\n' ' ')"
# The rdma profile: rxe0 over the kernel-driven e1000 of the shared group.
if [ -f /etc/rdma ]; then
	for m in $(cat /etc/rdma); do
		insmod /modules/$m.ko || echo "PPGUEST insmod $m failed"
	done
	export PP_TEST_NETDEV=$(ls /sys/bus/pci/devices/$PP_TEST_SHARED1/net 2>/dev/null | head -n1)
	export PP_TEST_RDMA_DEV=rxe0
	ip link set lo up
	ip addr add 10.11.0.1/24 dev $PP_TEST_NETDEV && ip link set $PP_TEST_NETDEV up &&
		rdma link add rxe0 type rxe netdev $PP_TEST_NETDEV ||
		echo "PPGUEST rdma setup failed (netdev '$PP_TEST_NETDEV')"
	for i in $(seq 40); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
		sleep 0.5
	done
	echo "PPGUEST rdma $PP_TEST_NETDEV rxe0 $(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null) hugepages-1G $(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages 2>/dev/null)"
fi
# The netns profile: veth, namespaces and libxdp's bpffs.
if [ -f /etc/netns ]; then
	for m in $(cat /etc/netns); do
		insmod /modules/$m.ko || echo "PPGUEST insmod $m failed"
	done
	# busybox sh runs its own ip applet for a bare "ip": the tests
	# call this one through PP_TEST_IP.
	export PP_TEST_IP=/usr/sbin/ip
	mkdir -p /sys/fs/bpf /run/netns && mount -t bpf bpf /sys/fs/bpf
	ip link set lo up
	echo "PPGUEST netns kernel $(uname -r) bpffs $(grep -c ' /sys/fs/bpf ' /proc/mounts)"
fi
while read -r name cmd; do
	[ -n "$name" ] || continue
	echo "PPGUEST run $name: $cmd"
	dmesg -c > /dev/null
	sh -c "$cmd" 2>&1
	rc=$?
	echo "PPTEST $name $rc"
done < /etc/tests
poweroff -f
EOF
chmod +x "$root/init"
echo "$modlist" > "$root/etc/modules"

(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz" ||
	{ echo "FAIL: cannot build the initramfs"; exit 1; }

# ---- boot ----
log=$work/console.log
# 1 GiB pages are reserved at boot, where a free, aligned gigabyte is surest.
mem=1024 append_huge=""
[ $rdma = 1 ] && mem=4096 append_huge=" hugepagesz=1G hugepages=1"
[ $gig = 1 ] && mem=5120 append_huge=" hugepagesz=1G hugepages=${PP_GUEST_1G_PAGES:-2}"
# Two nodes of half the RAM each, one CPU each (node 0: cpu 0).
numa_args=()
if [ $numa = 1 ]; then
	half=$((mem / 2))
	numa_args=(-object memory-backend-ram,id=m0,size=${half}M
		   -numa node,nodeid=0,cpus=0,memdev=m0
		   -object memory-backend-ram,id=m1,size=${half}M
		   -numa node,nodeid=1,cpus=1,memdev=m1)
fi
timeout --foreground -k 5 "$timeout_s" "$qemu" \
	-machine q35,accel=tcg -cpu max -m $mem -smp 2 "${numa_args[@]}" \
	-device intel-iommu,intremap=on,caching-mode=on \
	-netdev hubport,id=p0,hubid=0 -device e1000e,netdev=p0,romfile= \
	-netdev hubport,id=p1,hubid=0 -device e1000e,netdev=p1,romfile= \
	-device pcie-pci-bridge,id=br0 \
	-netdev hubport,id=p2,hubid=1 -device e1000,bus=br0,addr=1,netdev=p2,romfile= \
	-netdev hubport,id=p3,hubid=1 -device e1000,bus=br0,addr=2,netdev=p3,romfile= \
	-kernel "$vmlinuz" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 intel_iommu=on quiet panic=-1$append_huge" \
	-nographic -no-reboot -nodefaults -serial stdio </dev/null > "$log" 2>&1
qrc=$?

# ---- results ----
# Echo the console for the test log, then one verdict per test.
tr -d '\r' < "$log"
failed=0 passed=0 skipped=0
for t in "${tests[@]}"; do
	name=${t%% *}
	rc=$(tr -d '\r' < "$log" | sed -n "s/^PPTEST $name \([0-9]*\)\$/\1/p" | tail -n1)
	if [ -z "$rc" ]; then
		echo "RESULT $name FAIL (no result: the guest stopped first, qemu exit $qrc)"
		failed=$((failed + 1))
	elif [ "$rc" = 0 ]; then
		echo "RESULT $name PASS"; passed=$((passed + 1))
	elif [ "$rc" = 77 ]; then
		echo "RESULT $name SKIP"; skipped=$((skipped + 1))
	else
		echo "RESULT $name FAIL (exit $rc)"; failed=$((failed + 1))
	fi
done
echo "guest: $passed passed, $failed failed, $skipped skipped"
[ $failed -gt 0 ] && exit 1
[ $passed -eq 0 ] && { echo "SKIP: every in-guest test skipped"; exit 77; }
exit 0
