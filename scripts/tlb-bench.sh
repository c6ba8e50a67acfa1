#!/usr/bin/env bash
# tlb-bench.sh - the page-size benchmark of huge vmalloc areas:
# `pp-bench tlb` over tables of 64 MiB, 1 GiB and 4 GiB on 4 KiB, 2 MiB
# and 1 GiB pages (doc/vmalloc.md; results in doc/benchmarks-archive.md).
#
# The three backings of one table size live at the same time, so that the
# runs alternate between them: the 4 GiB row holds 4 GiB of base pages,
# 2048 x 2 MiB and 4 x 1 GiB pages at once (12 GiB). This script raises
# the hugepage reservation to what that needs on top of what others hold
# now, for this run only, and puts the previous reservation back on exit
# (never below 1024 x 2 MiB and 2 x 1 GiB, what scripts/setup.sh --test
# keeps).
# A case whose pages the kernel cannot give is skipped by pp-bench with
# the reason. Needs root to change the reservation; without it, runs with
# what is free.
#
# Builds build/ (release) if needed; writes out/tlb-bench.json.
#   PP_BUILD_DIR  build directory (default build)
# Arguments are passed to `pp-bench tlb` (e.g. --quick, --sizes 64M,1G).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${PP_BUILD_DIR:-build}
outdir=out
mkdir -p "$outdir"

step() { printf '==> %s\n' "$*"; }

# ---- build ----
if [ ! -f "$build/build.ninja" ]; then
	step "configuring $build/ (release)"
	meson setup "$build" -Dbuildtype=release >"$outdir/tlb-setup.log" 2>&1 ||
		{ cat "$outdir/tlb-setup.log"; exit 1; }
fi
step "building pp-bench"
ninja -C "$build" app/pp-bench/pp-bench >"$outdir/tlb-build.log" 2>&1 ||
	{ tail -40 "$outdir/tlb-build.log"; exit 1; }

# ---- hugepages for this run ----
hp=/sys/kernel/mm/hugepages
h2=$hp/hugepages-2048kB
h1=$hp/hugepages-1048576kB
# The shared floor that scripts/setup.sh --test reserves for everyone.
floor2=1024
floor1=2
prev2=""
prev1=""

restore() {
	# The previous reservation, but never below the shared floor.
	if [ -n "$prev2" ]; then
		local v=$(( prev2 > floor2 ? prev2 : floor2 ))
		echo "$v" >"$h2/nr_hugepages" 2>/dev/null ||
			echo "warning: could not restore $h2/nr_hugepages to $v" >&2
	fi
	if [ -n "$prev1" ]; then
		local v=$(( prev1 > floor1 ? prev1 : floor1 ))
		echo "$v" >"$h1/nr_hugepages" 2>/dev/null ||
			echo "warning: could not restore $h1/nr_hugepages to $v" >&2
	fi
	if [ -n "$prev2$prev1" ]; then
		step "hugepages restored: $(cat "$h2/nr_hugepages" 2>/dev/null || echo -) x 2 MiB, $(cat "$h1/nr_hugepages" 2>/dev/null || echo -) x 1 GiB"
	fi
}
trap restore EXIT

# reserve DIR PAGES: make PAGES free on top of what is in use now.
reserve() {
	local dir=$1 want=$2 nr free used target
	[ -d "$dir" ] || { echo "note: the kernel has no $(basename "$dir"); those cases are skipped" >&2; return 0; }
	nr=$(cat "$dir/nr_hugepages")
	free=$(cat "$dir/free_hugepages")
	used=$(( nr - free ))
	target=$(( used + want ))
	[ "$target" -gt "$nr" ] || { echo "$nr"; return 0; }
	if [ ! -w "$dir/nr_hugepages" ]; then
		echo "note: not root: cannot reserve $want pages in $dir; running with the $free free" >&2
		return 0
	fi
	echo "$nr"
	echo "$target" >"$dir/nr_hugepages" 2>/dev/null || true
	local got
	got=$(cat "$dir/free_hugepages")
	if [ "$got" -lt "$want" ] && [ -w /proc/sys/vm/compact_memory ]; then
		# Free memory in pieces smaller than a page: compact, try again.
		echo 1 >/proc/sys/vm/compact_memory 2>/dev/null || true
		echo "$target" >"$dir/nr_hugepages" 2>/dev/null || true
		got=$(cat "$dir/free_hugepages")
	fi
	[ "$got" -ge "$want" ] ||
		echo "note: the kernel gave only $got of the $want free pages asked in $dir (memory fragmented or short); pp-bench skips what does not fit" >&2
}

# 1 GiB pages first: they need long free runs, which 2 MiB pages break up.
step "reserving 4 x 1 GiB and 2048 x 2 MiB hugepages for this run"
# 32 x 2 MiB of slack: other programs take pages between here and the
# 4 GiB case, and a table that falls short by one page is skipped.
prev1=$(reserve "$h1" 4)
prev2=$(reserve "$h2" $((2048 + 32)))

# ---- run ----
step "pp-bench tlb $* (about three minutes; the machine may be noisy)"
"$build/app/pp-bench/pp-bench" tlb --json "$outdir/tlb-bench.json" "$@"
step "wrote $outdir/tlb-bench.json"
