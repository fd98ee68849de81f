# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the guard suite shares (tests/guard/run.py): the constants, what a
point's counters must say (Exp), the loader and the per-test context,
the assertions and setup(), and the suite.

Each test module (tests/guard/t_*.py) registers its tests with @test;
run.py imports them in name order, which is the order they run in.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, Fail, SDS, check, get_point, log  # noqa: E402
from guarded import Target  # noqa: E402

_kill_group = sdstest.kill_group
TT = os.path.join(BUILD, "test", "targets")
LIBSDS_SO = os.path.join(BUILD, "lib", "libsds.so")
# What tests/targets/targets.mk builds the guarded programs from (GT_DEPS).
GT_DEPS = [os.path.join(sdstest.ROOT, "tests", "targets", f) for f in
           ("guarded.c", "guarded_harm.c", "guarded_copy.c", "guarded.h")] + \
          [os.path.join(BUILD, f) for f in
           ("include/sds.h", "lib/libsds.a", "lib/libsds.so",
            "lib/pkgconfig/sds.pc")]

STATIC, SHARED, SHARED2 = "guarded_static", "guarded_shared", "guarded_shared2"
PROGRAMS = (STATIC, SHARED, SHARED2)
GROUP = "default"
READY_TIMEOUT = 30.0          # seconds for a loader's socket to appear (a hang)
TEST_TIMEOUT = 120            # seconds for a whole test

TICK = 0.100                  # the loader's default tick
REACT_MAX = TICK + 0.300      # a window strategy trips within a tick + margin
RECOVER_MIN = 8.9             # a call stays in the 10-s window >= 9 s
RECOVER_MAX = 12.0            # ... and must have cleared by then
FAIL_OPEN_MAX = 3.0           # docs/DESIGN.md §2: downgrades lapse within 3 s
FIND_MAX = 2.5                # a loader that appears later is found (~1-2 s)

# Threads that contend for one guard: more than the CPUs.
CONTEND = min(16, 2 * (os.cpu_count() or 2))


# ---------------------------------------------------------------------------
# What a point's counters must say

class Exp:
    """The exact counts of one point, from what the programs reported."""

    def __init__(self):
        self.visits = self.exceptions = self.timeouts = 0
        self.downgrades = self.completed = 0

    def add(self, r, timeouts=False):
        """@r: a program's report (passed, downgraded, failed)."""
        p, d = r.get("passed", 0), r.get("downgraded", 0)
        self.visits += p + d
        self.downgrades += d
        self.exceptions += r.get("failed", 0)
        if timeouts:
            self.timeouts += p
        self.completed += p

    def __repr__(self):
        return ("visits %d exceptions %d timeouts %d downgrades %d "
                "completed %d" % (self.visits, self.exceptions,
                                  self.timeouts, self.downgrades,
                                  self.completed))


def mismatches(p, exp, window, inflight=0):
    bad = []
    want = {"visits": exp.visits, "exceptions": exp.exceptions,
            "timeouts": exp.timeouts, "downgrades": exp.downgrades}
    tot = p.get("total", {})
    for k, v in want.items():
        if tot.get(k) != v:
            bad.append("total.%s = %r, want %d" % (k, tot.get(k), v))
    cnt = p.get("latency_ns", {}).get("count")
    if cnt != exp.completed:
        bad.append("latency_ns.count = %r, want %d (the calls that passed "
                   "and completed)" % (cnt, exp.completed))
    if p.get("concurrency") != inflight:
        bad.append("concurrency = %r, want %d" % (p.get("concurrency"),
                                                  inflight))
    if p.get("kind") != "guard":
        bad.append("kind = %r, want 'guard'" % p.get("kind"))
    if window:
        win = p.get("window", {})
        for k, v in want.items():
            if win.get(k) != v:
                bad.append("window.%s = %r, want %d (every call was in the "
                           "last few seconds)" % (k, win.get(k), v))
    return bad


def state_of(p):
    s = p.get("state") or {}
    return bool(s.get("downgraded")), s.get("reason"), s.get("rate")


# ---------------------------------------------------------------------------
# Processes

class Loader(sdstest.AttachProcess):
    """A running `sds-bpf attach`."""

    READY_TIMEOUT = READY_TIMEOUT

    def __init__(self, ctx, args, app, group=GROUP, stale_inode=None):
        super().__init__(ctx, args, app, group, stale_inode=stale_inode)

    def signal(self, sig):
        if self.p.poll() is None:
            os.kill(self.p.pid, sig)

    def cleanup(self):
        self.end(cont=True)


