# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The heartbeat both ways: a strategy written at the admin is in force at
the loader (and cached in its state dir), and the admin's sums of a
period equal the loader's statistics.
"""

import json
import os
import time

from e2e_lib import (A, APP, COUNTS, E, GROUP, KILL, MS, N, PERIOD, TMO, TS,
                     W_LIMIT, admin_of, admin_totals, assert_kill_switch,
                     assert_w_limit, get_point, make_app, need_point, offset_s,
                     per_period, period_of, sent_upto, strategy_doc, test,
                     totals, wait_safe, wait_strategy)
from sdstest import check, eq, heartbeat_after, log, wait_until


@test
def strategy_through_heartbeat(ctx):
    admin = ctx.admin()
    v = make_app(admin, {"order": KILL, "w": {"visit_threshold": W_LIMIT}})
    want = strategy_doc(admin)
    t = ctx.target()
    # The heartbeat's own path: the push channel (tests/fleet) would bring
    # the strategies at once.
    l = ctx.attach(admin.url, extra=["--no-push"])
    st = l.stats()
    a = admin_of(st)
    eq(a["urls"], [admin.url], "admin.urls")
    check(get_point(st, "order") is None,
          "point order exists before any heartbeat: %r" % get_point(st, "order"))
    cache = os.path.join(ctx.state_dir, "%s.%s.strategies.json" % (GROUP, APP))
    check(not os.path.exists(cache), "cache %s exists before any heartbeat"
          % cache)
    # The loader's first period (the one open when it started, which is
    # the next one when it was spawned just before a boundary) is sent at
    # its end + the offset; 3 s of margin for the post and the tick that
    # applies the reply.
    deadline = l.first_send() + 3.0
    check(deadline - l.started <= 25, "deadline %.1f s > 25 s" %
          (deadline - l.started))
    st = wait_strategy(l, v, deadline)
    log("strategies in force %.1f s after attach" % (time.time() - l.started))
    assert_kill_switch(st, v, "after the first heartbeat")
    eq(admin_of(st)["failures"], 0, "admin.failures")
    check(admin_of(st)["sent"] >= 1, "admin.sent %r" % admin_of(st)["sent"])
    # The cache holds what the admin serves.
    check(os.path.exists(cache), "no cache %s (state dir holds %r)"
          % (cache, os.listdir(ctx.state_dir)))
    with open(cache) as f:
        got = json.load(f)
    eq(got, want, "cached strategies in %s" % cache)
    # The function point's visit limit is in force too.
    assert_w_limit(ctx, l, t, "strategy from the admin")
    # The host is known to the admin.
    hosts = [h["host"] for h in admin.hosts()]
    eq(hosts, [admin_of(st)["host"]], "the admin's hosts of %s" % APP)

    # A change at the admin is in force after the next heartbeat: the
    # kill switch is lifted, w's limit raised above its 6 visits.
    doc = admin.ok("PUT", A + "/schemes/default/strategies",
                   {"points": {"w": {"visit_threshold": 1000}}})
    v2 = doc["version"]
    eq(v2, v + 1, "version after the change")
    want2 = strategy_doc(admin)
    # The first heartbeat posted after the change carries it.
    send = heartbeat_after(admin_of(l.stats()), time.time())
    st = wait_until(
        lambda: (lambda s: s if s.get("strategies_version") == v2 else None)(
            l.stats()),
        send + 3.0,
        lambda _: "version %d not in force 3 s after the next heartbeat: %r"
        % (v2, l.stats()))
    p = get_point(st, "order")
    check(p is None or p["state"].get("downgraded") is False,
          "order still downgraded after its strategy was removed: %r" % p)
    p = need_point(st, "w")
    eq((p["state"].get("downgraded"), totals(p)),
       (False, {"visits": W_LIMIT + 1, "exceptions": 0, "timeouts": 0,
                "downgrades": 0}),
       "w's state and totals under visit_threshold 1000")
    with open(cache) as f:
        eq(json.load(f), want2, "cache after the change")
    l.stop()


@test
def statistics_equal(ctx):
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url, point="w=work:err=neg:timeout_ms=%d" % TMO)
    first = l.first_period()
    off = offset_s(l)
    host = admin_of(l.stats())["host"]
    p = wait_safe()
    t.cmd("work %d %d %d %d" % (N, E, TS, MS))
    check(period_of(time.time()) == p and time.time() - p < 8.5,
          "the calls did not fit in period %d (now %.2f)" % (p, time.time()))
    lp = need_point(l.stats(), "w")
    want = {"visits": N, "exceptions": E, "timeouts": TS, "downgrades": 0}
    eq(totals(lp), want, "loader totals")
    eq(lp["latency_ns"]["count"], N, "loader latency_ns.count")
    # The period is sent once it ends, at the offset.
    wait_until(lambda: sent_upto(admin, l, host, p),
               p + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin by its offset + 4 s: "
               "hosts %r, loader admin %r" % (p, admin.hosts(),
                                              admin_of(l.stats())))
    st = l.stats()
    lp = need_point(st, "w")
    eq(totals(lp), want, "loader totals after the heartbeat")
    at, doc = admin_totals(admin, "w", first - PERIOD, p + PERIOD)
    got = {k: at["total"][k] for k in COUNTS}
    eq(got, totals(lp), "admin's sums over %d..%d vs the loader's totals"
       % (first - PERIOD, p + PERIOD))
    eq(per_period(at), {p: want}, "admin's periods with counts")
    hist = at["total"].get("latency_hist", [])
    eq(sum(hist), lp["latency_ns"]["count"],
       "admin's summed latency_hist vs the loader's latency_ns.count")
    a = admin_of(st)
    eq((a["dropped"], a["failures"], a["admin_errors"], a["last_error"]),
       (0, 0, 0, ""), "admin.dropped, failures, admin_errors, last_error")
    check(a["sent"] == (p - first) // PERIOD + 1,
          "admin.sent %d, want %d (periods %d..%d)"
          % (a["sent"], (p - first) // PERIOD + 1, first, p))
    l.stop()
