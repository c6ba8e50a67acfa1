#!/usr/bin/env python3
"""check-man.py - the man pages (doc/man) against the programs.

  check-man.py options PAGE REGION [--except OPT]... -- PROG [ARG]...
      PROG ARG... --help against the page's REGION: a section (OPTIONS)
      or a subsection (pp-bench tlb) of the rendered page. Every long
      option the help names appears in the region, and every option the
      region documents (a .TP heading) is one the help names; a short
      option paired with a long one ("-s, --show") is paired so in both;
      and every number in an option's help paragraph (a default, a range)
      is in that option's paragraph of the page, so a default changed in
      the program fails here until the page follows. --except OPT: an
      option the page documents that the help does not name, or the other
      way round (say why where the test is declared).
  check-man.py render PAGE...
      each page renders without a warning (groff -man -ww -z, and man
      --warnings as lintian runs it), and lexgrog finds its NAME line.
  check-man.py headers PAGE HEADER...
      the overview page's "Headers" subsection names every header meson
      installs, and none that it does not.
  check-man.py installed BUILD_ROOT
      every program meson installs into bindir or sbindir has a man page
      and a bash completion installed with it (meson's install plan,
      meson-info/intro-installed.json), and every page and completion
      installed is a program's (or pagepool.7).
  check-man.py example PAGE CC [ARG]...
      the C program of the page's EXAMPLES (the block from its #include
      to the closing brace) compiles and links, without a warning: CC
      FILE.c -o FILE ARG...

Exit 0 when all hold, 1 with every difference listed, 77 when groff or
man-db is missing (the reason on stdout).
"""
import os
import re
import shutil
import subprocess
import sys

LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
PAIR = re.compile(r"^\s*(-[a-zA-Z]), (--[a-z][a-z0-9-]*)", re.M)
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def need(tool, package):
    if not shutil.which(tool):
        print("skipped: %s not found (install %s)" % (tool, package))
        sys.exit(77)


def render(page):
    """The page as plain text, each paragraph on one line (no filling
    across lines, so no hyphenation), indents as man(7) makes them:
    sections at 0, subsections at 3, .TP headings at 7, bodies at 14."""
    need("groff", "groff-base")
    out = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou",
                          "-rLL=3000n", page],
                         capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def region(lines, name):
    """The lines of section or subsection @name."""
    level = 0 if name.isupper() else 3
    start = None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        if start is None:
            if line.strip() == name and indent == level:
                start = i + 1
        elif line.strip() and indent <= level:
            return lines[start:i]
    if start is None:
        sys.exit("%s: no section or subsection '%s'" % ("page", name))
    return lines[start:]


def page_options(lines):
    """{option: paragraph text} for the .TP headings that are options."""
    paras = {}
    key = None
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        text = line.strip()
        if indent == 7 and text.startswith("-"):
            names = LONG.findall(text) or re.findall(r"^-[a-zA-Z]", text)
            key = names[0]
            paras[key] = [text]
        elif indent >= 14 and key:
            paras[key].append(text)
        elif text:
            key = None
    return {k: " ".join(v) for k, v in paras.items()}


def help_options(text):
    """{option: paragraph} from a --help text: an option heading is a line
    that starts, after its indent, with '-'; its paragraph runs until the
    next heading, a blank line or a line that is not indented."""
    paras = {}
    key = None
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith(" ") and stripped.startswith("-"):
            names = LONG.findall(stripped.split("  ")[0]) or \
                re.findall(r"^-[a-zA-Z]", stripped)
            key = names[0]
            paras[key] = [stripped]
        elif line.startswith(" ") and stripped and key:
            paras[key].append(stripped)
        else:
            key = None
    return {k: " ".join(v) for k, v in paras.items()}


def numbers(text):
    # A path's digits (x86_64, hugepages-1G) are the build's, not a value.
    words = [w for w in text.split() if "/" not in w]
    return set(NUMBER.findall(" ".join(words)))


def check_options(page, name, exceptions, cmd):
    out = subprocess.run(cmd + ["--help"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s --help exited %d: %s" % (" ".join(cmd), out.returncode,
                                               out.stderr.strip()))
    helptext = out.stdout
    lines = region(render(page), name)
    body = "\n".join(lines)
    documented = page_options(lines)
    described = help_options(helptext)
    where = "%s (%s)" % (os.path.basename(page), name)
    errors = []
    # The help's own options are documented in the region; an option it
    # only mentions (pp-top's text names fwd --telemetry) anywhere on the
    # page.
    everywhere = "\n".join(render(page))
    for opt in sorted(set(LONG.findall(helptext)) - set(exceptions)):
        text = body if opt in described else everywhere
        if opt not in LONG.findall(text):
            errors.append("%s: does not name %s, which '%s --help' does" %
                          (where if opt in described
                           else os.path.basename(page), opt, " ".join(cmd)))
    for opt in sorted(set(documented) - set(exceptions)):
        if opt not in described:
            errors.append("%s: documents %s, which '%s --help' does not" %
                          (where, opt, " ".join(cmd)))
    help_pairs = set(PAIR.findall(helptext))
    page_pairs = set(PAIR.findall("\n".join(
        l for l in lines if l.startswith("       -"))))
    for short, long_ in sorted(help_pairs ^ page_pairs):
        side = "--help" if (short, long_) in help_pairs else "the page"
        errors.append("%s: '%s, %s' is paired only in %s" %
                      (where, short, long_, side))
    for opt, para in sorted(described.items()):
        if opt in exceptions or opt not in documented:
            continue
        missing = numbers(para) - numbers(documented[opt])
        if missing:
            errors.append("%s: %s: the help says %s, the page does not "
                          "(help: \"%s\")" % (where, opt,
                                              ", ".join(sorted(missing)),
                                              para))
    return errors


