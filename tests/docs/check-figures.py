#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-figures.py ROOT [DOC...] - every benchmark figure a document quotes
is the figure of the run it cites.

A quoted figure carries a marker right after it, an HTML comment that the
rendered page does not show:

    pagepool forwards **95.2 Mpps**<!-- fig fwd-bench headline.pagepool.pps/1e6 %.1f -->

"fig NAME PATH FORMAT": NAME is the run's JSON committed beside the
documents, doc/results/NAME.json; PATH walks it (dots; an integer picks a
list element; a "/N" suffix divides the value by N); FORMAT is a printf
format. The text just before the marker (after any '*' or '`' of markdown
emphasis) must end with the JSON's value so formatted. A marker whose
value is missing from the JSON fails too.

The documents checked (README.md, doc/benchmarks.md and doc/net.md, or
the DOCs given) may quote no rate or ratio without a marker: any "N Mpps" or "N.NNx" there without one fails, so that a figure
cannot be pasted in from memory or left behind by a rerun. Not counted: a
code span (`--queues 3x`), and a goal, which says so with its own marker
right after it: 1.6x<!-- target -->.
"""
import json
import pathlib
import re
import sys

MARKER = re.compile(r'<!-- fig (\S+) (\S+) (\S+) -->')
CODE_SPAN = re.compile(r'`[^`\n]*`')
# A rate or a ratio a reader would take for a measurement.
FIGURE = re.compile(r'\b\d+(?:\.\d+)?(?: Mpps\b|x\b)')


def lookup(doc, path):
    scale = 1.0
    if '/' in path:
        path, div = path.split('/', 1)
        scale = float(div)
    v = doc
    for key in path.split('.'):
        if isinstance(v, list):
            v = v[int(key)]
        else:
            v = v[key]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v / scale
    return v


def check_file(root, path, text, errors):
    results = root / 'doc' / 'results'
    cache = {}
    n = 0
    for m in MARKER.finditer(text):
        name, path_expr, fmt = m.groups()
        line = text.count('\n', 0, m.start()) + 1
        where = f'{path}:{line}'
        if name not in cache:
            try:
                cache[name] = json.loads(
                    (results / f'{name}.json').read_text())
            except (OSError, ValueError) as e:
                errors.append(f'{where}: doc/results/{name}.json: {e}')
                cache[name] = None
        if cache[name] is None:
            continue
        try:
            value = lookup(cache[name], path_expr)
            want = fmt % value
        except (KeyError, IndexError, ValueError, TypeError) as e:
            errors.append(f'{where}: {path_expr} not in doc/results/'
                          f'{name}.json ({e!r})')
            continue
        before = text[:m.start()].rstrip('*`')
        if not before.endswith(want):
            got = before[-len(want) - 8:].split('\n')[-1]
            errors.append(f"{where}: quotes '...{got}' but doc/results/"
                          f"{name}.json has {path_expr} = {want}")
        n += 1
    # Figures without a marker.
    code = [c.span() for c in CODE_SPAN.finditer(text)]
    for m in FIGURE.finditer(text):
        if any(a <= m.start() < b for a, b in code):
            continue
        after = text[m.end():m.end() + 200].lstrip('*`')
        if not after.startswith(('<!-- fig ', '<!-- target -->')):
            line = text.count('\n', 0, m.start()) + 1
            errors.append(f"{path}:{line}: '{m.group(0)}' has no "
                          f"'<!-- fig ... -->' marker naming its run")
    return n


def main():
    root = pathlib.Path(sys.argv[1])
    docs = sys.argv[2:] or ['README.md', 'doc/benchmarks.md', 'doc/net.md']
    errors = []
    total = 0
    for d in docs:
        text = (root / d).read_text()
        total += check_file(root, d, text, errors)
    for e in errors:
        print(e)
    if errors:
        print(f'{len(errors)} figure(s) differ from their run or cite none')
        return 1
    print(f'{total} quoted figure(s) agree with their runs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
