# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Several admins on one PostgreSQL, one killed (issue 16): a real
PostgreSQL (tests/lib/pgtest.py), three real sds-admin processes on it,
two hosts (own UTS and mount namespaces, own machine-id: e2e_lib's
host_loader) each running `sds-bpf attach` with all three URLs and
--admin-policy consistent_hash, their targets driven at a known rate.
Mid-run the admin host-a posts to is SIGKILLed, later restarted on its
port.  Exact: every period of each host stored once, the visits of each
period, a strategy written through one admin in force at a loader that
heartbeats to another within one period, the same JSON from every admin.

Shared by tests/e2e/t_5_hosts.py (test cluster_admin_killed, which
passes e2e_lib) and tools/demo/cluster_demo.py (make
demo-cluster[-check], which passes run.py: it holds e2e_lib's names):
run(e2e, ctx, say).  It registers no test of its own.
"""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import pgtest  # noqa: E402

HOSTS = ("host-a", "host-b")
RATE = {"host-a": 7, "host-b": 11}   # calls per driven second
# Seconds into a period: inside e2e's safe span (wait_safe: 2.0-6.5 s),
# so a slot's calls belong to its period even when the machine is slow.
SLOTS = (2.0, 2.5, 3.0, 3.5, 4.5, 5.0, 5.5, 6.0)
PERIODS = 6                 # driven periods P1..P6 after the attach period
KILL_AT = (3, 5.5)          # (driven period, seconds into it)
RESTART_AT = (5, 6.0)
WRITE_AT = (2, 2.0)         # the strategy change through another admin
LIMIT = 100000              # visit_threshold written: never trips here
MIDS = {"host-a": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "host-b": "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"}


def _posts(e2e, ctx, app):
    return [x["posts"] for x in e2e.admin_stats(ctx, app)["admins"]]


def _stats_json(e2e, ctx, app):
    r = ctx.sds(["stats", "--app", app, "--json"], quiet=True)
    e2e.check(r.rc == 0, "stats --app %s --json: %r" % (app, r))
    return json.loads(r.out)


def _hb_periods(pg, db, app):
    """{host: [period_start, ...]} of @app's heartbeats rows in PostgreSQL."""
    out = {}
    q = ("SELECT h.host, h.period_start FROM heartbeats h JOIN apps a ON "
         "a.id = h.app_id WHERE a.name = '%s' ORDER BY 1, 2" % app)
    for line in pg.sql(db, q).split():
        host, p = line.split("|")
        out.setdefault(host, []).append(int(p))
    return out


def run(e2e, ctx, say):
    """The scenario; raises e2e.Fail on any mismatch.  Returns a summary."""
    check, eq, log = e2e.check, e2e.eq, e2e.log
    P = e2e.PERIOD
    why = pgtest.available()
    check(why is None, "no PostgreSQL for the cluster: %s" % why)
    # The run's shared server (SDS_TEST_PG_SERVER) or one of its own;
    # either way a database of its own, dropped after.
    pg = pgtest.cluster()
    ctx.pg = pg             # stopped by Ctx.cleanup, pass or fail
    pg.start()
    db = pgtest.unique_name("sds_cluster")
    url = pg.create_db(db)
    admins = []
    for i in range(3):
        a = e2e.Admin(ctx)
        a.db = url
        a.start()
        admins.append(a)
        say("admin %d: %s/  (pid %d, --db postgresql://...@127.0.0.1:%d/%s)"
            % (i, a.url, a.p.pid, pg.port, db))
    urls = [a.url for a in admins]
    apps = {h: "h_" + h.replace("-", "_") for h in HOSTS}
    for h in HOSTS:
        admins[0].ok("POST", "/groups/%s/apps" % e2e.GROUP,
                     {"name": apps[h]}, want=201)
    targets, names = {}, {}
    span = {}               # host: (period before its loader started, period after)
    for h in HOSTS:
        before = e2e.period_of(time.time())
        mid = os.path.join(ctx.tmp, "machine-id-" + h)
        with open(mid, "w") as f:
            f.write(MIDS[h] + "\n")
        e2e.host_loader(ctx, h, urls, "consistent_hash", app=apps[h],
                        machine_id=mid)
        targets[h] = e2e.Target(ctx, os.path.join(ctx.tmp, h, e2e.APP))
        names[h] = e2e.admin_stats(ctx, apps[h])["host"]
        span[h] = (before, e2e.period_of(time.time()))
    p0 = e2e.period_of(time.time())
    say("loaders attached in period %d: %s" % (p0, ", ".join(
        "%s as %s" % (h, names[h]) for h in HOSTS)))
    want = {h: {} for h in HOSTS}
    calls = {h: 0 for h in HOSTS}
    ev = {}
    first = p0 + P
    for k in range(1, PERIODS + 1):
        p = p0 + k * P
        for s in SLOTS:
            _until(e2e, ctx, p + s, ev.get("write"))
            if (k, s) == WRITE_AT:
                ev["write"] = _write(e2e, ctx, admins, apps, say)
            if (k, s) == KILL_AT:
                ev["kill"] = _kill(e2e, ctx, admins, apps, say)
            if (k, s) == RESTART_AT:
                a = admins[ev["kill"]["admin"]]
                a.start(same_port=True)
                ev["restart"] = time.time()
                say("%.1f s into period %d: admin %d restarted on %s"
                    % (time.time() - p, p, ev["kill"]["admin"], a.url))
            for h in HOSTS:
                targets[h].cmd("work %d 0 0 0" % RATE[h])
                calls[h] += RATE[h]
                w = want[h].setdefault(p, {k2: 0 for k2 in e2e.COUNTS})
                w["visits"] += RATE[h]
            check(e2e.period_of(time.time()) == p,
                  "calls of slot %.1f spilled out of period %d" % (s, p))
    last = p0 + PERIODS * P
    check("seen" in ev["write"], "strategy version %d not in force at %s by "
          "the end of the run" % (ev["write"]["version"], ev["write"]["host"]))
    # Every host's last driven period stored (sent at its offset < 9 s).
    e2e.wait_until(lambda: all((admins[0].req("GET", "/api/v1/groups/%s/apps/%s/hosts"
                                              % (e2e.GROUP, apps[h]))[1] or
                                [{}])[0].get("last_period", 0) >= last
                               for h in HOSTS),
                   last + P + 9 + 4,
                   lambda _: "period %d not stored for every host" % last)
    out = {"urls": urls, "p0": p0, "last": last, "calls": calls, "events": ev, "hosts": {}}
    for h in HOSTS:
        app = apps[h]
        rows = _hb_periods(pg, db, app)
        eq(sorted(rows), [names[h]], "%s: hosts in heartbeats" % app)
        got = [x for x in rows[names[h]] if x <= last]
        # The first is the period its loader started in: the one before or
        # after its start (a boundary may fall while it attaches).
        check(got and span[h][0] <= got[0] <= span[h][1],
              "%s: first period stored %r, its loader started in %d..%d"
              % (app, got[:1], span[h][0], span[h][1]))
        eq(got, list(range(got[0], last + P, P)),
           "%s: periods stored (each once, none missing)" % app)
        st = _stats_json(e2e, ctx, app)
        ad = st["admin"]
        eq((ad["dropped"], ad["pending"] <= 1), (0, True),
           "%s: loader dropped, pending<=1" % app)
        stored = sum(x["stored"] for x in ad["admins"])
        eq(stored, ad["sent"], "%s: stored by all admins vs sent" % app)
        docs = []
        for a in admins:
            s = a.ok("GET", "/groups/%s/apps/%s/stats?from=%d&to=%d&step=10"
                     "&point=w" % (e2e.GROUP, app, p0 - P, last + P))
            docs.append(s)
        for i in (1, 2):
            eq(docs[i], docs[0], "%s: stats JSON of admin %d vs admin 0"
               % (app, i))
        pt = docs[0]["points"]["w"]
        eq(e2e.per_period(pt), want[h], "%s: visits per period" % app)
        eq(pt["total"]["visits"], calls[h], "%s: visits vs calls made" % app)
        hs = [a.ok("GET", "/groups/%s/apps/%s/hosts" % (e2e.GROUP, app))
              for a in admins]
        eq(hs[1:], [hs[0], hs[0]], "%s: hosts JSON of every admin" % app)
        if h == "host-a":
            k = ev["kill"]["admin"]
            # Found down by a post, or by the sync the push channel asked
            # for (uplink_pick.c counts both as failures, only posts as posts).
            check(ad["admins"][k]["failures"] >= 1 and
                  stored > ad["admins"][k]["stored"],
                  "host-a did not fail over from killed admin %d: %r"
                  % (k, ad["admins"]))
        out["hosts"][h] = {"periods": len(got), "visits": calls[h],
                           "posts": [x["posts"] for x in ad["admins"]],
                           "stored": [x["stored"] for x in ad["admins"]]}
        say("%s: %d periods %d..%d stored once each, %d visits = %d calls; "
            "posts per admin %r" % (h, len(got), p0, last,
                                    pt["total"]["visits"], calls[h],
                                    out["hosts"][h]["posts"]))
    say("every admin returns the same hosts and stats JSON")
    log("cluster summary %r" % out)
    return out


def _until(e2e, ctx, t, wr):
    """Sleep until @t, meanwhile watching for the written strategy."""
    while time.time() < t:
        if wr and "seen" not in wr:
            _seen(e2e, ctx, wr)
        time.sleep(max(0, min(0.2, t - time.time())))


def _write(e2e, ctx, admins, apps, say):
    """A strategy for host-a's app through an admin host-a does not post to."""
    posts = _posts(e2e, ctx, apps["host-a"])
    uses = max(range(3), key=lambda i: posts[i])
    w = (uses + 1) % 3
    doc = admins[w].ok("PUT", "/groups/%s/apps/%s/schemes/default/strategies"
                       % (e2e.GROUP, apps["host-a"]),
                       {"points": {"w": {"visit_threshold": LIMIT}}})
    t = time.time()
    say("strategy version %d written through admin %d; host-a posts to "
        "admin %d (posts %r)" % (doc["version"], w, uses, posts))
    return {"version": doc["version"], "at": t, "through": w, "to": uses,
            "app": apps["host-a"], "host": "host-a"}


def _seen(e2e, ctx, wr):
    st = _stats_json(e2e, ctx, wr["app"])
    now = time.time()
    if st.get("strategies_version") == wr["version"]:
        wr["seen"] = now - wr["at"]
        e2e.check(wr["seen"] <= e2e.PERIOD + 1.5,
                  "strategy version %d in force %.1f s after the write "
                  "(want within one period)" % (wr["version"], wr["seen"]))
    elif now - wr["at"] > e2e.PERIOD + 1.5:
        raise e2e.Fail("strategy version %d not in force %.1f s after the "
                       "write: loader has %r" % (wr["version"], now - wr["at"],
                                                 st.get("strategies_version")))


def _kill(e2e, ctx, admins, apps, say):
    posts = _posts(e2e, ctx, apps["host-a"])
    i = max(range(3), key=lambda j: posts[j])
    os.kill(admins[i].p.pid, signal.SIGKILL)
    admins[i].p.wait(5)
    t = time.time()
    say("%.1f s into period %d: admin %d SIGKILLed (host-a's; posts %r)"
        % (t - e2e.period_of(t), e2e.period_of(t), i, posts))
    return {"admin": i, "at": t, "posts": posts}
