#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of enforcement (issue 3, "Tests"; DESIGN.md §2, §4-§6):
applications linked with libsds, guarded by a real `sds-bpf attach
--strategies FILE`, with real BPF programs and real processes, exact
numbers.

The guarded programs are built from tests/targets/guarded.c by
tests/targets/targets.mk (`make && make test-targets`):
guarded_static (libsds.a), guarded_shared and guarded_shared2 (libsds.so,
the one of build/lib).  They are driven on stdin and report which of their
guarded calls passed and which were downgraded, so every count the loader
shows is checked against what the program saw.

Run as root from anywhere:

    python3 tests/guard/run.py [-v] [NAME-SUBSTRING...]

Every test gets its own temp dir with private copies of the programs, its
own SDS_RUN_DIR and SDS_STATE_DIR, and kills every process group it
started when it ends, pass or fail.  Nothing is skipped: a test that
cannot run fails and says why.  Times get margins (the loader ticks every
100 ms); counts do not.  The last line is "N passed, M failed"; the exit
status is non-zero when anything failed.

Python 3 standard library only.
"""

import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import (BUILD, NOBODY, SDS, Fail, get_point,  # noqa: E402
                     check, inode_of, log)
from guarded import Target, kv  # noqa: E402

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
READY_TIMEOUT = 10.0          # seconds for a loader's socket to appear
TEST_TIMEOUT = 120            # seconds for a whole test

TICK = 0.100                  # the loader's default tick
REACT_MAX = TICK + 0.300      # a window strategy trips within a tick + margin
RECOVER_MIN = 8.9             # a call stays in the 10-s window >= 9 s
RECOVER_MAX = 12.0            # ... and must have cleared by then
FAIL_OPEN_MAX = 3.0           # DESIGN.md §2: downgrades lapse within 3 s
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
        r = self.sds(args)
        check(r.rc == 0, "sds-bpf %s: %r" % (" ".join(args), r))
        try:
            return json.loads(r.out)
        except ValueError as e:
            raise Fail("stats --json is not JSON (%s): %r" % (e, r.out))

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

SUITE = sdstest.Suite(timeout=TEST_TIMEOUT, log_total=True)
TESTS = SUITE.tests
test = SUITE.test


def preflight():
    err = sdstest.root_error()
    if err:
        return err
    if not os.path.exists(SDS):
        return "%s missing: run make" % SDS
    if not os.path.exists(LIBSDS_SO):
        return "%s missing: run make" % LIBSDS_SO
    for t in PROGRAMS:
        if not os.path.exists(os.path.join(TT, t)):
            return "%s missing: run make test-targets" % os.path.join(TT, t)
        # guarded_static embeds libsds.a: an old one would run old guards.
        err = sdstest.stale_error(os.path.join(TT, t), GT_DEPS)
        if err:
            return err
    for tool in ("setpriv",):
        if not shutil.which(tool):
            return "%s not found in PATH" % tool
    try:
        import pwd
        pwd.getpwuid(NOBODY)
    except KeyError:
        return "no user %d (nobody) on this host" % NOBODY
    return None


def main(argv):
    return SUITE.main(argv, Ctx, preflight)


# ---------------------------------------------------------------------------
# Points named in a strategy

@test
def strategy_points_in_stats_before_any_process(ctx):
    """Points named in a strategy have entries (and show in stats) before
    any process registers; the kill switch is in force at once."""
    path = ctx.copy(STATIC)
    spath = ctx.write_strategies(
        {"version": 4, "points": {"order": {"visit_threshold": 0},
                                  "pay": {"concurrent_threshold": 2},
                                  "ship": {"exception_threshold": 5}}})
    ctx.attach(path, "app", spath)
    st = ctx.stats("app")
    check(st.get("strategies_version") == 4,
          "strategies_version = %r, want 4" % st.get("strategies_version"))
    names = sorted(p.get("name") for p in st.get("points", []))
    check(names == ["order", "pay", "ship"],
          "points before any process registered: %r, want order, pay, ship"
          % names)
    for n in ("order", "pay", "ship"):
        p = get_point(st, n)
        bad = mismatches(p, Exp(), True)
        check(not bad, "%s before any call: %s" % (n, "; ".join(bad)))
    down, reason, _ = state_of(get_point(st, "order"))
    check(down and reason == "visit",
          "order (kill switch) before any call: state %r, want downgraded "
          "for 'visit'" % get_point(st, "order").get("state"))
    for n in ("pay", "ship"):
        check(not state_of(get_point(st, n))[0],
              "%s before any call: state %r, want not downgraded"
              % (n, get_point(st, n).get("state")))
    # The first process's calls land on those entries, exactly.
    t = ctx.start(path, "app")
    eo, ep, es = Exp(), Exp(), Exp()
    r = t.call("order", 1, eo)
    check(r["downgraded"] == 1, "the first call of order: %r, want it "
          "downgraded (kill switch)" % r)
    t.call("pay", 40, ep)
    t.call("ship", 3, es, err=3)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)
    assert_totals(ctx, "app", "ship", es)
    names2 = sorted(p.get("name") for p in ctx.stats("app")["points"])
    check(names2 == names, "points after registering: %r, want %r"
          % (names2, names))


# ---------------------------------------------------------------------------
# Window strategies: trip within a tick, right reason, exact counts,
# recovery when the 10-s window clears

def _window(ctx, variant, strategy, reason, pre, cross, err_after=0,
            timeouts=False):
    """@pre(t, exp) brings the point to its threshold without crossing it;
    @cross(t, exp) crosses it with its last call.  Then calls every 100 us
    until the first downgraded one: within REACT_MAX."""
    P = "dep"
    l, t, _ = setup(ctx, {"version": 1, "points": {P: strategy}}, variant)
    exp = Exp()
    t_pre = time.monotonic()
    pre(t, exp)
    check(exp.downgrades == 0, "calls were downgraded before the "
          "threshold was crossed: %r" % exp)
    # At the threshold but not past it: nothing trips over a few ticks.
    time.sleep(3 * TICK)
    p = ctx.point("app", P)
    check(not state_of(p)[0], "at the threshold but not past it, the point "
          "is downgraded: %s (counts %r)" % (json.dumps(p), exp))
    cross(t, exp)
    check(exp.downgrades == 0, "calls were downgraded before the call that "
          "crossed the threshold: %r" % exp)
    t_cross = time.monotonic()
    r = t.first_down(P, exp, every_us=100, max_ms=3000, err=err_after)
    check(r["elapsed_ns"] >= 0, "no call downgraded within 3 s of crossing "
          "the threshold (%d calls passed); point %s"
          % (r["passed"], json.dumps(ctx.point("app", P))))
    react = r["elapsed_ns"] / 1e9
    log("reaction %.1f ms, %d calls passed meanwhile" % (react * 1e3,
                                                         r["passed"]))
    check(react <= REACT_MAX, "first downgraded call %.0f ms after the "
          "threshold was crossed, want within %.0f ms (one tick + margin)"
          % (react * 1e3, REACT_MAX * 1e3))
    # Exact trips: the guards refuse the call after the crossing one at
    # once, and the loader shows the trip at its next tick: wait for it.
    ctx.wait_state("app", P, True, 2 * TICK + 1.0,
                   "the loader's state after the first downgraded call")
    _, p = assert_totals(ctx, "app", P, exp)
    down, why, rate = state_of(p)
    check(down and why == reason and rate == 100,
          "state %r, want downgraded for %r at rate 100" % (p.get("state"),
                                                            reason))
    check_events(ctx.events("app", 1), [(P, reason, "started")])
    # Still downgraded a few seconds on (the window still holds it).
    time.sleep(2.0)
    r = t.call(P, 10, exp)
    check(r["downgraded"] == 10, "2 s after the trip: %r, want all 10 "
          "calls downgraded" % r)
    # Recovery when the 10-s window has cleared.
    waited, p = ctx.wait_state("app", P, False,
                               RECOVER_MAX - (time.monotonic() - t_cross),
                               "recovery once the 10-s window cleared")
    since = time.monotonic() - t_cross
    since_pre = time.monotonic() - t_pre
    log("recovered %.1f s after the threshold was crossed, %.1f s after "
        "the first call that counts toward it" % (since, since_pre))
    # A call counts in the window of its 1-s slot and the 9 after it: at
    # least 9 s.
    check(since_pre >= RECOVER_MIN, "recovered %.1f s after the first call "
          "that counts toward the threshold: the 10-s window cannot have "
          "cleared yet" % since_pre)
    r = t.call(P, 100, exp)
    check(r["passed"] == 100, "after recovery: %r, want all 100 calls "
          "passed" % r)
    assert_totals(ctx, "app", P, exp, window=False)
    check_events(ctx.events("app", 2),
                 [(P, reason, "started"), (P, reason, "ended")])
    check(t.alive(), "the program died")


def _visit_pre(t, exp):
    r = t.call("dep", 5000, exp)
    check(r["passed"] == 5000, "%r" % r)


def _visit_cross(t, exp):
    pass        # first_down's first call is the 5001st: it crosses


@test
def window_visit_threshold(ctx):
    _window(ctx, STATIC, {"visit_threshold": 5000}, "visit",
            _visit_pre, _visit_cross)


@test
def window_visit_threshold_shared(ctx):
    _window(ctx, SHARED, {"visit_threshold": 5000}, "visit",
            _visit_pre, _visit_cross)


def _timeout_pre(t, exp):
    t.call("dep", 20, exp)                       # fast: no timeouts
    t.call("dep", 2, exp, timeouts=True, sleep_ms=35)


def _timeout_cross(t, exp):
    t.call("dep", 1, exp, timeouts=True, sleep_ms=35)


@test
def window_timeout(ctx):
    _window(ctx, STATIC, {"timeout_ms": 20, "timeout_count_threshold": 3},
            "timeout", _timeout_pre, _timeout_cross)


def _exc_pre(t, exp):
    t.call("dep", 100, exp, err=4)


def _exc_cross(t, exp):
    t.call("dep", 1, exp, err=1)


@test
def window_exception(ctx):
    _window(ctx, STATIC, {"exception_threshold": 5}, "exception",
            _exc_pre, _exc_cross, err_after=1)


def _rate_pre(t, exp):
    # 20 good calls (visits not above the start), then 19 failures:
    # 19 * 100 / 39 = 48 < 50.
    t.call("dep", 20, exp)
    t.call("dep", 19, exp, err=19)


def _rate_cross(t, exp):
    t.call("dep", 1, exp, err=1)                 # 20 * 100 / 40 = 50


@test
def window_exception_rate(ctx):
    _window(ctx, STATIC, {"exception_rate_threshold": 50,
                          "exception_rate_start": 20},
            "exception_rate", _rate_pre, _rate_cross, err_after=1)


@test
def exception_rate_needs_start(ctx):
    """Not above exception_rate_start visits, even 100% failures do not
    trip; one more visit does."""
    P = "dep"
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"exception_rate_threshold": 50, "exception_rate_start": 30}}})
    exp = Exp()
    r = t.call(P, 30, exp, err=30)
    check(r["passed"] == 30, "%r" % r)
    time.sleep(3 * TICK)
    p = ctx.point("app", P)
    check(not state_of(p)[0], "30 visits (not above exception_rate_start "
          "30), all failed: downgraded already: %s" % json.dumps(p))
    r = t.first_down(P, exp, every_us=100, max_ms=3000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "the 31st visit (all failed) did not trip within %.0f ms: %r"
          % (REACT_MAX * 1e3, r))
    _, p = assert_totals(ctx, "app", P, exp)
    check(state_of(p)[:2] == (True, "exception_rate"), "state %r"
          % p.get("state"))


# ---------------------------------------------------------------------------
# The kill switch, hot reload, downgrade_rate

def _kill_switch(ctx, variant):
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0, "timeout_ms": 10}}}, variant)
    eo, eq = Exp(), Exp()
    r = t.call("order", 1, eo)
    check(r == {"passed": 0, "downgraded": 1, "failed": 0},
          "the very first call under the kill switch: %r, want downgraded" % r)
    r = t.call("order", 999, eo, err=999)
    check(r["downgraded"] == 999, "kill switch: %r" % r)
    # A downgraded call counts a visit and a downgrade, nothing else: not
    # an exception signed inside it, not its 15 ms (timeout_ms 10), not
    # in-flight.
    r = t.call("order", 20, eo, err=20, sleep_ms=15, all=True)
    check(r["downgraded"] == 20, "kill switch: %r" % r)
    check(t.hold("order", 3, eo) == 3, "kill switch, hold: not all refused")
    t.release(0, eo)
    st, p = assert_totals(ctx, "app", "order", eo,
                          what="downgraded calls that signed an exception "
                          "and slept past timeout_ms")
    check(state_of(p) == (True, "visit", 100), "state %r" % p.get("state"))
    # Another point, passing; then a new version: its kill switch is in
    # force from the moment the version shows, and order (no longer
    # named) passes again.
    r = t.call("other", 50, eq, err=5)
    check(r["passed"] == 50, "other, no strategy: %r" % r)
    ctx.write_strategies({"version": 2, "points": {
        "other": {"visit_threshold": 0}}})
    ctx.wait_version("app", 2)
    r = t.call("other", 1, eq)
    check(r["downgraded"] == 1, "the first call of other once version 2 "
          "(its kill switch) shows in stats: %r, want downgraded" % r)
    r = t.call("order", 20, eo)
    check(r["passed"] == 20, "order once version 2 (no strategy for it) "
          "shows in stats: %r, want all passed" % r)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "other", eq)
    check_events(ctx.events("app", 3), [("order", "visit", "started"),
                                        ("order", "visit", "ended"),
                                        ("other", "visit", "started")])


@test
def kill_switch_static(ctx):
    _kill_switch(ctx, STATIC)


@test
def kill_switch_shared(ctx):
    _kill_switch(ctx, SHARED)


@test
def downgrade_rate_50(ctx):
    n = 10000
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0, "downgrade_rate": 50}}})
    exp = Exp()
    r = t.call("order", n, exp)
    sigma = math.sqrt(n * 0.5 * 0.5)
    check(abs(r["downgraded"] - n / 2) <= 4 * sigma,
          "downgrade_rate 50 over %d calls: %d downgraded, want %d +- %d "
          "(4 sigma)" % (n, r["downgraded"], n // 2, 4 * sigma))
    _, p = assert_totals(ctx, "app", "order", exp)
    check(state_of(p) == (True, "visit", 50), "state %r, want downgraded "
          "for 'visit' at rate 50" % p.get("state"))


@test
def downgrade_rate_keeps_exact_limits(ctx):
    """downgrade_rate does not loosen the concurrency limit: of 20 threads
    about half get past the rate, and of those exactly 2 hold."""
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0, "downgrade_rate": 50,
                  "concurrent_threshold": 2}}})
    exp = Exp()
    refused = t.hold("order", 20, exp)
    # P(fewer than 2 of 20 get past a 50% rate) = 21 / 2^20.
    check(refused == 18, "kill switch at downgrade_rate 50 with "
          "concurrent_threshold 2, 20 threads holding: %d refused, want 18"
          % refused)
    assert_totals(ctx, "app", "order", exp, inflight=2, what="while held")
    t.release(2, exp)
    assert_totals(ctx, "app", "order", exp)


# ---------------------------------------------------------------------------
# Concurrency: exact, per app on the host, permits of the dead given back

@test
def concurrency_exact(ctx):
    K, M = 4, 3
    l, t, tpath = setup(ctx, {"version": 1, "points": {
        "dep": {"concurrent_threshold": K}}})
    exp = Exp()
    refused = t.hold("dep", K + M, exp)
    check(refused == M, "limit %d, %d threads holding the guard: %d refused, "
          "want exactly %d" % (K, K + M, refused, M))
    assert_totals(ctx, "app", "dep", exp, inflight=K, what="while held")
    _, p = ctx.wait_state("app", "dep", True, 1.0,
                          "state downgraded while the semaphore refuses")
    check(state_of(p)[1] == "concurrent", "state %r, want reason "
          "'concurrent'" % p.get("state"))
    t.release(K, exp)
    # The permits came back: K fit again, and not one more.
    refused = t.hold("dep", K + 1, exp)
    check(refused == 1, "after release, %d threads: %d refused, want 1"
          % (K + 1, refused))
    # A new version does not forget the permits held.  (Another process
    # of TARGET: only those may register, docs/TRUST.md.)
    u = ctx.start(tpath, "app")
    ctx.write_strategies({"version": 2, "points": {
        "dep": {"concurrent_threshold": K, "exception_threshold": 1000000}}})
    ctx.wait_version("app", 2)
    refused = u.hold("dep", 1, exp)
    check(refused == 1, "%d permits held, a new version (the point's strategy "
          "changed, the limit %d did not): another call gets in (the held "
          "permits were forgotten)" % (K, K))
    u.release(0, exp)
    ctx.write_strategies({"version": 3, "points": {
        "dep": {"concurrent_threshold": K + 2}}})
    ctx.wait_version("app", 3)
    refused = u.hold("dep", 3, exp)
    check(refused == 1, "%d permits held, limit raised to %d: 3 more "
          "calls, %d refused, want 1" % (K, K + 2, refused))
    u.release(2, exp)
    t.release(K, exp)
    assert_totals(ctx, "app", "dep", exp)
    check_events(ctx.events("app", 1), [("dep", "concurrent", "started")])


@test
def concurrency_across_processes_and_sigkill(ctx):
    K = 4
    l, a, path = setup(ctx, {"version": 1, "points": {
        "dep": {"concurrent_threshold": K}}})
    b = ctx.start(path, "app")
    exp = Exp()
    ra = a.hold("dep", 3, exp)
    rb = b.hold("dep", 4, exp)
    check((ra, rb) == (0, 3), "limit %d, 3 threads of process A then 4 of "
          "process B (same app) holding: refused %d and %d, want 0 and 3"
          % (K, ra, rb))
    assert_totals(ctx, "app", "dep", exp, inflight=K, what="while held")
    b.release(1, exp)
    a.release(3, exp)
    # A takes all K and is killed holding them.
    check(a.hold("dep", K, exp) == 0, "process A alone, %d threads: refused"
          % K)
    a.kill(signal.SIGKILL)      # its K calls never complete
    t0 = time.monotonic()
    c = ctx.start(path, "app")
    # A new process can take all K (the loader gave A's back).  Allow the
    # loader a moment to see A's connection close.
    while True:
        refused = c.hold("dep", K, exp)
        c.release(K - refused, exp)
        if refused == 0:
            break
        if time.monotonic() - t0 > 2.0:
            raise Fail("process A was SIGKILLed holding %d permits: 2 s "
                       "later a new process still gets %d of %d refused"
                       % (K, refused, K))
        time.sleep(0.1)
    log("A's permits back after %.2f s" % (time.monotonic() - t0))
    refused = c.hold("dep", K + 1, exp)
    check(refused == 1, "after A died: %d threads, %d refused, want 1"
          % (K + 1, refused))
    c.release(K, exp)
    refused = b.hold("dep", 2, exp)
    check(refused == 0, "process B after C released: %d refused" % refused)
    b.release(2, exp)
    # A's K calls were entered and never completed; the in-flight gauge
    # must not keep them.
    deadline = time.monotonic() + 3.0
    while True:
        p = ctx.point("app", "dep")
        if p.get("concurrency") == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert_totals(ctx, "app", "dep", exp)


@test
def concurrency_across_processes_shared(ctx):
    K = 4
    l, a, path = setup(ctx, {"version": 1, "points": {
        "dep": {"concurrent_threshold": K}}}, SHARED)
    b = ctx.start(path, "app")
    exp = Exp()
    ra = a.hold("dep", 2, exp)
    rb = b.hold("dep", 5, exp)
    check((ra, rb) == (0, 3), "libsds.so, limit %d, 2 threads of process A "
          "then 5 of B holding: refused %d and %d, want 0 and 3"
          % (K, ra, rb))
    a.kill(signal.SIGKILL)
    t0 = time.monotonic()
    c = ctx.start(path, "app")
    while True:
        refused = c.hold("dep", 2, exp)
        if refused == 0:
            break
        c.release(2 - refused, exp)
        if time.monotonic() - t0 > 2.0:
            raise Fail("libsds.so: process A was SIGKILLed holding 2 "
                       "permits: 2 s later a new process gets %d of 2 "
                       "refused" % refused)
        time.sleep(0.1)
    # B holds 2, C holds 2: full.
    assert_totals(ctx, "app", "dep", exp, inflight=K, what="B and C holding")
    c.release(2, exp)
    b.release(2, exp)
    assert_totals(ctx, "app", "dep", exp)


# ---------------------------------------------------------------------------
# Token bucket

def _token_run(t, exp, R, B, T, threads):
    """Back-to-back calls for T s on a full bucket: passed = R * T + B
    within one token.  A real bucket holds at most B tokens: it is full
    again after B / R s without calls, and the count is only exact if the
    program never stopped calling for longer than that.  On a busy host
    all its threads may be descheduled that long: then the run is
    repeated, at most 3 times."""
    burst = B / R
    for attempt in range(3):
        time.sleep(max(0.2, 2 * burst))          # a full bucket
        r = t.rate("dep", T, exp, threads=threads)
        el = r["elapsed_ns"] / 1e9
        want = R * el + B
        log("token, %d thread(s): %r, want %.1f" % (threads, r, want))
        if r["gap_ns"] / 1e9 < burst - 0.005:
            check(abs(r["passed"] - want) <= 1,
                  "token_rate %d, token_bucket %d, %d thread(s) calling back "
                  "to back for %.3f s (never all idle for more than %.1f "
                  "ms): %d passed, want %.1f +- 1 (%d downgraded)"
                  % (R, B, threads, el, r["gap_ns"] / 1e6, r["passed"],
                     want, r["downgraded"]))
            check(r["downgraded"] > 0, "nothing refused: %r" % r)
            return
    raise Fail("3 runs of %d thread(s) calling back to back were all idle "
               "at once for longer than the bucket lasts (%.0f ms): the host "
               "is too busy to check the token bucket" % (threads,
                                                           burst * 1e3))


@test
def token_bucket_exact(ctx):
    R, B, T = 1000, 50, 2.0
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "dep": {"token_rate": R, "token_bucket": B}}})
    exp = Exp()
    _token_run(t, exp, R, B, T, 1)
    _, p = assert_totals(ctx, "app", "dep", exp)
    check(state_of(p)[:2] == (True, "token"), "state right after the "
          "bucket refused: %r, want downgraded for 'token'" % p.get("state"))
    check_events(ctx.events("app", 1), [("dep", "token", "started")])


@test
def token_bucket_exact_contended(ctx):
    """More threads than CPUs contend for one bucket: they are preempted
    between reading the clock and taking a token, and the count must stay
    exact."""
    R, B, T = 1000, 50, 2.0
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "dep": {"token_rate": R, "token_bucket": B}}})
    exp = Exp()
    _token_run(t, exp, R, B, T, CONTEND)
    assert_totals(ctx, "app", "dep", exp)


# ---------------------------------------------------------------------------
# Hold and probes

@test
def hold_probes(ctx):
    """exception_threshold 1, delay_ms 30000, retry_interval_ms 1000:
    during the hold exactly one call per interval passes (a probe); failed
    probes keep the hold; a successful one ends it long before delay_ms."""
    P, IV, DELAY = "dep", 1.0, 30.0
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"exception_threshold": 1, "delay_ms": int(DELAY * 1000),
            "retry_interval_ms": int(IV * 1000)}}})
    exp = Exp()
    t.call(P, 1, exp, err=1)
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "did not trip within %.0f ms: %r" % (REACT_MAX * 1e3, r))
    t_trip = time.monotonic()
    # 3.5 intervals of calls every ms, every call that passes failing:
    # probes near 1, 2 and 3 intervals (a failed probe restarts the hold
    # at the loader's next tick, so each later one may come up to a tick
    # late), never two within an interval.
    dur = 3.5 * IV
    r = t.call(P, int(dur * 1000), exp, err=1000000, every_us=1000,
               times=True)
    times = [x / 1e9 for x in r["times"]]
    log("probes at %s s" % ["%.3f" % x for x in times])
    check(r["passed"] == 3, "hold with retry_interval_ms %d: %d calls "
          "passed in %.1f s of calls every ms (at %s s), want exactly 3, "
          "one per interval" % (IV * 1000, r["passed"], dur,
                                ["%.3f" % x for x in times]))
    check(r["failed"] == 3, "%r" % r)
    # The guard refuses the call after the exception at once (exact
    # trips, PROTOCOL.md); the hold, and so its first probe's interval,
    # starts at the loader's next tick, up to a tick later.
    check(IV - 0.05 <= times[0] <= IV + TICK + 0.05,
          "first probe %.3f s after the trip, want one interval (%.1f s), "
          "at most a tick more" % (times[0], IV))
    gaps = [b - a for a, b in zip(times, times[1:])]
    check(all(IV - 0.002 <= g <= IV + TICK + 0.05 for g in gaps),
          "gaps between probes %s s, want one interval (%.1f s), at most a "
          "tick more" % (["%.3f" % g for g in gaps], IV))
    # Failed probes kept the hold.
    p = ctx.point("app", P)
    check(state_of(p)[:2] == (True, "exception"), "after 3 failed probes: "
          "state %r, want still downgraded for 'exception'" % p.get("state"))
    # A probe that succeeds ends the hold at once.
    r = t.first_pass(P, exp, every_us=1000, max_ms=int((IV + 1) * 1000))
    check(r["elapsed_ns"] >= 0, "no probe within %.1f s: %r" % (IV + 1, r))
    waited, p = ctx.wait_state("app", P, False, 1.0,
                               "hold ended by a successful probe")
    log("hold ended %.2f s after the successful probe, %.1f s after the "
        "trip (delay_ms %d)" % (waited, time.monotonic() - t_trip,
                                DELAY * 1000))
    check(time.monotonic() - t_trip < DELAY / 3,
          "the hold ended %.1f s after the trip: not long before delay_ms "
          "(%.0f s)" % (time.monotonic() - t_trip, DELAY))
    # The window starts afresh: the old exceptions do not trip it again.
    r = t.call(P, 200, exp)
    check(r["passed"] == 200, "after the hold ended: %r, want all passed" % r)
    time.sleep(3 * TICK)
    r = t.call(P, 10, exp)
    check(r["passed"] == 10, "3 ticks after the hold ended: %r, want all "
          "passed (the window was not started afresh?)" % r)
    assert_totals(ctx, "app", P, exp, window=False)
    check_events(ctx.events("app", 2), [(P, "exception", "started"),
                                        (P, "exception", "ended")])


@test
def hold_lasts_delay_ms(ctx):
    """Without retry_interval_ms a trip holds for delay_ms even once the
    window no longer trips (no probe passes meanwhile), and a new version
    that changes only another point keeps the hold."""
    P, DELAY = "dep", 11.0
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"exception_threshold": 1, "delay_ms": int(DELAY * 1000)}}})
    exp = Exp()
    t.call(P, 1, exp, err=1)
    t_err = time.monotonic()
    r = t.first_down(P, exp, every_us=100, max_ms=2000)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "did not trip within %.0f ms: %r" % (REACT_MAX * 1e3, r))
    t_trip = time.monotonic() - 0.001
    r = t.call(P, 200, exp, every_us=5000)
    check(r["passed"] == 0, "hold without retry_interval_ms: %r, want "
          "nothing passed" % r)
    ctx.write_strategies({"version": 2, "points": {
        P: {"exception_threshold": 1, "delay_ms": int(DELAY * 1000)},
        "other": {"visit_threshold": 1000}}})
    ctx.wait_version("app", 2)
    p = ctx.point("app", P)
    check(state_of(p)[:2] == (True, "exception"), "a new version changing "
          "only another point ended the hold: %r" % p.get("state"))
    # The window clears ~10 s after the exception; the hold goes on.
    time.sleep(max(0.0, t_err + 10.4 - time.monotonic()))
    p = ctx.point("app", P)
    check(p["window"]["exceptions"] == 0, "window %r: the exception should "
          "have left the 10-s window" % p.get("window"))
    check(state_of(p)[:2] == (True, "exception"), "%.1f s after the trip "
          "(delay_ms %d, the window cleared): state %r, want still "
          "downgraded" % (time.monotonic() - t_trip, DELAY * 1000,
                          p.get("state")))
    waited, p = ctx.wait_state("app", P, False,
                               t_trip + DELAY + 0.5 - time.monotonic(),
                               "end of the hold after delay_ms")
    since = time.monotonic() - t_trip
    log("hold ended %.2f s after the trip (delay_ms %d)" % (since,
                                                           DELAY * 1000))
    check(since >= DELAY - 0.05, "the hold ended %.2f s after the trip, "
          "before delay_ms (%.0f s)" % (since, DELAY))
    r = t.call(P, 100, exp)
    check(r["passed"] == 100, "after the hold: %r" % r)
    assert_totals(ctx, "app", P, exp, window=False)


# ---------------------------------------------------------------------------
# Half-open with N probes, the slow-call ratio (issue 14)

def _passed_total(ctx, app, point):
    """The kernel's count of calls that passed: visits - downgrades."""
    tot = ctx.point(app, point)["total"]
    return tot["visits"] - tot["downgrades"]


