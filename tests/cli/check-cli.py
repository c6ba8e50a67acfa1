#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-cli.py - the command-line rules every installed program keeps.

    check-cli.py --project-version V [--json ARGS] [--taskset]
                 [--needs-value OPT] [--defaults "OPT=VALUE ..."]
                 [--exits "CODE ARGS"]... [--exits-without "DIR CODE ARGS"]...
                 [--bad-json ARGS]
                 PROGRAM [SUB...]

PROGRAM (with a subcommand SUB..., e.g. 'pp-bench scale') must:
  --help             exit 0, usage on stdout (not empty), nothing on stderr
  --version          exit 0, a line on stdout that names version V
  -h, -V             the same as --help and --version, and the help
                     names both short forms
  --defaults "OPT=VALUE ..."
                     the help's entry for each OPT (its line, and the
                     lines after it up to the next option) says "default"
                     and, after that word, VALUE
  --exits "CODE ARGS"
                     PROGRAM ARGS exits CODE with a message on stderr: 2
                     for a bad argument, 1 for what the environment lacks
                     (repeatable)
  --exits-without "DIR CODE ARGS"
                     the same, where this machine has nothing in DIR (no
                     device of a kind): skipped where it has
  --too-big "BYTES ARGS"
                     PROGRAM ARGS, which asks for BYTES of memory (an
                     arena, a table), exits 2 before the run with a message
                     that gives the machine's memory, where BYTES is more
                     than MemTotal (skipped where it is not). Run under
                     RLIMIT_AS and RLIMIT_FSIZE of 1 GiB (memory_fence()),
                     so that a program that tried anyway fails at once
                     rather than fills the machine (repeatable)
  --bad-json ARGS    PROGRAM ARGS --json /nonexistent-pp-cli/out.json:
                     exit 2 naming the path, nothing on stdout (no run);
                     ARGS default to --json's without "--json -"; and
                     PROGRAM ARGS --json --help, run in an empty
                     directory, exits 2 in the wording of --needs-value
                     and leaves no file '--help' there
  --no-such-option   exit 2, nothing on stdout, and on stderr the one line
  -Z                 every program words alike (pp_cli_bad_option()):
                     "PROG: unknown option 'X' (PROG --help lists them)"
  --needs-value OPT  the same for PROG OPT with no value after it:
                     "PROG: option 'OPT' needs a value (PROG --help says
                     what it takes)"; and for PROG OPT --help, where
                     getopt takes the option after OPT as its value
                     (pp_cli_check_value()): "PROG: option 'OPT' needs a
                     value, not the option '--help' (give it its value
                     right after it; PROG --help says what it takes)"
