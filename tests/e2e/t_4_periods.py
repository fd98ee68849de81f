# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Periods and replies: calls and their histograms land in the natural
period they were made in, a reply the loader cannot use is counted and
not sent again, a hold survives an unrelated strategy change, and an
admin URL without a host is refused.
"""

import json
import os
import shutil
import time

from e2e_lib import (A, APP, PERIOD, TARGET, W_LIMIT, admin_of, admin_totals,
                     attach_fails, make_app, need_point, offset_s, per_period,
                     period_of, sleep_until, test)
from sdstest import check, eq, wait_until
from fake_admin import FakeAdmin, NOTHING_NEW


class BadAdmin(FakeAdmin):
    """A fake sds-admin (real HTTP on a loopback port) whose heartbeat
    replies are HTTP 200 with a body the loader cannot use: the first
    period it is sent gets @bodies[0], the second @bodies[1], and so on;
    periods past the list get a good reply.  It counts the posts of each
    period (what a real admin would have stored each time)."""

    GOOD = json.dumps(NOTHING_NEW).encode()

    def __init__(self, ctx, bodies):
        self.bodies = bodies
        self.posts = {}         # period_start -> posts
        self.order = []         # period_starts, first post first
        super().__init__(self._answer)
        ctx.servers.append(self.srv)

    def _answer(self, doc):
        p = doc["period_start"]
        if p not in self.posts:
            self.order.append(p)
            self.posts[p] = 0
        self.posts[p] += 1
        i = self.order.index(p)
        return self.bodies[i] if i < len(self.bodies) else self.GOOD

    def snapshot(self):
        with self.lock:
            return dict(self.posts), list(self.order)


def next_boundary(ctx):
    """An admin, a target and a loader heartbeating to it; the loader's
    host and heartbeat offset, and the next period boundary at least
    1.5 s away: (admin, target, loader, host, offset_s, boundary)."""
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url)
    host = admin_of(l.stats())["host"]
    off = offset_s(l)
    b = period_of(time.time()) + PERIOD
    if b - time.time() < 1.5:
        b += PERIOD
    return admin, t, l, host, off, b


@test
def period_boundary(ctx):
    """Calls are reported in the natural period they were made in, also
    in the last and the first second of a period: single calls every 50
    ms from 1 s before a period boundary to 1 s after it.  Which period a
    call belongs to is read from the program's own clock around the call
    (stamp), never from this script's: a call this script sends late on a
    loaded machine is still judged exactly.  A call whose own stamps
    straddle the boundary (microseconds) may go either way."""
    admin, t, l, host, off, b = next_boundary(ctx)
    made = {b - PERIOD: 0, b: 0}
    edge = {"last second": 0, "first second": 0}
    straddle = 0
    for k in range(40):
        sleep_until(b - 1.0 + 0.025 + 0.05 * k)
        t0, t1 = t.stamp()
        if period_of(t0) != period_of(t1):
            straddle += 1
            continue
        made[period_of(t0)] = made.get(period_of(t0), 0) + 1
        if b - 1.0 <= t0 < b:
            edge["last second"] += 1
        elif b <= t0 < b + 1.0:
            edge["first second"] += 1
    check(edge["last second"] >= 5 and edge["first second"] >= 5,
          "calls in the last and first second of the periods (by the "
          "program's clock; the rest were late): %r" % edge)
    wait_until(lambda: (admin.last_period(host) or 0) >= b,
               b + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin: %r" % (b, admin.hosts()))
    at, _ = admin_totals(admin, "w", b - 2 * PERIOD, b + PERIOD)
    got = {t0: c["visits"] for t0, c in per_period(at).items()}
    d = (time.time() - time.monotonic()) % 1.0
    what = ("visits per period at the admin (the fraction of a second by "
            "which CLOCK_REALTIME leads CLOCK_MONOTONIC here: %.3f)" % d)
    if not straddle:
        eq(got, made, what)
    else:
        eq(sum(got.values()), 40, what + ", in all")
        for p0, n in made.items():
            check(n <= got.get(p0, 0) <= n + straddle, "%s: %r, calls made "
                  "%r and %d on the boundary" % (what, got, made, straddle))
    eq(need_point(l.stats(), "w")["total"]["visits"], 40, "loader visits")
    l.stop()


@test
def period_boundary_hist(ctx):
    """A period's latency histogram covers the seconds its counts do
    (issue 11): 3 calls 0.5 s before a period boundary B, 5 calls 0.5 s
    after it.  The admin stores, for B - 10, 3 visits and a histogram of
    3 calls, and for B 5 and 5.  The loader takes the histograms at its
    first tick of a period, at most one tick (100 ms) plus the tick's
    lateness after the boundary: 0.5 s is far outside that."""
    admin, t, l, host, off, b = next_boundary(ctx)
    for at, n in ((b - 0.5, 3), (b + 0.5, 5)):
        sleep_until(at)
        t.cmd("work %d 0 0 0" % n)
        check(time.time() - at < 0.3, "%d calls at %+.1f s from the boundary "
              "took until %+.3f s" % (n, at - b, time.time() - b))
    wait_until(lambda: (admin.last_period(host) or 0) >= b,
               b + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin: %r" % (b, admin.hosts()))
    got = {}
    for p in (b - PERIOD, b):
        at, _ = admin_totals(admin, "w", p, p + PERIOD)
        got[p] = (at["total"]["visits"], sum(at["total"]["latency_hist"]))
    st = l.stats()
    eq(got, {b - PERIOD: (3, 3), b: (5, 5)},
       "(visits, summed latency_hist) of periods %d and %d at the admin "
       "(the loader's tick_late_ms %r)" % (b - PERIOD, b,
                                           st.get("tick_late_ms")))
    eq(need_point(st, "w")["latency_ns"]["count"], 8, "loader latency count")
    l.stop()


@test
def admin_reply_unusable(ctx):
    """HTTP 200 means the admin stored the period (admin/API.md), so a
    reply the loader cannot use (not JSON; JSON whose strategies are
    malformed) is counted in admin_errors, logged once a minute, and the
    period is not sent again; the next periods go as usual."""
    garbage = b"<html>502 oops</html>"
    bad_strategies = json.dumps({"version": 3, "changed": True,
                                 "strategies": {"version": 3, "points": 7},
                                 "drills": []}).encode()
    fake = BadAdmin(ctx, [garbage, bad_strategies])
    t = ctx.target()
    l = ctx.attach(fake.url)
    off = offset_s(l)
    t.cmd("work 10 0 0 0")

    def three_periods():
        posts, order = fake.snapshot()
        return order if len(order) >= 3 else None
    order = wait_until(three_periods,
                       l.first_period() + 3 * PERIOD + off + 4.0,
                       lambda _: "3 periods not posted: %r; loader %r"
                       % (fake.snapshot(), admin_of(l.stats())))
    # A resend would come 2 s after a failed post.
    time.sleep(3.0)

    def settled():
        # Every closed period posted, and the next boundary over 1 s away:
        # nothing pending whatever this host's offset (its name's hash).
        now = time.time()
        posts, order = fake.snapshot()
        if order[-1] >= period_of(now) - PERIOD and period_of(now) + PERIOD - now > 1.0:
            return posts, order
        return None
    posts, order = wait_until(settled, time.time() + 2 * PERIOD + 2,
                              lambda _: "posts never settled: %r" % (fake.snapshot(),))
    p0 = order[0]
    eq(order[:3], [p0, p0 + PERIOD, p0 + 2 * PERIOD], "periods posted, in order")
    eq(posts, {p: 1 for p in order}, "posts per period")
    a = admin_of(l.stats())
    eq((a["sent"], a["admin_errors"], a["failures"], a["pending"],
        a["dropped"], a["last_error"]), (len(order), 2, 0, 0, 0, ""),
       "admin.sent, admin_errors, failures, pending, dropped, last_error")
    lines = [x for x in l.stderr().splitlines() if "reply" in x]
    eq(len(lines), 1, "stderr lines about the replies (once a minute): %r"
       % l.stderr())
    for s in ("sds-bpf: ", fake.url, "period %d" % p0, "not resent"):
        check(s in lines[0], "stderr line does not say %r: %r" % (s, lines[0]))
    eq(l.stats().get("strategies_version"), -1,
       "strategies_version (none: the malformed strategies not taken)")
    l.stop()


@test
def hold_survives_unrelated_change(ctx):
    """docs/DESIGN.md §4: once tripped, a point stays downgraded for delay_ms.
    A new version that leaves w's strategy as it was must not end w's
    hold."""
    admin = ctx.admin()
    v = make_app(admin, {"w": {"visit_threshold": W_LIMIT, "delay_ms": 60000}})
    t = ctx.target()
    l = ctx.attach(admin.url)
    off = offset_s(l)
    wait_until(lambda: l.stats().get("strategies_version") == v,
               l.first_period() + PERIOD + off + 3.0,
               lambda _: "version %d not in force: %r" % (v, l.stats()))
    t.cmd("work %d 0 0 0" % (W_LIMIT + 1))
    tripped = time.time()
    wait_until(lambda: need_point(l.stats(), "w")["state"].get("downgraded"),
               tripped + 2, "w not downgraded after %d visits" % (W_LIMIT + 1))
    # Out of the 10-s window: only the hold keeps w downgraded now.
    sleep_until(tripped + 11)
    p = need_point(l.stats(), "w")
    eq((p["window"]["visits"], p["state"].get("downgraded")), (0, True),
       "w's window visits and state 11 s after the trip (the hold)")
    doc = admin.ok("PUT", A + "/schemes/default/strategies/other",
                   {"visit_threshold": 100})
    v2 = doc["version"]
    wait_until(lambda: l.stats().get("strategies_version") == v2,
               time.time() + PERIOD + off + 3.0,
               lambda _: "version %d not in force: %r" % (v2, l.stats()))
    p = need_point(l.stats(), "w")
    check(time.time() - tripped < 55, "too late to judge the hold")
    eq(p["state"].get("downgraded"), True,
       "w's state %.0f s into its 60-s hold, after version %d changed only "
       "point 'other' (state %r)" % (time.time() - tripped, v2, p["state"]))
    l.stop()


@test
def bad_admin_url_without_host(ctx):
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    for bad in ("http://", "http://:8887", "https://"):
        attach_fails(ctx, ["--admin", bad, "--token-file", ctx.token_file,
                           "--state-dir", ctx.state_dir, path, "w=work"],
                     ["--admin"])
