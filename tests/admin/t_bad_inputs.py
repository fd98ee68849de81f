# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Bad input to sds-admin's API: each one refused with a status and an
{"error"} that names what was wrong, nothing stored, the admin alive
after all of it; oversize bodies; free text stored verbatim.
"""

import json

from sdstest import check, eq
from admin_lib import (APP, T0, TOKEN,
                       headers_only, heartbeat, pt, test)


GOOD = heartbeat("web-1", T0, {"order": pt(1)})


def start(env):
    """The test's admin, with app demo/shop."""
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)


def alive_after(env, apps=("shop",)):
    """Nothing the refused inputs did: the apps are still @apps, the admin
    answers, and it exits 0 at SIGTERM."""
    eq(sorted(a["name"] for a in env.ok("GET", "/apps")), sorted(apps),
       "apps still there")
    eq(env.req("GET", "/healthz", token=False)[0], 200, "healthz after bad inputs")
    env.stop_admin()


def hb_with(**kw):
    """GOOD with @kw's fields set (None: removed)."""
    d = json.loads(json.dumps(GOOD))
    for k, v in kw.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


# Heartbeats, each refused naming the field.
BAD_HEARTBEATS = [
    (dict(group="bad name"), "group"),
    (dict(group="a" * 65), "group"),
    (dict(app="x'; DROP TABLE apps; --"), "app"),
    (dict(app=""), "app"),
    (dict(app=None), "app"),
    (dict(host="web 1"), "host"),
    (dict(host=7), "host"),
    (dict(ip="300.1.1.1"), "ip"),
    (dict(period_start=T0 + 5), "period_start"),
    (dict(period_start=str(T0)), "period_start"),
    (dict(period_start=-10), "period_start"),
    (dict(period_start=T0 + 86400 * 365), "period_start"),
    (dict(period_s=60), "period_s"),
    (dict(version=-1), "version"),
    (dict(version="3"), "version"),
    (dict(points=[]), "points"),
    (dict(points={"bad name": {}}), "point"),
    (dict(points={"o": {"visits": -1}}), "points.o.visits"),
    (dict(points={"o": {"visits": 1.5}}), "points.o.visits"),
    (dict(points={"o": {"visits": "1"}}), "points.o.visits"),
    (dict(points={"o": {"timeouts": 1 << 41}}), "points.o.timeouts"),
    (dict(points={"o": {"latency_hist": [0] * 65}}), "latency_hist"),
    (dict(points={"o": {"latency_hist": [0, -1]}}), "latency_hist[1]"),
    (dict(points={"o": {"visitz": 1}}), "visitz"),
    (dict(points={"p%d" % i: {} for i in range(1025)}), "too many"),
    (dict(extra=1), "extra"),
]

# Strategy bodies for point order: the codec's messages name point and field.
BAD_STRATEGIES = [
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
]

# Group and app bodies.
BAD_NAMES = [
    ({}, "name"), ({"name": 5}, "name"), ({"name": "a b"}, "name"),
    ({"name": "a" * 65}, "name"), ({"name": "ok", "description": 5}, "description"),
    ({"name": "ok", "description": "d" * 5000}, "description"),
    ({"name": "ok", "owner": "x"}, "owner"),
]

# Query strings of GET stats.
BAD_STATS = [("from=x", "from"), ("to=1e9", "to"), ("step=15", "step"),
             ("from=100&to=50", "from"), ("from=0&to=99999999", "from/to"),
             ("step=10&from=0&to=86400", "step"), ("point=a%20b", "point")]


@test
def test_bad_json(env):
    """Malformed JSON and wrong top-level types, to heartbeat and groups."""
    start(env)
    for raw in (b"", b"{", b"{\"group\": }", b"[1,2]", b"null", b"\xff\xfe", b"{\"a\":1}{}"):
        env.bad("POST", "/heartbeat", raw=raw)
        if raw:
            env.bad("POST", "/groups", raw=raw)
    env.bad("POST", "/groups", raw=b"{\"name\":\"a\",\"name\":\"b\"}", field="duplicate")
    env.bad("POST", "/groups", raw=b"name=x", headers={"Content-Type": "text/plain"}, want=415)
    alive_after(env)


@test
def test_bad_heartbeats(env):
    """Each of BAD_HEARTBEATS refused naming its field; nothing stored."""
    start(env)
    for kw, field in BAD_HEARTBEATS:
        env.bad("POST", "/heartbeat", hb_with(**kw), field=field)
    eq(env.ok("GET", APP + "/hosts"), [], "hosts after the refused heartbeats")
    alive_after(env)


@test
def test_bad_strategies(env):
    """Each of BAD_STRATEGIES, and bad point tables and names, refused;
    no strategy stored."""
    start(env)
    sp = APP + "/schemes/default/strategies"
    for body, field in BAD_STRATEGIES:
        env.bad("PUT", sp + "/order", body, field=field)
    env.bad("PUT", sp, {"points": {"bad name": {}}}, field="bad name")
    env.bad("PUT", sp, {"points": []}, field="points")
    env.bad("PUT", sp, {"pionts": {}}, field="pionts")
    env.bad("PUT", sp + "/bad%20name", {"visit_threshold": 1}, field="point")
    env.bad("PUT", sp + "/" + "p" * 65, {"visit_threshold": 1}, field="point")
    # Nothing written: the new app's version (1), no point.
    eq(env.ok("GET", sp), {"version": 1, "points": {}, "scheme": "default"},
       "strategies after the refused ones")
    alive_after(env)


@test
def test_bad_names_and_queries(env):
    """Bad group and app bodies, names in paths, schemes, stats and
    events queries and their integer bounds, limits."""
    start(env)
    for body, field in BAD_NAMES:
        env.bad("POST", "/groups", body, field=field)
        env.bad("POST", "/groups/demo/apps", body, field=field)
    env.bad("POST", APP + "/schemes", {"name": "s", "clone_from": "x y"}, field="clone_from")
    env.bad("POST", APP + "/schemes", {"name": "s", "clone_from": "nope"}, want=404, field="nope")
    env.bad("GET", "/groups/a%27b", field="group")
    env.bad("GET", "/groups/demo/apps/a;b", field="app")
    env.bad("GET", APP + "/schemes/%3Cscript%3E", field="scheme")
    env.bad("PUT", APP + "/active_scheme", {"scheme": 1}, field="scheme")
    env.bad("PUT", APP + "/active_scheme", {}, field="scheme")
    for q, field in BAD_STATS:
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
    alive_after(env)


@test
def test_oversize_bodies(env):
    """Over 1 MiB, declared (Content-Length) or chunked: 413; 1 MiB
    exactly is taken."""
    start(env)
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
    ok = json.dumps(GOOD).encode()
    ok = ok[:-1] + b" " * ((1 << 20) - len(ok)) + b"}"
    eq(len(ok), 1 << 20, "test body size")
    okdoc = json.loads(ok)
    check(okdoc["host"] == "web-1", "body still valid")
    env.ok("POST", "/heartbeat", raw=ok)
    eq([h["host"] for h in env.ok("GET", APP + "/hosts")], ["web-1"],
       "the host of the 1-MiB heartbeat")
    alive_after(env)


@test
def test_free_text_verbatim(env):
    """Free text with quotes and SQL: stored and returned verbatim."""
    start(env)
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
    alive_after(env, ["a2", "shop"])