def _phase(ctx, t, P, exp, err, what, sleep_ms=0):
    """1.5 s of calls every ms over one half-open phase; the probes
    (the first passed calls) must be exactly 5, all within 50 ms of each
    other (one phase: its start, then one claim each); returns the call's
    report and the passed calls' times (time.monotonic(), give or take
    the start of the command)."""
    opts = {"sleep_ms": sleep_ms} if sleep_ms else {}
    t0 = time.monotonic()
    r = t.call(P, 1500, exp, err=err, every_us=1000, times=True,
               timeouts=bool(sleep_ms), **opts)
    times = [x / 1e9 for x in r["times"]]
    log("%s: %d passed, at %s s" % (what, r["passed"],
                                    ["%.3f" % x for x in times[:8]]))
    check(r["passed"] >= 5, "%s: %d calls passed in 1.5 s of calls every "
          "ms, want the 5 probes of the phase: %r" % (what, r["passed"], r))
    # One thread: each probe's sleep delays the next call.
    check(times[4] - times[0] < 0.050 + 5 * sleep_ms / 1e3,
          "%s: the 5 probes came at %s s, "
          "want them together at the phase's start" % (what, times[:5]))
    return r, [t0 + x for x in times]


@test
def half_open_n_probes(ctx):
    """probe_calls 5, probe_failure_pct 20: during the hold exactly 5 calls
    pass in each half-open phase (the program's log and the kernel's
    counts); 2 of 5 failing starts a new hold, whose phase opens one
    interval later; 1 of 5 failing ends the hold."""
    P, IV = "dep", 1.0
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"exception_threshold": 1, "delay_ms": 30000,
            "retry_interval_ms": int(IV * 1000), "probe_calls": 5,
            "probe_failure_pct": 20}}})
    exp = Exp()
    t.call(P, 1, exp, err=1)
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "did not trip within %.0f ms: %r" % (REACT_MAX * 1e3, r))
    t_trip = time.monotonic()
    base = _passed_total(ctx, "app", P)
    # Phase 1: 2 of the 5 probes fail (40 % > 20 %): a new hold.
    r, times = _phase(ctx, t, P, exp, 2, "phase 1")
    check(r["passed"] == 5 and r["failed"] == 2, "phase 1: %r, want "
          "exactly 5 passed (the probes), 2 of them failed" % r)
    check(IV - 0.1 <= times[0] - t_trip <= IV + 0.4,
          "phase 1 opened %.3f s after the trip, want one interval "
          "(%.1f s)" % (times[0] - t_trip, IV))
    time.sleep(3 * TICK)
    got = _passed_total(ctx, "app", P) - base
    check(got == 5, "phase 1: the kernel counted %d calls passed, want 5"
          % got)
    p = ctx.point("app", P)
    check(state_of(p)[:2] == (True, "exception"), "2 of 5 probes failed "
          "with probe_failure_pct 20: state %r, want still downgraded"
          % p.get("state"))
    # Phase 2 (one interval after the new hold): 1 of 5 fails (20 %):
    # the hold ends, one tick or two after the 5th probe.
    base = _passed_total(ctx, "app", P)
    r, times = _phase(ctx, t, P, exp, 1, "phase 2")
    check(r["failed"] == 1, "phase 2: %r, want 1 failed" % r)
    # The verdict waits for the tick after the one that saw the 5th
    # result: a pause (a tick, less when a late tick is caught up) before
    # every call passes again, never the next call 1 ms on.
    check(r["passed"] > 5 and times[5] - times[4] >= 0.005,
          "phase 2: passed calls at %s s: want the 5 probes, then (the "
          "hold over, a tick or so later) every call" % times[:8])
    waited, p = ctx.wait_state("app", P, False, 1.0,
                               "hold ended by 1 of 5 probes failing")
    got = _passed_total(ctx, "app", P) - base
    check(got == r["passed"], "phase 2: the kernel counted %d calls "
          "passed, the program %d" % (got, r["passed"]))
    r = t.call(P, 100, exp)
    check(r["passed"] == 100, "after the hold: %r" % r)
    assert_totals(ctx, "app", P, exp, window=False)
    check_events(ctx.events("app", 2), [(P, "exception", "started"),
                                        (P, "exception", "ended")])


