#!/usr/bin/env python3
# check-doc-api.py ROOT BUILD - doc/api.md's header table (rows that start
# with | `name.h` |) lists every public header: those in include/pagepool
# (pp_config.h.in as the pp_config.h meson makes of it) and whatever meson
# installs into <includedir>/pagepool (BUILD/meson-info/intro-installed
# .json, written at configure time), and no header that is neither. A
# header a user receives but the API page does not mention is one nobody
# finds; one the page lists that is not installed sends them looking.
import json
import pathlib
import re
import sys

ROW = re.compile(r'^\| `([A-Za-z0-9_]+\.h)` \|')


def main():
    if len(sys.argv) != 3:
        print('usage: check-doc-api.py ROOT BUILD', file=sys.stderr)
        return 2
    root, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    public = {p.name.removesuffix('.in')
              for p in (root / 'include' / 'pagepool').iterdir()
              if p.name.endswith(('.h', '.h.in'))}
    installed = json.loads((build / 'meson-info' /
                            'intro-installed.json').read_text())
    public |= {pathlib.PurePath(dest).name for dest in installed.values()
               if pathlib.PurePath(dest).parent.name == 'pagepool' and
               dest.endswith('.h')}
    doc = root / 'doc' / 'api.md'
    listed = {m.group(1) for line in doc.read_text().splitlines()
              if (m := ROW.match(line))}
    bad = 0
    for h in sorted(public - listed):
        print(f'{doc.name}: the header table has no row for {h}, which is '
              'installed: add "| `' + h + '` | what it serves | library |"')
        bad += 1
    for h in sorted(listed - public):
        print(f'{doc.name}: the header table lists {h}, which is not a '
              'public header (include/pagepool) nor installed: drop the row')
        bad += 1
    if not bad:
        print(f'{doc.name}: lists all {len(public)} public headers: '
              + ', '.join(sorted(public)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
