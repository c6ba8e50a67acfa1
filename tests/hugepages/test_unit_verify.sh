#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_unit_verify.sh - systemd-analyze verify on pagepool-hugepages.service.
#
#   test_unit_verify.sh UNIT PP-HUGEPAGES BIN
#
# verify checks that ExecStart's program exists and runs, so the unit is
# verified in a tree of its own (--root) that has the tool built here at
# BIN, the path the unit names, and the unit in etc/systemd/system. Any
# message fails it: verify warns of an unknown key and carries on with
# exit 0. Then the same tree without the tool must fail, so that a pass
# is verify's. --man=no: the unit's Documentation= names pp-hugepages(8),
# which a build tree has not installed (tests/docs checks the page).
# Skipped (77) without systemd-analyze.
set -u

unit=${1:?usage: test_unit_verify.sh UNIT PP-HUGEPAGES BIN}
tool=${2:?}
want_bin=${3:?}
if ! command -v systemd-analyze > /dev/null; then
	echo "skip: no systemd-analyze (Debian's systemd package)"
	exit 77
fi
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
name=$(basename "$unit")
mkdir -p "$t/root/etc/systemd/system" "$t/root$(dirname "$want_bin")"
cp "$unit" "$t/root/etc/systemd/system/$name"
cp "$tool" "$t/root$want_bin"

failed=0
systemd-analyze verify --man=no --root="$t/root" "$name" > "$t/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$t/out" ]; then
	echo "ok   systemd-analyze verify $name: no message"
else
	echo "FAIL systemd-analyze verify $name (exit $rc)"
	sed 's/^/     | /' "$t/out"
	failed=1
fi
rm "$t/root$want_bin"
systemd-analyze verify --man=no --root="$t/root" "$name" > "$t/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -qF "$want_bin" "$t/out"; then
	echo "ok   without $want_bin: verify fails, naming it"
else
	echo "FAIL without $want_bin: verify passed (exit $rc): it checks nothing here"
	sed 's/^/     | /' "$t/out"
	failed=1
fi
exit $failed
