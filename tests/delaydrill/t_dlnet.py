# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Delay drills on the wire: fetch() of dltarget connects to the server in
the test's namespace, one connection a call.  Calls are made one at a
time and the point's counts read after each, so which call's socket was
marked is known exactly, not guessed from its time.

The dry run (every kernel with tc and cgroup sock_addr programs): the
marks and the stamped packets, call by call; the drill's end by --stop,
by its expiry and by the loader's SIGKILL.  The timed test (a kernel with
the fq qdisc; elsewhere SKIP with the reason): a 200-ms drill at ratio 50
over 200 calls, the marked ones 200-260 ms slower than the others, calls
outside the point never, and nothing late after the drill or the loader.
"""

import math
import os
import signal
import statistics
import time

from dl_lib import (APP, check, dl_links, eq, fq_loads, root_qdisc, skip, test,
                    wait_unhooked)

PROGS = ["sds_dl_connect4", "sds_dl_connect6", "sds_dl_egress"]
MS = 1000 * 1000


def drill(ctx, *args):
    r = ctx.drill(*args)
    eq(r.rc, 0, "drill %s: %r" % (" ".join(args), r))
    return r


def counts(ctx, point="fetch"):
    d = ctx.delay(point)
    return d["marked"], d["spared"], d["packets"]


def calls_one_by_one(ctx, t, net, n):
    """@n fetch() calls, one at a time: [(ns, marked)] with each call's
    socket marked or not as the point's counts say, and checks that each
    call is counted once (marked or spared) and that packets are stamped
    for the marked calls only."""
    out = []
    m0, s0, p0 = counts(ctx)
    for i in range(n):
        res, ns = t.run("fetch", net, 1)
        eq(res, {"OK": 1}, "call %d" % i)
        m, s, p = counts(ctx)
        eq((m - m0) + (s - s0), 1, "call %d: marked + spared" % i)
        if m > m0:
            check(p > p0, "call %d: marked, and no packet stamped" % i)
        else:
            eq(p, p0, "call %d: not marked, packets stamped" % i)
        out.append((ns[0], m > m0))
        m0, s0, p0 = m, s, p
    return out


def binomial_ok(k, n, p):
    return abs(k - n * p) <= 5 * math.sqrt(n * p * (1 - p))


@test
def dry_marks_call_by_call(ctx):
    """Dry run, ratio 50 over 200 calls: each call's socket is marked or
    spared, the marked ones' packets stamped and no other's; the share
    within 5 standard deviations of 100; calls outside the point and in
    another point mark nothing; --stop and the expiry end it, and the
    links go with the drill."""
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev])
    t = ctx.target()
    eq(t.run("fetch", net, 5)[0], {"OK": 5}, "before the drill")
    eq(counts(ctx), (0, 0, 0), "counts before the drill")
    eq(dl_links(), [], "links before the drill")
    r = drill(ctx, "fetch", "--delay-ms", "200", "--ratio", "50", "--for", "300")
    eq(r.out, "delay drill on 'fetch': tc egress on %s (dry run: no qdisc)\n"
       % net.dev, "drill's line")
    eq(dl_links(), PROGS, "links during the drill")
    calls = calls_one_by_one(ctx, t, net, 200)
    marked = sum(1 for _, m in calls if m)
    print("  200 calls at ratio 50: %d sockets marked" % marked)
    check(binomial_ok(marked, 200, 0.5), "marked %d of 200 at ratio 50" % marked)
    d = ctx.point("fetch")["drill"]
    eq((d["kind"], d["ratio"], d["delay_ms"], d["delays"]),
       ("delay", 50, 200, marked), "stats' drill")
    before = counts(ctx)
    eq(t.run("plain", net, 50)[0], {"OK": 50}, "outside the point")
    eq(t.run("other", net, 50)[0], {"OK": 50}, "in a point without failfast=")
    eq(counts(ctx), before, "counts after calls outside the point")
    drill(ctx, "fetch", "--stop")
    wait_unhooked("after --stop")
    eq(t.run("fetch", net, 20)[0], {"OK": 20}, "after --stop")
    eq(counts(ctx), before, "counts after --stop")
    t0 = time.monotonic()
    drill(ctx, "fetch", "--delay-ms", "100", "--for", "2")
    eq(t.run("fetch", net, 10)[0], {"OK": 10}, "a ratio-100 drill")
    m, s, p = counts(ctx)
    eq((m - before[0], s - before[1]), (10, 0), "marked, spared at ratio 100")
    time.sleep(max(0, t0 + 2.5 - time.monotonic()))
    wait_unhooked("after the expiry")
    check(ctx.point("fetch")["drill"] is None, "the drill outlived --for")
    eq(t.run("fetch", net, 20)[0], {"OK": 20}, "after the expiry")
    eq(counts(ctx), (m, s, p), "counts after the expiry")
    eq(root_qdisc(net.dev), "qdisc noqueue 0:", "the veth's qdisc")


@test
def dry_marked_socket_after_the_drill(ctx):
    """A socket marked by a drill is delayed while the drill runs, even
    for exchanges made outside the point (the mark is the socket's), and
    never after: its packets are stamped during the drill, none after
    --stop, none under a new drill of the same point (not its mark)."""
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev])
    t = ctx.target()
    drill(ctx, "hold", "--delay-ms", "200", "--for", "300")
    eq(t.run("hold", net, 1)[0], {"OK": 1}, "hold")
    eq(counts(ctx, "hold")[:2], (1, 0), "marked, spared")
    p0 = counts(ctx, "hold")[2]
    eq(t.run("use", net, 5)[0], {"OK": 5}, "use during the drill")
    # The ACK of the last answer may leave after the call returned
    # (delayed ACK, up to 40 ms): stamped too, while the drill runs.
    time.sleep(0.5)
    p1 = counts(ctx, "hold")[2]
    check(p1 >= p0 + 5, "5 requests stamped %d packets" % (p1 - p0))
    drill(ctx, "hold", "--stop")
    wait_unhooked("after --stop")
    eq(t.run("use", net, 5)[0], {"OK": 5}, "use after --stop")
    eq(counts(ctx, "hold")[2], p1, "packets after --stop")
    drill(ctx, "hold", "--delay-ms", "200", "--for", "300")
    eq(t.run("use", net, 5)[0], {"OK": 5}, "use under a new drill")
    eq(counts(ctx, "hold")[2], p1, "packets of the old mark under a new drill")
    drill(ctx, "hold", "--stop")


@test
def dry_gone_with_the_loader(ctx):
    """SIGKILL in the middle of a 300-s drill: the links go with the
    loader's file descriptors, nothing of ours stays attached."""
    net = ctx.net()
    a = ctx.attach(["--drill-dev", net.dev])
    t = ctx.target()
    drill(ctx, "fetch", "--delay-ms", "200", "--for", "300")
    eq(t.run("fetch", net, 5)[0], {"OK": 5}, "drilled")
    eq(counts(ctx)[0], 5, "marked")
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)
    ctx.loader = None
    wait_unhooked("after SIGKILL")
    eq(t.run("fetch", net, 5)[0], {"OK": 5}, "after the loader died")


