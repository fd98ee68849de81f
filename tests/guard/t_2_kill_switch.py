# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The kill switch (static and shared libsds) and its hot reload, and
downgrade_rate: the share of calls it downgrades, and the exact limits
it keeps.
"""

import math

from guard_lib import (Exp, SHARED, STATIC, assert_totals, check_events, setup,
                       state_of, test)
from sdstest import check


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
