# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The decision, on every kernel: the dry run's uprobes on libc take the
LSM programs' decision and count it (never denying), so the counts say
exactly which operations would have failed.
"""

import os
import signal
import time

import sdstest
from ff_lib import check, eq, test

KILL = {"visit_threshold": 0}
SPECS = ["fetch=fetch:failfast=connect,send:err=neg",
         "ffile=fetch_file:failfast=open:err=neg",
         "fsend=fetch_send:failfast=send:errno=EPIPE"]


def ff_eq(ctx, name, denied, probes=0, failing=None):
    f = ctx.ff(name)
    eq(f["denied"], denied, "%s: operations failed fast" % name)
    eq(f["probes"], probes, "%s: probe operations let through" % name)
    if failing is not None:
        eq(f["failing"], failing, "%s: failing" % name)
    return f


@test
def dry_inside_the_point_only(ctx):
    """Kill switch on fetch: its connect and send count (2 a call), the
    same thread's connects outside it and another process's do not."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    ctx.attach(SPECS)
    t = ctx.target()
    res, _, _ = t.run("fetch", srv.port, 2)
    eq(res, {"EAGAIN": 2}, "fetch in a dry run (nothing denied: the 2 s wait)")
    f = ff_eq(ctx, "fetch", 4, failing=True)
    eq((f["ops"], f["errno_socket"], f["errno_file"]),
       ("connect,send", "ECONNREFUSED", "EIO"), "fetch's failfast config")
    p = ctx.point("fetch")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (2, 2),
       "fetch's visits and exceptions")
    eq(t.run("connect", srv.port, 5)[0], {"OK": 5}, "connects outside fetch")
    other = ctx.target()
    eq(other.run("connect", srv.port, 5)[0], {"OK": 5},
       "another process's connects")
    eq(other.run("send", srv.port, 3)[0], {"OK": 3},
       "another process's sends inside fetch_send (passing)")
    ff_eq(ctx, "fetch", 4)
    ff_eq(ctx, "fsend", 0, failing=False)
    eq(t.run("file", ctx.file, 4)[0], {"OK": 4}, "fetch_file (passing)")
    f = ff_eq(ctx, "ffile", 0, failing=False)
    eq((f["ops"], f["errno_file"]), ("open", "EIO"), "ffile's failfast config")
    eq(ctx.ff("fsend")["errno_socket"], "EPIPE", "fsend's errno")
    r = ctx.sds(["stats", "--app", "fftarget"])
    lines = [x for x in r.out.splitlines() if x.startswith("failfast ")]
    eq(lines, ["failfast fetch: connect,send (ECONNREFUSED, EIO) failed 4, "
               "drilled 0, probes 0, failing",
               "failfast ffile: open (ECONNREFUSED, EIO) failed 0, drilled 0, "
               "probes 0",
               "failfast fsend: send (EPIPE, EPIPE) failed 0, drilled 0, "
               "probes 0"], "stats' failfast lines")


@test
def dry_on_and_off(ctx):
    """Points tripped and recovered by the strategies file: counted only
    while downgraded, each op in its own point."""
    srv = ctx.server()
    ctx.attach(SPECS)
    t = ctx.target()
    eq(t.run("file", ctx.file, 7)[0], {"OK": 7}, "fetch_file")
    ff_eq(ctx, "ffile", 0, failing=False)
    ctx.write_strategies({"ffile": KILL, "fsend": KILL})
    ff_eq(ctx, "ffile", 0, failing=True)
    eq(t.run("file", ctx.file, 7)[0], {"OK": 7}, "fetch_file, dry")
    eq(t.run("open", ctx.file, 3)[0], {"OK": 3}, "opens outside")
    eq(t.run("send", srv.port, 5)[0], {"OK": 5}, "sends inside fetch_send")
    ff_eq(ctx, "ffile", 7)
    ff_eq(ctx, "fsend", 5)
    ff_eq(ctx, "fetch", 0, failing=False)
    ctx.write_strategies({})
    ff_eq(ctx, "ffile", 7, failing=False)
    eq(t.run("file", ctx.file, 7)[0], {"OK": 7}, "fetch_file, recovered")
    eq(t.run("send", srv.port, 5)[0], {"OK": 5}, "sends, recovered")
    ff_eq(ctx, "ffile", 7)
    ff_eq(ctx, "fsend", 5)
    p = ctx.point("ffile")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (21, 0),
       "ffile's visits (a fast-failed call is a visit) and exceptions")


