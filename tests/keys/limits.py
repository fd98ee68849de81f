# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Hot keys' limits wired into the loader's tick (docs/KEYS.md "Limits"),
added to tests/keys/run.py's suite (add()):

  * guard_token, guard_override: tests/targets/keyrate calls
    sds_should_downgrade_key() for users 1..100 at 50 calls/s and user 7
    at 5,000/s for SECS s, against key_token_rate 100, key_token_bucket
    100 (then an override of user 7 to 1,000/s): user 7 passes within
    [R*T + B - SLACK, R*T + B + one tick's worth of its calls], T its
    calls' span as the app measured it; every other user passes every
    call; the blocks and lifts are events of reason "key".
  * function_token: the same through a keyed :failfast=connect function
    point (keyrate ff): user 7's calls that did not pass are exactly its
    connects the point failed fast.
  * guard_visit: key_visit_threshold 1000 on the guard point: user 7 is
    downgraded within a tick of its 1,000th visit (at most two ticks'
    calls more, for a late tick), every other user passes every call,
    the kernel's counts of each key exact, `stats --keys`' BLOCKED (text
    and JSON) says user 7 only, one event of reason "key".
  * guard_no_key: the same limits, the program calling unkeyed: every
    call passes and `stats` warns that the guard never passed a key.
  * bad_limits: key limits on a function point without :key=, or without
    :failfast=, refused at attach with one exact line, nothing attached;
    and on a SIGHUP reload, the strategies in force kept.
"""

import json
import os
import signal
import time

import sdstest
from sdstest import BUILD, check, eq, get_point, log

KEYRATE = os.path.join(BUILD, "test", "targets", "keyrate")
SECS = 4
USERS, HOT, RATE, HOT_RATE = 100, 7, 50, 5000
TICK_MS = 100
# Below R*T + B: a lift is the guards' own at the debt's end, but the
# calls come in bursts of a 20-ms round (100 of user 7's) and the bucket
# refills R a tick between the tick's read and the next.
SLACK = 100 + 100


def run_guard(ctx, strategy, point=None, mode=()):
    """keyrate against @strategy: through its guard point k, or through
    function point @point (a POINT=SYMBOL spec) of its ff mode; @mode:
    keyrate's further arguments ("unkeyed")."""
    app = sdstest.stage(KEYRATE, ctx.tmp)
    path = ctx.strategies({"k": strategy})
    sdstest.AttachProcess(ctx, ["--app", "keys", "--max-overhead", "0",
                                "--tick-ms", str(TICK_MS),
                                "--strategies", path, app] +
                          ([point] if point else []), "keys")
    r = sdstest.run_group([app, "ff" if point else "keys", str(SECS)] + list(mode),
                          ctx.env, ctx.tmp, ctx.others, 60)
    check(r.rc == 0 and r.out.endswith("done\n"), "keyrate: %r" % r)
    users, elapsed = {}, None
    for line in r.out.splitlines():
        w = line.split()
        if w[0] == "user":
            users[int(w[1])] = (int(w[3]), int(w[5]))
        elif w[0] == "elapsed_ns":
            elapsed = int(w[1]) / 1e9
    eq(len(users), USERS, "users reported")
    return users, elapsed


def check_hot(ctx, users, t, rate, bucket):
    calls, passed = users[HOT]
    eq(calls, SECS * HOT_RATE, "user 7's calls")
    lo = rate * t + bucket - SLACK
    hi = rate * t + bucket + HOT_RATE * TICK_MS / 1000
    log("user 7: %d of %d passed over %.3f s; bounds [%.0f, %.0f]"
        % (passed, calls, t, lo, hi))
    check(lo <= passed <= hi, "user 7 passed %d, want %.0f..%.0f (T %.3f s)"
          % (passed, lo, hi, t))
    bad = [(u, c, p) for u, (c, p) in users.items()
           if u != HOT and (c, p) != (SECS * RATE, SECS * RATE)]
    check(not bad, "other users not passing every call: %r" % bad[:5])
    # The point says which keys it blocks and why (reason "key").
    r = ctx.sds(["stats", "--app", "keys", "--json"])
    p = get_point(json.loads(r.out), "k")
    kl = p.get("key_limits")
    check(kl and kl["reason"] == "key" and kl["blocks"] >= 1,
          "stats' key_limits: %r" % kl)
    # `events` follows: what it printed in 3 s is what there was.
    ev = sdstest.run_group([sdstest.SDS, "events", "--app", "keys", "--json",
                            "--count", "1000"], ctx.env, ctx.tmp, ctx.others,
                           3, fail_on_timeout=False)
    mine = [e for e in (json.loads(x) for x in ev.out.splitlines()
                        if x.strip())
            if e["point"] == "k" and e["reason"] == "key"]
    log("key events: %s" % ", ".join("%s %s" % (e["event"], e["detail"])
                                      for e in mine))
    check(any(e["event"] == "started" and e["detail"].startswith("key 7 ")
              for e in mine), "no event of key 7 blocked: %r" % mine[:4])
    check(all(e["detail"].startswith("key 7 ") for e in mine),
          "events of keys other than 7: %r" % mine[:4])


def guard_token(ctx):
    """A guard point's key at 5,000/s limited to 100/s, bucket 100."""
    users, t = run_guard(ctx, {"key_token_rate": 100, "key_token_bucket": 100})
    check_hot(ctx, users, t, 100, 100)


def guard_override(ctx):
    """An override lets user 7 through at 1,000/s (its bucket its rate)."""
    users, t = run_guard(ctx, {"key_token_rate": 100, "key_token_bucket": 100,
                               "key_overrides": {"7": {"key_token_rate": 1000}}})
    check_hot(ctx, users, t, 1000, 1000)


def function_token(ctx):
    """The same limit through a keyed :failfast=connect function point:
    a blocked key's calls fail fast (their connects refused)."""
    users, t = run_guard(ctx, {"key_token_rate": 100, "key_token_bucket": 100},
                         "k=handle_ff:key=arg1:failfast=connect")
    check_hot(ctx, users, t, 100, 100)
    p = ctx.point("k")
    # Every call of user 7 that did not pass failed fast, by the point.
    eq(p["failfast"]["denied"], SECS * HOT_RATE - users[HOT][1],
       "failfast denied (user 7's calls that did not pass)")


VISIT = 1000
NO_KEY_WARNING = ("warning: point 'k' has key limits but its guard never passed a key "
                  "(sds_should_downgrade_key, sds_enter_key: docs/KEYS.md)")


def blocked_column(ctx, point):
    """`stats --keys POINT`'s text: {key: BLOCKED} of its table's lines."""
    r = ctx.sds(["stats", "--app", "keys", "--keys", point, "--top", "1000"])
    check(r.rc == 0, "stats --keys: %r" % r)
    lines = r.out.splitlines()
    eq(lines[1].split()[-1], "BLOCKED", "the last column's head")
    return {line.split()[0]: line.split()[-1] for line in lines[2:]}


def guard_visit(ctx):
    """key_visit_threshold 1000 on a guard point: user 7 (5,000/s) is
    downgraded from the tick after its 1,000th visit (reason "key", its
    calls counted exactly as downgrades by the kernel), every other user
    (200 visits in the run) passes every call; `stats --keys` says which
    key is blocked now (BLOCKED), in text and JSON."""
    users, t = run_guard(ctx, {"key_visit_threshold": VISIT})
    calls, passed = users[HOT]
    eq(calls, SECS * HOT_RATE, "user 7's calls")
    # The block comes at the first tick that reads 1,000 visits: within
    # one tick's worth of its calls (500), two allowed for a late tick.
    hi = VISIT + 2 * HOT_RATE * TICK_MS / 1000
    log("user 7: %d of %d passed; bounds [%d, %d]" % (passed, calls, VISIT, hi))
    check(VISIT <= passed <= hi, "user 7 passed %d, want %d..%d" % (passed, VISIT, hi))
    bad = [(u, c, p) for u, (c, p) in users.items()
           if u != HOT and (c, p) != (SECS * RATE, SECS * RATE)]
    check(not bad, "other users not passing every call: %r" % bad[:5])
    # The kernel counted every call of each key, user 7's refusals as downgrades.
    r = ctx.sds(["stats", "--app", "keys", "--keys", "k", "--top", "1000", "--json"])
    check(r.rc == 0, "stats --keys --json: %r" % r)
    doc = json.loads(r.out)
    got = {e["key"]: (e["calls"], e["downgrades"], e["blocked"]) for e in doc["top"]}
    want = {str(u): (SECS * RATE, 0, False) for u in range(1, USERS + 1) if u != HOT}
    want[str(HOT)] = (calls, calls - passed, True)
    # The warm-up's 10 calls: those before the table was made are lost.
    want["warm"] = (10 - doc["lost"], 0, False)
    check(1 <= doc["lost"] <= 10, "lost %d of the warm-up's 10" % doc["lost"])
    eq((doc["key_limits"], got), (True, want), "(calls, downgrades, blocked) by key")
    want_text = {k: "yes" if b else "no" for k, (_, _, b) in want.items()}
    eq(blocked_column(ctx, "k"), want_text, "BLOCKED in the text")
    p = ctx.point("k")
    kl = p["key_limits"]
    eq((p["total"]["downgrades"], kl["reason"], kl["keys_seen"], kl["blocked"],
        kl["blocks"], kl["lifts"]), (calls - passed, "key", True, 1, 1, 0),
       "the point's downgrades and key_limits")
    r = ctx.sds(["stats", "--app", "keys"])
    eq([x for x in r.out.splitlines() if x.startswith("warning:")], [],
       "no warning: the guard passes keys")
    ev = sdstest.run_group([sdstest.SDS, "events", "--app", "keys", "--json",
                            "--count", "1000"], ctx.env, ctx.tmp, ctx.others,
                           3, fail_on_timeout=False)
    mine = [(e["event"], e["detail"]) for e in (json.loads(x) for x in ev.out.splitlines()
                                                if x.strip())
            if e["point"] == "k" and e["reason"] == "key"]
    eq(mine, [("started", "key 7 blocked (key_visit_threshold)")], "the key events")


def guard_no_key(ctx):
    """Key limits on a guard point whose program passes no key: its calls
    all pass, and `stats` warns (one line; key_limits.keys_seen false)."""
    users, _ = run_guard(ctx, {"key_visit_threshold": VISIT}, mode=["unkeyed"])
    bad = [(u, c, p) for u, (c, p) in users.items() if c != p or c == 0]
    check(not bad, "users not passing every call: %r" % bad[:5])
    r = ctx.sds(["stats", "--app", "keys"])
    eq([x for x in r.out.splitlines() if x.startswith("warning:")], [NO_KEY_WARNING],
       "stats' warning")
    eq(ctx.point("k")["key_limits"]["keys_seen"], False, "key_limits.keys_seen")


NO_KEY = ("point 'u': key_token_rate needs a keyed point (:key=argN, strN or "
          "bufN,lenM; docs/KEYS.md): this one has no key")
NO_FF = ("point 'u': key_token_rate needs :failfast= on this point, or a "
         "guard point with sds_should_downgrade_key (docs/KEYS.md)")
NO_FF_VISIT = ("point 'u': key_visit_threshold needs :failfast= on this "
               "point, or a guard point with sds_should_downgrade_key "
               "(docs/KEYS.md)")


def bad_limits(ctx):
    """Key limits a function point cannot enforce: refused, one line."""
    cases = [
        ({"key_token_rate": 10}, "u=handle", NO_KEY),
        ({"key_token_rate": 10}, "u=handle:key=arg1", NO_FF),
        ({"key_visit_threshold": 10}, "u=handle:key=arg1", NO_FF_VISIT),
        ({"key_token_rate": 10, "key_overrides": {"abc": {"key_token_rate": 5}}},
         "u=handle_ff:key=arg1:failfast=connect",
         "point 'u': key_overrides 'abc': no key of this point (its keys are "
         "integers)"),
    ]
    for st, spec, msg in cases:
        path = ctx.strategies({"u": st})
        r = ctx.sds(["attach", "--app", "keys", "--strategies", path,
                     ctx.target, spec])
        # A :failfast= point says first which hooks fail its calls.
        eq((r.rc, r.out, r.err.splitlines()[-1:]),
           (1, "", ["sds-bpf: %s: %s" % (path, msg)]),
           "%s with %r" % (spec, st))
    eq(sdstest.pins_under([ctx.pin_root]), set(), "pins left")
    # A reload that brings them is refused whole; those in force stay.
    a = ctx.attach(["u=handle:key=arg1:site=nop5"], {"u": {"key_capacity": 64}})
    ctx.strategies({"u": {"key_capacity": 64, "key_token_rate": 10}}, version=2)
    os.kill(a.pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    while NO_FF not in a.stderr():
        check(time.monotonic() < deadline, "reload: stderr %r" % a.stderr())
        time.sleep(0.05)
    check(NO_FF + "; the strategies in force stay" in a.stderr(),
          "reload: stderr %r" % a.stderr())
    eq(ctx.keys("u")["capacity"], 64, "capacity after the refused reload")
    check("key_limits" not in ctx.point("u"), "key limits in force")


def add(suite):
    """Register the tests in tests/keys/run.py's @suite."""
    for f in (guard_token, guard_override, function_token, guard_visit, guard_no_key,
              bad_limits):
        suite.test(f)
