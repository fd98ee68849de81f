# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A delay drill started from sds-admin's API, dry run: a real sds-admin, a
loader attached with failfast=connect to the unmodified dltarget, the
drill carried in the heartbeat reply; two processes of the app call
fetch(), and the sockets of both are marked.  Stopped through the API,
the links go and nothing more is marked.
"""

import math
import os
import sys

import sdstest
from dl_lib import APP, HERE, check, dl_links, eq, test, wait_unhooked

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "copy"))
import copy_lib  # noqa: E402  (a real sds-admin)

A = "/api/v1/groups/default/apps/%s" % APP


@test
def admin_delay_drill_two_processes(ctx):
    """An API delay drill at ratio 50 over 100 fetch() calls in each of
    two processes: every call's socket marked or spared (200 exactly),
    the marked share within 5 standard deviations of 100, stats' drill
    delays equal to it; stopped through the API, unhooked, nothing more
    marked."""
    adm = copy_lib.Admin(ctx)
    sdstest.http_request(adm.port, "POST", "/api/v1/groups", {"name": "default"},
                         {"Authorization": "Bearer " + adm.TOKEN})
    adm.call("POST", "/api/v1/groups/default/apps", {"name": APP}, want=201)
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev, "--admin", adm.url, "--token-file",
                adm.token_file])
    t1, t2 = ctx.target(), ctx.target()
    d = adm.call("POST", A + "/drills", {"point": "fetch", "kind": "delay",
                                         "ratio": 50, "delay_ms": 200,
                                         "duration_s": 600, "by": "dl-test"},
                 want=201)
    p = sdstest.wait_admin_drill(ctx, d["id"])
    eq((p["kind"], p["ratio"], p["delay_ms"], p["devices"]),
       ("delay", 50, 200, "%s (dry run: no qdisc)" % net.dev), "the loader's drill")
    eq(dl_links(), ["sds_dl_connect4", "sds_dl_connect6", "sds_dl_egress"],
       "links during the drill")
    eq(t1.run("fetch", net, 100)[0], {"OK": 100}, "process 1")
    eq(t2.run("fetch", net, 100)[0], {"OK": 100}, "process 2")
    dl = ctx.delay()
    eq(dl["marked"] + dl["spared"], 200, "marked + spared")
    print("  200 calls in two processes at ratio 50 (API drill): %d marked"
          % dl["marked"])
    check(abs(dl["marked"] - 100) <= 5 * math.sqrt(50),
          "marked %d of 200 at ratio 50" % dl["marked"])
    check(dl["packets"] >= dl["marked"], "packets %d for %d marked sockets"
          % (dl["packets"], dl["marked"]))
    eq(ctx.point("fetch")["drill"]["delays"], dl["marked"], "stats' drill delays")
    adm.call("POST", A + "/drills/%d/stop" % d["id"], {"by": "dl-test"})
    sdstest.wait_admin_drill(ctx, None)
    wait_unhooked("after the API's stop")
    eq(t1.run("fetch", net, 20)[0], {"OK": 20}, "after the stop")
    eq(ctx.delay(), dl, "counts after the stop")
