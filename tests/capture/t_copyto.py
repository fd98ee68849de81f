# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""`attach --copy-to` a real `sds-copy serve`: exact counts end to end."""

import collections

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
