# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""`attach --copy-to` a real `sds-copy serve`: exact counts end to end."""

import collections
import json
import math
import os
import time

from cap_lib import APP, POINT, Fail, body, check, copy_lib, eq, test


@test
def test_copy_to_exact_x5(ctx):
    """5,000 calls at rate 100, a plan x5 to one raw shadow: 25,000
    requests received, each of the 5,000 bodies exactly 5 times."""
    n, size = 5000, 64
    shadow = ctx.shadow()
    srv = copy_lib.Server(ctx, [copy_lib.plan("x5", [shadow.addr], app=APP,
                                              points=[POINT],
                                              amplification=5)])
    ctx.attach(["%s=handle_request:copy=1,2" % POINT],
               extra=["--copy-to", srv.addr])
    t = ctx.target()
    ctx.wait_copy(lambda c: c["rate"] == 100, "capturing")
    t.go(n, size)
    c = ctx.wait_copy(lambda c: c["sent"] == n, "all %d sent" % n)
    eq(c["captured"], n, "captured")
    eq(c["dropped"], 0, "dropped")
    eq(c["truncated"], 0, "truncated")
    eq(c["lost"], 0, "lost")
    eq(c["rate"], 100, "rate")
    got = shadow.wait_count(5 * n)
    eq(got, 5 * n, "requests the shadow received")
    counts = collections.Counter(b for b, _ in shadow.got)
    want = {body(1, i, size) for i in range(n)}
    eq(set(counts), want, "the bodies received")
    bad = [b for b, k in counts.items() if k != 5]
    check(not bad, "%d bodies not received exactly 5 times, e.g. %r"
          % (len(bad), bad[:3]))
    p = srv.wait_settled("x5")
    eq(p["received"], n, "sds-copy received")
    eq(p["dispatched"], 5 * n, "sds-copy dispatched")
    # The table's column: captured/dropped.
    r = ctx.sds(["stats", "--app", APP])
    lines = r.out.splitlines()
    check("COPIED/DROP" in lines[1].split(), "stats header %r" % lines[1])
    col = lines[1].split().index("COPIED/DROP")
    row = [l.split() for l in lines[2:] if l.split()[0] == POINT][0]
    eq(row[col], "%d/0" % n, "stats table COPIED/DROP")


def binomial_ok(hits, n, pct):
    """Within 5 standard deviations: a false failure once in ~3.5 million."""
    p = pct / 100.0
    sd = math.sqrt(n * p * (1 - p))
    return abs(hits - n * p) <= 5 * sd


@test
def test_copy_rate_30(ctx):
    """copy_rate=30 over 10,000 calls: captured within a 5-sigma binomial
    bound, and captured == what sds-copy received == what the shadow got."""
    n, size = 10000, 48
    shadow = ctx.shadow()
    srv = copy_lib.Server(ctx, [copy_lib.plan("x1", [shadow.addr], app=APP,
                                              points=[POINT])])
    ctx.attach(["%s=handle_request:copy=1,2:copy_rate=30" % POINT],
               extra=["--copy-to", srv.addr])
    t = ctx.target()
    ctx.wait_copy(lambda c: c["rate"] == 30, "capturing")
    t.go(n, size)
    c = ctx.wait_copy(lambda c: c["sent"] == c["captured"] and
                      c["captured"] > 0, "all captured sent")
    check(binomial_ok(c["captured"], n, 30),
          "captured %d of %d at 30%%: outside 5 sigma" % (c["captured"], n))
    eq(c["dropped"], 0, "dropped")
    eq(c["lost"], 0, "lost")
    p = srv.wait_settled("x1")
    eq(p["received"], c["captured"], "sds-copy received == captured")
    eq(shadow.wait_count(c["captured"]), c["captured"], "shadow received")
    want = {body(1, i, size) for i in range(n)}
    got = [b for b, _ in shadow.got]
    eq(len(set(got)), len(got), "distinct bodies")
    check(set(got) <= want, "bodies not sent by the target")


@test
def test_copy_write_point(ctx):
    """A point whose strategy says "copy": "write" makes write records:
    a plan without "writes" copies none of them; with it, all."""
    n, size = 300, 40
    strat = os.path.join(ctx.tmp, "strategies.json")
    with open(strat, "w") as f:
        json.dump({"version": 1, "points": {POINT: {"copy": "write"}}}, f)
    shadow = ctx.shadow()
    srv = copy_lib.Server(ctx, [copy_lib.plan("w", [shadow.addr], app=APP,
                                              points=[POINT])])
    ctx.attach(["%s=handle_request:copy=1,2" % POINT],
               extra=["--copy-to", srv.addr, "--strategies", strat])
    t = ctx.target()
    ctx.wait_copy(lambda c: c["rate"] == 100, "capturing")
    t.go(n, size)
    ctx.wait_copy(lambda c: c["sent"] == n, "all sent")
    p = srv.wait_settled("w")
    eq(p["received"], n, "received")
    eq(p["dropped"]["write"], n, "dropped.write")
    eq(p["dispatched"], 0, "dispatched")
    eq(shadow.count(), 0, "shadow received")
    # The plan allows writes now: every record is copied.
    srv.write_plans([copy_lib.plan("w", [shadow.addr], app=APP,
                                   points=[POINT], writes=True)])
    srv.hup()
    time.sleep(0.5)
    t.go(n, size)
    eq(shadow.wait_count(n), n, "shadow received with writes allowed")
    eq({b for b, _ in shadow.got}, {body(2, i, size) for i in range(n)},
       "bodies")
