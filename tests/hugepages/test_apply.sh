#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_apply.sh - pp-hugepages --apply FILE over world.sh's fake tree:
# a file applied per size and per node, in its order (counts that go
# down first, then the largest pages); every kind of bad line refused
# with its line named and nothing written; the memory bound; an empty
# or comment-only file, a missing one, one that cannot be read; and a
# kernel that gives fewer pages than a line asks.
#
#   test_apply.sh PP-HUGEPAGES
#
# Under PP_HUGEPAGES_ROOT an absolute FILE is read in the tree, as
# /etc/pagepool/hugepages.conf is at boot: the files here are written
# into $R/etc/pagepool and named by their path in the tree.
#
# Needs neither root nor hugepages. Exit 0 when every check passed.
set -u

bin=${1:?usage: test_apply.sh PP-HUGEPAGES}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
# shellcheck source=tests/hugepages/world.sh
. "$(dirname "$0")/world.sh"

C=$R/etc/pagepool
mkdir -p "$C"
cp -a "$R/sys" "$W/sys.orig"
# fresh: the counts as world.sh made them.
fresh() {
	rm -rf "$R/sys"
	cp -a "$W/sys.orig" "$R/sys"
}
# conf NAME LINE...: $C/NAME holds the lines.
conf() {
	cf=$C/$1
	shift
	printf '%s\n' "$@" > "$cf"
}
count() { cat "$1/nr_hugepages"; }
M2=$H/hugepages-2048kB
G1=$H/hugepages-1048576kB
N0=$N/node0/hugepages
N1=$N/node1/hugepages

# ---- a good file ----
conf good.conf '# hugepages for the tests' '' \
	'2M 1024            # machine-wide' \
	'  1G	3 node=1' \
	'1G 1 node=0   ' 
run --apply /etc/pagepool/good.conf
check "good file: each size and node as written" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat $M2/nr_hugepages) = 1024 ] && [ \$(cat $N1/hugepages-1048576kB/nr_hugepages) = 3 ] &&
	[ \$(cat $N0/hugepages-1048576kB/nr_hugepages) = 1 ] &&
	[ \$(cat $G1/nr_hugepages) = 2 ] && [ \$(cat $N0/hugepages-2048kB/nr_hugepages) = 512 ] &&
	grep -qF '$C/good.conf applied: 3 lines, every count as asked' '$W/out'"
# node 0's 1G count goes down (2 to 1): first; then 1G before 2M.
check "good file: lower first, then the largest pages" sh -c "
	[ \"\$(grep -o '^pp-hugepages: [a-z0-9 -]*: [0-9]* [0-9A-Z]* pages reserved' '$W/out' |
	      sed 's/ pages reserved//; s/^pp-hugepages: //')\" = 'node 0: 1 1G
node 1: 3 1G
machine-wide: 1024 2M' ]"
fresh
conf nodes.conf '2M 100 node=0' '2M 50 node=1'
run --apply /etc/pagepool/nodes.conf
check "2M per node" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat $N0/hugepages-2048kB/nr_hugepages) = 100 ] && [ \$(cat $N1/hugepages-2048kB/nr_hugepages) = 50 ] &&
	[ \$(cat $M2/nr_hugepages) = 768 ]"
fresh
# A relative FILE is the working directory's, not the tree's.
printf '1G 0\n' > "$W/rel.conf"
(cd "$W" && PP_HUGEPAGES_ROOT=$R timeout $T "$bin" --apply rel.conf > out 2> err)
rc=$?
check "relative FILE: the working directory's" sh -c "[ $rc -eq 0 ] && [ \$(cat $G1/nr_hugepages) = 0 ]"
fresh

