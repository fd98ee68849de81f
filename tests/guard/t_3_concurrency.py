# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Exact limits under contention: concurrency (per app on the host, the
permits of a SIGKILLed process given back) and the token bucket.
"""

import math
import signal
import time

from guard_lib import (CONTEND, Exp, SHARED, assert_totals, check_events,
                       setup, state_of, test)
from sdstest import Fail, check, log


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
def concurrency_hammered(ctx):
    """concurrent_threshold 1, two threads calling back to back for 4 s
    (every tick repairs the permits meanwhile): never two passed calls
    inside at once.  Before the repair bounded the permits only by the
    rows the live guards hold, the kernel's in-flight count (read at the
    tick, before the cells) made it take a holder's permit away."""
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "one": {"concurrent_threshold": 1}}})
    r = t.rate("one", 4.0, threads=2)
    log("passed %d downgraded %d, at most %d inside" % (
        r["passed"], r["downgraded"], r["max_inside"]))
    check(r["passed"] > 0 and r["downgraded"] > 0,
          "two threads on a limit of 1: %r" % r)
    check(r["max_inside"] == 1, "concurrent_threshold 1: %d passed calls "
          "inside at once" % r["max_inside"])


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
    """Back-to-back calls for T s on a full bucket.  A GCRA bucket lets B
    calls through at the first call and one more each 1/R s after it, so
    over the span S from the first call to the last exactly
    B + floor(R * S) pass.  S is known between the program's clock reads
    around the first and the last call (span_min_ns, span_max_ns): the
    count must lie in that range, however long a thread was preempted
    between a read and its call.  A real bucket holds at most B tokens: it
    is full again after B / R s without calls, and the count is only exact
    if the program never stopped calling for longer than that.  On a busy
    host all its threads may be descheduled that long: then the run is
    repeated, at most 3 times."""
    burst = B / R
    for attempt in range(3):
        time.sleep(max(0.2, 2 * burst))          # a full bucket
        r = t.rate("dep", T, exp, threads=threads)
        lo = B + math.floor(R * r["span_min_ns"] / 1e9)
        hi = B + math.floor(R * r["span_max_ns"] / 1e9)
        log("token, %d thread(s): %r, want %d..%d" % (threads, r, lo, hi))
        if r["gap_ns"] / 1e9 < burst - 0.005:
            check(lo <= r["passed"] <= hi,
                  "token_rate %d, token_bucket %d, %d thread(s) calling back "
                  "to back for %.6f..%.6f s between the first call and the "
                  "last (never all idle for more than %.1f ms): %d passed, "
                  "want %d..%d (%d downgraded)"
                  % (R, B, threads, r["span_min_ns"] / 1e9,
                     r["span_max_ns"] / 1e9, r["gap_ns"] / 1e6, r["passed"],
                     lo, hi, r["downgraded"]))
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
