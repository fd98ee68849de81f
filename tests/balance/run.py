#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of balancing (issue 13; docs/BALANCE.md): programs
linked with libsds balance the calls of dependency "pay" over providers
pay@p0..p2 (tests/targets/lbtarget.c) under a real `sds-bpf attach`,
whose tick publishes each provider's in-flight calls and recent mean
latency (loader/publish/lbpub.c) from the kernel's counts:

  * host-wide least active: process A holds K calls in flight on p0;
    process B, another process of the app, never picks p0 once a tick
    has published that -- and picks it again once A lets go;
  * a provider point downgraded by a strategy ("pay@p1": the kill
    switch) is never picked, by any policy; all of them: every pick
    says so;
  * shortest response: of three providers in a closed loop, the one made
    10x slower gets under 10% of the calls once two ticks have passed,
    and its share again once it is fast and its old latency is
    forgotten.

Run as root from anywhere:

    python3 tests/balance/run.py [-v] [NAME-SUBSTRING...]

Every test has its own temp dir, SDS_RUN_DIR and SDS_STATE_DIR and ends
every process it started, pass or fail.  Times get margins (the loader
ticks every 100 ms); counts that the definition makes exact are exact.
The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, Fail, check, get_point, log  # noqa: E402
from guarded import Target, kv  # noqa: E402

LBTARGET = os.path.join(BUILD, "test", "targets", "lbtarget")
APP = "lb"
TICK = 0.100                  # the loader's default tick
SLOW_CALLS = 0.150            # calls at a new latency complete, are counted
TICK_WINDOW = 10              # s of ticks stats' tick_late_ms reports
TEST_TIMEOUT = 120


class Loader(sdstest.AttachProcess):
    """A running `sds-bpf attach`."""


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-lb-")
        self.path = sdstest.stage(LBTARGET, self.tmp)

    def attach(self, strategies=None):
        args = ["--app", APP]
        if strategies:
            path = os.path.join(self.tmp, "strategies.json")
            with open(path, "w") as f:
                json.dump(strategies, f)
            args += ["--strategies", path]
        return Loader(self, args + [self.path], APP)

    def start(self, policy, n=3):
        t = Target(self, self.path)
        t.cmd("open default %s %s %d" % (APP, policy, n))
        return t

    def stats(self):
        r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"],
                              self.env, self.tmp, self.others)
        check(r.rc == 0, "sds-bpf stats: %r" % r)
        return json.loads(r.out)

    def point(self, name):
        return get_point(self.stats(), name)

    def ticks(self):
        """The loader's ticks so far, from its own report: stats'
        tick_count where the loader has it, else tick_late_ms.ticks (the
        ticks of the last 10 s, one noted per tick served), which counts
        every tick only while the loader is younger than that window."""
        st = self.stats()
        if "tick_count" in st:
            return st["tick_count"]
        n = st["tick_late_ms"]["ticks"]
        check(n < TICK_WINDOW / TICK - 5, "tick_late_ms.ticks %d: the "
              "loader is older than its %d-s window, which no longer counts "
              "every tick" % (n, TICK_WINDOW))
        return n

    def wait_published(self, what):
        """Two ticks of the loader's after now, so one whole tick has
        read the kernel's gauges and published them (lbpub.c), whatever
        the machine's load: a wait for the loader, not a fixed sleep."""
        t0 = self.ticks()
        sdstest.wait_until(lambda: self.ticks() >= t0 + 2,
                           time.time() + 10, "%s: the loader did not tick "
                           "twice in 10 s (ticks %d then %d)"
                           % (what, t0, self.ticks()), 0.02)


def counts(line):
    """'p0 1 p1 2 p2 3 none 0' -> [1, 2, 3], none."""
    d = kv(line)
    return [d["p%d" % i] for i in range(len(d) - 1)], d["none"]


SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
test = SUITE.test


