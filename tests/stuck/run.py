#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Stuck calls count now (docs/LIMITS.md "Stuck calls"): a call in flight
longer than its point's timeout_ms is a timeout of the window from the
first tick after it passed the timeout, so a dependency that hangs trips
timeout_count_threshold while every call is still inside, not when the
calls finally return; and each such call is counted once.  A real
`sds-bpf attach` (default 100 ms tick), strategy timeout_ms 300 and
timeout_count_threshold 5:

  * guard_hang: a libsds guard point (tests/targets/guarded.c `hold`):
    5 calls enter and hang.  The trip ("started timeout") is dated at or
    after 300 ms past the test's clock before the calls were sent, and no
    later than 300 ms + 2 ticks after the test saw all 5 inside; then
    stats says stuck 5, concurrency 5, timeouts 0.  Released, the window
    holds each exactly once (timeouts 5, stuck 0), the point stays
    tripped with no second event, and recovers when the 10-s window
    clears (9-12.5 s after the release).  Beside it, point `leaky` gets 5
    calls that never end (no finally): stuck 5, it trips, and 10 s past
    their timeout they stop counting (stuck 0 while concurrency stays 5):
    a leaked call is not stuck forever.
  * fn_hang_session, fn_hang_pair: the same for a function point
    (tests/targets/stucktarget, stuck_call() blocking on a pipe), on both
    probe paths; entry times from the target's own clock.
  * fn_thread_exit_session, fn_thread_exit_pair: 5 threads end inside
    stuck_call() (pthread_exit): nothing is left in flight or stuck, and
    the point never trips.

Run as root:  python3 tests/stuck/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, check, get_point, log  # noqa: E402
from guarded import Target  # noqa: E402

TT = os.path.join(BUILD, "test", "targets")
GUARDED = os.path.join(TT, "guarded_static")
STUCKTARGET = os.path.join(TT, "stucktarget")
TICK_MS = 100
TIMEOUT_MS = 300
N = 5
STRATEGY = {"timeout_ms": TIMEOUT_MS, "timeout_count_threshold": N}
# The window holds a returned call 9-10 s; a tick and query to spare.
RECOVER_MIN, RECOVER_MAX = 8.9, 12.5


def wall_ms(mono_ns):
    """CLOCK_MONOTONIC ns as Unix ms, as the loader dates events."""
    return (mono_ns + time.time_ns() - time.monotonic_ns()) / 1e6


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-stuck-")

    def sds(self, args, timeout=10):
        return sdstest.run_group([SDS] + args, self.env, self.tmp,
                                 self.others, timeout, fail_on_timeout=False)

    def stats(self, app):
        r = self.sds(["stats", "--app", app, "--json"])
        check(r.rc == 0, "stats --json: %r" % r)
        return json.loads(r.out)

    def point(self, app, name):
        return get_point(self.stats(app), name)

    def events(self, app, n, timeout=5):
        r = self.sds(["events", "--app", app, "--json", "--count", str(n)],
                     timeout)
        check(r.rc == 0, "events --json --count %d: %r" % (n, r))
        return [json.loads(line) for line in r.out.splitlines()]

    def attach(self, app, target, points, strategies, path=None):
        spath = os.path.join(self.tmp, "strategies.json")
        with open(spath, "w") as f:
            json.dump({"version": 1, "points": strategies}, f)
        if path:
            self.env["SDS_PROBE_PATH"] = path
        return sdstest.AttachProcess(
            self, ["--app", app, "--tick-ms", str(TICK_MS), "--strategies",
                   spath, target] + points, app)


def downgraded(p):
    s = p.get("state") or {}
    return bool(s.get("downgraded")), s.get("reason")


def wait_trip(ctx, app, name, within_s):
    """Poll stats until @name is downgraded; its point then."""
    deadline = time.monotonic() + within_s
    while True:
        p = ctx.point(app, name)
        if downgraded(p)[0]:
            return p
        check(time.monotonic() < deadline,
              "%s not downgraded within %.1f s: %s" % (name, within_s,
                                                       json.dumps(p)))
        time.sleep(0.02)


