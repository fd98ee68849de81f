# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A ramp to the breaking point (issue 37), nothing faked but the source:
a plan made in a real sds-admin with "ramp": {from 5, to 10, step 1,
every 10 s} and a p99 condition on the shadow app's own statistics; a
real `sds-copy serve --admin` copies 40 records a second onto capsvc, a
shadow of a fixed capacity (260 requests a second: 6.5 x the source) whose
loader reports its guard point's latency to the admin.  The admin steps 5,
6, 7 and stops at 7, the first step above the capacity, and records the
knee: the shadow's p99 at 6 under the bound, at 7 above it."""

import os
import subprocess
import threading
import time

import sdstest
import sender
from cap_lib import check, copy_lib, eq, test

CAPSVC = os.path.join(sdstest.BUILD, "test", "targets", "capsvc")
SRC, SHADOW = "rampsrc", "rampshadow"
PLANS = "/api/v1/groups/default/apps/%s/copy-plans" % SRC
RATE = 40                       # records a second from the source
CAPACITY = 260                  # the shadow's: 6.5 x RATE
BOUND_MS = 200                  # the p99 condition


def start_capsvc(ctx):
    d = os.path.join(ctx.tmp, "capsvc")
    os.makedirs(d, exist_ok=True)
    path = sdstest.stage(CAPSVC, d)
    sdstest.AttachProcess(ctx, ["--app", SHADOW, "--admin", ctx.adm.url, "--token-file",
                                ctx.adm.token_file, path], SHADOW)
    p = subprocess.Popen([path, "default", SHADOW, str(CAPACITY), "50"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, env=ctx.env, cwd=ctx.tmp,
                         start_new_session=True)
    ctx.others.append(p)
    line = p.stdout.readline().split()
    check(line[:1] == [b"port"], "capsvc said %r" % line)
    return int(line[1])


def feed(addr, stop):
    """RATE records a second on one stream, on an absolute schedule (a late
    wakeup catches up, never drifts), until @stop is set."""
    s = sender.connect(addr)
    t0, k = time.monotonic(), 0
    try:
        while not stop.is_set():
            k += 1
            s.sendall(sender.record(SRC, "req", b"r %d\n" % k))
            delay = t0 + k / RATE - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    finally:
        s.close()


@test
def test_ramp_to_the_knee(ctx):
    adm = ctx.adm = copy_lib.Admin(ctx)
    adm.call("POST", "/api/v1/groups", {"name": "default"}, want=201)
    for a in (SRC, SHADOW):
        adm.call("POST", "/api/v1/groups/default/apps", {"name": a}, want=201)
    port = start_capsvc(ctx)
    p = adm.call("POST", PLANS, {
        "name": "ramp", "points": ["req"], "framing": "raw",
        "shadows": ["127.0.0.1:%d" % port],
        "ramp": {"from": 5, "to": 10, "step": 1, "every_s": 10},
        "stop_when": [{"field": "p99_ms", "above": BOUND_MS}], "shadow_app": SHADOW,
        "duration_s": 900, "by": "t_capramp"}, want=201)
    eq((p["amplification"], p["ramp_result"]), (5, None), "the plan starts at ramp.from")
    srv = copy_lib.Server(ctx, None, name="ramp",
                          admin=["--admin", adm.url, "--token-file", adm.token_file])
    sdstest.wait_until(lambda: srv.stats()["plans"], time.time() + 20,
                       "the plan never reached sds-copy")
    stop = threading.Event()
    t = threading.Thread(target=feed, args=(srv.addr, stop), daemon=True)
    t.start()
    try:
        def ended():
            q = adm.call("GET", PLANS + "/%d" % p["id"])
            return q if q["state"] == "stopped" else None
        q = sdstest.wait_until(ended, time.time() + 200, lambda _: "the ramp never stopped: %r"
                               % adm.call("GET", PLANS + "/%d" % p["id"]), 1.0)
    finally:
        stop.set()
        t.join(10)
    r = q["ramp_result"]
    eq((r["state"], q["amplification"], q["stopped_by"][:14]), ("knee", 7, "sds-admin ramp"),
       "stopped at its knee, x7, by the admin")
    eq([s["amplification"] for s in r["steps"]], [5, 6, 7], "the steps judged")
    k = r["knee"]
    eq(k["amplification"], 7, "the knee's amplification")
    check(k["p99_ms_before"] < BOUND_MS < k["p99_ms_at"],
          "p99 before the knee %r under %d ms, at it %r above" %
          (k["p99_ms_before"], BOUND_MS, k["p99_ms_at"]))
    eq((k["error_rate_before"], k["error_rate_at"]), (0.0, 0.0), "the shadow's error rate")
    check(r["reason"].startswith("p99_ms ") and r["reason"].endswith(" above %d at x7" % BOUND_MS),
          "reason %r" % r["reason"])
    for s in r["steps"]:
        check(s["calls"] >= 10, "a step judged on too few calls: %r" % s)
    # sds-copy drops the plan at its next heartbeat.
    sdstest.wait_until(lambda: not srv.stats()["plans"], time.time() + 20,
                       "the stopped plan stays at sds-copy")
    srv.stop()
    adm.stop()