def timed(ctx):
    """A 200-ms drill at ratio 50 over 200 calls: the marked calls take
    200-260 ms longer than the median of the others, the others and the
    calls outside the point are not late; at its expiry fq comes off the
    veth and nothing is late; a loader killed in a drill leaves fq 5d5:,
    delays nothing more, and the next loader takes the fq down."""
    net = ctx.net()
    a = ctx.attach(["--drill-dev", net.dev], dry=False)
    t = ctx.target()
    base = statistics.median(t.run("fetch", net, 20)[1])
    r = drill(ctx, "fetch", "--delay-ms", "200", "--ratio", "50", "--for", "300")
    eq(r.out, "delay drill on 'fetch': tc egress on %s (fq set by the loader)\n"
       % net.dev, "drill's line")
    check(root_qdisc(net.dev).startswith("qdisc fq 5d5:"),
          "the veth's qdisc: %r" % root_qdisc(net.dev))
    calls = calls_one_by_one(ctx, t, net, 200)
    late = [ns for ns, m in calls if m]
    others = [ns for ns, m in calls if not m]
    check(others, "no call was spared")
    med = statistics.median(others)
    print("  200 calls at ratio 50: %d marked, %.1f-%.1f ms over the others' "
          "median %.2f ms (undrilled median %.2f ms)"
          % (len(late), (min(late) - med) / MS if late else 0,
             (max(late) - med) / MS if late else 0, med / MS, base / MS))
    check(binomial_ok(len(late), 200, 0.5), "marked %d of 200" % len(late))
    for ns in late:
        check(200 * MS <= ns - med <= 260 * MS,
              "a marked call took %.1f ms over the others' median" % ((ns - med) / MS))
    for ns in others:
        check(ns < med + 100 * MS, "a spared call took %.1f ms" % (ns / MS))
    res, ns = t.run("plain", net, 50)
    eq(res, {"OK": 50}, "outside the point")
    check(max(ns) < med + 100 * MS, "a call outside the point took %.1f ms"
          % (max(ns) / MS))
    drill(ctx, "fetch", "--stop")
    wait_unhooked("after --stop")
    t0 = time.monotonic()
    drill(ctx, "fetch", "--delay-ms", "200", "--for", "3")
    res, ns = t.run("fetch", net, 5)
    check(min(ns) >= 200 * MS, "a ratio-100 drill: %r ms" % [n / MS for n in ns])
    time.sleep(max(0, t0 + 3.5 - time.monotonic()))
    wait_unhooked("after the expiry")
    eq(root_qdisc(net.dev), "qdisc noqueue 0:", "the veth's qdisc after the drill")
    res, ns = t.run("fetch", net, 20)
    check(max(ns) < med + 100 * MS, "after the expiry: %.1f ms" % (max(ns) / MS))
    drill(ctx, "fetch", "--delay-ms", "200", "--for", "300")
    res, ns = t.run("fetch", net, 3)
    check(min(ns) >= 200 * MS, "drilled again: %r ms" % [n / MS for n in ns])
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)
    ctx.loader = None
    wait_unhooked("after SIGKILL")
    res, ns = t.run("fetch", net, 20)
    check(max(ns) < med + 100 * MS, "after SIGKILL: %.1f ms" % (max(ns) / MS))
    check(root_qdisc(net.dev).startswith("qdisc fq 5d5:"),
          "a killed loader's fq: %r" % root_qdisc(net.dev))
    b = ctx.attach(["--drill-dev", net.dev], dry=False)
    check("sds-bpf: delay drills: removed the fq a dead loader left on %s\n"
          % net.dev in b.stderr(), "the next loader's stderr: %r" % b.stderr())
    eq(root_qdisc(net.dev), "qdisc noqueue 0:", "the veth's qdisc after the next start")


