#!/usr/bin/env python3
"""check-completion.py - drive a program's bash completion in a real bash.

  check-completion.py FILE NAME [--except OPT]... -- PROG [ARG]...

FILE is the completion as meson installs it, NAME the command it
completes, PROG ARG... the program itself (for its --help). In a bash
that has no bash-completion loaded (the file stands alone):
  - sourcing FILE prints nothing and registers a function for NAME
    (complete -p NAME);
  - for "NAME --" the function offers exactly the long options of
    'PROG --help' (and of 'PROG COMMAND --help' after each command, for
    pp-bench), less the --except ones;
  - the cases below for NAME: a command line, and what the function must
    offer for the word at its end.
The function is called as bash calls it: COMP_LINE, COMP_POINT,
COMP_WORDS split at COMP_WORDBREAKS as readline splits them, COMP_CWORD,
and the arguments NAME, the current word and the previous one.
"""
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile

BREAKS = "\"'><=;|&(:"
HEADING = re.compile(r"^\s+(-[a-zA-Z], )?(--[a-z][a-z0-9-]*)")


def comp_words(line):
    """COMP_WORDS and COMP_CWORD for @line, as readline makes them."""
    words = re.findall(r"[^\s%s]+|[%s]+" % (re.escape(BREAKS),
                                            re.escape(BREAKS)), line)
    if not line or line[-1].isspace():
        words.append("")
    return words, len(words) - 1


def complete(path, name, line, env):
    """What the completion function offers for the end of @line."""
    words, cword = comp_words(line)
    script = """
source %(file)s
read -r _ _ func _ <<<"$(complete -p %(name)s)"
COMP_LINE=%(line)s
COMP_POINT=${#COMP_LINE}
COMP_WORDS=(%(words)s)
COMP_CWORD=%(cword)d
COMPREPLY=()
"$func" %(name)s "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%%s\\n' "${COMPREPLY[@]}"
""" % {"file": shlex.quote(path), "name": shlex.quote(name),
       "line": shlex.quote(line),
       "words": " ".join(shlex.quote(w) for w in words), "cword": cword}
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                         capture_output=True, text=True, env=env)
    if out.returncode or out.stderr:
        return None, "bash exited %d: %s" % (out.returncode, out.stderr)
    return [w for w in out.stdout.split("\n") if w], None


def help_longopts(cmd):
    out = subprocess.run(cmd + ["--help"], capture_output=True, text=True)
    if out.returncode:
        sys.exit("%s --help exited %d" % (" ".join(cmd), out.returncode))
    return {m.group(2) for m in map(HEADING.match, out.stdout.splitlines())
            if m}


def listdir(path, pattern=".*"):
    try:
        return sorted(n for n in os.listdir(path) if re.fullmatch(pattern, n))
    except OSError:
        return []


def serve(path):
    """A listening unix socket at @path, as a running program's."""
    os.makedirs(os.path.dirname(path))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(1)
    return s


# Each program's cases: (line, "exact" or "has", words). Where the words
# come from this machine (network interfaces, NUMA nodes, RDMA devices),
# they are read here as the completion reads them.
def cases_fwd(tmp, env):
    nets = [n for n in listdir("/sys/class/net") if n != "lo"]
    vfio = listdir("/sys/bus/pci/drivers/vfio-pci", r"\w{4}:\w\w:\w\w\.\w")
    return [
        ("fwd --mo", "exact", ["--mode"]),
        ("fwd --mode ", "exact", ["redirect", "pass"]),
        ("fwd --mode=p", "exact", ["pass"]),
        ("fwd --refill ", "exact", ["single", "list", "array"]),
        ("fwd --frag ", "exact", ["auto"]),
        ("fwd --json ", "has", ["-"]),
        ("fwd --port ", "exact", ["null0", "null1", "veth0,peer="] +
         ["af_xdp:" + n for n in nets] + ["e1000e:" + a for a in vfio] +
         ["virtio_user:path="]),
        # readline's word starts after the ':' or '=': that part only.
        ("fwd --port af_xdp:", "exact", nets),
        ("fwd --port null0 --port veth2,peer=", "exact", ["veth3"]),
        ("fwd --port virtio_user:path=%s/s" % tmp, "exact", ["%s/sock" % tmp]),
    ]


def cases_pp_bench(tmp, env):
    return [
        ("pp-bench ", "exact", ["tlb", "scale", "memory", "stats",
                                "growth"]),
        ("pp-bench tlb --s", "exact", ["--sizes"]),
        ("pp-bench scale --th", "exact", ["--threads"]),
        ("pp-bench stats --re", "exact", ["--reader-cpu"]),
        ("pp-bench growth --sh", "exact", ["--shrink-wmark",
                                           "--shrink-delay-ms"]),
        ("pp-bench growth --sides ", "exact", ["grow", "fixed", "dpdk"]),
        ("pp-bench --json=", "has", ["-"]),
    ]


def cases_pp_hugepages(tmp, env):
    nodes = [n[4:] for n in listdir("/sys/devices/system/node", r"node\d+")]
    return [
        ("pp-hugepages -p ", "exact", ["2M", "1G"]),
        ("pp-hugepages --pagesize=1", "exact", ["1G"]),
        ("pp-hugepages --node ", "exact", nodes),
        ("pp-hugepages --pers", "exact", ["--persistent"]),
        ("pp-hugepages -m --cl", "exact", ["--clear"]),
        ("pp-hugepages --apply %s/s" % tmp, "exact", ["%s/sock" % tmp]),
    ]


