# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Live diff plans (`"diff": true`, issue 37): sds-copy compares the
answer to the first copy of each paired request with the production
response streamed after it.  The shadow here is build "b": a real HTTP
server that answers {"id": N, "price": P} with P off by one for every
tenth id; the production responses say the right price.  Exact counts
per point from what the test sent, never from sds-copy."""

import json
import socket
import time

import sender
from copy_lib import Server, check, eq, plan, test

import sdstest


def price(i):
    return 10 * i + 7


def http(body):
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def prod_answer(i):
    return http(json.dumps({"id": i, "price": price(i)}).encode())


def build_b(body):
    """Build b: every tenth id's price is one more than production's."""
    i = int(body.split(b"=")[1])
    return http(json.dumps({"id": i, "price": price(i) + (i % 10 == 0)}).encode())


def pairs(app, point, ids, base=0, lone=()):
    """Requests and their responses, two threads interleaved (req a, req b,
    resp b, resp a): the server must pair them by id, not by order.
    @lone: ids sent without a response."""
    recs = []
    ids = list(ids)
    for k in range(0, len(ids) - 1, 2):
        a, b = ids[k], ids[k + 1]
        recs += [sender.record(app, point, b"id=%d" % a, pair=base + a),
                 sender.record(app, point, b"id=%d" % b, pair=base + b),
                 sender.record(app, point, prod_answer(b), pair=base + b, response=True),
                 sender.record(app, point, prod_answer(a), pair=base + a, response=True)]
    if len(ids) % 2:
        a = ids[-1]
        recs += [sender.record(app, point, b"id=%d" % a, pair=base + a),
                 sender.record(app, point, prod_answer(a), pair=base + a, response=True)]
    for i in lone:
        recs.append(sender.record(app, point, b"id=%d" % i, pair=base + i))
    return recs


def diff_of(srv, name, want_pairs, timeout=40):
    def done():
        d = srv.plan_stats(name)["diff"]
        return d if d["pairs"] + d["unpaired"] >= want_pairs else None
    return sdstest.wait_until(done, time.time() + timeout,
                              lambda _: "plan %s's diff: %r" % (name, srv.plan_stats(name)["diff"]),
                              0.2)


@test
def t_livediff_counts(ctx):
    """200 pairs x3 onto build b: exactly 20 different (ids 0, 10, ...,
    190) and 180 same, the first copy of each compared; 5 requests whose
    production response never comes are "unpaired" (after the 10-s wait),
    never "same".  The same 200 on a plan that ignores $.price: all same.
    A shadow that never answers: each pair a timeout."""
    sh = ctx.shadow(http=True, answer=build_b)
    slow = ctx.shadow(http=True, stall=True)
    srv = Server(ctx, [plan("d", [sh.addr], points=["api"], amplification=3,
                            framing="http", diff=True),
                       plan("ign", [sh.addr], points=["api2"], framing="http",
                            diff=True, ignore=["$.price"]),
                       plan("slow", [slow.addr], points=["api3"], framing="http",
                            diff=True),
                       plan("plain", [sh.addr], points=["api4"], framing="http")])
    sender.send(srv.addr, pairs("app", "api", range(200), lone=range(1000, 1005)) +
                pairs("app", "api2", range(200), base=1 << 40) +
                pairs("app", "api3", range(6), base=1 << 41) +
                pairs("app", "api4", range(10), base=1 << 42))
    d = diff_of(srv, "d", 205)
    eq((d["pairs"], d["same"], d["different"], d["shadow_errors"], d["timeouts"],
        d["unpaired"]), (200, 180, 20, 0, 0, 5), "plan d: pairs, same, different, errors, timeouts, unpaired")
    eq([(p["point"], p["pairs"], p["different"]) for p in d["points"]], [("api", 200, 20)],
       "plan d per point")
    st = srv.wait_settled("d")
    eq((st["received"], st["dispatched"]), (205, 615), "plan d: received, dispatched (x3)")
    d = diff_of(srv, "ign", 200)
    eq((d["pairs"], d["same"], d["different"], d["unpaired"]), (200, 200, 0, 0),
       "plan ign ($.price ignored)")
    d = diff_of(srv, "slow", 6)
    eq((d["pairs"], d["same"], d["timeouts"]), (6, 0, 6), "plan slow: timeouts")
    eq(srv.plan_stats("plain")["diff"], None, "a plan without diff compares nothing")
    eq(sh.wait_count(615 + 200 + 10), 615 + 200 + 10, "requests build b received")
    srv.stop()


@test
def t_livediff_bad_plans(ctx):
    """diff on raw framing, ignore without diff, an ignore rule that does
    not parse: one line, exit 1, nothing served."""
    from t_plans import refused
    sh = "127.0.0.1:9"
    for p, want in (
            (plan("p", [sh], framing="http", ignore=["$.a"]), "\"ignore\" needs \"diff\": true"),
            (plan("p", [sh], framing="http", diff="yes"), "\"diff\" not true or false"),
            (plan("p", [sh], framing="http", diff=True, ignore=["$..a"]),
             "ignore[0]: --ignore '$..a': unknown syntax at character 3"),
            (plan("p", [sh], framing="http", diff=True, ignore="$.a"),
             "\"ignore\" not a list of at most 16 rules")):
        refused(ctx, [p], want)


PLANS = "/api/v1/groups/demo/apps/shop/copy-plans"


def admin_app(ctx):
    from copy_lib import Admin
    adm = Admin(ctx)
    adm.call("POST", "/api/v1/groups", {"name": "demo"}, want=201)
    adm.call("POST", "/api/v1/groups/demo/apps", {"name": "shop"}, want=201)
    return adm


@test
def t_livediff_admin(ctx):
    """A diff plan made in sds-admin: sds-copy compares, reports per
    period, the admin stores and serves them: the plan's diff_result sums
    to exactly 100 pairs, 90 same, 10 different, 3 unpaired, with the first
    five differences at $.price; its per-period stats add up the same."""
    adm = admin_app(ctx)
    sh = ctx.shadow(http=True, answer=build_b)
    p = adm.call("POST", PLANS, {"name": "d2", "points": ["api"], "amplification": 2,
                                 "framing": "http", "diff": True, "shadows": [sh.addr],
                                 "duration_s": 600, "by": "t_livediff"}, want=201)
    eq((p["diff"], "ignore" in p, p["diff_result"]["pairs"]), (True, False, 0),
       "the new plan: diff, no ignore, nothing judged yet")
    srv = Server(ctx, None, name="ld", admin=["--admin", adm.url, "--token-file",
                                              adm.token_file])
    sdstest.wait_until(lambda: [x["name"] for x in srv.stats()["plans"]] == ["d2"],
                       time.time() + 15, lambda _: "plan never arrived: %r" % srv.stats())
    eq(srv.plan_stats("d2")["diff"]["pairs"], 0, "sds-copy has the plan as a diff plan")
    sender.send(srv.addr, pairs("shop", "api", range(100), lone=range(500, 503)))

    def judged():
        d = adm.call("GET", PLANS + "/%d" % p["id"])["diff_result"]
        return d if d["pairs"] + d["unpaired"] >= 103 else None
    d = sdstest.wait_until(judged, time.time() + 40,
                           lambda _: "never reached the admin: %r" % srv.stats())
    eq((d["pairs"], d["same"], d["different"], d["shadow_errors"], d["timeouts"],
        d["unpaired"]), (100, 90, 10, 0, 0, 3), "the admin's diff of the plan")
    eq([(x["point"], x["pairs"], x["same"], x["different"]) for x in d["points"]],
       [("api", 100, 90, 10)], "per point")
    ex = d["points"][0]["examples"]
    eq(len(ex), 5, "examples kept")
    for e in ex:
        check(e["path"] == "$.price" and int(e["shadow"]) == int(e["recorded"]) + 1 and
              (int(e["recorded"]) - 7) % 100 == 0, "example %r" % e)
    doc = adm.call("GET", PLANS + "/%d/stats?from=0&to=%d" % (p["id"], time.time() + 60))
    eq(sum(x.get("diff", {}).get("different", 0) for x in doc["periods"]), 10,
       "different over the plan's periods")
    eq(sum(x.get("diff", {}).get("pairs", 0) for x in doc["periods"]), 100,
       "pairs over the plan's periods")
    srv.stop()
    adm.stop()


@test
def t_livediff_admin_bad(ctx):
    """A diff plan's bad settings and a copy server's bad diff counts: 400
    of one line, nothing stored."""
    adm = admin_app(ctx)
    base = {"name": "b", "points": ["api"], "framing": "http", "diff": True,
            "shadows": ["127.0.0.1:9"], "duration_s": 60, "by": "t"}
    for change, want in (
            ({"diff": "yes"}, "diff must be true or false"),
            ({"diff": False, "ignore": ["$.a"]}, "ignore needs diff: true"),
            ({"ignore": ["$..a"]}, "ignore[0]: --ignore '$..a': unknown syntax at character 3"),
            ({"ignore": "$.a"}, "ignore must be an array of at most 16 rules")):
        st, doc = adm.req("POST", PLANS, dict(base, **change))
        eq(st, 400, "status for %r" % change)
        check(want in doc["error"] and "\n" not in doc["error"], "%r in %r" % (want, doc))
    eq(adm.call("GET", PLANS), [], "no plan stored")
    p = adm.call("POST", PLANS, base, want=201)
    hb = {"name": "c1", "addr": "127.0.0.1:7", "period_start": int(time.time()) // 10 * 10 - 10}
    for d, want in (
            ({"points": {"api": {"pairs": 3, "same": 1, "different": 1, "shadow_errors": 0,
                                 "timeouts": 0}}}, "pairs is not same + different"),
            ({"points": {"api": {"pairs": 1, "same": 1, "different": 0, "shadow_errors": 0,
                                 "timeouts": 0, "examples": [{"path": 1}]}}},
             "examples[0] must be {path, recorded, shadow}"),
            ({"points": {"a.b": {}}}, "not a point name"),
            ({"colour": 1}, "unknown field 'colour'")):
        st, doc = adm.req("POST", "/api/v1/copy-servers/heartbeat",
                          dict(hb, plans={"b": {"received": 1, "diff": d}}))
        eq(st, 400, "heartbeat status for %r" % d)
        check(want in doc["error"], "%r in %r" % (want, doc))
    eq(adm.call("GET", PLANS + "/%d" % p["id"])["diff_result"]["pairs"], 0, "nothing stored")
    adm.stop()
