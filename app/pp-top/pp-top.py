#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pp-top - a live view of a running pagepool program, like top.

It attaches to the program's telemetry socket by its prefix and speaks
DPDK's telemetry v2 protocol itself (a SOCK_SEQPACKET socket: a greeting
on connect, then one reply per request). Each refresh it reads every
port's counters (/ethdev/list, /ethdev/info,ID, /ethdev/stats,ID) and the
pools' pages in flight by holder (/pagepool/inflight); rates are the
difference of two successive samples over the time between them. A DPDK
application has no /pagepool/inflight, and a pagepool older than the
/ethdev commands has no ports to show: pp-top shows what the program
serves and says what it lacks.

meson fills in the version and the commit when it installs this file as
pp-top (app/pp-top/meson.build).
"""
import curses
import errno
import json
import os
import platform
import select
import socket
import sys
import time

TOOL = "pp-top"
VERSION = "@VERSION@"
COMMIT = "@COMMIT@"
SOCKET_NAME = "dpdk_telemetry.v2"
# What each part of the screen needs: the ports, pagepool's and DPDK's
# /ethdev commands; the pools, pagepool's own.
PORT_CMDS = ("/ethdev/list", "/ethdev/stats")
POOL_CMD = "/pagepool/inflight"
# The counters pp-top turns into rates: DPDK's names (/ethdev/stats), in
# the order of the screen's columns.
COUNTERS = ("ipackets", "ibytes", "opackets", "obytes",
            "imissed", "rx_nombuf", "ierrors", "oerrors")

USAGE = """\
usage: pp-top [options] PREFIX
       pp-top [options] -f PREFIX
A live view of a running pagepool program (one started with
--telemetry PREFIX, e.g. fwd --telemetry PREFIX): per-port RX and TX
packets and bytes a second, drops and errors a second, and each pool's
pages in flight by holder with the oldest page. q or Ctrl-C quits.
  -f, --file-prefix PREFIX
                        the program's telemetry prefix (as
                        dpdk-telemetry.py -f takes it)
  --runtime-dir DIR     where its socket is: DIR/dpdk/PREFIX/%s
                        (default: DPDK's rule, $RUNTIME_DIRECTORY, else
                        /var/run as root, else $XDG_RUNTIME_DIR, else
                        /tmp)
  -d, --delay SECONDS   the time between refreshes, and between the two
                        samples of --once, 0.1-3600 (default 1)
  --once                take two samples one delay apart, print the
                        screen once as plain text and exit
  --json                --once, printing one JSON object instead of the
                        screen (ports with their rates, pools with
                        holders and the oldest page)
  -h, --help            this text
  -V, --version         the version, and the commit it was built from
