# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The whole chain with nothing faked: a plan made in a real sds-admin
(its API, as the dashboard makes it) reaches the loader of an unmodified
program and a real `sds-copy serve --admin` through their heartbeats; the
program's calls reach the shadow x3, exactly; the admin's per-period
stats of the plan add up to the calls captured, received and dispatched."""

import collections
import time

import sdstest
from cap_lib import (APP, POINT, beat_in, body, check, copy_lib, eq,
                     loader_admin, test)

PLANS = "/api/v1/groups/default/apps/%s/copy-plans" % APP


def plan_totals(adm, pid):
    doc = adm.call("GET", PLANS + "/%d/stats?from=0&to=%d"
                   % (pid, time.time() + 60))
    return {k: sum(x[k] for x in doc["periods"])
            for k in ("captured", "dropped", "received", "dispatched",
                      "shadow_errors", "server_dropped")}


@test
def test_chain_admin_loader_copy(ctx):
    """2,000 calls of handle_request in copytarget, a plan x3 made in
    sds-admin: 6,000 requests at the shadow, each body 3 times; the
    plan's stats at the admin: captured 2,000 (the loader's heartbeats),
    received 2,000 and dispatched 6,000 (sds-copy's); a stop ends the
    capture at the loader's next heartbeat."""
    n, size = 2000, 48
    adm = copy_lib.Admin(ctx)
    shadow = ctx.shadow()
    adm.call("POST", "/api/v1/groups", {"name": "default"}, want=201)
    adm.call("POST", "/api/v1/groups/default/apps", {"name": APP}, want=201)
    p = adm.call("POST", PLANS, {"name": "x3", "points": [POINT],
                                 "amplification": 3, "shadows": [shadow.addr],
                                 "duration_s": 600, "by": "t_capchain"},
                 want=201)
    srv = copy_lib.Server(ctx, None, name="chain",
                          admin=["--admin", adm.url,
                                 "--token-file", adm.token_file])
    sdstest.wait_until(
        lambda: [x["addr"] for x in adm.call("GET", "/api/v1/copy-servers")
                 if x["live"]] == [srv.addr], time.time() + 20,
        "sds-copy never reached the admin")
    ctx.attach(["%s=handle_request:copy=1,2:copy_rate=0" % POINT],
               extra=["--admin", adm.url, "--token-file", adm.token_file])
    t = ctx.target()
    # The plan is in the reply to the loader's first heartbeat.
    ctx.wait_copy(lambda c: c["rate"] == 100, "the plan's rate at the loader",
                  timeout=beat_in(ctx))
    sdstest.wait_until(lambda: srv.plan_stats("x3"), time.time() + 20,
                       "the plan never reached sds-copy")
    t.go(n, size)
    c = ctx.wait_copy(lambda c: c["sent"] == n, "all %d sent" % n)
    eq((c["captured"], c["dropped"], c["lost"]), (n, 0, 0),
       "captured, dropped, lost")
    eq(shadow.wait_count(3 * n), 3 * n, "requests at the shadow")
    counts = collections.Counter(b for b, _ in shadow.got)
    eq(set(counts), {body(1, i, size) for i in range(n)}, "bodies")
    check(set(counts.values()) == {3}, "a body not received 3 times")
    want = {"captured": n, "dropped": 0, "received": n, "dispatched": 3 * n,
            "shadow_errors": 0, "server_dropped": 0}
    got = sdstest.wait_until(
        lambda: (lambda t: t if t == want else None)(plan_totals(adm, p["id"])),
        time.time() + 60,
        lambda _: "the plan's stats at the admin %r, want %r"
        % (plan_totals(adm, p["id"]), want), 1.0)
    eq(got, want, "the plan's stats at the admin")
    adm.call("POST", PLANS + "/%d/stop" % p["id"], {"by": "t_capchain"})
    ctx.wait_copy(lambda c: c["rate"] == 0, "the stop at the loader",
                  timeout=beat_in(ctx))
    t.go(100, size)
    time.sleep(0.5)
    eq(ctx.copy_counts()["captured"], n, "captured after the stop")
