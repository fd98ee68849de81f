# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Heartbeats: their sums per period and host, and each point's probe-budget
state (issue 9), on a new database and on one written before the budget.
"""

import json
import os
import sqlite3

from sdstest import check, eq
from admin_lib import APP, DROP_8, T0, heartbeat, only, pt, test


@test
def test_heartbeat_aggregation(env):
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    env.ok("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 500})
    h1 = [0] * 12 + [7, 3]             # 2^12 .. 2^14 ns
    h2 = [0] * 12 + [1, 0, 0, 9]
    hbs = [
        heartbeat("web-1", T0, {"order": pt(100, 5, 2, 1, 4, h1), "pay": pt(10, 1)}),
        heartbeat("web-2", T0, {"order": pt(40, 1, 0, 3, 9, h2)}, ip="::1"),
        heartbeat("web-1", T0 + 10, {"order": pt(7, 0, 0, 0, 2, [1])}),
        heartbeat("web-2", T0 + 20, {"order": pt(11, 2, 1, 0, 5)}, ip="::1"),
    ]
    for hb in hbs:
        r = env.ok("POST", "/heartbeat", hb)
        eq((r["version"], r["changed"], r["drills"]), (2, True, []), "first reply")
        eq(r["strategies"], {"version": 2, "points": {"order": {"visit_threshold": 500,
                                                                "downgrade_rate": 100}}},
           "strategies in the reply")
    # A repeat of (host, period) adds nothing, even with other numbers.
    rep = heartbeat("web-1", T0, {"order": pt(99999)}, version=2)
    r = env.ok("POST", "/heartbeat", rep)
    eq((r["version"], r["changed"], r["strategies"]), (2, False, None), "reply of an up-to-date host")

    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 30))
    eq((s["from"], s["to"], s["step"]), (T0, T0 + 30, 10), "range")
    o = s["points"]["order"]
    eq(o["t"], [T0, T0 + 10, T0 + 20], "t")
    eq(o["visits"], [140, 7, 11], "visits summed over hosts")
    eq(o["exceptions"], [6, 0, 2], "exceptions")
    eq(o["timeouts"], [2, 0, 1], "timeouts")
    eq(o["downgrades"], [4, 0, 0], "downgrades")
    eq(o["max_concurrency"], [9, 2, 5], "max concurrency (max over hosts)")
    tot = o["total"]
    eq((tot["visits"], tot["exceptions"], tot["timeouts"], tot["downgrades"],
        tot["max_concurrency"]), (158, 8, 3, 4, 9), "totals")
    eq(tot["latency_hist"], [1] + [0] * 11 + [8, 3, 0, 9], "summed histogram")
    # p50 of [8 in 2^12, 3 in 2^13, 9 in 2^15] (+1 at 2^0): the 11th of 21 is in 2^13.
    check(8192 <= tot["p50_ns"] < 16384, "p50 %d not in [2^13, 2^14)" % tot["p50_ns"])
    check(32768 <= tot["p99_ns"] < 65536, "p99 %d not in [2^15, 2^16)" % tot["p99_ns"])
    eq(s["points"]["pay"]["visits"], [10, 0, 0], "pay visits")

    # A wider step: buckets aligned to it, sums and max inside each.
    f = T0 - T0 % 30
    want_v, want_c = {}, {}
    for p, v, c in ((T0, 140, 9), (T0 + 10, 7, 2), (T0 + 20, 11, 5)):
        k = (p - f) // 30
        want_v[k] = want_v.get(k, 0) + v
        want_c[k] = max(want_c.get(k, 0), c)
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=30&point=order" % (T0, T0 + 30))
    eq(list(s["points"]), ["order"], "one point asked")
    eq(s["from"], f, "from aligned to the step")
    n = len(s["points"]["order"]["t"])
    eq((s["points"]["order"]["visits"], s["points"]["order"]["max_concurrency"]),
       ([want_v.get(k, 0) for k in range(n)], [want_c.get(k, 0) for k in range(n)]),
       "30-s steps")
    # An automatic step fits the range.
    s = env.ok("GET", APP + "/stats?from=%d&to=%d" % (T0 - 86400, T0 + 30))
    check(s["step"] >= 240 and len(s["points"]["order"]["t"]) <= 361, "auto step %d" % s["step"])
    eq(s["points"]["order"]["total"]["visits"], 158, "total over a day")

    hosts = env.ok("GET", APP + "/hosts")
    eq([(h["host"], h["ip"], h["last_period"], h["version"], h["in_sync"]) for h in hosts],
       [("web-1", "127.0.0.1", T0 + 10, 2, True), ("web-2", "::1", T0 + 20, 0, False)], "hosts")
    ev = env.ok("GET", APP + "/events?from=%d&to=%d" % (T0, T0 + 30))
    eq(sorted((e["host"], e["point"], e["downgrades"]) for e in ev),
       [("web-1", "order", 1), ("web-2", "order", 3)], "downgrade events")
    pts = env.ok("GET", APP + "/points")
    eq(pts, ["order", "pay"], "points")

    # An unknown app registers itself through its first heartbeat.
    r = env.ok("POST", "/heartbeat", heartbeat("h", T0, {"x": pt(1)}, group="other", app="new"))
    eq((r["version"], r["changed"], r["strategies"]), (1, True, {"version": 1, "points": {}}),
       "reply to a new app")
    eq(env.ok("GET", "/groups/other/apps/new")["active_scheme"], "default", "registered app")

    m = env.req("GET", "/metrics", token=False)[1]
    check("sds_admin_heartbeats_total 5" in m, "metrics: heartbeats_total 5:\n" + m)
    check("sds_admin_heartbeat_duplicates_total 1" in m, "metrics: duplicates 1")
    check("# TYPE sds_admin_http_requests_total counter" in m, "metrics: TYPE line")
    env.stop_admin()


def budget_state(env, frm, to):
    """{point: (suspended, overhead_pct, as_of)} of GET stats, and its raw text."""
    path = "/api/v1" + APP + "/stats?from=%d&to=%d&step=10" % (frm, to)
    c = env.conn()
    try:
        c.request("GET", path)
        r = c.getresponse()
        text = r.read().decode()
    finally:
        c.close()
    eq(r.status, 200, "GET stats status: %s" % text)
    doc = json.loads(text)
    for name, p in doc["points"].items():
        check(p["suspended"] in (True, False), "%s: suspended %r not a boolean"
              % (name, p["suspended"]))
    return {n: (p["suspended"], p["overhead_pct"], p["as_of"])
            for n, p in doc["points"].items()}, text


@test
def test_point_budget_state(env):
    """Issue 9: each point's probe-budget state, from real heartbeats."""
    env.start_admin()
    hb = heartbeat("web-1", T0, {"order": dict(pt(3), suspended=True, overhead_pct=12.345),
                                 "pay": pt(1)})
    env.ok("POST", "/heartbeat", hb)
    got, text = budget_state(env, T0, T0 + 10)
    eq(got, {"order": (True, 12.345, T0), "pay": (False, 0, T0)}, "state after a suspension")
    check('"suspended":true,"overhead_pct":12.345,' in text,
          "overhead not written as 12.345: %s" % text)
    # A repeat of (host, period) changes nothing.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": pt(3)}))
    eq(budget_state(env, T0, T0 + 10)[0]["order"], (True, 12.345, T0), "after a repeat")

    # The next heartbeat without the fields clears it; one without the point keeps it.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {"order": pt(900)}))
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 20, {
        "pay": dict(pt(1), overhead_pct=0.014)}))
    eq(budget_state(env, T0, T0 + 30)[0],
       {"order": (False, 0, T0 + 10), "pay": (False, 0.014, T0 + 20)}, "state after clearing")
    eq(budget_state(env, T0, T0 + 10)[0]["order"], (True, 12.345, T0),
       "a range ending before the clearing")

    # Two hosts in one period: suspended on either, the highest host's estimate.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 30, {
        "order": dict(pt(0), suspended=True, overhead_pct=0.5)}))
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0 + 30, {
        "order": dict(pt(5), overhead_pct=2)}))
    eq(budget_state(env, T0, T0 + 40)[0]["order"], (True, 2, T0 + 30), "two hosts")
    # A point asked for by name without rows: not suspended, 0, no period.
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10&point=nothing" % (T0, T0 + 40))
    p = s["points"]["nothing"]
    eq((p["suspended"], p["overhead_pct"], p["as_of"]), (False, 0, None), "a point without rows")

    # Bad values: 400 naming the field, nothing stored.
    for bad, field in (({"suspended": "yes"}, "points.order.suspended"),
                       ({"suspended": 1}, "points.order.suspended"),
                       ({"overhead_pct": -0.001}, "points.order.overhead_pct"),
                       ({"overhead_pct": 100000.5}, "points.order.overhead_pct"),
                       ({"overhead_pct": "1"}, "points.order.overhead_pct")):
        env.bad("POST", "/heartbeat", heartbeat("web-1", T0 + 40, {"order": dict(pt(1), **bad)}),
                field=field)
    eq(budget_state(env, T0, T0 + 50)[0]["order"], (True, 2, T0 + 30), "after bad heartbeats")

    # Kept across a restart.
    env.stop_admin()
    env.start_admin()
    eq(budget_state(env, T0, T0 + 50)[0]["order"], (True, 2, T0 + 30), "after a restart")
    env.stop_admin()


