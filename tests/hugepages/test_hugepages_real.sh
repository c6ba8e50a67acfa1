#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_hugepages_real.sh - pp-hugepages on this machine's sysfs, as root:
# reserve 4 more 2 MiB pages machine-wide, check the table and the JSON
# show them, then put the count back to what it was, exactly, with
# pp-hugepages itself (and, should that fail, by hand, so that the
# machine is left as found).
#
#   test_hugepages_real.sh PP-HUGEPAGES
#
# Exit 77 with the reason when not root or without 2 MiB hugepages; 0
# when every check passed. The kernel may give fewer pages than asked on
# a fragmented machine: that is reported as a skip, not a failure.
set -u

bin=${1:?usage: test_hugepages_real.sh PP-HUGEPAGES}
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root to write $nr"
	exit 77
fi
if [ ! -w "$nr" ]; then
	echo "SKIP: no 2 MiB hugepages here (no $nr)"
	exit 77
fi
unset PP_HUGEPAGES_ROOT

prev=$(cat "$nr")
want=$((prev + 4))
out=$(mktemp) || exit 1
restored=no
restore() {
	[ $restored = yes ] && return
	echo "$prev" > "$nr"
	restored=yes
}
trap 'restore; rm -f "$out"' EXIT
trap 'exit 1' INT TERM

failed=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	sed 's/^/     | /' "$out"
	failed=$((failed + 1))
}

timeout 30 "$bin" -r $want --pages -p 2M > "$out" 2>&1
rc=$?
got=$(cat "$nr")
if [ $rc -eq 1 ] && [ "$got" -lt $want ] && grep -qF 'the kernel gave' "$out"; then
	echo "ok   shortfall reported: the kernel gave $got of $want"
	"$bin" -r "$prev" --pages -p 2M > /dev/null 2>&1
	if [ "$(cat "$nr")" = "$prev" ]; then restored=yes; fi
	echo "SKIP: memory too fragmented for $want 2 MiB pages (got $got)"
	exit 77
fi
if [ $rc -eq 0 ] && [ "$got" = $want ] &&
   grep -qF "machine-wide: $want 2M pages reserved ($prev before)" "$out"; then
	ok "-r $want --pages: $prev -> $got"
else
	bad "-r $want --pages: exit $rc, nr_hugepages $got"
fi

timeout 30 "$bin" > "$out" 2>&1
if grep -qE "^all +2M +$want " "$out"; then
	ok "show: $want reserved machine-wide"
else
	bad "show: no 'all 2M $want' row"
fi
timeout 30 "$bin" --json - > "$out" 2>&1
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(p["node"] is None and p["page_size_kb"] == 2048 and
           p["nr_hugepages"] == int(sys.argv[2]) for p in d["pages"])
' "$out" $want; then
	ok "--json: $want reserved machine-wide"
else
	bad "--json"
fi

timeout 30 "$bin" -r "$prev" --pages -p 2M > "$out" 2>&1
rc=$?
got=$(cat "$nr")
if [ $rc -eq 0 ] && [ "$got" = "$prev" ]; then
	restored=yes
	ok "restored: $got, as before"
else
	bad "restore: exit $rc, nr_hugepages $got, wanted $prev"
	restore
	[ "$(cat "$nr")" = "$prev" ] || echo "FAIL could not restore $nr to $prev: it is $(cat "$nr")"
fi

echo "$failed failed"
[ $failed -eq 0 ]
