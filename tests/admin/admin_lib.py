# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The admin suite's harness (tests/admin/run.py): the store under test
(SDS_TEST_STORE), the test's Env (a temp dir, its token file, its
sds-admin through tests/lib/sdsadmin.py, its databases), heartbeat
bodies, and the suite's registry: @test for both stores, @only("sqlite")
or @only("pg") for one.
"""

import http.client
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import Fail, check, eq  # noqa: E402
import pgtest  # noqa: E402

ADMIN = sdstest.admin_path()
# SDS_TEST_STORE=pg (make admin-integration-pg): every admin of the suite
# stores in PostgreSQL, one database per test and --db name, on the
# server SDS_TEST_PG_SERVER describes (one for the whole `make test`),
# else on a server the suite starts first and removes last
# (tests/lib/pgtest.py cluster()).  No server: every test fails.
STORE = os.environ.get("SDS_TEST_STORE", "sqlite")
PG = None

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TOKEN = "t0k-3n_for.tests"
T0 = (int(time.time()) // 10) * 10 - 600     # a period ten minutes ago


# ---------------------------------------------------------------------------
# Fixture: one sds-admin, one temp dir, every process cleaned up

class Env:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sds-admin-test.")
        self.procs = []
        self.admin = None
        self.port = None
        self.pg_dbs = []
        self.pg = PG            # the PostgreSQL server, or None
        self.token_file = sdstest.write_token(os.path.join(self.tmp, "token"),
                                              TOKEN, "  %s\n")

    def spawn(self, argv, **kw):
        p = sdstest.spawn(argv, **kw)
        self.procs.append(p)
        return p

    def db_arg(self, db="sds.db"):
        """--db for the store under test: @db in the temp dir, or a
        PostgreSQL database of this test's, created at first use."""
        if STORE != "pg":
            return os.path.join(self.tmp, db)
        name = ("t_%s_%s" % (os.path.basename(self.tmp), db)).replace(".", "_").lower()
        if name not in self.pg_dbs:
            PG.create_db(name)
            self.pg_dbs.append(name)
        # No password in argv (sds-admin warns of one): PGPASSFILE, set by main().
        return "postgresql://%s@127.0.0.1:%d/%s" % (pgtest.USER, PG.port, name)

    def sql(self, statement, db="sds.db"):
        """Run @statement in the store's database, whichever engine."""
        if STORE == "pg":
            PG.sql(self.db_arg(db).rsplit("/", 1)[1], statement)
            return
        c = sqlite3.connect(os.path.join(self.tmp, db), timeout=10)
        try:
            c.execute(statement)
            c.commit()
        finally:
            c.close()

    def start_admin(self, *extra, db="sds.db"):
        """The test's sds-admin (tests/lib/sdsadmin.py) on a free port,
        storing in @db of the store under test: up once /healthz answers."""
        self.admin = sdsadmin.Admin(self, token=TOKEN, token_file=self.token_file,
                                    db=self.db_arg(db), extra=extra,
                                    binary=ADMIN).start()
        self.port = self.admin.port
        return self.admin

    def stop_admin(self):
        """SIGTERM; the admin must exit 0 and print nothing."""
        self.admin.stop()

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def req(self, method, path, body=None, token=True, headers=None, raw=None):
        """(status, parsed JSON or text) from the admin on self.port
        (t_pg switches it between two admins)."""
        h = dict(headers or {})
        if token is True:
            h["Authorization"] = "Bearer " + TOKEN
        elif token:
            h["Authorization"] = token
        return sdstest.http_request(self.port, method, path, body, h, raw)

    def ok(self, method, path, body=None, want=200, **kw):
        st, doc = self.req(method, "/api/v1" + path, body, **kw)
        if st != want:
            raise Fail("%s %s: status %d, want %d: %r" % (method, path, st, want, doc))
        return doc

    def bad(self, method, path, body=None, want=400, field=None, **kw):
        st, doc = self.req(method, "/api/v1" + path, body, **kw)
        if st != want:
            raise Fail("%s %s %r: status %d, want %d: %r" % (method, path, body, st, want, doc))
        check(isinstance(doc, dict) and isinstance(doc.get("error"), str),
              "%s %s: no {\"error\"} body: %r" % (method, path, doc))
        if field:
            check(field in doc["error"], "%s %s: error %r does not name %r"
                  % (method, path, doc["error"], field))
        return doc

    def cleanup(self):
        for p in self.procs:
            sdstest.reap(p)
            sdstest.close_streams(p)
        for name in self.pg_dbs:
            PG.drop_db(name)
        shutil.rmtree(self.tmp, ignore_errors=True)


