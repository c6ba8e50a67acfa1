#!/usr/bin/env bash
# check-readme.sh BUILD_DIR SOURCE_ROOT - what README.md tells a new user
# holds: the programs it says the install puts in bindir are the ones
# there, the skeleton's line count is right, and its C snippet (the
# ```c block) builds against a staged install with README's own
# PKG_CONFIG_PATH and run path, and runs (it takes 2 MiB hugepages on
# node 0: skipped, exit 77, when too few are free).
set -euo pipefail
build=$1
src=$2
# shellcheck source=outside.sh
. "$(dirname "$0")/outside.sh"
stage_install "$build" "$src"
unset LD_LIBRARY_PATH

# 1. The programs: README's sentence names each one installed; one it
# names that is not installed must be marked "(with ...)", an optional
# library this build did not find.
sentence=$(tr '\n' ' ' <"$readme" | tr -s ' ' |
	grep -o 'The install also puts the programs in [^:]*:[^.]*\.') ||
	fail "README.md: no sentence 'The install also puts the programs in ...: ...' listing them"
# shellcheck disable=SC2016 # the backquotes are README's, not a command
listed=$(echo "${sentence#*:}" | grep -o '`[^`]*`' | tr -d '`')
installed=$(ls "$bindir")
bad=0
for p in $installed; do
	if ! grep -qx -- "$p" <<<"$listed"; then
		echo "README.md does not name $p, which meson installs into bindir: add it to '$sentence'"
		bad=1
	fi
done
for p in $listed; do
	if ! grep -qx -- "$p" <<<"$installed" && ! grep -q "\`$p\` (with " <<<"$sentence"; then
		echo "README.md names $p among the installed programs, but the install has no $p (and README does not say it is optional, '(with ...)')"
		bad=1
	fi
done
[ $bad = 0 ] || exit 1
echo "readme: names the $(wc -w <<<"$installed") programs installed: ${installed//$'\n'/ }"

# 2. The skeleton's length, which README quotes.
said=$(grep -o 'examples/skeleton/skeleton.c) next ([0-9]* lines' "$readme" | grep -o '[0-9]*') ||
	fail "README.md does not say how long examples/skeleton is (expected '(N lines')"
lines=$(wc -l <"$src/examples/skeleton/skeleton.c")
[ "$said" = "$lines" ] ||
	fail "README.md says examples/skeleton is $said lines long; it has $lines"

# 3. The snippet: the first ```c block, as a program of its own (wrapped
# in main() if it is not one already).
readme_snippet "$readme" "$root/app.c" ||
	fail "README.md has no \`\`\`c block"
build_outside "$root/app" "$root/app.c" pagepool
echo "readme: the C snippet builds with README's commands"

mib=$(sed -n 's/.*\.size = \([0-9]*\) << 20.*/\1/p' "$root/app.c" | head -1)
need=$(( ${mib:-64} / 2 ))
free=/sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages
[ -r $free ] || free=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
have=$(cat $free 2>/dev/null || echo 0)
if [ "$have" -lt "$need" ]; then
	echo "SKIP: README's snippet takes $need 2 MiB hugepages on node 0 and $have are free (reserve them: pp-hugepages, doc/hugepages.md)"
	exit 77
fi
"$root/app" || fail "README's C snippet built, but exited with $? (its messages above)"
echo "readme: the C snippet ran"
