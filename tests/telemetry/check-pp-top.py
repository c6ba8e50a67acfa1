#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-pp-top.py PP_TOP fwd FWD | PP_TOP testpmd DPDK_TESTPMD

fwd: run the forwarder on two null ports with --telemetry (and --keep 8
where fwd has it: eight RX pages held for good, which pp-top must show
under "app_rx") under a temporary runtime directory, and watch it with
pp-top in a real terminal (tmux, 120x40): after two refreshes the screen
names the ports with non-zero rates, the pools and their holders; q
quits with exit 0. Then pp-top --once --json is parsed and checked, and
a pp-top watching fwd while fwd stops says so and exits 1. A prefix
nothing serves is refused with exit 1, a message that names the path
tried and how to start a program with telemetry.

testpmd: pp-top --once --json and --once against a real dpdk-testpmd on
two net_null ports: its ports with rates, and /pagepool/inflight named as
what a DPDK application lacks.

Exit 77 (skipped) with the reason when tmux or testpmd is missing, or
when fwd does not serve a command pp-top reads yet (after every check
that does not need it passed)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PREFIX = "pp-top-test"
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def wait_for(path, proc, secs=30):
    for _ in range(int(secs * 20)):
        if os.path.exists(path) or proc.poll() is not None:
            break
        time.sleep(0.05)
    return os.path.exists(path)


def commands(path):
    """The commands the server at PATH lists ("/"), with a client of this
    test's own (the protocol pp-top speaks)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.connect(path)
        n = json.loads(s.recv(4096).decode())["max_output_len"]
        s.send(b"/")
        return json.loads(s.recv(n).decode())["/"]


def si(cell):
    """A screen cell ("12.4M", "0", "-") as a number, None for "-"."""
    m = re.fullmatch(r"([\d.]+)([kMGT]?)", cell)
    if not m:
        return None
    return float(m.group(1)) * 1000 ** " kMGT".index(m.group(2) or " ")


def port_row(screen, name):
    """The cells of port NAME's row: RX pkt/s, RX B/s, TX pkt/s, TX B/s,
    then the drops and errors."""
    for line in screen.splitlines():
        w = line.split()
        if len(w) == 10 and w[1] == name:
            return [si(c) for c in w[2:]]
    return None


class Tmux:
    """A tmux server of this test's own (-L), one 120x40 session."""

    def __init__(self):
        self.sock = "pp-top-test-%d" % os.getpid()

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] +
                              list(args), capture_output=True, text=True,
                              timeout=20)

    def start(self, cmd):
        # The shell prints pp-top's exit status and keeps the pane, so
        # that the test reads both after pp-top ends.
        sh = "%s; echo \"pp-top exited $?\"; sleep 600" % cmd
        self.tmux("kill-session", "-t", "t")
        p = self.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "t",
                      sh)
        if p.returncode:
            sys.exit("tmux new-session failed: " + p.stderr)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t").stdout

    def wait(self, pred, secs):
        """The first screen PRED accepts within SECS, else the last."""
        end = time.monotonic() + secs
        while True:
            s = self.screen()
            if pred(s) or time.monotonic() > end:
                return s
            time.sleep(0.2)

    def keys(self, k):
        self.tmux("send-keys", "-t", "t", k)

    def stop(self):
        self.tmux("kill-server")


def run_top(top, args, timeout=30):
    return subprocess.run([top] + args, capture_output=True, text=True,
                          timeout=timeout)


def check_no_prefix(top, tmp):
    p = run_top(top, ["--runtime-dir", tmp, "nosuch"])
    path = os.path.join(tmp, "dpdk", "nosuch", "dpdk_telemetry.v2")
    check(p.returncode == 1 and path in p.stderr and
          "fwd --telemetry nosuch" in p.stderr and p.stdout == "",
          "a prefix nothing serves: exit 1, names %s and fwd --telemetry "
          "(got %d)" % (path, p.returncode), p.stderr)


def check_json_ports(doc, want, counts_bytes=True):
    """WANT: {port name: (rx, tx)}, True where that direction's rates
    must be > 0 (the packets, and the bytes where the driver counts
    them)."""
    ports = {p["name"]: p for p in doc.get("ports") or []}
    for name, (rx, tx) in want.items():
        p = ports.get(name)
        check(p is not None and isinstance(p.get("port_id"), int),
              "--json: port %s, with its port_id" % name, str(doc["ports"]))
        if not p:
            continue
        r = p.get("rates") or {}
        for key, need in (("ipackets_per_s", rx),
                          ("ibytes_per_s", rx and counts_bytes),
                          ("opackets_per_s", tx),
                          ("obytes_per_s", tx and counts_bytes)):
            if need:
                check(r.get(key, 0) > 0, "--json: %s %s > 0 (%r)" %
                      (name, key, r.get(key)))
        for key in ("imissed_per_s", "rx_nombuf_per_s", "ierrors_per_s",
                    "oerrors_per_s"):
            check(isinstance(r.get(key), (int, float)),
                  "--json: %s has %s" % (name, key))
        check(p.get("totals", {}).get("ipackets") is not None,
              "--json: %s has its totals" % name)


