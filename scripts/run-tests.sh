#!/usr/bin/env bash
# run-tests.sh - set up the machine, build pagepool three ways and run every
# test suite (the build_and_test lines below name them; tests/meson.build
# says what each suite holds): a release build with debug checks, an
# ASan+UBSan build with the fault-injection seam (whose failed runs
# LeakSanitizer checks) and a TSan build; then a build with every option
# off (scripts/check-minimal-build.sh), the Debian packages installed and
# used in a fresh Debian root (scripts/check-packages.sh), and the
# libFuzzer targets built with clang, each run for 15 seconds
# (scripts/run-fuzzers.sh). Ends
# with one line "N passed, N failed, N skipped"; exits non-zero when
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --test || exit 1

status=0
logs=()

# build_and_test DIR "MESON OPTIONS" SUITE... -- TEST ARGS
build_and_test() {
	local dir=$1 opts=$2
	shift 2
	local suites=() test_env=() log=testlog.json
	while [ $# -gt 0 ]; do
		case $1 in
		--env) test_env+=(--setup "$2"); log=testlog-$2.json; shift 2 ;;
		*) suites+=(--suite "$1"); shift ;;
		esac
	done
	echo "==> $dir: meson setup $opts"
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		meson setup "$dir" $opts >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; status=1; return; }
	else
		# A build dir from an older script keeps its options otherwise
		# (the ASan build gained -Dfault_injection=true).
		# shellcheck disable=SC2086
		meson configure "$dir" $opts >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; status=1; return; }
	fi
	ninja -C "$dir" >"$dir.ninja.log" 2>&1 ||
		{ tail -50 "$dir.ninja.log"; status=1; return; }
	meson test -C "$dir" --no-rebuild --print-errorlogs "${suites[@]}" \
		"${test_env[@]}" || status=1
	logs+=("$dir/meson-logs/$log")
}

build_and_test build-test "-Dbuildtype=release -Ddebug_level=1" \
	unit stress fwd consumer bench-smoke netns qemu dpdk vhost
# Release at debug level 0: the allocator's leaf fast paths, which the
# checking builds (debug level 1 and 2, ASan) never take.
build_and_test build-fast "-Dbuildtype=release -Ddebug_level=0 -Ddpdk=disabled" \
	unit threads stress
build_and_test build-asan \
	"-Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false -Ddebug_level=2 -Ddpdk=disabled -Dfault_injection=true" \
	--env asan unit fault
# PP_STRESS_SCALE (set by the tsan setup) divides the stress counts.
build_and_test build-tsan \
	"-Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false -Ddpdk=disabled" \
	--env tsan stress threads

# Ten seconds: every optional dependency off must link none of them.
echo "==> build-min: every option disabled"
bash scripts/check-minimal-build.sh || status=1

# A minute and a half (the first run a few minutes more, for debootstrap):
# the Debian packages built, linted, installed with apt into a fresh
# Debian 12 root and used there as README says, then purged.
echo "==> build-deb: Debian packages in a fresh Debian 12 root"
bash scripts/check-packages.sh
case $? in
0) ;;
77) echo "build-deb: SKIPPED (the reason is above)" ;;
*) echo "build-deb: FAILED"; status=1 ;;
esac

# About a minute and a half: 15 s per fuzz target, and the clang build of
# what they link. A crashing input is printed into this log in base64.
echo "==> build-fuzz: libFuzzer targets, ${PP_FUZZ_TIME:-15} s each"
bash scripts/run-fuzzers.sh || { echo "fuzzing failed"; status=1; }

python3 scripts/test-summary.py "${logs[@]}" || status=1
exit $status
