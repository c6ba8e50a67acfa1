#!/usr/bin/env python3
# check-doc-messages.py ROOT DOC... - every message a document quotes is
# still printed by the code.
#
# doc/troubleshooting.md gives each message its own heading, written as
# a code span and nothing else:  ### `cannot mount bpffs at`
# Each such excerpt must occur, character for character, in a file under
# ROOT's lib/, drivers/, app/ or examples/ (C sources, headers, meson
# files: the places that print). A reworded message then fails here
# until the document follows. Headings with more than the code span
# quote someone else's message (DPDK's EAL) and are not checked.
import pathlib
import re
import sys

SOURCE_DIRS = ('lib', 'drivers', 'app', 'examples')
SOURCE_SUFFIXES = ('.c', '.h', '.build')
MESSAGE = re.compile(r'^#{2,6} `([^`]+)`\s*$')


def sources(root):
    texts = []
    for d in SOURCE_DIRS:
        for p in sorted((root / d).rglob('*')):
            if p.is_file() and p.name.endswith(SOURCE_SUFFIXES):
                texts.append((p.relative_to(root),
                              p.read_text(errors='replace')))
    return texts


def main():
    if len(sys.argv) < 3:
        print('usage: check-doc-messages.py ROOT DOC...', file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    texts = sources(root)
    if not texts:
        print(f'no sources under {root}: wrong ROOT?')
        return 1
    bad = 0
    for doc in sys.argv[2:]:
        lines = pathlib.Path(doc).read_text().splitlines()
        quoted = [(n, m.group(1)) for n, line in enumerate(lines, 1)
                  if (m := MESSAGE.match(line))]
        if not quoted:
            # A document without one would pass whatever the code says.
            print(f'{doc}: no message headings (### `text`) found')
            bad += 1
            continue
        missing = 0
        for n, text in quoted:
            if not any(text in t for _, t in texts):
                print(f'{doc}:{n}: `{text}` occurs in no file under '
                      f'{", ".join(SOURCE_DIRS)}: the message was reworded '
                      'or removed; quote the new text or drop the entry')
                missing += 1
        print(f'{doc}: {len(quoted) - missing} of {len(quoted)} quoted '
              f'messages found in {len(texts)} source files')
        bad += missing
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
