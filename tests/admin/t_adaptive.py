# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
An adaptive point's limit (docs/ADAPTIVE.md) through sds-admin: the
heartbeat's "adaptive_limit" and "adaptive_latency_ns" stored per period
and host, GET stats giving each host's latest limit summed over the hosts
that report one and the highest latency, GET stats/hosts each host's own,
kept across a restart; a SQLite database of schema 6 (before them)
migrated by the binary.
"""

import os
import sqlite3

from sdstest import eq
from admin_lib import APP, DROP_8, T0, heartbeat, only, pt, test

KEYS = ("adaptive_limit", "adaptive_limit_hosts", "adaptive_latency_ns")


def ad(visits, limit, lat):
    return dict(pt(visits), adaptive_limit=limit, adaptive_latency_ns=lat)


def limits(env, frm, to):
    """{point: (limit, hosts, latency)} of GET stats over [frm, to)."""
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (frm, to))
    return {n: tuple(p[k] for k in KEYS) for n, p in s["points"].items()}


def by_host(env, frm, to, point="order"):
    """{host: (limit, hosts, latency)} of GET stats/hosts over [frm, to)."""
    s = env.ok("GET", APP + "/stats/hosts?from=%d&to=%d&step=10&point=%s" % (frm, to, point))
    return {h: tuple(p[k] for k in KEYS) for h, p in s["hosts"].items()}


@test
def test_adaptive_limit(env):
    """Two hosts' limits summed, the higher latency; each host's own by host."""
    env.start_admin()
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": ad(30, 40, 2500000),
                                                         "pay": pt(3)}))
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0, {"order": ad(20, 25, 4000000)}))
    eq(limits(env, T0, T0 + 10), {"order": (65, 2, 4000000), "pay": (None, 0, None)},
       "two hosts of one period")
    eq(by_host(env, T0, T0 + 10), {"web-1": (40, 1, 2500000), "web-2": (25, 1, 4000000)},
       "by host")
    # A repeat of (host, period) changes nothing.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": ad(1, 99, 1)}))
    eq(limits(env, T0, T0 + 10)["order"], (65, 2, 4000000), "after a repeat")

    # web-1's next period before web-2's: web-1's 38 and web-2's 25 of ten seconds before.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {"order": ad(30, 38, 3000000)}))
    eq(limits(env, T0, T0 + 20)["order"], (63, 2, 4000000), "web-2 not heard yet")
    eq(limits(env, T0, T0 + 10)["order"], (65, 2, 4000000), "a range ending before")
    # web-2 no longer adaptive: web-1's only.
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0 + 10, {"order": pt(20)}))
    eq(limits(env, T0, T0 + 20)["order"], (38, 1, 3000000), "web-2 not adaptive")
    eq(by_host(env, T0, T0 + 20), {"web-1": (38, 1, 3000000), "web-2": (None, 0, None)},
       "by host, web-2 not adaptive")
    # web-2 adaptive at T0 + 20, then silent: counted while within 30 s of the newest period.
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0 + 20, {"order": ad(5, 30, 6000000)}))
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 40, {"order": ad(30, 44, 1000000)}))
    eq(limits(env, T0, T0 + 50)["order"], (74, 2, 6000000), "web-2 20 s old")
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 50, {"order": ad(30, 45, 1000000)}))
    eq(limits(env, T0, T0 + 60)["order"], (45, 1, 1000000), "web-2 30 s old")

    # Bad values: 400 naming the field, nothing stored.
    for bad, field in (({"adaptive_limit": -1}, "points.order.adaptive_limit"),
                       ({"adaptive_limit": 1.5}, "points.order.adaptive_limit"),
                       ({"adaptive_latency_ns": "9"}, "points.order.adaptive_latency_ns"),
                       ({"adaptive_limit": 1 << 41}, "points.order.adaptive_limit")):
        env.bad("POST", "/heartbeat", heartbeat("web-1", T0 + 60, {"order": dict(pt(1), **bad)}),
                field=field)
    eq(limits(env, T0, T0 + 70)["order"], (45, 1, 1000000), "after bad heartbeats")

    env.stop_admin()
    env.start_admin()
    eq(limits(env, T0, T0 + 60)["order"], (45, 1, 1000000), "after a restart")
    eq(by_host(env, T0, T0 + 30), {"web-1": (38, 1, 3000000), "web-2": (30, 1, 6000000)},
       "by host after a restart")
    env.stop_admin()


@only("sqlite")
def test_adaptive_old_database(env):
    """A database of schema 6 (before the adaptive columns) keeps its rows."""
    env.start_admin()
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": pt(7)}))
    env.stop_admin()
    db = sqlite3.connect(os.path.join(env.tmp, "sds.db"))
    try:
        eq(db.execute("PRAGMA user_version").fetchone()[0], 13, "schema version")
        db.executescript(DROP_8 + "ALTER TABLE stats DROP COLUMN adaptive_limit;"
                         "ALTER TABLE stats DROP COLUMN adaptive_latency_ns;"
                         "PRAGMA user_version = 6;")
        db.commit()
    finally:
        db.close()
    env.start_admin()
    eq(limits(env, T0, T0 + 10), {"order": (None, 0, None)}, "old row after migrating")
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {"order": ad(1, 12, 800000)}))
    eq(limits(env, T0, T0 + 20), {"order": (12, 1, 800000)}, "new row")
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 20))
    eq(s["points"]["order"]["visits"], [7, 1], "visits across the migration")
    env.stop_admin()
    db = sqlite3.connect(os.path.join(env.tmp, "sds.db"))
    try:
        eq(db.execute("PRAGMA user_version").fetchone()[0], 13, "schema version after migrating")
    finally:
        db.close()
