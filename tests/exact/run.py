#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of exact trips (issue 14; docs/PROTOCOL.md "Exact
trips"): a real `sds-bpf attach`, real BPF, and two processes of
tests/targets/exactapp with two threads each calling one guard point at
~20,000 calls/s in all.  Every call is numbered across the processes in
the order of the guard's decisions (exactapp.c), so:

  * the first N calls pass and call N+1 is the first downgraded;
  * no 10-s window of wall-clock seconds (the ring's seconds) holds more
    than N passes, and neither does any `stats --json` window polled
    during the run;
  * calls pass again once the second holding the first passes has left
    the window (at the first tick after it, + margin), and exactly N more
    pass then;
  * the loader counted every call (total visits, downgrades).

The same for exception_threshold (every call that passes signs an
exception: the call after the N-th is downgraded) and for
timeout_count_threshold (every call that passes sleeps 2 ms, timeout_ms
1: the call after the N-th slow one ends is downgraded), and all three
again with --tick-ms 1000, once with the loader stopped for 1.5 s in
the middle (SIGSTOP: as a stalled VM or a starved loader would be).  And
a long tick (3 s) does not let a downgrade lapse, or the guards take the
loader for dead, between ticks.

Run as root:  python3 tests/exact/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import json
import math
import mmap
import os
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, check, get_point, log  # noqa: E402

APP = "exact"
EXACTAPP = os.path.join(BUILD, "test", "targets", "exactapp")
PROCS, THREADS, RATE = 2, 2, 5000      # 20,000 calls/s in all
SECONDS = 13                           # past the first window's end
HDR, REC = 64, 16
MARGIN = 1.0                           # s, for recovery (loaded VM)


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-exact-")

    def stats(self):
        args = [SDS, "stats", "--app", APP, "--json"]
        return sdstest.json_out(sdstest.run_group(args, self.env, self.tmp,
                                                  self.others, 10,
                                                  fail_on_timeout=False),
                                " ".join(args[1:]))


def run_apps(ctx, strategy, tick_ms, mode, seconds=SECONDS, pause=None):
    """attach with @strategy, run the two exactapps for @seconds; return
    the calls' records (wall ns, verdict) in decision order and the worst
    `visits - downgrades` of the stats windows polled meanwhile.  @pause
    (AT, FOR): the loader is stopped (SIGSTOP) AT s after the first call
    for FOR s."""
    path = sdstest.stage(EXACTAPP, ctx.tmp)
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump({"version": 1, "points": {"exact": strategy}}, f)
    loader = sdstest.AttachProcess(ctx, ["--app", APP, "--tick-ms",
                                         str(tick_ms), "--strategies", spath,
                                         path], APP)
    max_calls = PROCS * THREADS * RATE * (seconds + 1)
    shm = os.path.join(ctx.tmp, "calls")
    with open(shm, "wb") as f:
        f.truncate(HDR + REC * max_calls)
    # 100 ms into a wall-clock second (the ring's seconds are wall-clock
    # ones), so that the first N passes do not straddle two seconds:
    # then exactly N pass again when that second leaves the window.
    wall = math.floor(time.time()) + 2.1
    start = int((wall - time.time()) * 1e9) + time.monotonic_ns()
    procs = []
    for i in range(PROCS):
        out = open(os.path.join(ctx.tmp, "app-%d.out" % i), "wb")
        p = subprocess.Popen([path, APP, shm, str(THREADS), str(RATE),
                              str(seconds), str(start), mode],
                             stdout=out, stderr=subprocess.STDOUT,
                             env=ctx.env, cwd=ctx.tmp, start_new_session=True)
        ctx.others.append(p)
        procs.append((p, out))
    # The loader's windows while the calls run.
    worst = 0
    while any(p.poll() is None for p, _ in procs):
        if pause and time.time() >= wall + pause[0]:
            os.kill(loader.p.pid, signal.SIGSTOP)
            try:
                time.sleep(pause[1])
            finally:
                os.kill(loader.p.pid, signal.SIGCONT)
            pause = None
        w = get_point(ctx.stats(), "exact", required=False)
        if w:
            win = w["window"]
            worst = max(worst, win["visits"] - win["downgrades"])
        time.sleep(0.3)
    for i, (p, out) in enumerate(procs):
        out.close()
        with open(os.path.join(ctx.tmp, "app-%d.out" % i)) as f:
            text = f.read()
        check(p.returncode == 0, "exactapp %d exited %s: %s"
              % (i, p.returncode, text))
    with open(shm, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        ncalls = struct.unpack_from("<Q", mm, 8)[0]
        recs = [struct.unpack_from("<QQ", mm, HDR + REC * i)
                for i in range(min(ncalls, max_calls))]
        mm.close()
    check(len(recs) > PROCS * THREADS * RATE * (seconds - 3),
          "only %d calls were made (the VM is too slow?)" % len(recs))
    check(all(v in (1, 2) for _, v in recs), "a call without a verdict")
    return recs, worst


def run_case(ctx, field, n, tick_ms, mode, extra=None, pause=None):
    st = {field: n}
    st.update(extra or {})
    recs, worst = run_apps(ctx, st, tick_ms, mode, pause=pause)
    log("%d calls, worst stats window %d" % (len(recs), worst))
    # 1: the first N pass, the N+1st is the first downgraded.
    first_down = next(i for i, (_, v) in enumerate(recs) if v == 2)
    check(first_down == n, "call %d is the first downgraded, want call %d "
          "(1-based %d)" % (first_down + 1, n + 1, n + 1))
    # 2: no window of 10 wall seconds holds more than N passes.
    per_sec = {}
    for ns, v in recs:
        if v == 1:
            per_sec[ns // 10**9] = per_sec.get(ns // 10**9, 0) + 1
    s0 = recs[0][0] // 10**9
    for s in range(s0 - 9, s0 + SECONDS + 3):
        w = sum(per_sec.get(k, 0) for k in range(s, s + 10))
        check(w <= n, "%d passes in the seconds %d..%d (want <= %d): %r"
              % (w, s - s0, s - s0 + 9, n, per_sec))
    check(worst <= n, "stats showed a window of %d passes, want <= %d"
          % (worst, n))
    # 3: passes again when the first second left the window.
    back = next((ns for ns, v in recs[n:] if v == 1), None)
    check(back is not None, "no call passed again after the first refusal")
    at = back / 1e9 - (s0 + 10)
    check(-0.05 <= at <= tick_ms / 1000.0 + MARGIN,
          "passes came back %.3f s after second +10 began (want 0..%.1f)"
          % (at, tick_ms / 1000.0 + MARGIN))
    passed = sum(1 for _, v in recs if v == 1)
    check(passed == 2 * n, "%d calls passed, want %d (two windows' budgets)"
          % (passed, 2 * n))
    # 4: the loader counted them all.
    p = get_point(ctx.stats(), "exact")
    tot = p["total"]
    check(tot["visits"] == len(recs) and
          tot["downgrades"] == len(recs) - passed,
          "stats total %r, want visits %d downgrades %d"
          % (tot, len(recs), len(recs) - passed))
    if mode == "exc":
        check(tot["exceptions"] == passed, "stats exceptions %d, want %d"
              % (tot["exceptions"], passed))
    if mode == "slow":
        check(tot["timeouts"] == passed, "stats timeouts %d, want %d"
              % (tot["timeouts"], passed))


SUITE = sdstest.Suite(timeout=120)
test = SUITE.test


@test
def test_visit_threshold_exact(ctx):
    run_case(ctx, "visit_threshold", 1000, 100, "visit")


@test
def test_visit_threshold_exact_tick_1000(ctx):
    run_case(ctx, "visit_threshold", 1000, 1000, "visit")


@test
def test_exception_threshold_exact(ctx):
    run_case(ctx, "exception_threshold", 500, 100, "exc")


@test
def test_exception_threshold_exact_tick_1000(ctx):
    run_case(ctx, "exception_threshold", 500, 1000, "exc")


@test
def test_exception_threshold_loader_paused_tick_1000(ctx):
    """The loader stopped for 1.5 s (as a VM that stalls, or a loader
    starved of CPU, would be) in the middle of the trip: guards still take
    it for alive (its next tick is not yet 2 s late) and keep its budget,
    so not one call more passes."""
    run_case(ctx, "exception_threshold", 500, 1000, "exc", pause=(3.0, 1.5))


@test
def test_timeout_count_exact(ctx):
    run_case(ctx, "timeout_count_threshold", 100, 100, "slow",
             {"timeout_ms": 1})


@test
def test_timeout_count_exact_tick_1000(ctx):
    run_case(ctx, "timeout_count_threshold", 100, 1000, "slow",
             {"timeout_ms": 1})


@test
def test_long_tick_keeps_downgrade(ctx):
    """A window strategy the guards do not count (the exception ratio) at
    --tick-ms 3000: once a call is downgraded, every later one is, while
    the exceptions stay in the window -- the downgrade published at one
    tick lives until the next (it used to lapse 1 s after its tick, and
    the guards took a loader 2 s past its tick for dead)."""
    st = {"exception_rate_threshold": 50, "exception_rate_start": 100}
    recs, _ = run_apps(ctx, st, 3000, "exc", seconds=9)
    first_down = next((i for i, (_, v) in enumerate(recs) if v == 2), None)
    check(first_down is not None, "no call was downgraded")
    # The trip comes at the first tick with more than 100 calls counted.
    at = (recs[first_down][0] - recs[0][0]) / 1e9
    check(at <= 3.0 + MARGIN, "first downgrade %.3f s after the first call, "
          "want <= %.1f (one tick + margin)" % (at, 3.0 + MARGIN))
    late = [(ns - recs[0][0]) / 1e9 for ns, v in recs[first_down:] if v == 1]
    check(not late, "%d calls passed after the first downgrade (at %.3f s), "
          "the first at %.3f s" % (len(late), at, late[0] if late else 0))
    # And the loader counted them all.
    tot = get_point(ctx.stats(), "exact")["total"]
    check(tot["visits"] == len(recs) and
          tot["downgrades"] == len(recs) - first_down and
          tot["exceptions"] == first_down,
          "stats total %r, want visits %d downgrades %d exceptions %d"
          % (tot, len(recs), len(recs) - first_down, first_down))


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx, needs=(SDS, EXACTAPP)))
