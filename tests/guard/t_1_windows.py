# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Points named in a strategy, and the window strategies: each trips
within a tick with the right reason and exact counts, and recovers when
its 10-s window clears.
"""

import json
import time

from guard_lib import (Exp, REACT_MAX, RECOVER_MAX, RECOVER_MIN, SHARED,
                       STATIC, TICK, assert_totals, check_events, mismatches,
                       setup, state_of, test)
from sdstest import check, get_point, log, wait_ticks


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
    # At the threshold but not past it: nothing trips over 3 ticks.
    p = get_point(wait_ticks(lambda: ctx.stats("app"), 3), P)
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
    # 3 ticks done: at least 2 began after the calls, and one would trip.
    p = get_point(wait_ticks(lambda: ctx.stats("app"), 3), P)
    check(not state_of(p)[0], "30 visits (not above exception_rate_start "
          "30), all failed: downgraded already: %s" % json.dumps(p))
    r = t.first_down(P, exp, every_us=100, max_ms=3000, err=1)
    check(r["elapsed_ns"] >= 0 and r["elapsed_ns"] / 1e9 <= REACT_MAX,
          "the 31st visit (all failed) did not trip within %.0f ms: %r"
          % (REACT_MAX * 1e3, r))
    _, p = assert_totals(ctx, "app", P, exp)
    check(state_of(p)[:2] == (True, "exception_rate"), "state %r"
          % p.get("state"))
