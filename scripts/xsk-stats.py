#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""xsk-stats.py - the kernel's view of every AF_XDP socket a process has.

    xsk-stats.py PID

Prints one JSON object: "sockets", a list with one entry per XDP socket
of process PID (its fd number there), each with the kernel's
XDP_STATISTICS counters under their struct xdp_statistics names, the
socket's NAPI id (SO_INCOMING_NAPI_ID: 0 when no device queue has marked
it, and then busy polling has nothing to poll) and its busy-polling
settings (SO_BUSY_POLL in microseconds, SO_PREFER_BUSY_POLL,
SO_BUSY_POLL_BUDGET).

It reads another program's sockets the same way for pagepool's receiver
and for DPDK's (scripts/afxdp-bench.sh asks both): a duplicate of each
socket descriptor through pidfd_getfd() (Linux 5.6; needs the right to
ptrace the process: root), getsockopt() on it, and the duplicate closed.
Nothing of the process is changed.
"""
import ctypes
import json
import os
import sys

SYS_PIDFD_OPEN = 434   # the same number on every architecture
SYS_PIDFD_GETFD = 438
AF_XDP = 44
SOL_SOCKET = 1
SO_DOMAIN = 39
SOL_XDP = 283
XDP_STATISTICS = 7
STAT_NAMES = ("rx_dropped", "rx_invalid_descs", "tx_invalid_descs",
              "rx_ring_full", "rx_fill_ring_empty_descs", "tx_ring_empty_descs")
SOCKET_OPTIONS = (("napi_id", 56), ("busy_poll_us", 46),
                  ("prefer_busy_poll", 69), ("busy_poll_budget", 70))

libc = ctypes.CDLL(None, use_errno=True)


def fail(msg):
    print(f"xsk-stats: {msg}", file=sys.stderr)
    sys.exit(1)


def socket_fds(pid):
    base = f"/proc/{pid}/fd"
    for name in os.listdir(base):
        try:
            if os.readlink(f"{base}/{name}").startswith("socket:"):
                yield int(name)
        except OSError:
            continue  # closed meanwhile


def getsockopt(fd, level, opt, size):
    """getsockopt() on a raw descriptor (Python's socket objects cannot
    wrap an XDP socket: they ask getsockname(), which it does not
    support). The bytes the kernel wrote, or None."""
    buf = ctypes.create_string_buffer(size)
    length = ctypes.c_uint32(size)
    if libc.getsockopt(fd, level, opt, buf, ctypes.byref(length)):
        return None
    return buf.raw[:length.value]


def number(raw):
    return int.from_bytes(raw, sys.byteorder) if raw is not None else None


def xsk_entry(fd, num):
    """The entry for @fd, a duplicate of the process's fd @num, or None
    when it is not an XDP socket."""
    if number(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, 4)) != AF_XDP:
        return None
    raw = getsockopt(fd, SOL_XDP, XDP_STATISTICS, 48) or b""
    # A kernel before 5.9 answers with the first three only.
    entry = {"fd": num}
    entry.update(zip(STAT_NAMES, (number(raw[i:i + 8])
                                  for i in range(0, len(raw) - len(raw) % 8, 8))))
    for key, opt in SOCKET_OPTIONS:
        # None: an older kernel has no such option.
        entry[key] = number(getsockopt(fd, SOL_SOCKET, opt, 4))
    return entry


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        fail("usage: xsk-stats.py PID")
    pid = int(sys.argv[1])
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        fail(f"no process {pid}: {os.strerror(ctypes.get_errno())}")
    out = []
    try:
        for num in socket_fds(pid):
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, num, 0)
            if fd < 0:
                err = ctypes.get_errno()
                if err in (1, 38):  # EPERM, ENOSYS: no use going on
                    fail(f"cannot read process {pid}'s sockets: {os.strerror(err)} "
                         "(pidfd_getfd needs Linux 5.6 and root)")
                continue
            try:
                entry = xsk_entry(fd, num)
            finally:
                os.close(fd)
            if entry:
                out.append(entry)
    finally:
        os.close(pidfd)
    json.dump({"pid": pid, "sockets": out}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