@test
def host_wide_least_active(ctx):
    """Process A holds K calls in flight on p0; process B's least_active
    picks avoid p0 (exactly 0 of N) once a tick has published it."""
    K, N = 4, 3000
    ctx.attach()
    a = ctx.start("least_active")
    b = ctx.start("least_active")
    # Idle: B spreads over all three.
    got, none = counts(b.cmd("pick %d" % N)[0])
    check(none == 0 and all(g > 0 for g in got),
          "all idle: B's %d picks %r (none %d): want every provider picked"
          % (N, got, none))
    a.cmd("hold 0 %d" % K)
    # The kernel counts A's calls; the loader's next ticks publish them.
    deadline = time.monotonic() + 3.0
    while ctx.point("pay@p0").get("concurrency") != K:
        if time.monotonic() > deadline:
            raise Fail("pay@p0 in flight %r, want %d while A holds"
                       % (ctx.point("pay@p0").get("concurrency"), K))
        time.sleep(0.05)
    ctx.wait_published("A holds %d on p0" % K)
    got, none = counts(b.cmd("pick %d" % N)[0])
    check(got[0] == 0 and none == 0 and got[1] + got[2] == N,
          "A holds %d calls on p0: B's %d least_active picks %r (none %d): "
          "want exactly 0 of p0" % (K, N, got, none))
    check(got[1] > 0 and got[2] > 0, "p1 and p2 are tied at 0 in flight: "
          "both must be drawn, got %r" % got)
    a.cmd("release")
    ctx.wait_published("A let go")
    got, none = counts(b.cmd("pick %d" % N)[0])
    check(got[0] > N // 6, "A let go: B's picks %r, want p0 back in its "
          "share (> %d)" % (got, N // 6))


@test
def downgraded_provider_skipped(ctx):
    """A strategy on provider point pay@p1 (the kill switch) downgrades
    it from the start: no policy picks it, exactly; with every provider
    killed the pick says so and the program's fallback runs."""
    N = 3000
    ctx.attach({"version": 1, "points": {"pay@p1": {"visit_threshold": 0}}})
    for policy in ("random", "round_robin", "least_active",
                   "shortest_response", "consistent_hash"):
        t = ctx.start(policy)
        got, none = counts(t.cmd("pick %d keyed" % N)[0])
        check(got[1] == 0 and none == 0 and got[0] > 0 and got[2] > 0,
              "%s with pay@p1 killed: %d picks %r (none %d), want p1 "
              "exactly 0, p0 and p2 both picked" % (policy, N, got, none))
    # The strategy names the point, so its state shows before any call.
    p = ctx.point("pay@p1")
    check((p.get("state") or {}).get("downgraded") is True,
          "pay@p1's state %r: want downgraded" % p.get("state"))


@test
def all_providers_downgraded(ctx):
    """Every provider killed: every pick returns -1 (none), exactly."""
    N = 1000
    ctx.attach({"version": 1, "points": {
        "pay@p%d" % i: {"visit_threshold": 0} for i in range(3)}})
    t = ctx.start("least_active")
    got, none = counts(t.cmd("pick %d" % N)[0])
    check(got == [0, 0, 0] and none == N,
          "all three killed: %d picks %r, none %d: want none %d"
          % (N, got, none, N))


@test
def shortest_response_follows_latency(ctx):
    """A provider made 10x slower gets under 10% of a closed loop's calls
    from two ticks on; fast again, it gets its share back once its old
    latency is forgotten (10 s without a call: loader/publish/lbpub.h)."""
    T = 4
    ctx.attach()
    t = ctx.start("shortest_response")
    t.cmd("lat 1000 1000 1000")
    t.cmd("start %d" % T)
    time.sleep(1.5)
    t.cmd("counts")
    time.sleep(1.0)
    got, none = counts(t.cmd("counts")[0])
    total = sum(got)
    log("equal latencies: %r" % got)
    check(none == 0 and total > 0 and got[2] > total // 10,
          "all at 1 ms: calls %r (none %d), want p2 over 10%%" % (got, none))
    t.cmd("lat 1000 1000 10000")
    time.sleep(SLOW_CALLS)
    ctx.wait_published("p2 made 10x slower")
    t.cmd("counts")
    time.sleep(2.0)
    got, none = counts(t.cmd("counts")[0])
    total = sum(got)
    log("p2 10x slower: %r" % got)
    check(none == 0 and total > 0 and got[2] * 10 < total,
          "p2 made 10x slower (1 ms -> 10 ms): from two ticks on it got %d "
          "of %d calls %r, want under 10%%" % (got[2], total, got))
    lat = ctx.point("pay@p2").get("latency_ns", {})
    log("pay@p2 latency %r" % lat)
    # Back to 1 ms: avoided, p2 completes nothing, so its 10 ms stands
    # until forgotten; then it is tried and measured fast again.
    t.cmd("lat 1000 1000 1000")
    deadline = time.monotonic() + 16.0
    while True:
        t.cmd("counts")
        time.sleep(1.0)
        got, none = counts(t.cmd("counts")[0])
        total = sum(got)
        if total and got[2] * 10 >= total:
            log("p2 back: %r" % got)
            break
        if time.monotonic() > deadline:
            raise Fail("p2 fast again for 16 s: still under 10%% of the "
                       "calls: %r" % got)
    t.cmd("stop")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx, needs=(SDS, LBTARGET)))
