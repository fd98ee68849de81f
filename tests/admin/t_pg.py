# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The PostgreSQL store's own cases, run by tests/admin/run.py when
SDS_TEST_STORE=pg (make admin-integration-pg), after the whole suite has
run on PostgreSQL: several admins on one database, a schema newer than
the binary, bad database URLs.  env.pg is the server (tests/lib/pgtest.py).
"""

import socket
import subprocess
import threading
import time

import sdstest
from sdstest import check, eq
from admin_lib import ADMIN, APP, T0, TOKEN, only

# What sds-admin says first of a password in the --db URL.
URL_PW_WARNING = ("sds-admin: --db: warning: the password in the URL is visible to "
                  "every local user while sds-admin starts; use --db-password-file "
                  "or PGPASSFILE\n")


def hb(host, period, visits, version=0):
    return {"group": "demo", "app": "shop", "host": host, "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": version,
            "points": {"order": {"visits": visits, "exceptions": 0, "timeouts": 0,
                                 "downgrades": 0, "max_concurrency": 1,
                                 "latency_hist": [0, visits]}}}


def on(env, port, method, path, body=None, want=200):
    env.port = port
    return env.ok(method, path, body, want=want)


@only("pg")
def test_pg_two_admins(env):
    """A change through one admin is what the other answers at once."""
    t0 = T0
    env.start_admin()
    a = env.port
    env.start_admin()
    b = env.port
    on(env, a, "POST", "/heartbeat", hb("web-1", t0, 1))
    on(env, a, "PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 77})
    r = on(env, b, "POST", "/heartbeat", hb("web-1", t0 + 10, 2, version=1))
    eq((r["version"], r["changed"]), (2, True), "version through the second admin")
    eq(r["strategies"]["points"]["order"]["visit_threshold"], 77,
       "strategy written through the first admin")
    # Both admins at once, 2 x 40 heartbeats of distinct (host, period): exact sums.
    errors = []

    def load(port, host):
        try:
            for i in range(40):
                st, doc = sdstest.http_request(port, "POST", "/api/v1/heartbeat",
                                               hb(host, t0 + 20 + 10 * (i % 20), i + 1),
                                               {"Authorization": "Bearer " + TOKEN})
                if st != 200:
                    errors.append("%s: %d %r" % (host, st, doc))
        except Exception as e:   # noqa: BLE001 (reported below)
            errors.append(repr(e))

    th = [threading.Thread(target=load, args=(p, "h%d-%d" % (p, k)))
          for p in (a, b) for k in range(2)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    eq(errors, [], "heartbeats through both admins")
    # Each host: periods +20..+210 twice, the second time duplicates; web-1: 1 + 2.
    want = 4 * sum(range(1, 21)) + 3
    for port in (a, b):
        s = on(env, port, "GET", APP + "/stats?from=%d&to=%d&step=300" % (t0 - t0 % 300,
                                                                       t0 + 600))
        got = sum(s["points"]["order"]["visits"])
        eq(got, want, "visits summed by the admin on port %d" % port)
    hosts = on(env, b, "GET", APP + "/hosts")
    eq(len(hosts), 5, "hosts seen through the second admin")


@only("pg")
def test_pg_newer_schema(env):
    """A database written by a newer sds-admin is refused, nothing written."""
    env.start_admin()
    env.stop_admin()
    db = env.db_arg().rsplit("/", 1)[1]
    env.pg.sql(db, "UPDATE sds_schema SET version = 99")
    before = env.pg.sql(db, "SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p')")
    r = subprocess.run([ADMIN, "--listen", "127.0.0.1:1", "--db", env.db_arg(),
                        "--token-file", env.token_file], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
    eq(r.returncode, 1, "exit status")
    eq(r.stderr, "sds-admin: --db: database '%s' on 127.0.0.1:%d: schema version 99 is newer"
       " than this sds-admin knows (10)\n" % (db, env.pg.port), "stderr")
    eq(env.pg.sql(db, "SELECT version FROM sds_schema"), "99\n", "version after")
    eq(env.pg.sql(db, "SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p')"), before,
       "tables after (no partition created)")


@only("pg")
def test_pg_bad_urls(env):
    """One line naming host and database, never the password; exit 1."""
    pg = env.pg
    secret = "not-the-pw-31337"
    _hold, dead = sdstest.dead_port()       # refused for the whole test
    cases = [
        (pg.url("postgres", password=secret),
         "sds-admin: --db: cannot connect to database 'postgres' on 127.0.0.1:%d:"
         " password authentication failed for user \"sds\"\n" % pg.port),
        ("postgresql://sds:%s@127.0.0.1:%d/x" % (secret, dead),
         "sds-admin: --db: cannot connect to database 'x' on 127.0.0.1:%d: connection to"
         " server at \"127.0.0.1\", port %d failed: Connection refused\n" % (dead, dead)),
        ("postgres://sds:%s@127.0.0.1:%d/nodb" % (pg.password, pg.port),
         "sds-admin: --db: cannot connect to database 'nodb' on 127.0.0.1:%d:"
         " database \"nodb\" does not exist\n" % pg.port),
    ]
    for url, want in cases:
        r = subprocess.run([ADMIN, "--listen", "127.0.0.1:1", "--db", url,
                            "--token-file", env.token_file], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
        eq(r.returncode, 1, "%s: exit status" % want)
        eq(r.stderr, URL_PW_WARNING + want, "stderr")
        check(secret not in r.stderr and pg.password not in r.stderr, "password printed")


@only("pg")
def test_pg_silent_server(env):
    """A server that accepts and never answers: given up after the URL's
    connect_timeout, else after 10 s (libpq alone would wait for as long
    as the socket lives); one line, exit 1. libpq (15) measures the
    timeout on the wall clock in whole seconds (time()), and a loaded
    VM's wall clock was seen to step by a second under it (a 2 s
    timeout that ended after 1.0 s): the lower bounds allow that one
    second."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        want = ("sds-admin: --db: cannot connect to database 'x' on 127.0.0.1:%d:"
                " connection to server at \"127.0.0.1\", port %d failed: timeout"
                " expired\n" % (port, port))
        for query, lo, hi in (("?connect_timeout=2", 0.95, 6), ("", 8.95, 16)):
            t = time.monotonic()
            r = subprocess.run([ADMIN, "--listen", "127.0.0.1:1", "--db",
                                "postgresql://sds:pw@127.0.0.1:%d/x%s" % (port, query),
                                "--token-file", env.token_file], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
            took = time.monotonic() - t
            eq(r.returncode, 1, "%r: exit status" % query)
            eq(r.stderr, URL_PW_WARNING + want, "%r: stderr" % query)
            check(lo <= took <= hi, "%r: gave up after %.1f s, want %.1f..%.0f"
                  % (query, took, lo, hi))





@only("pg")
def test_pg_reconnects(env):
    """A connection the server dropped is reconnected: the heartbeat
    that finds it so is retried, and answered; so is the statistics
    query that finds the scans' own connection so."""
    env.start_admin()
    on(env, env.port, "POST", "/heartbeat", hb("web-1", T0, 1))
    s = on(env, env.port, "GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 20))
    eq(s["points"]["order"]["visits"], [1, 0], "visits before the reconnect")
    db = env.db_arg().rsplit("/", 1)[1]
    eq(env.pg.sql(db, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                      " current_database() AND pid <> pg_backend_pid()").strip(), "3",
       "the admin's connections: heartbeats and every call, the scans', and the"
       " push channel's listener (t_watch.py)")
    env.pg.sql(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    on(env, env.port, "POST", "/heartbeat", hb("web-1", T0 + 10, 2))
    s = on(env, env.port, "GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 20))
    eq(s["points"]["order"]["visits"], [1, 2], "visits across the reconnect")
    # The listener's break is said, once (t_watch.py tests it reconnects).
    err = env.admin.stop(quiet=False)
    eq(err, "sds-admin: push: the store's listener for other admins' changes broke"
       " (terminating connection due to administrator command): reconnecting;"
       " meanwhile heartbeats carry their changes\n", "stderr")
