# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The admin's copy servers, two of them: each point's records go to one
server, the points spread over both, and when one server dies its points
move to the other with nothing queued lost, and come back when it does
(docs/COPY.md "Capture: the loader's side").  Guard points of
tests/targets/guarded.c (sds_copy() at any point name), one body size
per point, so a shadow's requests say which point they were."""

import collections
import json
import os
import signal
import subprocess
import time

import guarded
import sdstest
from cap_lib import PlanAdmin, check, copy_lib, eq, test

SAPP = "capspread"
POINTS = ["p%d" % i for i in range(8)]
SIZE0 = 64                    # point k's bodies are SIZE0 + k bytes
N = 50                        # sds_copy() calls per point and round


def serve_on(ctx, srv):
    """sds-copy serve again on @srv's address, plans and name (it was
    killed): a new process in @srv."""
    argv = [copy_lib.COPY, "serve", "--listen", srv.addr, "--plans",
            srv.plans_path, "--name", srv.name]
    with open(srv.errpath, "wb") as e:
        srv.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=e,
                                 stdin=subprocess.DEVNULL, env=ctx.env,
                                 start_new_session=True)
    ctx.others.append(srv.p)
    srv.wait_ready()


def by_point(shadow):
    """{point: requests} of what @shadow got, by body size."""
    with shadow.lock:
        got = list(shadow.got)
    c = collections.Counter(len(b) - SIZE0 for b, _ in got)
    return {POINTS[k]: v for k, v in c.items()}


def stats(ctx):
    r = ctx.sds(["stats", "--json", "--app", SAPP])
    check(r.rc == 0, "stats: %r" % r)
    return json.loads(r.out)


def out_of(ctx):
    return stats(ctx)["copy_out"]


def sent(ctx):
    st = stats(ctx)
    return {p: sdstest.get_point(st, p)["copy"] for p in POINTS}


def copying(ctx):
    """Every point registered and copying at the plan's 100 %."""
    st = stats(ctx)
    pts = [sdstest.get_point(st, p, required=False) for p in POINTS]
    return all(p and p.get("copy", {}).get("rate") == 100 for p in pts)


def copying_target(ctx, extra):
    """guarded_static under a loader given @extra, every point registered
    (one sds_copy() each) and copying at 100 %."""
    path = sdstest.stage(os.path.join(sdstest.BUILD, "test", "targets",
                                      "guarded_static"), ctx.tmp)
    t = guarded.Target(ctx, path)
    t.open(SAPP)
    l = sdstest.AttachProcess(ctx, ["--app", SAPP] + extra + [path], SAPP)
    for k, p in enumerate(POINTS):
        eq(t.cmd("copy %s 1 %d" % (p, SIZE0 + k)), ["copied 1 failed 0"],
           "registering %s" % p)
    sdstest.wait_until(lambda: copying(ctx), time.time() + 40,
                       lambda _: "the points never copied at 100: %r"
                       % l.stderr(), 0.2)
    return t


def round_of(ctx, t, rnd, base=None):
    """N sds_copy() calls at every point; all sent (the loader's count,
    beyond @base's)."""
    base = base or {p: 0 for p in POINTS}
    for k, p in enumerate(POINTS):
        eq(t.cmd("copy %s %d %d" % (p, N, SIZE0 + k)),
           ["copied %d failed 0" % N], "sds_copy() at %s" % p)
    sdstest.wait_until(lambda: all(c["sent"] == base[p] + rnd * N
                                   for p, c in sent(ctx).items()),
                       time.time() + 20,
                       lambda _: "round %d not all sent: %r" % (rnd, sent(ctx)),
                       0.1)


def wait_shadows(shadows, want, what):
    """Both shadows' requests by point once they are @want."""
    return sdstest.wait_until(
        lambda: (lambda g: g if g == want else None)(
            [by_point(s) for s in shadows]),
        time.time() + 20,
        lambda _: "%s: shadows got %r, want %r"
        % (what, [by_point(s) for s in shadows], want), 0.1)


