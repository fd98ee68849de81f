# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Capping one tenant from the console (docs/KEYS.md "Limits", issue 34),
added to tests/keys/run.py's suite (add()): a real sds-admin (SQLite), a
real `sds-bpf attach --admin` on tests/targets/keyrate's handle_ff(user)
as the keyed function point k=handle_ff:key=arg1:failfast=connect (an
unmodified program: no libsds in it), users 1..100 at 50 calls/s and user
7 at 5,000/s (keyrate ff).

  * admin_cap: uncapped, every user passes every call.  The operator caps
    user 7 at 100/s (bucket 100) through the admin's API, a key_overrides
    entry alone: the loader has the new version within the heartbeat
    period and a tick (the push channel brings it sooner); then user 7
    passes within [R*T + B - SLACK, R*T + B + one tick's worth of its
    calls], every other user every call, and every call of user 7 that
    did not pass is one the point failed fast.  The cap removed through
    the API: every call passes again.
  * dashboard_cap: the same cap, at 200/s, set from the dashboard's
    hot-keys panel in a real chromium, on the row of user 7 that the
    loader's own heartbeats put there (with its p99 of the period: a log2
    bucket's upper end).
"""

import json
import os
import sys
import time

import sdstest
from sdstest import BUILD, check, eq, log
import limits
import sdsadmin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "admin"))

KEYRATE = limits.KEYRATE
APP = "keys"
A = "/groups/default/apps/%s" % APP
POINT_SPEC = "k=handle_ff:key=arg1:failfast=connect"
PERIOD = 10
# The loader has a new version within the heartbeat period and a tick
# (the push channel: about a second); a margin for a loaded box.
IN_FORCE_S = PERIOD + limits.TICK_MS / 1000 + 5


def setup(ctx):
    """sds-admin with app "keys" (no strategies), a loader reporting to
    it; (admin, loader, the staged keyrate)."""
    admin = sdsadmin.Admin(ctx).start()
    admin.ok("POST", "/groups/default/apps", {"name": APP}, want=201)
    app = sdstest.stage(KEYRATE, ctx.tmp)
    loader = sdstest.AttachProcess(ctx, [
        "--app", APP, "--max-overhead", "0", "--tick-ms", str(limits.TICK_MS),
        "--admin", admin.url, "--token-file", admin.token_file,
        app, POINT_SPEC], APP)
    return admin, loader, app


def run_users(ctx, app):
    """keyrate ff for limits.SECS s: {user: (calls, passed)}, user 7's span."""
    r = sdstest.run_group([app, "ff", str(limits.SECS)], ctx.env, ctx.tmp,
                          ctx.others, 60)
    check(r.rc == 0 and r.out.endswith("done\n"), "keyrate: %r" % r)
    users, elapsed = {}, None
    for line in r.out.splitlines():
        w = line.split()
        if w[0] == "user":
            users[int(w[1])] = (int(w[3]), int(w[5]))
        elif w[0] == "elapsed_ns":
            elapsed = int(w[1]) / 1e9
    eq(len(users), limits.USERS, "users reported")
    return users, elapsed


def all_pass(users, what):
    bad = [(u, c, p) for u, (c, p) in users.items()
           if c != p or c != limits.SECS * (limits.HOT_RATE if u == limits.HOT
                                            else limits.RATE)]
    check(not bad, "%s: users not passing every call: %r" % (what, bad[:5]))


def wait_in_force(ctx, version, t0):
    """Until the loader's strategies are @version; how long after @t0."""
    deadline = t0 + IN_FORCE_S
    while True:
        r = ctx.sds(["stats", "--app", APP, "--json"])
        st = json.loads(r.out) if r.rc == 0 else {}
        if st.get("strategies_version") == version:
            took = time.time() - t0
            log("version %d in force %.2f s after the change" % (version, took))
            return took
        check(time.time() < deadline,
              "version %d not in force within %.1f s: %r"
              % (version, IN_FORCE_S, st.get("strategies_version")))
        time.sleep(0.1)


def failfast_denied(ctx):
    return ctx.point("k")["failfast"]["denied"]


