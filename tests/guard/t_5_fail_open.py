# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Fail-open (docs/DESIGN.md §2): a loader killed (static and shared libsds),
one that exits, one whose ticks stop: its downgrades lapse within
FAIL_OPEN_MAX and the program keeps running.
"""

import os
import signal

from guard_lib import (Exp, FAIL_OPEN_MAX, FIND_MAX, SHARED, STATIC,
                       assert_totals, setup, test)
from sdstest import check, inode_of, log


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