@test
def half_open_two_processes(ctx):
    """libsds.so, two processes of the app calling every ms at once
    through a phase of 5 probes that all fail: exactly 5 calls pass
    between them (their logs and the kernel's counts), and the hold
    goes on."""
    P = "dep"
    l, a, path = setup(ctx, {"version": 1, "points": {
        P: {"exception_threshold": 1, "delay_ms": 30000,
            "retry_interval_ms": 1000, "probe_calls": 5,
            "probe_failure_pct": 20}}}, SHARED)
    b = ctx.start(path, "app")
    exp = Exp()
    a.call(P, 1, exp, err=1)
    r = a.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0, "did not trip: %r" % r)
    base = _passed_total(ctx, "app", P)
    res = {}

    def run(name, t):
        res[name] = t.call(P, 1500, None, err=1000000, every_us=1000)

    th = [threading.Thread(target=run, args=(n, t)) for n, t in
          (("a", a), ("b", b))]
    for x in th:
        x.start()
    for x in th:
        x.join(60)
    check(set(res) == {"a", "b"}, "a process did not report: %r" % res)
    for r in res.values():
        exp.add(r)
    passed = res["a"]["passed"] + res["b"]["passed"]
    log("phase over two processes: a passed %d, b passed %d"
        % (res["a"]["passed"], res["b"]["passed"]))
    check(passed == 5, "two processes through one phase of 5 probes: "
          "%d calls passed (%r), want exactly 5" % (passed, res))
    time.sleep(3 * TICK)
    got = _passed_total(ctx, "app", P) - base
    check(got == 5, "the kernel counted %d calls passed, want 5" % got)
    p = ctx.point("app", P)
    check(state_of(p)[:2] == (True, "exception"), "5 of 5 probes failed: "
          "state %r, want still downgraded" % p.get("state"))
    assert_totals(ctx, "app", P, exp, window=False)