def fwd_case(top, fwd):
    if not shutil.which("tmux"):
        skip("no tmux: the live screen is checked in a real terminal "
             "(apt-get install tmux; scripts/setup.sh installs it)")
    help_text = subprocess.run([fwd, "--help"], capture_output=True,
                               text=True).stdout
    keep = "--keep" in help_text
    tmux = Tmux()
    with tempfile.TemporaryDirectory() as tmp:
        check_no_prefix(top, tmp)
        env = dict(os.environ, RUNTIME_DIRECTORY=tmp)
        path = os.path.join(tmp, "dpdk", PREFIX, "dpdk_telemetry.v2")
        cmd = [fwd, "--port", "null0", "--port", "null1", "--duration",
               "120", "--telemetry", PREFIX] + (["--keep", "8"] if keep
                                                else [])
        print(" ".join(cmd))
        fwd_p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        try:
            if not wait_for(path, fwd_p):
                sys.exit("fwd did not create " + path)
            lacks = [c for c in ("/ethdev/list", "/ethdev/stats",
                                 "/pagepool/inflight")
                     if c not in commands(path)]
            top_cmd = "%s -d 0.5 --runtime-dir %s %s" % (top, tmp, PREFIX)
            watch(tmux, top_cmd, fwd_p.pid, lacks, keep)
            once_json(top, tmp, fwd_p.pid, lacks, keep)
            # fwd stops while pp-top watches it.
            tmux.start(top_cmd)
            tmux.wait(lambda s: "prefix %s" % PREFIX in s, 10)
            fwd_p.send_signal(signal.SIGINT)
            s = tmux.wait(lambda s: "pp-top exited" in s, 30)
            check("pp-top exited 1" in s and
                  "(pid %d, prefix %s) exited" % (fwd_p.pid, PREFIX) in s,
                  "fwd stops while watched: pp-top says so, exit 1", s)
        finally:
            tmux.stop()
            if fwd_p.poll() is None:
                fwd_p.send_signal(signal.SIGINT)
            out = fwd_p.communicate(timeout=60)[0]
        check(fwd_p.returncode == 0, "fwd exits 0 (got %d)" %
              fwd_p.returncode, out[-2000:])
    return lacks, keep


def watch(tmux, top_cmd, pid, lacks, keep):
    print("in tmux: " + top_cmd)
    tmux.start(top_cmd)
    ports = "/ethdev/list" not in lacks and "/ethdev/stats" not in lacks
    if ports:
        # Two refreshes: the first has no rates yet ("-"), the second has.
        s = tmux.wait(lambda s: (port_row(s, "null0") or [None])[0], 15)
    else:
        s = tmux.wait(lambda s: "does not serve" in s, 15)
    print(s)
    check("pid %d" % pid in s and "prefix %s" % PREFIX in s,
          "the header names fwd's pid and the prefix", s)
    for c in lacks:
        check(c in s and "does not serve" in s,
              "the screen says fwd does not serve %s" % c, s)
    if ports:
        rx, tx = port_row(s, "null0"), port_row(s, "null1")
        check(rx is not None and rx[0] and rx[1],
              "null0's row: RX packets and bytes a second > 0", s)
        check(tx is not None and tx[2] and tx[3],
              "null1's row: TX packets and bytes a second > 0", s)
    if "/pagepool/inflight" not in lacks:
        for pool in ("null0-rxq0", "null1-rxq0"):
            check(re.search(r"^%s\s+live\s+\d+" % pool, s, re.M) is not None,
                  "a row for pool %s" % pool, s)
        holders = re.findall(r"^  (rx_ring|app_rx|tx_ring|stack|app)\s", s,
                             re.M)
        check(len(holders) > 0, "holder lines under the pools", s)
        if keep:
            m = re.search(r"^  app_rx\s+null0 q0\s+(\d+)", s, re.M)
            check(m is not None and int(m.group(1)) >= 8,
                  "--keep 8: null0's pool has >= 8 pages under app_rx", s)
    check("q quits" in s, "the footer says q quits", s)
    tmux.keys("q")
    s = tmux.wait(lambda s: "pp-top exited" in s, 10)
    check("pp-top exited 0" in s, "q: pp-top exits 0", s)