Exit status: 0, 1 when the program cannot be reached or exits while
watched, 2 for a bad command line.
""" % SOCKET_NAME


class Gone(Exception):
    """The program closed its telemetry socket (it exited)."""


class Fail(Exception):
    """The program cannot be watched: the message says why. Raised, not
    printed, so that the message comes after curses gave the terminal
    back."""


# ---- the command line (the rules of app/common/pp_cli.h) ----

def die(msg, code):
    sys.stderr.write("%s: %s\n" % (TOOL, msg))
    sys.exit(code)


def usage_error(msg):
    die("%s (%s --help says what it takes)" % (msg, TOOL), 2)


def is_option(word):
    """A word is an option when it starts with "--", or '-' and a
    letter ("-" and negative numbers are values), as pp_cli_check_value()
    has it."""
    return word.startswith("--") or (len(word) > 1 and word[0] == "-" and
                                     word[1].isalpha())


def parse_args(argv):
    """The options into a dict; exits 0 for --help and --version, 2 for a
    bad command line, in the wording every pagepool program shares."""
    takes = {"-f": "prefix", "--file-prefix": "prefix",
             "--runtime-dir": "runtime_dir", "-d": "delay",
             "--delay": "delay"}
    flags = {"--once": "once", "--json": "json", "-h": "help",
             "--help": "help", "-V": "version", "--version": "version"}
    opts = {"prefix": None, "runtime_dir": None, "delay": "1",
            "once": False, "json": False, "help": False, "version": False}
    operands = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            operands += argv[i:]
            break
        if not is_option(word):
            operands.append(word)
            continue
        name, value = word, None
        if word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
        elif not word.startswith("--") and len(word) > 2:
            name, value = word[:2], word[2:]   # -d0.5
        if name in flags:
            if value is not None:
                die("option '%s' takes no value (%s --help says what it "
                    "takes)" % (name, TOOL), 2)
            opts[flags[name]] = True
            continue
        if name not in takes:
            die("unknown option '%s' (%s --help lists them)" % (name, TOOL), 2)
        if value is None:
            if i == len(argv):
                die("option '%s' needs a value (%s --help says what it "
                    "takes)" % (name, TOOL), 2)
            value = argv[i]
            i += 1
            if is_option(value):
                die("option '%s' needs a value, not the option '%s' (give "
                    "it its value right after it; %s --help says what it "
                    "takes)" % (name, value, TOOL), 2)
        opts[takes[name]] = value
    if opts["help"]:
        sys.stdout.write(USAGE)
        sys.exit(0)
    if opts["version"]:
        print("%s (pagepool) %s (commit %s)" % (TOOL, VERSION, COMMIT))
        sys.exit(0)
    if opts["prefix"] is not None:
        operands.insert(0, opts["prefix"])
    if len(operands) != 1:
        usage_error("give one telemetry prefix (the PREFIX of --telemetry "
                    "PREFIX), not %s" % (" and ".join("'%s'" % o for o in
                                                     operands) or "none"))
    opts["prefix"] = operands[0]
    if not opts["prefix"] or "/" in opts["prefix"] or \
            opts["prefix"].strip(".") == "":
        usage_error("'%s' is not a telemetry prefix (letters, digits, "
                    "'_', '-' and '.')" % opts["prefix"])
    try:
        delay = float(opts["delay"])
    except ValueError:
        delay = -1.0
    if not 0.1 <= delay <= 3600:
        die("--delay takes a number from 0.1 to 3600, not '%s'" %
            opts["delay"], 2)
    opts["delay"] = delay
    if opts["json"]:
        opts["once"] = True
    return opts


# ---- the socket ----

def runtime_base(runtime_dir):
    """DPDK's runtime directory rule, as the server has it
    (lib/telemetry/telemetry_sock.c)."""
    for d in (runtime_dir, os.environ.get("RUNTIME_DIRECTORY"),
              "/var/run" if os.geteuid() == 0 else
              os.environ.get("XDG_RUNTIME_DIR")):
        if d:
            return d
    return "/tmp"


def live_prefixes(base):
    """The prefixes under BASE/dpdk whose socket answers, for the message
    that says no program runs with the one asked for."""
    found = []
    try:
        names = sorted(os.listdir(os.path.join(base, "dpdk")))
    except OSError:
        return found
    for name in names:
        path = os.path.join(base, "dpdk", name, SOCKET_NAME)
        if not os.path.exists(path):
            continue
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
                s.settimeout(0.2)
                s.connect(path)
            found.append(name)
        except OSError:
            pass
    return found


class Client:
    """One connection to a telemetry v2 server."""

    def __init__(self, path, prefix, base):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            raise Fail(connect_error(e, path, prefix, base))
        self.sock.settimeout(5)
        greeting = self._read()
        self.pid = greeting.get("pid")
        self.server = greeting.get("version", "?")
        self.max_len = max(int(greeting.get("max_output_len", 0)), 16384)
        self.commands = set(self.query("/") or [])

    def _read(self, size=16384):
        try:
            data = self.sock.recv(size)
        except socket.timeout:
            raise Fail("the program at the socket did not answer in 5 s "
                       "(stopped, or busy)")
        except OSError:
            data = b""
        if not data:
            raise Gone()
        return json.loads(data.decode())

    def check_alive(self):
        """Between refreshes: the server sends nothing unasked, so a
        readable socket is a closed one (the program exited)."""
        if select.select([self.sock], [], [], 0)[0]:
            self._read()

    def query(self, cmd):
        """The data of the reply to CMD ("/cmd,param"): None is DPDK's
        answer to an unknown command or parameter."""
        try:
            self.sock.send(cmd.encode())
        except OSError:
            raise Gone()
        reply = self._read(self.max_len + 1)
        if "error" in reply:
            raise Fail("%s: the server says: %s" % (cmd, reply["error"]))
        return reply.get(cmd.split(",")[0])


def connect_error(err, path, prefix, base):
    how = ("start one with telemetry, e.g. fwd --telemetry %s ..., or give "
           "the prefix and --runtime-dir it was started with" % prefix)
    if err.errno == errno.ENOENT:
        others = live_prefixes(base)
        return ("no program serves telemetry with prefix '%s': %s does not "
                "exist. %s%s" %
                (prefix, path, how[0].upper() + how[1:],
                 " (live here: %s)" % ", ".join(others) if others else ""))
    if err.errno == errno.ECONNREFUSED:
        return ("%s refuses connections: the program that made it has "
                "exited; %s" % (path, how))
    if err.errno == errno.EACCES:
        return ("%s: permission denied: run pp-top as the user that runs "
                "the program (or root)" % path)
    return "cannot connect to %s: %s" % (path, err.strerror)


# ---- sampling and rates ----

def sample(client):
    """One look at the program: its ports' counters (with the time each
    was read) and its pools' pages in flight, or None where the server
    lacks the command."""
    s = {"ports": None, "inflight": None}
    if all(c in client.commands for c in PORT_CMDS):
        s["ports"] = {}
        for pid in client.query("/ethdev/list") or []:
            info = (client.query("/ethdev/info,%d" % pid)
                    if "/ethdev/info" in client.commands else None)
            stats = client.query("/ethdev/stats,%d" % pid)
            if stats is None:   # closed between the list and the stats
                continue
            name = (info or {}).get("name", "port%d" % pid)
            s["ports"][pid] = {"name": name, "stats": stats,
                               "t": time.monotonic()}
    if POOL_CMD in client.commands:
        s["inflight"] = client.query(POOL_CMD)
    return s


def missing(client):
    return [c for c in PORT_CMDS + (POOL_CMD,) if c not in client.commands]


def port_rates(prev, cur):
    """Each port of CUR with its counters a second since PREV: None for a
    port PREV did not have, or had by another name, or whose counters
    went back (closed, and its id given to a new one)."""
    ports = []
    for pid, p in sorted((cur["ports"] or {}).items()):
        row = {"port_id": pid, "name": p["name"],
               "totals": {k: p["stats"].get(k, 0) for k in COUNTERS},
               "rates": None}
        old = (prev["ports"] or {}).get(pid) if prev else None
        dt = p["t"] - old["t"] if old else 0
        if old and old["name"] == p["name"] and dt > 0:
            d = {k: row["totals"][k] - old["stats"].get(k, 0)
                 for k in COUNTERS}
            if min(d.values()) >= 0:
                row["rates"] = {k + "_per_s": round(v / dt, 1)
                                for k, v in d.items()}
        ports.append(row)
    return ports


# ---- rendering ----

def si(n):
    """n with k/M/G/T and one decimal: 161.6M."""
    for unit in ("", "k", "M", "G", "T"):
        if abs(n) < 999.5 or unit == "T":
            return ("%.0f" if unit == "" else "%.1f") % n + unit
        n /= 1000.0
    return str(n)


def size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024.0
    return str(n)


def age(ms):
    if ms is None:   # "app" pages: taken without a holder, or a time
        return "unknown"
    if ms < 1000:
        return "%d ms" % ms
    if ms < 120000:
        return "%.1f s" % (ms / 1000.0)
    if ms < 7200000:
        return "%.1f min" % (ms / 60000.0)
    return "%.1f h" % (ms / 3600000.0)


def where(h):
    """A holder's place: "null0 q0", "(closed)" after it when the port
    was closed with the pages still out, or "" for "app" (none
    recorded)."""
    if "port" not in h:
        return ""
    return "%s q%s%s" % (h["port"], h.get("queue", "?"),
                         " (closed)" if h.get("port_open") is False else "")


def render(head, ports, inflight, lacks):
    """The screen as lines (the caller cuts them to the terminal)."""
    lines = [head, ""]
    port_lacks = [c for c in lacks if c in PORT_CMDS]
    if port_lacks:
        lines.append("no port rates: this program does not serve %s (a "
                     "pagepool before the /ethdev commands)" %
                     " or ".join(port_lacks))
    else:
        lines += port_lines(ports)
    lines.append("")
    if inflight is not None:
        lines += inflight_lines(inflight)
    elif POOL_CMD in lacks:
        lines.append("no pools by holder: this program does not serve %s "
                     "(a DPDK application, or a pagepool before it)" %
                     POOL_CMD)
    return lines


def port_lines(ports):
    row = "%-4s %-16s" + " %10s" * 8
    lines = [row % ("PORT", "NAME", "RX pkt/s", "RX B/s", "TX pkt/s",
                    "TX B/s", "missed/s", "nombuf/s", "ierr/s", "oerr/s")]
    for p in ports or []:
        r = p["rates"]
        cells = ["-"] * 8 if r is None else \
            [si(r[k + "_per_s"]) for k in COUNTERS]
        lines.append(row % tuple([p["port_id"], p["name"][:16]] + cells))
    if not ports:
        lines.append("     (no ports)")
    return lines


# A pool's row and its holders' rows under it, in the same columns.
POOL_ROW = "%-22s %-22s %10s %11s %8s  %s"


def inflight_lines(inflight):
    total = inflight.get("total", {})
    lines = ["IN FLIGHT %d pages, %s" % (total.get("pages", 0),
                                       size(total.get("bytes", 0))),
             POOL_ROW % ("POOL / HOLDER", "STATE / WHERE", "PAGES", "BYTES",
                         "IN POOL", "OLDEST")]
    for pool in inflight.get("pools", []):
        lines += pool_lines(pool)
    if not inflight.get("pools"):
        lines.append("(no pools)")
    return lines


def pool_lines(pool):
    state = pool.get("state", "?")
    if state == "destroyed" and pool.get("detach_time"):
        state = "destroyed %s ago" % age(
            (time.time() - pool["detach_time"]) * 1000)
    old = pool.get("oldest")
    oldest = "-" if not old else " ".join(
        w for w in (old.get("holder", "?"), where(old),
                    age(old.get("age_ms"))) if w)
    lines = [POOL_ROW % (pool.get("name", "?")[:22], state,
                         pool.get("inflight", 0),
                         size(pool.get("inflight_mem", 0)),
                         pool.get("in_pool", 0), oldest)]
    for h in pool.get("holders", []):
        lines.append(POOL_ROW % ("  " + h.get("holder", "?"), where(h)[:22],
                                 h.get("pages", 0), size(h.get("bytes", 0)),
                                 "", age(h.get("oldest_ms"))))
    return lines


def header(client, prefix, delay):
    comm = ""
    try:
        with open("/proc/%s/comm" % client.pid) as f:
            comm = f.read().strip() + " "
    except OSError:
        pass
    # The time first, as top has it: a narrow terminal cuts the end.
    return "pp-top - %s - %spid %s, prefix %s, %s, every %gs" % (
        time.strftime("%Y-%m-%d %H:%M:%S %Z"), comm, client.pid, prefix,
        client.server, delay)


# ---- the three ways to run ----

def ident():
    """The members that open every pagepool JSON document."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f
                          if l.startswith("model name")), "")
    except OSError:
        pass
    u = platform.uname()
    return {"tool": TOOL, "version": VERSION, "commit": COMMIT,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"arch": u.machine, "host": u.node,
                        "kernel": u.release, "cpu_model": model,
                        "cores": os.cpu_count()}}


