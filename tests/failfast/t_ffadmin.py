# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Error drills on a failfast= function point started from sds-admin's API
(issue 15: "rehearse that dependency's failure from the dashboard"), on
the cgroup lever: a real sds-admin, a real loader attached with
failfast=connect to the unmodified fftarget, the drill carried in the
heartbeat reply with its "errno".  Registered only where the cgroup
lever is what attach uses; elsewhere a SKIP line with the reason.
"""

import math
import os
import sys
import time

import sdstest
from ff_lib import APP, HERE, cg_lever, check, eq, skip, test, wait_cg_clean

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "copy"))
import copy_lib  # noqa: E402  (a real sds-admin)

SPECS = ["fetch=fetch:failfast=connect:err=neg"]
A = "/api/v1/groups/default/apps/%s" % APP


def admin_app(ctx):
    adm = copy_lib.Admin(ctx)
    sdstest.http_request(adm.port, "POST", "/api/v1/groups", {"name": "default"},
                         {"Authorization": "Bearer " + adm.TOKEN})
    adm.call("POST", "/api/v1/groups/default/apps", {"name": APP}, want=201)
    return adm


def cg_admin_drill_errno(ctx):
    """An API drill at ratio 30 with errno ETIMEDOUT: of 10,000 fetch()
    connects, ETIMEDOUT within 5 standard deviations of 3,000, the rest
    OK; the loader's drilled/denied and drill faults equal that count.
    Stopped through the API: nothing denied.  A drill without "errno"
    fails with the point's ECONNREFUSED."""
    adm = admin_app(ctx)
    srv = ctx.server(reply=True)
    a = ctx.attach(SPECS, dry=False,
                   extra=["--admin", adm.url, "--token-file", adm.token_file])
    t = ctx.target()
    d = adm.call("POST", A + "/drills", {"point": "fetch", "kind": "error",
                                         "ratio": 30, "duration_s": 600,
                                         "errno": "ETIMEDOUT",
                                         "by": "ff-test"}, want=201)
    eq(d["errno"], "ETIMEDOUT", "the API's reply")
    p = sdstest.wait_admin_drill(ctx, d["id"])
    eq((p["errno"], p["ratio"]), ("ETIMEDOUT", 30), "the loader's drill")
    n = 10000
    t0 = time.monotonic()
    res = t.run("fetch", srv.port, n)[0]
    print("  10,000 fetch() under a 30%% API drill: %r in %.1f s"
          % (res, time.monotonic() - t0))
    bound = 5 * math.sqrt(n * 0.3 * 0.7)
    failed = res.get("ETIMEDOUT", 0)
    check(abs(failed - 0.3 * n) <= bound and failed + res.get("OK", 0) == n,
          "fetch under a 30%% drill: %r, want %d +- %.0f ETIMEDOUT, the rest "
          "OK" % (res, 0.3 * n, bound))
    f = ctx.ff("fetch")
    eq((f["drilled"], f["denied"]), (failed, failed), "drilled, denied")
    eq(ctx.point("fetch")["drill"]["faults"], failed, "stats' drill faults")
    eq(srv.accepted, n - failed, "connections the server saw")
    adm.call("POST", A + "/drills/%d/stop" % d["id"], {"by": "ff-test"})
    sdstest.wait_admin_drill(ctx, None)
    eq(t.run("fetch", srv.port, 200)[0], {"OK": 200}, "after the API's stop")
    eq(ctx.ff("fetch")["denied"], failed, "denied after the stop")
    d2 = adm.call("POST", A + "/drills", {"point": "fetch", "kind": "error",
                                          "ratio": 100, "duration_s": 600,
                                          "by": "ff-test"}, want=201)
    check(d2["errno"] is None, "reply errno %r" % d2["errno"])
    p = sdstest.wait_admin_drill(ctx, d2["id"])
    check("errno" not in p, "the loader's drill: %r" % p)
    eq(t.run("fetch", srv.port, 20)[0], {"ECONNREFUSED": 20},
       "a drill with the point's errno")
    adm.call("POST", A + "/drills/%d/stop" % d2["id"], {"by": "ff-test"})
    sdstest.wait_admin_drill(ctx, None)
    eq(t.run("fetch", srv.port, 20)[0], {"OK": 20}, "after the second stop")
    a.end()
    ctx.loader = None
    wait_cg_clean("after the test")


_ok, _why = cg_lever()
if _ok:
    test(cg_admin_drill_errno)
else:
    skip("cg_admin_drill_errno", _why)
