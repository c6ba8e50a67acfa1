#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-fwd-pcap.py FWD CASE - fwd --pcap and fwd --keep, checked from
the outside: tcpdump reads the capture back.

  veth      the wire loop on a veth pair (--bidir --tx-first 32 --verify
            --pcap F), 64-byte frames: tcpdump -r F -xx prints every
            packet, and each one must be a frame of the loop's generator
            (app/fwd/fwd_loop.c, recomputed here) byte for byte; the
            record count must equal what fwd says it wrote and what it
            says it delivered (no drops on this wire, so every packet
            the program redirected went out); link type EN10MB, snap
            length MTU + 18; the file mode 0600
  veth9000  the same at --mtu 9000 with 9018-byte frames: multi-buffer
            packets (page segments), each one record, joined
  signal    the loop stopped by SIGINT, then by SIGTERM: the file is
            whole (tcpdump reads every record, as many as fwd says)
  refused   --pcap refusals, exit 2 with their messages: an existing file
            (left as it was), a symbolic link, a directory fwd may not
            write, one that does not exist, --mode pass without a veth
            peer (nothing is forwarded; the file it created is removed);
            --keep with --verify. Without libpcap: the message that says
            to install libpcap-dev and rebuild
  keep-null, keep-veth, keep-veth9000
            --keep N: fwd says it holds N packets, runs, exits 0 with no
            page leaked, and the RX pool's destroy found those pages in
            flight; on a veth end without --tx-first nothing arrives:
            exit 1 with the reason

check-fwd-pcap.py --file F --len L --log FWD_LOG [--snaplen S]
  the veth case's check of a capture made elsewhere (tests/vhost's pcap
  cases: the loop topology, what goes back out of a virtio_user port).

