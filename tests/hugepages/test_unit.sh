#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_unit.sh - pagepool-hugepages.service's command, run as the unit
# writes it, over world.sh's fake tree: the ExecStart line is read from
# the built unit and run word for word, but for its first word, the
# installed path of pp-hugepages, which is the tool built here. So the
# command in the unit is the one that works.
#
#   test_unit.sh UNIT PP-HUGEPAGES BIN CONF SHIPPED
#
# UNIT: the configured pagepool-hugepages.service. PP-HUGEPAGES: the
# tool built here (not the test build: the unit runs the real one).
# BIN and CONF: where meson installs the tool and the config file, which
# the unit must name. SHIPPED: the config file as installed.
#
# The config is read in the tree (PP_HUGEPAGES_ROOT): the test writes
# its files at ROOT/CONF. Needs neither root nor hugepages.
set -u

unit=${1:?usage: test_unit.sh UNIT PP-HUGEPAGES BIN CONF SHIPPED}
bin=${2:?}
want_bin=${3:?}
want_conf=${4:?}
shipped=${5:?}
# shellcheck source=tests/hugepages/world.sh
. "$(dirname "$0")/world.sh"

# key KEY: the value of the unit's only KEY= line.
key() {
	[ "$(grep -c "^$1=" "$unit")" = 1 ] || return 1
	sed -n "s/^$1=//p" "$unit"
}
exec_start=$(key ExecStart) || exec_start=
# Words of plain characters only (no quotes, $, % specifiers, or a
# prefix such as '-'), so that the shell splits them as systemd does.
plain() { printf '%s\n' "$exec_start" | grep -qx '/[A-Za-z0-9/._ =-]*'; }
check "one ExecStart, plain words: run word for word" plain
set -f
# shellcheck disable=SC2086 # the words of the command, as systemd splits them
set -- $exec_start
set +f
exe=$1
shift
check "ExecStart runs the installed tool ($want_bin)" [ "$exe" = "$want_bin" ]
check "ExecStart applies the installed config ($want_conf)" \
	[ "$*" = "--apply $want_conf" ]
check "ConditionPathExists names that config" \
	[ "$(key ConditionPathExists)" = "$want_conf" ]
check "ExecReload runs the same command" [ "$(key ExecReload)" = "$exec_start" ]
check "oneshot, kept active after it ran" sh -c "
	[ '$(key Type)' = oneshot ] && [ '$(key RemainAfterExit)' = yes ]"

mkdir -p "$R$(dirname "$want_conf")"
printf '2M 64\n1G 1 node=1   # the 1G pages on node 1\n' > "$R$want_conf"
run "$@"
check "the unit's command applies the file" sh -c "[ $rc -eq 0 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 64 ] &&
	[ \$(cat '$N/node1/hugepages/hugepages-1048576kB/nr_hugepages') = 1 ] &&
	grep -qF '$R$want_conf applied: 2 lines' '$W/out'"
# The shipped file, which every boot runs: nothing changes.
cp "$shipped" "$R$want_conf"
snap > "$W/before"
run "$@"
snap > "$W/after"
check "the shipped config: exit 0, nothing changed" sh -c "[ $rc -eq 0 ] &&
	cmp -s '$W/before' '$W/after' && grep -qF 'reserves nothing' '$W/out'"
# The shipped file's examples, uncommented, are lines it takes.
sed -n 's/^#   \([0-9][0-9]*[KMG] [0-9][0-9]*\( node=[0-9]*\)\{0,1\}\) .*/\1/p' \
	"$shipped" > "$R$want_conf"
run "$@"
check "the shipped file's examples apply" sh -c "[ $rc -eq 0 ] &&
	[ \$(wc -l < '$R$want_conf') = 2 ] &&
	[ \$(cat '$H/hugepages-2048kB/nr_hugepages') = 1024 ] &&
	[ \$(cat '$N/node0/hugepages/hugepages-1048576kB/nr_hugepages') = 2 ]"
# A bad file fails the unit, and changes nothing.
printf '2M 64\n2M 32 node=0\n' > "$R$want_conf"
refused 2 "$R$want_conf:2: 2M pages both machine-wide and per node" "$@"

echo "$failed failed"
[ $failed -eq 0 ]
