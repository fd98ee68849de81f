# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The fail-fast suite's harness: fftarget driven line by line, a local
server that accepts and never answers, a loader attached with
:failfast= points (in a dry run unless the test enforces), its
strategies file and its stats.  Every process, socket and pin ends with
the test, whatever happens.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import SDS, Fail, check, ctl_request, eq, log  # noqa: E402,F401

TARGET = os.path.join(sdstest.BUILD, "test", "targets", "fftarget")
APP = "fftarget"
SUITE = sdstest.Suite(timeout=240)
DRY_ENV = "SDS_FAILFAST_DRYRUN"


def test(fn):
    return SUITE.test(fn)


def _libc():
    """The libc fftarget runs with (the dry run's uprobes go there)."""
    try:
        out = subprocess.run(["ldd", TARGET], capture_output=True,
                             text=True, timeout=10).stdout
        m = re.search(r"libc\.so\.6 => (\S+)", out)
        if m:
            return os.path.realpath(m.group(1))
    except (OSError, subprocess.SubprocessError):
        pass
    return "/lib/x86_64-linux-gnu/libc.so.6"


LIBC = _libc()


_PROBE = []


def _feature_probe():
    """`bpftool feature probe kernel`'s output, run once a suite (slow)."""
    if not _PROBE:
        try:
            _PROBE.append(subprocess.run(
                ["bpftool", "feature", "probe", "kernel"],
                capture_output=True, text=True, timeout=60).stdout)
        except (OSError, subprocess.SubprocessError) as e:
            _PROBE.append("bpftool feature probe: %s" % e)
    return _PROBE[0]


def lsm_loads():
    """(True, "") when this kernel loads BPF LSM programs, else (False,
    why): bpftool's own probe, independent of the loader's."""
    out = _feature_probe()
    if "eBPF program_type lsm is available" in out:
        return True, ""
    return False, "bpftool feature probe kernel: program_type lsm is NOT available"


