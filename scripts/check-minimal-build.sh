#!/usr/bin/env bash
# check-minimal-build.sh - build pagepool with every optional dependency
# switched off (numa, xdp, verbs, dpdk) and check that its shared libraries
# then need nothing but the C library and each other: an option that is
# off must not link its library. Builds in build-min/ (about 10 s).
set -uo pipefail
cd "$(dirname "$0")/.."

dir=build-min
opts="-Dnuma=disabled -Dxdp=disabled -Dverbs=disabled -Ddpdk=disabled -Dtests=false"
if [ ! -f "$dir/build.ninja" ]; then
	# shellcheck disable=SC2086
	meson setup "$dir" $opts >"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; exit 1; }
else
	# shellcheck disable=SC2086
	meson configure "$dir" $opts >"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; exit 1; }
fi
ninja -C "$dir" >"$dir.ninja.log" 2>&1 || { tail -50 "$dir.ninja.log"; exit 1; }

status=0
for so in "$dir/lib/libpagepool.so" "$dir/drivers/libpagepool_drivers.so"; do
	needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	extra=$(echo "$needed" | tr ' ' '\n' |
		grep -Ev '^(libc\.so\.6|libpagepool\.so\.[0-9]+)?$' || true)
	if [ -n "$extra" ]; then
		echo "minimal build: $so needs $extra although every option is off"
		status=1
	else
		echo "minimal build: $so needs only: $needed"
	fi
done
exit $status