# ---- bad lines: each refused, the line named, nothing written ----
# bad LINES... PATTERN: a file of a good line and LINES is refused (exit
# 2) with PATTERN, naming the file and line 2; the good line not applied.
bad_file() {
	pat=$1
	shift
	conf bad.conf '2M 4' "$@"
	refused 2 "$C/bad.conf:2: $pat" --apply /etc/pagepool/bad.conf
	grep -qF "nothing applied, nothing changed" "$W/err" ||
		bad "bad line: no 'nothing changed' for $*"
}
bad_file "'3M' is not a page size: a line is SIZE COUNT [node=N], e.g. '2M 1024'" '3M 1'
bad_file "'2x' is not a page size" '2x 1'
bad_file "'node=0' is not a page size" 'node=0 2M 1'
bad_file "the page size comes first: '1G 2'" '2 1G'
bad_file "the kernel offers no 4M pages (no $R/sys/kernel/mm/hugepages/hugepages-4096kB); sizes here: 2M, 1G" '4M 1'
bad_file "no page count after '1G': write '1G COUNT' (a number of pages, e.g. '1G 2')" '1G'
bad_file "'1G' is not a page count: digits only, a number of pages (1G of 2M pages is '2M 512')" '2M 1G'
bad_file "'-5' is not a page count: digits only, a number of 2M pages, e.g. '2M 1024'" '2M -5'
bad_file "'1.5' is not a page count" '2M 1.5'
bad_file "'0x10' is not a page count" '2M 0x10'
bad_file "'512M' is not a page count: digits only, a number of pages (512M of 2M pages is '2M 256')" '2M 512M'
bad_file "'512M' is not a page count: digits only, a number of 1G pages, e.g. '1G 2'" '1G 512M'
bad_file "9223372036854775808 2M pages: more than the kernel counts (9223372036854775807 at most" '2M 9223372036854775808'
bad_file "99999999999999999999999 1G pages: more than the kernel counts" '1G 99999999999999999999999'
bad_file "'nod=0' is not node=N: a line is SIZE COUNT [node=N], e.g. '1G 1 node=0'" '1G 1 nod=0'
bad_file "'0' is not node=N" '1G 1 0'
bad_file "'' is not a node number" '1G 1 node='
bad_file "'x' is not a node number" '1G 1 node=x'
bad_file "'-1' is not a node number" '1G 1 node=-1'
bad_file "'99999999999' is not a node number" '1G 1 node=99999999999'
bad_file "no node 2 with hugepages: nodes here: 0, 1: name one of those, or drop node=" '1G 1 node=2'
bad_file "no node 7 with hugepages" '1G 1 node=7'
bad_file "'extra' after 'node=1': a line is SIZE COUNT [node=N], one reservation a line" '1G 1 node=1 extra'
bad_file "'1' is not node=N" '1G 0 1 extra'
bad_file "2M pages machine-wide again (line 1 gives them already): keep one of the two lines" '2M 8'
bad_file "2M pages both machine-wide and per node (lines 1 and 2)" '2M 8 node=1'
# Per node twice, and per node after machine-wide, on later lines.
conf bad.conf '1G 1 node=0' '1G 1 node=1' '1G 2 node=0' '2M 3 node=1' '2M 3'
refused 2 "$C/bad.conf:3: 1G pages on node 0 again (line 1 gives them already)" --apply /etc/pagepool/bad.conf
check "every bad line named, with their number" sh -c "
	grep -qF '$C/bad.conf:5: 2M pages both machine-wide and per node (lines 4 and 5)' '$W/err' &&
	grep -qF '$C/bad.conf: 2 bad lines: nothing applied, nothing changed' '$W/err'"
# Many bad lines: 20 named, the rest counted.
i=0
: > "$C/many.conf"
while [ $i -lt 25 ]; do echo "junk $i" >> "$C/many.conf"; i=$((i + 1)); done
refused 2 "$C/many.conf: 5 bad lines more" --apply /etc/pagepool/many.conf
check "many bad lines: 20 named" sh -c "[ \$(grep -c 'is not a page size' '$W/err') = 20 ] &&
	grep -qF '25 bad lines: nothing applied' '$W/err'"
# Not text: a NUL byte, a line past 1024 bytes.
printf '2M 4\n2M\0 1\n' > "$C/bad.conf"
refused 2 "$C/bad.conf:2: a NUL byte: this is not a text file" --apply /etc/pagepool/bad.conf
{ echo '2M 4'; printf '1G 1 %01100d\n' 0; } > "$C/bad.conf"
refused 2 "$C/bad.conf:2: longer than 1024 bytes" --apply /etc/pagepool/bad.conf

