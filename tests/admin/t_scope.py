# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Scoped heartbeat tokens (--heartbeat-token-file FILE:GROUP[/APP]): a
token for one app or one group heartbeats and reads the strategies of its
apps only; outside them 403, audited by fingerprint, no app created, no
strategies or plans of another app in any reply.  An unscoped heartbeat
token keeps its reach.  Real HTTP clients holding each token; imported by
run.py (its Env: one sds-admin per test).
"""

import os

import sdstest
from sdstest import check, eq
from admin_lib import T0, bearer, denied, fp, refused, stop_with_stderr, test

APP_TOKEN = "hb-sc0pe.demo-shop"       # demo/shop only
GRP_TOKEN = "hb-sc0pe.group-demo"      # every app of demo
HB_TOKEN = "hb-t0ken.unscoped"         # unscoped: every app
PLAN = {"name": "p1", "points": ["order"], "sample_pct": 30, "amplification": 1,
        "framing": "http", "writes": True, "rate": 100, "shadows": ["127.0.0.1:9"],
        "duration_s": 600, "by": "alice"}


def hb(group, app, host="web-1", visits=3):
    return {"group": group, "app": app, "host": host, "ip": "127.0.0.1",
            "period_start": T0, "period_s": 10, "version": 0,
            "points": {"order": {"visits": visits}}}


def path(g, a):
    return "/groups/%s/apps/%s" % (g, a)


def threshold(n):
    return {"order": {"visit_threshold": n, "downgrade_rate": 100}}


def metric(env, name):
    for line in env.req("GET", "/metrics", token=False)[1].splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    raise AssertionError("no metric " + name)


@test
def test_scoped_heartbeat(env):
    af = sdstest.write_token(os.path.join(env.tmp, "app.token"), APP_TOKEN)
    gf = sdstest.write_token(os.path.join(env.tmp, "grp.token"), GRP_TOKEN)
    hf = sdstest.write_token(os.path.join(env.tmp, "hb.token"), HB_TOKEN)
    env.start_admin("--heartbeat-token-file", af + ":demo/shop",
                    "--heartbeat-token-file", gf + ":demo",
                    "--heartbeat-token-file", hf, "--protect-reads")
    APPT, GRPT, HBT = bearer(APP_TOKEN), bearer(GRP_TOKEN), bearer(HB_TOKEN)
    # Three apps, each its own threshold; a copy plan on demo/cart.
    for g, a, n in (("demo", "shop", 5), ("demo", "cart", 9), ("other", "x", 7)):
        env.ok("POST", "/groups/%s/apps" % g, {"name": a}, want=201)
        env.ok("PUT", path(g, a) + "/schemes/default/strategies/order",
               {"visit_threshold": n})
    env.ok("POST", path("demo", "cart") + "/copy-plans", PLAN, want=201)

    # The app token: its app, 200 with its own strategies and no plan of cart's.
    r = env.ok("POST", "/heartbeat", hb("demo", "shop"), token=APPT)
    eq(r["strategies"]["points"], threshold(5), "demo/shop's reply strategies")
    eq(r["copy"]["plans"], [], "demo/shop's reply plans")
    # Anything else: 403, named in the error, no strategies, no app made.
    refused = [("demo", "cart"), ("demo", "new"), ("other", "x"), ("nogroup", "y")]
    for g, a in refused:
        e = env.bad("POST", "/heartbeat", hb(g, a), token=APPT, want=403,
                    field="%s/%s is outside it" % (g, a))
        eq(sorted(e), ["error"], "403 reply of %s/%s" % (g, a))
    # The group token: demo's apps (a new one of demo too), not other's.
    r = env.ok("POST", "/heartbeat", hb("demo", "cart"), token=GRPT)
    eq(r["strategies"]["points"], threshold(9), "demo/cart's reply strategies")
    eq([p["name"] for p in r["copy"]["plans"]], ["p1"], "demo/cart's reply plans")
    r = env.ok("POST", "/heartbeat", hb("demo", "fresh"), token=GRPT)
    eq(r["strategies"]["points"], {}, "demo/fresh's reply strategies")
    env.bad("POST", "/heartbeat", hb("other", "x"), token=GRPT, want=403,
            field="other/x is outside it")
    env.bad("POST", "/heartbeat", hb("nogroup", "z"), token=GRPT, want=403)

    # Nothing was made for the refused: apps as the operator sees them.
    eq(sorted((x["group"], x["name"]) for x in env.ok("GET", "/apps")),
       [("demo", "cart"), ("demo", "fresh"), ("demo", "shop"), ("other", "x")],
       "apps after the scoped heartbeats")
    env.bad("GET", path("demo", "new"), want=404)
    env.bad("GET", "/groups/nogroup", want=404)
    eq([h["host"] for h in env.ok("GET", path("demo", "shop") + "/hosts")], ["web-1"],
       "demo/shop's hosts")
    eq([h["host"] for h in env.ok("GET", path("demo", "cart") + "/hosts")], ["web-1"],
       "demo/cart's hosts (the group token's heartbeat only)")
    eq(env.ok("GET", path("other", "x") + "/hosts"), [], "other/x's hosts")

    # Reads of strategies (reads protected): the same scopes.
    for tok, g, a, want in ((APPT, "demo", "shop", 200), (APPT, "demo", "cart", 403),
                            (APPT, "other", "x", 403), (GRPT, "demo", "cart", 200),
                            (GRPT, "other", "x", 403), (HBT, "other", "x", 200)):
        for sub in ("/strategies", "/active_scheme", "/schemes/default/strategies",
                    "/schemes/default/strategies/order"):
            st, doc = env.req("GET", "/api/v1" + path(g, a) + sub, token=tok)
            eq(st, want, "GET %s%s" % (path(g, a), sub))
            if want == 403:
                eq(sorted(doc), ["error"], "403 reply of GET %s%s" % (path(g, a), sub))

    # The unscoped token: as before scopes, every app, and it creates apps.
    r = env.ok("POST", "/heartbeat", hb("other", "x"), token=HBT)
    eq(r["strategies"]["points"], threshold(7), "other/x's reply strategies")
    env.ok("POST", "/heartbeat", hb("nogroup", "y"), token=HBT)
    eq(sorted((x["group"], x["name"]) for x in env.ok("GET", "/apps")),
       [("demo", "cart"), ("demo", "fresh"), ("demo", "shop"), ("nogroup", "y"),
        ("other", "x")], "apps after the unscoped heartbeats")

    # Counts: 5 heartbeats stored; 6 refused heartbeats + 12 refused reads.
    eq(metric(env, "sds_admin_heartbeats_total"), 5, "heartbeats stored")
    eq(metric(env, "sds_admin_forbidden_total"), 18, "403s")
    eq(metric(env, "sds_admin_heartbeats_rejected_total"), 0, "heartbeats rejected")

    # Each refused heartbeat of an existing app: an audit row of that app,
    # by fingerprint; of an app that does not exist: one stderr line.
    def rows(g, a):
        return denied(env, path(g, a))[0]

    row = "POST /api/v1/heartbeat for %s/%s (scope %s)"
    eq(rows("demo", "cart"),
       [(row % ("demo", "cart", "demo/shop"), "heartbeat token " + fp(APP_TOKEN))],
       "demo/cart's denied rows")
    eq(rows("other", "x"),
       sorted([(row % ("other", "x", "demo/shop"), "heartbeat token " + fp(APP_TOKEN)),
               (row % ("other", "x", "demo"), "heartbeat token " + fp(GRP_TOKEN))]),
       "other/x's denied rows")
    eq(rows("demo", "shop"), [], "demo/shop's denied rows")
    text = denied(env, path("other", "x"))[1]
    check(APP_TOKEN not in text and GRP_TOKEN not in text, "a token in the audit log")
    line = "sds-admin: refused heartbeat token %s: " + row + " (403)"
    eq(stop_with_stderr(env),
       [line % (fp(APP_TOKEN), "demo", "new", "demo/shop"),
        line % (fp(APP_TOKEN), "nogroup", "y", "demo/shop"),
        line % (fp(GRP_TOKEN), "nogroup", "z", "demo")], "stderr")


@test
def test_scope_bad_input(env):
    f = sdstest.write_token(os.path.join(env.tmp, "app.token"), APP_TOKEN)
    base = ["--listen", "127.0.0.1:1", "--db", os.path.join(env.tmp, "x.db"),
            "--token-file", env.token_file]
    for scope in ("", "/", "demo/", "/shop", "demo/shop/x", "de mo", "demo/sh@p",
                  "d" * 65, "demo/" + "a" * 65):
        refused(base + ["--heartbeat-token-file", f + ":" + scope],
                 ["--heartbeat-token-file", f, "expected FILE:GROUP or FILE:GROUP/APP"])
    # The scope is after the last ':': the file before it is checked as ever.
    refused(base + ["--heartbeat-token-file", f + "x:demo"],
             ["--heartbeat-token-file", f + "x"])
    # One token, one scope.
    refused(base + ["--heartbeat-token-file", f + ":demo/shop",
                     "--heartbeat-token-file", f + ":demo/cart"], ["the same token"])
