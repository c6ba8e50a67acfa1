#!/usr/bin/env bash
# holders-bench.sh - what holder attribution (doc/telemetry.md, "Who
# holds my buffers") costs the forwarder: fwd built as it ships against
# fwd built with -Dholders=false (the stores compiled out), alternated
# run by run on the same configurations: null -> null in both directions
# on one core (the main job's headline workload) and null -> veth0 ->
# veth1 PASS, one core per side (the seed's workload).
#
# Builds $PP_BUILD_DIR (default build, release) and build-noholders if
# needed, prints a table, and writes out/holders-bench/holders-bench.json.
# Each figure is the median of PP_HOLDERS_REPEAT rounds (default 7) of
# PP_HOLDERS_DURATION seconds (default 3); the ratio is the median of the
# per-round ratios, and its range is printed beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${PP_HOLDERS_DURATION:-3}
rep=${PP_HOLDERS_REPEAT:-7}
on=${PP_BUILD_DIR:-build}
off=build-noholders
outdir=out/holders-bench
mkdir -p "$outdir"
rm -f "$outdir"/*.json

build() { # dir, then meson options
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dbuildtype=release "$@" \
			>"$outdir/$(basename "$dir").setup.log" 2>&1 ||
			{ cat "$outdir/$(basename "$dir").setup.log"; exit 1; }
	fi
	ninja -C "$dir" app/fwd/fwd >"$outdir/$(basename "$dir").ninja.log" 2>&1 ||
		{ tail -30 "$outdir/$(basename "$dir").ninja.log"; exit 1; }
}
echo "==> building $on/ (holders on) and $off/ (-Dholders=false)"
build "$on"
build "$off" -Dholders=false -Dtests=false
grep -q 'define PP_HOLDERS 1' "$on/include/pagepool/pp_config.h" ||
	{ echo "holders-bench: $on is built with -Dholders=false" >&2; exit 2; }

configs=(
	"bidir-null|--port null0 --port null1 --bidir"
	"pass-veth|--port null0 --port veth0,peer=veth1 --mode pass"
)
for r in $(seq "$rep"); do
	# Alternate which build goes first, so drift hits both alike.
	if [ $((r % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for c in "${configs[@]}"; do
		name=${c%%|*}
		for w in $order; do
			dir=$on
			[ "$w" = off ] && dir=$off
			echo "==> round $r/$rep: $name, holders $w (${dur}s)"
			# shellcheck disable=SC2086
			"$dir/app/fwd/fwd" ${c#*|} --duration "$dur" \
				--json "$outdir/$w-$name-$r.json" >/dev/null
		done
	done
done

python3 - "$outdir" "$rep" "${configs[@]%%|*}" <<'EOF'
import json, os, statistics as st, sys, platform, datetime
outdir, rep, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = []
print(f"\n{'workload':12} {'off Mpps':>9} {'on Mpps':>9} {'on/off':>7} "
      f"{'range':>11} {'off cyc/f':>9} {'on cyc/f':>9} {'+cyc/f':>7}")
for n in names:
    runs = {w: [json.load(open(f"{outdir}/{w}-{n}-{r}.json"))
                for r in range(1, rep + 1)] for w in ("off", "on")}
    pps = {w: [d["pps"] for d in runs[w]] for w in runs}
    cyc = {w: [d["cycles_per_frame"] for d in runs[w]] for w in runs}
    ratios = [b / a for a, b in zip(pps["off"], pps["on"])]
    row = {
        "workload": n,
        "off_mpps": st.median(pps["off"]) / 1e6,
        "on_mpps": st.median(pps["on"]) / 1e6,
        "ratio_median": st.median(ratios),
        "ratio_min": min(ratios), "ratio_max": max(ratios),
        "off_cycles_per_frame": st.median(cyc["off"]),
        "on_cycles_per_frame": st.median(cyc["on"]),
        "cycles_added_per_frame": st.median(
            [b - a for a, b in zip(cyc["off"], cyc["on"])]),
    }
    rows.append(row)
    print(f"{n:12} {row['off_mpps']:9.2f} {row['on_mpps']:9.2f} "
          f"{row['ratio_median']:7.3f} {row['ratio_min']:5.2f}-"
          f"{row['ratio_max']:4.2f} {row['off_cycles_per_frame']:9.1f} "
          f"{row['on_cycles_per_frame']:9.1f} "
          f"{row['cycles_added_per_frame']:+7.2f}")
out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
       "machine": platform.node(), "rounds": rep, "rows": rows,
       "load_end": os.getloadavg()[0]}
json.dump(out, open(f"{outdir}/holders-bench.json", "w"), indent=1)
print(f"\nload average at the end: {out['load_end']:.2f}; "
      f"JSON: {outdir}/holders-bench.json")
EOF