# No 1 GiB pages on this CPU: the size missing, the flag too.
mv "$G1" "$W/gig"
cp "$R/proc/cpuinfo" "$W/cpuinfo"
printf 'processor\t: 0\nflags\t\t: fpu pse lm\n' > "$R/proc/cpuinfo"
bad_file "this CPU has no 1 GiB pages (no pdpe1gb flag), so 1G cannot be reserved here; sizes here: 2M: take the line out" '1G 2 node=0'
mv "$W/cpuinfo" "$R/proc/cpuinfo"
mv "$W/gig" "$G1"

# ---- the memory bound (world.sh: 15.6 GiB, 7.8 GiB a node) ----
big='more than the 15.6 GiB of memory this machine has'
conf mem.conf '2M 9223372036854775807'
refused 2 "$C/mem.conf: machine-wide: its hugepages, with those of the sizes it leaves as they are, come to" --apply /etc/pagepool/mem.conf
check "a count near LONG_MAX: more than the memory" err_has "$big"
refused 2 "$big" --apply /etc/pagepool/mem.conf --force
# 13 GiB of 2M pages and the 2 GiB of 1G pages there: above 90%.
conf mem.conf '2M 6656'
refused 2 "more than 90% of the 15.6 GiB of memory this machine has (MemTotal in $R/proc/meminfo): the rest is too little" --apply /etc/pagepool/mem.conf
run --apply /etc/pagepool/mem.conf --force
check "--force: past 90%, below all of it" sh -c "[ $rc -eq 0 ] && [ \$(cat $M2/nr_hugepages) = 6656 ]"
fresh
# The 1G pages given too: they count in place of those there.
conf mem.conf '2M 6656' '1G 0'
run --apply /etc/pagepool/mem.conf
check "the file's counts in place of those there" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat $M2/nr_hugepages) = 6656 ] && [ \$(cat $G1/nr_hugepages) = 0 ]"
fresh
# Node 0: 1 GiB of 2M pages there, 7 GiB of 1G pages asked: 8 GiB.
conf mem.conf '1G 7 node=0'
refused 2 "$C/mem.conf: node 0: its hugepages, with those of the sizes it leaves as they are, come to 8 GiB, more than the 7.8 GiB of memory node 0 has (MemTotal in $N/node0/meminfo): lower the counts" --apply /etc/pagepool/mem.conf --force
# Lower than now, even above the bound: never refused.
echo 7000 > "$M2/nr_hugepages"
conf mem.conf '2M 6900'
run --apply /etc/pagepool/mem.conf
check "lower than now, above 90%: applied" sh -c "[ $rc -eq 0 ] && [ \$(cat $M2/nr_hugepages) = 6900 ]"
fresh
mv "$R/proc/meminfo" "$W/meminfo"
conf mem.conf '2M 1000'
refused 1 "cannot tell how much memory this machine has ($R/proc/meminfo: No such file or directory): pass --force" --apply /etc/pagepool/mem.conf
mv "$W/meminfo" "$R/proc/meminfo"

# ---- empty, missing, unreadable ----
for body in '' '# nothing' '   ' '# a' '	# b' ''; do
	printf '%s\n' "$body" >> "$C/empty.conf"
	snap > "$W/before"
	run --apply /etc/pagepool/empty.conf
	snap > "$W/after"
	check "comments only ($(wc -l < "$C/empty.conf") lines): nothing changed" sh -c "[ $rc -eq 0 ] &&
		cmp -s '$W/before' '$W/after' &&
		grep -qF '$C/empty.conf reserves nothing (comments and empty lines only): nothing changed' '$W/out'"