def cases_pp_devbind(tmp, env):
    # A fake /: one network device with an interface, one disk
    # controller (not offered), two drivers, one device pp-devbind bound.
    root = os.path.join(tmp, "root")
    for dev, cls in (("0000:00:02.0", "0x020000"), ("0000:00:1f.2",
                                                    "0x010601")):
        d = os.path.join(root, "sys/bus/pci/devices", dev)
        os.makedirs(d)
        with open(os.path.join(d, "class"), "w") as f:
            f.write(cls + "\n")
    os.makedirs(os.path.join(root, "sys/bus/pci/devices/0000:00:02.0/net/eth7"))
    for drv in ("e1000e", "vfio-pci"):
        os.makedirs(os.path.join(root, "sys/bus/pci/drivers", drv))
    os.makedirs(os.path.join(root, "run/pagepool/devbind"))
    open(os.path.join(root, "run/pagepool/devbind/0000:00:02.0"), "w").close()
    env["PP_DEVBIND_ROOT"] = root
    return [
        ("pp-devbind ", "has", ["--status", "--bind", "--unbind",
                                "--restore"]),
        ("pp-devbind --bind ", "exact", ["e1000e", "vfio-pci"]),
        ("pp-devbind --bind vfio-pci ", "exact", ["0000:00:02.0", "eth7"]),
        ("pp-devbind --bind vfio-pci 0000:00:0", "exact", ["02.0"]),
        ("pp-devbind -u ", "exact", ["0000:00:02.0", "eth7"]),
        ("pp-devbind --restore ", "exact", ["0000:00:02.0"]),
        ("pp-devbind -u eth7 --f", "exact", ["--force"]),
    ]


def cases_pp_top(tmp, env):
    # A running program's socket under RUNTIME_DIRECTORY, a prefix
    # directory whose program is gone (no socket: not offered), and one
    # under a --runtime-dir.
    env["RUNTIME_DIRECTORY"] = os.path.join(tmp, "rt")
    cases_pp_top.socks = [
        serve(os.path.join(tmp, "rt/dpdk/demo/dpdk_telemetry.v2")),
        serve(os.path.join(tmp, "other/dpdk/fwd1/dpdk_telemetry.v2"))]
    os.makedirs(os.path.join(tmp, "rt/dpdk/gone"))
    return [
        ("pp-top ", "exact", ["demo"]),
        ("pp-top -f ", "exact", ["demo"]),
        ("pp-top --runtime-dir %s/other " % tmp, "exact", ["fwd1"]),
        ("pp-top --de", "exact", ["--delay"]),
    ]


def cases_pp_mempool_perf(tmp, env):
    return [
        ("pp-mempool-perf --keep ", "exact", ["32", "128", "512"]),
        ("pp-mempool-perf --ref ring_mp", "exact", ["ring_mp_mc",
                                                    "ring_mp_sc"]),
        ("pp-mempool-perf --mem", "exact", ["--memory"]),
    ]


def cases_rdma_echo(tmp, env):
    return [
        ("rdma_echo --dev ", "exact", listdir("/sys/class/infiniband")),
        ("rdma_echo --na", "exact", ["--naive"]),
    ]


CASES = {"fwd": cases_fwd, "pp-bench": cases_pp_bench,
         "pp-hugepages": cases_pp_hugepages, "pp-devbind": cases_pp_devbind,
         "pp-top": cases_pp_top, "pp-mempool-perf": cases_pp_mempool_perf,
         "rdma_echo": cases_rdma_echo}
COMMANDS = {"pp-bench": ["tlb", "scale", "memory", "stats", "growth"]}


def main(argv):
    if "--" not in argv or len(argv) < 5:
        sys.exit(__doc__)
    sep = argv.index("--")
    path, name = os.path.abspath(argv[1]), argv[2]
    exceptions = {argv[i + 1] for i in range(3, sep) if argv[i] == "--except"}
    prog = argv[sep + 1:]
    errors = []
    env = {k: v for k, v in os.environ.items()
           if k not in ("RUNTIME_DIRECTORY", "PP_DEVBIND_ROOT")}

    out = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                          'source "$1" && complete -p "$2"', "-", path, name],
                         capture_output=True, text=True, env=env)
    if out.returncode or out.stderr or \
            not re.fullmatch(r"complete -F \S+ %s\n" % re.escape(name),
                             out.stdout):
        sys.exit("%s: sourcing it does not register a function for %s: "
                 "exit %d, stdout %r, stderr %r" % (path, name,
                                                   out.returncode, out.stdout,
                                                   out.stderr))

    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "sock"), "w").close()
        cases = CASES[name](tmp, env)
        for cmd in [[]] + [[c] for c in COMMANDS.get(name, [])]:
            want = help_longopts(prog + cmd) - exceptions
            line = " ".join([name] + cmd + ["--"])
            got, err = complete(path, name, line, env)
            if err:
                errors.append("'%s': %s" % (line, err))
                continue
            got = set(got) - exceptions
            for o in sorted(want - got):
                errors.append("'%s' does not offer %s, which '%s --help' "
                              "lists" % (line, o, " ".join(prog + cmd)))
            for o in sorted(got - want):
                errors.append("'%s' offers %s, which '%s --help' does not "
                              "list" % (line, o, " ".join(prog + cmd)))
        for line, how, words in cases:
            got, err = complete(path, name, line, env)
            if err:
                errors.append("'%s': %s" % (line, err))
            elif how == "exact" and sorted(got) != sorted(words):
                errors.append("'%s' offers %s, not %s" % (line, got, words))
            elif how == "has" and not set(words) <= set(got):
                errors.append("'%s' offers %s, without %s" %
                              (line, got, sorted(set(words) - set(got))))
    for e in errors:
        print("%s: %s" % (name, e))
    if errors:
        return 1
    print("%s: %d cases, ok" % (name, len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