@only("sqlite")
def test_point_budget_old_database(env):
    """A database written before the budget (schema 2) keeps working."""
    env.start_admin()
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": pt(7)}))
    env.stop_admin()
    db = sqlite3.connect(os.path.join(env.tmp, "sds.db"))
    try:
        eq(db.execute("PRAGMA user_version").fetchone()[0], 13, "schema version")
        # Schema 2 is schema 8 without the split, stuck, overload and the
        # host's pressure and refusals (8), the adaptive columns (7),
        # copy_servers' owner (6), drills' errno (5), the copy tables (4)
        # and the two columns (3).
        db.executescript(DROP_8 + "ALTER TABLE stats DROP COLUMN adaptive_limit;"
                         "ALTER TABLE stats DROP COLUMN adaptive_latency_ns;"
                         "ALTER TABLE drills DROP COLUMN errno;"
                         "DROP TABLE copy_loader_stats; DROP TABLE copy_server_stats;"
                         "DROP TABLE copy_servers; DROP TABLE copy_plans;"
                         "ALTER TABLE stats DROP COLUMN suspended;"
                         "ALTER TABLE stats DROP COLUMN overhead_milli;"
                         "PRAGMA user_version = 2;")
        db.commit()
    finally:
        db.close()
    env.start_admin()
    eq(budget_state(env, T0, T0 + 10)[0], {"order": (False, 0, T0)}, "old row after migrating")
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {
        "order": dict(pt(1), suspended=True, overhead_pct=7.5)}))
    eq(budget_state(env, T0, T0 + 20)[0], {"order": (True, 7.5, T0 + 10)}, "new row")
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 20))
    eq(s["points"]["order"]["visits"], [7, 1], "visits across the migration")
    env.stop_admin()
    db = sqlite3.connect(os.path.join(env.tmp, "sds.db"))
    try:
        eq(db.execute("PRAGMA user_version").fetchone()[0], 13, "schema version after migrating")
    finally:
        db.close()