done
: > "$C/empty.conf"
run --apply /etc/pagepool/empty.conf
check "an empty file: nothing changed" sh -c "[ $rc -eq 0 ] && grep -qF 'reserves nothing' '$W/out'"
# The shipped file runs at every boot: on a kernel without hugetlb too.
mv "$R/sys" "$W/sys.away"
run --apply /etc/pagepool/empty.conf
check "nothing to reserve, no hugetlb in sysfs: exit 0" sh -c "[ $rc -eq 0 ] && grep -qF 'reserves nothing' '$W/out'"
conf good.conf '2M 4'
refused 1 'no hugetlb support' --apply /etc/pagepool/good.conf
mv "$W/sys.away" "$R/sys"
refused 2 "cannot read $C/none.conf: No such file or directory: write it (pp-hugepages --persistent prints its lines" --apply /etc/pagepool/none.conf
mkdir "$C/dir.conf"
refused 2 "$C/dir.conf is not a file: name the config file" --apply /etc/pagepool/dir.conf
rmdir "$C/dir.conf"
mkfifo "$C/fifo.conf"
refused 2 "$C/fifo.conf is not a file" --apply /etc/pagepool/fifo.conf
rm "$C/fifo.conf"
# A file far larger than any config: refused before it is read.
head -c 1048577 /dev/zero | tr '\0' '#' > "$C/big.conf"
refused 2 "$C/big.conf is 1048577 bytes, more than a config file" --apply /etc/pagepool/big.conf
rm "$C/big.conf"
# Unreadable: mode 0 stops anyone but root; as root, the run drops to
# nobody (setpriv) with the tree open to it, but for that file.
conf secret.conf '2M 4'
chmod 0 "$C/secret.conf"
if [ "$(id -u)" != 0 ]; then
	refused 2 "cannot read $C/secret.conf: Permission denied: run as root, or make it readable" --apply /etc/pagepool/secret.conf
elif command -v setpriv > /dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --version > /dev/null 2>&1; then
	chmod 0755 "$t" "$W"
	run_bin=$bin
	bin=$W/as-nobody
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups %s "$@"\n' "$run_bin" > "$bin"
	chmod 0755 "$bin"
	refused 2 "cannot read $C/secret.conf: Permission denied: run as root, or make it readable" --apply /etc/pagepool/secret.conf
	bin=$run_bin
	rm "$W/as-nobody"
	chmod 0700 "$t"
else
	echo "skip unreadable file: running as root, and setpriv cannot run $bin as nobody"
fi
rm -f "$C/secret.conf"

# ---- the kernel gives fewer: said, the other lines applied ----
f=$G1/nr_hugepages
rm "$f"
mkfifo "$f"
: > "$W/taken"
# Read for the check (the line's count, then the size's), before the
# write, written, read back.
kernel "give $f 2" "give $f 2" "give $f 2" "take $f" "give $f 3"
conf short.conf '2M 100' '1G 8'
run --apply /etc/pagepool/short.conf
kernel_done
check "fewer than asked: said, the other line applied, exit 1" sh -c "[ $rc -eq 1 ] && [ $krc -eq 0 ] &&
	[ \"\$(cat '$W/taken')\" = 8 ] &&
	grep -qF 'machine-wide: the kernel gave 3 of the 8 1G pages asked for (2 before)' '$W/err' &&
	grep -qF '$C/short.conf: 1 of its 2 lines not met (above)' '$W/err' &&
	[ \$(cat $M2/nr_hugepages) = 100 ]"
rm "$f"
echo 2 > "$f"

# ---- what goes with --apply ----
conf good.conf '2M 4'
refused 2 '--apply takes its sizes, counts and nodes from the file' --apply /etc/pagepool/good.conf -r 2M
refused 2 '--apply takes its sizes' --apply /etc/pagepool/good.conf -p 1G
refused 2 '--apply takes its sizes' --apply /etc/pagepool/good.conf --persistent
refused 2 '--apply takes its sizes' --apply /etc/pagepool/good.conf -c
refused 2 '-n goes with -r' --apply /etc/pagepool/good.conf -n 0
refused 2 'the kernel offers no 4M pages' --apply /etc/pagepool/good.conf -m -p 4M
refused 2 '--apply needs a file name' --apply ''
refused 2 "option '--apply' needs a value" --apply
run --apply /etc/pagepool/good.conf -m -p 1G
check "--apply with -m -p 1G: reserved, then mounted" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat $M2/nr_hugepages) = 4 ] &&
	grep -qx 'nodev /dev/hugepages-1G hugetlbfs rw,relatime,pagesize=1G 0 0' '$R/proc/mounts'"

echo "$failed failed"
[ $failed -eq 0 ]