def once(client, opts, path):
    first = sample(client)
    time.sleep(opts["delay"])
    cur = sample(client)
    ports = port_rates(first, cur) if cur["ports"] is not None else None
    lacks = missing(client)
    if not opts["json"]:
        print("\n".join(render(header(client, opts["prefix"],
                                      opts["delay"]), ports,
                               cur["inflight"], lacks)))
        return
    doc = ident()
    doc.update({"prefix": opts["prefix"], "socket": path,
                "pid": client.pid, "server": client.server,
                "interval_s": opts["delay"], "ports": ports,
                "total": (cur["inflight"] or {}).get("total"),
                "pools": (cur["inflight"] or {}).get("pools"),
                "missing": lacks})
    print(json.dumps(doc, indent=1))


def watch(scr, client, opts):
    """The live screen: redraw every delay, until q."""
    curses.curs_set(0)
    scr.timeout(100)
    prev = sample(client)
    due = time.monotonic()
    while True:
        if time.monotonic() >= due:
            cur = sample(client)
            ports = (port_rates(prev, cur) if cur["ports"] is not None
                     else None)
            prev, due = cur, time.monotonic() + opts["delay"]
            lines = render(header(client, opts["prefix"], opts["delay"]),
                           ports, cur["inflight"], missing(client))
            draw(scr, lines)
        key = scr.getch()
        client.check_alive()
        if key in (ord("q"), ord("Q")):
            return
        if key == curses.KEY_RESIZE:
            due = 0


def draw(scr, lines):
    rows, cols = scr.getmaxyx()
    scr.erase()
    if rows < 2 or cols < 2:   # nothing fits; the next resize redraws
        scr.refresh()
        return
    body = rows - 1
    if len(lines) > body:
        lines = lines[:body - 1] + ["... %d more lines (a taller terminal "
                                    "shows them)" % (len(lines) - body + 1)]
    for y, line in enumerate(lines):
        scr.addnstr(y, 0, line, cols - 1)
    scr.addnstr(rows - 1, 0, "q quits", cols - 1, curses.A_REVERSE)
    scr.refresh()


def main():
    opts = parse_args(sys.argv[1:])
    base = runtime_base(opts["runtime_dir"])
    path = os.path.join(base, "dpdk", opts["prefix"], SOCKET_NAME)
    client = None
    try:
        client = Client(path, opts["prefix"], base)
        if opts["once"]:
            once(client, opts, path)
        else:
            curses.wrapper(watch, client, opts)
    except Fail as e:
        die(str(e), 1)
    except Gone:
        die("the program (pid %s, prefix %s) exited: its telemetry socket "
            "%s closed" % (client.pid if client else "?", opts["prefix"],
                           path), 1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
