#!/usr/bin/env python3
# check-doc-messages.py ROOT DOC... - every message a document quotes is
# still printed by the code.
#
# Two ways to quote, each checked:
#
# - A heading written as a code span and nothing else, one message an
#   entry (doc/troubleshooting.md):  ### `cannot mount bpffs at`
#   The excerpt must occur, character for character, in a file under
#   ROOT's lib/, drivers/, app/ or examples/ (C sources, headers, meson
#   files: the places that print). Headings with more than the code span
#   quote someone else's message (DPDK's EAL) and are not checked.
# - A fenced block right after a line '<!-- messages -->', one whole
#   message a line, as printed (doc/net.md's device strings): each line
#   must occur as above or be what one of the C sources' format strings
#   prints, a printf conversion standing for any text.
#
# A reworded message then fails here until the document follows. What a
# conversion printed (a driver's list of keys) is not checked here: the
# tests that run the code compare those (tests/docs/check-doc-net.py).
import pathlib
import re
import sys

SOURCE_DIRS = ('lib', 'drivers', 'app', 'examples')
SOURCE_SUFFIXES = ('.c', '.h', '.build')
MESSAGE = re.compile(r'^#{2,6} `([^`]+)`\s*$')
BLOCK_MARK = re.compile(r'^<!-- messages\b.*-->\s*$')
# A C string literal, and a run of them that the compiler joins.
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
LITERALS = re.compile(LITERAL + r'(?:\s*' + LITERAL + r')*')
CONVERSION = re.compile(r'%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?'
                        r'(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcsp%]')
MIN_FORMAT_TEXT = 20
ESCAPES = {'n': '\n', 't': '\t', '"': '"', '\\': '\\', "'": "'"}


def sources(root):
    texts = []
    for d in SOURCE_DIRS:
        for p in sorted((root / d).rglob('*')):
            if p.is_file() and p.name.endswith(SOURCE_SUFFIXES):
                texts.append((p.relative_to(root),
                              p.read_text(errors='replace')))
    return texts


def block_messages(lines):
    """(line number, message) for each line of a marked fenced block."""
    out = []
    i = 0
    while i < len(lines):
        if BLOCK_MARK.match(lines[i]) and i + 1 < len(lines) and \
                lines[i + 1].startswith('```'):
            i += 2
            while i < len(lines) and not lines[i].startswith('```'):
                if lines[i].strip():
                    out.append((i + 1, lines[i].strip()))
                i += 1
        i += 1
    return out


def unescape(lit):
    return re.sub(r'\\(.)', lambda m: ESCAPES.get(m.group(1), m.group(0)),
                  lit)


def format_patterns(texts):
    """Each C format string in the sources, as (a literal part it must
    contain, the pattern of what it prints)."""
    out = []
    for path, text in texts:
        if path.suffix not in ('.c', '.h'):
            continue
        for m in LITERALS.finditer(text):
            # A quoted line is what was printed, without the newline
            # that ends the format (fprintf(stderr, "...\n")).
            fmt = ''.join(unescape(lit[1:-1]) for lit in
                          re.findall(LITERAL, m.group(0))).rstrip('\n')
            if '%' not in fmt:
                continue
            parts = CONVERSION.split(fmt)
            convs = CONVERSION.findall(fmt)
            # "%s: %s" prints anything: a format counts when it starts
            # with its own words and has enough of them to be one message.
            if not parts[0] or len(''.join(parts)) < MIN_FORMAT_TEXT:
                continue
            pattern = re.escape(parts[0])
            for conv, part in zip(convs, parts[1:]):
                pattern += ('%' if conv == '%%' else '(?:.*?)') + \
                    re.escape(part)
            out.append((max(parts, key=len), re.compile(pattern, re.S)))
    return out


def printed(text, formats):
    return any(key in text and pattern.fullmatch(text)
               for key, pattern in formats)


def main():
    if len(sys.argv) < 3:
        print('usage: check-doc-messages.py ROOT DOC...', file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    texts = sources(root)
    if not texts:
        print(f'no sources under {root}: wrong ROOT?')
        return 1
    formats = format_patterns(texts)
    bad = 0
    for doc in sys.argv[2:]:
        lines = pathlib.Path(doc).read_text().splitlines()
        quoted = [(n, m.group(1)) for n, line in enumerate(lines, 1)
                  if (m := MESSAGE.match(line))]
        quoted += block_messages(lines)
        if not quoted:
            # A document without one would pass whatever the code says.
            print(f'{doc}: no message headings (### `text`) or blocks '
                  '(<!-- messages --> before a fence) found')
            bad += 1
            continue
        missing = 0
        for n, text in quoted:
            if not any(text in t for _, t in texts) and \
                    not printed(text, formats):
                print(f'{doc}:{n}: `{text}` occurs in no file under '
                      f'{", ".join(SOURCE_DIRS)}, nor does a format string '
                      'there print it: the message was reworded or '
                      'removed; quote the new text or drop the entry')
                missing += 1
        print(f'{doc}: {len(quoted) - missing} of {len(quoted)} quoted '
              f'messages found in {len(texts)} source files')
        bad += missing
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
