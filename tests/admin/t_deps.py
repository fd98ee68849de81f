# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Each point's dependencies (docs/DEPS.md): the heartbeat's "deps" of a
point, counted since the host's loader attached, kept per host (its
latest period's) and summed over the hosts by GET {A}/deps and
{A}/points/{P}/deps; a heartbeat's bad dependencies refused whole, in one
line, nothing stored.
"""

from sdstest import eq
from admin_lib import APP, T0, heartbeat, pt, test


def dep(addr, port, proto="tcp", **c):
    d = {"addr": addr, "port": port, "proto": proto}
    d.update(c)
    return d


def withdeps(visits, deps):
    p = pt(visits)
    p["deps"] = deps
    return p


def edge(addr, port, hosts, connects=0, connect_errors=0, sends=0, send_errors=0,
         resets=0, nbytes=0, proto="tcp"):
    return {"addr": addr, "port": port, "proto": proto, "hosts": hosts,
            "connects": connects, "connect_errors": connect_errors, "sends": sends,
            "send_errors": send_errors, "resets": resets,
            "errors": connect_errors + send_errors + resets, "bytes": nbytes,
            "class": "unknown"}


@test
def test_deps_summed_over_hosts(env):
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    eq(env.ok("GET", APP + "/deps")["points"], [], "no dependencies yet")
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {
        "order": withdeps(10, [dep("10.0.0.5", 5432, connects=3, sends=30, bytes=300),
                               dep("10.0.0.9", 6379, connects=2, connect_errors=2)]),
        "pay": withdeps(4, [dep("0:0:0:0:0:0:0:1", 53, "udp", sends=4, send_errors=1)])}))
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0, {
        "order": withdeps(7, [dep("10.0.0.5", 5432, connects=1, sends=12, resets=1,
                                  bytes=120)])}))
    d = env.ok("GET", APP + "/deps")
    eq(sorted(h["host"] for h in d["hosts"]), ["web-1", "web-2"], "hosts")
    eq(d["points"], [
        {"point": "order", "deps": [
            edge("10.0.0.5", 5432, 2, connects=4, sends=42, resets=1, nbytes=420),
            edge("10.0.0.9", 6379, 1, connects=2, connect_errors=2)]},
        {"point": "pay", "deps": [
            edge("::1", 53, 1, sends=4, send_errors=1, proto="udp")]}],
        "deps summed over hosts, the address canonical")
    one = env.ok("GET", APP + "/points/pay/deps")
    eq((one["point"], one["points"]), ("pay", d["points"][1:]), "one point's")
    eq(env.ok("GET", APP + "/points/nosuch/deps")["points"], [], "a point with none")
    # The counts are since attach: a later period replaces the host's.
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0 + 10, {
        "order": withdeps(7, [dep("10.0.0.5", 5432, connects=1, sends=20, resets=1,
                                  bytes=200)])}))
    # A period sent late (a backlog) does not overwrite a later one.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 - 10, {
        "order": withdeps(1, [dep("10.0.0.5", 5432, connects=1, sends=1)])}))
    d = env.ok("GET", APP + "/deps")
    eq(d["points"][0]["deps"][0],
       edge("10.0.0.5", 5432, 2, connects=4, sends=50, resets=1, nbytes=500),
       "after web-2's later period and web-1's late one")
    eq({h["host"]: h["period_start"] for h in d["hosts"]},
       {"web-1": T0, "web-2": T0 + 10}, "each host's period kept")
    # Not a route for writes; an unknown app.
    env.bad("POST", APP + "/deps", {}, want=405)
    env.bad("GET", "/groups/demo/apps/nosuch/deps", want=404)


@test
def test_deps_hostile_heartbeat(env):
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    good = dep("10.0.0.5", 5432, connects=1)
    cases = [
        ("x", "points.order.deps must be an array"),
        ([good] * 1 + [dep("10.0.0.%d" % i, 80) for i in range(32)],
         "points.order.deps must be an array of at most 32"),
        (["x"], "points.order.deps[0] must be an object"),
        ([dep("10.0.0.256", 80)], "points.order.deps[0].addr must be an IPv4 or IPv6 address"),
        ([dep("web-1", 80)], "points.order.deps[0].addr must be"),
        ([dep("", 80)], "points.order.deps[0].addr must be"),
        ([dep("1.2.3.4 ", 80)], "points.order.deps[0].addr must be"),
        ([{"port": 80, "proto": "tcp"}], "points.order.deps[0].addr must be"),
        ([dep("10.0.0.5", 0)], "points.order.deps[0].port must be an integer 1..65535"),
        ([dep("10.0.0.5", 65536)], "points.order.deps[0].port must be"),
        ([dep("10.0.0.5", "80")], "points.order.deps[0].port must be"),
        ([dep("10.0.0.5", 80, "sctp")], 'points.order.deps[0].proto must be "tcp" or "udp"'),
        ([dep("10.0.0.5", 80, sends=-1)], "points.order.deps[0].sends must be an integer 0..1099511627776"),
        ([dep("10.0.0.5", 80, bytes=(1 << 40) + 1)], "points.order.deps[0].bytes must be"),
        ([dep("10.0.0.5", 80, connects=1.5)], "points.order.deps[0].connects must be"),
        ([dict(good, class_="strong")], "points.order.deps[0]: unknown field 'class_'"),
        ([good, dep("10.0.0.5", 5432, sends=3)],
         "points.order.deps[1]: 10.0.0.5 port 5432 tcp listed twice"),
        ([dep("::ffff:10.0.0.5", 80), dep("::FFFF:10.0.0.5", 80)],
         "points.order.deps[1]: ::ffff:10.0.0.5 port 80 tcp listed twice"),
    ]
    for deps, want in cases:
        r = env.bad("POST", "/heartbeat", heartbeat("web-1", T0, {"order": withdeps(1, deps)}))
        eq(r["error"].split("\n"), [r["error"]], "one line")
        eq(r["error"][:len(want)], want, "refusal of %r" % (deps,))
    # More than a heartbeat holds: 9 points of 30 edges each (270 > 256).
    pts = {"p%d" % i: withdeps(1, [dep("10.1.%d.%d" % (i, j), 80) for j in range(30)])
           for i in range(9)}
    r = env.bad("POST", "/heartbeat", heartbeat("web-1", T0, pts))
    eq(r["error"][-49:], "deps: more than 256 dependencies in the heartbeat",
       "a heartbeat's bound")
    # None of them stored anything: no host, no dependency.
    eq(env.ok("GET", APP + "/deps"), {"group": "demo", "app": "shop", "hosts": [],
                                      "points": []}, "nothing stored")
    eq(env.ok("GET", APP + "/hosts"), [], "no host from a refused heartbeat")
