# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
When an admin is down: periods kept and sent when it is back, a loader
restarted meanwhile, failover to the next URL (one that refuses, one
that never answers), and attach's bad --admin input.
"""

import json
import os
import shutil
import socket
import time

from e2e_lib import (APP, COUNTS, GROUP, KILL, MS, PERIOD, TARGET, TMO,
                     W_LIMIT, admin_of, admin_totals, assert_kill_switch,
                     assert_w_limit, attach_fails, make_app, need_point,
                     offset_s, per_period, period_of, sent_upto, sleep_until,
                     strategy_doc, test, totals, wait_safe, wait_strategy)
from sdstest import check, eq, free_port, log, wait_until


@test
def admin_down_two_periods(ctx):
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url, point="w=work:err=neg:timeout_ms=%d" % TMO)
    first = l.first_period()
    off = offset_s(l)
    host = admin_of(l.stats())["host"]
    batches = {}

    def drive(n, e, ts, after=0):
        p = wait_safe()
        while p <= after:
            sleep_until(p + PERIOD)
            p = wait_safe()
        t.cmd("work %d %d %d %d" % (n, e, ts, MS if ts else 0))
        check(period_of(time.time()) == p, "batch did not fit in period %d" % p)
        check(p not in batches, "two batches in period %d" % p)
        batches[p] = {"visits": n, "exceptions": e, "timeouts": ts,
                      "downgrades": 0}
        return p

    pa = drive(100, 10, 0)
    a0 = wait_until(lambda: sent_upto(admin, l, host, pa),
                    pa + PERIOD + off + 4.0,
                    lambda _: "period %d not at the admin: hosts %r, loader %r"
                    % (pa, admin.hosts(), admin_of(l.stats())))
    eq((a0["pending"], a0["failures"]), (0, 0), "admin.pending, failures "
       "before the admin stops")
    admin.stop()
    down_at = time.time()
    pb = drive(200, 20, 2)
    pc = drive(300, 30, 0, after=pb)
    check(pc == pb + PERIOD, "batches B and C in periods %d and %d, want "
          "consecutive" % (pb, pc))
    # Until C's send time has passed: both B and C failed to go.
    sleep_until(pc + PERIOD + off + 2.5)
    down_for = time.time() - down_at
    check(down_for >= 2 * PERIOD, "admin down only %.1f s" % down_for)
    a1 = admin_of(l.stats())
    log("while down: %r" % a1)
    check(a1["failures"] > 0, "admin.failures %r while the admin was down"
          % a1["failures"])
    check(a1["pending"] >= 2, "admin.pending %r, want >= 2 (periods %d and "
          "%d at least)" % (a1["pending"], pb, pc))
    check(a1["last_error"] != "", "admin.last_error empty while down")
    # The queue: every period closed since the last one stored, oldest
    # first, B and C among them, each to go at its end + the offset.
    q = [e["period"] for e in a1["queue"]]
    eq(q, list(range(a1["last_sent"]["period"] + PERIOD, a1["open_period"],
                     PERIOD)), "admin.queue's periods while down")
    check(pb in q and pc in q, "admin.queue %r without B (%d) and C (%d)"
          % (q, pb, pc))
    eq(len(q), a1["pending"], "admin.queue's length vs admin.pending")
    eq([e["send_at_ms"] for e in a1["queue"]],
       [(p + PERIOD) * 1000 + a1["offset_ms"] for p in q],
       "admin.queue's send times")
    eq(a1["sent"], a0["sent"], "admin.sent while the admin was down")
    eq(a1["dropped"], 0, "admin.dropped")
    admin.start(same_port=True)
    up_at = time.time()
    a2 = wait_until(lambda: (lambda a: a if a["pending"] == 0 else None)(
                        admin_of(l.stats())),
                    up_at + 8.0,
                    lambda _: "backlog not sent 8 s after the admin came "
                    "back: %r" % admin_of(l.stats()))
    log("backlog sent %.1f s after the restart: %r" % (time.time() - up_at, a2))
    eq(a2["dropped"], 0, "admin.dropped after the backlog")
    check(a2["sent"] >= a1["sent"] + a1["pending"],
          "admin.sent %d, want >= %d + %d" % (a2["sent"], a1["sent"],
                                              a1["pending"]))
    check((admin.last_period(host) or 0) >= pc, "admin's last_period %r < %d"
          % (admin.last_period(host), pc))
    lp = need_point(l.stats(), "w")
    want = {k: sum(b[k] for b in batches.values()) for k in COUNTS}
    eq(totals(lp), want, "loader totals")
    at, _ = admin_totals(admin, "w", first - PERIOD, pc + PERIOD)
    eq({k: at["total"][k] for k in COUNTS}, totals(lp),
       "admin's sums vs the loader's totals")
    eq(per_period(at), batches, "admin's periods with counts (no period lost)")
    l.stop()
    admin.stop()


@test
def loader_restart_admin_down(ctx):
    admin = ctx.admin()
    v = make_app(admin, {"order": KILL, "w": {"visit_threshold": W_LIMIT}})
    want = strategy_doc(admin)
    t = ctx.target()
    # The state dir from $SDS_STATE_DIR (docs/DESIGN.md §5), no --state-dir.
    l1 = ctx.attach(admin.url, state_dir=False)
    off = offset_s(l1)
    wait_strategy(l1, v, l1.first_period() + PERIOD + off + 3.0)
    cache = os.path.join(ctx.state_dir, "%s.%s.strategies.json" % (GROUP, APP))
    wait_until(lambda: os.path.exists(cache), time.time() + 2,
               "no cache %s" % cache)
    with open(cache) as f:
        eq(json.load(f), want, "cached strategies")
    l1.stop()
    admin.stop()
    l2 = ctx.attach(admin.url, state_dir=False)
    st = l2.stats()
    a = admin_of(st)
    eq(a["sent"], 0, "admin.sent of the restarted loader")
    assert_kill_switch(st, v, "restarted loader, admin down")
    assert_w_limit(ctx, l2, t, "cached strategy")
    with open(cache) as f:
        eq(json.load(f), want, "cache after the restart")
    eq(admin_of(l2.stats())["sent"], 0, "admin.sent (the admin is down)")
    l2.stop()


@test
def failover(ctx):
    admin = ctx.admin()
    dead = "http://127.0.0.1:%d" % free_port()
    t = ctx.target()
    l = ctx.attach(dead + "," + admin.url)
    st = l.stats()
    eq(admin_of(st)["urls"], [dead, admin.url], "admin.urls")
    host = admin_of(st)["host"]
    off = offset_s(l)
    first = l.first_period()
    t.cmd("work 10 3 0 0")
    # The period the calls went to: the first, or a later one when the
    # attach ended past its end (its start-up takes seconds under load).
    p = max(first, period_of(time.time()))
    a = wait_until(lambda: sent_upto(admin, l, host, p),
                   p + PERIOD + off + 4.0,
                   lambda _: "no heartbeat reached the admin (second URL): "
                   "hosts %r, loader %r" % (admin.hosts(), admin_of(l.stats())))
    eq(admin.last_period(host), p, "the host's last_period")
    check(a["sent"] > 0, "admin.sent %r" % a["sent"])
    eq((a["pending"], a["dropped"], a["last_error"]), (0, 0, ""),
       "admin.pending, dropped, last_error")
    at, _ = admin_totals(admin, "w", first - PERIOD, p + PERIOD)
    eq({k: at["total"][k] for k in COUNTS}, totals(need_point(l.stats(), "w")),
       "admin's sums vs the loader's totals")
    l.stop()


@test
def bad_input(ctx):
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    url = "http://127.0.0.1:%d" % free_port()
    missing = os.path.join(ctx.tmp, "no-such-token")
    empty = os.path.join(ctx.tmp, "empty-token")
    open(empty, "w").close()
    sd = ["--state-dir", ctx.state_dir]
    pt = [path, "w=work"]
    attach_fails(ctx, ["--admin", url] + sd + pt, ["--admin", "--token-file"])
    attach_fails(ctx, ["--admin", url, "--token-file", missing] + sd + pt,
                 ["--token-file", missing])
    attach_fails(ctx, ["--admin", url, "--token-file", empty] + sd + pt,
                 ["--token-file", empty])
    attach_fails(ctx, ["--admin", url, "--token-file", ctx.tmp] + sd + pt,
                 ["--token-file", ctx.tmp])
    for bad in ("ftp://127.0.0.1:1", "127.0.0.1:8887", url + ",tcp://x:1",
                "", ","):
        attach_fails(ctx, ["--admin", bad, "--token-file", ctx.token_file]
                     + sd + pt, ["--admin"])
    attach_fails(ctx, ["--admin", ",".join([url] * 9), "--token-file",
                       ctx.token_file] + sd + pt, ["--admin"])
    attach_fails(ctx, ["--token-file", ctx.token_file] + sd + pt,
                 ["--token-file"])


@test
def failover_hung_first(ctx):
    """The first admin accepts connections and never answers: each post
    to it times out, the second one gets every period."""
    admin = ctx.admin()
    hung = socket.socket()
    ctx.socks.append(hung)
    hung.bind(("127.0.0.1", 0))
    hung.listen(64)
    hung_url = "http://127.0.0.1:%d" % hung.getsockname()[1]
    t = ctx.target()
    l = ctx.attach(hung_url + "," + admin.url)
    host = admin_of(l.stats())["host"]
    off = offset_s(l)
    first = l.first_period()
    # The calls well inside one period (attach may end late in its first).
    p = wait_safe()
    t.cmd("work 10 3 0 0")
    n = (p - first) // PERIOD + 1      # periods the loader sends up to p
    # A post to the hung URL takes its timeout (a few seconds).  With
    # this host's offset past 7 s the next period is queued before
    # that post ends, so "nothing pending" is not the sign here: the
    # loader's count of periods sent is.
    def sent_p():
        if (admin.last_period(host) or 0) < p:
            return None
        a = admin_of(l.stats())
        return a if a["sent"] >= n else None

    a = wait_until(sent_p, p + PERIOD + off + 8.0,
                   lambda _: "no heartbeat reached the second admin: hosts "
                   "%r, loader %r" % (admin.hosts(), admin_of(l.stats())))
    eq(admin.last_period(host), p, "the host's last_period")
    eq((a["sent"], a["dropped"]), (n, 0), "admin.sent, dropped")
    # The policy may or may not have tried the hung one first: every post
    # to it failed by timing out, and the second stored every period.
    hung_a, good_a = a["admins"]
    eq((hung_a["stored"], hung_a["failures"], hung_a["timed_out"]),
       (0, hung_a["posts"], hung_a["posts"] > 0), "the hung admin: stored, failures, timed out")
    eq((good_a["posts"], good_a["stored"], good_a["failures"]), (n, n, 0),
       "the second admin: posts, stored, failures")
    at, _ = admin_totals(admin, "w", p, p + PERIOD)
    eq({k: at["total"][k] for k in COUNTS},
       {"visits": 10, "exceptions": 3, "timeouts": 0, "downgrades": 0},
       "admin's sums")
    l.stop()