def capped_run(ctx, app, rate, bucket):
    """One run under user 7's cap: the bounds, and its refused calls failed fast."""
    before = failfast_denied(ctx)
    users, t = run_users(ctx, app)
    limits.check_hot(ctx, users, t, rate, bucket)
    eq(failfast_denied(ctx) - before, limits.SECS * limits.HOT_RATE - users[limits.HOT][1],
       "failfast denied (user 7's calls that did not pass)")


def admin_cap(ctx):
    admin, _, app = setup(ctx)
    all_pass(run_users(ctx, app)[0], "uncapped")
    t0 = time.time()
    r = admin.ok("PUT", A + "/schemes/default/strategies/k",
                 {"key_overrides": {"7": {"key_token_rate": 100, "key_token_bucket": 100}},
                  "comment": "user 7 floods k"})
    wait_in_force(ctx, r["version"], t0)
    capped_run(ctx, app, 100, 100)
    eq(admin.ok("GET", A + "/schemes/default/strategies/k").get("key_overrides"),
       {"7": {"key_token_rate": 100, "key_token_bucket": 100}}, "the cap stored")
    # The cap removed: every call passes again.
    t0 = time.time()
    r = admin.ok("DELETE", A + "/schemes/default/strategies/k", {"comment": "over"})
    wait_in_force(ctx, r["version"], t0)
    all_pass(run_users(ctx, app)[0], "the cap removed")


def hot_keys(admin):
    st, doc = admin.req("GET", "/api/v1" + A + "/points/k/keys?period=60")
    return doc["keys"] if st == 200 else []


def dashboard_cap(ctx):
    from admin_lib import CHROMIUM
    from chromium import Browser, Chromium
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    admin, _, app = setup(ctx)
    # Calls through a period's close: its heartbeat carries user 7.
    deadline = time.time() + 3 * PERIOD + 10
    while not any(k["key"] == "7" for k in hot_keys(admin)):
        check(time.time() < deadline, "no heartbeat listed key 7: %r" % hot_keys(admin))
        all_pass(run_users(ctx, app)[0], "uncapped")
    k7 = [k for k in hot_keys(admin) if k["key"] == "7"][0]
    log("key 7 as the admin has it: %r" % k7)
    eq(k7["kind"], "int", "key 7's kind")
    p99 = k7["p99_ns"]
    check(p99 is not None and p99 > 0 and (p99 + 1) & p99 == 0,
          "key 7's p99 %r is no log2 bucket's upper end" % p99)
    env = type("Env", (), {"port": admin.port})()
    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/default/%s" % (admin.port, APP))
        b.wait_event("Page.loadEventFired")
        row = """document.querySelector('.chartcard[data-point="k"] .hotkeys tr[data-key="7"]')"""
        b.wait_js("!!%s && !!%s.querySelector('button.capkey')" % (row, row), what="key 7's row")
        b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
            e.dispatchEvent(new Event('change')); })()""" % json.dumps(admin.token))
        # Typed and clicked in one task: a refresh redrawing the row
        # cannot come between them.
        b.js("(() => { const r = " + row + "; r.querySelector('input.caprate').value = '200';"
             " r.querySelector('button.capkey').click(); })()")
        b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
        b.js("document.getElementById('ks-comment').value = 'user 7 floods k'")
        t0 = time.time()
        b.js("document.getElementById('ks-confirm').click()")
        deadline = time.time() + 10
        while True:
            st, doc = admin.req("GET", "/api/v1" + A + "/strategies")
            if st == 200 and "k" in doc["points"]:
                break
            check(time.time() < deadline, "the dashboard's cap never stored: %r" % doc)
            time.sleep(0.1)
        eq(doc["points"]["k"], {"downgrade_rate": 100,
                                "key_overrides": {"7": {"key_token_rate": 200}}},
           "the cap the dashboard wrote")
        wait_in_force(ctx, doc["version"], t0)
        b.wait_js(row + ".cells[8].textContent == '200/s remove cap'", what="the row's cap")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
        Chromium.stop()
    # A cap of its own rate and no bucket: the bucket is its rate.
    capped_run(ctx, app, 200, 200)


def add(suite):
    """Register the tests in tests/keys/run.py's @suite."""
    for f in (admin_cap, dashboard_cap):
        suite.test(f)