and, given --json ARGS (its cheapest run, which writes JSON to stdout with
'--json -'), exit 0 and print one JSON document on stdout whose tool,
version, commit, date and machine members are there (version V, date UTC
ISO 8601). --taskset (fwd): under an affinity mask of one CPU, the
document's worker "cpus" are that CPU, and --cpus outside it exits 2.
Programs that need root or a device for a run get no --json run.
"""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def show(p):
    for name, text in (("stdout", p.stdout), ("stderr", p.stderr)):
        if text:
            print("  %s: %s" % (name, text.strip().replace("\n", "\n    ")[:2000]))


def help_entry(text, opt):
    """The entry of option @opt in a help text: the line that starts with
    it (after '-X, ' for a long option with a short form), and the lines
    after it up to the next that starts with '-' or is empty."""
    lines = text.splitlines()
    start = re.compile(r"^\s*(-\w, )?%s([\s=,]|$)" % re.escape(opt))
    for i, line in enumerate(lines):
        if start.match(line):
            entry = [line]
            for more in lines[i + 1:]:
                if not more.strip() or more.lstrip().startswith("-"):
                    break
                entry.append(more)
            return " ".join(l.strip() for l in entry)
    return ""


def sanitized(path):
    """Whether @path was built with ASan or TSan: they reserve terabytes
    of shadow address space at start, which RLIMIT_AS would refuse."""
    try:
        with open(shutil.which(path) or path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__tsan_init" in data


def memory_fence(limit_as=True):
    """In the child, before exec: at most 1 GiB of address space (unless
    the program is sanitized, see sanitized()) and of any one file, so
    that a program that tries to allocate what --too-big asks for fails
    at once instead of taking the machine's memory (and, through the OOM
    killer, other processes). A 4 KiB arena is a memfd filled with
    fallocate(), which RLIMIT_AS does not bound and RLIMIT_FSIZE does
    (EFBIG; SIGXFSZ ignored, so it is an error, not a kill)."""
    if limit_as:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def json_doc(cmd, version, what):
    p = run(cmd)
    check(p.returncode == 0, "%s: exit 0 (got %d)" % (what, p.returncode))
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        check(False, "%s: stdout is one JSON document (%s)" % (what, e))
        show(p)
        return None
    check(isinstance(doc, dict), "%s: the document is an object" % what)
    if not isinstance(doc, dict):
        return None
    for key in ("tool", "version", "commit", "date", "machine"):
        check(key in doc and doc[key] not in ("", None),
              "%s: has '%s'" % (what, key))
    check(doc.get("version") == version,
          "%s: version is %s (got %r)" % (what, version, doc.get("version")))
    check(bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                            str(doc.get("date")))),
          "%s: date is UTC ISO 8601 (got %r)" % (what, doc.get("date")))
    if p.returncode or failures:
        show(p)
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--project-version", required=True)
    ap.add_argument("--json", default="")
    ap.add_argument("--taskset", action="store_true")
    ap.add_argument("--needs-value", default="")
    ap.add_argument("--defaults", default="")
    ap.add_argument("--exits", action="append", default=[])
    ap.add_argument("--exits-without", action="append", default=[])
    ap.add_argument("--too-big", action="append", default=[])
    ap.add_argument("--bad-json", default=None)
    ap.add_argument("program", nargs="+")
    a = ap.parse_args()
    prog = a.program
    name = " ".join([os.path.basename(prog[0])] + prog[1:])

    p = run(prog + ["--help"])
    check(p.returncode == 0, "%s --help: exit 0 (got %d)" % (name, p.returncode))
    check(p.stdout.strip() != "", "%s --help: usage on stdout" % name)
    check(p.stderr == "", "%s --help: nothing on stderr" % name)
    if failures:
        show(p)
    help_text = p.stdout

    n = len(failures)
    p = run(prog + ["--version"])
    check(p.returncode == 0, "%s --version: exit 0 (got %d)" % (name, p.returncode))
    check(a.project_version in p.stdout,
          "%s --version: names version %s" % (name, a.project_version))
    if len(failures) > n:
        show(p)
    version_text = p.stdout

    # The short forms, and the help names them.
    for short, long_, text in (("-h", "--help", help_text),
                               ("-V", "--version", version_text)):
        n = len(failures)
        p = run(prog + [short])
        check(p.returncode == 0 and p.stdout == text and p.stderr == "",
              "%s %s: as %s (exit %d)" % (name, short, long_, p.returncode))
        check(re.search(r"(^|[\s\[|(])%s\b" % short, help_text) is not None,
              "%s --help: names %s" % (name, short))
        if len(failures) > n:
            show(p)

    # The defaults: the help's entry for each option names its default.
    for spec in shlex.split(a.defaults):
        opt, _, val = spec.partition("=")
        entry = help_entry(help_text, opt)
        at = entry.find("default") if entry else -1
        check(at >= 0 and re.search(r"(?<![\w.])%s(?![\w.])" % re.escape(val),
                                    entry[at:]) is not None,
              "%s --help: %s says its default, %s (%s)" %
              (name, opt, val, "entry: %r" % entry if entry else "no entry"))

    # A bad option: one line in the one wording (pp_cli_bad_option()),
    # nothing on stdout, exit 2.
    bad = [("--no-such-option",
            "unknown option '--no-such-option' (%s --help lists them)"),
           ("-Z", "unknown option '-Z' (%s --help lists them)")]
    if a.needs_value:
        bad.append((a.needs_value, "option '%s' needs a value "
                    "(%%s --help says what it takes)" % a.needs_value))
    if a.needs_value:
        bad.append(((a.needs_value, "--help"), "option '%s' needs a value, "
                    "not the option '--help' (give it its value right "
                    "after it; %%s --help says what it takes)" %
                    a.needs_value))
    for arg, want in bad:
        n = len(failures)
        want = "%s: %s\n" % (name, want % name)
        args = list(arg) if isinstance(arg, tuple) else [arg]
        arg = " ".join(args)
        p = run(prog + args)
        check(p.returncode == 2,
              "%s %s: exit 2 (got %d)" % (name, arg, p.returncode))
        check(p.stderr == want, "%s %s: says %r" % (name, arg, want))
        check(p.stdout == "", "%s %s: nothing on stdout" % (name, arg))
        if len(failures) > n:
            show(p)

    # Exit status: 2 for a bad argument, 1 for the environment.
    exits = [(None, e) for e in a.exits]
    exits += [tuple(e.split(None, 1)) for e in a.exits_without]
    for where, spec in exits:
        code, _, args = spec.partition(" ")
        what = "%s %s" % (name, args)
        if where and os.path.isdir(where) and os.listdir(where):
            print("skip %s: this machine has %s" % (what, where))
            continue
        n = len(failures)
        p = run(prog + shlex.split(args))
        check(p.returncode == int(code) and p.stderr.strip() != "",
              "%s: exit %s with a message (got %d)" % (what, code, p.returncode))
        if len(failures) > n:
            show(p)

    # More memory than the machine has: refused before anything is
    # allocated (pp_cli_fits_memory()).
    mem_total = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
    for spec in a.too_big:
        size, _, args = spec.partition(" ")
        what = "%s %s" % (name, args)
        if int(size) <= mem_total:
            print("skip %s: this machine has %d bytes" % (what, mem_total))
            continue
        n = len(failures)
        limit_as = not sanitized(prog[0])
        p = subprocess.run(prog + shlex.split(args), capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL,
                           preexec_fn=lambda: memory_fence(limit_as))
        check(p.returncode == 2 and p.stdout == "" and
              "of memory this machine has (MemTotal in /proc/meminfo)" in
              p.stderr,
              "%s: more than the memory, exit 2 before the run (got %d)" %
              (what, p.returncode))
        if len(failures) > n:
            show(p)

    # --json into a directory that is not there: refused before the run
    # (nothing on stdout, where a run prints), exit 2, naming the path.
    bad_json = a.bad_json
    if bad_json is None and a.json:
        words = shlex.split(a.json)
        i = words.index("--json")
        bad_json = shlex.join(words[:i] + words[i + 2:])
    if bad_json is not None:
        path = "/nonexistent-pp-cli/out.json"
        what = "%s %s --json %s" % (name, bad_json, path)
        n = len(failures)
        p = run(prog + shlex.split(bad_json) + ["--json", path])
        check(p.returncode == 2 and path in p.stderr and p.stdout == "",
              "%s: refused before the run, exit 2, naming the path (got %d)"
              % (what, p.returncode))
        if len(failures) > n:
            show(p)
        # The option after --json is not its file: the run used to write
        # its JSON to a file named '--help'.
        what = "%s %s --json --help" % (name, bad_json)
        want = ("%s: option '--json' needs a value, not the option '--help' "
                "(give it its value right after it; %s --help says what it "
                "takes)\n" % (name, name))
        n = len(failures)
        with tempfile.TemporaryDirectory() as d:
            here = [os.path.abspath(prog[0])] + prog[1:]
            p = subprocess.run(here + shlex.split(bad_json) +
                               ["--json", "--help"], capture_output=True,
                               text=True, timeout=120,
                               stdin=subprocess.DEVNULL, cwd=d)
            left = os.listdir(d)
        check(p.returncode == 2 and p.stderr == want and p.stdout == "",
              "%s: exit 2, says %r (got %d)" % (what, want, p.returncode))
        check(not left, "%s: no file written (found %r)" % (what, left))
        if len(failures) > n:
            show(p)

    if a.json:
        args = shlex.split(a.json)
        json_doc(prog + args, a.project_version, "%s %s" % (name, a.json))
        if a.taskset and not shutil.which("taskset"):
            print("skip the affinity checks: no taskset (util-linux)")
        elif a.taskset:
            cpu = max(os.sched_getaffinity(0))
            doc = json_doc(["taskset", "-c", str(cpu)] + prog + args,
                           a.project_version,
                           "taskset -c %d %s %s" % (cpu, name, a.json))
            cpus = doc.get("cpus") if doc else None
            check(bool(cpus) and set(cpus) == {cpu},
                  "taskset -c %d: the workers stay on CPU %d (got %r)" %
                  (cpu, cpu, cpus))
            p = run(["taskset", "-c", str(cpu)] + prog + args +
                    ["--cpus", str(cpu + 1)])
            check(p.returncode == 2 and p.stderr.strip() != "",
                  "taskset -c %d %s --cpus %d: refused, exit 2 (got %d)" %
                  (cpu, name, cpu + 1, p.returncode))

    if failures:
        print("%s: %d check(s) failed" % (name, len(failures)))
        return 1
    print("%s: conforms" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
