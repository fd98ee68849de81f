# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Copy plans in sds-admin (issue 12): the API, each bad input, the audit
rows, the heartbeat reply's "copy" and the copy servers' heartbeat, all
exact.  Imported by run.py (its Env: one sds-admin per test).
"""

import json
import os
import time

import sdstest
from sdstest import check, eq
from admin_lib import APP, CHROMIUM, TOKEN, fp, stop_with_stderr, test
from chromium import Browser


PLANS = APP + "/copy-plans"
PERIOD = (int(time.time()) // 10) * 10 - 300     # a period five minutes ago


def hb(period, points, host="web-1", app="shop"):
    return {"group": "demo", "app": app, "host": host, "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": 0, "points": points}


GOOD = {"name": "x5", "points": ["order", "pay"], "sample_pct": 30,
        "amplification": 5, "framing": "http", "writes": True, "rate": 100,
        "shadows": ["127.0.0.1:9", "[::1]:10", {"addr": "localhost:11", "weight": 3}],
        "duration_s": 600, "by": "alice"}


def with_(**kw):
    d = dict(GOOD)
    for k, v in kw.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


# Each bad plan: (body, the exact error).
BAD = [
    (with_(amplification=0), "amplification must be an integer 1..8 (--copy-max-amplification)"),
    (with_(amplification=9), "amplification must be an integer 1..8 (--copy-max-amplification)"),
    (with_(amplification="5"), "amplification must be an integer 1..8 (--copy-max-amplification)"),
    (with_(duration_s=None),
     "expiry: give expires_at (Unix seconds) or duration_s: every plan ends"),
    (with_(expires_at=1000000000), "expiry: give expires_at (Unix seconds) or duration_s: every plan ends"),
    (with_(duration_s=None, expires_at=1000000000), None),   # "not in the future": now varies
    (with_(duration_s=0), "duration_s must be an integer 1..2592000"),
    (with_(framing="grpc"), 'framing must be "raw" or "http"'),
    (with_(framing=None, writes="yes"), "writes must be true or false"),
    (with_(shadows=[]), "shadows must be an array of 1..64 endpoints"),
    (with_(shadows=None), "shadows must be an array of 1..64 endpoints"),
    (with_(shadows=["nohost"]), "shadows[0]: not HOST:PORT or [IPV6]:PORT (port 1..65535)"),
    (with_(shadows=["a:1", "h:0"]), "shadows[1]: not HOST:PORT or [IPV6]:PORT (port 1..65535)"),
    (with_(shadows=["h h:80"]), "shadows[0]: not HOST:PORT or [IPV6]:PORT (port 1..65535)"),
    (with_(shadows=[{"addr": "h:1", "weight": 0}]), "shadows[0].weight must be an integer 1..1000"),
    (with_(shadows=[{"addr": "h:1", "w": 1}]), "shadows[0]: unknown field 'w'"),
    (with_(sample_pct=101), "sample_pct must be an integer 0..100"),
    (with_(sample_pct=-1), "sample_pct must be an integer 0..100"),
    (with_(points=[]), "points must be an array of 1..64 point names"),
    (with_(points=["bad name"]), "points[0]: bad name (1-64 of [A-Za-z0-9_-])"),
    (with_(points=["a", "a"]), "points[1]: 'a' twice"),
    (with_(name="x y"), "name: bad name (1-64 of [A-Za-z0-9_-])"),
    (with_(name=None), "name: missing"),
    (with_(by=None), "by: required, 1-256 bytes (who changes the plan, free text)"),
    (with_(rate=-1), "rate must be an integer 0..1000000000 (copies/s, 0: no cap)"),
    (with_(extra=1), "unknown field 'extra'"),
]


def plan_view(p):
    """A plan without its times (checked apart)."""
    return {k: v for k, v in p.items() if k not in ("created", "expires_at", "id")}


@test
def test_copy_plans_api(env):
    env.start_admin("--copy-max-amplification", "8")
    env.ok("POST", "/heartbeat", hb(PERIOD, {"order": {"visits": 1}}))
    t = int(time.time())
    p = env.ok("POST", PLANS, GOOD, want=201)
    check(t + 600 <= p["expires_at"] <= int(time.time()) + 600, "expires_at %r" % p["expires_at"])
    eq(plan_view(p), {"group": "demo", "app": "shop", "name": "x5", "points": ["order", "pay"],
                      "sample_pct": 30, "amplification": 5, "shadows": GOOD["shadows"],
                      "framing": "http", "writes": True, "rate": 100, "state": "active",
                      "started_by": "alice (token fnv:%s)" % p["started_by"][-9:-1],
                      "stopped_at": None, "stopped_by": None, "diff": False}, "created plan")
    eq(env.ok("GET", PLANS), [p], "plan list")
    eq(env.ok("GET", PLANS + "/%d" % p["id"]), p, "plan get")

    for body, msg in BAD:
        doc = env.bad("POST", PLANS, body)
        if msg is None:
            check(doc["error"].startswith("expires_at 1000000000 is not in the future (now "),
                  "past expiry: %r" % doc["error"])
        else:
            eq(doc["error"], msg, "error of %r" % body)
    # A point that does not exist yet is fine; defaults filled in.
    q = env.ok("POST", PLANS, {"name": "later", "points": ["not_yet"], "shadows": ["h:1"],
                               "expires_at": int(time.time()) + 60, "by": "bob"}, want=201)
    eq((q["sample_pct"], q["amplification"], q["framing"], q["writes"], q["rate"]),
       (100, 1, "raw", False, 0), "defaults")
    # Conflicts: an active name, a point in another active plan.
    eq(env.bad("POST", PLANS, with_(points=["other"]), want=409)["error"],
       "copy plan %d is active with the name 'x5'" % p["id"], "name taken")
    eq(env.bad("POST", PLANS, with_(name="y", points=["z", "pay"]), want=409)["error"],
       "point 'pay' is in active copy plan %d" % p["id"], "point taken")
    env.bad("POST", "/groups/demo/apps/nope/copy-plans", GOOD, want=404, field="nope")
    env.bad("GET", PLANS + "/999", want=404, field="999")
    env.bad("GET", PLANS + "/abc", want=404, field="abc")

    # The heartbeat reply lists the app's plans, exactly; no copy server yet.
    r = env.ok("POST", "/heartbeat", hb(PERIOD + 10, {}))
    want = [{"id": p["id"], "name": "x5", "sample_pct": 30, "expires_at": p["expires_at"],
             "points": ["order", "pay"]},
            {"id": q["id"], "name": "later", "sample_pct": 100, "expires_at": q["expires_at"],
             "points": ["not_yet"]}]
    eq(r["copy"], {"servers": [], "plans": want}, "reply copy")
    r = env.ok("POST", "/heartbeat", hb(PERIOD + 10, {}, app="other"))
    eq(r["copy"], {"servers": [], "plans": []}, "another app's reply copy")

    # Counts go to the plans that ran in the period: this one's.
    now_p = (int(time.time()) // 10) * 10
    # A copy server heartbeats: the reply is every active plan, as sds-copy reads them.
    c = env.ok("POST", "/copy-servers/heartbeat",
               {"name": "c1", "addr": "127.0.0.1:7070", "period_start": now_p,
                "plans": {"x5": {"received": 10, "dispatched": 50, "shadow_errors": 1,
                                 "dropped": 2}, "not_admins": {"received": 3}}})
    eq(c, {"plans": [
        {"name": "x5", "app": "shop", "points": ["order", "pay"], "amplification": 5,
         "shadows": GOOD["shadows"], "framing": "http", "writes": True, "rate": 100,
         "expires_at": p["expires_at"], "sample_pct": 30},
        {"name": "later", "app": "shop", "points": ["not_yet"], "amplification": 1,
         "shadows": ["h:1"], "framing": "raw", "writes": False, "rate": 0,
         "expires_at": q["expires_at"], "sample_pct": 100}]}, "copy server reply")
    # Twice in one period: the counts add up.
    env.ok("POST", "/copy-servers/heartbeat",
           {"name": "c1", "addr": "127.0.0.1:7070", "period_start": now_p,
            "plans": {"x5": {"received": 1, "dispatched": 5}}})
    # Loaders: two hosts, the plan's points summed, other points not.
    r = env.ok("POST", "/heartbeat", hb(now_p, {
        "order": {"visits": 9, "copy_captured": 7, "copy_dropped": 1},
        "pay": {"copy_captured": 3, "copy_truncated": 2},
        "else": {"copy_captured": 100}}))
    eq(r["copy"]["servers"], ["127.0.0.1:7070"], "live copy servers")
    env.ok("POST", "/heartbeat", hb(now_p, {"order": {"copy_captured": 1}}, host="web-2"))
    # A duplicate (host, period) adds nothing.
    env.ok("POST", "/heartbeat", hb(now_p, {"order": {"copy_captured": 50}}, host="web-2"))
    # Before the plan started: not its.
    env.ok("POST", "/heartbeat", hb(PERIOD + 20, {"order": {"copy_captured": 5}}, host="web-3"))
    st = env.ok("GET", PLANS + "/%d/stats?from=%d&to=%d" % (p["id"], PERIOD - 100, now_p + 100))
    eq(st, {"id": p["id"], "from": PERIOD - 100, "to": now_p + 100, "period_s": 10,
            "periods": [{"period_start": now_p, "captured": 11, "dropped": 1,
                         "received": 11, "dispatched": 55, "shadow_errors": 1,
                         "server_dropped": 2}]}, "plan stats")
    eq(env.ok("GET", "/copy-servers")[0]["name"], "c1", "copy server list")

    # Update: the body's settings over the plan's, audited; the name stays.
    u = env.ok("PUT", PLANS + "/%d" % p["id"], {"sample_pct": 50, "by": "bob"})
    eq(plan_view(u), dict(plan_view(p), sample_pct=50), "updated plan")
    eq(u["expires_at"], p["expires_at"], "expiry kept")
    env.bad("PUT", PLANS + "/%d" % p["id"], {"name": "z", "by": "bob"},
            field="keeps its name")
    env.bad("PUT", PLANS + "/%d" % p["id"], {"amplification": 9, "by": "bob"},
            field="amplification")
    r = env.ok("POST", "/heartbeat", hb(now_p + 10, {}))
    eq(r["copy"]["plans"][0]["sample_pct"], 50, "reply after update")

    # Stop: gone from both replies; stopping again is a conflict.
    s = env.ok("POST", PLANS + "/%d/stop" % p["id"], {"by": "carol"})
    eq((s["state"], s["stopped_by"][:6]), ("stopped", "carol "), "stopped plan")
    env.bad("POST", PLANS + "/%d/stop" % p["id"], {"by": "carol"}, want=409,
            field="ended already")
    env.bad("POST", PLANS + "/%d/stop" % p["id"], {}, field="by")
    env.bad("POST", PLANS + "/77/stop", {"by": "x"}, want=404, field="77")
    r = env.ok("POST", "/heartbeat", hb(now_p + 20, {}))
    eq([x["name"] for x in r["copy"]["plans"]], ["later"], "reply after stop")
    c = env.ok("POST", "/copy-servers/heartbeat",
               {"name": "c1", "addr": "127.0.0.1:7070", "period_start": now_p + 20,
                "plans": {}})
    eq([x["name"] for x in c["plans"]], ["later"], "copy server reply after stop")
    # The name is free again once stopped.
    env.ok("POST", PLANS, GOOD, want=201)

    audit = env.ok("GET", APP + "/audit")
    rows = [(a["action"], a["detail"]) for a in audit if a["action"].startswith("copy.")]
    exp = p["expires_at"]
    eq(rows[1:], [
        ("copy.stop", "copy plan %d (x5)" % p["id"]),
        ("copy.update", "copy plan %d (x5) on [\"order\",\"pay\"]: 50%%, x5 http, "
         "writes too, until %d" % (p["id"], exp)),
        ("copy.start", "copy plan %d (later) on [\"not_yet\"]: 100%%, x1 raw, reads, until %d"
         % (q["id"], q["expires_at"])),
        ("copy.start", "copy plan %d (x5) on [\"order\",\"pay\"]: 30%%, x5 http, "
         "writes too, until %d" % (p["id"], exp))], "audit rows")
    check(all(a["comment"].startswith(("alice (token fnv:", "bob (token fnv:",
                                       "carol (token fnv:")) for a in audit
              if a["action"].startswith("copy.")), "audit comments name who")

    # A copy server not heard for 30 s is no longer offered to loaders.
    env.sql("UPDATE copy_servers SET last_seen = last_seen - 31")
    r = env.ok("POST", "/heartbeat", hb(now_p + 30, {}))
    eq(r["copy"]["servers"], [], "stale copy server")
    env.stop_admin()


@test
def test_copy_server_bad_heartbeats(env):
    env.start_admin()
    good = {"name": "c1", "addr": "127.0.0.1:7070", "period_start": PERIOD, "plans": {}}
    cases = [
        (dict(good, name="a b"), "name: bad name (1-64 of [A-Za-z0-9_-])"),
        (dict(good, addr="x"), "addr: not HOST:PORT or [IPV6]:PORT (where loaders reach the server)"),
        (dict(good, period_start=PERIOD + 5),
         "period_start must be Unix seconds, a multiple of 10, not in the future"),
        (dict(good, period_start=PERIOD + 7200),
         "period_start must be Unix seconds, a multiple of 10, not in the future"),
        (dict(good, plans=[]), "plans must be an object of plan name -> counts (at most 1024)"),
        (dict(good, plans={"a b": {}}), "plans: bad plan name 'a b' (1-64 of [A-Za-z0-9_-])"),
        (dict(good, plans={"p": {"received": -1}}), "plans.p.received must be an integer 0..1099511627776"),
        (dict(good, plans={"p": {"sent": 1}}), "plans.p: unknown field 'sent'"),
        (dict(good, x=1), "unknown field 'x'"),
    ]
    for body, msg in cases:
        eq(env.bad("POST", "/copy-servers/heartbeat", body)["error"], msg, "error of %r" % body)
    env.bad("POST", "/copy-servers/heartbeat", good, token=False, want=401)
    env.bad("GET", "/copy-servers/heartbeat", want=405)
    eq(env.ok("POST", "/copy-servers/heartbeat", good), {"plans": []}, "no plans")
    env.stop_admin()


HB_TOKEN = "hb-t0ken.for_loaders"
C1_TOKEN = "c1-t0ken.for_copy_servers"
C2_TOKEN = "c2-t0ken.for_copy_servers"


@test
def test_copy_server_roles(env):
    """Only a copy-server token registers a copy server: a loader's
    heartbeat token gets 403 and no loader's reply lists its address; a
    name is bound to the token that registered it (another copy-server
    token's re-point is 403, the address stays; the operator's goes);
    addresses are numeric; a token holds at most 16 names; a server not
    heard for --retention-days is forgotten at the next start."""
    files = []
    for opt, name, tok in (("--heartbeat-token-file", "hb", HB_TOKEN),
                           ("--copy-token-file", "c1", C1_TOKEN),
                           ("--copy-token-file", "c2", C2_TOKEN)):
        files += [opt, sdstest.write_token(os.path.join(env.tmp, name + ".token"), tok)]
    files += ["--copy-max-amplification", "8"]
    env.start_admin(*files)
    HB, C1, C2 = ("Bearer " + t for t in (HB_TOKEN, C1_TOKEN, C2_TOKEN))
    now_p = (int(time.time()) // 10) * 10 - 10
    env.ok("POST", "/heartbeat", hb(PERIOD, {"order": {"visits": 1}}))
    env.ok("POST", PLANS, GOOD, want=201)

    def srv(name, addr):
        return {"name": name, "addr": addr, "period_start": now_p, "plans": {}}

    def servers():
        return env.ok("POST", "/heartbeat", hb(now_p, {}), token=HB)["copy"]["servers"]

    # The review's attack: a loader's token registers "-" (sorts first).
    e = env.bad("POST", "/copy-servers/heartbeat", srv("-", "10.9.9.9:7070"), token=HB,
                want=403)
    eq(e["error"], "this token's role may not register copy servers: a copy-server token "
       "(--copy-token-file) is needed", "403 of the heartbeat token")
    eq(servers(), [], "loader reply after the heartbeat token's POST")
    eq(env.ok("GET", "/copy-servers"), [], "copy servers after the heartbeat token's POST")

    # A copy-server token registers; the reply has the plans.
    c = env.ok("POST", "/copy-servers/heartbeat", srv("copy-1", "127.0.0.1:7070"), token=C1)
    eq([p["name"] for p in c["plans"]], ["x5"], "copy server reply")
    eq(servers(), ["127.0.0.1:7070"], "loader reply with copy-1")
    # Another copy-server token cannot re-point it.
    e = env.bad("POST", "/copy-servers/heartbeat", srv("copy-1", "10.9.9.9:7070"), token=C2,
                want=403)
    eq(e["error"], "copy server 'copy-1' is registered by another token (%s): not re-pointed"
       % fp(C1_TOKEN), "re-point error")
    eq(servers(), ["127.0.0.1:7070"], "loader reply after the re-point")
    eq([(s["name"], s["addr"], s["owner"]) for s in env.ok("GET", "/copy-servers")],
       [("copy-1", "127.0.0.1:7070", fp(C1_TOKEN))], "copy servers after the re-point")
    # Its own token may move it.
    env.ok("POST", "/copy-servers/heartbeat", srv("copy-1", "127.0.0.2:7070"), token=C1)
    eq(servers(), ["127.0.0.2:7070"], "loader reply after its own token moved it")
    # A name is not an address: loaders do not resolve.
    e = env.bad("POST", "/copy-servers/heartbeat", srv("copy-9", "copy-9.fleet.internal:7070"),
                token=C2)
    eq(e["error"], "addr: 'copy-9.fleet.internal:7070' is not a numeric IPV4:PORT or "
       "[IPV6]:PORT (loaders do not resolve names)", "name error")
    # 16 names a token, the 17th 409.
    for i in range(16):
        env.ok("POST", "/copy-servers/heartbeat", srv("c2-%02d" % i, "127.0.1.%d:7070" % i),
               token=C2)
    e = env.bad("POST", "/copy-servers/heartbeat", srv("c2-16", "127.0.1.16:7070"), token=C2,
                want=409)
    eq(e["error"], "copy server 'c2-16': this token already holds 16 names (at most 16)",
       "cap error")
    eq(len(env.ok("GET", "/copy-servers")), 17, "copy servers after the cap")
    # The operator's token re-points any name (the owner stays).
    env.ok("POST", "/copy-servers/heartbeat", srv("copy-1", "127.0.0.3:7070"))
    eq([(s["addr"], s["owner"]) for s in env.ok("GET", "/copy-servers")
        if s["name"] == "copy-1"], [("127.0.0.3:7070", fp(C1_TOKEN))], "operator re-point")
    # The heartbeat token's refusal names no app: one line on stderr.
    eq(stop_with_stderr(env),
       ["sds-admin: refused heartbeat token %s: POST /api/v1/copy-servers/heartbeat (403)"
        % fp(HB_TOKEN)], "sds-admin stderr")

    # Retention: rows not heard for 31 days go at start, those of 29 stay.
    t = int(time.time())
    env.sql("UPDATE copy_servers SET last_seen = %d WHERE name LIKE 'c2-%%'" % (t - 31 * 86400))
    env.sql("UPDATE copy_servers SET last_seen = %d WHERE name = 'copy-1'" % (t - 29 * 86400))
    env.start_admin(*files, "--retention-days", "30")
    eq([s["name"] for s in env.ok("GET", "/copy-servers")], ["copy-1"],
       "copy servers after retention")
    env.stop_admin()




@test
def test_copy_dashboard(env):
    """A plan created in the Copy panel reaches the API exactly; the
    numbers a copy server's and a loader's heartbeats put there are drawn
    exactly; the plan is stopped from the panel."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/demo/shop" % env.port)
        b.wait_event("Page.loadEventFired")
        b.wait_js("!document.getElementById('app').hidden", what="the app")
        b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
            e.dispatchEvent(new Event('change')); })()""" % json.dumps(TOKEN))
        b.js("""(() => {
            const set = (id, v) => { document.getElementById(id).value = v; };
            set('cp-name', 'mirror'); set('cp-points', 'order, pay'); set('cp-pct', '25');
            set('cp-shadows', '127.0.0.1:9001, [::1]:9002'); set('cp-amp', '3');
            set('cp-framing', 'http'); document.getElementById('cp-writes').checked = true;
            set('cp-for', '900'); set('cp-by', 'ops from the page');
            document.getElementById('cp-start').click(); })()""")
        plans = sdstest.wait_until(lambda: env.ok("GET", PLANS), time.time() + 20,
                                   lambda _: "plan never reached the API; page status: %r"
                                   % b.js("document.getElementById('status').textContent"))
        p = plans[0]
        eq((p["name"], p["points"], p["sample_pct"], p["amplification"], p["shadows"],
            p["framing"], p["writes"], p["state"], p["started_by"][:17]),
           ("mirror", ["order", "pay"], 25, 3, ["127.0.0.1:9001", "[::1]:9002"], "http",
            True, "active", "ops from the page"), "plan created from the page")
        check(898 <= p["expires_at"] - p["created"] <= 900, "plan lasts 900 s")
        b.wait_js("document.querySelectorAll('#copy-plans tbody tr').length == 1", what="plan row")

        # A copy server's heartbeats and a loader's, in two periods the
        # plan runs in (the second ahead: the admin takes up to an hour).
        now_p = (int(time.time()) // 10) * 10
        for period, rec in ((now_p, 300), (now_p + 10, 400)):
            env.ok("POST", "/copy-servers/heartbeat",
                   {"name": "c1", "addr": "127.0.0.1:7070", "period_start": period,
                    "plans": {"mirror": {"received": rec, "dispatched": 3 * rec,
                                         "shadow_errors": 7, "dropped": 0}}})
            env.ok("POST", "/heartbeat", hb(period, {"order": {"copy_captured": rec - 1,
                                                               "copy_dropped": 2},
                                                     "pay": {"copy_captured": 1}}))
        b.js("tick(true)")
        want = "captured 700 · dropped 4 · received 700 · dispatched 2100 · shadow errors 14"
        got = b.wait_js("""(() => { const s = document.querySelector(
            '#copy-charts .chartcard[data-plan="%d"] .sum');
            return s && s.textContent == %s ? s.textContent : ''; })()"""
                        % (p["id"], json.dumps(want)),
                        what="the plan's totals: %s, shown: %r" % (want, b.js(
                            "[...document.querySelectorAll('#copy-charts .sum')]"
                            ".map((e) => e.textContent)")))
        eq(got, want, "totals shown")
        drawn = b.js("""(() => { const c = document.querySelector(
            '#copy-charts .chartcard[data-plan="%d"] canvas');
            const ch = Chart.getChart(c);
            return ch.data.datasets.map((d) => [d.key, d.data]); })()""" % p["id"])
        eq(drawn, [["captured", [300, 400]], ["dropped", [2, 2]], ["received", [300, 400]],
                   ["dispatched", [900, 1200]], ["shadow_errors", [7, 7]]], "series drawn")

        b.js("document.querySelector('#copy-plans tbody button').click()")
        sdstest.wait_until(lambda: env.ok("GET", PLANS)[0]["state"] == "stopped",
                           time.time() + 20, "plan never stopped from the page")
        r = env.ok("POST", "/heartbeat", hb(now_p + 20, {}))
        eq(r["copy"]["plans"], [], "a stopped plan leaves the heartbeat")
        b.wait_js("!document.querySelector('#copy-plans tbody button')", what="no Stop button")
        b.js("1")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()


@test
def test_copy_diff_dashboard(env):
    """A diff plan started from the Copy panel (diff ticked, two ignore
    rules) reaches the API exactly; two periods of a copy server's judged
    pairs are shown in its card exactly: the sums, per point, the first
    examples in period order."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/demo/shop" % env.port)
        b.wait_event("Page.loadEventFired")
        b.wait_js("!document.getElementById('app').hidden", what="the app")
        b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
            e.dispatchEvent(new Event('change')); })()""" % json.dumps(TOKEN))
        b.js("""(() => {
            const set = (id, v) => { document.getElementById(id).value = v; };
            set('cp-name', 'dd'); set('cp-points', 'order'); set('cp-shadows', '127.0.0.1:9001');
            set('cp-framing', 'http'); document.getElementById('cp-diff').checked = true;
            set('cp-ignore', '$.ts, header:Date'); set('cp-for', '900'); set('cp-by', 'ops');
            document.getElementById('cp-start').click(); })()""")
        plans = sdstest.wait_until(lambda: env.ok("GET", PLANS), time.time() + 20,
                                   lambda _: "plan never reached the API; page status: %r"
                                   % b.js("document.getElementById('status').textContent"))
        p = plans[0]
        eq((p["name"], p["diff"], p["ignore"]), ("dd", True, ["$.ts", "header:Date"]),
           "diff plan created from the page")
        now_p = (int(time.time()) // 10) * 10

        def ex(i):
            return {"path": "$.price", "recorded": str(i), "shadow": str(i + 1)}
        for period, same, diff, exs in ((now_p, 40, 3, [ex(1), ex(2), ex(3)]),
                                        (now_p + 10, 50, 4, [ex(4), ex(5), ex(6), ex(7)])):
            env.ok("POST", "/copy-servers/heartbeat",
                   {"name": "c1", "addr": "127.0.0.1:7070", "period_start": period,
                    "plans": {"dd": {"received": same + diff + 1, "dispatched": same + diff,
                                     "diff": {"unpaired": 1, "points": {"order": {
                                         "pairs": same + diff + 1, "same": same,
                                         "different": diff, "shadow_errors": 0,
                                         "timeouts": 1, "examples": exs}}}}}})
        b.js("tick(true)")
        want = ("diff: 99 pairs: 90 same, 7 different, 0 shadow errors, 2 timeouts, "
                "2 without a production response")
        got = b.wait_js("""(() => { const s = document.querySelector(
            '#copy-charts .chartcard[data-plan="%d"] .diffsum');
            return s && s.textContent == %s ? s.textContent : ''; })()"""
                        % (p["id"], json.dumps(want)),
                        what="the plan's diff: %s, shown: %r" % (want, b.js(
                            "[...document.querySelectorAll('#copy-charts .copyextra')]"
                            ".map((e) => e.textContent)")))
        eq(got, want, "diff shown")
        lines = b.js("""[...document.querySelectorAll('#copy-charts .chartcard[data-plan="%d"] .diff div:not(.diffsum)')]
            .map((e) => e.textContent)""" % p["id"])
        eq(lines, ["order: 99 pairs, 90 same, 7 different, 0 shadow errors, 2 timeouts"] +
           ["  $.price: production %d, shadow %d" % (i, i + 1) for i in range(1, 6)],
           "per point and the first five examples")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()


@test
def test_copy_ramp_bad_input(env):
    """A ramp's bad settings: each a one-line 400, nothing stored; a good
    one starts at ramp.from and shows no result yet."""
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    env.ok("POST", "/groups/demo/apps", {"name": "shadow"}, want=201)
    good = {"name": "r", "points": ["order"], "shadows": ["127.0.0.1:9"],
            "ramp": {"from": 1, "to": 10, "step": 1, "every_s": 60},
            "stop_when": [{"field": "p99_ms", "above": 50}], "shadow_app": "shadow",
            "duration_s": 600, "by": "t"}

    def ramp(**kw):
        return dict(good["ramp"], **kw)
    for change, want in (
            ({"ramp": ramp(**{"from": 5, "to": 3})}, "ramp: from 5 is above to 3"),
            ({"ramp": ramp(step=0)}, "ramp.step must be an integer >= 1"),
            ({"ramp": ramp(step=-2)}, "ramp.step must be an integer >= 1"),
            ({"ramp": ramp(every_s=5)}, "ramp.every_s must be an integer of at least 10 (the admin's period"),
            ({"ramp": ramp(to=21)}, "ramp.to must be an integer 1..20 (--copy-max-amplification 20)"),
            ({"ramp": ramp(speed=2)}, "ramp: unknown field 'speed'"),
            ({"ramp": 3}, "ramp must be an object {from, to, step, every_s}"),
            ({"amplification": 3}, "give amplification or ramp, not both"),
            ({"stop_when": [{"field": "latency", "above": 1}]},
             "stop_when[0].field: 'latency' is not one of exception_rate, p99_ms, downgrades"),
            ({"stop_when": [{"field": "p99_ms", "above": 1, "window_s": 2}]},
             "stop_when[0]: unknown field 'window_s'"),
            ({"stop_when": [{"field": "exception_rate", "above": 2}]},
             "stop_when[0].above must be a number 0..1"),
            ({"stop_when": []}, "stop_when must be an array of 1..4 conditions"),
            ({"shadow_app": "nosuch"}, "shadow_app 'nosuch': the admin has no such app in group 'demo'"),
            ({"shadow_app": None}, "shadow_app: required with stop_when")):
        body = {k: v for k, v in dict(good, **change).items() if v is not None}
        st, doc = env.req("POST", "/api/v1" + PLANS, body)
        eq(st, 400, "status for %r" % change)
        check(want in doc["error"] and "\n" not in doc["error"], "%r in %r" % (want, doc))
    nr = dict(good)
    del nr["ramp"]
    st, doc = env.req("POST", "/api/v1" + PLANS, nr)
    eq((st, doc["error"]), (400, "stop_when needs a ramp (it says when to stop stepping)"),
       "stop_when without a ramp")
    eq(env.ok("GET", PLANS), [], "no plan stored")
    p = env.ok("POST", PLANS, good, want=201)
    eq((p["amplification"], p["ramp"], p["stop_when"], p["shadow_app"], p["ramp_result"]),
       (1, good["ramp"], good["stop_when"], "shadow", None), "the ramping plan")
    env.stop_admin()
