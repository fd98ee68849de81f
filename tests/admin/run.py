#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of sds-admin: a real sds-admin on a free loopback port
with a fresh SQLite file per test, driven over HTTP; heartbeats are posted
by the test itself (a fake loader) and the statistics the admin returns are
checked exactly; the dashboard is checked in a real headless Debian
chromium driven over the DevTools protocol (a tiny websocket client below):
one chromium for the run, a page of its own for each test.

    python3 tests/admin/run.py [-v] [NAME-SUBSTRING...]

Every process is started in its own session and its group is killed when
the test ends, pass or fail; temp dirs are removed.  The last line is
"N passed, M failed, K skipped"; the exit status is non-zero when anything failed.
A screenshot of the dashboard is kept at build/test/admin/dashboard.png.

Python 3 standard library only.
"""

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import BUILD, Fail, check, eq, free_port  # noqa: E402
import t_copy  # noqa: E402
from t_copy import COPY_TESTS  # noqa: E402
from t_roles import ROLE_TESTS  # noqa: E402
from t_scope import SCOPE_TESTS  # noqa: E402
from t_drill_errno import DRILL_ERRNO_TESTS  # noqa: E402
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

# ---------------------------------------------------------------------------
# Tests


def test_command_line(env):
    r = subprocess.run([ADMIN, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=10)
    eq(r.returncode, 0, "--help exit status")
    check("--listen" in r.stdout and "--token-file" in r.stdout and "--protect-reads" in r.stdout,
          "--help does not list the options")
    db = os.path.join(env.tmp, "x.db")
    cases = [
        ([], "--listen"),
        (["--listen", "127.0.0.1:1"], "--db"),
        (["--listen", "127.0.0.1:1", "--db", db], "--token-file"),
        (["--listen", "127.0.0.1:1", "--db", db, "--token-file", "/nonexistent"], "/nonexistent"),
        (["--listen", "nowhere", "--db", db, "--token-file", env.token_file], "--listen"),
        (["--listen", "127.0.0.1:99999", "--db", db, "--token-file", env.token_file], "--listen"),
        (["--listen", "127.0.0.1:1", "--db", "/nonexistent/dir/x.db", "--token-file",
          env.token_file], "/nonexistent/dir/x.db"),
    ]
    empty = sdstest.write_token(os.path.join(env.tmp, "empty"), "", fmt="%s")
    cases.append((["--listen", "127.0.0.1:1", "--db", db, "--token-file", empty], "no token"))
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    cases.append((["--listen", "127.0.0.1:%d" % busy.getsockname()[1], "--db", db,
                   "--token-file", env.token_file], "Address already in use"))
    try:
        for argv, word in cases:
            r = subprocess.run([ADMIN] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=10)
            check(r.returncode != 0, "%r: exit status 0" % argv)
            lines = r.stderr.strip().split("\n")
            eq(len(lines), 1, "%r: stderr lines (%r)" % (argv, r.stderr))
            check(lines[0].startswith("sds-admin: ") and word in lines[0],
                  "%r: error %r does not name %r" % (argv, lines[0], word))
            eq(r.stdout, "", "%r: stdout" % argv)
    finally:
        busy.close()


def test_organisation(env):
    env.start_admin()
    g = env.ok("POST", "/groups", {"name": "demo", "description": "the demo"}, want=201)
    eq(g["name"], "demo", "group name")
    env.bad("POST", "/groups", {"name": "demo"}, want=409, field="demo")
    a = env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    eq((a["version"], a["active_scheme"]), (1, "default"), "new app version, scheme")
    eq([x["name"] for x in env.ok("GET", "/groups/demo/apps")], ["shop"], "apps of demo")
    eq(env.ok("GET", "/groups/demo")["apps"], 1, "group app count")
    env.ok("PATCH", APP, {"description": "shop front"})
    eq(env.ok("GET", APP)["description"], "shop front", "app description")

    # Strategies of the active scheme: each change bumps the version.
    r = env.ok("PUT", APP + "/schemes/default/strategies/order",
               {"visit_threshold": 1000, "exception_rate_threshold": 40,
                "exception_rate_start": 20, "comment": "limit"})
    eq(r["version"], 2, "version after the first strategy")
    r = env.ok("PUT", APP + "/schemes/default/strategies",
               {"points": {"order": {"visit_threshold": 1000},
                           "pay": {"timeout_ms": 200, "timeout_count_threshold": 10}}})
    eq(r["version"], 3, "version after replacing all")
    eq(sorted(r["points"]), ["order", "pay"], "points after replacing all")
    eq(env.ok("GET", APP + "/schemes/default/strategies/pay"),
       {"timeout_ms": 200, "timeout_count_threshold": 10, "downgrade_rate": 100}, "one strategy")

    # Cloning copies; editing the copy changes neither the original nor the version.
    s = env.ok("POST", APP + "/schemes", {"name": "storm", "clone_from": "default",
                                          "description": "heavy load"}, want=201)
    eq((s["points"], s["active"]), (2, False), "clone's points, active")
    env.ok("PUT", APP + "/schemes/storm/strategies/order", {"visit_threshold": 0})
    eq(env.ok("GET", APP + "/schemes/default/strategies/order")["visit_threshold"], 1000,
       "original after editing the clone")
    eq(env.ok("GET", APP)["version"], 3, "version after editing an inactive scheme")

    # Switching is one call and bumps the version; heartbeats see it.
    r = env.ok("PUT", APP + "/active_scheme", {"scheme": "storm", "comment": "storm"})
    eq((r["scheme"], r["version"]), ("storm", 4), "switch")
    doc = env.ok("GET", APP + "/strategies")
    eq((doc["version"], doc["scheme"], doc["points"]["order"]["visit_threshold"]),
       (4, "storm", 0), "active strategies after the switch")
    env.bad("DELETE", APP + "/schemes/storm", want=409, field="active")
    env.ok("PUT", APP + "/active_scheme", {"scheme": "default"})
    env.ok("DELETE", APP + "/schemes/storm")
    env.bad("GET", APP + "/schemes/storm", want=404, field="storm")
    env.ok("DELETE", APP + "/schemes/default/strategies/pay")
    env.bad("DELETE", APP + "/schemes/default/strategies/pay", want=404, field="pay")
    eq(env.ok("GET", APP)["version"], 6, "version after switch back and delete")
    audit = env.ok("GET", APP + "/audit")
    eq(audit[0]["action"], "strategy.delete", "newest audit entry")
    check(any(e["comment"] == "storm" and e["action"] == "scheme.activate" for e in audit),
          "audit has the activation with its comment")

    # 404 and 405.
    env.bad("GET", "/groups/nope", want=404, field="nope")
    env.bad("GET", "/groups/demo/apps/nope", want=404, field="nope")
    env.bad("GET", "/nothing", want=404)
    env.bad("DELETE", "/groups", want=405)
    env.bad("GET", "/heartbeat", want=405)
    env.bad("DELETE", "/groups/demo", want=409, field="apps")
    env.ok("DELETE", APP)
    env.ok("DELETE", "/groups/demo")
    eq(env.ok("GET", "/groups"), [], "groups after deleting all")
    env.stop_admin()


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


def test_auth(env):
    env.start_admin()
    hb = heartbeat("web-1", T0, {"order": pt(1)})
    for tok in (False, "Bearer wrong", "Bearer " + TOKEN + "x", "Bearer " + TOKEN[:-1],
                "Basic " + TOKEN, TOKEN):
        env.bad("POST", "/heartbeat", hb, token=tok, want=401)
        env.bad("POST", "/groups", {"name": "g"}, token=tok, want=401)
        env.bad("PUT", "/groups/demo/apps/shop/schemes/default/strategies/x", {},
                token=tok, want=401)
        env.bad("DELETE", "/groups/demo", token=tok, want=401)
    # Authentication comes before the body: a malformed or huge body without
    # the token gets 401, not 400 or 413.
    env.bad("POST", "/heartbeat", raw=b"{not json", token=False, want=401)
    eq(headers_only(env, "/api/v1/heartbeat", 2 << 20, token=False), 401,
       "2 MiB declared, no token, body never sent")
    # Nothing was stored.
    eq(env.ok("GET", "/groups"), [], "groups after refused writes")
    # Reads are open by default.
    eq(env.req("GET", "/api/v1/apps", token=False)[0], 200, "open read")
    m = env.req("GET", "/metrics", token=False)[1]
    check("sds_admin_unauthorized_total 26" in m, "metrics: 26 unauthorized:\n" + m)
    env.stop_admin()

    env.start_admin("--protect-reads", db="protected.db")
    env.bad("GET", "/apps", token=False, want=401)
    env.bad("GET", "/groups", token="Bearer nope", want=401)
    env.ok("GET", "/apps")
    env.ok("POST", "/heartbeat", hb)
    eq(env.req("GET", "/healthz", token=False)[0], 200, "healthz without token")
    eq(env.req("GET", "/", token=False)[0], 200, "dashboard shell without token")
    env.stop_admin()


def test_bad_inputs(env):
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    good = heartbeat("web-1", T0, {"order": pt(1)})

    # Malformed JSON, wrong top-level types.
    for raw in (b"", b"{", b"{\"group\": }", b"[1,2]", b"null", b"\xff\xfe", b"{\"a\":1}{}"):
        env.bad("POST", "/heartbeat", raw=raw)
        if raw:
            env.bad("POST", "/groups", raw=raw)
    env.bad("POST", "/groups", raw=b"{\"name\":\"a\",\"name\":\"b\"}", field="duplicate")

    def hb_with(**kw):
        d = json.loads(json.dumps(good))
        for k, v in kw.items():
            if v is None:
                d.pop(k, None)
            else:
                d[k] = v
        return d

    cases = [
        (hb_with(group="bad name"), "group"),
        (hb_with(group="a" * 65), "group"),
        (hb_with(app="x'; DROP TABLE apps; --"), "app"),
        (hb_with(app=""), "app"),
        (hb_with(app=None), "app"),
        (hb_with(host="web 1"), "host"),
        (hb_with(host=7), "host"),
        (hb_with(ip="300.1.1.1"), "ip"),
        (hb_with(period_start=T0 + 5), "period_start"),
        (hb_with(period_start=str(T0)), "period_start"),
        (hb_with(period_start=-10), "period_start"),
        (hb_with(period_start=T0 + 86400 * 365), "period_start"),
        (hb_with(period_s=60), "period_s"),
        (hb_with(version=-1), "version"),
        (hb_with(version="3"), "version"),
        (hb_with(points=[]), "points"),
        (hb_with(points={"bad name": {}}), "point"),
        (hb_with(points={"o": {"visits": -1}}), "points.o.visits"),
        (hb_with(points={"o": {"visits": 1.5}}), "points.o.visits"),
        (hb_with(points={"o": {"visits": "1"}}), "points.o.visits"),
        (hb_with(points={"o": {"timeouts": 1 << 41}}), "points.o.timeouts"),
        (hb_with(points={"o": {"latency_hist": [0] * 65}}), "latency_hist"),
        (hb_with(points={"o": {"latency_hist": [0, -1]}}), "latency_hist[1]"),
        (hb_with(points={"o": {"visitz": 1}}), "visitz"),
        (hb_with(points={"p%d" % i: {} for i in range(1025)}), "too many"),
        (hb_with(extra=1), "extra"),
    ]
    for body, field in cases:
        env.bad("POST", "/heartbeat", body, field=field)

    # Strategy bodies: the codec's messages name point and field.
    sp = APP + "/schemes/default/strategies"
    for body, field in [
        ({"visit_threshold": "10"}, "visit_threshold"),
        ({"downgrade_rate": 101}, "downgrade_rate"),
        ({"downgrade_rate": -1}, "downgrade_rate"),
        ({"exception_rate_threshold": 200}, "exception_rate_threshold"),
        ({"probe_calls": 0}, "probe_calls"),
        ({"probe_calls": 1001}, "probe_calls"),
        ({"probe_failure_pct": 101}, "probe_failure_pct"),
        ({"slow_rate_threshold": 40}, "slow_rate_threshold needs timeout_ms"),
        ({"slow_rate_threshold": 40, "timeout_ms": 20, "slow_rate_start": -1},
         "slow_rate_start"),
        ({"timeout_ms": 1.5}, "timeout_ms"),
        ({"token_bucket": 5}, "token_bucket"),
        ({"visits_threshold": 5}, "visits_threshold"),
        ({"comment": 5}, "comment"),
        ({"comment": "x" * 5000}, "comment"),
    ]:
        env.bad("PUT", sp + "/order", body, field=field)
    env.bad("PUT", sp, {"points": {"bad name": {}}}, field="bad name")
    env.bad("PUT", sp, {"points": []}, field="points")
    env.bad("PUT", sp, {"pionts": {}}, field="pionts")
    env.bad("PUT", sp + "/bad%20name", {"visit_threshold": 1}, field="point")
    env.bad("PUT", sp + "/" + "p" * 65, {"visit_threshold": 1}, field="point")

    # Organisation bodies and names in paths.
    for body, field in [
        ({}, "name"), ({"name": 5}, "name"), ({"name": "a b"}, "name"),
        ({"name": "a" * 65}, "name"), ({"name": "ok", "description": 5}, "description"),
        ({"name": "ok", "description": "d" * 5000}, "description"),
        ({"name": "ok", "owner": "x"}, "owner"),
    ]:
        env.bad("POST", "/groups", body, field=field)
        env.bad("POST", "/groups/demo/apps", body, field=field)
    env.bad("POST", APP + "/schemes", {"name": "s", "clone_from": "x y"}, field="clone_from")
    env.bad("POST", APP + "/schemes", {"name": "s", "clone_from": "nope"}, want=404, field="nope")
    env.bad("GET", "/groups/a%27b", field="group")
    env.bad("GET", "/groups/demo/apps/a;b", field="app")
    env.bad("GET", APP + "/schemes/%3Cscript%3E", field="scheme")
    env.bad("PUT", APP + "/active_scheme", {"scheme": 1}, field="scheme")
    env.bad("PUT", APP + "/active_scheme", {}, field="scheme")
    for q, field in [("from=x", "from"), ("to=1e9", "to"), ("step=15", "step"),
                     ("from=100&to=50", "from"), ("from=0&to=99999999", "from/to"),
                     ("step=10&from=0&to=86400", "step"), ("point=a%20b", "point")]:
        env.bad("GET", APP + "/stats?" + q, field=field)
    # Near INT64_MAX, to's rounding up to the step, or from's default
    # (to - 3600), would overflow: refused where the number is read.
    for q, key in [("from=9223372036854775000&to=9223372036854775807", "to"),
                   ("to=-9223372036854775808", "to"), ("from=-9007199254740992", "from")]:
        eq(env.bad("GET", APP + "/stats?" + q)["error"],
           "%s must be an integer, at most 2^53-1 either side of 0" % key, q)
    eq(env.bad("GET", APP + "/events?to=-9223372036854775807")["error"],
       "to must be an integer, at most 2^53-1 either side of 0", "events' to")
    eq(env.ok("GET", APP + "/stats?from=9007199254739991&to=9007199254740991&step=10")
       ["step"], 10, "the bound itself")
    env.bad("GET", APP + "/events?limit=0", field="limit")
    env.bad("GET", APP + "/audit?limit=x", field="limit")
    env.bad("POST", "/groups", raw=b"name=x", headers={"Content-Type": "text/plain"}, want=415)

    # Oversize bodies: declared (Content-Length) and chunked.
    eq(headers_only(env, "/api/v1/heartbeat", (1 << 20) + 1), 413,
       "1 MiB + 1 declared: refused before the body")
    c = env.conn()
    try:
        c.putrequest("POST", "/api/v1/heartbeat")
        c.putheader("Authorization", "Bearer " + TOKEN)
        c.putheader("Content-Type", "application/json")
        c.putheader("Transfer-Encoding", "chunked")
        c.endheaders()
        chunk = b" " * 65536
        try:
            for _ in range(20):
                c.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            c.send(b"0\r\n\r\n")
        except OSError:
            pass
        r = c.getresponse()
        eq(r.status, 413, "chunked oversize body")
        r.read()
    finally:
        c.close()
    # Just under the limit is fine.
    ok = json.dumps(good).encode()
    ok = ok[:-1] + b" " * ((1 << 20) - len(ok)) + b"}"
    eq(len(ok), 1 << 20, "test body size")
    okdoc = json.loads(ok)
    check(okdoc["host"] == "web-1", "body still valid")
    env.ok("POST", "/heartbeat", raw=ok)

    # Free text with quotes and SQL: stored and returned verbatim.
    evil = "Robert'); DROP TABLE apps;-- \"quoted\" \\ back </script> \u00e9\u4e2d"
    env.ok("POST", "/groups", {"name": "g2", "description": evil}, want=201)
    eq(env.ok("GET", "/groups/g2")["description"], evil, "group description")
    env.ok("POST", "/groups/g2/apps", {"name": "a2", "description": evil}, want=201)
    eq(env.ok("GET", "/groups/g2/apps/a2")["description"], evil, "app description")
    env.ok("POST", "/groups/g2/apps/a2/schemes", {"name": "s2", "description": evil,
                                                  "comment": evil}, want=201)
    eq(env.ok("GET", "/groups/g2/apps/a2/schemes/s2")["description"], evil, "scheme description")
    env.ok("PUT", "/groups/g2/apps/a2/schemes/s2/strategies/p", {"visit_threshold": 3,
                                                                 "comment": evil})
    eq(env.ok("GET", "/groups/g2/apps/a2/audit")[0]["comment"], evil, "audit comment")
    # ... and the database is intact.
    eq(sorted(a["name"] for a in env.ok("GET", "/apps")), ["a2", "shop"], "apps still there")
    # The admin is alive after all of it.
    eq(env.req("GET", "/healthz", token=False)[0], 200, "healthz after bad inputs")
    env.stop_admin()


def test_sigterm_finishes_inflight(env):
    env.start_admin()
    body = json.dumps(heartbeat("web-1", T0, {"order": pt(5)})).encode()
    s = socket.create_connection(("127.0.0.1", env.port), timeout=10)
    try:
        s.sendall(b"POST /api/v1/heartbeat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                  % (TOKEN.encode(), len(body), body[:20]))
        time.sleep(0.3)
        env.admin.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        check(env.admin.poll() is None, "admin exited with a request in flight")
        s.sendall(body[20:])
        resp = b""
        while b"\r\n\r\n" not in resp or not resp.rstrip().endswith(b"}"):
            chunk = s.recv(4096)
            if not chunk:
                break
            resp += chunk
        check(resp.startswith(b"HTTP/1.1 200"), "in-flight reply: %r" % resp[:80])
    finally:
        s.close()
    rc = env.admin.wait(15)
    eq(rc, 0, "exit status after SIGTERM")
    eq(env.admin.stderr_text(), "", "stderr")
    # The heartbeat was committed: a new admin on the same file has it.
    env.start_admin()
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 10))
    eq(s["points"]["order"]["visits"], [5], "visits of the in-flight heartbeat")
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


def test_point_budget_old_database(env):
    """A database written before the budget (schema 2) keeps working."""
    env.start_admin()
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": pt(7)}))
    env.stop_admin()
    db = sqlite3.connect(os.path.join(env.tmp, "sds.db"))
    try:
        eq(db.execute("PRAGMA user_version").fetchone()[0], 6, "schema version")
        # Schema 2 is schema 6 without copy_servers' owner (6), drills'
        # errno (5), the copy tables (4) and the two columns (3).
        db.executescript("ALTER TABLE drills DROP COLUMN errno;"
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
        eq(db.execute("PRAGMA user_version").fetchone()[0], 6, "schema version after migrating")
    finally:
        db.close()


def test_static_and_metrics(env):
    env.start_admin()
    st, text = env.req("GET", "/", token=False)
    eq(st, 200, "GET /")
    check("<title>sds-admin</title>" in text, "index.html served")
    for path in ("/app.js", "/style.css", "/javascript/chart.js/chart.min.js"):
        eq(env.req("GET", path, token=False)[0], 200, "GET " + path)
    for path in ("/../../etc/passwd", "/javascript/../../../etc/passwd", "/.hidden",
                 "/javascript/chart.js/..%2f..%2f..%2fetc%2fpasswd", "/nope.js",
                 "/javascript/", "/javascript/chart.js"):
        st, _ = env.req("GET", path, token=False)
        eq(st, 404, "GET " + path)
    eq(env.req("POST", "/metrics", token=False, raw=b"")[0], 405, "POST /metrics")
    st, text = env.req("GET", "/healthz", token=False)
    eq((st, text), (200, "ok\n"), "healthz")
    env.stop_admin()


# ---------------------------------------------------------------------------
# The dashboard in headless chromium, over the DevTools protocol

class WebSocket:
    """Just enough RFC 6455 for the DevTools protocol: text frames."""

    def __init__(self, url, timeout=30):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        resp = b""
        while b"\r\n\r\n" not in resp:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Fail("websocket handshake: connection closed")
            resp += chunk
        head, self.buf = resp.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise Fail("websocket handshake: %r" % head[:100])

    def send(self, text):
        data = text.encode()
        hdr = bytearray([0x81])
        n = len(data)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr.append(0x80 | 126)
            hdr += struct.pack(">H", n)
        else:
            hdr.append(0x80 | 127)
            hdr += struct.pack(">Q", n)
        mask = os.urandom(4)
        hdr += mask
        self.sock.sendall(bytes(hdr) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise Fail("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            if b1 & 0x80:
                mask = self._read(4)
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read(n)))
            else:
                data = self._read(n)
            op = b0 & 0x0f
            if op == 8:
                raise Fail("websocket closed by chromium")
            if op in (9, 10):
                continue
            msg += data
            if b0 & 0x80:
                return msg.decode("utf-8", "replace")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Chromium:
    """One headless chromium for the whole run, started by the first
    dashboard test and stopped when the suite ends (main): each Browser
    is a page (a tab) of its own in it, closed after its test.  Each
    test's admin has a port of its own, so its page is an origin of its
    own (storage, cache).  Started again if it died."""
    proc = None
    tmp = None
    port = None

    @classmethod
    def devtools_port(cls):
        if cls.proc is not None and cls.proc.poll() is None and cls.port:
            return cls.port
        cls.stop()
        cls.tmp = tempfile.mkdtemp(prefix="sds-admin-chromium.")
        profile = os.path.join(cls.tmp, "profile")
        os.mkdir(profile)
        cls.proc = sdstest.spawn([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                  "--disable-quic", "--no-first-run",
                                  "--disable-background-networking",
                                  "--disable-component-update",
                                  "--disable-sync", "--disable-dev-shm-usage",
                                  "--user-data-dir=" + profile,
                                  "--remote-debugging-port=0", "--window-size=1400,1300",
                                  "about:blank"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while time.time() < deadline:
            if os.path.exists(port_file):
                lines = open(port_file).read().split("\n")
                if len(lines) >= 2 and lines[1]:
                    break
            if cls.proc.poll() is not None:
                raise Fail("chromium exited with %d" % cls.proc.returncode)
            time.sleep(0.1)
        else:
            raise Fail("chromium did not open its DevTools port in 30 s")
        cls.port = int(lines[0])
        return cls.port

    @classmethod
    def devtools(cls, method, path):
        c = http.client.HTTPConnection("127.0.0.1", cls.devtools_port(), timeout=10)
        try:
            c.request(method, path)
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise Fail("chromium %s %s: %d %r" % (method, path, r.status, body[:200]))
            return body
        finally:
            c.close()

    @classmethod
    def stop(cls):
        if cls.proc is not None:
            sdstest.reap(cls.proc, always=True)
            cls.proc = None
        cls.port = None
        if cls.tmp:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            cls.tmp = None


class Browser:
    """A page of its own in the run's chromium (Chromium), driven over
    the DevTools protocol."""

    def __init__(self, env):
        self.env = env
        page = json.loads(Chromium.devtools("PUT", "/json/new?about:blank"))
        self.target = page["id"]
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.errors = []
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(m)

    def _event(self, msg):
        self.events.append(msg)
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: %s %s" % (d.get("text"),
                                                     d.get("exception", {}).get("description", "")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append("log: %s %s" % (e.get("text"), e.get("url", "")))

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise Fail("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)

    def wait_event(self, name, timeout=20):
        deadline = time.time() + timeout
        for m in self.events:
            if m.get("method") == name:
                return m
        self.ws.sock.settimeout(timeout)
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            self._event(msg)
            if msg.get("method") == name:
                return msg
        raise Fail("no %s in %d s" % (name, timeout))

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise Fail("js %r: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_js(self, expr, timeout=20, what=None):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = self.js(expr)
            if last:
                return last
            time.sleep(0.2)
        raise Fail("%s: still %r after %d s" % (what or expr, last, timeout))

    def close(self):
        self.ws.close()
        try:
            Chromium.devtools("GET", "/json/close/" + self.target)
        except (OSError, Fail):
            pass        # chromium is gone: started again by the next Browser


t_copy.Browser = Browser     # its dashboard test drives the same browser


def test_dashboard(env):
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop", "description": "the \"demo\" shop"},
           want=201)
    now = (int(time.time()) // 10) * 10
    visits = 0
    for i in range(12):
        p = now - 120 + i * 10
        v = 100 + 10 * i
        visits += v
        pts = {"order": pt(v, i % 3, i % 2, 5 if i > 8 else 0, 3 + i % 4,
                           [0] * 14 + [v // 2, v // 3, v - v // 2 - v // 3]),
               "pay": pt(20, 1, 0, 0, 1, [0] * 18 + [20])}
        if i == 11:
            # The newest period: order's probes suspended by the budget.
            pts["order"].update(suspended=True, overhead_pct=12.345)
            pts["pay"].update(overhead_pct=0.014)
        env.ok("POST", "/heartbeat", heartbeat("web-1", p, pts))
    env.ok("POST", "/heartbeat", heartbeat("web-2", now - 20, {"order": pt(50, 0, 0, 0, 9)}))
    visits += 50

    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/" % env.port)
        b.wait_event("Page.loadEventFired")
        b.wait_js("document.querySelector('#apps li') && document.querySelector('#apps li').textContent",
                  what="app list")
        check("shop" in b.js("document.getElementById('apps').textContent"), "app in the list")
        b.wait_js("document.querySelectorAll('#charts .chartcard').length == 2", what="two charts")
        got = b.wait_js("""(() => { const c = document.querySelector('.chartcard[data-point="order"] canvas');
            const ch = c && Chart.getChart(c);
            return ch ? ch.data.datasets[0].data.reduce((a, b) => a + b, 0) : 0; })()""",
                        what="chart data")
        eq(got, visits, "visits drawn in the order chart")
        check(b.js("document.getElementById('app-desc').textContent") == 'the "demo" shop',
              "description shown verbatim")
        eq(b.js("document.querySelectorAll('#hosts tbody tr').length"), 2, "host rows")

        # The points table: the budget's state as of the newest heartbeat.
        rows_js = """[...document.querySelectorAll('#points tbody tr')].map(
            (tr) => [...tr.cells].map((td) => td.textContent))"""
        b.wait_js("document.querySelectorAll('#points tbody tr').length == 2", what="point rows")
        as_of = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(now - 10))
        eq(b.js(rows_js), [["order", "suspended: overhead", "12.3%", str(visits), "15", as_of],
                           ["pay", "ok", "0.014%", "240", "0", as_of]], "points table")
        # Styled as the other warning state (a host behind the version).
        eq(b.js("""getComputedStyle(document.querySelector('#points tbody tr td:nth-child(2) span'))
                   .color"""), "rgb(180, 83, 9)", "colour of the suspended state")
        check(b.js("Chart.getChart(document.querySelectorAll('.chartcard[data-point=\"order\"] canvas')[1])"
                   ".data.datasets[2].data.some(v => v > 0)"), "p99 latency drawn")

        # Edit a strategy in the page; it must reach the API.
        b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
            e.dispatchEvent(new Event('change')); })()""" % json.dumps(TOKEN))
        b.js("""(() => {
            const set = (id, v) => { document.getElementById(id).value = v; };
            set('ed-point', 'order');
            set('f-visit_threshold', '123');
            set('f-downgrade_rate', '50');
            set('f-timeout_ms', '200');
            set('f-probe_calls', '5');
            set('f-probe_failure_pct', '20');
            set('f-slow_rate_threshold', '40');
            set('f-slow_rate_start', '30');
            set('ed-comment', 'from the dashboard');
            document.getElementById('ed-save').click(); })()""")
        deadline = time.time() + 20
        while time.time() < deadline:
            st, doc = env.req("GET", "/api/v1" + APP + "/schemes/default/strategies/order")
            if st == 200:
                break
            time.sleep(0.2)
        check(st == 200, "strategy never reached the API; page status: %r"
              % b.js("document.getElementById('status').textContent"))
        st = env.ok("GET", APP + "/schemes/default/strategies/order")
        eq(st, {"visit_threshold": 123, "downgrade_rate": 50, "timeout_ms": 200,
                "probe_calls": 5, "probe_failure_pct": 20, "slow_rate_threshold": 40,
                "slow_rate_start": 30}, "strategy saved from the page")
        eq(b.js("[document.getElementById('f-probe_calls').placeholder, "
                "document.getElementById('f-probe_failure_pct').placeholder, "
                "document.getElementById('f-slow_rate_threshold').placeholder]"),
           ["1", "0", "off"], "the defaults the editor shows")
        eq(env.ok("GET", APP + "/audit")[0]["comment"], "from the dashboard", "audit comment")
        b.wait_js("document.getElementById('ed-table').textContent.includes('123')",
                  what="editor table updated")
        r = env.ok("POST", "/heartbeat", heartbeat("web-1", now - 10, {"order": pt(1)}))
        eq(r["strategies"]["points"]["order"]["visit_threshold"], 123, "heartbeat gets the edit")

        # Start a 60-s error drill from the drill panel, then stop it there.
        b.js("""(() => {
            const set = (id, v) => { document.getElementById(id).value = v; };
            set('dr-point', 'order'); set('dr-kind', 'error'); set('dr-ratio', '30');
            set('dr-errno', 'ETIMEDOUT');
            set('dr-for', '60'); set('dr-by', 'ops from the page');
            document.getElementById('dr-start').click(); })()""")
        deadline = time.time() + 20
        drills = []
        while time.time() < deadline and not drills:
            drills = env.ok("GET", APP + "/drills")
            time.sleep(0.2)
        check(len(drills) == 1, "drill never reached the API; page status: %r"
              % b.js("document.getElementById('status').textContent"))
        d = drills[0]
        eq((d["point"], d["kind"], d["ratio"], d["errno"], d["started_by"][:17]),
           ("order", "error", 30, "ETIMEDOUT", "ops from the page"),
           "drill started from the page")
        check(58 <= d["expires_at"] - d["created"] <= 60, "drill lasts 60 s")
        r = env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(1)}))
        eq([x["id"] for x in r["drills"]], [d["id"]], "heartbeat carries the drill")
        b.wait_js("!!document.querySelector('#drills tbody button')", what="Stop button")
        b.js("document.querySelector('#drills tbody button').click()")
        deadline = time.time() + 20
        while time.time() < deadline and env.ok("GET", APP + "/drills")[0]["stopped_at"] is None:
            time.sleep(0.2)
        check(env.ok("GET", APP + "/drills")[0]["stopped_at"] is not None,
              "drill stopped from the page")
        r = env.ok("POST", "/heartbeat", heartbeat("web-1", now + 10, {"order": pt(1)}))
        eq(r["drills"], [], "a stopped drill leaves the heartbeat")
        # The heartbeat of `now` came without the fields: the page clears the state.
        b.wait_js("""document.querySelector('#points tbody tr td:nth-child(2)').textContent == 'ok'
                  && document.querySelector('#points tbody tr td:nth-child(3)').textContent
                     == '0.000%'""", what="suspension cleared in the points table")

        time.sleep(0.5)
        shot = b.call("Page.captureScreenshot", format="png")
        out = os.path.join(BUILD, "test", "admin")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "dashboard.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        # Drain pending events before judging the console.
        b.js("1")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()


