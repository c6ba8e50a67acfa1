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
# The ABI is what the installed headers declare, no more and no less:
# gcc's -aux-info lists every prototype with its file (static inline ones
# are not symbols). libpagepool must export exactly what all headers but
# pp_drivers.h declare, libpagepool_drivers exactly what pp_drivers.h
# declares. An exported symbol no header declares is internal code leaking
# into the ABI; a declared one not exported is a link error for a user; one
# in the wrong library breaks the layering (lib/ knows no driver).
# (pkg-config prefixes the sysroot to the variable.)
incdir=$(pkg-config --variable=includedir pagepool)/pagepool
for h in "$incdir"/*.h; do echo "#include <pagepool/$(basename "$h")>"; done >"$root/all.c"
gcc -std=gnu11 $(pkg-config --cflags pagepool) -aux-info "$root/aux.txt" \
	-c "$root/all.c" -o "$root/all.o"
declared() { # declared FILE-PATTERN: what the matching headers declare
	{
		grep "/include/pagepool/$1:[0-9]*:NC \\*/" "$root/aux.txt" |
			sed 's/.*[ *]\(pp_[A-Za-z0-9_]*\) (.*/\1/'
		# Variables, which -aux-info does not list: "PP_API extern"
		# declarations, the name last on the line.
		grep -h '^PP_API extern ' $(ls "$incdir"/*.h | grep "/$1\$") |
			sed 's/.*[ *]\(pp_[A-Za-z0-9_]*\)$/\1/' || true
	} | sort -u
}
exported() { # exported LIB: every symbol its dynamic table defines
	nm -D --defined-only "$libdir/$1" |
		awk 'NF == 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u
}
abi_check() { # abi_check LIB DECLARED-FILE
	exported "$1" >"$root/exported"
	if ! diff -u "$2" "$root/exported" >"$root/abi.diff"; then
		echo "$1: its exports (+) differ from what the installed headers declare for it (-):"
		grep '^[-+][^-+]' "$root/abi.diff"
		exit 1
	fi
	echo "consumer: $1 exports $(wc -l <"$root/exported") symbols, each declared by an installed header"
}
declared 'pp_drivers\.h' >"$root/declared-drivers"
declared '[^:]*' | comm -23 - "$root/declared-drivers" >"$root/declared-core"
abi_check libpagepool.so "$root/declared-core"
abi_check libpagepool_drivers.so "$root/declared-drivers"

cc -std=c11 -Wall -Werror -o "$root/consumer-static" "$src" \
	$(pkg-config --static --cflags pagepool) \
	"$libdir/libpagepool.a" $(pkg-config --static --libs-only-l pagepool | sed 's/-lpagepool//')
"$root/consumer-static"
echo "consumer: built and ran against the installed pagepool.pc (shared and static)"
