#!/usr/bin/env bash
# check-examples.sh BUILD_DIR SOURCE_ROOT - build examples/skeleton and
# examples/l2fwd as a user does outside the tree: against an installed
# prefix, with README.md's PKG_CONFIG_PATH and run path and pkg-config's
# flags only (no meson, none of the tree's -D flags such as -D_GNU_SOURCE,
# C11, -Wall -Wextra -Werror), then run each for a second on null ports
# without LD_LIBRARY_PATH. An example that leans on the tree's build to
# compile teaches a user something that fails on their machine.
set -euo pipefail
build=$1
src=$2
# shellcheck source=outside.sh
. "$(dirname "$0")/outside.sh"
stage_install "$build" "$src"
unset LD_LIBRARY_PATH

for ex in skeleton l2fwd; do
	build_outside "$root/$ex" "$src/examples/$ex/$ex.c" pagepool-drivers
done
"$root/skeleton" null0 null1 1
"$root/l2fwd" -q 2 -t 1 null0 null1
echo "examples: skeleton and l2fwd built against $(pkg-config --modversion pagepool-drivers) in a staged prefix with README's commands, and ran"
