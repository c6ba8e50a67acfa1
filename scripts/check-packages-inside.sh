#!/usr/bin/env bash
# check-packages-inside.sh - the half of scripts/check-packages.sh that
# runs inside the fresh Debian 12 root, as root, from the folder it was
# copied into with debs/ (the packages), README.md, skeleton.c and
# outside.sh (tests/consumer: README's snippet). What a user does:
# install the packages with apt, build README's snippet and the skeleton
# with pkg-config alone and run them, read a man page, purge everything
# and find nothing left behind; then run dpdk-testpmd with the pagepool
# ops.
# Prints one line per check; exits 1 if one failed, else 77 if one was
# skipped (its reason printed), else 0.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
# What a user's shell has: nothing that points at a prefix of ours.
unset PKG_CONFIG_PATH LD_LIBRARY_PATH LIBRARY_PATH CPATH
# shellcheck source=../tests/consumer/outside.sh
. ./outside.sh

failed=0 skipped=0
ok() { echo "packages: ok: $*"; }
bad() { echo "packages: FAIL: $*"; failed=1; }
skip() { echo "packages: SKIP: $*"; skipped=1; }

# Every path on the root's own file system but the scratch and state
# folders that installing and purging change by design (apt's lists and
# cache, dpkg's database, logs, this check's own folder under /tmp).
snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
		-o -path /tmp -o -path /root -o -path /var/cache -o -path /var/lib/apt \
		-o -path /var/lib/dpkg -o -path /var/log \) -prune -o -print | sort
}
snapshot >before.list

