# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The in-flight gauge: calls in flight, and exits that never come (a
process killed, a thread that exits, a longjmp out of the call).
"""

import json

from integration_lib import (E, MS, N, T, TMO, _mismatches, assert_counts,
                             test, wait_point)
from sdstest import Fail, check, get_point


# ---------------------------------------------------------------------------
# The in-flight gauge: calls in flight, and exits that never come


@test
def concurrency_counts_calls_in_flight(ctx):
    """4 threads in nap(1500) at once: concurrency 4, then 0; the 4 calls
    land in bucket 30 ([2^30, 2^31) ns = 1.07-2.15 s)."""
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "nap=nap"], "target_pie")
    t.send("tnap 4 1500")
    wait_point(ctx, "target_pie", "nap", lambda p: p.get("concurrency") == 4,
               "concurrency 4 while 4 threads sleep in nap()", timeout=1.2)
    t.wait_done()
    assert_counts(ctx, "target_pie", "nap", 4, 0, 0)
    r = ctx.sds(["hist", "--app", "target_pie", "nap", "--json"])
    check(r.rc == 0, "hist --json: %r" % r)
    b = json.loads(r.out).get("buckets") or []
    check(len(b) == 64 and b[30] == 4 and sum(b) == 4,
          "want 4 calls of 1.5 s in bucket 30, got %r"
          % {i: c for i, c in enumerate(b) if c})


@test
def killed_process_gives_back_in_flight(ctx):
    """A process SIGKILLed inside a probed call: the gauge returns to 0."""
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "work=work:timeout_ms=%d" % TMO], "target_pie")
    t.send("work 1 0 1 20000")
    wait_point(ctx, "target_pie", "work", lambda p: p.get("concurrency") == 1,
               "concurrency 1 while work() sleeps")
    t.kill()
    p = wait_point(ctx, "target_pie", "work",
                   lambda p: p.get("concurrency") == 0,
                   "concurrency back to 0 after the process was killed")
    tot = p["total"]
    check(tot["visits"] == 1 and tot["timeouts"] == 0
          and p["latency_ns"]["count"] == 0,
          "a killed call: want 1 visit, 0 timeouts, 0 completed: %s"
          % json.dumps(p))


@test
def thread_exit_inside_call_gives_back_in_flight(ctx):
    """pthread_exit() from inside a probed function: no return ever comes;
    the gauge must not keep the 5 calls."""
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "ex=exiter", "work=work"], "target_pie")
    t.cmd("threadexit 5")
    p = wait_point(ctx, "target_pie", "ex",
                   lambda p: p.get("concurrency") == 0,
                   "concurrency 0 after 5 threads exited inside exiter()")
    check(p["total"]["visits"] == 5 and p["latency_ns"]["count"] == 0,
          "exiter: want 5 visits, 0 completed: %s" % json.dumps(p))
    t.cmd("work 10 0 0 0")
    assert_counts(ctx, "target_pie", "work", 10, 0, 0)


@test
def longjmp_out_of_call_does_not_drift(ctx):
    """Calls of jumper() that longjmp out of themselves, then ordinary calls
    on the same thread: jumper's gauge returns to 0 and work() still pairs
    every call -- also after 100 such calls, more than the 64 frames a
    thread can hold."""
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "jmp=jumper", "work=work:err=neg:timeout_ms=%d" % TMO],
               "target_pie")
    errors = []
    t.cmd("longjmp 3")
    t.cmd("work 10 2 1 %d" % MS)
    bad = _mismatches(get_point(ctx.stats("target_pie"), "work"),
                      10, 2, 1, True)
    if bad:
        errors.append("work() after 3 longjmps: " + "; ".join(bad))
    try:
        wait_point(ctx, "target_pie", "jmp",
                   lambda p: p.get("concurrency") == 0,
                   "jumper's in-flight gauge back to 0 after 3 longjmps and "
                   "10 later calls on the same thread")
    except Fail as e:
        errors.append(str(e))
    t.cmd("longjmp 97")
    t.cmd("work %d %d %d %d" % (N, E, T, MS))
    p = get_point(ctx.stats("target_pie"), "work")
    bad = _mismatches(p, N + 10, E + 2, T + 1, True)
    if bad:
        errors.append("work() after 100 longjmps: %s; point was %s"
                      % ("; ".join(bad), json.dumps(p)))
    try:
        p = wait_point(ctx, "target_pie", "jmp",
                       lambda p: p.get("concurrency") == 0,
                       "jumper's in-flight gauge back to 0 after 100 "
                       "longjmps and 1010 later calls on the same thread")
        if p["total"]["visits"] != 100 or p["latency_ns"]["count"] != 0:
            errors.append("jumper: want 100 visits, 0 completed: %s"
                          % json.dumps(p))
    except Fail as e:
        errors.append(str(e))
    check(not errors, " | ".join(errors))
