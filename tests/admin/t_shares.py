# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Cluster-wide limits on the admin's side (docs/CLUSTER.md): POST
/api/v1/shares by role and scope (401, 403 audited, 404, 400s, 413),
the exact shares two hosts get as they report in turn, nulls for a point
without a cluster field, /metrics' cluster series, and a strategy PUT
with a cluster field refused on an app with no host heard in 30 s.
The allocator's arithmetic is tests/admin/test_cluster.c's.  Imported by
run.py (its Env: one sds-admin per test).
"""

import json
import os
import time

import sdstest
from sdstest import check, eq
from admin_lib import APP, T0, bearer, denied, fp, stop_with_stderr, test

HB_TOKEN = "hb-t0ken.for_loaders"
SHOP_TOKEN = "hb-sc0pe.demo-shop"
CART_TOKEN = "hb-sc0pe.demo-cart"
RD_TOKEN = "rd-t0ken.for_readers"
ORDER = {"cluster_visit_threshold": 6000, "cluster_token_rate": 1000,
         "cluster_token_bucket": 2000}


def start(env):
    files = []
    for name, tok, scope in (("hb", HB_TOKEN, ""), ("shop", SHOP_TOKEN, ":demo/shop"),
                             ("cart", CART_TOKEN, ":demo/cart")):
        files += ["--heartbeat-token-file",
                  sdstest.write_token(os.path.join(env.tmp, name + ".token"), tok) + scope]
    files += ["--read-token-file",
              sdstest.write_token(os.path.join(env.tmp, "rd.token"), RD_TOKEN)]
    env.start_admin(*files)


def hb(host, app="shop"):
    return {"group": "demo", "app": app, "host": host, "ip": "127.0.0.1",
            "period_start": T0, "period_s": 10, "version": 0,
            "points": {"order": {"visits": 1}}}


def report(host, points, app="shop"):
    return {"group": "demo", "app": app, "host": host, "points": points}


def use(used=0, wants=5000, visits=-1, rate_wants=800, token_rate=-1):
    return {"used": used, "wants": wants, "visits": visits, "rate_wants": rate_wants,
            "token_rate": token_rate}


def shares(visits, rate, bucket):
    return {"visits": visits, "token_rate": rate, "token_bucket": bucket}


NULLS = shares(None, None, None)


def metric(env, name):
    for line in env.req("GET", "/metrics", token=False)[1].splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    raise AssertionError("no metric " + name)


@test
def test_shares(env):
    start(env)
    HB = bearer(HB_TOKEN)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    env.ok("POST", "/groups/demo/apps", {"name": "cart"}, want=201)
    env.ok("POST", "/heartbeat", hb("web-1"), token=HB)
    env.ok("POST", "/heartbeat", hb("web-2"), token=HB)
    env.ok("PUT", APP + "/schemes/default/strategies/order", ORDER)
    env.ok("PUT", APP + "/schemes/default/strategies/pay", {"visit_threshold": 10})

    # Two hosts in turn (docs/CLUSTER.md's example): web-1 alone gets
    # everything; web-2 nothing until web-1's ack says its half is in force.
    body = report("web-1", {"order": use(), "pay": use(), "nosuch": use()})
    doc = env.ok("POST", "/shares", body, token=HB)
    eq(doc, {"hosts": 1, "lease_ms": 1500,
             "points": {"order": shares(6000, 1000, 2000), "pay": NULLS, "nosuch": NULLS}},
       "web-1's first reply")
    steps = [("web-2", -1, -1, 2, shares(0, 0, 0)),
             ("web-1", 6000, 1000, 2, shares(3000, 500, 1000)),   # cut at once
             ("web-2", 0, 0, 2, shares(0, 0, 0)),                 # web-1 has not acked
             ("web-1", 3000, 500, 2, shares(3000, 500, 1000)),
             ("web-2", 0, 0, 2, shares(3000, 500, 1000)),         # acked: free
             ("web-1", 3000, 500, 2, shares(3000, 500, 1000)),
             ("web-2", 3000, 500, 2, shares(3000, 500, 1000))]
    for host, ack, rate_ack, hosts, want in steps:
        doc = env.ok("POST", "/shares",
                     report(host, {"order": use(visits=ack, token_rate=rate_ack)}), token=HB)
        eq(doc, {"hosts": hosts, "lease_ms": 1500, "points": {"order": want}},
           "%s acking %d/%d" % (host, ack, rate_ack))
    eq(metric(env, "sds_admin_cluster_hosts"), 2, "live hosts")
    eq(metric(env, "sds_admin_cluster_reports_total"), 1 + len(steps), "reports")
    # web-1 goes quiet: past its lease (1.5 s) web-2 gets the whole limit.
    time.sleep(1.6)
    eq(metric(env, "sds_admin_cluster_hosts"), 0, "live hosts after the lease")
    doc = env.ok("POST", "/shares", report("web-2", {"order": use(visits=3000,
                                                                  token_rate=500)}), token=HB)
    eq(doc, {"hosts": 1, "lease_ms": 1500, "points": {"order": shares(6000, 1000, 2000)}},
       "web-2 alone")
    eq(metric(env, "sds_admin_cluster_hosts"), 1, "live hosts")

    # The operator's token reports too; a scoped token for its app only.
    env.ok("POST", "/shares", report("web-3", {}), token=True)
    env.ok("POST", "/shares", report("web-1", {"order": use(visits=3000, token_rate=500)}),
           token=bearer(SHOP_TOKEN))
    # Audited once: a loader refused every 500 ms must not fill the log.
    for _ in range(3):
        env.bad("POST", "/shares", report("web-1", {"order": use()}),
                token=bearer(CART_TOKEN), want=403, field="demo/cart only")
    env.bad("POST", "/shares", report("web-1", {}), token=bearer(RD_TOKEN), want=403)
    for tok in (False, "Bearer nope", HB_TOKEN):
        env.bad("POST", "/shares", report("web-1", {}), token=tok, want=401)
    rows, _ = denied(env, APP)
    eq(rows, [("POST /api/v1/shares for demo/shop (scope demo/cart)",
               "heartbeat token %s" % fp(CART_TOKEN))], "the 403's audit row")
    # An unknown app: 404, nothing registered.
    env.bad("POST", "/shares", report("web-1", {"order": use()}, app="nosuch"), token=HB,
            want=404, field="nosuch")
    eq(sorted(a["name"] for a in env.ok("GET", "/groups/demo/apps")), ["cart", "shop"],
       "apps after a report of an unknown app")
    env.bad("GET", "/shares", want=405)
    eq(metric(env, "sds_admin_cluster_reports_total"), 4 + len(steps), "reports")

    # The cluster fields gone from the active strategies: nulls once the
    # cache (1 s) has read them again.
    env.ok("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 5})
    time.sleep(1.1)
    doc = env.ok("POST", "/shares", report("web-1", {"order": use()}), token=HB)
    eq(doc, {"hosts": 1, "lease_ms": 1500, "points": {"order": NULLS}}, "no cluster field")
    # The reader's 403 names no app: one line on stderr; nothing else said.
    eq(stop_with_stderr(env),
       ["sds-admin: refused read token %s: POST /api/v1/shares (403)" % fp(RD_TOKEN)],
       "stderr")


@test
def test_shares_bad_body(env):
    start(env)
    HB = bearer(HB_TOKEN)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    pt = use()
    bad = [
        (None, b"{", "malformed JSON"),
        (None, b"[1]", "JSON object"),
        ({"group": "demo", "app": "shop", "host": "h", "points": {}, "x": 1}, None,
         "unknown field 'x'"),
        ({"app": "shop", "host": "h", "points": {}}, None, "group: missing"),
        ({"group": "demo", "app": "sh/op", "host": "h", "points": {}}, None, "app: bad name"),
        ({"group": "demo", "app": "shop", "points": {}}, None, "host: bad host name"),
        ({"group": "demo", "app": "shop", "host": "a b", "points": {}}, None, "host"),
        ({"group": "demo", "app": "shop", "host": 7, "points": {}}, None, "host"),
        (report("h", None), None, "points must be an object"),
        (report("h", []), None, "points must be an object"),
        (report("h", {"bad name": pt}), None, "point 'bad name': bad name"),
        (report("h", {"order": 5}), None, "point 'order': expected an object"),
        (report("h", {"order": dict(pt, usd=1)}), None, "point 'order': unknown field 'usd'"),
        (report("h", {"order": dict(pt, used=-1)}), None, "point 'order': used must be"),
        (report("h", {"order": dict(pt, wants="5")}), None, "point 'order': wants must be"),
        (report("h", {"order": dict(pt, visits=-2)}), None, "point 'order': visits must be"),
        (report("h", {"order": dict(pt, token_rate=1.5)}), None, "token_rate must be"),
        (report("h", {"order": dict(pt, rate_wants=2 ** 40 + 1)}), None, "rate_wants must be"),
        (report("h", {"p%d" % i: pt for i in range(257)}), None, "too many points: 257"),
    ]
    for body, raw, field in bad:
        doc = env.bad("POST", "/shares", body, token=HB, raw=raw, field=field)
        check("\n" not in doc["error"], "a two-line error: %r" % doc["error"])
    # The bounds themselves are taken.
    edge = report("h", {"p%d" % i: dict(pt, used=2 ** 40, wants=2 ** 40, visits=2 ** 40,
                                        rate_wants=0, token_rate=0) for i in range(256)})
    doc = env.ok("POST", "/shares", edge, token=HB)
    eq(len(doc["points"]), 256, "points of a 256-point reply")
    # More than 64 KiB (the admin's 1 MiB cap is for other routes): 413.
    big = report("h", {"order": pt})
    big["host"] = "h"
    raw = json.dumps(big).encode()
    raw = raw[:-1] + b" " * (64 * 1024 + 1 - len(raw)) + b"}"
    env.bad("POST", "/shares", raw=raw, token=HB, want=413, field="64 KiB")
    eq(metric(env, "sds_admin_cluster_reports_total"), 1, "reports")
    env.stop_admin()


@test
def test_cluster_put_needs_host(env):
    start(env)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    one = APP + "/schemes/default/strategies/order"
    whole = APP + "/schemes/default/strategies"
    want = ("cluster limits need a host: app demo/shop has none that sent a heartbeat"
            " in the last 30 s")
    # No host at all: both forms of the PUT refused, nothing stored.
    for path, body in ((one, {"cluster_visit_threshold": 100}),
                       (one, {"cluster_token_rate": 5}),
                       (whole, {"points": {"pay": {"visit_threshold": 3},
                                           "order": {"cluster_token_rate": 5}}})):
        doc = env.bad("PUT", path, body)
        eq(doc["error"], want, "refusal of %r" % body)
    eq(env.ok("GET", whole)["points"], {}, "strategies after the refusals")
    # Local limits need no host.
    env.ok("PUT", one, {"visit_threshold": 3})
    # A host heard 31 s ago is no host; one heard now is.
    env.ok("POST", "/heartbeat", hb("web-1"), token=bearer(HB_TOKEN))
    env.sql("UPDATE hosts SET last_seen = last_seen - 31")
    env.bad("PUT", one, {"cluster_visit_threshold": 100}, field="cluster limits need a host")
    env.ok("POST", "/heartbeat", dict(hb("web-1"), period_start=T0 + 10),
           token=bearer(HB_TOKEN))
    env.ok("PUT", one, {"cluster_visit_threshold": 100})
    env.ok("PUT", whole, {"points": {"order": {"cluster_token_rate": 5}}})
    eq(env.ok("GET", whole)["points"], {"order": {"cluster_token_rate": 5,
                                                  "cluster_token_bucket": 5,
                                                  "downgrade_rate": 100}},
       "strategies after the PUT")
    # Another app's hosts do not count.
    env.ok("POST", "/groups/demo/apps", {"name": "cart"}, want=201)
    doc = env.bad("PUT", "/groups/demo/apps/cart/schemes/default/strategies/order",
                  {"cluster_visit_threshold": 1})
    eq(doc["error"], want.replace("shop", "cart"), "another app")
    env.stop_admin()