def once_json(top, tmp, pid, lacks, keep):
    p = run_top(top, ["--once", "--json", "-d", "0.5", "--runtime-dir", tmp,
                      PREFIX])
    check(p.returncode == 0, "--once --json: exit 0 (got %d)" % p.returncode,
          p.stderr)
    doc = json.loads(p.stdout)
    print(p.stdout)
    for key in ("tool", "version", "commit", "date", "machine", "prefix",
                "socket", "pid", "server", "interval_s", "ports", "pools",
                "missing"):
        check(key in doc, "--json: has '%s'" % key)
    check(doc.get("pid") == pid and doc.get("prefix") == PREFIX,
          "--json: fwd's pid and the prefix")
    check(doc.get("missing") == lacks, "--json: missing is %r" % lacks,
          str(doc.get("missing")))
    if "/ethdev/list" not in lacks:
        check_json_ports(doc, {"null0": (True, False),
                               "null1": (False, True)})
    if "/pagepool/inflight" not in lacks:
        pools = {q.get("name"): q for q in doc.get("pools") or []}
        check(set(pools) >= {"null0-rxq0", "null1-rxq0"},
              "--json: pools null0-rxq0 and null1-rxq0", str(list(pools)))
        check(isinstance(doc.get("total"), dict), "--json: the total")
        for q in pools.values():
            check(isinstance(q.get("holders"), list) and "oldest" in q,
                  "--json: pool %s has holders and oldest" % q.get("name"))
        if keep:
            q = pools.get("null0-rxq0", {})
            app_rx = [h for h in q.get("holders", [])
                      if h.get("holder") == "app_rx"]
            check(app_rx and app_rx[0].get("pages", 0) >= 8,
                  "--json: --keep 8 shows as app_rx on null0-rxq0",
                  json.dumps(q))
            check((q.get("oldest") or {}).get("age_ms", 0) > 0,
                  "--json: null0-rxq0's oldest page has an age",
                  json.dumps(q.get("oldest")))
    p = run_top(top, ["--once", "-d", "0.5", "--runtime-dir", tmp, PREFIX])
    check(p.returncode == 0 and "prefix %s" % PREFIX in p.stdout,
          "--once: the screen as text, exit 0", p.stdout + p.stderr)


def testpmd_case(top, testpmd):
    if not shutil.which(testpmd):
        skip("dpdk-testpmd not found (install dpdk)")
    if len(os.sched_getaffinity(0)) < 2:
        skip("testpmd needs two CPUs (main and forwarding lcore)")
    prefix = "pp-top-testpmd"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, RUNTIME_DIRECTORY=tmp)
        path = os.path.join(tmp, "dpdk", prefix, "dpdk_telemetry.v2")
        cpus = sorted(os.sched_getaffinity(0))[:2]
        # Without hugepages (--no-huge): anyone can run it. Forwards until
        # a line comes on stdin.
        cmd = [testpmd, "-l", "%d,%d" % tuple(cpus), "--no-pci", "--no-huge",
               "-m", "256", "--file-prefix", prefix, "--vdev", "net_null0",
               "--vdev", "net_null1", "--", "--forward-mode=io",
               "--total-num-mbufs=4096"]
        print(" ".join(cmd))
        tp = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        try:
            if not wait_for(path, tp, 60):
                sys.exit("testpmd did not create %s:\n%s" %
                         (path, tp.communicate(timeout=30)[0]))
            p = run_top(top, ["--once", "--json", "-d", "0.5",
                              "--runtime-dir", tmp, prefix])
            check(p.returncode == 0, "--once --json: exit 0 (got %d)" %
                  p.returncode, p.stderr)
            doc = json.loads(p.stdout)
            print(p.stdout)
            check(doc.get("server", "").startswith("DPDK"),
                  "--json: the server is DPDK (%r)" % doc.get("server"))
            check(doc.get("pid") == tp.pid, "--json: testpmd's pid")
            check(doc.get("missing") == ["/pagepool/inflight"],
                  "--json: testpmd lacks /pagepool/inflight, only",
                  str(doc.get("missing")))
            check(doc.get("pools") is None, "--json: no pools")
            # DPDK's net_null counts no bytes: the packets are checked.
            check_json_ports(doc, {"net_null0": (True, True),
                                   "net_null1": (True, True)},
                             counts_bytes=False)
            p = run_top(top, ["--once", "-d", "0.5", "--runtime-dir", tmp,
                              prefix])
            print(p.stdout)
            row = port_row(p.stdout, "net_null0")
            check(p.returncode == 0 and row is not None and row[0] > 0 and
                  "does not serve /pagepool/inflight" in p.stdout,
                  "--once: testpmd's ports with rates, and what it lacks",
                  p.stdout + p.stderr)
        finally:
            if tp.poll() is None:
                tp.communicate(input="\n", timeout=30)


def main():
    top, case, prog = sys.argv[1:4]
    if case == "testpmd":
        testpmd_case(top, prog)
        lacks, keep = [], True
    else:
        lacks, keep = fwd_case(top, prog)
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))
    if lacks:
        skip("every check that fwd allows passed, but fwd does not serve "
             "%s yet: what pp-top shows from it is not checked" %
             " or ".join(lacks))
    if not keep:
        print("note: fwd has no --keep yet: app_rx is not checked")
    print("ok")


if __name__ == "__main__":
    main()