def headers_only(env, path, length, token=True):
    """POST headers declaring @length bytes, send no body: the status."""
    s = socket.create_connection(("127.0.0.1", env.port), timeout=10)
    try:
        auth = "Authorization: Bearer %s\r\n" % TOKEN if token else ""
        s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\n"
                   "Content-Length: %d\r\n\r\n" % (path, auth, length)).encode())
        resp = b""
        while b"\r\n" not in resp:
            chunk = s.recv(4096)
            if not chunk:
                break
            resp += chunk
        return int(resp.split(b" ")[1])
    finally:
        s.close()


def heartbeat(host, period, points, group="demo", app="shop", version=0, ip="127.0.0.1"):
    return {"group": group, "app": app, "host": host, "ip": ip,
            "period_start": period, "period_s": 10, "version": version,
            "points": points}


def pt(visits, exceptions=0, timeouts=0, downgrades=0, conc=0, hist=None):
    return {"visits": visits, "exceptions": exceptions, "timeouts": timeouts,
            "downgrades": downgrades, "max_concurrency": conc,
            "latency_hist": hist or []}


APP = "/groups/demo/apps/shop"

# SQLite's schema 13 less its copy diff and ramp (13), its dependencies'
# table (12), its game days' tables (11), a drill's hosts, stop conditions
# and reason (10), its hot keys' table (9) and schema 8's columns (a
# point's split, max_stuck and overload; a host's pressure and refused):
# schema 7, for the migration tests.
DROP_8 = ("DROP TABLE copy_diff_stats;"
          "ALTER TABLE copy_plans DROP COLUMN opts;"
          "ALTER TABLE copy_plans DROP COLUMN result;"
          "ALTER TABLE copy_server_stats DROP COLUMN unpaired;"
          "DROP TABLE deps;"
          "DROP TABLE gameday_runs;"
          "DROP TABLE gamedays;"
          "ALTER TABLE apps DROP COLUMN drills_seq;"
          "DROP TABLE hot_keys;"
          "ALTER TABLE stats DROP COLUMN split_calls;"
          "ALTER TABLE stats DROP COLUMN split_on_cpu_ns;"
          "ALTER TABLE stats DROP COLUMN split_runqueue_ns;"
          "ALTER TABLE stats DROP COLUMN split_blocked_ns;"
          "ALTER TABLE stats DROP COLUMN max_stuck;"
          "ALTER TABLE stats DROP COLUMN overload;"
          "ALTER TABLE hosts DROP COLUMN pressure;"
          "ALTER TABLE hosts DROP COLUMN refused;"
          "ALTER TABLE drills DROP COLUMN hosts;"
          "ALTER TABLE drills DROP COLUMN stop_when;"
          "ALTER TABLE drills DROP COLUMN stop_reason;")


def fp(token):
    """The audit log's fingerprint of @token (admin/api/auth.c)."""
    h = 0xcbf29ce484222325
    for b in token.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "fnv:%08x" % (h >> 32)


def bearer(tok):
    return "Bearer " + tok


def denied(env, path, token=True):
    """The (detail, comment) of the "denied" rows of @path's audit log
    (its refused requests), sorted, and the log's text."""
    audit = env.ok("GET", path + "/audit?limit=100", token=token)
    return (sorted((a["detail"], a["comment"]) for a in audit
                   if a["action"] == "denied"), repr(audit))


def stop_with_stderr(env):
    """SIGTERM; exit 0; the lines the admin wrote to stderr."""
    env.admin.terminate()
    eq(env.admin.wait(15), 0, "sds-admin exit status after SIGTERM")
    return env.admin.stderr_text().splitlines()


def refused(argv, words):
    """sds-admin @argv refuses to start: exit 1, one line on stderr that
    names each of @words."""
    r = subprocess.run([ADMIN] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=10)
    eq(r.returncode, 1, "%r: exit status" % argv)
    lines = r.stderr.strip().split("\n")
    eq(len(lines), 1, "%r: stderr lines (%r)" % (argv, r.stderr))
    for w in words:
        check(w in lines[0], "%r: error %r does not name %r" % (argv, lines[0], w))


# Seconds per test: a stuck guard, loader or browser fails its test
# instead of hanging `make test` (the slowest admin test (a browser) takes ~6 s).
TEST_TIMEOUT = 120
SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)


def test(fn):
    """A test of both stores."""
    return SUITE.test(fn)


def only(store):
    """A test of @store's only ("sqlite", "pg"): registered when the
    suite runs on it (SDS_TEST_STORE), so each store lists what it runs."""
    def register(fn):
        if STORE == store:
            SUITE.test(fn)
        return fn
    return register