def check_hung(ctx, app, name, lo_ns, hi_ns):
    """@name's N calls entered in [lo_ns, hi_ns] (CLOCK_MONOTONIC) and
    hang: the point trips for timeout no sooner than TIMEOUT_MS after the
    first possible entry and within TIMEOUT_MS + 2 ticks of the last,
    with every call still in flight and none counted returned."""
    # Before the timeout: in flight, nothing stuck, not tripped.
    if (time.monotonic_ns() - hi_ns) < (TIMEOUT_MS - 150) * 10**6:
        p = ctx.point(app, name)
        young = time.monotonic_ns() < lo_ns + TIMEOUT_MS * 10**6
        check(not young or (p["stuck"] == 0 and not downgraded(p)[0]),
              "%s before its timeout: %s, want stuck 0, not downgraded"
              % (name, json.dumps(p)))
        log("before the timeout: stuck %d, concurrency %d"
            % (p["stuck"], p["concurrency"]))
    p = wait_trip(ctx, app, name, TIMEOUT_MS / 1e3 + 3)
    check(downgraded(p) == (True, "timeout"),
          "%s state %r, want downgraded for timeout" % (name, p["state"]))
    check(p["concurrency"] == N and p["stuck"] == N and
          p["total"]["timeouts"] == 0 and p["window"]["timeouts"] == 0 and
          p["total"]["visits"] == N,
          "%s tripped: %s, want %d visits, concurrency %d, stuck %d, "
          "0 timeouts (every call still in flight)" % (name, json.dumps(p), N,
                                                       N, N))
    ev = [e for e in ctx.events(app, 1) if e["point"] == name]
    check(len(ev) == 1 and ev[0]["event"] == "started" and
          ev[0]["reason"] == "timeout",
          "want a started timeout event of %s, got %r" % (name, ev))
    t = ev[0]["time_ms"]
    first, last = wall_ms(lo_ns), wall_ms(hi_ns)
    log("%s tripped %.1f ms after the last call entered (%.1f after the "
        "first could)" % (name, t - last, t - first))
    check(t >= first + TIMEOUT_MS - 1,
          "%s tripped %.1f ms after the first call could have entered, want "
          ">= %d ms (the timeout)" % (name, t - first, TIMEOUT_MS))
    check(t <= last + TIMEOUT_MS + 2 * TICK_MS,
          "%s tripped %.1f ms after the last call entered, want within %d ms "
          "(timeout + 2 ticks)" % (name, t - last, TIMEOUT_MS + 2 * TICK_MS))


def check_released(ctx, app, name, t_rel, nevents=2):
    """After the release: each call counted once, still tripped (one
    event), then recovered when the window cleared (@nevents: the app's
    events by then, every point's)."""
    # The next tick folds the returns; stuck and timeouts trade places.
    time.sleep(2 * TICK_MS / 1e3 + 0.05)
    p = ctx.point(app, name)
    check(p["total"]["timeouts"] == N and p["window"]["timeouts"] == N and
          p["stuck"] == 0 and p["concurrency"] == 0 and
          p["latency_ns"]["count"] == N,
          "%s released: %s, want %d timeouts (total and window), stuck 0, "
          "concurrency 0, %d completed" % (name, json.dumps(p), N, N))
    check(downgraded(p) == (True, "timeout"),
          "%s released: state %r, want still downgraded for timeout"
          % (name, p["state"]))
    deadline = t_rel + RECOVER_MAX
    while downgraded(p)[0]:
        check(time.monotonic() < deadline,
              "%s still downgraded %.1f s after the release: %s"
              % (name, time.monotonic() - t_rel, json.dumps(p)))
        time.sleep(0.1)
        p = ctx.point(app, name)
    since = time.monotonic() - t_rel
    log("%s recovered %.1f s after the release" % (name, since))
    check(since >= RECOVER_MIN,
          "%s recovered %.1f s after its calls returned, want >= %.1f s "
          "(the window holds their timeouts)" % (name, since, RECOVER_MIN))
    ev = [e for e in ctx.events(app, nevents) if e["point"] == name]
    check([(e["event"], e["reason"]) for e in ev] ==
          [("started", "timeout"), ("ended", "timeout")],
          "%s events %r, want one started and one ended timeout (no "
          "flap as the stuck calls returned)" % (name, ev))


