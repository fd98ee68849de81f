# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Roles and the other hardening of issue 16 in sds-admin: tokens with a
role (401/403, refusals audited by fingerprint), token file modes, the
Host header (421), the per-client connection cap, the statistics range
cap and the retention of hosts and the audit log, all exact.  Imported by
run.py (its Env: one sds-admin per test).
"""

import os
import socket
import time

import sdstest
from sdstest import check, eq
from admin_lib import (APP, T0, TOKEN, bearer,
                       denied, fp, refused, stop_with_stderr, test)  # TOKEN: the operator's

HB_TOKEN = "hb-t0ken.for_loaders"
RD_TOKEN = "rd-t0ken.for_readers"


def hb(host, period, visits, app="shop"):
    return {"group": "demo", "app": app, "host": host, "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": 0,
            "points": {"order": {"visits": visits}}}


def role_files(env):
    hbf = sdstest.write_token(os.path.join(env.tmp, "hb.token"), HB_TOKEN)
    rdf = sdstest.write_token(os.path.join(env.tmp, "rd.token"), RD_TOKEN)
    return ["--heartbeat-token-file", hbf, "--read-token-file", rdf]


@test
def test_roles(env):
    env.start_admin(*role_files(env), "--protect-reads")
    HB, RD, OP = bearer(HB_TOKEN), bearer(RD_TOKEN), bearer(TOKEN)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201, token=OP)
    # Heartbeats: the heartbeat token and the operator's; a reader's is 403.
    env.ok("POST", "/heartbeat", hb("web-1", T0, 3), token=HB)
    env.ok("POST", "/heartbeat", hb("web-2", T0, 4), token=OP)
    env.bad("POST", "/heartbeat", hb("web-3", T0, 5), token=RD, want=403)
    for tok in (False, "Bearer nope", bearer(HB_TOKEN + "x"), HB_TOKEN):
        env.bad("POST", "/heartbeat", hb("web-4", T0, 6), token=tok, want=401)
    # sds-copy's heartbeat: a copy-server token's (t_copy.py), 403 with
    # a loader's heartbeat token or a reader's.
    env.bad("POST", "/copy-servers/heartbeat", {}, token=HB, want=403)
    env.bad("POST", "/copy-servers/heartbeat", {}, token=RD, want=403)
    # Writes: the operator only; heartbeat and read tokens get 403.
    writes = [("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 5}),
              ("POST", APP + "/schemes", {"name": "s2"}),
              ("POST", APP + "/drills", {"point": "order", "kind": "error",
                                         "duration_s": 60, "by": "mallory"}),
              ("DELETE", APP, None),
              ("POST", "/groups", {"name": "g2"})]
    for tok in (HB, RD):
        for method, path, body in writes:
            env.bad(method, path, body, token=tok, want=403)
    for method, path, body in writes:
        env.bad(method, path, body, token=False, want=401)
    # Reads: a reader and the operator everything; a heartbeat token only
    # its app's strategies; no token 401.
    for path in ("/apps", APP, APP + "/hosts", APP + "/audit",
                 APP + "/stats?from=%d&to=%d" % (T0, T0 + 10)):
        env.ok("GET", path, token=RD)
        env.ok("GET", path, token=OP)
        env.bad("GET", path, token=HB, want=403)
        env.bad("GET", path, token=False, want=401)
    for path in (APP + "/strategies", APP + "/active_scheme",
                 APP + "/schemes/default/strategies"):
        for tok in (HB, RD, OP):
            env.ok("GET", path, token=tok)
        env.bad("GET", path, token=False, want=401)
    # Nothing the refused requests asked for happened.
    eq([s["name"] for s in env.ok("GET", APP + "/schemes", token=OP)], ["default"],
       "schemes after refused writes")
    eq(env.ok("GET", APP + "/drills", token=OP), [], "drills after refused writes")
    eq(sorted(h["host"] for h in env.ok("GET", APP + "/hosts", token=OP)),
       ["web-1", "web-2"], "hosts")
    # Each refused write of the app is an audit row naming the token's
    # role and fingerprint, never the token.
    rows, text = denied(env, APP, token=OP)
    want = []
    for tok, role in ((RD_TOKEN, "read"), (HB_TOKEN, "heartbeat")):
        for method, path, _ in writes[:4]:
            want.append(("%s /api/v1%s" % (method, path), "%s token %s" % (role, fp(tok))))
    eq(rows, sorted(want), "audit rows of refused writes")
    check(HB_TOKEN not in text and RD_TOKEN not in text and TOKEN not in text,
          "a token in the audit log")
    # A drill by the operator carries the operator's fingerprint.
    env.ok("POST", APP + "/drills", {"point": "order", "kind": "error", "duration_s": 60,
                                    "by": "alice"}, want=201, token=OP)
    eq(env.ok("GET", APP + "/drills", token=OP)[0]["started_by"],
       "alice (token %s)" % fp(TOKEN), "started_by")
    m = env.req("GET", "/metrics", token=False)[1]
    # 403: 1 heartbeat + 2 copy heartbeats + 10 writes + 5 reads.
    check("sds_admin_forbidden_total 18\n" in m, "metrics: 18 forbidden:\n" + m)
    check("sds_admin_unauthorized_total 17\n" in m, "metrics: 17 unauthorized:\n" + m)
    # The refused posts that name no app are said on stderr, once each.
    err = stop_with_stderr(env)
    eq(err, ["sds-admin: refused read token %s: POST /api/v1/heartbeat (403)" % fp(RD_TOKEN),
             "sds-admin: refused heartbeat token %s: POST /api/v1/copy-servers/heartbeat (403)"
             % fp(HB_TOKEN),
             "sds-admin: refused read token %s: POST /api/v1/copy-servers/heartbeat (403)"
             % fp(RD_TOKEN),
             "sds-admin: refused heartbeat token %s: POST /api/v1/groups (403)" % fp(HB_TOKEN),
             "sds-admin: refused read token %s: POST /api/v1/groups (403)" % fp(RD_TOKEN)],
       "stderr")

    # Reads open (the default): no token needed, a heartbeat token too.
    env.start_admin(*role_files(env))
    env.ok("GET", APP + "/hosts", token=False)
    env.ok("GET", APP + "/hosts", token=HB)
    env.bad("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 5},
            token=HB, want=403)
    stop_with_stderr(env)


@test
def test_token_file_modes(env):
    db = os.path.join(env.tmp, "x.db")
    base = ["--listen", "127.0.0.1:1", "--db", db]
    for opt in ("--token-file", "--heartbeat-token-file", "--read-token-file"):
        for mode in (0o644, 0o640, 0o604, 0o660, 0o700, 0o000):
            f = sdstest.write_token(os.path.join(env.tmp, "loose"), "abc", mode=mode)
            argv = base + (["--token-file", env.token_file] if opt != "--token-file" else [])
            refused(argv + [opt, f], [opt, f, "mode %04o" % mode])
        f = sdstest.write_token(os.path.join(env.tmp, "theirs"), "abc")
        os.chown(f, sdstest.NOBODY, sdstest.NOBODY)
        argv = base + (["--token-file", env.token_file] if opt != "--token-file" else [])
        refused(argv + [opt, f], [opt, f, "owned by uid %d" % sdstest.NOBODY])
        os.unlink(f)
    # The same token under two roles: refused.
    same = sdstest.write_token(os.path.join(env.tmp, "same"), TOKEN)
    refused(base + ["--token-file", env.token_file, "--heartbeat-token-file", same],
             ["--heartbeat-token-file", same, "the same token"])
    # A heartbeat token alone: no operator.
    hbf = sdstest.write_token(os.path.join(env.tmp, "hb"), HB_TOKEN)
    refused(base + ["--heartbeat-token-file", hbf], ["--token-file", "missing"])
    # 0400 is fine.
    os.chmod(hbf, 0o400)
    env.start_admin("--heartbeat-token-file", hbf)
    env.ok("POST", "/heartbeat", hb("web-1", T0, 1), token=bearer(HB_TOKEN))
    env.stop_admin()


def raw_status(port, request):
    """Send @request (bytes) on a new connection: the reply's status."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(request)
        resp = b""
        while b"\r\n" not in resp:
            chunk = s.recv(4096)
            if not chunk:
                break
            resp += chunk
        return int(resp.split(b" ")[1]) if resp else None
    finally:
        s.close()