@test
def half_open_slow_probes(ctx):
    """Probes slower than timeout_ms count as failed: 5 probes that all
    succeed but are slow start a new hold; 5 fast ones end it."""
    P = "dep"
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"exception_threshold": 1, "delay_ms": 30000,
            "retry_interval_ms": 1000, "probe_calls": 5,
            "probe_failure_pct": 20, "timeout_ms": 20}}})
    exp = Exp()
    t.call(P, 1, exp, err=1)
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0, "did not trip: %r" % r)
    # Each probe sleeps 30 ms (> timeout_ms 20): 1.5 s of calls plus 5
    # sleeps still covers only the first phase.
    r, _ = _phase(ctx, t, P, exp, 0, "slow phase", sleep_ms=30)
    check(r["passed"] == 5 and r["failed"] == 0, "slow phase: %r" % r)
    time.sleep(3 * TICK)
    p = ctx.point("app", P)
    check(state_of(p)[:2] == (True, "exception"), "5 slow probes: state %r, "
          "want still downgraded" % p.get("state"))
    check(p["total"]["timeouts"] == 5, "timeouts %r, want the 5 probes"
          % p["total"]["timeouts"])
    r, times = _phase(ctx, t, P, exp, 0, "fast phase")
    ctx.wait_state("app", P, False, 1.0, "hold ended by 5 fast probes")
    assert_totals(ctx, "app", P, exp, window=False)


