# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
sds-admin's command line, organisation API, authentication, its exit at
SIGTERM and its static files and /metrics.
"""

import json
import os
import signal
import socket
import subprocess
import time

import sdstest
from sdstest import check, eq
from admin_lib import (ADMIN, APP, T0, TOKEN,
                       headers_only, heartbeat, pt, test)


@test
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


@test
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
    # A rename: the active scheme stays active, its strategies stay, no new version.
    env.bad("PATCH", APP + "/schemes/storm", {"name": "default"}, want=409, field="default")
    env.bad("PATCH", APP + "/schemes/storm", {"name": "no way"}, want=400, field="name")
    env.bad("PATCH", APP + "/schemes/nosuch", {"name": "x"}, want=404, field="nosuch")
    r = env.ok("PATCH", APP + "/schemes/storm", {"name": "gale", "comment": "renamed"})
    eq((r["name"], r["active"]), ("gale", True), "the scheme renamed")
    doc = env.ok("GET", APP + "/strategies")
    eq((doc["version"], doc["scheme"], doc["points"]["order"]["visit_threshold"]),
       (4, "gale", 0), "active strategies after the rename")
    a0 = env.ok("GET", APP + "/audit")[0]
    eq((a0["action"], a0["detail"], a0["comment"]), ("scheme.rename", "storm -> gale", "renamed"),
       "rename audited")
    env.ok("PATCH", APP + "/schemes/gale", {"name": "storm"})
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


@test
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


@test
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


@test
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
