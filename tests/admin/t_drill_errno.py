# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
An error drill's "errno" (issue 15): accepted by name, stored, listed,
audited and carried in the heartbeat reply's drill; absent is null and
left out of the reply (the point's own errno); bad input is a 400 that
names it.  Imported by run.py (its Env: one sds-admin per test), so it
runs on SQLite and with SDS_TEST_STORE=pg.
"""

import time

from sdstest import check, eq
from admin_lib import APP, test

NAMES = ("ECONNREFUSED, ECONNRESET, ECONNABORTED, ETIMEDOUT, EHOSTUNREACH, "
         "ENETUNREACH, ENETDOWN, EHOSTDOWN, EPIPE, EIO, EACCES, EPERM, ENOENT, "
         "ENOSPC, EROFS, EMFILE, ENFILE, ENOMEM, EBUSY")


def hb(period):
    return {"group": "demo", "app": "shop", "host": "web-1", "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": 0,
            "points": {"fetch": {"visits": 1}}}


@test
def test_drill_errno(env):
    """errno ETIMEDOUT on an error drill: 201 with it, listed, audited, in
    the heartbeat reply; a drill without it: null, no "errno" key in the
    reply; stopping the first leaves the second alone."""
    env.start_admin()
    t0 = (int(time.time()) // 10) * 10
    env.ok("POST", "/heartbeat", hb(t0 - 10))
    d1 = env.ok("POST", APP + "/drills", {"point": "fetch", "kind": "error",
                                          "ratio": 30, "duration_s": 600,
                                          "errno": "ETIMEDOUT", "by": "alice"},
                want=201)
    eq((d1["errno"], d1["ratio"], d1["kind"]), ("ETIMEDOUT", 30, "error"), "reply 1")
    d2 = env.ok("POST", APP + "/drills", {"point": "other", "kind": "error",
                                          "duration_s": 600, "errno": None,
                                          "by": "alice"}, want=201)
    eq(d2["errno"], None, "reply 2")
    lst = env.ok("GET", APP + "/drills")
    eq([(x["id"], x["point"], x["errno"]) for x in lst],
       [(d2["id"], "other", None), (d1["id"], "fetch", "ETIMEDOUT")], "the list")
    r = env.ok("POST", "/heartbeat", hb(t0))
    eq(len(r["drills"]), 2, "drills in the reply: %r" % r["drills"])
    eq((r["drills"][0]["id"], r["drills"][0]["errno"]), (d1["id"], "ETIMEDOUT"),
       "reply drill 1")
    check("errno" not in r["drills"][1], "reply drill 2: %r" % r["drills"][1])
    a = env.ok("GET", APP + "/audit")
    want = "drill %d on fetch: error ETIMEDOUT, ratio 30, for 600 s" % d1["id"]
    check(any(e.get("detail") == want for e in a),
          "no audit entry %r in %r" % (want, a))
    env.ok("POST", APP + "/drills/%d/stop" % d1["id"], {"by": "bob"})
    r = env.ok("POST", "/heartbeat", hb(t0 + 10))
    eq([x["id"] for x in r["drills"]], [d2["id"]], "drills after the stop")


@test
def test_drill_errno_bad(env):
    """Unknown errno names, a non-string errno, errno on a delay drill:
    400 naming the problem, nothing stored."""
    env.start_admin()
    env.ok("POST", "/heartbeat", hb((int(time.time()) // 10) * 10 - 10))
    base = {"point": "fetch", "kind": "error", "duration_s": 60, "by": "alice"}
    for v in ("ETIMEOUT", "EINTR", "etimedout", ""):
        doc = env.bad("POST", APP + "/drills", dict(base, errno=v))
        eq(doc["error"], "errno: unknown name '%s' (%s)" % (v, NAMES), "errno %r" % v)
    doc = env.bad("POST", APP + "/drills", dict(base, errno=110))
    eq(doc["error"], "errno must be an errno name (ECONNREFUSED, ETIMEDOUT, EIO, ...)",
       "errno 110")
    doc = env.bad("POST", APP + "/drills", dict(base, kind="delay", delay_ms=50,
                                                errno="EIO"))
    eq(doc["error"], "errno is for error drills (a delay drill fails nothing)",
       "errno on a delay drill")
    eq(env.ok("GET", APP + "/drills"), [], "drills after the refusals")
