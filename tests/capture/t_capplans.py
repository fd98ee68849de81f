# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The admin's copy plans reach the loader through the heartbeat reply
(a fake sds-admin here, real HTTP): the plan's sample_pct wins over the
spec, its servers are used without --copy-to, and the heartbeat carries
the point's copy_captured per period, exactly."""

import os
import time

import sdstest
from cap_lib import (APP, POINT, PlanAdmin, beat_in, body, check, copy_lib,
                     eq, loader_admin, test)


@test
def test_plan_from_admin(ctx):
    """A plan (sample_pct 100, expiring in an hour) for a point whose spec
    says copy_rate=0, its server from the reply: every call is captured
    and sent; the heartbeats' copy_captured add up to the calls."""
    n, size = 2000, 40
    shadow = ctx.shadow()
    srv = copy_lib.Server(ctx, [copy_lib.plan("p", [shadow.addr], app=APP,
                                              points=[POINT])])
    admin = PlanAdmin(ctx, {"servers": [srv.addr], "plans": [
        {"id": 1, "name": "p", "sample_pct": 100,
         "expires_at": int(time.time()) + 3600, "points": [POINT]}]})
    token = os.path.join(ctx.tmp, "token")
    sdstest.write_token(token, "t0ken-capture_for.tests")
    ctx.attach(["%s=handle_request:copy=1,2:copy_rate=0" % POINT],
               extra=["--admin", admin.url, "--token-file", token])
    t = ctx.target()
    # The plan is in the reply to the loader's first heartbeat.
    ctx.wait_copy(lambda c: c["rate"] == 100, "the plan's rate",
                  timeout=beat_in(ctx))
    t.go(n, size)
    c = ctx.wait_copy(lambda c: c["sent"] == n, "all sent")
    eq(c["captured"], n, "captured")
    eq(shadow.wait_count(n), n, "shadow received")
    eq({b for b, _ in shadow.got}, {body(1, i, size) for i in range(n)},
       "bodies")
    # Counted at the close of the period they were captured in, which
    # goes at its end + the offset.
    sdstest.wait_until(lambda: admin.captured() == n,
                       sdstest.period_sent_at(loader_admin(ctx), time.time())
                       + 3.0,
                       lambda _: "heartbeats' copy_captured %d, not %d"
                       % (admin.captured(), n), 0.5)