Exit 77 with the reason when tcpdump is missing, or when fwd was built
without libpcap (the refused case then checks fwd's message instead).
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77

# The loop's frames (app/fwd/fwd_loop.c): broadcast destination, source
# 02:00:00:00:00:01, EtherType 0x88b5, the magic 0x77667070 and the
# frame's number (both little-endian, as the generator stores them),
# then byte i = (number * 131 + i) mod 256 up to the end.
HDR_LEN = 22


def loop_frame(num, length):
    b = bytearray((num * 131 + i) & 0xff for i in range(length))
    b[0:14] = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5"
    b[14:22] = struct.pack("<II", 0x77667070, num)
    return bytes(b)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need_tcpdump():
    if not shutil.which("tcpdump"):
        print("SKIP: tcpdump not found (apt-get install tcpdump; scripts/setup.sh installs it)")
        sys.exit(SKIP)


def log_number(log, pattern, what):
    m = re.search(pattern, log, re.M)
    if not m:
        fail(f"fwd's output has no {what} line ({pattern})")
    return int(m.group(1))


def tcpdump_header(err, snaplen):
    """tcpdump's 'reading from file' line: the link type and snap length."""
    m = re.search(r"link-type (\S+) .*snapshot length (\d+)", err)
    if not m:
        fail(f"tcpdump printed no link type: {err.strip()}")
    if m.group(1) != "EN10MB":
        fail(f"link type {m.group(1)}, not EN10MB")
    if int(m.group(2)) != snaplen:
        fail(f"snapshot length {m.group(2)}, not {snaplen} (MTU + 18)")


def check_capture(path, length, log, snaplen):
    """Every packet in @path against the generator; the counts against
    fwd's output @log. Returns the number of packets."""
    injected = log_number(log, r"^fwd: tx_first: (\d+) frames", "tx_first")
    written = log_number(log, r"^pcap: (\d+) packets", "pcap")
    delivered = log_number(log, r"^summary: .*\((\d+) frames\)", "summary")
    drops = log_number(log, r"^summary: .*drops (\d+)", "summary")
    if drops:
        fail(f"{drops} drops: this wire should have none")
    if os.stat(path).st_mode & 0o777 != 0o600:
        fail(f"{path} has mode {os.stat(path).st_mode & 0o777:o}, not 600")
    expect = {}
    seen = [0] * injected
    count = 0
    hexbuf = []

    def packet_done():
        data = bytes.fromhex("".join(hexbuf))
        if len(data) != length:
            fail(f"packet {count}: {len(data)} bytes, not {length}")
        num = struct.unpack_from("<I", data, 18)[0] if length >= HDR_LEN else -1
        if not 0 <= num < injected:
            fail(f"packet {count}: number {num}, not a frame of the {injected} injected")
        if num not in expect:
            expect[num] = loop_frame(num, length)
        if data != expect[num]:
            bad = next(i for i in range(length) if data[i] != expect[num][i])
            fail(f"packet {count} (frame {num}): byte {bad} is {data[bad]:#04x}, the generator sent {expect[num][bad]:#04x}")
        seen[num] += 1

    p = subprocess.Popen(["tcpdump", "-r", path, "-nn", "-xx"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    for line in p.stdout:
        if line.startswith("\t0x"):
            # "\t0x0010:  6677 0200 0000 ..." : the hex groups.
            hexbuf.append(line[10:].replace(" ", "").strip())
            continue
        if hexbuf:
            packet_done()
        hexbuf = []
        count += 1
        m = re.search(r"length (\d+)", line)
        if not m or int(m.group(1)) != length:
            fail(f"packet {count}: tcpdump says '{line.strip()}', not length {length}")
    if hexbuf:
        packet_done()
    err = p.stderr.read()
    if p.wait() != 0:
        fail(f"tcpdump -r exited with {p.returncode}: {err.strip()}")
    tcpdump_header(err, snaplen)
    print(f"tcpdump read {count} packets of {length} bytes, each the generator's frame byte for byte; frames seen {min(seen)}..{max(seen)} times each")
    if count != written:
        fail(f"the file holds {count} packets, fwd says it wrote {written}")
    if count != delivered:
        fail(f"the file holds {count} packets, fwd delivered {delivered}")
    if not count or min(seen) == 0:
        fail(f"frame {seen.index(0) if count else 0} was never captured")
    return count


def run(cmd, **kw):
    print(" ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=50, **kw)
    print(p.stdout, end="")
    print(p.stderr, end="")
    return p


def has_libpcap(fwd, tmp):
    """Whether fwd takes --pcap: a path that exists (the directory)
    makes it answer at once either way, without running."""
    p = subprocess.run([fwd, "--port", "null0", "--pcap", tmp],
                       capture_output=True, text=True, timeout=30)
    return "built without libpcap" not in p.stderr


def case_loop(fwd, tmp, length, mtu):
    f = os.path.join(tmp, "loop.pcap")
    # The shortest run (the main thread's first look is after 0.1 s):
    # some 10^5 to 10^6 packets, every one checked.
    p = run([fwd, "--port", "veth0,peer=veth1", "--bidir", "--tx-first", "32",
             "--tx-len", str(length), "--mtu", str(mtu), "--verify",
             "--duration", "0.001", "--arena-mb", "64", "--pcap", f])
    if p.returncode != 0:
        fail(f"fwd exited with {p.returncode}")
    if not re.search(r"^verify: .*: OK$", p.stdout, re.M):
        fail("fwd --verify did not report OK")
    check_capture(f, length, p.stdout, mtu + 18)


def pcap_records(path):
    """The records of a pcap file, walked through its headers: all of
    them whole, none cut at the end."""
    with open(path, "rb") as fh:
        data = fh.read()
    if struct.unpack_from("<I", data, 0)[0] != 0xa1b2c3d4:
        fail(f"{path}: not a little-endian microsecond pcap file")
    off, n = 24, 0
    while off < len(data):
        if off + 16 > len(data):
            fail(f"{path}: a record header cut at byte {off}")
        incl = struct.unpack_from("<I", data, off + 8)[0]
        off += 16 + incl
        n += 1
    if off != len(data):
        fail(f"{path}: the last record is cut")
    return n


def case_signal(fwd, tmp):
    for sig in (signal.SIGINT, signal.SIGTERM):
        f = os.path.join(tmp, f"sig{int(sig)}.pcap")
        cmd = [fwd, "--port", "veth0,peer=veth1", "--bidir", "--tx-first",
               "32", "--duration", "30", "--arena-mb", "32", "--pcap", f]
        print(" ".join(cmd))
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        # Capturing: a megabyte in the file (its stdio buffer flushed
        # many times over), then the signal, in the middle of a write.
        end = time.monotonic() + 20
        while time.monotonic() < end and p.poll() is None:
            if os.path.exists(f) and os.path.getsize(f) > 1 << 20:
                break
            time.sleep(0.01)
        p.send_signal(sig)
        out = p.stdout.read()
        rc = p.wait(timeout=30)
        print(out, end="")
        if rc != 0:
            fail(f"fwd exited with {rc} after {sig.name}")
        written = log_number(out, r"^pcap: (\d+) packets", "pcap")
        records = pcap_records(f)
        q = subprocess.run(["tcpdump", "-r", f, "-nn", "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        lines = q.stdout.count("\n")
        if q.returncode != 0 or "truncated" in q.stderr:
            fail(f"tcpdump could not read the file after {sig.name}: {q.stderr.strip()}")
        print(f"{sig.name}: fwd wrote {written} packets; the file holds {records}; tcpdump read {lines}")
        if not written or records != written or lines != written:
            fail(f"after {sig.name} the file is not whole")
        os.unlink(f)


def refused(p, rc, text):
    if p.returncode != rc:
        fail(f"exit {p.returncode}, not {rc}")
    if text not in p.stderr:
        fail(f"no '{text}' in fwd's message")


def case_refused(fwd, tmp):
    base = [fwd, "--port", "null0", "--port", "null1", "--duration", "0.001",
            "--arena-mb", "32"]
    if not has_libpcap(fwd, tmp):
        p = run(base + ["--pcap", os.path.join(tmp, "x.pcap")])
        refused(p, 2, "this fwd was built without libpcap: install libpcap-dev")
        refused(p, 2, "and rebuild")
        print("ok (built without libpcap: --pcap refused, saying what to install)")
        return
    # An existing file: refused, and left as it was.
    f = os.path.join(tmp, "there.pcap")
    with open(f, "w") as fh:
        fh.write("someone's data\n")
    p = run(base + ["--pcap", f])
    refused(p, 2, f"--pcap {f}: the file exists, and fwd does not write over one: remove it or give another name")
    with open(f) as fh:
        if fh.read() != "someone's data\n":
            fail("the existing file was changed")
    # A symbolic link, even one that points nowhere: not followed.
    link = os.path.join(tmp, "link.pcap")
    os.symlink(os.path.join(tmp, "target.pcap"), link)
    p = run(base + ["--pcap", link])
    refused(p, 2, "a symbolic link is there, and fwd does not write over one")
    if os.path.exists(os.path.join(tmp, "target.pcap")):
        fail("the link was followed")
    # A directory fwd may not write: root may write any, so fwd runs
    # without CAP_DAC_OVERRIDE there.
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro, 0o555)
    os.chmod(ro, 0o555)
    pre = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            print("SKIP: as root, the unwritable directory needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
            sys.exit(SKIP)
        pre = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    p = run(pre + base + ["--pcap", os.path.join(ro, "x.pcap")])
    refused(p, 2, "cannot create it: Permission denied (give a path in a directory that exists and that fwd may write)")
    p = run(base + ["--pcap", os.path.join(tmp, "no", "such", "x.pcap")])
    refused(p, 2, "cannot create it: No such file or directory")
    # Nothing to capture: refused after the ports opened, and the file
    # it had created goes again.
    f = os.path.join(tmp, "pass.pcap")
    p = run(base + ["--mode", "pass", "--pcap", f])
    refused(p, 2, "--mode pass without a veth peer forwards nothing")
    if os.path.exists(f):
        fail(f"{f} was left behind by a refused run")
    p = run([fwd, "--port", "veth0,peer=veth1", "--bidir", "--tx-first", "32",
             "--verify", "--keep", "8", "--duration", "0.001"])
    refused(p, 2, "--keep takes frames out of the wire loop --verify accounts for")
    print("ok")


def case_keep(fwd, what):
    n = 100 if what == "null" else 8
    args = {
        "null": ["--port", "null0", "--port", "null1"],
        "veth": ["--port", "veth0,peer=veth1", "--bidir", "--tx-first", "32"],
        "veth9000": ["--port", "veth0,peer=veth1", "--bidir", "--tx-first",
                     "32", "--mtu", "9000", "--tx-len", "9018"],
    }[what]
    port = args[1].split(",")[0]
    p = run([fwd] + args + ["--keep", str(n), "--duration", "0.3",
                            "--arena-mb", "64"])
    if p.returncode != 0:
        fail(f"fwd exited with {p.returncode}")
    m = re.search(rf"^fwd: --keep: holding (\d+) packets \((\d+) frames\) received on {port} queue 0 until the ports close$",
                  p.stderr, re.M)
    if not m or int(m.group(1)) != n:
        fail(f"fwd did not say it holds {n} packets")
    frames = int(m.group(2))
    # 9018 bytes: a head behind the headroom and whole pages after it.
    if (what == "veth9000") != (frames > n) or frames < n:
        fail(f"{n} packets in {frames} frames")
    # The RX pool's destroy found the held pages out (one per frame):
    # its name, then the count, on its line or a later one (a report
    # per holder).
    if not re.search(rf"{port}-rx0\b.*?\b{frames} pages", p.stderr, re.S):
        fail(f"the destroy of pool {port}-rx0 did not report {frames} pages in flight")
    if "pages leaked 0" not in p.stdout:
        fail("pages leaked after the held frames were given back")
    if log_number(p.stdout, r"^summary: .*\((\d+) frames\)", "summary") == 0:
        fail("nothing was forwarded after --keep took its packets")
    if what == "veth":
        # Nothing was sent into the veth end: no packet comes.
        p = run([fwd, "--port", "veth0,peer=veth1", "--bidir", "--keep", "8",
                 "--duration", "0.001", "--arena-mb", "32"])
        refused(p, 1, "--keep 8: veth0 received only 0 packets")
    print("ok")


def main():
    if sys.argv[1] == "--file":
        a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
        need_tcpdump()
        with open(a["--log"]) as fh:
            log = fh.read()
        length = int(a["--len"])
        check_capture(a["--file"], length, log, int(a.get("--snaplen", 1518)))
        return
    fwd, case = sys.argv[1:3]
    if not os.access(fwd, os.X_OK):
        print(f"SKIP: {fwd} is not built")
        sys.exit(SKIP)
    if case.startswith("keep-"):
        case_keep(fwd, case[5:])
        return
    with tempfile.TemporaryDirectory() as tmp:
        if case == "refused":
            case_refused(fwd, tmp)
            return
        need_tcpdump()
        if not has_libpcap(fwd, tmp):
            print("SKIP: fwd was built without libpcap (apt-get install libpcap-dev; meson setup --reconfigure)")
            sys.exit(SKIP)
        if case == "veth":
            case_loop(fwd, tmp, 64, 1500)
        elif case == "veth9000":
            case_loop(fwd, tmp, 9018, 9000)
        elif case == "signal":
            case_signal(fwd, tmp)
        else:
            sys.exit(f"unknown case {case}")
    print("ok")


if __name__ == "__main__":
    main()