@test
def test_spread_by_point_and_failover(ctx):
    """8 points x 50 records to the admin's two servers: every point's
    records reach exactly one shadow, both shadows get some points.
    Server A killed between rounds: the next round's records of A's
    points all reach B (none lost, the loader says A is down).  A back
    on its address: within its back-off (at most 2 s) the loader
    connects again and A's points go to A again, exactly."""
    shadows = [ctx.shadow(), ctx.shadow()]
    srvs = [copy_lib.Server(ctx, [copy_lib.plan("s", [sh.addr], app=SAPP,
                                                points=POINTS)], name=nm)
            for sh, nm in zip(shadows, ("a", "b"))]
    admin = PlanAdmin(ctx, {"servers": [s.addr for s in srvs], "plans": [
        {"id": 1, "name": "s", "sample_pct": 100,
         "expires_at": int(time.time()) + 3600, "points": POINTS}]})
    token = sdstest.write_token(os.path.join(ctx.tmp, "token"),
                                "t0ken-spread_for.tests")
    t = copying_target(ctx, ["--admin", admin.url, "--token-file", token])
    base = sent(ctx)
    check(all(c["sent"] == 0 for c in base.values()),
          "sent before the first round: %r" % base)

    round_of(ctx, t, 1)
    got = [by_point(s) for s in shadows]
    got = wait_shadows(shadows, got, "round 1")     # settled
    owner = {}
    for i, g in enumerate(got):
        for p, k in g.items():
            check(p not in owner, "point %s reached both shadows: %r" % (p, got))
            owner[p] = i
            eq(k, N, "requests of %s at shadow %d" % (p, i))
    eq(sorted(owner), POINTS, "points that reached a shadow")
    check(set(owner.values()) == {0, 1}, "all points on one server: %r" % got)
    out = out_of(ctx)
    eq((out["servers"], out["route"]), (2, "point"), "copy_out servers, route")

    # A dies (between rounds: nothing of it in flight).
    a, b = srvs
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(10)
    t0 = time.monotonic()
    round_of(ctx, t, 2)
    took = time.monotonic() - t0
    want = [{p: N for p in POINTS if owner[p] == 0},
            {p: 2 * N if owner[p] == 1 else N for p in POINTS}]
    # Shadow A's own count stays (its server died, not the shadow).
    wait_shadows(shadows, want, "round 2, A dead")
    lost = {p: c["lost"] for p, c in sent(ctx).items()}
    eq(lost, {p: 0 for p in POINTS}, "records lost")
    st = {s["server"]: s for s in out_of(ctx)["streams"]}
    check(st[a.addr]["down"] and st[a.addr]["failures"] >= 1,
          "server A not down: %r" % st)
    sdstest.log("round 2 with A dead: %.2f s" % took)

    # A is back on its address: its points return to it.
    serve_on(ctx, a)
    sdstest.wait_until(lambda: not {s["server"]: s for s in out_of(ctx)[
        "streams"]}[a.addr]["down"], time.time() + 10,
        lambda _: "server A still down: %r" % out_of(ctx), 0.1)
    round_of(ctx, t, 3)
    want = [{p: 2 * N for p in POINTS if owner[p] == 0},
            {p: 3 * N if owner[p] == 1 else N for p in POINTS}]
    wait_shadows(shadows, want, "round 3, A back")


@test
def test_copy_to_failover_order(ctx):
    """--copy-to A,B is the operator's failover order: every point's
    records go to A while it lives; A killed, the next round all goes to
    B, none lost."""
    shadows = [ctx.shadow(), ctx.shadow()]
    srvs = [copy_lib.Server(ctx, [copy_lib.plan("s", [sh.addr], app=SAPP,
                                                points=POINTS)], name=nm)
            for sh, nm in zip(shadows, ("a", "b"))]
    t = copying_target(ctx, ["--copy-to", ",".join(s.addr for s in srvs)])
    base = {p: c["sent"] for p, c in sent(ctx).items()}
    round_of(ctx, t, 1, base)
    wait_shadows(shadows, [{p: N + base[p] for p in POINTS}, {}], "round 1")
    out = out_of(ctx)
    eq((out["servers"], out["route"], out["server"]),
       (2, "failover", srvs[0].addr), "copy_out servers, route, server")
    srvs[0].p.send_signal(signal.SIGKILL)
    srvs[0].p.wait(10)
    round_of(ctx, t, 2, base)
    wait_shadows(shadows, [{p: N + base[p] for p in POINTS},
                           {p: N for p in POINTS}], "round 2, A dead")
    eq({p: c["lost"] for p, c in sent(ctx).items()}, {p: 0 for p in POINTS},
       "records lost")