SUITE = sdstest.Suite(timeout=60)


@SUITE.test
def guard_hang(ctx):
    """A guard point whose dependency hangs trips in flight; a leaked
    call stops counting 10 s past its timeout."""
    path = sdstest.stage(GUARDED, ctx.tmp)
    ctx.attach("app", path, [], {"dep": STRATEGY, "leaky": STRATEGY})
    t = Target(ctx, path)
    t.open("app")
    t.cmd("point dep")
    t.cmd("point leaky")
    t_leak = time.monotonic_ns()
    r = t.leak("leaky", N)
    check(r == {"passed": N, "downgraded": 0}, "leak: %r" % r)
    lo = time.monotonic_ns()
    check(t.hold("dep", N) == 0, "hold: a call was refused")
    hi = time.monotonic_ns()
    check_hung(ctx, "app", "dep", lo, hi)
    p = ctx.point("app", "leaky")
    check(p["stuck"] == N and downgraded(p) == (True, "timeout"),
          "leaky: %s, want stuck %d and downgraded for timeout"
          % (json.dumps(p), N))
    t_rel = time.monotonic()
    t.release()
    # dep's and leaky's starts and ends (leaky's end comes about then).
    check_released(ctx, "app", "dep", t_rel, 4)
    # The leaked calls: 10 s past their timeout they are no longer stuck.
    end = t_leak + (TIMEOUT_MS + 10000 + 2 * TICK_MS) * 10**6
    time.sleep(max(0, end - time.monotonic_ns()) / 1e9)
    p = ctx.point("app", "leaky")
    check(p["stuck"] == 0 and p["concurrency"] == N and
          p["total"]["timeouts"] == 0 and not downgraded(p)[0],
          "leaky %.1f s after the leak: %s, want stuck 0 (past the window), "
          "concurrency %d, 0 timeouts, not downgraded"
          % ((time.monotonic_ns() - t_leak) / 1e9, json.dumps(p), N))
    ev = [(e["event"], e["reason"]) for e in ctx.events("app", 4)
          if e["point"] == "leaky"]
    check(ev == [("started", "timeout"), ("ended", "timeout")],
          "leaky events %r, want one started and one ended timeout" % ev)


def fn_hang(ctx, path):
    target = sdstest.stage(STUCKTARGET, ctx.tmp)
    ctx.attach("stuck", target, ["hang=stuck_call"], {"hang": STRATEGY},
               path)
    t = Target(ctx, target)
    out = t.cmd("enter %d" % N)
    f = out[0].split()
    check(len(f) == 3 and f[0] == "entered", "enter: %r" % out)
    check_hung(ctx, "stuck", "hang", int(f[1]), int(f[2]))
    t_rel = time.monotonic()
    out = t.cmd("release")
    check(out == ["returned %d" % N], "release: %r" % out)
    check_released(ctx, "stuck", "hang", t_rel)


def fn_thread_exit(ctx, path):
    target = sdstest.stage(STUCKTARGET, ctx.tmp)
    ctx.attach("stuck", target, ["hang=stuck_call"], {"hang": STRATEGY},
               path)
    t = Target(ctx, target)
    out = t.cmd("die %d" % N)
    check(out == ["died %d" % N], "die: %r" % out)
    time.sleep((TIMEOUT_MS + 3 * TICK_MS) / 1e3)
    p = ctx.point("stuck", "hang")
    check(p["total"]["visits"] == N and p["concurrency"] == 0 and
          p["stuck"] == 0 and p["total"]["timeouts"] == 0 and
          not downgraded(p)[0],
          "threads ended inside their calls: %s, want %d visits, "
          "concurrency 0, stuck 0, 0 timeouts, not downgraded"
          % (json.dumps(p), N))


for _fn in (fn_hang, fn_thread_exit):
    for _path in ("session", "pair"):
        def _one(ctx, fn=_fn, path=_path):
            fn(ctx, path)
        _one.__name__ = "%s_%s" % (_fn.__name__, _path)
        SUITE.test(_one)


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx,
                               needs=(SDS, GUARDED, STUCKTARGET)))
