# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Issue 16: a 30-day statistics query does not hold heartbeats.  The
store's heartbeats and its statistics scans run on connections of their
own (store/sqlite/reader.c, store/pg/reader.c); here a real sds-admin
holds 29 days of one host's statistics (4 points, a row per point per
10-s period: 1,002,240 rows) and a heartbeat is answered while a 30-day
query of them is in progress, then the query's sums are exact.

On PostgreSQL the scan is held deterministically: the test takes an
ACCESS EXCLUSIVE lock on one old day's partition in a psql session of its
own, so the scan waits (pg_stat_activity shows it) for as long as the
test wants, while heartbeats write to today's partition.  SQLite has no
such lock for a WAL reader: there the scan of the million rows is simply
in progress (its request unanswered) when the heartbeat is answered.
Run by tests/admin/run.py on both stores.
"""

import os
import sqlite3
import subprocess
import threading
import time

import sdstest
from sdstest import Fail, check, eq
import admin_lib
from admin_lib import APP, STORE, T0, TOKEN, test

DAYS = 29
POINTS = 4


def hb(host, period):
    return {"group": "demo", "app": "shop", "host": host, "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": 0,
            "points": {"order": {"visits": 1, "exceptions": 0, "timeouts": 0,
                                 "downgrades": 0, "max_concurrency": 1,
                                 "latency_hist": [0, 1]}}}


def fill(env, end):
    """DAYS days of host old-1's POINTS points before @end: 100 visits,
    1 exception per row."""
    start = end - DAYS * 86400
    if STORE == "pg":
        db = env.db_arg().rsplit("/", 1)[1]
        app = int(admin_lib.PG.sql(db, "SELECT id FROM apps WHERE name = 'shop'"))
        parts = []
        for day in range(start // 86400 * 86400, end, 86400):
            name = time.strftime("%Y%m%d", time.gmtime(day))
            parts.append("CREATE TABLE IF NOT EXISTS stats_p%s PARTITION OF stats"
                         " FOR VALUES FROM (%d) TO (%d);" % (name, day, day + 86400))
        admin_lib.PG.sql(db, "".join(parts))
        admin_lib.PG.sql(db, "INSERT INTO stats (app_id, period_start, host, point, visits,"
                   " exceptions, timeouts, downgrades, max_concurrency)"
                   " SELECT %d, t, 'old-1', 'p' || i, 100, 1, 0, 0, 3"
                   " FROM generate_series(%d, %d, 10) t, generate_series(0, %d) i"
               % (app, start, end - 10, POINTS - 1))
        return
    c = sqlite3.connect(os.path.join(env.tmp, "sds.db"), timeout=10)
    try:
        (app,) = c.execute("SELECT id FROM apps WHERE name = 'shop'").fetchone()
        with c:
            c.executemany("INSERT INTO stats (app_id, period_start, host, point, visits,"
                          " exceptions, timeouts, downgrades, max_concurrency)"
                          " VALUES (?, ?, 'old-1', ?, 100, 1, 0, 0, 3)",
                          ((app, t, "p%d" % i) for t in range(start, end, 10)
                           for i in range(POINTS)))
    finally:
        c.close()


class Holder:
    """PostgreSQL: an ACCESS EXCLUSIVE lock on one old day's partition of
    stats, held by a psql session until release()."""

    def __init__(self, env, day):
        self.db = env.db_arg().rsplit("/", 1)[1]
        self.table = "stats_p" + time.strftime("%Y%m%d", time.gmtime(day))
        self.proc = env.spawn(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(admin_lib.PG.port),
                               "-U", "sds", "-d", self.db, "-v", "ON_ERROR_STOP=1"],
                              env=admin_lib.PG.env(), stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              universal_newlines=True)
        self.proc.stdin.write("BEGIN; LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n" % self.table)
        self.proc.stdin.flush()
        self.wait_for("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                      " WHERE c.relname = '%s' AND l.mode = 'AccessExclusiveLock'"
                      " AND l.granted" % self.table, "the test's lock on " + self.table)

    def count(self, query):
        return int(admin_lib.PG.sql(self.db, query))

    def wait_for(self, query, what, timeout=20):
        deadline = time.time() + timeout
        while self.count(query) != 1:
            if self.proc.poll() is not None:
                raise Fail("psql holding %s exited: %s" % (self.table, self.proc.stderr.read()))
            if time.time() > deadline:
                raise Fail("%s: not seen within %d s" % (what, timeout))
            time.sleep(0.05)

    def waiting_scans(self):
        return self.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type ="
                          " 'Lock' AND query LIKE '%FROM stats%'")

    def release(self):
        self.proc.stdin.write("COMMIT;\n")
        self.proc.stdin.close()
        eq(self.proc.wait(20), 0, "psql holding %s: exit status" % self.table)


@test
def test_heartbeat_during_long_scan(env):
    """A heartbeat is answered while a 30-day statistics scan is in progress."""
    env.start_admin()
    env.ok("POST", "/heartbeat", hb("web-1", T0))
    end = T0
    fill(env, end)
    holder = Holder(env, end - 10 * 86400) if STORE == "pg" else None
    out = {}

    def query():
        t = time.monotonic()
        try:
            out["r"] = env.req("GET", "/api/v1" + APP + "/stats?from=%d&to=%d"
                               % (end - 30 * 86400, end))
        except Exception as e:   # noqa: BLE001 (reported below)
            out["r"] = (0, repr(e))
        out["s"] = time.monotonic() - t

    th = threading.Thread(target=query, daemon=True)
    try:
        th.start()
        if holder:
            holder.wait_for("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type ="
                            " 'Lock' AND query LIKE '%FROM stats%'",
                            "the 30-day scan waiting on the lock")
        else:
            time.sleep(0.2)
        check(th.is_alive(), "the 30-day query ended before the heartbeat was sent"
              " (%.2f s): it must still be scanning" % out.get("s", 0))
        t = time.monotonic()
        try:
            st, doc = sdstest.http_request(env.port, "POST", "/api/v1/heartbeat",
                                           hb("web-1", T0 + 10),
                                           {"Authorization": "Bearer " + TOKEN})
        except OSError as e:
            raise Fail("heartbeat during the scan not answered in %.1f s (%s):"
                       " it waits for the scan" % (time.monotonic() - t, e))
        took = time.monotonic() - t
        eq(st, 200, "heartbeat during the scan: %r" % (doc,))
        eq((doc["version"], doc["changed"]), (1, True), "heartbeat reply during the scan")
        check(th.is_alive(), "the 30-day query was answered (%.2f s) before the heartbeat"
              " (%.2f s): the heartbeat waited for the scan" % (out.get("s", 0), took))
        if holder:
            eq(holder.waiting_scans(), 1, "scans still waiting after the heartbeat")
            # The main connection serves the other reads meanwhile.
            eq([h["host"] for h in env.ok("GET", APP + "/hosts")], ["web-1"],
               "hosts during the scan")
            holder.release()
            holder = None
    finally:
        if holder:
            holder.release()
        th.join(120)
    check(not th.is_alive(), "the 30-day query did not end within 120 s")
    st, s = out["r"]
    eq(st, 200, "30-day query: %r" % (s if st != 200 else "",))
    n = DAYS * 8640
    eq(sorted(s["points"]), ["order"] + ["p%d" % i for i in range(POINTS)], "points")
    for i in range(POINTS):
        tot = s["points"]["p%d" % i]["total"]
        eq((tot["visits"], tot["exceptions"], tot["max_concurrency"]), (100 * n, n, 3),
           "p%d's 30-day totals" % i)
    env.stop_admin()