TESTS = [test_command_line, test_organisation, test_heartbeat_aggregation, test_auth,
         test_bad_inputs, test_sigterm_finishes_inflight, test_static_and_metrics,
         test_point_budget_state, test_point_budget_old_database, test_dashboard]
TESTS += COPY_TESTS
TESTS += ROLE_TESTS
TESTS += SCOPE_TESTS
TESTS += DRILL_ERRNO_TESTS
from t_pwfile import PWFILE_TESTS  # noqa: E402
TESTS += PWFILE_TESTS
import t_scan_apart  # noqa: E402
t_scan_apart.T0, t_scan_apart.TOKEN, t_scan_apart.STORE = T0, TOKEN, STORE
TESTS += t_scan_apart.SCAN_APART_TESTS
import t_pg  # noqa: E402  (its tests use the suite's Env)
t_pg.T0, t_pg.TOKEN, t_pg.ADMIN = T0, TOKEN, ADMIN
PG_TESTS = t_pg.PG_TESTS

# Seconds per test: a stuck guard, loader or browser fails its test
# instead of hanging `make test` (the slowest admin test (a browser) takes ~6 s).
TEST_TIMEOUT = 120
SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
SUITE.tests = TESTS


def preflight():
    if not os.access(ADMIN, os.X_OK):
        return "%s missing: run make" % ADMIN
    if STORE == "pg":
        return pgtest.available()
    return None


