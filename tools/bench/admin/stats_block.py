#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Heartbeats/s while a 30-day statistics query runs (issue 16): a real
sds-admin on a database holding 30 days of one host's statistics (4
points, one row per point per 10-s period: 1,036,800 rows), driven by
build/bench/admin-bench for --seconds alone, then again while a client
asks GET .../stats for the 30 days in a loop.  Prints both rows and the
stats queries' times, per store: SQLite (a file) and PostgreSQL (a
server started for the run in a temp dir, tests/lib/pgtest.py), or the
one --store names.  --admin and --bench run another build (e.g. one from
before the change, for the comparison).

    python3 tools/bench/admin/stats_block.py [--seconds S] [--store sqlite|pg|both]
                                       [--admin PATH] [--bench PATH]
"""
import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from sdstest import BUILD, admin_argv, free_port, healthz, http_request, write_token  # noqa: E402
import pgtest  # noqa: E402

TOKEN = "bench-token-0123456789"
DAYS = 30
POINTS = 4


def start(admin, db, tok):
    port = free_port()
    p = subprocess.Popen(admin_argv(admin, port, db, tok), start_new_session=True)
    for _ in range(200):
        if healthz(port):
            return p, port
        time.sleep(0.05)
    p.kill()
    raise SystemExit("sds-admin did not start")


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def fill_pg(pg, dbname, end):
    """The rows of fill(), in PostgreSQL: the day partitions first."""
    start = end - DAYS * 86400
    app = int(pg.sql(dbname, "SELECT id FROM apps WHERE name = 'shop'"))
    pg.sql(dbname, "".join("CREATE TABLE IF NOT EXISTS stats_p%s PARTITION OF stats"
                           " FOR VALUES FROM (%d) TO (%d);"
                           % (time.strftime("%Y%m%d", time.gmtime(d)), d, d + 86400)
                           for d in range(start // 86400 * 86400, end, 86400)))
    pg.sql(dbname, "INSERT INTO stats (app_id, period_start, host, point, visits, exceptions,"
                   " timeouts, downgrades, max_concurrency)"
                   " SELECT %d, t, 'web-1', 'p' || i, 100, 1, 0, 0, 3"
                   " FROM generate_series(%d, %d, 10) t, generate_series(0, %d) i;"
                   " ANALYZE stats" % (app, start, end - 10, POINTS - 1))


def fill(admin, db, tok, pg=None):
    p, port = start(admin, db, tok)
    try:
        st, doc = http_request(port, "POST", "/api/v1/groups/demo/apps", {"name": "shop"},
                               {"Authorization": "Bearer " + TOKEN})
        if st != 201:
            raise SystemExit("creating the app: %d %r" % (st, doc))
    finally:
        stop(p)
    end = int(time.time()) // 10 * 10
    if pg:
        fill_pg(pg, db.rsplit("/", 1)[1], end)
        return end
    c = sqlite3.connect(db)
    (app,) = c.execute("SELECT id FROM apps WHERE name = 'shop'").fetchone()
    rows = ((app, t, "web-1", "p%d" % i, 100, 1, 0, 0, 3)
            for t in range(end - DAYS * 86400, end, 10) for i in range(POINTS))
    with c:
        c.executemany("INSERT INTO stats (app_id, period_start, host, point, visits,"
                      " exceptions, timeouts, downgrades, max_concurrency)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    c.close()
    return end


def bench(tool, port, tok, seconds):
    out = subprocess.run([tool, "--addr", "127.0.0.1:%d" % port, "--token-file", tok,
                          "--seconds", str(seconds), "--conns", "8", "--points", "20"],
                         stdout=subprocess.PIPE, universal_newlines=True)
    kv = out.stdout.split()
    return dict(zip(kv[0::2], kv[1::2]))


def one_store(args, tmp, tok, name, db, pg=None):
    """The two rows of store @name on @db; printed."""
    end = fill(args.admin, db, tok, pg)
    p, port = start(args.admin, db, tok)
    try:
        alone = bench(args.bench, port, tok, args.seconds)
        times, stop_flag, failed = [], threading.Event(), []

        def query():
            while not stop_flag.is_set():
                t = time.monotonic()
                st, doc = http_request(port, "GET", "/api/v1/groups/demo/apps/shop/stats"
                                       "?from=%d&to=%d" % (end - DAYS * 86400, end))
                if st != 200:
                    failed.append("stats: %d %r" % (st, doc))
                    return
                times.append(time.monotonic() - t)
        q = threading.Thread(target=query, daemon=True)
        q.start()
        time.sleep(0.5)
        during = bench(args.bench, port, tok, args.seconds)
        stop_flag.set()
        q.join(120)
    finally:
        stop(p)
    if failed:
        raise SystemExit(failed[0])
    print("| %s, %s | heartbeats/s | p50 ms | p99 ms | max ms |" % (name, args.admin))
    print("|---|---|---|---|---|")
    for what, r in (("alone", alone), ("during 30-day stats queries", during)):
        print("| %s | %s | %s | %s | %s |" % (what, r.get("heartbeats_per_s"),
                                             r.get("p50_ms"), r.get("p99_ms"),
                                             r.get("max_ms")))
    print("stats queries: %d, %.2f s each on average\n" %
          (len(times), sum(times) / max(len(times), 1)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--store", choices=("sqlite", "pg", "both"), default="both")
    ap.add_argument("--admin", default=os.path.join(BUILD, "bin", "sds-admin"))
    ap.add_argument("--bench", default=os.path.join(BUILD, "bench", "admin-bench"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sds-admin-statsblock.")
    try:
        tok = write_token(os.path.join(tmp, "token"), TOKEN)
        if args.store != "pg":
            one_store(args, tmp, tok, "SQLite", os.path.join(tmp, "sds.db"))
        if args.store != "sqlite":
            why = pgtest.available()
            if why:
                print("PostgreSQL rows not run: %s" % why)
                return 1
            with pgtest.PgCluster() as pg:
                one_store(args, tmp, tok, "PostgreSQL 15", pg.create_db("statsblock"), pg)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
