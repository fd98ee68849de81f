# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A thread that calls execve() from inside a failfast point never returns
from it, and its frame of the point outlives the exec in task storage:
the program it execs is inside no point, and nothing it does may fail
fast.  fftarget's fetch_exec() connects N times from inside the point,
then execs ffexec, which connects N times more from a stack below any the
exec'ing program had (so a surviving frame would count whatever ASLR
chose).  A thread that execs TARGET again gives the old frame up at its
next probed call.  The dry run's tests run on every kernel; the cgroup
lever's where attach uses it (else a SKIP line with the reason).
"""

import time

import sdstest
from ff_lib import cg_lever, check, eq, skip, test, wait_cg_clean

KILL = {"visit_threshold": 0}
# fetch on the pair path too (a point with :failfast= stays there): its
# entry is the push that gives an exec'd-over frame up.
SPECS = ["fexec=fetch_exec:failfast=connect:err=neg",
         "fetch=fetch:failfast=connect:err=neg"]
N = 20


def helper_line(t):
    """ffexec's one line ({outcome: count}), then its exit status 0."""
    line = t.p.stdout.readline().decode().split()
    check(line and line[0] == "res", "ffexec said %r" % line)
    res = {k: int(v) for k, v in (w.split("=") for w in line[1:] if "=" in w)}
    eq(t.p.wait(10), 0, "ffexec's exit status")
    return res


def exec_from_the_point(ctx, dry):
    """Kill switch on fexec: fetch_exec's N connects (refused, or in a dry
    run counted and let through), then the exec'd ffexec's N, all of which
    reach the live server; fexec's counts are fetch_exec's alone."""
    srv = ctx.server(reply=True)
    ctx.write_strategies({"fexec": KILL})
    a = ctx.attach(SPECS, dry=dry)
    t = ctx.target()
    eq(t.run("exec", srv.port, N)[0], {"OK": N} if dry else {"ECONNREFUSED": N},
       "fetch_exec's connects before its execve")
    eq(helper_line(t), {"OK": N}, "the exec'd program's connects")
    want = (N if dry else 0) + N
    sdstest.wait_until(lambda: srv.accepted >= want, time.time() + 5,
                       lambda _: "the server saw %d connections, want %d"
                       % (srv.accepted, want), 0.05)
    eq(srv.accepted, want, "connections the server saw")
    f = ctx.ff("fexec")
    eq((f["denied"], f["probes"], f["failing"]), (N, 0, True),
       "fexec: denied (fetch_exec's connects only), probes, failing")
    eq(ctx.point("fexec")["total"]["visits"], 1, "fexec's visits")
    return a


@test
def dry_exec_leaves_the_point(ctx):
    """Dry run: fetch_exec's N connects count as failed (and run); the
    exec'd ffexec's N do not count."""
    exec_from_the_point(ctx, True)


@test
def dry_reexec_gives_the_frame_up(ctx):
    """fetch_exec execs fftarget itself: fexec's call stays in flight (1)
    until the new program's first probed call, one fetch() (from a stack
    below the old frame, so that unwinding by the stack pointer cannot
    pop it), gives its frame up (0); the new program's N connects outside
    any point do not count, and fexec's counts are the first program's
    N."""
    srv = ctx.server(reply=True)
    ctx.write_strategies({"fexec": KILL})
    ctx.attach(SPECS)
    t = ctx.target()
    eq(t.run("reexec", srv.port, N)[0], {"OK": N},
       "fetch_exec's connects before its execve (a dry run denies none)")
    eq(t.p.stdout.readline().strip(), b"ready", "the new program's first line")
    eq(ctx.point("fexec")["concurrency"], 1, "fexec's calls in flight after "
       "the exec")
    eq(t.run("lowfetch", srv.port, 1)[0], {"OK": 1},
       "the new program's fetch()")
    eq((ctx.point("fexec")["concurrency"], ctx.point("fetch")["concurrency"]),
       (0, 0), "fexec's and fetch's calls in flight after fetch()")
    eq(t.run("connect", srv.port, N)[0], {"OK": N},
       "the new program's connects outside any point")
    f = ctx.ff("fexec")
    eq((f["denied"], f["probes"]), (N, 0), "fexec: denied, probes")
    eq(ctx.point("fexec")["total"]["visits"], 1, "fexec's visits")


def cg_exec_leaves_the_point(ctx):
    """Cgroup lever: fetch_exec's N connects fail fast with ECONNREFUSED;
    the exec'd ffexec's N connect to the live server, N of N."""
    a = exec_from_the_point(ctx, False)
    a.end()
    ctx.loader = None
    wait_cg_clean("after the test")


_ok, _why = cg_lever()
if _ok:
    test(cg_exec_leaves_the_point)
else:
    skip(cg_exec_leaves_the_point.__name__, _why)