def main(argv):
    global PG
    if STORE != "pg":
        return SUITE.main(argv, lambda name: Env(), preflight)
    # SQLite's own migration test has no PostgreSQL form; said, not skipped silently.
    SUITE.tests = [t for t in TESTS if t is not test_point_budget_old_database] + PG_TESTS
    print("NOTE: test_point_budget_old_database is SQLite's schema 2 -> 5 migration,"
          " not run on PostgreSQL (whose schema is test_pg_newer_schema's)")
    if pgtest.available():
        return SUITE.main(argv, lambda name: Env(), preflight)
    try:
        PG = pgtest.cluster()
        PG.start()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        if PG:
            PG.stop()
        return SUITE.main(argv, lambda name: Env(), lambda: "no PostgreSQL: %s"
                          % str(e).strip().splitlines()[0])
    # The run's own dir: a server the lane runner shares has no dir of ours.
    passdir = tempfile.mkdtemp(prefix="sds-admin-pgpass.")
    try:
        t_scan_apart.PG = PG
        passfile = os.path.join(passdir, "pgpass")
        sdstest.write_token(passfile, "127.0.0.1:%d:*:%s:%s" % (PG.port, pgtest.USER,
                                                              PG.password))
        os.environ["PGPASSFILE"] = passfile
        return SUITE.main(argv, lambda name: Env(), preflight)
    finally:
        PG.stop()
        shutil.rmtree(passdir, ignore_errors=True)


if __name__ == "__main__":
    try:
        rc = main(sys.argv[1:])
    finally:
        Chromium.stop()
    sys.exit(rc)
