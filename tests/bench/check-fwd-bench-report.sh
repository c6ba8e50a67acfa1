#!/bin/sh
# check-fwd-bench-report.sh FWD REPORT FIXTURE - the main job's report on
# real runs: three rounds of every fwd configuration the report reads
# (0.2 s each), with a fixture for testpmd's log (80 Mpps a run, 31.5
# cycles a frame); the report must write the table, the JSON with its
# header and a headline that divides the two medians.
set -eu
fwd=$1 report=$2 fixture=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir -p out/fwd-bench
run() { # name, then fwd arguments
	name=$1
	shift
	"$fwd" "$@" --duration 0.2 --arena-mb 64 --json "out/fwd-bench/$name.json" >/dev/null
}
for i in 1 2 3; do
	for r in single list array; do
		run "pass-$r-$i" --port null0 --port veth0,peer=veth1 --mode pass --refill "$r"
	done
	for fr in 2048 auto; do
		run "fragpass-$fr-$i" --port null0 --port "veth0,peer=veth1,frag=$fr" --mode pass
	done
	run "redirect-null-$i" --port null0 --port null1
	run "bidir-null-$i" --port null0 --port null1 --bidir
	cp "$fixture" "out/fwd-bench/testpmd-$i.log"
done
python3 "$report" out/fwd-bench 0.2 3 0.00 >report.out
cat report.out
python3 - <<'PY'
import json, statistics
r = json.load(open("out/fwd-bench.json"))
for k in ("tool", "version", "commit", "date", "machine", "load"):
    assert r.get(k) not in (None, ""), f"header member {k} missing"
assert r["tool"] == "fwd-bench"
assert set(r["load"]) == {"start", "end"}
h = r["headline"]
assert len(h["pagepool"]["pps_runs"]) == 3, h["pagepool"]
assert h["dpdk"]["pps_runs"] == [80e6] * 3, h["dpdk"]
assert h["dpdk"]["cycles_per_frame"] == 31.5
want = statistics.median(h["pagepool"]["pps_runs"]) / 80e6
assert abs(h["ratio"] - want) < 1e-9, (h["ratio"], want)
assert r["leaked_pages"] == 0
txt = open("out/fwd-bench.txt").read()
assert "Headline, like for like" in txt and "pagepool / DPDK" in txt
assert "one direction" in txt
print("ok: report, JSON header and headline")
PY
if command -v gnuplot >/dev/null; then
	test -s out/fwd-bench.png || { echo "no out/fwd-bench.png"; exit 1; }
fi
