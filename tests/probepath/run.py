#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The two probe paths of a function point (docs/PROBES.md, issue 14): every
test here runs once with SDS_PROBE_PATH=session and once with =pair, on
the integration suite's targets and harness (tests/integration/run.py),
with exact counts: recursion past the kernel's 64 nested return
instances, longjmp, threads that die inside a call, the error predicate,
the latency histogram's bins; plus what `attach` and `stats --json` say
of the path, and a bad SDS_PROBE_PATH.

Run as root (make probepath-tests):

    python3 tests/probepath/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped".  Python 3 standard library only.
"""

import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "integration", os.path.join(os.path.dirname(HERE), "integration", "run.py"))
it = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(it)
sdstest = it.sdstest
check, get_point, Fail = it.check, it.get_point, it.Fail

SUITE = sdstest.Suite(timeout=it.TEST_TIMEOUT)
PATHS = sdstest.PROBE_PATHS


on_both = sdstest.on_probe_paths(SUITE)


def point_probe(ctx, app, name):
    return get_point(ctx.stats(app), name).get("probe")


@on_both
def path_shown(ctx, path):
    """attach's last table line and stats' "probe" name the path; a
    :failfast= point stays on the pair."""
    p = ctx.copy("target_pie")
    ctx.start(p)
    l = ctx.attach([p, "work=work", "ff=recurse:failfast=connect"], "target_pie")
    out = l.stdout()
    want = ("probe path: session (uprobe session, kernel >= 6.12)"
            if path == "session" else "probe path: pair (SDS_PROBE_PATH=pair)")
    check(want in out.splitlines(), "attach: want the line %r in %r" % (want, out))
    check(point_probe(ctx, "target_pie", "work") == path,
          "stats: work's probe = %r, want %r"
          % (point_probe(ctx, "target_pie", "work"), path))
    check(point_probe(ctx, "target_pie", "ff") == "pair",
          "stats: a failfast= point's probe = %r, want pair"
          % point_probe(ctx, "target_pie", "ff"))


@on_both
def recursion_past_64(ctx, path):
    """recurse 10, then 70 and 100 deep: the kernel keeps at most 64
    nested return instances; every call is a visit, at most 64 of each
    deep recursion complete, and concurrency is 0 after each."""
    p = ctx.copy("target_pie")
    t = ctx.start(p)
    ctx.attach([p, "rec=recurse"], "target_pie")
    t.cmd("recurse 10")
    it.assert_counts(ctx, "target_pie", "rec", 10, 0, 0)
    prev = 10
    for n, total in ((70, 80), (100, 180)):
        t.cmd("recurse %d" % n)
        q = it.wait_point(ctx, "target_pie", "rec",
                          lambda q: q.get("concurrency") == 0
                          and q["total"]["visits"] == total,
                          "concurrency 0 after recurse %d" % n)
        done = q["latency_ns"]["count"] - prev
        check(0 < done <= 64, "recurse %d: %d of its calls completed, want "
              "1 to 64: %s" % (n, done, json.dumps(q)))
        prev += done
    t.cmd("work 10 0 0 0")


@on_both
def longjmp_and_thread_death(ctx, path):
    """100 longjmps out of jumper() and 5 threads dying inside exiter():
    both gauges back to 0, none of those calls completed, and work()
    on the same process still pairs every call."""
    p = ctx.copy("target_pie")
    t = ctx.start(p)
    ctx.attach([p, "jmp=jumper", "ex=exiter", "work=work"], "target_pie")
    t.cmd("longjmp 100")
    t.cmd("threadexit 5")
    t.cmd("work 10 0 0 0")
    for name, visits in (("jmp", 100), ("ex", 5)):
        q = it.wait_point(ctx, "target_pie", name,
                          lambda q: q.get("concurrency") == 0,
                          "%s's in-flight gauge back to 0" % name)
        check(q["total"]["visits"] == visits and q["latency_ns"]["count"] == 0,
              "%s: want %d visits, 0 completed: %s" % (name, visits, json.dumps(q)))
    it.assert_counts(ctx, "target_pie", "work", 10, 0, 0)


@on_both
def longjmp_out_of_deep_recursion(ctx, path):
    """One longjmp out of diver() 20 deep: the next work() entry gives
    all 20 back (the kernel frees them all there, not 8).  Then one out
    of 70 deep (past the kernel's 64 return instances): the kernel keeps
    the 64 dead ones and no return for this thread's later calls, so on
    the session path they stay in flight, given back once, not at every
    entry, when the process is killed.  Exact: dive 90 visits, none
    completed, 0 in flight at the end; work 15 visits, the 5 before the
    deep longjmp completed."""
    p = ctx.copy("target_pie")
    t = ctx.start(p)
    ctx.attach([p, "dive=diver", "work=work"], "target_pie")
    t.cmd("deepjmp 20")
    t.cmd("work 5 0 0 0")
    it.wait_point(ctx, "target_pie", "dive",
                  lambda q: q.get("concurrency") == 0,
                  "dive's in-flight gauge back to 0 after 20")
    it.assert_counts(ctx, "target_pie", "work", 5, 0, 0)
    t.cmd("deepjmp 70")
    t.cmd("work 5 0 0 0")
    t.cmd("work 5 0 0 0")
    if path == "session":
        q = it.wait_point(ctx, "target_pie", "dive",
                          lambda q: q["total"]["visits"] == 90,
                          "dive's 90 visits")
        check(q.get("concurrency") == 64,
              "session: want the kernel's 64 dead instances in flight, "
              "once: %s" % json.dumps(q))
    t.kill()
    q = it.wait_point(ctx, "target_pie", "dive",
                      lambda q: q.get("concurrency") == 0,
                      "dive's in-flight gauge back to 0 after the kill")
    time.sleep(0.5)
    q = get_point(ctx.stats("target_pie"), "dive")
    check(q.get("concurrency") == 0 and q["total"]["visits"] == 90
          and q["latency_ns"]["count"] == 0,
          "dive: want 0 in flight, 90 visits, 0 completed: %s" % json.dumps(q))
    w = get_point(ctx.stats("target_pie"), "work")
    check(w.get("concurrency") == 0 and w["total"]["visits"] == 15
          and w["latency_ns"]["count"] == 5,
          "work: want 0 in flight, 15 visits, 5 completed: %s" % json.dumps(w))


@on_both
def errors_and_histogram(ctx, path):
    """work(): 100 calls, 30 return -5 (err=neg), 20 others sleep 30 ms
    (timeout 20 ms): 30 exceptions, 20 timeouts, the 20 slow calls in the
    buckets from 24 up (>= 2^24 ns = 16.8 ms; a loaded machine sleeps
    longer), the 80 others below (generous: a fast call here takes us)."""
    p = ctx.copy("target_pie")
    t = ctx.start(p)
    ctx.attach([p, "work=work:err=neg:timeout_ms=20"], "target_pie")
    t.cmd("work 100 30 20 30")
    it.assert_counts(ctx, "target_pie", "work", 100, 30, 20)
    r = ctx.sds(["hist", "--app", "target_pie", "work", "--json"])
    check(r.rc == 0, "hist --json: %r" % r)
    b = json.loads(r.out).get("buckets") or []
    check(len(b) == 64 and sum(b[24:]) == 20 and sum(b[:24]) == 80,
          "want 20 calls in bucket 24 or above, 80 below: %r"
          % {i: c for i, c in enumerate(b) if c})


@SUITE.test
def bad_probe_path(ctx):
    """SDS_PROBE_PATH=fast: one line, exit 1, nothing left behind."""
    p = ctx.copy("target_pie")
    env = dict(ctx.env, SDS_PROBE_PATH="fast")
    r = ctx.sds(["attach", p, "work=work"], env=env, timeout=20)
    want = "sds-bpf: SDS_PROBE_PATH=fast: want auto, session or pair"
    check(r.rc == 1 and r.err.strip() == want,
          "want exit 1 and %r, got %r" % (want, r))
    check(not os.listdir(ctx.run_dir) or
          not any(f.endswith(".sock") for f in os.listdir(ctx.run_dir)),
          "a socket was left in %s" % ctx.run_dir)


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, it.Ctx, **it.CHECKS))
