# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""sds-copy serve --admin: plans from a real sds-admin, counts back to it."""

import os
import time

import sdstest
import sender
from copy_lib import Admin, Server, check, eq, test

PLANS = "/api/v1/groups/demo/apps/shop/copy-plans"


def plan_names(srv):
    return [p["name"] for p in srv.stats()["plans"]]


@test
def t_admin_plans_and_counts(ctx):
    """A plan made in sds-admin reaches sds-copy (the first admin URL
    refuses: failover); 1,000 records x3 reach the shadow; the admin's
    per-period stats of the plan add up to exactly 1,000 received and
    3,000 dispatched; a stop reaches sds-copy at its next heartbeat."""
    adm = Admin(ctx)
    sh = ctx.shadow()
    adm.call("POST", "/api/v1/groups", {"name": "demo"}, want=201)
    adm.call("POST", "/api/v1/groups/demo/apps", {"name": "shop"}, want=201)
    p = adm.call("POST", PLANS, {"name": "x3", "points": ["handle_request"],
                                 "amplification": 3, "shadows": [sh.addr],
                                 "duration_s": 600, "by": "t_admin"}, want=201)
    srv = Server(ctx, None, name="adm",
                 admin=["--admin", "http://127.0.0.1:1,%s/" % adm.url,
                        "--token-file", adm.token_file])
    sdstest.wait_until(lambda: plan_names(srv) == ["x3"], time.time() + 10,
                       lambda _: "plans never arrived: %r" % srv.stats())
    st = srv.plan_stats("x3")
    eq((st["app"], st["points"], st["amplification"], st["framing"], st["expires_at"]),
       ("shop", ["handle_request"], 3, "raw", p["expires_at"]), "the plan at sds-copy")
    bodies = [b"line-%04d\n" % i for i in range(1000)]
    sender.send(srv.addr, [sender.record("shop", "handle_request", b) for b in bodies])
    eq(sh.wait_count(3000, 30), 3000, "copies at the shadow")
    q = srv.wait_settled("x3")
    eq((q["received"], q["dispatched"]), (1000, 3000), "sds-copy's counters")

    def totals():
        doc = adm.call("GET", PLANS + "/%d/stats?from=0&to=%d" % (p["id"], time.time() + 60))
        t = {k: sum(x[k] for x in doc["periods"])
             for k in ("received", "dispatched", "shadow_errors", "server_dropped")}
        return t if t["dispatched"] >= 3000 else None
    t = sdstest.wait_until(totals, time.time() + 30,
                           lambda _: "counts never reached the admin: %r" % srv.stats())
    eq(t, {"received": 1000, "dispatched": 3000, "shadow_errors": 0, "server_dropped": 0},
       "the admin's sums over the plan's periods")
    a = srv.stats()["admin"]
    check(a["heartbeats"] >= 2, "heartbeats %r" % a)
    eq((a["advertise"], a["last_error"]), (srv.addr, ""), "advertise, last error")
    servers = adm.call("GET", "/api/v1/copy-servers")
    eq([(x["name"], x["addr"], x["live"]) for x in servers], [("adm", srv.addr, True)],
       "copy servers at the admin")

    adm.call("POST", PLANS + "/%d/stop" % p["id"], {"by": "t_admin"})
    srv.hup()   # a heartbeat now, not at the next boundary
    sdstest.wait_until(lambda: plan_names(srv) == [], time.time() + 10,
                       lambda _: "the stop never reached sds-copy: %r" % srv.stats())
    eq(srv.stderr(), "", "sds-copy stderr (the refusing first URL is failover, not an error)")
    srv.stop()
    adm.stop()


@test
def t_admin_refuses_and_bad_options(ctx):
    """A wrong token: sds-copy keeps serving (no plans), counts the error
    and says it once; bad options are one line and exit 1 or 2."""
    adm = Admin(ctx)
    bad_tok = sdstest.write_token(os.path.join(ctx.tmp, "bad"), "wrong-t0ken_for.tests")
    srv = Server(ctx, None, name="tok", admin=["--admin", adm.url, "--token-file", bad_tok])
    sdstest.wait_until(lambda: srv.stats()["admin"]["errors"] >= 2, time.time() + 20,
                       lambda _: "no refused heartbeat: %r" % srv.stats())
    st = srv.stats()
    eq((st["plans"], st["admin"]["heartbeats"]), ([], 0), "plans, accepted heartbeats")
    check("HTTP 401" in st["admin"]["last_error"], "last_error %r" % st["admin"]["last_error"])
    err = srv.stderr().splitlines()
    eq(len(err), 1, "lines on stderr for repeated refusals: %r" % err)
    check(err[0].startswith("sds-copy: admin: %s: HTTP 401" % adm.url), "stderr %r" % err)
    srv.stop()

    loose = sdstest.write_token(os.path.join(ctx.tmp, "loose"), "t", mode=0o644)
    for args, rc, msg in [
            (["--admin", adm.url, "--token-file", loose], 1,
             "--token-file %s: mode 0644 is too open: must be 0600 or 0400" % loose),
            (["--admin", adm.url], 1, "--admin needs --token-file (the admin's bearer token)"),
            (["--admin", "ftp://x", "--token-file", bad_tok], 1,
             "--admin ftp://x: not an http:// or https:// URL"),
            (["--admin", adm.url, "--token-file", bad_tok, "--plans", "p.json"], 2,
             "give one of --plans FILE and --admin URL"),
            (["--plans", "p.json", "--token-file", bad_tok], 2,
             "--token-file and --advertise go with --admin"),
            (["--admin", adm.url, "--token-file", os.path.join(ctx.tmp, "none")], 1,
             "--token-file %s: No such file or directory" % os.path.join(ctx.tmp, "none")),
            (["--admin", adm.url, "--token-file", bad_tok, "--advertise", "nope"], 1,
             "--advertise nope: not HOST:PORT")]:
        r = ctx.run(["serve", "--listen", "127.0.0.1:%d" % sdstest.free_port()] + args)
        eq((r.rc, r.err.strip()), (rc, "sds-copy: serve: " + msg), "serve %r" % args)
    adm.stop()


@test
def t_admin_plan_left_out(ctx):
    """A plan this server cannot take (amplification above its
    --max-amplification) is left out with one line, said once; the
    others run."""
    adm = Admin(ctx)
    sh = ctx.shadow()
    adm.call("POST", "/api/v1/groups/demo/apps", {"name": "shop"}, want=201)
    for name, amp, pt in (("big", 5, "a"), ("ok", 2, "b")):
        adm.call("POST", PLANS, {"name": name, "points": [pt], "amplification": amp,
                                 "shadows": [sh.addr], "duration_s": 600, "by": "t"},
                 want=201)
    srv = Server(ctx, None, name="skip", extra=["--max-amplification", "2"],
                 admin=["--admin", adm.url, "--token-file", adm.token_file])
    sdstest.wait_until(lambda: plan_names(srv) == ["ok"], time.time() + 10,
                       lambda _: "plans: %r" % srv.stats())
    srv.hup()
    sdstest.wait_until(lambda: srv.stats()["admin"]["heartbeats"] >= 2, time.time() + 10,
                       "no second heartbeat")
    eq(plan_names(srv), ["ok"], "plans taken after the second heartbeat")
    eq(srv.stderr(), "sds-copy: admin: plans left out: plan 0 (big): amplification not an "
       "integer in 1..2 (--max-amplification)\n", "stderr: one line, once")
    srv.stop()
    adm.stop()