@test
def dry_hold_probes(ctx):
    """A hold lets one operation through per retry interval: none in the
    first interval, then exactly one."""
    ctx.write_strategies({"ffile": dict(KILL, delay_ms=600000,
                                        retry_interval_ms=1500)})
    ctx.attach(SPECS)
    t = ctx.target()
    t0 = time.monotonic()
    eq(t.run("file", ctx.file, 20)[0], {"OK": 20}, "fetch_file")
    check(time.monotonic() - t0 < 1.0, "20 calls took over 1 s: no bound")
    ff_eq(ctx, "ffile", 20, probes=0, failing=True)
    time.sleep(1.7)
    eq(t.run("file", ctx.file, 20)[0], {"OK": 20}, "fetch_file")
    ff_eq(ctx, "ffile", 39, probes=1)


@test
def dry_gone_with_the_loader(ctx):
    """The fail-fast programs are never pinned: a loader killed with
    SIGKILL leaves none of them in the kernel."""
    ctx.write_strategies({"ffile": KILL})
    a = ctx.attach(SPECS)
    names = sdstest.sds_progs_of(a.pid)
    check([n for n in names if n.startswith("sds_ff_dry")],
          "the loader's programs: %s" % names)
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)

    sdstest.wait_until(lambda: not sdstest.bpftool_progs("sds_ff"),
                       time.time() + 10,
                       lambda _: "sds_ff programs left: %s"
                       % sdstest.bpftool_progs("sds_ff"))


@test
def dry_only_named_operations(ctx):
    """fetch connects and sends; with failfast=send only its send counts."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    ctx.attach(["fetch=fetch:failfast=send:err=neg"])
    t = ctx.target()
    eq(t.run("fetch", srv.port, 1)[0], {"EAGAIN": 1}, "fetch, dry")
    f = ff_eq(ctx, "fetch", 1, failing=True)
    eq(f["ops"], "send", "fetch's operations")


@test
def dry_left_by_longjmp(ctx):
    """fetch_escape() longjmps out of itself: its frame stays on the
    thread's stack until the next probe, but the connect the thread then
    makes from higher up the stack is outside it and must not fail."""
    srv = ctx.server()
    ctx.write_strategies({"esc": KILL})
    ctx.attach(["esc=fetch_escape:failfast=connect"])
    t = ctx.target()
    eq(t.run("escape", srv.port, 5)[0], {"OK": 5}, "escape, then connect")
    p = ctx.point("esc")
    eq(p["total"]["visits"], 5, "esc's visits")
    ff_eq(ctx, "esc", 0, failing=True)


@test
def dry_hold_probe_outcome(ctx):
    """The probe call's return, judged by err=, ends or renews the hold as
    a guard's probe does: a failed one (ENOENT) keeps the point failing
    and the next probe an interval on, a good one ends the hold."""
    missing = os.path.join(ctx.tmp, "missing")
    ctx.write_strategies({"ffile": {"exception_threshold": 3,
                                    "delay_ms": 600000,
                                    "retry_interval_ms": 1000}})
    ctx.attach(SPECS)
    t = ctx.target()
    eq(t.run("file", missing, 3)[0], {"ENOENT": 3}, "fetch_file, missing")
    sdstest.wait_until(lambda: ctx.ff("ffile")["failing"], time.time() + 5,
                       "the hold never started", 0.05)
    t0 = time.monotonic()
    eq(t.run("file", missing, 5)[0], {"ENOENT": 5}, "in the first interval")
    ff_eq(ctx, "ffile", 5, probes=0, failing=True)
    time.sleep(max(0, t0 + 1.2 - time.monotonic()))
    eq(t.run("file", missing, 3)[0], {"ENOENT": 3}, "a failing probe")
    ff_eq(ctx, "ffile", 7, probes=1)
    time.sleep(0.5)
    ff_eq(ctx, "ffile", 7, probes=1, failing=True)
    time.sleep(1.0)
    eq(t.run("file", ctx.file, 1)[0], {"OK": 1}, "a good probe")
    sdstest.wait_until(lambda: not ctx.ff("ffile")["failing"],
                       time.time() + 5, "the good probe did not end the hold",
                       0.05)
    ff_eq(ctx, "ffile", 7, probes=2, failing=False)
    eq(t.run("file", ctx.file, 10)[0], {"OK": 10}, "after the hold")
    ff_eq(ctx, "ffile", 7, probes=2)
