# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Limits at function points with :failfast= (issue 36, docs/FAILFAST.md
"Limits"): the semaphore and the token bucket kept by the BPF programs
at the calls' entry, and the exact marks' crossing call, on the
unmodified fflimit (tests/targets/fflimit.c).  A call they refuse has its
connect() fail fast, as a downgraded call's.  Through the cgroup hooks,
where attach uses them (registered only there; elsewhere a SKIP line
each).  Barriers in the target, never sleeps: all threads are inside the
function at once however loaded the machine is.
"""

import json
import os
import signal
import time

import sdstest
from ff_lib import cg_lever, check, eq, skip, test, wait_cg_clean

TARGET = os.path.join(sdstest.BUILD, "test", "targets", "fflimit")
HOLD = "hold=fetch_hold:err=neg:failfast=connect"
CONN = "conn=fetch_conn:err=neg:failfast=connect"


class Limit:
    """fflimit in its own session (ended by the ctx)."""

    def __init__(self, ctx):
        self.p = sdstest.start_line_target(ctx, TARGET, "fflimit")

    def send(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def line(self, first):
        w = self.p.stdout.readline().decode().split()
        check(w and w[0] == first, "fflimit said %r, want %s" % (w, first))
        return w

    def counts(self, w):
        return {k: int(v) for k, v in (x.split("=") for x in w if "=" in x)}


def ticked(ctx, n=2):
    """The loader has ticked @n times since now: its limits and marks
    for the strategies in force are published."""
    start = ctx.stats()["tick_count"]
    sdstest.wait_until(lambda: ctx.stats()["tick_count"] >= start + n,
                       time.time() + 30, "the loader's ticks", 0.05)


def attach(ctx, spec, strategies, extra=()):
    ctx.write_strategies(strategies)
    a = ctx.attach([spec], dry=False, extra=list(extra), target=TARGET)
    ticked(ctx)
    return a


def end(ctx, a):
    a.end()
    ctx.loader = None
    wait_cg_clean("after the test")


def cg_limit_concurrent(ctx):
    """concurrent_threshold 3, 8 threads inside fetch_hold() at once, 4
    in each of two processes: exactly 3 connect, 5 fail fast with
    ECONNREFUSED (refused_concurrent 5); the permits come back with the
    returns, so a second round does the same."""
    srv = ctx.server()
    a = attach(ctx, HOLD, {"hold": {"concurrent_threshold": 3}})
    procs = [Limit(ctx), Limit(ctx)]
    for rnd in (1, 2):
        for t in procs:
            t.send("hold %d 4" % srv.port)
        held = [t.counts(t.line("held")) for t in procs]
        ok = sum(h["OK"] for h in held)
        ref = sum(h["ECONNREFUSED"] for h in held)
        eq((ok, ref, sum(h["other"] for h in held)), (3, 5, 0),
           "round %d: connects that succeeded, failed fast, other "
           "(per process %r)" % (rnd, held))
        for t in procs:
            t.send("release")
        for t in procs:
            t.line("done")
        f = ctx.ff("hold")
        eq((f["refused_concurrent"], f["refused_token"], f["denied"]),
           (5 * rnd, 0, 5 * rnd), "round %d: refused_concurrent, "
           "refused_token, denied" % rnd)
        p = ctx.point("hold")
        eq((p["total"]["visits"], p["total"]["exceptions"]),
           (8 * rnd, 5 * rnd), "round %d: visits, exceptions" % rnd)
    eq(srv.accepted, 6, "connections the server saw")
    # Shown as a guard's refusals are: the point downgraded, reason concurrent.
    ev = sdstest.run_group([sdstest.SDS, "events", "--app", "fftarget",
                            "--json", "--count", "1000"], ctx.env, ctx.tmp,
                           ctx.others, 3, fail_on_timeout=False)
    mine = [e for e in (json.loads(x) for x in ev.out.splitlines() if x.strip())
            if e.get("point") == "hold"]
    check(any(e.get("event") == "started" and e.get("reason") == "concurrent"
              for e in mine), "no event of hold downgraded for concurrent: %r"
          % mine[:6])
    end(ctx, a)


def hold_round(ctx, procs, srv, rnd, want):
    """Every process holds 4 calls inside fetch_hold() at once, then lets
    them go: (connects that succeeded, failed fast) must be @want."""
    for t in procs:
        t.send("hold %d 4" % srv.port)
    held = [t.counts(t.line("held")) for t in procs]
    got = (sum(h["OK"] for h in held), sum(h["ECONNREFUSED"] for h in held),
           sum(h["other"] for h in held))
    for t in procs:
        t.send("release")
    for t in procs:
        t.line("done")
    eq(got, want + (0,), "round %d: connects that succeeded, failed fast, "
       "other (per process %r)" % (rnd, held))


def cg_limit_concurrent_adopted(ctx):
    """concurrent_threshold 3 with the loader killed (-9) and a new one of
    the same build adopting its pins: the adopted probes run the old
    programs, over the pinned globals the new loader writes, so the limit
    holds as before (3 connect, 5 fail fast), and a new limit (5) the new
    loader is given reaches them too (5 and 3)."""
    srv = ctx.server()
    a = attach(ctx, HOLD, {"hold": {"concurrent_threshold": 3}})
    procs = [Limit(ctx), Limit(ctx)]
    hold_round(ctx, procs, srv, 1, (3, 5))
    sock = a.sock
    stale = sdstest.inode_of(sock)
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(10)
    env = dict(ctx.env)
    env.pop("SDS_FAILFAST_DRYRUN", None)
    saved, ctx.env = ctx.env, env
    try:
        b = sdstest.AttachProcess(ctx, ["--app", "fftarget", "--strategies",
                                        ctx.strategies, TARGET, HOLD],
                                  "fftarget", stale_inode=stale)
    finally:
        ctx.env = saved
    ctx.loader = b
    ctx.cg.ours()
    check("adopted the pins" in b.stderr(), "no adoption: %r" % b.stderr())
    check("another build" not in b.stderr(), "said another build: %r"
          % b.stderr())
    ticked(ctx)
    hold_round(ctx, procs, srv, 2, (3, 5))
    ctx.write_strategies({"hold": {"concurrent_threshold": 5}})
    ticked(ctx)
    hold_round(ctx, procs, srv, 3, (5, 3))
    f = ctx.ff("hold")
    eq(f["refused_concurrent"], 5 + 5 + 3,
       "refused_concurrent of the three rounds (kept across the adoption)")
    end(ctx, b)


def cg_limit_token(ctx):
    """token_rate 100 with a bucket of 10, 1,000 calls paced over ~1 s:
    the bucket, then one call per 10 ms pass (10 + 100 x the span in s,
    within 1); every other call fails fast (refused_token)."""
    srv = ctx.server(reply=True)
    a = attach(ctx, CONN, {"conn": {"token_rate": 100, "token_bucket": 10}})
    t = Limit(ctx)
    t.send("paced %d 1000 1000" % srv.port)
    w = t.line("res")
    c = t.counts(w)
    span = int(w[w.index("span") + 1]) / 1e9
    want = 10 + 100 * span
    print("  token_rate 100, bucket 10: %d of 1000 passed over %.3f s "
          "(want %.1f +- 1)" % (c["OK"], span, want))
    check(abs(c["OK"] - want) <= 1, "passed %d, want %.1f +- 1" % (c["OK"], want))
    eq((c["OK"] + c["ECONNREFUSED"], c["other"]), (1000, 0), "calls, other")
    f = ctx.ff("conn")
    eq((f["refused_token"], f["refused_concurrent"], f["denied"]),
       (c["ECONNREFUSED"], 0, c["ECONNREFUSED"]),
       "refused_token, refused_concurrent, denied")
    eq(srv.accepted, c["OK"], "connections the server saw")
    end(ctx, a)


def crossing(ctx, tick_ms):
    """visit_threshold 500: calls 1..500 connect, call 501 is the first
    to fail fast and every later one does too, whenever the tick comes."""
    srv = ctx.server(reply=True)
    a = attach(ctx, CONN, {"conn": {"visit_threshold": 500}},
               ["--tick-ms", str(tick_ms)])
    t = Limit(ctx)
    t.send("seq %d 600" % srv.port)
    w = t.line("res")
    c = t.counts(w)
    eq((c["OK"], c["ECONNREFUSED"], c["other"]), (500, 100, 0),
       "--tick-ms %d: connected, failed fast, other" % tick_ms)
    eq((int(w[w.index("first") + 1]), int(w[w.index("after") + 1])), (501, 0),
       "--tick-ms %d: the first call that failed, calls that passed after it"
       % tick_ms)
    f = ctx.ff("conn")
    eq((f["denied"], f["refused_concurrent"], f["refused_token"]), (100, 0, 0),
       "denied, refused_concurrent, refused_token")
    eq(ctx.point("conn")["total"]["visits"], 600, "visits")
    eq(srv.accepted, 500, "connections the server saw")
    end(ctx, a)


def cg_limit_visit_crossing_tick100(ctx):
    crossing(ctx, 100)


def cg_limit_visit_crossing_tick1000(ctx):
    crossing(ctx, 1000)


def limit_refused_without_failfast(ctx):
    """concurrent_threshold and token_rate on a function point without
    :failfast=: attach refuses each in one line naming guard points and
    :failfast=, nothing attached."""
    for field, st in (("concurrent_threshold", {"concurrent_threshold": 3}),
                      ("token_rate", {"token_rate": 100})):
        ctx.write_strategies({"conn": st})
        r = ctx.sds(["attach", "--app", "fftarget", "--strategies",
                     ctx.strategies, TARGET, "conn=fetch_conn:err=neg"])
        want = ("sds-bpf: %s: point 'conn': %s needs a guard point "
                "(sds_enter/sds_should_downgrade) or :failfast= on this "
                "function point (docs/FAILFAST.md): a function point cannot "
                "hold its calls back\n" % (ctx.strategies, field))
        eq((r.rc != 0, r.err), (True, want), "attach with %s" % field)
        check(not os.path.exists(os.path.join(ctx.run_dir,
                                              "default.fftarget.sock")),
              "a socket after the refusal")


test(limit_refused_without_failfast)

_ok, _why = cg_lever()
for _fn in (cg_limit_concurrent, cg_limit_concurrent_adopted, cg_limit_token,
            cg_limit_visit_crossing_tick100, cg_limit_visit_crossing_tick1000):
    if _ok:
        test(_fn)
    else:
        skip(_fn.__name__, _why)