@test
def slow_rate(ctx):
    """slow_rate_threshold 40 with timeout_ms 20: 12 slow of 30 calls
    (40 %) above slow_rate_start 20 trips with reason slow_rate; the same
    calls on a point whose start is 50 do not."""
    P, Q = "dep", "quiet"
    l, t, _ = setup(ctx, {"version": 1, "points": {
        P: {"timeout_ms": 20, "slow_rate_threshold": 40,
            "slow_rate_start": 20},
        Q: {"timeout_ms": 20, "slow_rate_threshold": 40,
            "slow_rate_start": 50}}})
    exp = {P: Exp(), Q: Exp()}
    for x in (P, Q):
        r = t.call(x, 18, exp[x])
        check(r["passed"] == 18, "%s, fast calls: %r" % (x, r))
    # Q first: P must not trip before Q has all its calls.
    for x in (Q, P):
        r = t.call(x, 12, sleep_ms=30)
        check(r["passed"] == 12, "%s, slow calls: %r" % (x, r))
        exp[x].add(r, timeouts=True)
    waited, p = ctx.wait_state("app", P, True, REACT_MAX + 0.5,
                               "40 % slow over 30 calls trips")
    check(state_of(p)[1] == "slow_rate", "state %r, want reason slow_rate"
          % p.get("state"))
    check(p["window"]["timeouts"] == 12 and p["window"]["visits"] == 30,
          "window %r" % p["window"])
    time.sleep(5 * TICK)
    q = ctx.point("app", Q)
    check(not state_of(q)[0], "30 calls, 40 %% slow, below slow_rate_start "
          "50: state %r, want not downgraded" % q.get("state"))
    for x in (P, Q):
        assert_totals(ctx, "app", x, exp[x])
    check_events(ctx.events("app", 1), [(P, "slow_rate", "started")])


