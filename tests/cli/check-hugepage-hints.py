#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-hugepage-hints.py ROOT - no message tells the operator to write a
hugepage count by hand.

pp-hugepages (app/pp-hugepages) reserves hugepages, reads the count back
and says what the kernel gave; a message that finds hugepages short names
it (pp-hugepages -r N --pages, or pp-hugepages to see what is free), not
"echo N > .../nr_hugepages". This reads every C source and header under
ROOT's lib/, drivers/, app/ and examples/ (but app/pp-hugepages, whose job
those files are) and fails on a string literal (adjacent literals joined,
as the compiler joins them) that
  - says "echo" and "hugepages": a shell command that writes a count, or
  - names nr_hugepages in a sentence (a space in the literal; a bare
    "nr_hugepages" is a file name handed to a path builder).

KNOWN lists the messages of code owned elsewhere that still do, each with
its file: they are reported, not failed, and one that no longer matches
fails, so that the list shrinks when its owner rewords it.
"""
import pathlib
import re
import sys

DIRS = ("lib", "drivers", "app", "examples")
SKIP = ("app/pp-hugepages/",)
# Messages of code that still print a hand-written count, with their file
# (none now: lib/mem's shortage messages name pp-hugepages too).
KNOWN = {}
LITERALS = re.compile(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*')


def offending(text):
    for m in LITERALS.finditer(text):
        s = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0)))
        if ("echo" in s and "hugepages" in s) or \
           ("nr_hugepages" in s and " " in s):
            yield text.count("\n", 0, m.start()) + 1, s


def main():
    root = pathlib.Path(sys.argv[1])
    bad = 0
    found = {}
    for d in DIRS:
        for p in sorted((root / d).rglob("*")):
            rel = p.relative_to(root).as_posix()
            if not p.is_file() or not p.name.endswith((".c", ".h")) or \
               rel.startswith(SKIP):
                continue
            for line, s in offending(p.read_text(errors="replace")):
                found[rel] = found.get(rel, 0) + 1
                if rel in KNOWN:
                    print("known %s:%d: %s" % (rel, line, s))
                    continue
                print("FAIL %s:%d: suggest pp-hugepages, not a hand-written "
                      "count: %s" % (rel, line, s))
                bad += 1
    for rel, n in KNOWN.items():
        if found.get(rel, 0) != n:
            print("FAIL %s: KNOWN says %d such message(s), found %d: update "
                  "KNOWN" % (rel, n, found.get(rel, 0)))
            bad += 1
    print("%d message(s) to fix" % bad if bad else
          "ok: messages name pp-hugepages")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