@test
def test_drills_seq(env):
    """The drills' change counter in the heartbeat's reply and the sync:
    0 for a new app, one up with each drill started and each stopped,
    the same in both; a loader keeps the list of the highest it saw
    (tests/unit/common/test_heartbeat_drill.c)."""
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    sync = "/api/v1/sync?group=demo&app=shop&version=1&host=web-1"

    def seqs(period):
        r = env.ok("POST", "/heartbeat", heartbeat("web-1", period, {"order": pt(1)}))
        st, s = env.req("GET", sync)
        eq(st, 200, "sync")
        eq(s["drills_seq"], r["drills_seq"], "the sync's counter")
        return r["drills_seq"], [d["id"] for d in r["drills"]]
    eq(seqs(T0), (0, []), "a new app")
    body = {"point": "order", "kind": "error", "duration_s": 60, "by": "t"}
    a = env.ok("POST", APP + "/drills", body, want=201)["id"]
    b = env.ok("POST", APP + "/drills", body, want=201)["id"]
    eq(seqs(T0 + 10), (2, [a, b]), "two drills started")
    env.ok("POST", APP + "/drills/%d/stop" % a, {"by": "t"})
    env.ok("POST", APP + "/drills/%d/stop" % a, {"by": "t"}, want=409)
    eq(seqs(T0 + 20), (3, [b]), "one stopped, a second stop refused")
    env.ok("POST", APP + "/drills/%d/abort" % b, {"host": "web-1", "reason": "r"})
    eq(seqs(T0 + 30), (4, []), "the other aborted")