# ---------------------------------------------------------------------------
# Fail-open

def _fail_open_killed(ctx, variant):
    l, t, path = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}}}, variant)
    exp = Exp()
    r = t.call("order", 10, exp)
    check(r["downgraded"] == 10, "kill switch: %r" % r)
    assert_totals(ctx, "app", "order", exp)
    stale = inode_of(l.sock)
    os.kill(l.pid, signal.SIGKILL)
    l.p.wait(5)
    r = t.first_pass("order", None, every_us=1000, max_ms=6000)
    check(r["elapsed_ns"] >= 0, "the loader was killed (SIGKILL) while "
          "order was downgraded: 6 s later its calls are still downgraded")
    log("fail-open after %.0f ms" % (r["elapsed_ns"] / 1e6))
    check(r["elapsed_ns"] / 1e9 <= FAIL_OPEN_MAX,
          "calls passed again %.2f s after the loader was killed, want "
          "within %.0f s" % (r["elapsed_ns"] / 1e9, FAIL_OPEN_MAX))
    r = t.call("order", 5000, None, err=10)
    check(r["passed"] == 5000, "after the loader died: %r" % r)
    check(t.alive(), "the program died with its loader")
    t.cmd("pid")
    # A new loader (the stale socket is taken over) is found and obeyed.
    spath = ctx.write_strategies({"version": 2, "points": {
        "order": {"visit_threshold": 0}}})
    ctx.attach(path, "app", spath, stale_inode=stale)
    exp2 = Exp()
    r = t.first_down("order", exp2, every_us=1000, max_ms=5000)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= FIND_MAX,
          "a new loader after the old one was killed: first downgraded "
          "call %r, want within %.1f s" % (r, FIND_MAX))
    exp2 = Exp()
    exp2.add({"downgraded": 1})
    r = t.call("order", 100, exp2)
    check(r["downgraded"] == 100, "%r" % r)
    # The new loader adopted the killed one's pins (crash-only, issue
    # 11): its counts go on from those counted before the kill; calls
    # while no loader ran passed unbound (fail open) and count nowhere.
    for f in ("visits", "exceptions", "timeouts", "downgrades", "completed"):
        setattr(exp2, f, getattr(exp2, f) + getattr(exp, f))
    assert_totals(ctx, "app", "order", exp2,
                  what="the new loader (the killed one's counts adopted; "
                  "calls while no loader ran are nobody's)")


@test
def fail_open_loader_killed_static(ctx):
    _fail_open_killed(ctx, STATIC)