pkgs=$(for d in debs/*.deb; do dpkg-deb -f "$d" Package; done | tr '\n' ' ')
apt-get update -qq >apt.log 2>&1 || { cat apt.log; bad "apt-get update"; exit 1; }
# ./file.deb: apt takes the packages' dependencies from Debian.
if ! apt-get install -y -q --no-install-recommends ./debs/*.deb >>apt.log 2>&1; then
	tail -30 apt.log
	bad "apt-get install ./debs/*.deb"
	exit 1
fi
ok "apt installed ${pkgs% } and $(grep -c '^Setting up' apt.log) packages in all"

# 1. pkg-config alone: the .pc files are on its default path.
if flags=$(pkg-config --cflags --libs pagepool-drivers); then
	ok "pkg-config --cflags --libs pagepool-drivers: $flags"
else
	bad "pkg-config finds no pagepool-drivers without PKG_CONFIG_PATH"
fi

# build NAME SRC MODULE: cc with pkg-config's flags and nothing else; the
# program must find libpagepool through the system's library path (no
# run path, no LD_LIBRARY_PATH).
build() {
	# shellcheck disable=SC2046 # pkg-config's words are flags
	if ! cc -std=c11 -Wall -Wextra -Werror -o "$1" "$2" $(pkg-config --cflags --libs "$3"); then
		bad "$2 does not build with pkg-config --cflags --libs $3 (above)"
		return 1
	fi
	if readelf -d "$1" | grep -Eq 'RPATH|RUNPATH'; then
		bad "$1 has a run path: $(readelf -d "$1" | grep -E 'RPATH|RUNPATH')"
		return 1
	fi
	# The loader's path (under /lib or /usr/lib: merged /usr) must be
	# the file libpagepool0 installed.
	lib=$(ldd "$1" | awk '$1 == "libpagepool.so.0" { print $3 }')
	if ! dpkg -S "$(readlink -f "${lib:-none}")" 2>/dev/null | grep -q '^libpagepool0:'; then
		ldd "$1"
		bad "$1 does not load libpagepool.so.0 from the libpagepool0 package (above)"
		return 1
	fi
	ok "$2 built with pkg-config $3 alone; it loads $(readlink -f "$lib")"
}

free2m=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
# 2. README's snippet: 64 MiB of 2 MiB pages on node 0.
if ! readme_snippet README.md app.c; then
	bad "README.md has no \`\`\`c block"
elif build app app.c pagepool; then
	# The static library, with what pkg-config --static says it needs (the
	# -dev packages libpagepool-dev depends on must provide all of it).
	libdir=$(pkg-config --variable=libdir pagepool)
	# shellcheck disable=SC2046 # pkg-config's words are flags
	if cc -std=c11 -Wall -Wextra -Werror -o app-static app.c $(pkg-config --static --cflags pagepool) \
		"$libdir/libpagepool.a" $(pkg-config --static --libs-only-l pagepool | sed 's/-lpagepool\b//') &&
		! readelf -d app-static | grep -q 'libpagepool\.so'; then
		ok "app.c linked against $libdir/libpagepool.a with pkg-config --static's libraries"
	else
		bad "app.c does not link against $libdir/libpagepool.a (above)"
	fi
	if [ "$free2m" -lt 32 ]; then
		skip "README's snippet needs 32 free 2 MiB hugepages, $free2m are free (scripts/setup.sh reserves them)"
	elif out=$(./app 2>&1) && out=$out$'\n'$(./app-static 2>&1); then
		ok "README's snippet ran, shared and static: $(tr '\n' ' ' <<<"$out")"
	else
		echo "$out"
		bad "README's snippet exited with an error (above)"
	fi
fi

# 3. The skeleton forwards between two null ports for a second.
if build skeleton skeleton.c pagepool-drivers; then
	if [ "$free2m" -lt 32 ]; then
		skip "the skeleton needs free 2 MiB hugepages, $free2m are free"
	elif out=$(timeout 30 ./skeleton null0 null1 1 2>&1); then
		ok "skeleton ran on null0 null1: $(echo "$out" | tail -1)"
	else
		echo "$out"
		bad "skeleton null0 null1 1 failed (above)"
	fi
fi

# 4. The man page.
if ! dpkg -L pagepool-tools | grep -q '/man1/fwd\.1'; then
	skip "pagepool-tools has no man page for fwd: man fwd not checked"
elif page=$(MANWIDTH=80 man fwd 2>&1) && grep -q '^NAME' <<<"$page"; then
	ok "man fwd renders ($(wc -l <<<"$page") lines)"
else
	echo "$page" | head
	bad "man fwd does not render (above)"
fi

# 5. The boot unit: enabled by the install (the link systemd follows at
# boot), and its command, run as systemd would, succeeds on the file as
# shipped (which reserves nothing).
unit=/lib/systemd/system/pagepool-hugepages.service
if [ ! -e $unit ]; then
	bad "pagepool-tools installed no $unit"
elif [ "$(readlink -f /etc/systemd/system/multi-user.target.wants/pagepool-hugepages.service)" != "$(readlink -f $unit)" ]; then
	bad "the install did not enable pagepool-hugepages.service (no link in multi-user.target.wants)"
else
	cmd=$(sed -n 's/^ExecStart=//p' $unit)
	# shellcheck disable=SC2086 # the unit's words, as systemd splits them
	if out=$($cmd 2>&1); then
		ok "pagepool-hugepages.service is enabled; its ExecStart ($cmd) succeeds on the shipped file"
	else
		echo "$out"
		bad "pagepool-hugepages.service's ExecStart ($cmd) failed on the shipped file (above)"
	fi
fi

# 6. Purge: the packages, and what apt installed for them alone.
# shellcheck disable=SC2086 # one word per package
dpkg -L $pkgs 2>/dev/null | sort -u >owned.list
# shellcheck disable=SC2086
if ! apt-get purge -y -q --autoremove $pkgs >purge.log 2>&1; then
	tail -30 purge.log
	bad "apt-get purge $pkgs"
fi
snapshot >after.list
# Less the user database's backups (/etc/group- ...): shadow's tools
# write them when a dependency adds a system group (libibverbs1 adds
# "rdma"), and Debian keeps system groups after a purge, by policy.
left=$(comm -13 before.list after.list | grep -Ev '^/etc/(passwd|group|shadow|gshadow)-$')
gone=$(comm -23 before.list after.list)
if [ -n "$left" ]; then
	echo "$left" | head -30
	bad "after the purge, $(wc -l <<<"$left") paths are left that were not there before (above)"
fi
if [ -n "$gone" ]; then
	echo "$gone" | head -30
	bad "the install and purge removed $(wc -l <<<"$gone") paths that were there before (above)"
fi
if [ -e /etc/pagepool ]; then
	bad "/etc/pagepool is left after the purge"
fi
# shellcheck disable=SC2086
still=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $pkgs 2>/dev/null |
	awk 'substr($1, 2, 1) != "n"')
if [ -n "$still" ]; then
	echo "$still"
	bad "dpkg still has the packages above after the purge (state 'c': conffiles kept)"
fi
[ -n "$left$gone$still" ] || [ -e /etc/pagepool ] ||
	ok "purged: none of the $(wc -l <owned.list) paths the packages held, nor anything apt added for them, is left"

# 7. testpmd with the pagepool ops and no -d: the EAL must find the
# plugin in its own directory. Its debug log names each plugin it opens;
# without the plugin the pool cannot be created and testpmd exits.
# Last, after the purge check, and with the plugin's package alone:
# Debian 12 ships testpmd in dpdk-dev, which depends on the -dev packages
# libpagepool-dev needs, and would have hidden one missing from its
# Depends above.
if ! apt-get install -y -q --no-install-recommends dpdk-dev \
	./debs/librte-mempool-pagepool23_*.deb >dpdk.log 2>&1; then
	tail -30 dpdk.log
	bad "apt-get install dpdk-dev librte-mempool-pagepool23"
	exit 1
fi
ok "apt installed dpdk-dev (testpmd) and librte-mempool-pagepool23 alone"
plugin=$(dpkg -L librte-mempool-pagepool23 | grep '/librte_mempool_pagepool\.so$')
if [ "$(nproc)" -lt 2 ]; then
	skip "testpmd needs two CPUs (main and forwarding lcore)"
elif [ "$free2m" -lt 48 ]; then
	skip "testpmd needs 48 free 2 MiB hugepages, $free2m are free"
else
	# Non-interactive testpmd forwards until a line arrives on stdin.
	(sleep 3; echo) | timeout 60 dpdk-testpmd -l 0,1 --no-pci --no-telemetry \
		--in-memory -m 64 --log-level=lib.eal:debug \
		--vdev net_null0 --vdev net_null1 --mbuf-pool-ops-name=pagepool -- \
		--forward-mode=io --nb-cores=1 --total-num-mbufs=4096 >testpmd.log 2>&1
	rc=$?
	rx=$(awk '/Accumulated forward statistics/ { a = 1 } a && /RX-packets:/ { print $2; exit }' testpmd.log)
	if [ $rc -ne 0 ]; then
		tail -30 testpmd.log
		bad "dpdk-testpmd --mbuf-pool-ops-name=pagepool exited with $rc (above)"
	elif ! grep -q "open shared lib $plugin\$" testpmd.log; then
		grep 'open shared lib' testpmd.log | head
		bad "the EAL did not load $plugin by itself (the plugins it opened are above)"
	elif ! grep -q 'preferred mempool ops selected: pagepool' testpmd.log; then
		bad "testpmd did not create its pool with the pagepool ops"
	elif [ "${rx:-0}" -le 0 ]; then
		tail -30 testpmd.log
		bad "testpmd forwarded nothing on pagepool mbufs"
	else
		ok "dpdk-testpmd without -d loaded $plugin, took the pagepool ops and forwarded $rx packets"
	fi
fi

[ $failed = 0 ] || exit 1
[ $skipped = 0 ] || exit 77
exit 0
