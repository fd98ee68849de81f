# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Capture at a guard point: a program linked with libsds offers its
requests with sds_copy() (tests/targets/guarded.c's "copy"), exact counts
end to end as at a function point."""

import collections
import json
import os
import time

import guarded
import sdstest
from cap_lib import body, check, copy_lib, eq, test

GAPP = "capguard"
GPOINT = "req"


def staged_guarded(ctx):
    """A copy of guarded_static of its own (inode, directory nobody else
    reaches), for one loader and one program."""
    return sdstest.stage(os.path.join(sdstest.BUILD, "test", "targets",
                                      "guarded_static"), ctx.tmp)


@test
def test_guard_point_x5(ctx):
    """5,000 sds_copy() calls at a guard point, --copy-to a plan x5: the
    shadow receives exactly 25,000 requests, each body 5 times; while the
    loader copies nothing, sds_copy() copies nothing."""
    n, size = 5000, 64
    shadow = ctx.shadow()
    srv = copy_lib.Server(ctx, [copy_lib.plan("g5", [shadow.addr], app=GAPP,
                                              points=[GPOINT],
                                              amplification=5)])
    path = staged_guarded(ctx)
    # Before any loader: the point is not bound, nothing is copied.
    t = guarded.Target(ctx, path)
    t.open(GAPP)
    eq(t.cmd("copy %s 100 %d" % (GPOINT, size)), ["copied 100 failed 0"],
       "sds_copy() with no loader")
    sdstest.AttachProcess(ctx, ["--app", GAPP, "--copy-to", srv.addr, path],
                          GAPP)
    sdstest.wait_until(lambda: sdstest.get_point(
        json.loads(ctx.sds(["stats", "--json", "--app", GAPP]).out), GPOINT,
        required=False), time.time() + 20, "the guard point never registered")
    ctx.wait_copy(lambda c: c["rate"] == 100, "capturing", timeout=30,
                  name=GPOINT, app=GAPP)
    eq(t.cmd("copy %s %d %d" % (GPOINT, n, size)),
       ["copied %d failed 0" % n], "sds_copy()")
    c = ctx.wait_copy(lambda c: c["sent"] == n, "all %d sent" % n,
                      name=GPOINT, app=GAPP)
    eq((c["captured"], c["dropped"], c["truncated"], c["lost"]),
       (n, 0, 0, 0), "captured, dropped, truncated, lost")
    eq(shadow.wait_count(5 * n), 5 * n, "requests the shadow received")
    counts = collections.Counter(b for b, _ in shadow.got)
    eq(set(counts), {body(2, i, size) for i in range(n)},
       "the bodies received (the second round's)")
    bad = [b for b, k in counts.items() if k != 5]
    check(not bad, "%d bodies not received exactly 5 times, e.g. %r"
          % (len(bad), bad[:3]))
    p = srv.wait_settled("g5")
    eq((p["received"], p["dispatched"]), (n, 5 * n),
       "sds-copy received, dispatched")
