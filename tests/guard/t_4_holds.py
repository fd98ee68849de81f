# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Holds and half-open: the probes a hold lets through and how long it
lasts, half-open with N probes, slow probes, and the slow-call ratio
(issue 14).
"""

import threading
import time

from guard_lib import (Exp, REACT_MAX, SHARED, TICK, assert_totals,
                       check_events, setup, state_of, test)
from sdstest import check, get_point, log, wait_ticks

# How late a probe may come past its time, and why there is a bound at
# all: a hold that let its probe through an interval late (or never)
# would be wrong, so the probe must come within a tick of its time, plus
# PROBE_LATE_S for a loader's tick late on a loaded 2-core machine.  The
# times are the target's own clock (`mark`, first_down's since_mark_ns,
# call's `since_mark`), so no Python round trip sits inside them.
PROBE_LATE_S = 0.25


def _ticks(ctx, n):
    """@n ticks of the loader done from now (at least @n - 1 begun after
    it): a check that something did not happen waits for them, not for a
    time.  Its last stats."""
    return wait_ticks(lambda: ctx.stats("app"), n)


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
    t.cmd("mark")
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "did not trip within %.0f ms: %r" % (REACT_MAX * 1e3, r))
    t_trip = time.monotonic()
    trip = r["since_mark_ns"] / 1e9     # the first refused call's start
    # 3.5 intervals of calls every ms, every call that passes failing:
    # probes near 1, 2 and 3 intervals (a failed probe restarts the hold
    # at the loader's next tick, so each later one may come up to a tick
    # late), never two within an interval.
    dur = 3.5 * IV
    r = t.call(P, int(dur * 1000), exp, err=1000000, every_us=1000,
               times=True, since_mark=True)
    # From the trip, by the target's clock.
    times = [x / 1e9 - trip for x in r["times"]]
    log("probes at %s s after the trip" % ["%.3f" % x for x in times])
    check(r["passed"] == 3, "hold with retry_interval_ms %d: %d calls "
          "passed in %.1f s of calls every ms (at %s s), want exactly 3, "
          "one per interval" % (IV * 1000, r["passed"], dur,
                                ["%.3f" % x for x in times]))
    check(r["failed"] == 3, "%r" % r)
    # The guard refuses the call after the exception at once (exact
    # trips, PROTOCOL.md); the hold, and so its first probe's interval,
    # starts at the loader's next tick, up to a tick later.
    # Never early: the hold starts at or after the trip, and the first
    # refused call came at most every_us (0.1 ms) after it; 2 ms for the
    # calls' 1-ms schedule.
    check(IV - 0.002 <= times[0] <= IV + TICK + PROBE_LATE_S,
          "first probe %.3f s after the trip, want one interval (%.1f s), "
          "at most a tick more (+%.2f s)" % (times[0], IV, PROBE_LATE_S))
    gaps = [b - a for a, b in zip(times, times[1:])]
    check(all(IV - 0.002 <= g <= IV + TICK + PROBE_LATE_S for g in gaps),
          "gaps between probes %s s, want one interval (%.1f s), at most a "
          "tick more (+%.2f s)" % (["%.3f" % g for g in gaps], IV,
                                   PROBE_LATE_S))
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
    _ticks(ctx, 3)
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


# The 5 probes of one phase come together: within half an interval of
# each other, where a phase per probe would put them an interval apart.
# A bound on function, not speed: at 1-ms pacing they take ~5 ms, and a
# descheduled target only bunches its calls.
PHASE_SPAN_S = 0.5


def _phase(ctx, t, P, exp, err, what, sleep_ms=0):
    """1.5 s of calls every ms over one half-open phase; the probes
    (the first passed calls) must be exactly 5, all within PHASE_SPAN_S
    (one phase: its start, then one claim each); returns the call's
    report and the passed calls' times (s since the target's last
    `mark`: its own clock)."""
    opts = {"sleep_ms": sleep_ms} if sleep_ms else {}
    r = t.call(P, 1500, exp, err=err, every_us=1000, times=True,
               since_mark=True, timeouts=bool(sleep_ms), **opts)
    times = [x / 1e9 for x in r["times"]]
    log("%s: %d passed, at %s s" % (what, r["passed"],
                                    ["%.3f" % x for x in times[:8]]))
    check(r["passed"] >= 5, "%s: %d calls passed in 1.5 s of calls every "
          "ms, want the 5 probes of the phase: %r" % (what, r["passed"], r))
    # One thread: each probe's sleep delays the next call.
    check(times[4] - times[0] < PHASE_SPAN_S + 5 * sleep_ms / 1e3,
          "%s: the 5 probes came at %s s, "
          "want them together at the phase's start" % (what, times[:5]))
    return r, times


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
    t.cmd("mark")
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "did not trip within %.0f ms: %r" % (REACT_MAX * 1e3, r))
    trip = r["since_mark_ns"] / 1e9     # the target's clock, as _phase's
    base = _passed_total(ctx, "app", P)
    # Phase 1: 2 of the 5 probes fail (40 % > 20 %): a new hold.
    r, times = _phase(ctx, t, P, exp, 2, "phase 1")
    check(r["passed"] == 5 and r["failed"] == 2, "phase 1: %r, want "
          "exactly 5 passed (the probes), 2 of them failed" % r)
    check(IV - 0.002 <= times[0] - trip <= IV + TICK + PROBE_LATE_S,
          "phase 1 opened %.3f s after the trip, want one interval "
          "(%.1f s), at most a tick more (+%.2f s)"
          % (times[0] - trip, IV, PROBE_LATE_S))
    _ticks(ctx, 3)              # the verdict on phase 1 is in
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
    _ticks(ctx, 3)              # the verdict on the phase is in
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
    t.cmd("mark")               # _phase's times count from it
    r = t.first_down(P, exp, every_us=100, max_ms=2000, err=1)
    check(r["elapsed_ns"] >= 0, "did not trip: %r" % r)
    # Each probe sleeps 30 ms (> timeout_ms 20): 1.5 s of calls plus 5
    # sleeps still covers only the first phase.
    r, _ = _phase(ctx, t, P, exp, 0, "slow phase", sleep_ms=30)
    check(r["passed"] == 5 and r["failed"] == 0, "slow phase: %r" % r)
    p = get_point(_ticks(ctx, 3), P)        # the verdict on the phase is in
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
    # P tripped at a tick that saw all of Q's calls too; 3 ticks more.
    q = get_point(_ticks(ctx, 3), Q)
    check(not state_of(q)[0], "30 calls, 40 %% slow, below slow_rate_start "
          "50: state %r, want not downgraded" % q.get("state"))
    for x in (P, Q):
        assert_totals(ctx, "app", x, exp[x])
    check_events(ctx.events("app", 1), [(P, "slow_rate", "started")])
