# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A live diff plan end to end (issue 37), nothing faked: a plan with
"diff": true made in a real sds-admin reaches the loader of httpsvc build
a (its guard point captures each request and, by sds_copy_response(), its
response) and a real `sds-copy serve --admin`, which copies each request
x2 onto httpsvc build b -- it answers "price" differently for every tenth
id -- and compares b's answer to the first copy with a's response."""

import json
import time

import sdstest
from cap_lib import check, copy_lib, eq, test
from t_capdiff import DAPP, drive, staged, start_svc

PLANS = "/api/v1/groups/default/apps/%s/copy-plans" % DAPP
N = 200


@test
def test_live_diff_chain(ctx):
    """200 calls of build a: build b receives 400 copies; sds-copy and the
    admin count exactly 200 pairs, 180 same, 20 different (ids 10, 20, ...,
    200), the examples at $.price."""
    adm = copy_lib.Admin(ctx)
    adm.call("POST", "/api/v1/groups", {"name": "default"}, want=201)
    adm.call("POST", "/api/v1/groups/default/apps", {"name": DAPP}, want=201)
    port_b = start_svc(ctx, staged(ctx, "b"), "diffsvcb", "b")
    p = adm.call("POST", PLANS, {"name": "ld", "points": ["api"], "amplification": 2,
                                 "framing": "raw", "diff": True,
                                 "shadows": ["127.0.0.1:%d" % port_b],
                                 "duration_s": 600, "by": "t_caplivediff"}, want=201)
    srv = copy_lib.Server(ctx, None, name="ld",
                          admin=["--admin", adm.url, "--token-file", adm.token_file])
    sdstest.wait_until(lambda: srv.stats()["plans"], time.time() + 20,
                       "the plan never reached sds-copy")
    a = staged(ctx, "a")
    sdstest.AttachProcess(ctx, ["--app", DAPP, "--admin", adm.url, "--token-file",
                                adm.token_file, a], DAPP)
    port = start_svc(ctx, a, DAPP, "a")
    sdstest.wait_until(lambda: sdstest.get_point(
        json.loads(ctx.sds(["stats", "--json", "--app", DAPP]).out), "api",
        required=False), time.time() + 20, "the guard point never registered")
    # The plan reaches the loader with its first heartbeat's reply.
    ctx.wait_copy(lambda c: c["rate"] == 100, "the plan's rate at the loader",
                  timeout=30, name="api", app=DAPP)
    drive(port, range(1, N + 1), "a")
    c = ctx.wait_copy(lambda c: c["captured"] == N and c["responses"] == N,
                      "all pairs captured", name="api", app=DAPP)
    eq((c["dropped"], c["lost"]), (0, 0), "dropped, lost")

    def judged():
        d = srv.plan_stats("ld")["diff"]
        return d if d["pairs"] + d["unpaired"] >= N else None
    d = sdstest.wait_until(judged, time.time() + 30,
                           lambda _: "sds-copy's diff: %r" % srv.plan_stats("ld"))
    want = N // 10
    eq((d["pairs"], d["same"], d["different"], d["shadow_errors"], d["timeouts"],
        d["unpaired"]), (N, N - want, want, 0, 0, 0), "sds-copy's diff")
    st = srv.wait_settled("ld")
    eq((st["received"], st["dispatched"]), (N, 2 * N), "received, dispatched x2")

    def at_admin():
        r = adm.call("GET", PLANS + "/%d" % p["id"])["diff_result"]
        return r if r["pairs"] >= N else None
    r = sdstest.wait_until(at_admin, time.time() + 40, "the diff never reached the admin")
    eq((r["pairs"], r["same"], r["different"]), (N, N - want, want), "the admin's diff")
    ex = r["points"][0]["examples"]
    eq(len(ex), 5, "examples at the admin")
    for e in ex:
        i = (int(e["recorded"])) // 3
        check(e["path"] == "$.price" and i % 10 == 0 and int(e["shadow"]) == 3 * i + 1,
              "example %r" % e)
    srv.stop()
    adm.stop()
