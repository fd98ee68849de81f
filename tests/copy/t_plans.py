# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Plans files: every bad one refused with one line, nothing left over."""

import json
import os
import socket

from copy_lib import Server, check, eq, plan, test


def refused(ctx, plans, want, extra=()):
    """Serving @plans exits 1 with one line containing @want, and leaves
    no socket, lock or listener behind."""
    srv = Server(ctx, plans, extra=extra, wait=False)
    rc = srv.p.wait(10)
    err = srv.stderr()
    eq(rc, 1, "exit for %r" % want)
    eq(err.count("\n"), 1, "stderr lines: %r" % err)
    check(err.startswith("sds-copy: serve: ") and want in err,
          "want %r in %r" % (want, err))
    check(not os.listdir(ctx.run_dir), "left in the run dir: %r" % os.listdir(ctx.run_dir))
    s = socket.socket()
    try:
        check(s.connect_ex(("127.0.0.1", srv.port)) != 0, "port %d listens" % srv.port)
    finally:
        s.close()


@test
def t_bad_plans(ctx):
    sh = "127.0.0.1:9"
    ok = plan("p", [sh], amplification=5)
    for change, want in (
            ({"amplification": 0}, "plan 0 (p): amplification not an integer in 1..20"),
            ({"amplification": -3}, "amplification not an integer in 1..20"),
            ({"amplification": 21}, "amplification not an integer in 1..20"),
            ({"amplification": "5"}, "amplification not an integer"),
            ({"framing": "grpc"}, "unknown framing (raw or http)"),
            ({"expires_at": 1000}, "expires_at 1000 is in the past"),
            ({"shadows": []}, "\"shadows\" not a list of 1..64"),
            ({"shadows": ["nohost"]}, "shadows[0]: nohost: not HOST:PORT"),
            ({"shadows": ["127.0.0.1:0"]}, "port not in 1..65535"),
            ({"shadows": [{"addr": sh, "weight": 0}]}, "shadows[0]: \"weight\" not an integer in 1..1000"),
            ({"name": "a.b"}, "\"name\" not a name"),
            ({"points": []}, "\"points\" not a list of 1..64"),
            ({"points": ["x y"]}, "points[0] not a name"),
            ({"rate": -1}, "\"rate\" not an integer"),
            ({"writes": "yes"}, "\"writes\" not true or false"),
            ({"colour": "red"}, "unknown key \"colour\"")):
        refused(ctx, [dict(ok, **change)], want)
    noexp = dict(ok)
    del noexp["expires_at"]
    refused(ctx, [noexp], "no \"expires_at\" (unix seconds): every plan must end")
    refused(ctx, [ok, dict(ok, name="q")], "plan 1 (q): app/pt is also in plan p")
    refused(ctx, [ok, dict(ok, points=["other"])], "plan 1 (p): name p used twice")
    many = [dict(ok, name="m%d" % i, app="a%d" % i, pool=64,
                 shadows=["127.0.0.1:%d" % (9000 + k) for k in range(8)]) for i in range(9)]
    refused(ctx, many, "the plans' pools add up to 4608 connections, more than 4096")
    refused(ctx, "{\"plans\": [", "bad JSON")
    refused(ctx, "{\"plans\": [], \"plans\": []}", "bad JSON")
    refused(ctx, "[]", "not {\"plans\": [at most 64 plans]}")
    refused(ctx, [dict(ok, amplification=31)], "amplification not an integer in 1..30",
            extra=["--max-amplification", "30"])
    srv = Server(ctx, [dict(ok, amplification=30)], extra=["--max-amplification", "30"])
    eq(srv.plan_stats("p")["amplification"], 30, "amplification within the raised max")
    srv.stop()
    r = ctx.run(["serve", "--listen", "127.0.0.1:1", "--plans",
                 os.path.join(ctx.tmp, "nosuch.json")])
    check(r.rc == 1 and "No such file" in r.err and r.err.count("\n") == 1, "no file: %r" % r)
    json.dumps(ok)
