# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""sds-copy serve: amplification, colouring, weights, writes, rate cap."""

import collections
import time

import sender
from copy_lib import Server, check, eq, plan, test


def zero_drops(p, what):
    eq(p["dropped"], {"write": 0, "expired": 0, "rate": 0, "queue": 0,
                      "shadow": 0, "reload": 0}, what + " drops")


@test
def t_http_x5_exact(ctx):
    """5,000 distinct requests x5 over http: the shadow gets exactly
    25,000, each body exactly 5 times, each coloured app/point."""
    sh = ctx.shadow(http=True)
    srv = Server(ctx, [plan("p", [sh.addr], app="orders",
                            points=["handle_request"], amplification=5,
                            framing="http")])
    bodies = [b"GET /item/%05d" % i for i in range(5000)]
    sender.send(srv.addr, [sender.record("orders", "handle_request", b)
                           for b in bodies])
    eq(sh.wait_count(25000, 60), 25000, "requests at the shadow")
    per = collections.Counter(b for b, _ in sh.got)
    eq(len(per), 5000, "distinct bodies")
    eq(set(per.values()), {5}, "copies of each body")
    eq(set(per) == set(bodies), True, "the bodies sent")
    eq({c for _, c in sh.got}, {"orders/handle_request"}, "X-SDS-Copy")
    p = srv.wait_settled("p")
    eq((p["received"], p["copies"], p["dispatched"], p["shadow_errors"]),
       (5000, 25000, 25000, 0), "received, copies, dispatched, errors")
    zero_drops(p, "plan p")
    st = srv.stats()
    eq((st["records"], st["unmatched"], st["bad_streams"]), (5000, 0, 0),
       "server records, unmatched, bad streams")
    srv.stop()


@test
def t_raw_weights_1_3(ctx):
    """Two endpoints weighted 1:3, 1,000 records x4 over raw: exactly
    1,000 and 3,000 copies (smooth WRR is exact per cycle), every body
    exactly 4 times in all."""
    a, b = ctx.shadow(), ctx.shadow()
    srv = Server(ctx, [plan("w", [a.addr, {"addr": b.addr, "weight": 3}],
                            amplification=4)])
    bodies = [b"line-%04d\n" % i for i in range(1000)]
    sender.send(srv.addr, [sender.record("app", "pt", x) for x in bodies])
    p = srv.wait_settled("w")
    eq((a.wait_count(1000), b.wait_count(3000)), (1000, 3000), "copies at A, B")
    eq([e["dispatched"] for e in p["endpoints"]], [1000, 3000], "stats per endpoint")
    per = collections.Counter(x for x, _ in a.got + b.got)
    eq(len(per), 1000, "distinct bodies")
    eq(set(per.values()), {4}, "copies of each body")
    eq(p["dispatched"], 4000, "dispatched")
    zero_drops(p, "plan w")
    srv.stop()


@test
def t_writes_need_permission(ctx):
    """Records of write points are dropped (and counted) unless the plan
    says writes: true; read records on the same stream still go."""
    sh, sw = ctx.shadow(), ctx.shadow()
    srv = Server(ctx, [plan("ro", [sh.addr], app="a", points=["r"], amplification=2),
                       plan("rw", [sw.addr], app="b", points=["w"], writes=True)])
    recs = []
    for i in range(300):
        recs.append(sender.record("a", "r", b"read-%d\n" % i))
        recs.append(sender.record("a", "r", b"write-%d\n" % i, write=True))
        recs.append(sender.record("b", "w", b"bw-%d\n" % i, write=True))
    sender.send(srv.addr, recs)
    ro, rw = srv.wait_settled("ro"), srv.wait_settled("rw")
    eq(sh.wait_count(600), 600, "read copies at the shadow")
    check(all(x.startswith(b"read-") for x, _ in sh.got), "a write was copied")
    eq((ro["received"], ro["dropped"]["write"], ro["dispatched"]), (600, 300, 600),
       "ro: received, dropped writes, dispatched")
    eq(sw.wait_count(300), 300, "allowed writes at the other shadow")
    eq((rw["received"], rw["dropped"]["write"], rw["dispatched"]), (300, 0, 300),
       "rw: received, dropped writes, dispatched")
    srv.stop()


@test
def t_rate_cap(ctx):
    """A cap of 500 copies/s: a burst of 3,000 records x2 is cut to what
    the bucket holds; every copy is dispatched or dropped as 'rate'."""
    sh = ctx.shadow()
    srv = Server(ctx, [plan("r", [sh.addr], amplification=2, rate=500)])
    t0 = time.monotonic()
    sender.send(srv.addr, [sender.record("app", "pt", b"r-%d\n" % i)
                           for i in range(3000)])
    p = srv.wait_settled("r")
    took = time.monotonic() - t0
    eq(p["copies"], 6000, "copies made")
    eq(p["dispatched"] + p["dropped"]["rate"], 6000, "dispatched + dropped(rate)")
    check(500 <= p["dispatched"] <= 500 * (took + 1),
          "dispatched %d in %.1f s at 500/s" % (p["dispatched"], took))
    eq(sh.wait_count(p["dispatched"]), p["dispatched"], "copies at the shadow")
    srv.stop()
