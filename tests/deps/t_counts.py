# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Each point's peers with exact counts: fetch() connects to an answering
server N times and to a refusing port M times, one connection a call;
fetch_hold() connects once and fetch_pooled() sends K times on that
connection (a pool: one connect, K sends); the same exchanges outside
every point and in a point that is not called count nothing.
"""

import sdstest
from deps_lib import (APP, GUARD, REQ, check, counts, edges, eq, test)

N, M, K = 7, 5, 9


@test
def test_two_peers_and_a_pool(ctx):
    ok = ctx.server()
    refused = ctx.refusing()
    ctx.attach()
    t = ctx.target()
    eq(edges(ctx.deps()), {}, "deps before any call")
    eq(t.run("fetch", ok, N), {"OK": N}, "fetch to the server")
    eq(t.run("fetch", refused, M), {"ECONNREFUSED": M}, "fetch to the refusing port")
    # Outside every point: counted nowhere.
    eq(t.run("plain", ok, 3), {"OK": 3}, "plain exchanges")
    eq(t.run("plain", refused, 2), {"ECONNREFUSED": 2}, "plain refused")
    eq(t.run("hold", ok, 1), {"OK": 1}, "hold")
    eq(t.run("pooled", ok, K), {"OK": K}, "pooled calls")
    eq(t.run("use", ok, 4), {"OK": 4}, "the held socket used outside any point")
    want = {
        ("fetch", "127.0.0.1", ok, "tcp"): counts(N, 0, N, 0, 0, N * REQ),
        ("fetch", "127.0.0.1", refused, "tcp"): counts(M, M),
        ("hold", "127.0.0.1", ok, "tcp"): counts(1),
        ("pool", "127.0.0.1", ok, "tcp"): counts(0, 0, K, 0, 0, K * REQ),
    }
    d = ctx.deps()
    eq(edges(d), want, "deps --json")
    eq(d["edges"], 4, "edges")
    eq(d["overflow"], {"edges": 0, "marks": 0}, "overflow")
    # One point only.
    one = ctx.deps("pool")
    eq([p["point"] for p in one["points"]], ["pool"], "deps pool: its points")
    eq(edges(one), {k: v for k, v in want.items() if k[0] == "pool"}, "deps pool")
    # The table: a row per edge, the point named on its first.
    r = ctx.sds(["deps", "--app", APP])
    eq(r.rc, 0, "deps: %r" % r)
    lines = r.out.splitlines()
    check(lines[0].split()[:3] == ["POINT", "PEER", "PROTO"], "deps' head: %r" % lines[0])
    rows = [l.split() for l in lines[1:]]
    eq(len(rows), 4, "deps' rows: %r" % r.out)
    # fetch's rows heaviest first: the server's (2N events), then the refused port's.
    eq(rows[0], ["fetch", "127.0.0.1:%d" % ok, "tcp", str(N), "0", str(N), "0", "0",
                 "unknown"], "deps: fetch's first row")
    eq(rows[1], ["127.0.0.1:%d" % refused, "tcp", str(M), str(M), "0", "0", "0",
                 "unknown"], "deps: the refused edge's row")


@test
def test_more_calls_add_up(ctx):
    """Counts are since attach: a second round adds to the first, and a
    second loader of the same app starts from none."""
    ok = ctx.server()
    ctx.attach()
    t = ctx.target()
    eq(t.run("fetch", ok, 3), {"OK": 3}, "fetch")
    eq(t.run("fetch", ok, 4), {"OK": 4}, "fetch again")
    eq(edges(ctx.deps()), {("fetch", "127.0.0.1", ok, "tcp"):
                           counts(7, 0, 7, 0, 0, 7 * REQ)}, "deps")
    ctx.loader.end()
    eq(ctx.loader.p.returncode, 0, "the loader's exit")
    ctx.attach()
    eq(edges(ctx.deps()), {}, "a new loader's deps")


@test
def test_overflow_counted(ctx):
    """--deps-max 2: two edges kept, the events of a third counted as
    overflow, none lost silently."""
    a, b = ctx.server(), ctx.server()
    c = ctx.refusing()
    ctx.attach(extra=("--deps", "--deps-max", "2"))
    t = ctx.target()
    eq(t.run("fetch", a, 2), {"OK": 2}, "fetch a")
    eq(t.run("fetch", b, 1), {"OK": 1}, "fetch b")
    eq(t.run("fetch", c, 3), {"ECONNREFUSED": 3}, "fetch c")
    d = ctx.deps()
    eq(edges(d), {("fetch", "127.0.0.1", a, "tcp"): counts(2, 0, 2, 0, 0, 2 * REQ),
                  ("fetch", "127.0.0.1", b, "tcp"): counts(1, 0, 1, 0, 0, REQ)},
       "deps")
    eq(d["max_edges"], 2, "max_edges")
    # c's three connects found no room (and were never marked).
    eq(d["overflow"], {"edges": 3, "marks": 0}, "overflow")


@test
def test_guard_point(ctx):
    """A libsds guard point: the calls made between sds_should_downgrade()
    and sds_downgrade_finally() count on its edges, the same exchanges
    outside the guard nowhere."""
    ok = ctx.server()
    refused = ctx.refusing()
    app = sdstest.stage(GUARD, ctx.tmp)
    ctx.attach(specs=(), extra=("--deps",), target=app)
    r = sdstest.run_group([app, APP, str(ok), str(refused), "6", "3", "4"],
                          ctx.env, ctx.tmp, ctx.others, 60)
    eq((r.rc, r.out), (0, "ok 6 refused 3 plain 4\ndone\n"), "depsguard: %r" % r)
    eq(edges(ctx.deps()), {
        ("inv", "127.0.0.1", ok, "tcp"): counts(6, 0, 6, 0, 0, 6 * REQ),
        ("inv", "127.0.0.1", refused, "tcp"): counts(3, 3)}, "deps of the guard point")


@test
def test_reset_by_the_peer(ctx):
    """A peer that resets each connection at its request: the connects
    and sends count, and each connection as reset, none as a failed
    connect."""
    rst = ctx.server(reset=True)
    ctx.attach()
    t = ctx.target()
    eq(t.run("fetch", rst, 5), {"ECONNRESET": 5}, "fetch to the resetting server")
    eq(edges(ctx.deps()), {("fetch", "127.0.0.1", rst, "tcp"): counts(5, 0, 5, 0, 5, 5 * REQ)},
       "deps")