@test
def fail_open_loader_killed_shared(ctx):
    _fail_open_killed(ctx, SHARED)


@test
def fail_open_loader_exits(ctx):
    """A loader that exits (SIGTERM) while a point is downgraded: the
    guard passes at once, and the program keeps running."""
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    r = t.call("order", 10)
    check(r["downgraded"] == 10, "kill switch: %r" % r)
    l.signal(signal.SIGTERM)
    rc = l.p.wait(10)
    check(rc == 0, "attach exited %r on SIGTERM; stderr %r"
          % (rc, l.stderr()))
    r = t.first_pass("order", None, every_us=1000, max_ms=6000)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= FAIL_OPEN_MAX,
          "the loader exited while order was downgraded: first passed call "
          "%r, want within %.0f s" % (r, FAIL_OPEN_MAX))
    r = t.call("order", 1000)
    check(r["passed"] == 1000, "after the loader exited: %r" % r)
    check(t.alive(), "the program died")


@test
def fail_open_loader_stopped(ctx):
    """A loader whose ticks stop (SIGSTOP) is not obeyed after 2-3 s;
    when it ticks again (SIGCONT) it is, and nothing was lost in the
    counts (the probes count in the kernel meanwhile)."""
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    exp = Exp()
    t.call("order", 10, exp)
    l.signal(signal.SIGSTOP)
    try:
        r = t.first_pass("order", exp, every_us=1000, max_ms=6000)
        check(r["elapsed_ns"] >= 0, "loader stopped: still downgraded "
              "6 s later")
        check(r["elapsed_ns"] / 1e9 <= FAIL_OPEN_MAX,
              "loader stopped: calls passed again after %.2f s, want within "
              "%.0f s" % (r["elapsed_ns"] / 1e9, FAIL_OPEN_MAX))
        r = t.call("order", 500, exp)
        check(r["passed"] == 500, "loader stopped: %r" % r)
    finally:
        l.signal(signal.SIGCONT)
    r = t.first_down("order", exp, every_us=1000, max_ms=3000)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= 1.0,
          "loader continued (SIGCONT): first downgraded call %r, want "
          "within 1 s" % r)
    assert_totals(ctx, "app", "order", exp)
    check(t.alive(), "the program died")


# ---------------------------------------------------------------------------
# An unprivileged program

def _unprivileged(ctx, variant):
    path = ctx.copy(variant)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 2}}})
    ctx.attach(path, "app", spath, extra=["--socket-mode", "0666"])
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
              "--clear-groups"]
    t = ctx.start(path, "app", prefix=prefix)
    uid = t.uid()
    check(uid and all(u == NOBODY for u in uid),
          "the program runs with uids %r, want %d" % (uid, NOBODY))
    eo, ep = Exp(), Exp()
    r = t.call("order", 1, eo)
    check(r["downgraded"] == 1, "as nobody, the first call under the kill "
          "switch: %r, want downgraded" % r)
    t.call("order", 499, eo)
    check(eo.downgrades == 500, "as nobody, kill switch: %r" % eo)
    refused = t.hold("pay", 3, ep)
    check(refused == 1, "as nobody, concurrency limit 2 and 3 threads: %d "
          "refused, want 1" % refused)
    t.release(2, ep)
    t.call("pay", 100, ep, err=7)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)


@test
def unprivileged_static(ctx):
    _unprivileged(ctx, STATIC)


@test
def unprivileged_shared(ctx):
    _unprivileged(ctx, SHARED)


@test
def unprivileged_refused_by_socket_mode(ctx):
    """With the default --socket-mode (0660, root's group) nobody cannot
    reach the loader: the guard stays detached and never downgrades, and
    the program runs normally."""
    path = ctx.copy(STATIC)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    l = ctx.attach(path, "app", spath)
    mode = stat.S_IMODE(os.lstat(l.sock).st_mode)
    check(mode == 0o660, "socket mode %o, want 660 by default" % mode)
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
              "--clear-groups"]
    t = ctx.start(path, "app", prefix=prefix)
    r = t.call("order", 1000)
    check(r["passed"] == 1000, "nobody, socket 0660: %r, want every call "
          "passed (detached)" % r)
    assert_totals(ctx, "app", "order", Exp(),
                  what="a process that could not register is not counted")
    check(t.alive(), "the program died")


# ---------------------------------------------------------------------------
# Invalid strategies change nothing

class _written_open:
    """The strategies file rewritten in place and kept open: the loader's
    watch (close, rename) has not fired until the block ends."""

    def __init__(self, path, doc):
        self.path, self.doc = path, doc

    def __enter__(self):
        self.fd = os.open(self.path, os.O_WRONLY | os.O_TRUNC)
        os.write(self.fd, (self.doc if isinstance(self.doc, str)
                           else json.dumps(self.doc)).encode())
        return self

    def __exit__(self, *a):
        os.close(self.fd)


def _new_lines(l, before, n, timeout):
    """Wait up to @timeout for @n lines on the loader's stderr after the
    first @before; return the new ones."""
    deadline = time.monotonic() + timeout
    while True:
        new = l.stderr().splitlines()[before:]
        if len(new) >= n or time.monotonic() > deadline:
            return new
        time.sleep(0.05)


@test
def invalid_strategy_changes_nothing(ctx):
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 2}}})
    eo, ep = Exp(), Exp()
    t.call("order", 5, eo)
    spath = ctx.strategies_path()
    bad_docs = [
        ({"version": 2, "points": {"order": {"visit_threshold": 5},
                                   "pay": {"exception_rate_threshold": 150}}},
         ["pay", "exception_rate_threshold"]),
        ({"version": 3, "points": {"pay": {"visits_threshold": 5}}},
         ["pay", "visits_threshold"]),
        ({"version": 4, "points": {"order": {"downgrade_rate": "half"}}},
         ["order", "downgrade_rate"]),
        ({"version": 5, "points": {"order": {"timeout_count_threshold": 0}}},
         ["order", "timeout_count_threshold"]),
        ('{"version": 6, "points": {"order": {"visit_threshold": 1}',
         []),
    ]
    for i, (doc, words) in enumerate(bad_docs):
        what = "invalid strategies %s" % (json.dumps(doc) if
                                          not isinstance(doc, str) else doc)
        before = len(l.stderr().splitlines())
        if i == 1:
            what += " (through SIGHUP)"
            with _written_open(spath, doc):
                l.signal(signal.SIGHUP)
                new = _new_lines(l, before, 1, 3.0)
            # Closing the file makes the loader read it again.
            _new_lines(l, before, 2, 2.0)
        else:
            ctx.write_strategies(doc)
            new = _new_lines(l, before, 1, 3.0)
            time.sleep(0.3)
            new = l.stderr().splitlines()[before:]
            check(len(new) == 1, "%s: want one line on stderr, got %r"
                  % (what, new))
        check(new, "%s: nothing on the loader's stderr within 3 s" % what)
        log("loader: %s" % new[0])
        check(new[0].startswith("sds-bpf: "), "%s: stderr line %r does not "
              "start with 'sds-bpf: '" % (what, new[0]))
        for w in words:
            check(w in new[0], "%s: the message does not name %r: %r"
                  % (what, w, new[0]))
        check(l.p.poll() is None, "%s: the loader exited" % what)
        st = ctx.stats("app")
        check(st.get("strategies_version") == 1,
              "%s: strategies_version %r, want 1 still"
              % (what, st.get("strategies_version")))
        check(state_of(get_point(st, "order"))[:2] == (True, "visit"),
              "%s: order no longer downgraded: %r"
              % (what, get_point(st, "order").get("state")))
        r = t.call("order", 5, eo)
        check(r["downgraded"] == 5, "%s: order's kill switch: %r" % (what, r))
        refused = t.hold("pay", 3, ep)
        t.release(3 - refused, ep)
        check(refused == 1, "%s: pay's concurrency limit 2, 3 threads: "
              "%d refused, want 1" % (what, refused))
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)
    # A valid version after all that is taken (through SIGHUP: before
    # the file is closed).
    with _written_open(spath, {"version": 9, "points": {
            "pay": {"concurrent_threshold": 1}}}):
        l.signal(signal.SIGHUP)
        ctx.wait_version("app", 9)
    r = t.call("order", 5, eo)
    check(r["passed"] == 5, "version 9 (no strategy for order): %r" % r)
    refused = t.hold("pay", 3, ep)
    t.release(3 - refused, ep)
    check(refused == 2, "version 9, pay limit 1, 3 threads: %d refused"
          % refused)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)


