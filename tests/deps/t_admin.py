# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The loader's dependencies through sds-admin: a loader attached with
--deps and --admin, its heartbeat carrying each point's peers, and a real
sds-admin (SQLite) serving them at GET {A}/deps and {A}/points/{P}/deps
with the exact counts of what the test made the program do.
"""

import time

import sdsadmin
from deps_lib import APP, REQ, counts, eq, test

A = "/groups/default/apps/%s" % APP


def admin_edges(doc):
    out = {}
    for p in doc["points"]:
        for e in p["deps"]:
            eq(e["class"], "unknown", "an edge's class")
            eq(e["hosts"], 1, "hosts of %r" % e)
            out[(p["point"], e["addr"], e["port"], e["proto"])] = {
                f: e[f] for f in ("connects", "connect_errors", "sends",
                                  "send_errors", "resets", "bytes")}
    return out


@test
def test_deps_in_the_admin(ctx):
    adm = sdsadmin.Admin(ctx).start()
    adm.req("POST", "/api/v1/groups", {"name": "default"})
    adm.ok("POST", "/groups/default/apps", {"name": APP}, want=201)
    ok = ctx.server()
    refused = ctx.refusing()
    ctx.env["SDS_HB_OFFSET_MS"] = "2000"
    ctx.attach(extra=("--deps", "--admin", adm.url, "--token-file", adm.token_file))
    t = ctx.target()
    eq(t.run("fetch", ok, 6), {"OK": 6}, "fetch to the server")
    eq(t.run("fetch", refused, 4), {"ECONNREFUSED": 4}, "fetch to the refusing port")
    eq(t.run("hold", ok, 1), {"OK": 1}, "hold")
    eq(t.run("pooled", ok, 5), {"OK": 5}, "pooled")
    want = {
        ("fetch", "127.0.0.1", ok, "tcp"): counts(6, 0, 6, 0, 0, 6 * REQ),
        ("fetch", "127.0.0.1", refused, "tcp"): counts(4, 4),
        ("hold", "127.0.0.1", ok, "tcp"): counts(1),
        ("pool", "127.0.0.1", ok, "tcp"): counts(0, 0, 5, 0, 0, 5 * REQ),
    }
    # The period holding the calls closes, then goes 2 s into the next.
    got = {}
    deadline = time.time() + 45
    while time.time() < deadline:
        got = admin_edges(adm.ok("GET", A + "/deps"))
        if got == want:
            break
        time.sleep(0.5)
    eq(got, want, "GET {A}/deps")
    d = adm.ok("GET", A + "/deps")
    eq(len(d["hosts"]), 1, "hosts: %r" % d["hosts"])
    one = adm.ok("GET", A + "/points/fetch/deps")
    eq(admin_edges(one), {k: v for k, v in want.items() if k[0] == "fetch"},
       "GET {A}/points/fetch/deps")
    eq(ctx.loader.p.poll(), None, "the loader runs")
    adm.stop()
