#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_hugepages.sh - pp-hugepages over a fake sysfs tree
# (PP_HUGEPAGES_ROOT): what it shows, what it writes, what it refuses.
#
#   test_hugepages.sh PP-HUGEPAGES [INSTALLED]
#
# PP-HUGEPAGES is the tool's test build, whose --mount and --unmount
# record mounts in the tree's /proc/mounts (fake_mount.c); INSTALLED, the
# tool itself, must refuse them under the fake root, nothing changed.
#
# The world (a fake tree, a victim outside it) and the helpers are
# world.sh's.
#
# Needs neither root nor hugepages. Exit 0 when every check passed.
set -u

bin=${1:?usage: test_hugepages.sh PP-HUGEPAGES [INSTALLED]}
installed=${2:-}
# shellcheck source=tests/hugepages/world.sh
. "$(dirname "$0")/world.sh"

# ---- --show and --json ----
run
check "show: node rows" sh -c "[ $rc -eq 0 ] &&
	grep -qE '^0 +2M +512 +500 +0 +12\$' '$W/out' &&
	grep -qE '^1 +2M +256 +200 +0 +56\$' '$W/out' &&
	grep -qE '^all +2M +768 +700 +0 +68\$' '$W/out' &&
	grep -qE '^0 +1G +2 +1 +0 +1\$' '$W/out' &&
	grep -qE '^1 +1G +0 +0 +0 +0\$' '$W/out'"
check "show: node without memory left out" sh -c "! grep -qE '^2 ' '$W/out'"
check "show: mounts with their page size" sh -c "
	grep -qE '^  /dev/hugepages +pagesize=2M\$' '$W/out' &&
	grep -qE '^  /mnt/huge gig +pagesize=1G\$' '$W/out'"
run -s --json -
if [ $rc -eq 0 ] && python3 - "$W/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = {(x["node"], x["page_size_kb"]): x for x in d["pages"]}
assert d["default_page_size_kb"] == 2048
assert p[(0, 2048)]["nr_hugepages"] == 512 and p[(0, 2048)]["free_hugepages"] == 500
assert p[(1, 1048576)]["nr_hugepages"] == 0
assert p[(None, 2048)]["in_use"] == 68
assert [m["dir"] for m in d["mounts"]] == ["/dev/hugepages", "/mnt/huge gig"]
assert [m["page_size_kb"] for m in d["mounts"]] == [2048, 1048576]
EOF
then ok "--json -"; else bad "--json -"; fi
run --json "$W/show.json"
check "--json FILE" sh -c "[ $rc -eq 0 ] && [ ! -s '$W/out' ] &&
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$W/show.json'"

# ---- --reserve ----
run -r 1G
check "-r 1G: 512 2 MiB pages machine-wide" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 512 ] &&
	grep -qF 'machine-wide: 512 2M pages reserved (768 before)' '$W/out'"
run -r 300 --pages -n 1
check "-r 300 --pages -n 1: node 1's count" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$N/node1/hugepages/hugepages-2048kB/nr_hugepages') = 300 ] &&
	[ \$(cat '$N/node0/hugepages/hugepages-2048kB/nr_hugepages') = 512 ]"
run --reserve 2GiB --pagesize 1G --node 0
check "--reserve 2GiB --pagesize 1G --node 0" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$N/node0/hugepages/hugepages-1048576kB/nr_hugepages') = 2 ]"
run -p 1g -r 3 --pages -n 1
check "-p 1g -r 3 --pages -n 1" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$N/node1/hugepages/hugepages-1048576kB/nr_hugepages') = 3 ]"

# Sizes, counts, nodes and page sizes it refuses, with nothing written.
for s in 3 1.5G -1G +1G ' 1G' '1G ' 1X 1GG 3M '' 0x10M 99999999999999999999G 18014398509481984G; do
	refused 2 'is not' -r "$s"
done
refused 2 'is not a page count' -r 1G --pages
refused 2 'is not a page count' -r -5 --pages
refused 2 'is not a page count' -r 12abc --pages
refused 2 'is not a multiple of the 1G page size' -r 512M -p 1G
refused 2 'no node 2 with hugepages: nodes here: 0, 1' -r 2M -n 2
refused 2 'no node 7' -r 2M -n 7
for n in x -1 '' 1x ' 1' 99999999999; do
	refused 2 'is not a node number' -r 2M -n "$n"