def check_render(pages):
    need("groff", "groff-base")
    need("man", "man-db")
    need("lexgrog", "man-db")
    env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MANWIDTH="80")
    errors = []
    for page in pages:
        name = os.path.basename(page)
        out = subprocess.run(["groff", "-man", "-ww", "-z", page],
                             capture_output=True, text=True)
        if out.returncode or out.stderr:
            errors.append("%s: groff -man -ww -z: %s" % (name, out.stderr))
        # What lintian's groff-message check runs.
        out = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l",
                              "-Tutf8", "-Z", page], capture_output=True,
                             text=True, env=env)
        if out.returncode or out.stderr:
            errors.append("%s: man --warnings: %s" % (name, out.stderr))
        out = subprocess.run(["lexgrog", page], capture_output=True,
                             text=True)
        base = name.rsplit(".", 1)[0]
        if out.returncode or not re.search(r': "%s - \S' % re.escape(base),
                                           out.stdout):
            errors.append("%s: lexgrog finds no 'NAME - description' line "
                          "for %s: %s%s" % (name, base, out.stdout,
                                            out.stderr))
    return errors


def check_headers(page, headers):
    lines = region(render(page), "Headers")
    named = {l.strip() for l in lines
             if l.startswith("       ") and not l.startswith("        ")
             and l.strip().endswith(".h")}
    installed = {os.path.basename(h) for h in headers}
    errors = ["%s: Headers does not name %s, which meson installs" %
              (os.path.basename(page), h) for h in sorted(installed - named)]
    errors += ["%s: Headers names %s, which meson does not install" %
               (os.path.basename(page), h) for h in sorted(named - installed)]
    return errors


def check_example(page, cc):
    lines = region(render(page), "EXAMPLES")
    code, inside = [], False
    for line in lines:
        if line.strip().startswith("#include"):
            inside = True
        if inside:
            code.append(line[14:])
            if line == " " * 14 + "}":
                break
    if not code or code[-1] != "}":
        return ["%s: EXAMPLES has no C program (#include ... })" %
                os.path.basename(page)]
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "example.c")
        with open(src, "w") as f:
            f.write("\n".join(code) + "\n")
        out = subprocess.run(cc[:1] + [src, "-o", os.path.join(tmp,
                                                             "example")] +
                             cc[1:], capture_output=True, text=True)
        if out.returncode or out.stderr:
            return ["%s: the EXAMPLES program does not build cleanly with "
                    "%s:\n%s" % (os.path.basename(page), " ".join(cc),
                                 out.stderr)]
    return []


def check_installed(build_root):
    import json
    with open(os.path.join(build_root, "meson-info",
                           "intro-installed.json")) as f:
        dests = list(json.load(f).values())
    progs = {os.path.basename(d) for d in dests
             if os.path.basename(os.path.dirname(d)) in ("bin", "sbin")}
    pages = {os.path.basename(d) for d in dests
             if re.search(r"/man/man[1-8]/", d)}
    comps = {os.path.basename(d) for d in dests
             if "/bash-completion/completions/" in d}
    errors = []
    for p in sorted(progs):
        if not {p + ".1", p + ".8"} & pages:
            errors.append("%s is installed without a man page (doc/man/%s.1, "
                          "or .8 if it needs root)" % (p, p))
        if p not in comps:
            errors.append("%s is installed without a bash completion "
                          "(contrib/bash-completion/%s)" % (p, p))
    for page in sorted(pages - {"pagepool.7"}):
        if page.rsplit(".", 1)[0] not in progs:
            errors.append("man page %s is installed without its program" %
                          page)
    for c in sorted(comps - progs):
        errors.append("completion %s is installed without its program" % c)
    if not progs:
        errors.append("%s: meson installs no program" % build_root)
    return errors


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    mode = argv[1]
    if mode == "options":
        if "--" not in argv:
            sys.exit(__doc__)
        sep = argv.index("--")
        page, name = argv[2], argv[3]
        opts = argv[4:sep]
        exceptions = [opts[i + 1] for i in range(len(opts))
                      if opts[i] == "--except"]
        errors = check_options(page, name, exceptions, argv[sep + 1:])
    elif mode == "render":
        errors = check_render(argv[2:])
    elif mode == "headers":
        errors = check_headers(argv[2], argv[3:])
    elif mode == "installed":
        errors = check_installed(argv[2])
    elif mode == "example":
        errors = check_example(argv[2], argv[3:])
    else:
        sys.exit(__doc__)
    for e in errors:
        print(e)
    if errors:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
