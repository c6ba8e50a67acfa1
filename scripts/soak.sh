#!/usr/bin/env bash
# soak.sh [SECONDS] - keep pagepool's concurrent paths busy for SECONDS
# (default 60) in each of three builds, and count what went through:
#
#   - stress_page: producers allocate (single, bulk list, bulk array,
#     higher orders) and hand every page to consumers on other threads,
#     which check its tag and free it; the allocator's invariant walker
#     runs at the end of each round (accounting must balance);
#   - the threaded unit tests: ring SPSC and MPMC, page_pool rings with
#     many returners, pool destroy racing the last returned page,
#     cross-thread frees, ports polled from several threads;
#   - the forwarder with --verify: 64 numbered frames around a veth wire
#     loop, every frame checked at every hop, and null -> veth PASS, each
#     ending with every page back in the allocator.
#
# Builds: release with debug_level=2 (poison on free, double-free and
# foreign-page detection), ASan+UBSan, TSan (the build directories of
# scripts/run-tests.sh, configured here when missing). Not part of CI: a
# soak is a program that reports counts, run by hand before a release.
# Prints a table and writes out/soak/soak.json; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
case "$secs" in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
outdir=out/soak
mkdir -p "$outdir"
rm -f "$outdir"/*.log

builds=(
	"build-soak|-Dbuildtype=release -Ddebug_level=2|"
	"build-asan|-Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false -Ddebug_level=2 -Ddpdk=disabled|asan"
	"build-tsan|-Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false -Ddpdk=disabled|tsan"
)
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="halt_on_error=1 exitcode=66"

results=()
failed=0
for b in "${builds[@]}"; do
	IFS='|' read -r dir opts setup <<<"$b"
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		meson setup "$dir" $opts >"$outdir/$dir.setup.log" 2>&1 ||
			{ cat "$outdir/$dir.setup.log"; exit 1; }
	fi
	ninja -C "$dir" >"$outdir/$dir.ninja.log" 2>&1 ||
		{ tail -30 "$outdir/$dir.ninja.log"; exit 1; }
	# Sanitizers slow everything down: fewer pages a round, same rounds.
	pages=2000000
	[ -n "$setup" ] && pages=200000
	mtest=(meson test -C "$dir" --no-rebuild --suite threads)
	[ -n "$setup" ] && mtest+=(--setup "$setup")

	rounds=0 pages_total=0 frames_total=0 tests_total=0 fails=0
	end=$((SECONDS + secs))
	echo "==> $dir: soaking for ${secs}s"
	while [ $SECONDS -lt $end ]; do
		rounds=$((rounds + 1))
		log=$outdir/$dir.round$rounds.log
		if "$dir/tests/stress/stress_page" $pages 4 >"$log" 2>&1; then
			pages_total=$((pages_total + pages))
		else
			fails=$((fails + 1)); echo "    stress_page failed: $log"; continue
		fi
		if "${mtest[@]}" >>"$log" 2>&1; then
			tests_total=$((tests_total + $(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -n1)))
		else
			fails=$((fails + 1)); echo "    threaded tests failed: $log"; continue
		fi
		for args in "--port veth0,peer=veth1 --bidir --tx-first 32 --verify" \
			    "--port null0 --port veth0,peer=veth1 --mode pass --refill array"; do
			# shellcheck disable=SC2086
			out=$("$dir/app/fwd/fwd" $args --duration 1 --arena-mb 32 2>&1)
			echo "$out" >>"$log"
			if ! grep -q "pages leaked 0" <<<"$out" ||
			   { [[ $args == *--verify* ]] && ! grep -q ": OK" <<<"$out"; }; then
				fails=$((fails + 1)); echo "    fwd $args failed: $log"; continue 2
			fi
			n=$(sed -n 's/.*delivered [0-9.]* Mpps (\([0-9]*\) frames).*/\1/p' <<<"$out")
			frames_total=$((frames_total + ${n:-0}))
		done
		rm -f "$log"
	done
	echo "    $rounds rounds, $pages_total pages handed across threads, $tests_total threaded tests passed, $frames_total frames forwarded, $fails failures"
	results+=("$dir $rounds $pages_total $tests_total $frames_total $fails")
	failed=$((failed + fails))
done

python3 - "$outdir/soak.json" "$secs" "${results[@]}" <<'EOF'
import json, sys
out, secs, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
res = {"seconds_per_build": secs, "builds": []}
print(f"\nsoak, {secs} s per build")
print(f"{'build':<12}{'rounds':>8}{'pages':>14}{'tests':>8}{'frames':>14}{'failures':>10}")
for r in rows:
    d, rounds, pages, tests, frames, fails = r.split()
    res["builds"].append({"build": d, "rounds": int(rounds), "pages": int(pages),
                          "threaded_tests": int(tests), "frames": int(frames),
                          "failures": int(fails)})
    print(f"{d:<12}{rounds:>8}{pages:>14}{tests:>8}{frames:>14}{fails:>10}")
json.dump(res, open(out, "w"), indent=1)
print(f"JSON: {out}")
EOF
[ $failed = 0 ]
