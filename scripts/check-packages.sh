#!/usr/bin/env bash
# check-packages.sh - the Debian packages as a user gets them. Builds them
# from a scratch copy of this tree (dpkg-buildpackage -us -uc -b), runs
# lintian on the .changes (no error and no warning may remain), then
# installs them with apt into a fresh Debian 12 root made with debootstrap
# and there builds and runs README's snippet, the skeleton and
# dpdk-testpmd with the pagepool ops, reads man fwd, purges the packages
# and checks that nothing is left (scripts/check-packages-inside.sh). Run
# as root. About a minute and a half once build-deb/pristine exists; the
# first run also makes that (debootstrap, a few minutes).
#
# build-deb/ (git ignores build*/) is this script's own:
#   src/       the scratch copy; the .debs and .changes land beside it
#   pristine/  Debian 12 (minbase) with the check's own tools: a compiler,
#              pkg-config, man-db. Made once, kept between runs, and never
#              itself used: each run copies it to root/. (testpmd comes
#              later, in dpdk-dev: see check-packages-inside.sh.)
#   apt/       apt's download cache for the roots, kept between runs
#   root/      this run's root
#
#   PP_DEBIAN_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
#
# Exit: 0 passed, 1 failed, 77 skipped (not root, or no mirror reachable;
# the reason is printed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
src_root=$PWD
area=$src_root/build-deb
mirror=${PP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
# The pristine root's tools; a change to this list makes a new one.
tools=gcc,libc6-dev,pkg-config,man-db

fail() { echo "packages: FAIL: $*"; exit 1; }
skip() { echo "packages: SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mounts)"
for t in dpkg-buildpackage dh lintian debootstrap unshare; do
	command -v $t >/dev/null ||
		fail "$t not found: bash scripts/setup.sh --test installs it"
done
mkdir -p "$area/apt/partial"

# 1. Build, from a copy of what git tracks (and untracked files it does
# not ignore), so that no build of the checkout leaks into the packages.
rm -rf "$area/src"
mkdir -p "$area/src/pagepool"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -co --exclude-standard | tar --null -T - -cf - |
		tar -xf - -C "$area/src/pagepool"
else
	# A tree that is not a checkout (an unpacked archive): all but the
	# build folders, which .gitignore names build*/.
	tar --exclude='./build*' -cf - . | tar -xf - -C "$area/src/pagepool"
fi || fail "cannot copy the tree into $area/src"
echo "packages: dpkg-buildpackage -us -uc -b (log: $area/src/build.log)"
(cd "$area/src/pagepool" && dpkg-buildpackage -us -uc -b -Jauto) \
	>"$area/src/build.log" 2>&1 ||
	{ tail -40 "$area/src/build.log"; fail "dpkg-buildpackage failed (above)"; }
changes=$(find "$area/src" -maxdepth 1 -name "pagepool_*.changes" | head -1)
[ -n "$changes" ] || fail "dpkg-buildpackage made no .changes"
for d in "$area"/src/*.deb; do
	printf 'packages: built %s, %s bytes\n' "$(basename "$d")" "$(stat -c %s "$d")"
done

# 2. lintian: each accepted tag is an override in debian/ that says why.
if lintian -i --fail-on error,warning "$changes" >"$area/src/lintian.log" 2>&1; then
	echo "packages: ok: lintian $(basename "$changes"): no errors, no warnings"
	grep -E '^[IPX]:' "$area/src/lintian.log" || true
else
	cat "$area/src/lintian.log"
	fail "lintian reports errors or warnings (above)"
fi

# 3. The root. Without a mirror there is nothing to install from.
probe=$(mktemp)
if ! timeout 60 /usr/lib/apt/apt-helper download-file \
	"$mirror/dists/$suite/Release" "$probe" >/dev/null 2>&1; then
	rm -f "$probe"
	skip "cannot reach the Debian mirror $mirror (set PP_DEBIAN_MIRROR to one that works)"
fi
rm -f "$probe"

pristine=$area/pristine
if [ "$(cat "$pristine/.pp-tools" 2>/dev/null)" != "$tools" ]; then
	echo "packages: debootstrap $suite into $pristine (once; kept for later runs)"
	rm -rf "$pristine" "$pristine.new"
	debootstrap --variant=minbase --include="$tools" --cache-dir="$area/apt" \
		"$suite" "$pristine.new" "$mirror" >"$area/debootstrap.log" 2>&1 ||
		{ tail -20 "$area/debootstrap.log"; fail "debootstrap failed (above)"; }
	# A user's sources: the point releases' updates and security too.
	cat >"$pristine.new/etc/apt/sources.list" <<-EOF
	deb $mirror $suite main
	deb $mirror $suite-updates main
	deb http://security.debian.org/debian-security $suite-security main
	EOF
	# No daemon starts inside a chroot: invoke-rc.d asks this first.
	printf '#!/bin/sh\nexit 101\n' >"$pristine.new/usr/sbin/policy-rc.d"
	chmod 755 "$pristine.new/usr/sbin/policy-rc.d"
	echo "$tools" >"$pristine.new/.pp-tools"
	mv "$pristine.new" "$pristine"
fi

root=$area/root
# The mounts below live in a private namespace and end with it; a mount
# under root/ in ours would be someone else's, and rm -rf would go
# through it.
if findmnt -rn -o TARGET | grep -q "^$root\(/\|$\)"; then
	fail "something is mounted under $root: unmount it, then run again"
fi
rm -rf "$root"
cp -a "$pristine" "$root" || fail "cannot copy $pristine to $root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
check=$root/tmp/pp-check
mkdir -p "$check/debs"
# The packages a user installs; the -dbgsym ones are not among them.
find "$area/src" -maxdepth 1 -name '*.deb' ! -name '*-dbgsym_*' -exec cp {} "$check/debs/" \;
cp README.md examples/skeleton/skeleton.c tests/consumer/outside.sh \
	scripts/check-packages-inside.sh "$check/"

# In the root: its own /proc and /sys (EAL and pagepool read hugepage
# counts there), hugetlbfs (the host's reserved pages), a private
# /dev/shm, and apt's cache kept between runs.
# shellcheck disable=SC2016 # expanded by the inner shell, from its arguments
unshare --mount --propagation private -- bash -c '
	set -e
	r=$1 cache=$2
	mount -t proc proc "$r/proc"
	mount -t sysfs sysfs "$r/sys"
	mkdir -p "$r/dev/hugepages" "$r/dev/shm"
	mount -t hugetlbfs nodev "$r/dev/hugepages"
	mount -t tmpfs tmpfs "$r/dev/shm"
	mount --bind "$cache" "$r/var/cache/apt/archives"
	exec chroot "$r" /bin/bash /tmp/pp-check/check-packages-inside.sh
' _ "$root" "$area/apt"
rc=$?
case $rc in
0) echo "packages: passed" ;;
77) echo "packages: passed, with the checks marked SKIP above skipped" ;;
*) echo "packages: FAILED" ;;
esac
exit $rc
