# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Counting: exact visits, exceptions and timeouts of function points on
PIE and non-PIE programs started before and after attach, in a shared
library, from two processes, a pid filter, threads, recursion, the
slow-call ratio, and a latency in its histogram bucket.
"""

import json
import os
import signal
import subprocess

from integration_lib import (E, MS, N, T, TMO, WORK, _kill_group, _mismatches,
                             assert_counts, assert_point_meta,
                             symbol_file_offset, test)
from sdstest import SDS, check, get_point, log, wait_ticks


# ---------------------------------------------------------------------------
# Counting: exact N, E, T

def _count_one(ctx, variant, before):
    path = ctx.copy(variant)
    t = ctx.start(path) if before else None
    l = ctx.attach([path, WORK], variant)
    if not before:
        t = ctx.start(path)
    t.cmd("work %d %d %d %d" % (N, E, T, MS))
    st, p = assert_counts(ctx, variant, "work", N, E, T)
    assert_point_meta(st, p, l, variant, "default", "work", "work",
                      offsets=[symbol_file_offset(path, "work")])
    return l, t


@test
def pie_started_before_attach(ctx):
    _count_one(ctx, "target_pie", True)


@test
def pie_started_after_attach(ctx):
    _count_one(ctx, "target_pie", False)


@test
def nopie_started_before_attach(ctx):
    _count_one(ctx, "target_nopie", True)


@test
def nopie_started_after_attach(ctx):
    _count_one(ctx, "target_nopie", False)


@test
def counts_accumulate_and_stats_without_app(ctx):
    """A second batch adds to total; with one app attached, stats needs no
    --app; the text view names the point."""
    l, t = _count_one(ctx, "target_pie", True)
    t.cmd("work 250 11 2 %d" % MS)
    r = ctx.sds(["stats", "--json"])
    check(r.rc == 0, "stats --json without --app (one app attached): %r" % r)
    p = get_point(json.loads(r.out), "work")
    bad = _mismatches(p, N + 250, E + 11, T + 2, True)
    check(not bad, "after a second batch: " + "; ".join(bad))
    r = ctx.sds(["stats", "--app", "target_pie"])
    check(r.rc == 0 and "work" in r.out, "stats (text): %r" % r)


def _slow_rate_function(ctx, start):
    """work() as a function point with slow_rate_threshold 40 and
    timeout_ms 20: 30 calls, 12 of them sleeping 30 ms (40 % slow).
    Returns the point's stats 3 ticks after the calls (the tick after
    the calls judges them: 3 done ticks hold at least 2 wholly after)."""
    path = ctx.copy("target_pie")
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump({"version": 1, "points": {"work": {
            "timeout_ms": TMO, "slow_rate_threshold": 40,
            "slow_rate_start": start}}}, f)
    ctx.attach(["--strategies", spath, path, WORK], "target_pie")
    t = ctx.start(path)
    t.cmd("work 30 0 12 %d" % MS)
    assert_counts(ctx, "target_pie", "work", 30, 0, 12)
    return get_point(wait_ticks(lambda: ctx.stats("target_pie"), 3), "work")


@test
def slow_rate_function_point(ctx):
    """Function points get the slow-call ratio too (the kernel counts the
    timeouts): 12 slow of 30 calls (40 %) above slow_rate_start 20 show
    the point tripped with reason slow_rate."""
    p = _slow_rate_function(ctx, 20)
    s = p.get("state") or {}
    check(s.get("downgraded") is True and s.get("reason") == "slow_rate",
          "40 %% slow over 30 calls, start 20: state %r, want downgraded, "
          "reason slow_rate" % s)


@test
def slow_rate_function_point_below_start(ctx):
    """The same calls below the minimum volume (slow_rate_start 50) do
    not trip."""
    p = _slow_rate_function(ctx, 50)
    s = p.get("state") or {}
    check(not s.get("downgraded"), "40 %% slow over 30 calls, start 50: "
          "state %r, want not downgraded" % s)


def _shared_lib(ctx, before):
    exe = ctx.copy("target_lib")
    lib = os.path.join(ctx.tmp, "libsdstarget.so")
    app = "libsdstarget_so"
    t = ctx.start(exe) if before else None
    l = ctx.attach([lib, "lw=lib_work:err=neg:timeout_ms=%d" % TMO], app)
    if not before:
        t = ctx.start(exe)
    t.cmd("work 50 5 0 0")          # the executable's work(): not ours
    t.cmd("libwork %d %d %d %d" % (N, E, T, MS))
    st, p = assert_counts(ctx, app, "lw", N, E, T)
    assert_point_meta(st, p, l, app, "default", "lw", "lib_work",
                      offsets=[symbol_file_offset(lib, "lib_work")])


@test
def shared_library_process_before_attach(ctx):
    _shared_lib(ctx, True)


@test
def shared_library_process_after_attach(ctx):
    _shared_lib(ctx, False)


@test
def two_processes_add_up(ctx):
    path = ctx.copy("target_pie")
    a = ctx.start(path)
    ctx.attach([path, WORK], "target_pie")
    b = ctx.start(path)
    a.cmd("work %d %d %d %d" % (N, E, T, MS))
    b.cmd("work 600 41 3 %d" % MS)
    assert_counts(ctx, "target_pie", "work", N + 600, E + 41, T + 3)


@test
def pid_filter_counts_one_process(ctx):
    path = ctx.copy("target_pie")
    a = ctx.start(path)
    b = ctx.start(path)
    ctx.attach(["--pid", str(a.pid), path, WORK], "target_pie")
    c = ctx.start(path)
    b.cmd("work 700 70 2 %d" % MS)
    a.cmd("work %d %d %d %d" % (N, E, T, MS))
    c.cmd("work 300 30 1 %d" % MS)
    b.cmd("recurse 5")
    assert_counts(ctx, "target_pie", "work", N, E, T)


@test
def threads_exact(ctx):
    """8 threads at once on many CPUs: per-CPU counts add up exactly.
    40,000 calls in a burst are far over the default probe budget (5% of
    a CPU): without --max-overhead 0 the budget may suspend the point
    mid-burst (tests/harm t_budget tests that), and this test is about
    the per-CPU sums."""
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach(["--max-overhead", "0", path, "work=work:err=neg"],
               "target_pie")
    t.cmd("threads 8 5000 700")
    assert_counts(ctx, "target_pie", "work", 40000, 5600, 0)


@test
def recursion_pairs(ctx):
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "rec=recurse"], "target_pie")
    t.cmd("recurse 10")
    assert_counts(ctx, "target_pie", "rec", 10, 0, 0)
    t.cmd("recurse 50")
    assert_counts(ctx, "target_pie", "rec", 60, 0, 0)


@test
def histogram_3ms_in_bucket_21(ctx):
    k = 20
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "work=work"], "target_pie")
    took = [int(x) for x in t.cmd("work %d 0 %d 3" % (k, k))[-1].split()[1:]]
    assert_counts(ctx, "target_pie", "work", k, 0, 0)
    r = ctx.sds(["hist", "--app", "target_pie", "work", "--json"])
    check(r.rc == 0, "hist --json: %r" % r)
    h = json.loads(r.out)
    check(h.get("point") == "work", "hist point = %r" % h.get("point"))
    check(h.get("unit") == "ns", "hist unit = %r" % h.get("unit"))
    b = h.get("buckets")
    check(isinstance(b, list) and len(b) == 64,
          "hist buckets: want 64 counts, got %r" % b)
    nz = {i: c for i, c in enumerate(b) if c}
    # A probe's latency lies within the call as the caller timed it: at
    # least the 3-ms sleep (bucket 21 starts at 2^21 ns), at most the
    # slowest call the target timed (a scheduler's delay on a busy machine
    # can push a 3-ms sleep past 4.19 ms, or further).
    check(took[0] >= 3000000, "target: a 3-ms call took %d ns" % took[0])
    top = took[1].bit_length() - 1
    if top > 21:
        log("the slowest call took %d ns: calls may be in buckets 21-%d"
            % (took[1], top))
    check(sum(b[21:top + 1]) == k and sum(b) == k and b[21] >= 1,
          "want %d calls of 3 ms in buckets 21-%d (the slowest took %d ns), "
          "got non-zero buckets %r" % (k, top, took[1], nz))
    p = get_point(ctx.stats("target_pie"), "work")
    p50 = p["latency_ns"].get("p50")
    check(isinstance(p50, (int, float)) and 2 ** 21 <= p50 < 2 ** 22,
          "latency_ns.p50 = %r, want within [2^21, 2^22)" % p50)
    # The funclatency-style table.  It may print once and exit, or keep
    # printing every interval: take what it printed within a few seconds.
    cmd = [SDS, "hist", "--app", "target_pie", "work"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=ctx.env,
                         start_new_session=True)
    ctx.others.append(p)
    try:
        out, err = p.communicate(timeout=4)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGINT)
        try:
            out, err = p.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            _kill_group(p)
            out, err = p.communicate()
    out = out.decode(errors="replace")
    check("nsecs" in out and any("|" in l and "*" in l for l in out.splitlines()),
          "hist (text) has no nsecs header or bar line: stdout %r stderr %r"
          % (out, err))
