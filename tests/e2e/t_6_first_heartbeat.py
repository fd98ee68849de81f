# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The first heartbeat goes at the end of the loader's first period + its
offset, whatever the phase of the period the loader is attached in:
0.05 s, 5 s, 9.95 s and 9.99 s into it.  The first period is the one
counting began in (stats --json: admin.first_period), after seconds of
start-up: spawned late in a period, mostly the next one.  Also stats --json's tick_count and folded_through,
and SDS_HB_OFFSET_MS.
"""

import time

from e2e_lib import (PERIOD, TOKEN, admin_of, attach_fails, offset_s,
                     period_of, sleep_until, test)
from sdstest import Fail, check, eq, log, wait_ticks, wait_until
from fake_admin import FakeAdmin, NOTHING_NEW

TICK = 0.1          # attach's default --tick-ms
OFFSET_ENV = "SDS_HB_OFFSET_MS"


class ClockAdmin(FakeAdmin):
    """A fake sds-admin that keeps every post's arrival (wall clock) and
    period."""

    def __init__(self, ctx):
        self.posts = []         # (arrival, period_start), first first
        # Only this suite's loaders (e2e_lib.TOKEN): another's, posting
        # to a port it had before, is refused.
        super().__init__(self._answer, token=TOKEN)
        ctx.servers.append(self.srv)

    def _answer(self, doc):
        self.posts.append((time.time(), doc["period_start"]))
        return NOTHING_NEW

    def first(self):
        with self.lock:
            return self.posts[0] if self.posts else None


def spawn_at(ctx, url, phase):
    """A loader spawned @phase s into a period (the next such time at
    least 0.5 s away); again in a later period if this process was
    scheduled over 40 ms late for it, three tries."""
    ctx.target_file()               # copied before, not inside the phase
    for _ in range(3):
        now = time.time()
        t = period_of(now) + phase
        while t - now < 0.5:
            t += PERIOD
        sleep_until(t - 0.02)
        while time.time() < t:
            pass
        l = ctx.attach(url)
        if l.spawned - t <= 0.04:
            return l, period_of(t)
        log("spawned %.3f s after %.3f, %.2f s into period %d: again"
            % (l.spawned - t, t, phase, period_of(t)))
        l.stop()
    raise Fail("could not spawn a loader %.2f s into a period"
                         % phase)


def first_heartbeat(ctx, phase):
    fake = ClockAdmin(ctx)
    l, p = spawn_at(ctx, fake.url, phase)
    off = offset_s(l)
    fp = l.first_period()
    if phase < 1.0:
        # Start-up (1.5-5 s to counting here) does not reach the boundary.
        eq(fp, p, "admin.first_period of a loader spawned %.2f s into "
           "period %d" % (phase, p))
    due = fp + PERIOD + off
    got = wait_until(fake.first, due + TICK + 1.0 + 2.0,
                     lambda _: "no heartbeat by %.1f s after its due time "
                     "%.3f (period %d + %d s + offset %.3f s): loader %r"
                     % (TICK + 3.0, due, fp, PERIOD, off, admin_of(l.stats())),
                     0.01)
    arrival, period = got
    log("spawned %.3f s into period %d, ready %.3f s later; first period %d; "
        "first heartbeat %.3f s after period end + offset"
        % (l.spawned - p, p, l.ready - l.spawned, fp, arrival - due))
    eq(period, fp, "the first period posted (the loader's first)")
    # Never before its time (the same clock here); within a tick + 1 s.
    check(due - 0.001 <= arrival <= due + TICK + 1.0,
          "first heartbeat (period %d) at %.3f, %.3f s from its due time "
          "%.3f: want 0..%.1f s; loader %r"
          % (fp, arrival, arrival - due, due, TICK + 1.0, admin_of(l.stats())))
    a = wait_until(lambda: (lambda a: a if a["sent"] >= 1 else None)(
        admin_of(l.stats())), time.time() + 5,
        lambda _: "the loader never counted its post sent: %r"
        % admin_of(l.stats()))
    eq(a["last_sent"]["period"], fp, "admin.last_sent.period")
    at = a["last_sent"]["at_ms"] / 1000.0
    check(arrival - 0.001 <= at <= arrival + 1.0,
          "admin.last_sent.at_ms %.3f vs its arrival at the admin %.3f"
          % (at, arrival))
    l.stop()


@test
def first_heartbeat_0_05_s_into_period(ctx):
    first_heartbeat(ctx, 0.05)


@test
def first_heartbeat_5_s_into_period(ctx):
    first_heartbeat(ctx, 5.0)


@test
def first_heartbeat_9_95_s_into_period(ctx):
    """The start-up crosses the boundary: the first period is the one
    counting began in, either."""
    first_heartbeat(ctx, 9.95)


@test
def first_heartbeat_9_99_s_into_period(ctx):
    """Spawned 10 ms before the boundary (issue 39's case): counting
    begins after it, and the first period is the next one, sent a period
    later than period_of(spawn) would say."""
    first_heartbeat(ctx, 9.99)


@test
def tick_count_and_folded_through(ctx):
    """tick_count counts ticks (500 ms apart here), not the loop's passes
    or the stats requests; folded_through is the newest second folded,
    two behind the tick's."""
    fake = ClockAdmin(ctx)
    l = ctx.attach(fake.url, extra=["--tick-ms", "500"])
    t0 = time.time()
    n0 = l.stats()["tick_count"]
    st = wait_ticks(l.stats, 3)
    t1 = time.time()
    # Three ticks after n0's were read: three expiries of a 500-ms timer.
    check(t1 - t0 >= 1.0, "3 ticks of 500 ms within %.3f s" % (t1 - t0))
    check(st["tick_count"] - n0 <= (t1 - t0) / 0.5 + 1,
          "tick_count %d -> %d in %.3f s at 500 ms"
          % (n0, st["tick_count"], t1 - t0))
    # 30 stats requests in a row add no tick.
    t0 = time.time()
    n0 = l.stats()["tick_count"]
    for _ in range(30):
        n1 = l.stats()["tick_count"]
    t1 = time.time()
    check(n0 <= n1 <= n0 + (t1 - t0) / 0.5 + 1,
          "tick_count %d -> %d over 30 stats requests in %.3f s"
          % (n0, n1, t1 - t0))
    # The tick that wait_ticks saw happened between ta and tb; it folded
    # up to its second - 2 (one less if it fell within the alignment's
    # nanoseconds of a boundary).
    for _ in range(3):
        ta = time.time()
        st = wait_ticks(l.stats, 1)
        tb = time.time()
        f = st["folded_through"]
        check(int(ta) - 3 <= f <= int(tb) - 2,
              "folded_through %r, a tick between %.3f and %.3f"
              % (f, ta, tb))
    l.stop()


@test
def hb_offset_env(ctx):
    """SDS_HB_OFFSET_MS (test-only) is the offset, 2000..9000 ms; any
    other value is refused in one line; unset, the host name's hash."""
    fake = ClockAdmin(ctx)
    args = ["--admin", fake.url, "--token-file", ctx.token_file,
            "--state-dir", ctx.state_dir, ctx.target_file(), "w=work"]
    for v in ("1999", "9001", "0", "-2000", "abc", "", "2000x", " 2000",
              "99999999999999999999"):
        attach_fails(ctx, args, [OFFSET_ENV, "2000..9000"],
                     env=dict(ctx.env, **{OFFSET_ENV: v}))
    for v in (2000, 9000, 4321):
        l = ctx.attach(fake.url, env=dict(ctx.env, **{OFFSET_ENV: str(v)}))
        eq(admin_of(l.stats())["offset_ms"], v, "offset_ms under %s=%d"
           % (OFFSET_ENV, v))
        l.stop()
    env = dict(ctx.env)
    env.pop(OFFSET_ENV, None)
    l = ctx.attach(fake.url, env=env)
    a = admin_of(l.stats())
    h = 2166136261
    for c in a["host"].encode():
        h = ((h ^ c) * 16777619) & 0xffffffff
    eq(a["offset_ms"], 2000 + h % 7000, "offset_ms of host %r (FNV-1a of "
       "its name, %s unset)" % (a["host"], OFFSET_ENV))
    l.stop()

