#!/usr/bin/env python3
# check-design.py ROOT [DOC] - the map in doc/design.md names real code.
# Every `code span` of DOC (default doc/design.md) that names a function,
# `name()`, must be defined in the sources (a function or a function-like
# macro: a definition line, not a call or a prototype), and every path of
# the tree the page names, in a span or not (lib/..., include/...,
# drivers/..., app/..., examples/..., tests/..., scripts/..., doc/...),
# must exist. A map whose
# functions were renamed or whose files moved fails here, so the walk
# cannot drift from the code unnoticed. A function the page cites as the
# kernel's ("the kernel's `page_pool_put_page()`", "Linux 5.13's
# `__alloc_pages_bulk()`") is not looked for;
# system calls are written as man pages name them, `fallocate(2)`.
import pathlib
import re
import sys

SPAN = re.compile(r'`([^`\n]+)`')
FUNC = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\(\)$')
PATH = re.compile(r'(?<![A-Za-z0-9_./-])'
                  r'(?:lib|include|drivers|app|examples|tests|scripts|doc)'
                  r'/[A-Za-z0-9_./-]*[A-Za-z0-9_]')
SOURCES = ('lib', 'include', 'drivers', 'app', 'examples')


def definitions(root):
    """Names defined in the C sources: a name followed by '(' on a line
    that starts at column 0 (this tree's style puts a definition's name
    there or after its return type on the same line) and does not end
    in ';' (a prototype), or after '#define '."""
    names = set()
    start = re.compile(r'^(?=[A-Za-z_])(?:[^(]*[^A-Za-z0-9_(])?'
                       r'([A-Za-z_][A-Za-z0-9_]*)\(')
    macro = re.compile(r'^#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\(')
    for top in SOURCES:
        for f in (root / top).rglob('*'):
            if f.suffix not in ('.c', '.h', '.in'):
                continue
            lines = f.read_text(errors='replace').splitlines()
            for i, line in enumerate(lines):
                if m := macro.match(line):
                    names.add(m.group(1))
                    continue
                m = start.match(line)
                if not m or line.rstrip().endswith(';'):
                    continue
                # A prototype split over lines ends in ';' before '{'.
                rest = ' '.join(lines[i:i + 8])
                brace, semi = rest.find('{'), rest.find(';')
                if brace >= 0 and (semi < 0 or brace < semi):
                    names.add(m.group(1))
    return names


def main():
    if len(sys.argv) not in (2, 3):
        print('usage: check-design.py ROOT [DOC]', file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    doc = pathlib.Path(sys.argv[2]) if len(sys.argv) == 3 else \
        root / 'doc' / 'design.md'
    defined = definitions(root)
    bad = funcs = paths = 0
    for no, line in enumerate(doc.read_text().splitlines(), 1):
        for span in SPAN.findall(line):
            if m := FUNC.match(span):
                # The kernel's functions the design follows are not ours.
                before = line[:line.find('`' + span)]
                if re.search(r"(kernel's|Linux [0-9.]+'s) $", before):
                    continue
                funcs += 1
                if m.group(1) not in defined:
                    print(f'{doc.name}:{no}: names {span}, which no source '
                          'file defines: follow the code (renamed? gone?)')
                    bad += 1
        for path in PATH.findall(line):
            paths += 1
            if not (root / path).exists():
                print(f'{doc.name}:{no}: names {path}, which is not in '
                      'the tree: follow the code (moved? gone?)')
                bad += 1
    if not bad:
        print(f'{doc.name}: all {funcs} functions and {paths} paths it '
              'names exist')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