# ---------------------------------------------------------------------------
# libsds.so shared by two apps

@test
def shared_library_two_apps_two_loaders(ctx):
    """Both programs run build/lib/libsds.so: one file, one set of probe
    sites for the host.  Each loader counts and guards only its app."""
    pa = ctx.copy(SHARED)
    pb = ctx.copy(SHARED2)
    sa = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}}, "a.json")
    sb = ctx.write_strategies({"version": 1, "points": {
        "order": {"exception_threshold": 1000},
        "pay": {"concurrent_threshold": 1}}}, "b.json")
    ctx.attach(pa, "appa", sa)
    ctx.attach(pb, "appb", sb)
    a = ctx.start(pa, "appa")
    b = ctx.start(pb, "appb")
    # A process naming appb but running appa's executable may not register
    # with appb's loader (not its TARGET, docs/TRUST.md): it runs
    # unguarded, uncounted by either loader.
    c = ctx.start(pa, "appb")
    ea, eb, ebp, eap = Exp(), Exp(), Exp(), Exp()
    r = a.call("order", 300, ea, err=3)
    check(r["downgraded"] == 300, "appa kill switch: %r" % r)
    r = b.call("order", 500, eb, err=7)
    check(r["passed"] == 500, "appb order: %r" % r)
    r = c.call("order", 200, None, err=2)
    check(r["passed"] == 200, "appb order from the other exe: %r" % r)
    a.call("pay", 40, eap, err=4)
    refused = b.hold("pay", 2, ebp)
    check(refused == 1, "appb pay limit 1, 2 threads: %d refused" % refused)
    b.release(1, ebp)
    assert_totals(ctx, "appa", "order", ea)
    assert_totals(ctx, "appb", "order", eb)
    assert_totals(ctx, "appa", "pay", eap)
    assert_totals(ctx, "appb", "pay", ebp)


# ---------------------------------------------------------------------------
# No loader, then a loader

def _no_loader(ctx, variant):
    path = ctx.copy(variant)
    t = ctx.start(path, "app")
    r = t.call("order", 20000, None, err=5000)
    check(r["passed"] == 20000, "no loader: %r, want every call passed" % r)
    r = t.rate("order", 0.2)
    check(r["downgraded"] == 0, "no loader: %r" % r)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    t.cmd("mark")
    ctx.attach(path, "app", spath)
    r = t.first_down("order", None, every_us=1000, max_ms=6000)
    check(r["elapsed_ns"] >= 0, "a loader started after the program: not "
          "obeyed within 6 s")
    found = r["since_mark_ns"] / 1e9
    log("found the loader %.2f s after starting it" % found)
    check(found <= FIND_MAX, "a loader started after the program was obeyed "
          "%.2f s after it started, want within ~1-2 s (%.1f)"
          % (found, FIND_MAX))
    exp = Exp()
    exp.add({"downgraded": 1})
    r = t.call("order", 100, exp)
    check(r["downgraded"] == 100, "%r" % r)
    assert_totals(ctx, "app", "order", exp,
                  what="counting from registration (the calls before it "
                  "passed unseen; the first one after it was downgraded)")


@test
def no_loader_then_loader_static(ctx):
    _no_loader(ctx, STATIC)


@test
def no_loader_then_loader_shared(ctx):
    _no_loader(ctx, SHARED)


# ---------------------------------------------------------------------------
# fork(): a child re-registers by itself (sds.h) and is guarded

def _fork(ctx, variant):
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 1}}},
        variant)
    eo, ep = Exp(), Exp()
    # A child forked before the parent made any guarded call re-registers
    # by itself and is guarded.
    r = t.fork_call("order", 100, eo, wait_ms=300)
    check(r["downgraded"] == 100, "a child forked before any guarded call, "
          "300 ms on, under the kill switch: %r, want all 100 downgraded" % r)
    r = t.fork_call("pay", 50, ep, wait_ms=300, err=5)
    check(r["passed"] == 50, "a child's calls of pay: %r" % r)
    assert_totals(ctx, "app", "order", eo, what="children's calls")
    assert_totals(ctx, "app", "pay", ep, what="children's calls")
    # Then the parent hits every probe site, as a server does before it
    # forks more workers.
    t.call("order", 10, eo)
    t.call("pay", 10, ep, err=2)
    errors = []
    for point, exp, want, err in (("order", eo, "downgraded", 0),
                                  ("pay", ep, "passed", 5)):
        try:
            r = t.fork_call(point, 100, exp, wait_ms=300, err=err)
            if r[want] != 100:
                errors.append("child's calls of %s 300 ms after fork(): "
                              "%r, want all 100 %s" % (point, r, want))
        except Fail as e:
            hint = ""
            if "killed by signal 11" in str(e):
                hint = (" (the child has the parent's probe sites, already "
                        "rewritten by the kernel into calls of the parent's "
                        "[uprobes-trampoline], but not that mapping)")
            errors.append("child's calls of %s after fork(), the parent "
                          "having called %s before: %s%s"
                          % (point, point, e, hint))
    check(t.alive(), "the parent died")
    check(not errors, " | ".join(errors))
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)


@test
def fork_child_guarded_static(ctx):
    _fork(ctx, STATIC)


@test
def fork_child_guarded_shared(ctx):
    _fork(ctx, SHARED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
