# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The real thing: LSM programs deny.  Registered only where the kernel
loads BPF LSM programs; elsewhere each prints a SKIP line with the reason
and what runs instead (t_ffcg.py's cgroup lever for connect; the refusal
of open there) and is not counted.
"""

import math
import os
import signal
import time

from ff_lib import check, eq, lsm_loads, skip, test

KILL = {"visit_threshold": 0}
SPECS = ["fetch=fetch:failfast=connect,send:err=neg",
         "ffile=fetch_file:failfast=open:errno=EACCES:err=neg"]


def lsm_fetch_fails_fast(ctx):
    """Kill switch: fetch() returns ECONNREFUSED at once (median of 100
    under 10 ms) instead of waiting 2 s; the same thread's connects
    outside fetch() and another process's succeed; counts exact.  Off
    again: fetch() waits for the server as before."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    ctx.attach(SPECS, dry=False)
    t = ctx.target()
    res, med, _ = t.run("fetch", srv.port, 100)
    eq(res, {"ECONNREFUSED": 100}, "fetch under the kill switch")
    check(med < 10 * 1000 * 1000, "median fetch %d ns, want < 10 ms" % med)
    eq(t.run("connect", srv.port, 5)[0], {"OK": 5}, "connects outside fetch")
    other = ctx.target()
    eq(other.run("connect", srv.port, 5)[0], {"OK": 5},
       "another process's connects")
    f = ctx.ff("fetch")
    # connect is refused, so fetch never sends: one operation a call.
    eq((f["denied"], f["probes"], f["failing"]), (100, 0, True),
       "fetch: denied, probes, failing")
    p = ctx.point("fetch")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (100, 100),
       "fetch's visits and exceptions")
    ctx.write_strategies({})
    res, med, _ = t.run("fetch", srv.port, 1)
    eq(res, {"EAGAIN": 1}, "fetch with the point passing")
    check(med > 1900 * 1000 * 1000, "fetch took %d ns: not the 2 s wait" % med)
    eq(ctx.ff("fetch")["denied"], 100, "fetch: denied after recovery")


def lsm_file_errno(ctx):
    """open inside fetch_file() fails with the spec's errno; outside it
    succeeds."""
    ctx.write_strategies({"ffile": KILL})
    ctx.attach(SPECS, dry=False)
    t = ctx.target()
    eq(t.run("file", ctx.file, 10)[0], {"EACCES": 10}, "fetch_file")
    eq(t.run("open", ctx.file, 10)[0], {"OK": 10}, "opens outside")
    eq(ctx.ff("ffile")["denied"], 10, "ffile: denied")


def lsm_gone_with_the_loader(ctx):
    """A loader killed with SIGKILL denies nothing more: its links are
    gone with it."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    eq(t.run("fetch", srv.port, 3)[0], {"ECONNREFUSED": 3}, "fetch")
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)
    time.sleep(0.5)
    eq(t.run("connect", srv.port, 1)[0], {"OK": 1}, "connect")
    res, med, _ = t.run("fetch", srv.port, 1)
    eq(res, {"EAGAIN": 1}, "fetch after the loader died")


def lsm_drill(ctx):
    """An error drill at ratio 30 fails that share of fetch_file's opens
    with its errno, within 5 standard deviations; none after --for."""
    ctx.attach(SPECS, dry=False)
    t = ctx.target()
    r = ctx.sds(["drill", "--app", "fftarget", "ffile", "--error", "--ratio",
                 "30", "--for", "3"])
    eq(r.rc, 0, "drill: %r" % r)
    n = 3000
    res = t.run("file", ctx.file, n)[0]
    bound = 5 * math.sqrt(n * 0.3 * 0.7)
    check(abs(res.get("EACCES", 0) - 0.3 * n) <= bound and
          res.get("EACCES", 0) + res.get("OK", 0) == n,
          "fetch_file under a 30%% drill: %r" % res)
    eq(ctx.ff("ffile")["drilled"], res["EACCES"], "drilled")
    time.sleep(3.2)
    eq(t.run("file", ctx.file, 200)[0], {"OK": 200}, "after the drill")


_ok, _why = lsm_loads()
# What runs instead where LSM programs do not load: t_ffcg.py's cgroup
# lever covers connect; open (and TCP send) have no other hook.
_INSTEAD = {lsm_fetch_fails_fast: "cg_fetch_fails_fast",
            lsm_gone_with_the_loader: "cg_gone_with_the_loader",
            lsm_drill: "cg_drill"}
for _fn in (lsm_fetch_fails_fast, lsm_file_errno, lsm_gone_with_the_loader,
            lsm_drill):
    if _ok:
        test(_fn)
    elif _fn in _INSTEAD:
        skip(_fn.__name__, "%s (connect is tested through the cgroup hooks "
             "where they load: %s)" % (_why, _INSTEAD[_fn]))
    else:
        skip(_fn.__name__, "%s (open can be failed only by BPF LSM)" % _why)