done
refused 2 'the kernel offers no 4M pages' -r 4M -p 4M
refused 2 'is not a size such as 2M or 1G' -r 6M -p 3M
refused 2 "option '-r' needs a value" -r
refused 2 'unknown option' --bogus
refused 2 'unexpected argument' -r 2M extra
refused 2 '-n goes with -r' -n 0
refused 2 '--pages goes with -r' --pages

# Not writable: a directory where the file should be (fails for root
# too), a file without write permission (for anyone but root), and a link
# out of the tree, which is not followed.
f=$N/node1/hugepages/hugepages-2048kB/nr_hugepages
mv "$f" "$W/saved"
mkdir "$f"
refused 1 "cannot write $f: Is a directory" -r 2M -n 1
rmdir "$f"
ln -s ../../../../../../../../victim "$f"
refused 1 "cannot write $f: Too many levels of symbolic links" -r 2M -n 1
check "link out of the tree: victim untouched" [ "$(cat "$V")" = 7 ]
rm "$f"
mv "$W/saved" "$f"
if [ "$(id -u)" != 0 ]; then
	chmod 0444 "$f"
	refused 1 'Permission denied: run as root' -r 2M -n 1
	chmod 0644 "$f"
else
	echo "skip not writable by permission: running as root"
fi

# The kernel gives fewer than asked: memory too fragmented.
f=$H/hugepages-1048576kB/nr_hugepages
rm "$f"
mkfifo "$f"
: > "$W/taken"
kernel "give $f 2" "take $f" "give $f 3"
run -r 8 --pages -p 1G
kernel_done
check "fewer than asked: said, with the fix" sh -c "[ $rc -eq 1 ] && [ $krc -eq 0 ] &&
	[ \"\$(cat '$W/taken')\" = 8 ] &&
	grep -qF 'machine-wide: the kernel gave 3 of the 8 1G pages asked for (2 before)' '$W/err' &&
	grep -qF 'Reserve them at boot' '$W/err' &&
	grep -qF 'pp-hugepages --persistent -r 8 --pages -p 1G' '$W/err'"
# Fewer than asked because pages are in use: said as such.
: > "$W/taken"
kernel "give $f 3" "take $f" "give $f 2"
run -r 0 --pages -p 1G
kernel_done
check "pages in use left: said" sh -c "[ $rc -eq 1 ] &&
	grep -qF '2 1G pages left, not the 0 asked for (3 before): the others are in use' '$W/err'"
rm "$f"
echo 2 > "$f"

# A 1 GiB write the kernel refuses with EINVAL on a CPU without pdpe1gb:
# the 1G directory exists in this tree only to reach the write. A
# directory in the file's place gives EISDIR, not EINVAL, so what is
# checked here is the refusal before any write when the size is missing.
mv "$H/hugepages-1048576kB" "$W/gig"
printf 'processor\t: 0\nflags\t\t: fpu pse lm\n' > "$R/proc/cpuinfo"
refused 2 'this CPU has no 1 GiB pages (no pdpe1gb flag); sizes here: 2M' -r 1G -p 1G
printf 'processor\t: 0\nflags\t\t: fpu pse pdpe1gb lm\n' > "$R/proc/cpuinfo"
refused 2 'the kernel offers no 1G pages' -r 1G -p 1G
mv "$W/gig" "$H/hugepages-1048576kB"

# ---- --persistent ----
snap > "$W/before"
run --persistent
snap > "$W/after"
check "--persistent: current reservation, nothing written" sh -c "[ $rc -eq 0 ] &&
	grep -qx 'vm.nr_hugepages = 512' '$W/out' &&
	grep -qx 'default_hugepagesz=2M hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=2' '$W/out' &&
	cmp -s '$W/before' '$W/after'"
run --persistent -r 4G -p 1G
check "--persistent -r 4G -p 1G: that reservation" sh -c "[ $rc -eq 0 ] &&
	grep -qx 'default_hugepagesz=2M hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=4' '$W/out' &&
	[ \$(cat '$H/hugepages-1048576kB/nr_hugepages') = 2 ]"
run --persistent -r 2M -n 1
check "--persistent -n: said to be machine-wide" sh -c "[ $rc -eq 0 ] &&
	grep -qx 'vm.nr_hugepages = 1' '$W/out' && grep -qF 'so -n 1 is not kept' '$W/out'"
refused 2 'give it alone' --persistent -c

# ---- more than the memory ----
# The machine has 16384000 kB (15.6 GiB), 90% of it 14745600 kB; each
# node half. Reserved now: 512 2M pages (1 GiB) and 2 1G pages
# machine-wide, 512 2M and 2 1G pages on node 0, 300 2M and 3 1G on
# node 1. A reservation counts the pages of the other size beside it.
cp -a "$R/sys" "$W/sys.saved"
big='more than the 15.6 GiB of memory this machine has (MemTotal in'
most='more than 90% of the 15.6 GiB of memory this machine has'
refused 2 "machine-wide: 52428800 2M pages are 100 TiB, 100.0 TiB with the 2 GiB already reserved in other page sizes, $big" -r 100T
refused 2 "$big" -r 100T --force
refused 2 "$big" -r 52428800 --pages
refused 2 "$big" -r 9223372036854775807 --pages -p 1G --force
refused 2 "$big $R/proc/meminfo): ask for less" -r 14G --force
refused 2 'with the 2 GiB already reserved in other page sizes' -r 14G
refused 2 'pages are 14 GiB, 15 GiB with the 1 GiB already reserved in other page sizes' -r 14G -p 1G
refused 2 "$most" -r 13G
refused 2 'or pass --force to reserve more than 90%' -r 13G
refused 2 "$most" --persistent -r 13G
refused 2 "$big" --persistent -r 100T
refused 2 'node 0: 7 1G pages are 7 GiB, 8 GiB with the 1 GiB already reserved in other page sizes, more than the 7.8 GiB of memory node 0 has' -r 7G -p 1G -n 0 --force
refused 2 "more than 90% of the 7.8 GiB of memory node 0 has (MemTotal in $N/node0/meminfo)" -r 5200M -n 0
refused 2 '--force goes with -r' --force
run -r 12G
check "-r 12G: 14 GiB of 15.6 in hugepages, below 90%" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 6144 ]"
run -r 13G --force
check "-r 13G --force: above 90%, below all of it" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 6656 ]"
# Lower, even while above 90%: never refused.
run -r 6600 --pages
check "-r lower than now, above 90%: not refused" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 6600 ]"
refused 2 "$most" -r 6700 --pages
# --clear first: the other sizes are 0 by the time -r writes.
run -c -r 13G
check "-c -r 13G: the sizes cleared first do not count" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 6656 ] &&
	[ \$(cat '$H/hugepages-1048576kB/nr_hugepages') = 0 ]"
