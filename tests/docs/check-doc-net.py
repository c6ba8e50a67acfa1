#!/usr/bin/env python3
# check-doc-net.py ROOT FWD - doc/net.md against the code it describes:
#
# - its synopsis of the forwarder (the first fenced block under "## The
#   forwarder") is what `fwd --help` prints before the first option's
#   explanation, whitespace and a leading "usage:" aside: the help text
#   is the one to keep right, and the page follows it;
# - its driver table has a row for every driver in drivers/net (each
#   `struct pp_net_driver` there);
# - each device-string message it quotes (the "<!-- messages -->" block:
#   check-doc-messages.py checks that the code still has the format) is,
#   word for word, what pp_port_open() logs for that device string, run
#   through fwd. A message for a driver this build leaves out (no libxdp:
#   no af_xdp) is reported and not compared: the page quotes a full build.
import pathlib
import re
import subprocess
import sys

DRIVER = re.compile(r'struct pp_net_driver\s+\w+\s*=\s*\{[^}]*?'
                    r'\.name\s*=\s*"([^"]+)"', re.S)
KNOWN = re.compile(r"\(known drivers: ([^)]*)\)")


def words(text):
    t = ' '.join(text.split())
    return t[len('usage: '):] if t.startswith('usage: ') else t


def fenced_after(lines, heading):
    """The lines of the first fenced block after @heading."""
    try:
        i = lines.index(heading)
    except ValueError:
        return None
    while i < len(lines) and not lines[i].startswith('```'):
        i += 1
    j = i + 1
    while j < len(lines) and not lines[j].startswith('```'):
        j += 1
    return lines[i + 1:j] if j < len(lines) else None


def check_synopsis(lines, fwd, errors):
    block = fenced_after(lines, '## The forwarder')
    if block is None:
        errors.append("doc/net.md: no fenced synopsis under '## The forwarder'")
        return
    p = subprocess.run([fwd, '--help'], capture_output=True, text=True,
                       timeout=30)
    if p.returncode != 0:
        errors.append(f'fwd --help exited {p.returncode}: {p.stderr}')
        return
    usage = []
    for line in p.stdout.splitlines():
        if line.lstrip().startswith('--'):
            break
        usage.append(line)
    want, have = words('\n'.join(usage)), words('\n'.join(block))
    if want != have:
        # Where they part, so that whoever merges a help change sees it.
        k = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b),
                 min(len(want), len(have)))
        errors.append(
            "doc/net.md's synopsis of fwd differs from `fwd --help` (its "
            'lines before the first --option explanation); copy them into '
            "the block under '## The forwarder'. From where they part:\n"
            f'  fwd --help: ...{want[max(0, k - 30):k + 60]}\n'
            f'  doc/net.md: ...{have[max(0, k - 30):k + 60]}\n'
            'fwd --help prints:\n' + '\n'.join(usage))
    else:
        print(f'synopsis: doc/net.md has the {len(usage)} lines of fwd '
              '--help before the options')


def check_drivers(root, lines, errors):
    drivers = sorted({m.group(1)
                      for p in (root / 'drivers' / 'net').rglob('*.c')
                      for m in DRIVER.finditer(p.read_text())})
    if not drivers:
        errors.append('no struct pp_net_driver found under drivers/net')
        return
    rows = {m.group(1) for line in lines
            if (m := re.match(r'^\| `([a-z0-9_]+)` \|', line))}
    missing = [d for d in drivers if d not in rows]
    if missing:
        errors.append('doc/net.md: the driver table has no row for '
                      + ', '.join(missing) + ' (its keys and what it is)')
    else:
        print(f'drivers: a row for each of {", ".join(drivers)}')


def check_messages(lines, fwd, errors):
    quoted = []
    for i, line in enumerate(lines):
        if line.startswith('<!-- messages') and i + 1 < len(lines) and \
                lines[i + 1].startswith('```'):
            for m in lines[i + 2:]:
                if m.startswith('```'):
                    break
                if m.startswith("device '"):
                    quoted.append(m.strip())
    if not quoted:
        errors.append("doc/net.md: no device messages in a '<!-- messages -->' block")
        return
    same = 0
    for msg in quoted:
        dev = msg[len("device '"):msg.index("'", len("device '"))]
        p = subprocess.run([fwd, '--port', dev, '--port', 'null1',
                            '--duration', '1', '--arena-mb', '8'],
                           capture_output=True, text=True, timeout=60)
        logged = [l[len('pagepool: error: '):] for l in p.stderr.splitlines()
                  if l.startswith('pagepool: error: ')]
        if not logged:
            errors.append(f"doc/net.md quotes an error for '{dev}', but fwd "
                          f'logged none (exit {p.returncode}):\n{p.stderr}')
            continue
        have = logged[0]
        if have == msg:
            same += 1
            continue
        # A build without some drivers knows fewer of them; the page
        # quotes a full build.
        drv = re.sub(r'\d+$', '', re.split(r'[,:]', dev)[0])
        km, kh = KNOWN.search(msg), KNOWN.search(have)
        if kh and f"unknown driver '{drv}'" in have and \
                f"unknown driver '{drv}'" not in msg:
            print(f"note: this build has no {drv} driver: '{msg}' not compared")
            continue
        if km and kh and KNOWN.sub('', msg) == KNOWN.sub('', have):
            full = [d.strip() for d in km.group(1).split(',')]
            built = [d.strip() for d in kh.group(1).split(',')]
            if all(d in full for d in built) and built != full:
                print('note: this build leaves out '
                      + ', '.join(d for d in full if d not in built))
                same += 1
                continue
        errors.append(f"doc/net.md quotes for '{dev}':\n  {msg}\n"
                      f'but pp_port_open() logs:\n  {have}')
    print(f'messages: {same} of {len(quoted)} device messages word for word')


def main():
    if len(sys.argv) != 3:
        print('usage: check-doc-net.py ROOT FWD', file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    fwd = sys.argv[2]
    lines = (root / 'doc' / 'net.md').read_text().splitlines()
    errors = []
    check_synopsis(lines, fwd, errors)
    check_drivers(root, lines, errors)
    check_messages(lines, fwd, errors)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
