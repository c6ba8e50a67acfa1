#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-mempool-perf.py PP_MEMPOOL_PERF PLUGIN - what pp-mempool-perf's
command line promises beyond check-cli.py's rules:

  - without -d it loads the pagepool plugin by itself: the build's
    (PLUGIN) when it runs from the build tree, else the installed one;
    one cell, --json -, exits 0 with one JSON document (root and 96 MiB
    of free 2 MiB hugepages: skipped without them);
  - -d naming no file, and --cores naming a CPU this process may not
    use, are bad arguments: exit 2 before the EAL starts;
  - when the EAL fails (here: a plugin in a world-writable directory,
    which it refuses), the message points at the EAL's own line above it
    instead of guessing causes, exit 1.

Exit 0 when every check that could run passed, 77 when none could.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

prog, plugin = sys.argv[1], sys.argv[2]
failures = []
ran = 0


def check(ok, what, p=None):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if p is not None:
            print("  exit %d\n  stdout: %s\n  stderr: %s" %
                  (p.returncode, p.stdout.strip()[:2000],
                   p.stderr.strip()[:2000]))


def run(args):
    global ran
    ran += 1
    return subprocess.run([prog] + args, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def free_2m_mib():
    try:
        with open("/sys/kernel/mm/hugepages/hugepages-2048kB/"
                  "free_hugepages") as f:
            return int(f.read()) * 2
    except (OSError, ValueError):
        return 0


CELL = ["--cell", "1,0,1", "--runs", "1", "--ms", "1"]


def world_writable_dir(path):
    """The first directory above @path that anyone may write to (the EAL
    refuses to load a plugin below one), or None."""
    d = os.path.dirname(os.path.realpath(path))
    while True:
        if os.stat(d).st_mode & 0o002:
            return d
        if d == "/":
            return None
        d = os.path.dirname(d)


# The default plugin.
insecure = world_writable_dir(plugin)
if insecure:
    # A build tree under /tmp, say: the EAL refuses the build's plugin,
    # and the message must say so and point at the fixes, not guess.
    p = run(CELL + ["--json", "-"])
    check(p.returncode == 1 and "world-writable" in p.stderr and
          "see the EAL's message above" in p.stderr and
          "troubleshooting.md" in p.stderr,
          f"no -d, the build tree below world-writable {insecure}: the "
          "EAL's refusal, exit 1, pointing at the fixes", p)
elif os.geteuid() != 0:
    print("skip the run without -d: not root")
elif free_2m_mib() < 96:
    print("skip the run without -d: fewer than 96 MiB of free 2 MiB "
          "hugepages")
else:
    p = run(CELL + ["--json", "-"])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    check(p.returncode == 0 and isinstance(doc, dict) and
          doc.get("tool") == "pp-mempool-perf" and
          len(doc.get("cells", [])) == 1,
          "no -d: the build's plugin loads, one cell as JSON", p)

# Bad arguments: exit 2, and the EAL never starts (its lines say "EAL:").
p = run(["-d", "/nonexistent/librte_mempool_pagepool.so"] + CELL)
check(p.returncode == 2 and
      "/nonexistent/librte_mempool_pagepool.so" in p.stderr and
      "EAL:" not in p.stderr,
      "-d /nonexistent/...: exit 2 naming the path, before the EAL", p)
cpu = max(os.sched_getaffinity(0)) + 1
p = run(["--cores", "0,%d" % cpu] + CELL)
check(p.returncode == 2 and ("--cores 0,%d" % cpu) in p.stderr and
      "EAL:" not in p.stderr,
      "--cores 0,%d: exit 2, before the EAL" % cpu, p)

# The EAL fails: its own line says why, and pp-mempool-perf points at it
# rather than listing guesses.
with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o777)
    copy = os.path.join(tmp, os.path.basename(plugin))
    shutil.copy(plugin, copy)
    p = run(["-d", copy] + CELL)
    check(p.returncode == 1 and "world-writable" in p.stderr and
          "see the EAL's message above" in p.stderr and
          "run as root with" not in p.stderr,
          "a plugin the EAL refuses: exit 1, 'see the EAL's message above'",
          p)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
sys.exit(0 if ran else 77)