if fq_loads()[0]:
    test(timed)
else:
    skip("timed", fq_loads()[1])


@test
def drill_net_marks_without_failfast(ctx):
    """:drill=net alone (no failfast=): the point's calls keep the frame a
    connect finds, so a ratio-100 delay drill marks each of its 30
    sockets and stamps their packets, and none of the calls outside it;
    the point's connects are never refused (it fails nothing)."""
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev],
               specs=["fetch=fetch:err=neg:drill=net", "other=fetch_other:err=neg"])
    t = ctx.target()
    r = drill(ctx, "fetch", "--delay-ms", "50", "--for", "300")
    eq(r.out, "delay drill on 'fetch': tc egress on %s (dry run: no qdisc)\n"
       % net.dev, "drill's line")
    eq(t.run("fetch", net, 30)[0], {"OK": 30}, "30 drilled calls")
    m, s, p = counts(ctx)
    eq((m, s), (30, 0), "marked, spared at ratio 100")
    check(p >= 30, "%d packets stamped for 30 marked sockets" % p)
    eq(t.run("other", net, 20)[0], {"OK": 20}, "in the point without drill=net")
    eq(t.run("plain", net, 20)[0], {"OK": 20}, "outside the points")
    eq(counts(ctx), (m, s, p), "counts after calls outside the point")
    eq(ctx.point("fetch")["total"]["visits"], 30, "fetch's visits")
    r = ctx.drill("other", "--delay-ms", "50", "--for", "30")
    eq((r.rc, r.err.strip()),
       (1, "sds-bpf: %s: 'other' is a function point whose traffic the loader "
           "cannot mark: a delay drill delays the sockets a thread connects "
           "inside the function, which needs :drill=net or failfast=connect "
           "on the point (docs/DELAY.md)" % APP), "a drill on other")
    drill(ctx, "fetch", "--stop")
    wait_unhooked("after --stop")