class Ctx(sdstest.ProcDir):
    """One test's temp dir, environment, processes and strategies file."""

    def __init__(self, name):
        super().__init__(name, "sds-gt-")

    def copy(self, name, as_name=None):
        """A private copy of a guarded program (its own inode), staged
        with the libsds.so it needs, so nobody can run it wherever the
        checkout is (sdstest.stage)."""
        src = os.path.join(TT, name)
        check(os.path.exists(src), "%s missing: run make test-targets" % src)
        return sdstest.stage(src, self.tmp, as_name)

    def start(self, path, app=None, prefix=None):
        t = Target(self, path, prefix)
        if app:
            t.open(app)
        return t

    def attach(self, target, app, strategies=None, extra=None, **kw):
        args = ["--app", app]
        if strategies:
            args += ["--strategies", strategies]
        args += (extra or []) + [target]
        return Loader(self, args, app, **kw)

    # -- strategies -----------------------------------------------------

    def strategies_path(self, name="strategies.json"):
        return os.path.join(self.tmp, name)

    def write_strategies(self, doc, name="strategies.json"):
        """Write a new file and rename it into place (as the loader wants)."""
        path = self.strategies_path(name)
        tmp = path + ".new"
        with open(tmp, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        os.rename(tmp, path)
        return path

    def wait_version(self, app, version, timeout=3.0):
        deadline = time.monotonic() + timeout
        while True:
            st = self.stats(app)
            if st.get("strategies_version") == version:
                return st
            if time.monotonic() > deadline:
                raise Fail("strategies_version %r, want %d within %.0f s of "
                           "writing the file"
                           % (st.get("strategies_version"), version, timeout))
            time.sleep(0.05)

    # -- queries --------------------------------------------------------

    def sds(self, args, timeout=30):
        cmd = [SDS] + args
        log(" ".join(cmd))
        r = sdstest.run_group(cmd, self.env, self.tmp, self.others, timeout,
                              fail_on_timeout=False)
        self.others[:] = [p for p in self.others
                          if p.pid != r.pid or p.poll() is None]
        return r

    def stats(self, app):
        args = ["stats", "--app", app, "--json"]
        return sdstest.json_out(self.sds(args), "sds-bpf " + " ".join(args))

    def point(self, app, name):
        return get_point(self.stats(app), name)

    def events(self, app, count, timeout=5.0):
        """The first @count transitions of @app (blocks until there)."""
        args = ["events", "--app", app, "--json", "--count", str(count)]
        r = self.sds(args, timeout=timeout)
        evs = []
        for line in r.out.splitlines():
            if line.strip():
                try:
                    evs.append(json.loads(line))
                except ValueError:
                    raise Fail("events --json printed a line that is not "
                               "JSON: %r" % line)
        check(r.rc == 0 and len(evs) == count,
              "sds-bpf %s: want %d events within %.0f s, got %r (exit %s, "
              "stderr %r)" % (" ".join(args), count, timeout, evs, r.rc,
                              r.err))
        return evs

    def wait_state(self, app, name, want_down, timeout, what):
        """Poll stats until the point's state is @want_down; returns
        (seconds waited, point)."""
        t0 = time.monotonic()
        while True:
            p = self.point(app, name)
            if state_of(p)[0] == want_down:
                return time.monotonic() - t0, p
            if time.monotonic() - t0 > timeout:
                raise Fail("%s: not within %.1f s; point %s is %s"
                           % (what, timeout, name, json.dumps(p)))
            time.sleep(0.05)


def assert_totals(ctx, app, point, exp, window=True, inflight=0, what=""):
    """Exact counters of @point against @exp."""
    st = ctx.stats(app)
    p = get_point(st, point)
    bad = mismatches(p, exp, window, inflight)
    if bad:
        time.sleep(1.5)
        later = get_point(ctx.stats(app), point)
        late_bad = mismatches(later, exp, window, inflight)
        note = ("a query 1.5 s later matched, so stats lags behind the "
                "kernel" if not late_bad else
                "a query 1.5 s later still differs: %s" % "; ".join(late_bad))
        raise Fail("%spoint %s of app %s: %s (%s); the programs reported %r; "
                   "point was %s" % (what + ": " if what else "", point, app,
                                     "; ".join(bad), note, exp,
                                     json.dumps(p)))
    return st, p


def check_events(evs, want):
    """@want: [(point, reason, event)] in order."""
    got = [(e.get("point"), e.get("reason"), e.get("event")) for e in evs]
    check(got == want, "events %r, want %r (events: %s)"
          % (got, want, json.dumps(evs)))
    seqs = [e.get("seq") for e in evs]
    check(all(isinstance(s, int) for s in seqs) and seqs == sorted(seqs)
          and len(set(seqs)) == len(seqs), "event seqs %r" % seqs)
    for e in evs:
        check(isinstance(e.get("time_ms"), int) and
              abs(e["time_ms"] / 1000.0 - time.time()) < 120,
              "event time_ms %r is not a recent wall-clock time in ms"
              % e.get("time_ms"))


def setup(ctx, strategies, variant=STATIC, app="app"):
    """A loader with @strategies on a copy of @variant, and one program
    of app @app started after it."""
    path = ctx.copy(variant)
    spath = ctx.write_strategies(strategies)
    l = ctx.attach(path, app, spath)
    t = ctx.start(path, app)
    return l, t, path


# ---------------------------------------------------------------------------
# The harness

SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
TESTS = SUITE.tests
test = SUITE.test
