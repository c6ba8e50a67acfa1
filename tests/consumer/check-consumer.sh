#!/usr/bin/env bash
# check-consumer.sh BUILD_DIR SOURCE - install pagepool into a scratch
# root, then build SOURCE against it with pkg-config, shared and static,
# and run both. This is what a packet app outside the tree does.
set -euo pipefail
build=$1
src=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$root" >/dev/null
pc=$(find "$root" -name pagepool.pc -print -quit)
[ -n "$pc" ] || { echo "pagepool.pc was not installed"; exit 1; }

export PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_SYSROOT_DIR=$root
libdir=$(dirname "$(dirname "$pc")")

cc -std=c11 -Wall -Werror -o "$root/consumer" "$src" \
	$(pkg-config --cflags --libs pagepool)
LD_LIBRARY_PATH=$libdir "$root/consumer"
# The shared library must export nothing but the pp_ API.
stray=$(nm -D --defined-only "$libdir/libpagepool.so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^pp_/ {print $3}')
[ -z "$stray" ] || { echo "libpagepool.so exports non-pp_ symbols: $stray"; exit 1; }

cc -std=c11 -Wall -Werror -o "$root/consumer-static" "$src" \
	$(pkg-config --static --cflags pagepool) \
	"$libdir/libpagepool.a" $(pkg-config --static --libs-only-l pagepool | sed 's/-lpagepool//')
"$root/consumer-static"
echo "consumer: built and ran against the installed pagepool.pc (shared and static)"
