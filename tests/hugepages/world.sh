# shellcheck shell=sh
# SPDX-License-Identifier: BSD-3-Clause
#
# world.sh - the fake tree pp-hugepages' tests run the tool over
# (PP_HUGEPAGES_ROOT), and their helpers; sourced by test_hugepages.sh
# and test_apply.sh after they set bin (the tool to run).
#
# The world is a temporary directory: root/ is what pp-hugepages sees as /
# (two nodes with 2 MiB and 1 GiB pages, the machine-wide counts,
# /proc/mounts, meminfo and cpuinfo), and victim lies outside it, where a
# link in the tree points so that a write that follows it has something
# to land on.
#
# A plain file holds what is written to it; where the kernel would give
# back another figure (fewer pages than asked, pages in use), the file is
# a FIFO, and kernel(), run beside pp-hugepages, takes each write and
# answers each read as the kernel would.
T=10 # seconds any one run may take

t=$(mktemp -d) || exit 1
R=$t/world/root
V=$t/world/victim
H=$R/sys/kernel/mm/hugepages
N=$R/sys/devices/system/node
W=$t/scratch
kpid=
cleanup() {
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
mkdir -p "$W" "$H" "$N" "$R/proc" "$R/dev"
echo 0-1 > "$N/online"
echo 7 > "$V"

# counts DIR NR FREE SURPLUS: one size's files in DIR.
counts() {
	mkdir -p "$1"
	echo "$2" > "$1/nr_hugepages"
	echo "$3" > "$1/free_hugepages"
	echo "$4" > "$1/surplus_hugepages"
}
counts "$H/hugepages-2048kB" 768 700 0
echo 0 > "$H/hugepages-2048kB/resv_hugepages"
counts "$H/hugepages-1048576kB" 2 1 0
counts "$N/node0/hugepages/hugepages-2048kB" 512 500 0
counts "$N/node1/hugepages/hugepages-2048kB" 256 200 0
counts "$N/node0/hugepages/hugepages-1048576kB" 2 1 0
counts "$N/node1/hugepages/hugepages-1048576kB" 0 0 0
mkdir -p "$N/node2" # a node without memory: no hugepages directory
printf 'MemTotal:       16384000 kB\nHugepagesize:       2048 kB\n' > "$R/proc/meminfo"
# Half of it on each node, as the kernel words a node's meminfo.
printf 'Node 0 MemTotal:        8192000 kB\nNode 0 MemFree:         4000000 kB\n' > "$N/node0/meminfo"
printf 'Node 1 MemTotal:        8192000 kB\nNode 1 MemFree:         4000000 kB\n' > "$N/node1/meminfo"
printf 'processor\t: 0\nflags\t\t: fpu pse pdpe1gb lm\n' > "$R/proc/cpuinfo"
printf '%s\n' 'sysfs /sys sysfs rw,nosuid 0 0' \
	'hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0' \
	'none /mnt/huge\040gig hugetlbfs rw,pagesize=1024M 0 0' > "$R/proc/mounts"

# run ARG...: pp-hugepages over the fake root; stdout in $W/out, stderr
# in $W/err, exit in $rc. A sanitizer's report fails the test.
run() {
	PP_HUGEPAGES_ROOT=$R timeout $T "$bin" "$@" > "$W/out" 2> "$W/err"
	rc=$?
	if grep -qE 'Sanitizer|runtime error:' "$W/out" "$W/err"; then
		bad "sanitizer report: pp-hugepages $*"
	fi
}

# The whole world, for before/after comparisons.
snap() {
	(cd "$t/world" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
	 find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
}

failed=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	sed 's/^/     | /' "$W/out" "$W/err"
	[ -s "$W/kernel.log" ] && sed 's/^/     k /' "$W/kernel.log"
	failed=$((failed + 1))
}
# check NAME CONDITION...: ok when the command CONDITION... succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name (exit $rc)"; fi
}
out_has() { grep -qF -- "$1" "$W/out"; }
err_has() { grep -qF -- "$1" "$W/err"; }
val() { cat "$1"; }

# refused RC PATTERN ARG...: pp-hugepages ARG... exits RC, says PATTERN
# on stderr, and nothing in the world changes.
refused() {
	want=$1 pat=$2
	shift 2
	snap > "$W/before"
	run "$@"
	snap > "$W/after"
	if [ $rc -eq "$want" ] && err_has "$pat" && cmp -s "$W/before" "$W/after"; then
		ok "refused: $*"
	else
		bad "refused: $* (exit $rc; wanted $want, a message with '$pat' and no change)"
		diff "$W/before" "$W/after" | sed 's/^/     d /'
	fi
}

# kernel STEP...: the kernel's side of the next run, on FIFO F:
#   take F     a value is written to F: it goes to $W/taken
#   give F V   F is read: it says V
kernel() {
	(
		for step in "$@"; do
			set -- $step
			case $1 in
			take) timeout $T cat "$2" >> "$W/taken" ;;
			give) echo "$3" | timeout $T sh -c 'cat > "$0"' "$2" ;;
			esac
		done
	) > "$W/kernel.log" 2>&1 < /dev/null &
	kpid=$!
}
kernel_done() {
	wait "$kpid"
	krc=$?
	kpid=
	return $krc
}