@test
def test_host_header(env):
    env.start_admin("--allow-host", "admin.example", "--allow-host", "[fd00::1]")
    p = env.port
    cases = [("127.0.0.1:%d" % p, 200), ("127.0.0.1", 200), ("localhost", 200),
             ("LocalHost:%d" % p, 200), ("localhost.", 200), ("[::1]:%d" % p, 200),
             ("[::1]", 200), ("admin.example", 200), ("admin.example:%d" % p, 200),
             ("[fd00::1]:%d" % p, 200),
             ("evil.example", 421), ("evil.example:%d" % p, 421),
             ("127.0.0.1:%d" % (p + 1), 421), ("localhost:", 421),
             ("localhost:%dx" % p, 421), ("localhost:+%d" % p, 421),
             ("localhost:-%d" % p, 421), ("admin.example.evil", 421),
             ("127.0.0.1.nip.io", 421), ("[::2]", 421), ("", 421)]
    for host, want in cases:
        for path in ("/api/v1/apps", "/", "/metrics"):
            st = raw_status(p, ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                                % (path, host)).encode())
            eq(st, want, "GET %s with Host %r" % (path, host))
    # A write with a bad Host is 421 before the token is looked at.
    eq(raw_status(p, b"POST /api/v1/groups HTTP/1.1\r\nHost: evil\r\nContent-Length: 0\r\n"
                     b"Connection: close\r\n\r\n"), 421, "POST, bad Host, no token")
    # HTTP/1.0 without a Host: 421; /healthz answers whatever the Host.
    eq(raw_status(p, b"GET /api/v1/apps HTTP/1.0\r\n\r\n"), 421, "HTTP/1.0 without Host")
    eq(raw_status(p, b"GET /healthz HTTP/1.1\r\nHost: lb.internal\r\nConnection: close\r\n\r\n"),
       200, "/healthz, any Host")
    m = env.req("GET", "/metrics", token=False)[1]
    n = 11 * 3 + 2      # the 421 cases on three paths, the POST, HTTP/1.0
    check("sds_admin_misdirected_total %d\n" % n in m, "metrics: %d misdirected:\n%s" % (n, m))
    env.stop_admin()
    # A malformed --allow-host is refused.
    db = os.path.join(env.tmp, "y.db")
    for bad in ("a b", "host:80", "[::1", "", "a/b"):
        refused(["--listen", "127.0.0.1:1", "--db", db, "--token-file",
                       env.token_file, "--allow-host", bad], ["--allow-host"])


