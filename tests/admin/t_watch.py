# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The push channel's admin side (issue 32, docs: admin/API.md "Push"):
GET /api/v1/watch waits (its connection suspended) until the app's
change sequence moves or its wait passes; GET /api/v1/sync answers what
a heartbeat would, storing nothing.  Real sockets hold the waits (from
several loopback addresses where the per-address limits would be in the
way), times are measured, counts come from what the test did; on
PostgreSQL, three admins on one database hear each other's writes.
Imported by run.py (its Env: one sds-admin per test).
"""

import json
import os
import socket
import threading
import time
import types

import sdsadmin
import sdstest
from sdstest import Fail, check, eq
from admin_lib import ADMIN, APP, T0, TOKEN, bearer, denied, fp, heartbeat, only, pt, test

HB_TOKEN = "hb-t0ken.push_loaders"
RD_TOKEN = "rd-t0ken.push_readers"
SC_TOKEN = "hb-sc0pe.push-demo-shop"    # demo/shop only
OP = bearer(TOKEN)
PLAN = {"name": "p1", "points": ["order"], "sample_pct": 30, "amplification": 1,
        "framing": "http", "writes": True, "rate": 100, "shadows": ["127.0.0.1:9"],
        "duration_s": 600, "by": "alice"}
STRAT = APP + "/schemes/default/strategies/order"


class Resp:
    def __init__(self, status, headers, body, took):
        self.status, self.headers, self.body, self.took = status, headers, body, took


def get(port, path, token=OP, src="127.0.0.1", timeout=70):
    """One GET on a socket of its own from address @src: its status,
    headers (lowercase names), parsed JSON body and the seconds it took."""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.bind((src, 0))
        t = time.monotonic()
        s.connect(("127.0.0.1", port))
        auth = "Authorization: %s\r\n" % token if token else ""
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n"
                   % (path, auth)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        took = time.monotonic() - t
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1."):
        raise Fail("GET %s: no HTTP answer: %r" % (path, data[:200]))
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers[k.strip().lower()] = v.strip()
    return Resp(int(lines[0].split()[1]), headers,
                json.loads(body.decode()) if body.strip() else None, took)


def watch_path(seq=None, wait=None, g="demo", a="shop"):
    q = "/api/v1/watch?group=%s&app=%s" % (g, a)
    if seq is not None:
        q += "&seq=%d" % seq
    if wait is not None:
        q += "&wait=%d" % wait
    return q


def seq_of(port, **kw):
    r = get(port, watch_path(), **kw)
    eq(r.status, 200, "watch without seq: status (%r)" % r.body)
    check(isinstance(r.body["seq"], int) and 1 <= r.body["seq"] < 2 ** 53,
          "seq %r: an integer 1..2^53-1" % r.body)
    return r.body["seq"]


def metrics(port):
    st, text = sdstest.http_request(port, "GET", "/metrics")
    eq(st, 200, "/metrics")
    out = {}
    for line in text.splitlines():
        if line.startswith("sds_admin_watch"):
            name, value = line.rsplit(" ", 1)
            out[name] = int(float(value))
    return out


def wait_watchers(port, n, timeout=20):
    """Until @n watches wait on the admin at @port."""
    sdstest.wait_until(lambda: metrics(port).get("sds_admin_watchers") == n,
                       time.time() + timeout,
                       lambda _: "sds_admin_watchers: %r, want %d" % (metrics(port), n))


class Waiter(threading.Thread):
    """A watch held on a thread: .resp once answered (.error if it failed)."""

    def __init__(self, port, path, src="127.0.0.1", token=OP):
        super().__init__(daemon=True)
        self.args_ = (port, path, token, src)
        self.resp = self.error = None
        self.done_at = None
        self.start()

    def run(self):
        try:
            port, path, token, src = self.args_
            self.resp = get(port, path, token=token, src=src)
            self.done_at = time.monotonic()
        except Exception as e:   # noqa: BLE001 (the test reads it)
            self.error = repr(e)

    def result(self, timeout=30):
        self.join(timeout)
        if self.is_alive():
            raise Fail("a watch not answered within %d s" % timeout)
        if self.error:
            raise Fail("a watch failed: %s" % self.error)
        return self.resp


def put_threshold(env, n):
    env.ok("PUT", STRAT, {"visit_threshold": n})


def make_app(env):
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)


@test
def test_watch_times_out(env):
    """No change: the watch is answered after its wait, with its seq."""
    env.start_admin()
    make_app(env)
    s = seq_of(env.port)
    eq(seq_of(env.port), s, "seq of an app that did not change")
    r = get(env.port, watch_path(s, wait=1))
    eq((r.status, r.body), (200, {"seq": s}), "watch answered at the end of its wait")
    check(0.95 <= r.took <= 2.5, "wait=1 answered after %.2f s, want about 1" % r.took)
    # A seq that is not the app's (an earlier admin's): at once.
    r = get(env.port, watch_path(s + 7, wait=20))
    eq((r.status, r.body), (200, {"seq": s}), "watch with another seq")
    check(r.took < 1, "another seq answered after %.2f s, want at once" % r.took)
    m = metrics(env.port)
    eq((m["sds_admin_watchers"], m["sds_admin_watch_timeouts_total"],
        m["sds_admin_watch_wakes_total"]), (0, 1, 0), "watchers, timeouts, wakes")
    env.stop_admin()


@test
def test_watch_answered_by_a_change(env):
    """A PUT of a strategy answers a waiting watch within 1 s, with a new
    seq; the sync after it returns the new strategies."""
    env.start_admin()
    make_app(env)
    s = seq_of(env.port)
    w = Waiter(env.port, watch_path(s, wait=30))
    wait_watchers(env.port, 1)
    t = time.monotonic()
    put_threshold(env, 42)
    r = w.result()
    took = w.done_at - t
    eq(r.status, 200, "watch status")
    check(r.body["seq"] != s, "seq after the change: %r, the same as before" % r.body)
    check(took < 1.0, "watch answered %.3f s after the PUT began, want < 1 s" % took)
    eq(seq_of(env.port), r.body["seq"], "the app's seq after the change")
    st, doc = env.req("GET", "/api/v1/sync?group=demo&app=shop&version=1", token=OP)
    eq(st, 200, "sync status")
    eq((doc["version"], doc["changed"], doc["strategies"]["points"]["order"]["visit_threshold"]),
       (2, True, 42), "sync after the change")
    # A write of another app leaves this one's seq.
    env.ok("POST", "/groups/demo/apps", {"name": "cart"}, want=201)
    env.ok("PUT", "/groups/demo/apps/cart/schemes/default/strategies/order",
           {"visit_threshold": 3})
    eq(seq_of(env.port), r.body["seq"], "seq after another app's write")
    m = metrics(env.port)
    eq((m["sds_admin_watch_wakes_total"], m["sds_admin_watch_timeouts_total"]), (1, 0),
       "wakes, timeouts")
    env.stop_admin()


@test
def test_watch_many_waiters(env):
    """200 watches on one app, from 25 addresses, all answered by one change."""
    env.start_admin()
    make_app(env)
    s = seq_of(env.port)
    waiters = [Waiter(env.port, watch_path(s, wait=50), src="127.0.0.%d" % (2 + i % 25))
               for i in range(200)]
    wait_watchers(env.port, 200, timeout=40)
    t = time.monotonic()
    put_threshold(env, 9)
    got = [w.result(10) for w in waiters]
    last = max(w.done_at for w in waiters) - t
    eq(sorted(set((r.status, r.body["seq"]) for r in got)), [(200, s + 1)],
       "every watch's status and seq")
    check(last < 3.0, "the last of 200 watches answered %.2f s after the PUT" % last)
    m = metrics(env.port)
    eq((m["sds_admin_watchers"], m["sds_admin_watch_wakes_total"]), (0, 200),
       "watchers, wakes after the change")
    env.stop_admin()


@test
def test_watch_max_watchers(env):
    """--max-watchers 3: the 4th waiting watch is 503 with Retry-After: 10;
    one that need not wait is answered; 0 turns the channel off."""
    env.start_admin("--max-watchers", "3")
    make_app(env)
    s = seq_of(env.port)
    waiters = [Waiter(env.port, watch_path(s, wait=30)) for _ in range(3)]
    wait_watchers(env.port, 3)
    r = get(env.port, watch_path(s, wait=30))
    eq((r.status, r.headers.get("retry-after")), (503, "10"), "4th watch (%r)" % r.body)
    check("--max-watchers" in r.body["error"], "503's error: %r" % r.body)
    eq(seq_of(env.port), s, "a watch that need not wait, at the limit")
    put_threshold(env, 5)
    eq([w.result().body for w in waiters], [{"seq": s + 1}] * 3, "the 3 waiters")
    m = metrics(env.port)
    eq((m['sds_admin_watch_refused_total{why="limit"}'], m["sds_admin_watchers_max"]),
       (1, 3), "refused over the limit, the limit")
    env.stop_admin()

    env.start_admin("--max-watchers", "0")
    r = get(env.port, watch_path())
    eq((r.status, r.headers.get("retry-after")), (503, "60"), "watch with --max-watchers 0")
    check("--max-watchers 0" in r.body["error"], "error %r" % r.body)
    # The rest of the API, sync too, as before.
    st, _ = env.req("GET", "/api/v1/sync?group=demo&app=shop", token=OP)
    eq(st, 200, "sync with the channel off")
    env.stop_admin()


@test
def test_watch_rate(env):
    """One address: 10 watches at once, then 2 a second; past it 429 with
    Retry-After: 1; another address has its own bucket."""
    env.start_admin()
    make_app(env)
    t = time.monotonic()
    n = 0
    while True:
        r = get(env.port, watch_path(), src="127.0.0.5")
        if r.status != 200:
            break
        n += 1
        check(n < 40, "no 429 after %d watches" % n)
    took = time.monotonic() - t
    eq((r.status, r.headers.get("retry-after")), (429, "1"), "past the bucket (%r)" % r.body)
    # 10 at once and 2 a second refilled while the test sent them.
    check(10 <= n <= 10 + int(2 * took) + 1,
          "%d watches answered before the 429, in %.2f s" % (n, took))
    eq(get(env.port, watch_path(), src="127.0.0.6").status, 200, "another address")
    time.sleep(0.6)
    eq(get(env.port, watch_path(), src="127.0.0.5").status, 200, "after 0.6 s")
    m = metrics(env.port)
    eq(m['sds_admin_watch_refused_total{why="rate"}'], 1, "refused for the rate")
    env.stop_admin()


@test
def test_watch_sync_auth(env):
    """Watch and sync need a heartbeat (or operator) token, reads open or
    not: 401 without one or with a wrong one, 403 for a reader's token,
    and for a scoped token outside its scope (audited in the app)."""
    hbf = sdstest.write_token(os.path.join(env.tmp, "hb.token"), HB_TOKEN)
    rdf = sdstest.write_token(os.path.join(env.tmp, "rd.token"), RD_TOKEN)
    scf = sdstest.write_token(os.path.join(env.tmp, "sc.token"), SC_TOKEN)
    env.start_admin("--heartbeat-token-file", hbf, "--read-token-file", rdf,
                    "--heartbeat-token-file", scf + ":demo/shop")
    make_app(env)
    env.ok("POST", "/groups/demo/apps", {"name": "cart"}, want=201)
    paths = {"watch": lambda a: watch_path(a=a),
             "sync": lambda a: "/api/v1/sync?group=demo&app=%s&version=0" % a}
    for what, path in paths.items():
        for tok in (None, "Bearer nope", bearer(HB_TOKEN + "x")):
            r = get(env.port, path("shop"), token=tok)
            eq(r.status, 401, "%s with token %r (%r)" % (what, tok, r.body))
        r = get(env.port, path("shop"), token=bearer(RD_TOKEN))
        eq(r.status, 403, "%s with a reader's token (%r)" % (what, r.body))
        r = get(env.port, path("cart"), token=bearer(SC_TOKEN))
        eq(r.status, 403, "%s of demo/cart with demo/shop's token" % what)
        check("demo/cart is outside it" in r.body["error"], "error %r" % r.body)
        for tok in (HB_TOKEN, SC_TOKEN, TOKEN):
            r = get(env.port, path("shop"), token=bearer(tok))
            eq(r.status, 200, "%s with token %s (%r)" % (what, tok, r.body))
        r = get(env.port, path("cart"), token=bearer(HB_TOKEN))
        eq(r.status, 200, "%s of demo/cart with an unscoped heartbeat token" % what)
    # Other methods: an operator's 405, a loader's 403 (they would be writes).
    for what in ("watch", "sync"):
        st, doc = env.req("POST", "/api/v1/%s?group=demo&app=shop" % what, {}, token=OP)
        eq(st, 405, "POST %s with the operator's token (%r)" % (what, doc))
        st, _ = env.req("POST", "/api/v1/%s?group=demo&app=shop" % what, {},
                        token=bearer(HB_TOKEN))
        eq(st, 403, "POST %s with a heartbeat token" % what)
    rows, text = denied(env, "/groups/demo/apps/cart")
    eq(rows, [("GET /api/v1/%s for demo/cart (scope demo/shop)" % w,
               "heartbeat token %s" % fp(SC_TOKEN)) for w in ("sync", "watch")],
       "demo/cart's denied rows: " + text)
    rows, text = denied(env, "/groups/demo/apps/shop")
    eq(rows, sorted([("GET /api/v1/%s" % w, "read token %s" % fp(RD_TOKEN))
                     for w in ("sync", "watch")] +
                    [("POST /api/v1/%s" % w, "heartbeat token %s" % fp(HB_TOKEN))
                     for w in ("sync", "watch")]), "demo/shop's denied rows: " + text)
    env.stop_admin()


@test
def test_watch_bad_requests(env):
    """Bad arguments are 400 naming the argument; an unknown app is 404."""
    env.start_admin()
    make_app(env)
    cases = [("/api/v1/watch?app=shop", "group"), ("/api/v1/watch?group=demo", "app"),
             ("/api/v1/watch?group=de.mo&app=shop", "group"),
             ("/api/v1/watch?group=demo&app=shop&seq=x", "seq"),
             ("/api/v1/watch?group=demo&app=shop&seq=-1", "seq"),
             ("/api/v1/watch?group=demo&app=shop&seq=9007199254740992", "seq"),
             ("/api/v1/watch?group=demo&app=shop&wait=0", "wait"),
             ("/api/v1/watch?group=demo&app=shop&wait=56", "wait"),
             ("/api/v1/sync?group=demo", "app"),
             ("/api/v1/sync?group=demo&app=shop&version=v2", "version")]
    for i, (path, field) in enumerate(cases):
        # Addresses of their own: the bucket is not what is tested here.
        r = get(env.port, path, src="127.0.1.%d" % (i + 1))
        eq(r.status, 400, "%s (%r)" % (path, r.body))
        check(field in r.body["error"], "%s: error %r does not name %s"
              % (path, r.body, field))
    for path in (watch_path(a="nope"), "/api/v1/sync?group=demo&app=nope&version=0"):
        r = get(env.port, path)
        eq((r.status, r.body), (404, {"error": "no app demo/nope"}), path)
    env.stop_admin()


@test
def test_sync_is_the_heartbeat_reply(env):
    """Sync answers exactly what a heartbeat of the app would (strategies
    when the version differs, drills, copy plans) and stores nothing."""
    env.start_admin()
    make_app(env)
    put_threshold(env, 7)
    env.ok("POST", APP + "/drills", {"point": "order", "kind": "error", "ratio": 30,
                                     "duration_s": 600, "by": "alice"}, want=201)
    env.ok("POST", APP + "/copy-plans", PLAN, want=201)
    for have in (0, 1, 2):
        st, sync = env.req("GET", "/api/v1/sync?group=demo&app=shop&version=%d" % have,
                           token=OP)
        eq(st, 200, "sync version=%d (%r)" % (have, sync))
        hb = env.ok("POST", "/heartbeat",
                    heartbeat("web-1", T0 + 10 * have, {"order": pt(1)}, version=have))
        eq(sync, hb, "sync and heartbeat replies with version %d" % have)
        eq(sync["changed"], have != 2, "changed with version %d" % have)
    eq([d["ratio"] for d in sync["drills"]], [30], "sync's drills")
    eq([p["name"] for p in sync["copy"]["plans"]], ["p1"], "sync's plans")
    # Sync's own writes: none.
    before = {p: env.ok("GET", p) for p in (APP + "/hosts", "/apps", APP + "/audit",
                                            APP + "/stats?from=%d&to=%d&step=10"
                                            % (T0, T0 + 40))}
    for _ in range(3):
        env.req("GET", "/api/v1/sync?group=demo&app=shop&version=0", token=OP)
        env.req("GET", "/api/v1/sync?group=demo&app=new&version=0", token=OP)
    after = {p: env.ok("GET", p) for p in before}
    eq(after, before, "hosts, apps, audit and statistics after the syncs")
    env.bad("GET", "/groups/demo/apps/new", want=404)
    env.stop_admin()


@test
def test_watch_app_deleted(env):
    """Deleting the app answers its watches; then a watch of it is 404."""
    env.start_admin()
    make_app(env)
    s = seq_of(env.port)
    w = Waiter(env.port, watch_path(s, wait=30))
    wait_watchers(env.port, 1)
    env.ok("DELETE", APP)
    eq(w.result().body, {"seq": s + 1}, "the watch of the deleted app")
    r = get(env.port, watch_path())
    eq((r.status, r.body), (404, {"error": "no app demo/shop"}), "watch after the delete")
    make_app(env)
    eq(seq_of(env.port), s + 1, "the app created again: its seq goes on")
    env.stop_admin()


@test
def test_watch_shutdown(env):
    """SIGTERM answers every waiting watch with its seq; exit 0, quiet."""
    env.start_admin()
    make_app(env)
    s = seq_of(env.port)
    waiters = [Waiter(env.port, watch_path(s, wait=50), src="127.0.2.%d" % (i + 1))
               for i in range(5)]
    wait_watchers(env.port, 5)
    t = time.monotonic()
    env.stop_admin()
    eq([w.result(10).body for w in waiters], [{"seq": s}] * 5, "the waiters' answers")
    last = max(w.done_at for w in waiters) - t
    check(last < 5, "waiters answered %.2f s after SIGTERM" % last)


@test
def test_watch_fd_limit(env):
    """An open files limit that cannot fit --max-watchers: raised to its
    hard limit, the watchers that fit taken, said in one line."""
    sh = 'ulimit -Sn 1024 && ulimit -Hn 5000 && exec "$@"'

    def argv(port):
        return ["sh", "-c", sh, "sh"] + sdstest.admin_argv(
            ADMIN, port, env.db_arg(), env.token_file, ["--max-watchers", "10000"])
    adm = sdsadmin.Admin(env, token=TOKEN, argv_for=argv).start()
    env.port = adm.port
    with open("/proc/%d/limits" % adm.pid) as f:
        nofile = [ln.split()[3:5] for ln in f if ln.startswith("Max open files")]
    eq(nofile, [["5000", "5000"]], "open files limits (soft, hard)")
    fit = 5000 - 4096 - 64
    eq(metrics(adm.port)["sds_admin_watchers_max"], fit, "watchers taken")
    make_app(env)
    eq(get(adm.port, watch_path(seq_of(adm.port), wait=1)).status, 200, "a watch")
    eq(adm.stop(quiet=False),
       "sds-admin: --max-watchers 10000: the open files limit (5000) fits %d watchers"
       " beside 4096 other connections: taking %d\n" % (fit, fit), "stderr")


def admin_apart(env, name):
    """Another sds-admin of the test on its database, with a dir (and a
    stderr file) of its own."""
    d = os.path.join(env.tmp, name)
    os.mkdir(d)
    ctx = types.SimpleNamespace(tmp=d, procs=env.procs)
    return sdsadmin.Admin(ctx, token=TOKEN, token_file=env.token_file,
                          db=env.db_arg(), binary=ADMIN).start()


LISTENERS = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
             " AND query = 'LISTEN sds_watch'")


@only("pg")
def test_pg_watch_three_admins(env):
    """Three admins on one database: a PUT through A answers watches on
    B and C within 1 s (NOTIFY); A skips its own notification.  Listeners
    whose connections were killed reconnect, each said once."""
    admins = [admin_apart(env, n) for n in ("a", "b", "c")]
    ports = [x.port for x in admins]
    a, b, c = ports
    env.port = a
    make_app(env)
    seqs = [seq_of(p) for p in ports]
    ws = [Waiter(p, watch_path(s, wait=30)) for p, s in zip(ports, seqs)]
    for p in ports:
        wait_watchers(p, 1)
    t = time.monotonic()
    put_threshold(env, 11)
    for w, p, s in zip(ws, ports, seqs):
        r = w.result()
        took = w.done_at - t
        eq(r.body, {"seq": s + 1}, "watch on the admin on port %d" % p)
        check(took < 1.0, "watch on port %d answered %.3f s after the PUT" % (p, took))
    # What C answers is what A wrote.
    r = get(c, "/api/v1/sync?group=demo&app=shop&version=1")
    eq((r.status, r.body["version"], r.body["strategies"]["points"]["order"]["visit_threshold"]),
       (200, 2, 11), "sync through the third admin")
    # A's own notification bumped nothing more on A.
    r = get(a, watch_path(seqs[0] + 1, wait=1))
    eq(r.body, {"seq": seqs[0] + 1}, "A's seq after its own notification")

    # Every listener killed: each said once, counted, and listening again.
    db = env.db_arg().rsplit("/", 1)[1]
    eq(env.pg.sql(db, LISTENERS).strip(), "3", "listeners")
    env.pg.sql(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname ="
                   " current_database() AND query = 'LISTEN sds_watch'")
    for p in ports:
        sdstest.wait_until(
            lambda p=p: metrics(p)["sds_admin_watch_listener_breaks_total"] == 1,
            time.time() + 10, lambda _, p=p: "breaks on port %d: %r" % (p, metrics(p)))
    sdstest.wait_until(lambda: env.pg.sql(db, LISTENERS).strip() == "3",
                       time.time() + 15, lambda _: "listeners not back")
    s_b = seq_of(b)
    w = Waiter(b, watch_path(s_b, wait=30))
    wait_watchers(b, 1)
    env.port = c
    t = time.monotonic()
    put_threshold(env, 12)
    r = w.result()
    eq(r.body, {"seq": s_b + 1}, "watch on B after its listener reconnected")
    check(w.done_at - t < 1.0, "answered %.3f s after the PUT through C" % (w.done_at - t))
    for x in admins:
        err = x.stop(quiet=False)
        lines = err.splitlines()
        eq(len(lines), 1, "port %d: stderr lines: %r" % (x.port, err))
        eq(lines[0], "sds-admin: push: the store's listener for other admins' changes"
           " broke (terminating connection due to administrator command): reconnecting;"
           " meanwhile heartbeats carry their changes", "port %d: stderr" % x.port)