def cgroup_root():
    """The cgroup2 root's mount point (root "/" in mountinfo), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[:1] == ["cgroup2"] and pre.split()[3] == "/":
                return pre.split()[4]
    return None


def cg_lever():
    """(True, "") when attach's failfast= goes through the cgroup hooks
    here (no LSM programs, cgroup sock_addr programs load), else (False,
    why)."""
    if lsm_loads()[0]:
        return False, "BPF LSM programs load here: attach uses them instead"
    if "eBPF program_type cgroup_sock_addr is available" not in _feature_probe():
        return False, ("bpftool feature probe kernel: program_type "
                       "cgroup_sock_addr is NOT available")
    return True, ""


def cg_progs():
    """{id: name} of the sds_ff* programs attached to the cgroup2 root
    (`bpftool cgroup show --json`), whoever's they are."""
    root = cgroup_root()
    if not root:
        return {}
    r = subprocess.run(["bpftool", "cgroup", "show", root, "--json"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool cgroup show %s: %s"
          % (root, r.stderr.strip()))
    return {p["id"]: p.get("name", "") for p in json.loads(r.stdout.strip() or "[]")
            if p.get("name", "").startswith("sds_ff")}


class CgWatch:
    """This run's own programs on the cgroup2 root, whatever other runs
    (suites side by side, a developer's loader, a demo) attach there
    meanwhile.  @pids() gives the pids of this run's loaders still
    running: a program one of them holds is this run's, and stays so
    after the loader is gone (ours() notes it each time it is called:
    attach() calls it once the loader serves)."""

    def __init__(self, pids):
        self.pids = pids
        self.before = set(cg_progs())
        self.ids = set()

    def ours(self):
        """Names of this run's programs on the root now (sorted)."""
        progs = cg_progs()
        holders = sdstest.prog_holders()
        live = set(self.pids())
        self.ids.update(i for i in progs if holders.get(i, set()) & live)
        return sorted(progs[i] for i in progs if i in self.ids)

    def left(self):
        """ours(), and the programs that came onto the root since this run
        began and that no process holds: a loader of this run that is
        gone left them (another run's loader holds its own)."""
        own = self.ours()
        progs = cg_progs()
        holders = sdstest.prog_holders()
        new = [progs[i] for i in progs if i not in self.before
               and i not in self.ids and not holders.get(i)]
        return sorted(own + new)


# The running test's CgWatch (its Ctx's); None outside a test.
_WATCH = []


def cg_ours():
    """This test's programs on the cgroup2 root (CgWatch.ours); outside a
    test (tools/bench), every sds_ff* program there."""
    if _WATCH:
        return _WATCH[0].ours()
    return sorted(cg_progs().values())


def cg_left():
    """What of this test's is on the cgroup2 root (CgWatch.left)."""
    if _WATCH:
        return _WATCH[0].left()
    return sorted(cg_progs().values())


def wait_cg_clean(what, watch=None):
    """Nothing of this test's (or @watch's) left on the cgroup2 root
    within 10 s (programs leave asynchronously after their links close)."""
    left = watch.left if watch else cg_left
    sdstest.wait_until(lambda: not left(), time.time() + 10,
                       lambda _: "%s: sds_ff programs left on the cgroup2 "
                       "root: %s" % (what, left()))


def skip(name, why):
    """A test that cannot run here says so on its own line (SKIP), and
    is counted as skipped: never silent."""
    SUITE.skip(name, why)


class Server:
    """127.0.0.1:port that accepts every connection and never answers
    (the dead dependency); the sockets are held until close().  With
    @reply, a live one instead: each connection gets a line and is
    closed."""

    def __init__(self, reply=False):
        self.reply = reply
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(1024)
        self.port = self.s.getsockname()[1]
        self.held = []
        self.accepted = 0
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        self.s.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.s.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted += 1
            if self.reply:
                c.sendall(b"OK\n")
                c.close()
            else:
                self.held.append(c)

    def close(self):
        self.stop = True
        self.t.join(2)
        for c in self.held:
            c.close()
        self.s.close()


class Target:
    """fftarget in its own session; run() sends one command and returns
    ({outcome: count}, median ns, max ns)."""

    def __init__(self, ctx):
        self.p = sdstest.start_line_target(ctx, TARGET, "fftarget")

    def run(self, cmd, arg, n):
        self.p.stdin.write(b"%s %s %d\n" % (cmd.encode(), str(arg).encode(), n))
        self.p.stdin.flush()
        line = self.p.stdout.readline().decode().split()
        check(line and line[0] == "res", "fftarget said %r to %s" % (line, cmd))
        res = dict(w.split("=") for w in line[1:] if "=" in w)
        res = {k: int(v) for k, v in res.items()}
        return res, int(line[-3]), int(line[-1])


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-ff-")
        self.servers = []
        self.loader = None
        self.strategies = os.path.join(self.tmp, "strategies.json")
        self.version = 0
        self.write_strategies({})
        self.file = os.path.join(self.tmp, "data")
        with open(self.file, "w") as f:
            f.write("data\n")
        self.cg = CgWatch(lambda: [l.pid for l in self.loaders
                                   if l.p.poll() is None])
        _WATCH[:] = [self.cg]

    def cleanup(self):
        for s in self.servers:
            s.close()
        super().cleanup()
        for s in getattr(self, "held", ()):
            s.close()
        _WATCH[:] = []

    def server(self, reply=False):
        s = Server(reply)
        self.servers.append(s)
        return s

    def target(self):
        return Target(self)

    def attach(self, specs, dry=True, wait=True, extra=(), target=TARGET):
        env = dict(self.env)
        if dry:
            env[DRY_ENV] = LIBC
        else:
            env.pop(DRY_ENV, None)
        saved, self.env = self.env, env
        try:
            self.loader = sdstest.AttachProcess(
                self, ["--app", APP, "--strategies", self.strategies] +
                list(extra) + [target] + list(specs), APP, wait=wait)
        finally:
            self.env = saved
        if wait and not dry:
            self.cg.ours()      # what it attached is this test's from now on
        return self.loader

    def sds(self, args, env=None, timeout=60):
        return sdstest.run_group([SDS] + args, env or self.env, self.tmp,
                                 self.others, timeout=timeout)

    def write_strategies(self, points):
        """A new version of the strategies file; the loader (if any) is
        told with SIGHUP and must show the version within 5 s."""
        self.version += 1
        tmp = self.strategies + ".new"
        with open(tmp, "w") as f:
            json.dump({"version": self.version, "points": points}, f)
        os.rename(tmp, self.strategies)
        if self.loader is None:
            return
        os.kill(self.loader.pid, signal.SIGHUP)
        sdstest.wait_until(
            lambda: self.stats().get("strategies_version") == self.version,
            time.time() + 5, "strategies version %d not in force" % self.version,
            0.05)

    def stats(self):
        r = self.sds(["stats", "--json", "--app", APP])
        check(r.rc == 0, "stats: %r" % r)
        return json.loads(r.out)

    def point(self, name):
        return sdstest.get_point(self.stats(), name)

    def ff(self, name):
        p = self.point(name)
        check("failfast" in p, "stats: point %s has no \"failfast\": %r"
              % (name, p))
        return p["failfast"]
