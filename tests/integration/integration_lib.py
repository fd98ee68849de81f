# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the integration suite shares (tests/integration/run.py, and
through it tests/probepath): the target programs and the loader, the
per-test context, the assertions on stats (and wait_point, which polls
them), and the suite.

Each test module (tests/integration/t_*.py) registers its tests with
@test; run.py imports them in name order, which is the order they run
in.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import target  # noqa: E402
from sdstest import (BUILD, Fail, SDS, check, get_point,  # noqa: E402
                     is_socket, log)

_kill_group = sdstest.kill_group
TT = os.path.join(BUILD, "test", "targets")

SITES = ("nop5", "emulated", "stepped")
READY_TIMEOUT = 30.0          # seconds for the socket to appear (a hang, not speed)
TEST_TIMEOUT = 180            # seconds for a whole test
N, E, T, MS, TMO = 1000, 137, 5, 30, 20
WORK = "work=work:err=neg:timeout_ms=%d" % TMO


# ELF helpers (for expected file offsets): the shared harness's.
elf_symbol_vaddr = sdstest.elf_symbol_vaddr
symbol_file_offset = sdstest.symbol_file_offset


# ---------------------------------------------------------------------------
# Processes

# target.c's driver (tests/lib/target.py), as the suite's tests call it.
Target = target.Target


class Loader(sdstest.AttachProcess):
    """A running `sds-bpf attach`."""

    READY_TIMEOUT = READY_TIMEOUT

    def stop(self, sig=signal.SIGINT, timeout=10):
        """Signal the loader and return its exit code."""
        if self.p.poll() is None:
            os.kill(self.p.pid, sig)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill_group(self.p)
            self.p.wait(5)
            raise Fail("sds-bpf attach did not exit within %d s of %s"
                       % (timeout, signal.Signals(sig).name))

    def kill(self):
        self.end()

    cleanup = kill


class Ctx(sdstest.ProcDir):
    """One test's temp dir, environment and processes."""

    def __init__(self, name):
        super().__init__(name, "sds-it-")

    def copy(self, name, as_name=None):
        """A private copy of a built target: its own inode, so only our
        processes hit our probes."""
        src = os.path.join(TT, name)
        check(os.path.exists(src), "%s missing: run make integration" % src)
        dst = os.path.join(self.tmp, as_name or name)
        shutil.copy2(src, dst)
        if name == "target_lib":
            self.copy("libsdstarget.so")
        return dst

    def start(self, path):
        return Target(self, path)

    def attach(self, args, app, group="default", **kw):
        return Loader(self, args, app, group, **kw)

    def sds(self, args, timeout=30, env=None, prefix=None, stdin_null=True):
        cmd = (prefix or []) + [SDS] + args
        log(" ".join(cmd))
        return sdstest.run_group(cmd, env or self.env, self.tmp, self.others,
                                 timeout)

    def stats(self, app=None, group=None):
        args = ["stats"]
        if group:
            args += ["--group", group]
        if app:
            args += ["--app", app]
        args.append("--json")
        return sdstest.json_out(self.sds(args), "sds-bpf " + " ".join(args))

    def run_dir_sockets(self):
        if not os.path.isdir(self.run_dir):
            return []
        return [f for f in os.listdir(self.run_dir)
                if is_socket(os.path.join(self.run_dir, f))]


# ---------------------------------------------------------------------------
# Assertions on stats

def _mismatches(p, visits, exc, tmo, window):
    bad = []
    tot = p.get("total", {})
    want = {"visits": visits, "exceptions": exc, "timeouts": tmo,
            "downgrades": 0}
    for k, v in want.items():
        if tot.get(k) != v:
            bad.append("total.%s = %r, want %d" % (k, tot.get(k), v))
    lat = p.get("latency_ns", {})
    if lat.get("count") != visits:
        bad.append("latency_ns.count = %r, want %d" % (lat.get("count"), visits))
    if p.get("concurrency") != 0:
        bad.append("concurrency = %r, want 0" % p.get("concurrency"))
    if window:
        win = p.get("window", {})
        if win.get("seconds") != 10:
            bad.append("window.seconds = %r, want 10" % win.get("seconds"))
        for k, v in want.items():
            if win.get(k) != v:
                bad.append("window.%s = %r, want %d (all calls were in the "
                           "last few seconds)" % (k, win.get(k), v))
    return bad


def assert_counts(ctx, app, point, visits, exc, tmo, window=True, group=None):
    """Exact totals of @point, queried right after the target said done."""
    st = ctx.stats(app, group)
    p = get_point(st, point)
    bad = _mismatches(p, visits, exc, tmo, window)
    if bad:
        time.sleep(1.5)
        later = get_point(ctx.stats(app, group), point)
        late_bad = _mismatches(later, visits, exc, tmo, window)
        note = ("a query 1.5 s later matched, so stats lags behind the "
                "kernel" if not late_bad else
                "a query 1.5 s later still differs: %s" % "; ".join(late_bad))
        raise Fail("point %s: %s (%s); point was %s"
                   % (point, "; ".join(bad), note, json.dumps(p)))
    return st, p


def assert_point_meta(st, p, loader, app, group, name, symbol,
                      offsets=None, site=None):
    check(st.get("app") == app, "stats.app = %r, want %r" % (st.get("app"), app))
    check(st.get("group") == group,
          "stats.group = %r, want %r" % (st.get("group"), group))
    check(st.get("pid") == loader.pid,
          "stats.pid = %r, want the loader's pid %d" % (st.get("pid"), loader.pid))
    check(p.get("kind") == "function", "kind = %r" % p.get("kind"))
    check(p.get("symbol") == symbol,
          "symbol = %r, want %r" % (p.get("symbol"), symbol))
    check(p.get("site") in SITES, "site = %r" % p.get("site"))
    if site:
        check(p.get("site") == site,
              "site = %r, want %r" % (p.get("site"), site))
    off = p.get("offset")
    if isinstance(off, str):
        try:
            off = int(off, 0)
        except ValueError:
            raise Fail("offset = %r is not a number" % p.get("offset"))
    check(isinstance(off, int), "offset = %r" % p.get("offset"))
    if offsets is not None:
        check(off in offsets, "offset = %#x, want %s"
              % (off, " or ".join("%#x" % o for o in offsets)))
    # The attach banner: one line per point naming it, its symbol and site.
    lines = [l for l in loader.stdout().splitlines()
             if name in l.split() or (name + ":") in l or l.startswith(name)]
    check(lines, "attach printed no line for point %s: %r"
          % (name, loader.stdout()))
    check(any(symbol in l and p.get("site") in l for l in lines),
          "attach line for %s does not name symbol %s and site %s: %r"
          % (name, symbol, p.get("site"), lines))
    return off


def wait_point(ctx, app, name, pred, what, timeout=3.0):
    """Poll stats until @pred(point) holds; fail naming @what."""
    deadline = time.monotonic() + timeout
    while True:
        p = get_point(ctx.stats(app), name)
        if pred(p):
            return p
        if time.monotonic() > deadline:
            raise Fail("%s: not within %.0f s; point %s is %s"
                       % (what, timeout, name, json.dumps(p)))
        time.sleep(0.05)


# ---------------------------------------------------------------------------
# The suite

SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
TESTS = SUITE.tests
test = SUITE.test