@test
def test_conn_cap(env):
    env.start_admin("--max-conns-per-client", "3")
    held = []
    try:
        deadline = time.time() + 10
        while len(held) < 3:
            # A whole request answered: the admin has taken the connection,
            # which stays open (keep-alive).  A reset: the admin has not yet
            # seen an earlier connection (start_admin's probe) close; again.
            s = socket.create_connection(("127.0.0.1", env.port), timeout=10)
            try:
                s.sendall(b"GET /api/v1/apps HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                got = b""
                while not got.endswith(b"[]\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        raise ConnectionResetError
                    got += chunk
                held.append(s)
            except ConnectionResetError:
                s.close()
                check(time.time() < deadline, "no connection held within 10 s")
                time.sleep(0.1)
        # The fourth is closed without a reply.
        s = socket.create_connection(("127.0.0.1", env.port), timeout=10)
        try:
            s.sendall(b"GET /api/v1/apps HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                got = s.recv(4096)
            except ConnectionResetError:
                got = b""
            eq(got, b"", "the fourth connection's reply")
        finally:
            s.close()
        # One closed: the next gets in.
        held.pop().close()
        time.sleep(0.3)
        eq(env.req("GET", "/api/v1/apps", token=False)[0], 200, "after one closed")
    finally:
        for s in held:
            s.close()
    env.stop_admin()
    db = os.path.join(env.tmp, "z.db")
    refused(["--listen", "127.0.0.1:1", "--db", db, "--token-file", env.token_file,
                   "--max-conns-per-client", "-1"], ["--max-conns-per-client"])


@test
def test_stats_range_cap(env):
    env.start_admin()
    env.ok("POST", "/heartbeat", hb("web-1", T0, 7))
    to = T0 + 10
    d = env.ok("GET", APP + "/stats?from=%d&to=%d&step=86400" % (to - 31 * 86400, to))
    eq(d["points"]["order"]["total"]["visits"], 7, "31 days: the visits")
    e = env.bad("GET", APP + "/stats?from=%d&to=%d" % (to - 31 * 86400 - 10, to),
                field="31 days")
    eq(e["error"], "from/to: range longer than 31 days", "the error")
    env.bad("GET", APP + "/stats?from=%d&to=%d" % (to - 366 * 86400, to), field="31 days")
    env.stop_admin()


@test
def test_retention(env):
    env.start_admin()
    for i, h in enumerate(("web-1", "web-2", "web-3")):
        env.ok("POST", "/heartbeat", hb(h, T0, i + 1))
    for s in ("s1", "s2", "s3"):
        env.ok("POST", APP + "/schemes", {"name": s}, want=201)
    eq(len(env.ok("GET", APP + "/audit")), 4, "audit rows: app.register and 3 scheme.create")
    env.stop_admin()
    now = int(time.time())
    # Through env.sql: the same statements on SQLite and on PostgreSQL.
    env.sql("UPDATE hosts SET last_seen = %d WHERE host = 'web-1'" % (now - 31 * 86400))
    env.sql("UPDATE hosts SET last_seen = %d WHERE host = 'web-2'" % (now - 29 * 86400))
    env.sql("UPDATE audit SET time = %d WHERE id IN"
            " (SELECT id FROM audit ORDER BY id LIMIT 2)" % (now - 40 * 86400))
    env.sql("UPDATE audit SET time = %d WHERE id ="
            " (SELECT id FROM audit ORDER BY id LIMIT 1 OFFSET 2)" % (now - 29 * 86400))
    # 0 keeps everything.
    env.start_admin("--retention-days", "0")
    eq(len(env.ok("GET", APP + "/hosts")), 3, "hosts kept with 0")
    eq(len(env.ok("GET", APP + "/audit")), 4, "audit rows kept with 0")
    env.stop_admin()
    # 30: exactly the rows older than 30 days go, at start.
    env.start_admin("--retention-days", "30")
    eq(sorted(h["host"] for h in env.ok("GET", APP + "/hosts")), ["web-2", "web-3"],
       "hosts after retention")
    eq([a["detail"] for a in env.ok("GET", APP + "/audit")], ["s3", "s2"],
       "audit rows after retention")
    env.stop_admin()


@test
def test_hosts_by_identity(env):
    """Two hosts named localhost, each with its id (loader/report/hostid.c), stay two."""
    env.start_admin()
    a, b = "localhost_0123456789ab", "localhost_ba9876543210"
    env.ok("POST", "/heartbeat", hb(a, T0, 2))
    env.ok("POST", "/heartbeat", hb(b, T0, 5))
    eq(sorted(h["host"] for h in env.ok("GET", APP + "/hosts")), [a, b], "hosts")
    d = env.ok("GET", APP + "/stats?from=%d&to=%d&step=10" % (T0, T0 + 10))
    eq(d["points"]["order"]["visits"], [7], "both hosts' visits")
    env.stop_admin()
