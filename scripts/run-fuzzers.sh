#!/usr/bin/env bash
# run-fuzzers.sh - build the libFuzzer targets of tests/fuzz with clang
# (ASan + UBSan, debug_level 2) in build-fuzz/ and run each for a bounded
# time from its seed corpus and dictionary. New inputs go to
# build-fuzz/fuzz-work/<target>/, never into the source tree. A crash, a
# leak or a broken invariant fails the run, and the input that did it is
# printed in base64 and hex, so a CI log is enough to reproduce it:
#   base64 -d > crash <<< '...'; build-fuzz/tests/fuzz/<target> crash
#
# PP_FUZZ_TIME: seconds per target (default 15). Prints one line per
# target with libFuzzer's final execution count. Exits non-zero on any
# failure. A target the build does not have (fuzz_af_xdp without libxdp)
# is skipped with a line that says so.
set -uo pipefail
cd "$(dirname "$0")/.."

dir=build-fuzz
secs=${PP_FUZZ_TIME:-15}
targets=(fuzz_devargs fuzz_api fuzz_frames fuzz_telemetry fuzz_af_xdp fuzz_e1000e
	fuzz_vhost_user)
status=0

if ! command -v clang >/dev/null; then
	echo "run-fuzzers: clang not found (scripts/setup.sh installs it)" >&2
	exit 1
fi
if [ ! -f "$dir/build.ninja" ]; then
	CC=clang meson setup "$dir" -Dfuzz=enabled -Dbuildtype=debugoptimized \
		-Ddebug_level=2 -Ddpdk=disabled -Db_lundef=false \
		-Db_sanitize=address,undefined >"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; exit 1; }
fi
# Only the targets this configuration has (meson leaves fuzz_af_xdp and
# fuzz_e1000e out when their drivers are not built), asked of an
# up-to-date build.ninja.
ninja -C "$dir" build.ninja >"$dir.ninja.log" 2>&1 ||
	{ tail -50 "$dir.ninja.log"; exit 1; }
built=()
for t in "${targets[@]}"; do
	if ninja -C "$dir" -t query "tests/fuzz/$t" >/dev/null 2>&1; then
		built+=("tests/fuzz/$t")
	fi
done
ninja -C "$dir" "${built[@]}" >"$dir.ninja.log" 2>&1 ||
	{ tail -50 "$dir.ninja.log"; exit 1; }

for t in "${targets[@]}"; do
	if [[ " ${built[*]} " != *" tests/fuzz/$t "* ]]; then
		echo "==> $t: skipped, not in this build (its driver is left out: see meson setup's messages; af_xdp needs libxdp and libbpf, e1000e <linux/vfio.h>)"
		continue
	fi
	work=$dir/fuzz-work/$t
	art=$dir/fuzz-artifacts/$t
	log=$dir/fuzz-$t.log
	rm -rf "$art"
	mkdir -p "$work" "$art"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$dir/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 \
		-max_len=1024 -print_final_stats=1 \
		-dict="tests/fuzz/$t.dict" -artifact_prefix="$art/" \
		"$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	echo "==> $t: ${execs:-?} execs in ${secs} s, exit $rc (log: $log)"
	crashes=("$art"/*)
	if [ "$rc" != 0 ] || [ -e "${crashes[0]}" ]; then
		status=1
		grep -v '^#' "$log" | tail -40
		for c in "${crashes[@]}"; do
			[ -f "$c" ] || continue
			echo "--- $t: input $c ($(stat -c %s "$c") bytes), base64:"
			base64 -w 0 "$c"
			echo
			echo "--- hex:"
			od -A x -t x1z -v "$c" | head -64
		done
	fi
done
exit $status
