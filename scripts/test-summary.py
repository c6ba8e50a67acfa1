#!/usr/bin/env python3
"""Sum meson test logs into one closing line: 'N passed, N failed, N skipped'.

Each argument is a meson-logs/testlog.json (one JSON object per line).
Skipped tests are listed with their reason so that a skip is never silent.
"""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    build = path.split("/meson-logs/")[0]
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"{build}: no test log ({e.strerror})")
        failed += 1
        continue
    for line in lines:
        t = json.loads(line)
        result = t["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
            reason = (t.get("stdout") or "").strip().splitlines()
            why = next((l for l in reason if l.startswith("SKIP")), "no reason given")
            print(f"skipped: {build}: {t['name']}: {why}")
        else:
            failed += 1
            print(f"failed: {build}: {t['name']}: {result}")

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