rm -rf "$R/sys"
cp -a "$W/sys.saved" "$R/sys"
# A node without its own meminfo: the machine's memory bounds it.
mv "$N/node1/meminfo" "$W/node1.meminfo"
refused 2 "more than 90% of the 15.6 GiB of memory this machine has (MemTotal in $R/proc/meminfo)" -r 12G -n 1
mv "$W/node1.meminfo" "$N/node1/meminfo"
# No meminfo at all: refused, unless --force.
mv "$R/proc/meminfo" "$W/meminfo"
refused 1 "cannot tell how much memory this machine has ($R/proc/meminfo: No such file or directory): pass --force" -r 2M
run -r 2M --force
check "no meminfo, --force: reserved" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 1 ]"
mv "$W/meminfo" "$R/proc/meminfo"
rm -rf "$R/sys"
cp -a "$W/sys.saved" "$R/sys"

# ---- --clear ----
run -c
check "--clear: every count 0" sh -c "[ $rc -eq 0 ] &&
	[ -z \"\$(find '$R/sys' -name nr_hugepages ! -exec grep -qx 0 {} \; -print)\" ]"
echo 4 > "$H/hugepages-2048kB/nr_hugepages"
echo 1 > "$H/hugepages-1048576kB/nr_hugepages"
run -c -p 1G
check "--clear -p 1G: only 1G" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-1048576kB/nr_hugepages') = 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 4 ]"
# Pages in use on node 0 stay: reported.
f=$N/node0/hugepages/hugepages-2048kB/nr_hugepages
rm "$f"
mkfifo "$f"
: > "$W/taken"
kernel "take $f" "give $f 5"
run --clear
kernel_done
check "--clear: pages in use reported" sh -c "[ $rc -eq 1 ] && [ $krc -eq 0 ] &&
	[ \"\$(cat '$W/taken')\" = 0 ] &&
	grep -qF 'node 0: 5 2M pages still in use, not freed' '$W/err'"
rm "$f"
echo 0 > "$f"

# ---- --mount and --unmount (recorded in the fake /proc/mounts) ----
run -u
check "-u: every hugetlbfs mount" sh -c "[ $rc -eq 0 ] &&
	! grep -q hugetlbfs '$R/proc/mounts' && grep -q '^sysfs ' '$R/proc/mounts'"
run -m
check "-m: /dev/hugepages, 2M" sh -c "[ $rc -eq 0 ] && [ -d '$R/dev/hugepages' ] &&
	grep -qx 'nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0' '$R/proc/mounts'"
run -m
check "-m again: already mounted" sh -c "[ $rc -eq 0 ] && grep -qF 'already mounted' '$W/out' &&
	[ \$(grep -c hugetlbfs '$R/proc/mounts') = 1 ]"
run -m -p 1G
check "-m -p 1G: /dev/hugepages-1G" sh -c "[ $rc -eq 0 ] && [ -d '$R/dev/hugepages-1G' ] &&
	grep -qx 'nodev /dev/hugepages-1G hugetlbfs rw,relatime,pagesize=1G 0 0' '$R/proc/mounts'"
run --mount=/dev/hugepages-1G
check "--mount=DIR of another size: refused" sh -c "[ $rc -eq 1 ] &&
	grep -qF 'already a hugetlbfs mount, of 1G pages, not 2M' '$W/err'"
run -m /mnt/h2
check "-m DIR" sh -c "[ $rc -eq 0 ] && [ -d '$R/mnt/h2' ]"
run
check "show: the new mounts" sh -c "grep -qE '^  /dev/hugepages-1G +pagesize=1G\$' '$W/out' &&
	grep -qE '^  /mnt/h2 +pagesize=2M\$' '$W/out'"
refused 2 'is not an absolute directory' -m ../x
refused 2 'is not an absolute directory' -m=/dev/../x
refused 2 'is not an absolute directory' --mount=rel
refused 1 'is not a hugetlbfs mount' -u /mnt/none
run -u /mnt/h2
check "-u DIR: that one" sh -c "[ $rc -eq 0 ] && ! grep -q /mnt/h2 '$R/proc/mounts' &&
	[ \$(grep -c hugetlbfs '$R/proc/mounts') = 2 ]"
run -u -p 1G
check "-u -p 1G: the 1G mounts" sh -c "[ $rc -eq 0 ] &&
	! grep -q hugepages-1G '$R/proc/mounts' && grep -q ' /dev/hugepages ' '$R/proc/mounts'"

# ---- the installed tool: mount(2) would act on this machine ----
if [ -n "$installed" ]; then
	test_build=$bin
	bin=$installed
	refused 1 'PP_HUGEPAGES_ROOT is set: mounting /mnt/h2 refused' -m /mnt/h2
	refused 1 'PP_HUGEPAGES_ROOT is set: unmounting /dev/hugepages refused' -u
	bin=$test_build
fi

# ---- help, version, the root ----
run --help
check "--help on stdout, exit 0" sh -c "[ $rc -eq 0 ] && grep -qF -- '--persistent' '$W/out' && [ ! -s '$W/err' ]"
run --version
check "--version" sh -c "[ $rc -eq 0 ] && grep -qE '^pp-hugepages \(pagepool\) [0-9]' '$W/out'"
PP_HUGEPAGES_ROOT=relative "$bin" > "$W/out" 2> "$W/err"
rc=$?
check "PP_HUGEPAGES_ROOT must be absolute" sh -c "[ $rc -eq 2 ] && grep -qF 'absolute path' '$W/err'"
PP_HUGEPAGES_ROOT=$t/nothing "$bin" > "$W/out" 2> "$W/err"
rc=$?
check "no hugetlb in sysfs: said" sh -c "[ $rc -eq 1 ] && grep -qF 'no hugetlb support' '$W/err'"

echo "$failed failed"
[ $failed -eq 0 ]
