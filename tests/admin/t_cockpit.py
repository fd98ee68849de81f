# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The cockpit (issue 32) in a real headless chromium (chromium.py) and its
API: the fleet page (GET /api/v1/fleet) lists the apps the test's
heartbeats made, their hosts live and stale and the point downgraded now;
a kill switch clicked on the app page (with its audit comment) writes the
active scheme's strategy, which the next heartbeat's reply carries; the
charts start at the app's first period, follow new heartbeats every
second without a reload and break down by host (GET {A}/stats/hosts);
schemes made, activated and deleted, a group and an app created from the
page; with a read-only token or none, an action shows the API's refusal
and changes nothing.  Screenshots: build/test/admin/cockpit-fleet.png and
cockpit-app.png.
"""

import base64
import json
import os
import time

import sdstest
from sdstest import BUILD, check, eq
from admin_lib import APP, CHROMIUM, TOKEN, bearer, heartbeat, pt, test
from chromium import Browser

RD_TOKEN = "rd-t0ken.for_the_cockpit"
SHOTS = os.path.join(BUILD, "test", "admin")


def read_token(env):
    return ["--read-token-file", sdstest.write_token(os.path.join(env.tmp, "rd.token"), RD_TOKEN)]


def fleet_data(env):
    """demo/shop on web-1 and web-2 (order downgraded in the newest
    period, 4 + 6 of 40 + 60 calls), ops/billing on h3 and h-old (made
    stale: its last heartbeat 100 s ago): the period now."""
    now = (int(time.time()) // 10) * 10
    for i in range(6):
        p = now - 60 + i * 10
        d = i == 5
        env.ok("POST", "/heartbeat", heartbeat("web-1", p, {
            "order": pt(40, 0, 0, 4 if d else 0, 2, [0] * 16 + [40]), "pay": pt(7)}))
        env.ok("POST", "/heartbeat", heartbeat("web-2", p, {
            "order": pt(60, 1, 0, 6 if d else 0, 3, [0] * 18 + [60])}))
    for h in ("h3", "h-old"):
        env.ok("POST", "/heartbeat", heartbeat(h, now - 10, {"x": pt(5)}, group="ops", app="billing"))
    env.sql("UPDATE hosts SET last_seen = last_seen - 100 WHERE host = 'h-old'")
    return now


def page(env, path=""):
    b = Browser(env)
    b.call("Emulation.setDeviceMetricsOverride", width=1400, height=1000,
           deviceScaleFactor=1, mobile=False)
    b.call("Page.navigate", url="http://127.0.0.1:%d/%s" % (env.port, path))
    b.wait_event("Page.loadEventFired")
    return b


def set_token(b, tok):
    b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
        e.dispatchEvent(new Event('change')); })()""" % json.dumps(tok))


def set_values(b, values):
    b.js("(() => { const v = %s; for (const k in v) document.getElementById(k).value = v[k]; })()"
         % json.dumps(values))


def click(b, selector):
    b.wait_js("!!document.querySelector(%s)" % json.dumps(selector), what=selector)
    b.js("document.querySelector(%s).click()" % json.dumps(selector))


def screenshot(b, name):
    time.sleep(0.5)
    shot = b.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    os.makedirs(SHOTS, exist_ok=True)
    with open(os.path.join(SHOTS, name), "wb") as f:
        f.write(base64.b64decode(shot["data"]))


def no_errors(b, allowed=()):
    """No console error but the failed loads @allowed (HTTP statuses a
    refused action gets, which chromium logs, or a URL's part)."""
    b.js("1")
    bad = [e for e in b.errors
           if not any(("status of %d" % s if isinstance(s, int) else s) in e
                      for s in allowed)]
    check(not bad, "console errors: %s" % "; ".join(bad))


def wait_api(env, path, pred, what):
    deadline = time.time() + 20
    doc = None
    while time.time() < deadline:
        st, doc = env.req("GET", "/api/v1" + path)
        if st == 200 and pred(doc):
            return doc
        time.sleep(0.2)
    raise sdstest.Fail("%s: never; last %r" % (what, doc))


@test
def test_fleet_api(env):
    """GET /api/v1/fleet: every group with its apps, hosts live and
    stale, the point downgraded now with its sums and why; a group
    without apps listed; GET {A}/stats/hosts and its bad input."""
    env.start_admin()
    env.ok("POST", "/groups", {"name": "empty"}, want=201)
    env.ok("POST", "/groups/quiet/apps", {"name": "idle"}, want=201)
    now = fleet_data(env)
    f = env.ok("GET", "/fleet")
    eq((f["live_s"], f["downgraded_s"]), (30, 30), "the rules")
    eq([(g["name"], [a["name"] for a in g["apps"]]) for g in f["groups"]],
       [("demo", ["shop"]), ("empty", []), ("ops", ["billing"]), ("quiet", ["idle"])],
       "groups and apps")
    eq([a["first_period"] for g in f["groups"] for a in g["apps"]], [now - 60, now - 10, None],
       "first periods")
    idle = f["groups"][3]["apps"][0]
    eq((idle["hosts"], idle["downgraded"], idle["live_hosts"]), ([], [], 0), "an app without hosts")
    # One group, one app: what an app's page asks for.
    one = env.ok("GET", "/fleet?group=ops&app=billing")
    eq(one["groups"], [f["groups"][2]], "one app")
    eq([g["name"] for g in env.ok("GET", "/fleet?group=demo")["groups"]], ["demo"], "one group")
    env.bad("GET", "/fleet?group=ops&app=nope", want=404)
    env.bad("GET", "/fleet?group=nope", want=404)
    env.bad("GET", "/fleet?app=billing", field="app")
    env.bad("GET", "/fleet?group=a.b", field="group")
    shop, billing = f["groups"][0]["apps"][0], f["groups"][2]["apps"][0]
    eq([(h["host"], h["live"]) for h in shop["hosts"]], [("web-1", True), ("web-2", True)], "shop's hosts")
    eq([(h["host"], h["live"]) for h in billing["hosts"]], [("h-old", False), ("h3", True)],
       "billing's hosts (h-old stale)")
    eq((billing["live_hosts"], billing["stale_hosts"]), (1, 1), "billing's counts")
    eq(billing["downgraded"], [], "billing: nothing downgraded")
    # Downgraded now: periods with downgrades since now - 30 (now - 10 only here).
    eq([(d["point"], d["downgrades"], d["visits"], d["hosts"], d["period_start"])
        for d in shop["downgraded"]],
       [("order", 10, 100, ["web-1", "web-2"], now - 10)], "shop's downgraded point")
    check("no limit" in shop["downgraded"][0]["why"][0], "why, without a strategy: %r"
          % shop["downgraded"][0]["why"])
    # With a kill switch and a drill in force: both said.
    env.ok("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 0})
    d = env.ok("POST", APP + "/drills", {"point": "order", "kind": "error", "ratio": 30,
                                         "duration_s": 60, "by": "t"}, want=201)
    f = env.ok("GET", "/fleet")
    shop = f["groups"][0]["apps"][0]
    eq(shop["downgraded"][0]["why"], ["drill %d: error on 30%% of calls" % d["id"],
                                      "kill switch (visit_threshold 0)"], "why")
    eq([x["id"] for x in shop["drills"]], [d["id"]], "the drill in force")
    eq(shop["copy_plans"], [], "no copy plan")

    # One point by host: each host's own counts.
    s = env.ok("GET", APP + "/stats/hosts?point=order&from=%d&to=%d" % (now - 60, now))
    eq(sorted(s["hosts"]), ["web-1", "web-2"], "hosts of order")
    eq((s["hosts"]["web-1"]["total"]["visits"], s["hosts"]["web-2"]["total"]["visits"],
        s["hosts"]["web-2"]["total"]["exceptions"]), (240, 360, 6), "per-host sums")
    eq(s["hosts"]["web-1"]["downgrades"], [0, 0, 0, 0, 0, 4], "web-1's downgrades per step")
    env.bad("GET", APP + "/stats/hosts", field="point")
    env.bad("GET", APP + "/stats/hosts?point=a.b", field="point")
    env.bad("GET", APP + "/stats/hosts?point=order&step=7", field="step")
    env.bad("GET", "/groups/demo/apps/nope/stats/hosts?point=order", want=404)
    env.bad("POST", "/fleet", {}, want=405)
    env.stop_admin()


@test
def test_cockpit(env):
    """The fleet page, then the app page: its state, a kill switch
    clicked with a comment (and refused without one), the charts."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    now = fleet_data(env)
    # Running on pay: a drill and a copy plan.
    drill = env.ok("POST", APP + "/drills", {"point": "pay", "kind": "error", "ratio": 30,
                                             "duration_s": 600, "by": "t"}, want=201)["id"]
    plan = env.ok("POST", APP + "/copy-plans", {"name": "x5", "points": ["pay"], "sample_pct": 40,
                                                "shadows": ["127.0.0.1:9001"], "duration_s": 600,
                                                "by": "t"}, want=201)["id"]
    b = page(env)
    try:
        fleet_page(b, drill, plan)
        screenshot(b, "cockpit-fleet.png")
        click(b, 'tr[data-app="demo/shop"] td a')
        b.wait_js("location.hash == '#/app/demo/shop'", what="app page")
        app_state(b, now, drill)
        by_host(b)
        follows_the_data(b, env, now)
        kill_switch(b, env, now)
        no_errors(b)
    finally:
        b.close()
    env.stop_admin()


def fleet_page(b, drill, plan):
    """Both apps by group, their hosts, the downgraded point, what runs,
    and the rule."""
    b.wait_js("document.querySelectorAll('#fleet-groups tr[data-app]').length == 2", what="two apps")
    eq(b.js("[...document.querySelectorAll('#fleet-groups tr[data-app]')].map((tr) => tr.dataset.app)"),
       ["demo/shop", "ops/billing"], "the apps, by group")
    eq(b.js("[...document.querySelectorAll('#fleet-groups .panel h3')].map((h) => h.textContent)"),
       ["demo", "ops"], "the groups")
    row = 'document.querySelector(\'tr[data-app="%s"]\')'
    eq(b.js(row % "ops/billing" + ".cells[1].textContent"), "1 live · 1 staleh-oldh3", "billing's hosts")
    eq(b.js(row % "ops/billing" + ".querySelector('.chip.stale').textContent"), "h-old", "the stale host")
    line = b.js(row % "demo/shop" + ".querySelector('.downgraded[data-point=\"order\"]').textContent")
    check(line.startswith("order: 10 of 100 calls on web-1, web-2 — no limit"), "downgraded: %r" % line)
    eq(b.js(row % "ops/billing" + ".cells[2].textContent"), "none", "billing: nothing downgraded")
    check("last heartbeat is at most 30 s old" in b.js("document.getElementById('fleet-rule').textContent"),
          "the live rule said")
    eq(b.js(row % "demo/shop" + ".querySelector('a').getAttribute('href')"), "#/app/demo/shop", "link")
    running = b.js("[...%s.cells[3].querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')])"
                   % (row % "demo/shop"))
    eq(len(running), 2, "a drill and a copy plan running: %r" % running)
    check(running[0][0].startswith("drill %d on pay: error 30%%, " % drill) and
          running[0][0].endswith(" s left"), "the drill: %r" % running[0][0])
    check(running[1][0].startswith("copy plan %d (x5) on pay: 40%% x1, " % plan), "the plan: %r" % running[1][0])
    eq({h for _, h in running}, {"#/app/demo/shop"}, "their links")
    eq(b.js(row % "ops/billing" + ".cells[3].textContent"), "none", "billing: nothing running")


def app_state(b, now, drill):
    """The points with their newest period's state and rates, the hosts."""
    b.wait_js("document.querySelectorAll('#points tbody tr').length == 2 && "
              "document.querySelector('#points tbody').textContent.includes('drill')", what="point rows")
    rows = b.js("""[...document.querySelectorAll('#points tbody tr')].map(
        (tr) => [...tr.cells].map((td) => td.textContent))""")
    as_of = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(now - 10))
    # order, newest period: 100 visits, 10 downgraded, 1 exception, over 10 s.
    eq([r[:6] + r[8:] for r in rows],
       [["order", "downgrading 10%", "10.0", "1.0", "0.1", "0.0", "0.000%", "-", "-", "0",
         as_of, "Kill switch"],
        ["pay", "drill %d: error 30%%" % drill, "0.7", "0.0", "0.0", "0.0", "0.000%", "-", "-",
         "0", as_of, "Kill switch"]], "points")
    eq(b.js("document.querySelectorAll('#hosts tbody tr').length"), 2, "host rows")
    eq(b.js("[...document.querySelectorAll('#hosts tbody tr')].map((tr) => tr.cells[2].textContent)"),
       ["live", "live"], "hosts live")
    check(b.js("document.getElementById('p-editor').tagName == 'DETAILS' && "
               "!document.getElementById('p-editor').open"), "the forms are folded")


def by_host(b):
    """order's chart by host: a visits line per host, their own sums."""
    b.wait_js("document.querySelectorAll('#charts .chartcard').length == 2", what="two charts")
    click(b, '.chartcard[data-point="order"] input.byhost')
    got = b.wait_js("""(() => { const c = document.querySelector('.chartcard[data-point="order"] canvas');
        const ch = Chart.getChart(c);
        const v = ch.data.datasets.filter((d) => d.key == 'visits');
        return v.length == 2 ? v.map((d) => [d.label, d.data.reduce((a, x) => a + x, 0)]) : null; })()""",
                    what="by-host datasets")
    eq(got, [["web-1 visits", 240], ["web-2 visits", 360]], "visits by host")
    click(b, '.chartcard[data-point="order"] input.byhost')
    b.wait_js("""Chart.getChart(document.querySelector('.chartcard[data-point="order"] canvas'))
        .data.datasets[0].label == 'visits'""", what="back to the totals")


ORDER_SUM = """Chart.getChart(document.querySelector('.chartcard[data-point="order"] canvas'))
    .data.datasets[0].data.reduce((a, x) => a + x, 0)"""


def order_sum(b):
    return b.js(ORDER_SUM)


def follows_the_data(b, env, now):
    """The range starts at the app's first period; a new heartbeat is
    drawn within a few seconds, the page never reloaded."""
    first = b.js("""Chart.getChart(document.querySelector('.chartcard[data-point="order"] canvas'))
        .data.labels[0]""")
    eq(first, b.js("fmtTime(%d)" % (now - 60)), "the chart starts at the first period")
    eq(order_sum(b), 600, "visits drawn")
    b.js("window.__same_page = 1")
    at = b.js("state.stats.at")
    env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(33)}))
    t0 = time.time()
    b.wait_js("(%s) == 633" % ORDER_SUM, timeout=5, what="new period drawn")
    check(time.time() - t0 < 4, "drawn in %.1f s" % (time.time() - t0))
    eq(b.js("window.__same_page"), 1, "no reload")
    # Merged into the range kept: the second's request was its last steps.
    eq(b.js("state.stats.at"), at, "the range kept, its last steps merged")
    check("visits 633 " in b.js("document.querySelector('.chartcard[data-point=\"order\"] .sum').textContent"),
          "the totals follow")
    # A period two hours back: the default range stops at the last hour,
    # the selector shows more.
    env.ok("POST", "/heartbeat", heartbeat("web-2", now - 7200, {"order": pt(1)}))
    # The range was set when the period came (kept since, its last steps
    # merged): an hour before a step at most 20 s before this check's.
    b.wait_js("""((l, t) => [0, 10, 20].some((d) => l == fmtTime(t - d)))(
        Chart.getChart(document.querySelector('.chartcard[data-point="order"] canvas'))
        .data.labels[0], Math.ceil(Date.now() / 10000) * 10 - 3600)""",
              what="at most the last hour")
    eq(order_sum(b), 633, "the last hour's visits drawn")
    b.js("""(() => { const r = document.getElementById('range'); r.value = '21600';
        r.dispatchEvent(new Event('change')); })()""")
    # From the first period, at the step that range takes (aligned down to it).
    firsts = json.dumps([(now - 7200) // s * s for s in (10, 20, 30, 60)])
    b.wait_js("""%s.map(fmtTime).includes(Chart.getChart(document.querySelector(
        '.chartcard[data-point="order"] canvas')).data.labels[0])""" % firsts,
              what="6 hours: from the first period")
    b.wait_js("(%s) == 634" % ORDER_SUM, what="visits drawn over 6 hours")
    b.js("""(() => { const r = document.getElementById('range'); r.value = '3600';
        r.dispatchEvent(new Event('change')); })()""")


def kill_switch(b, env, now):
    """Refused without a comment; with one, the active scheme's strategy
    of order is the kill switch, audited, in the next heartbeat's reply;
    lifted again from the page."""
    set_token(b, TOKEN)
    v0 = env.ok("GET", APP)["version"]
    click(b, '#points button[data-point="order"]')
    b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
    check("downgraded" in b.js("document.getElementById('ks-text').textContent"), "the dialog says what")
    b.js("document.getElementById('ks-confirm').click()")
    b.wait_js("document.getElementById('ks-error').textContent.includes('a comment is needed')",
              what="comment required")
    eq(env.ok("GET", APP)["version"], v0, "nothing written without a comment")
    set_values(b, {"ks-comment": "incident 42: order off"})
    b.js("document.getElementById('ks-confirm').click()")
    doc = wait_api(env, APP + "/strategies", lambda d: "order" in d["points"], "kill switch")
    eq(doc["points"]["order"], {"visit_threshold": 0, "downgrade_rate": 100}, "the kill switch")
    eq(doc["version"], v0 + 1, "version")
    a = env.ok("GET", APP + "/audit")[0]
    eq(a["comment"], "incident 42: order off", "audit comment")
    check("order" in a["detail"], "audit detail names the point: %r" % a)
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", now + 10, {"order": pt(1)}))
    eq(r["strategies"]["points"]["order"]["visit_threshold"], 0, "the host gets it")
    b.wait_js("!document.getElementById('ks-dialog').open", what="dialog closed")
    b.wait_js("""document.querySelector('#points tbody tr').cells[1].textContent.startsWith('kill switch')
        && document.querySelector('#points button[data-point="order"]').textContent == 'Lift'""",
              what="kill switch shown")
    f = env.ok("GET", "/fleet")
    check("kill switch (visit_threshold 0)" in f["groups"][0]["apps"][0]["downgraded"][0]["why"],
          "fleet says why")
    screenshot(b, "cockpit-app.png")
    click(b, '#points button[data-point="order"]')
    b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
    set_values(b, {"ks-comment": "incident 42 over"})
    b.js("document.getElementById('ks-confirm').click()")
    wait_api(env, APP + "/strategies", lambda d: "order" not in d["points"], "kill switch lifted")
    eq(env.ok("GET", APP + "/audit")[0]["comment"], "incident 42 over", "lift audited")


@test
def test_cockpit_schemes_and_apps(env):
    """A scheme made from the page (a clone of default), activated there:
    the API's active scheme, its strategies in the heartbeat's reply; a
    scheme deleted with a comment; a group and an app created."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    now = fleet_data(env)
    env.ok("PUT", APP + "/schemes/default/strategies/order", {"visit_threshold": 500})
    b = page(env, "#/app/demo/shop")
    try:
        set_token(b, TOKEN)
        b.wait_js("document.querySelectorAll('#schemes tbody tr').length == 1", what="scheme rows")
        b.js("document.getElementById('p-schemes').open = true")
        set_values(b, {"sc-name": "storm", "sc-desc": "for storms", "sc-clone": "default",
                       "scheme-comment": "made in the cockpit"})
        b.js("document.getElementById('sc-create').click()")
        wait_api(env, APP + "/schemes", lambda d: len(d) == 2, "scheme created")
        eq(env.ok("GET", APP + "/schemes/storm/strategies")["points"],
           {"order": {"visit_threshold": 500, "downgrade_rate": 100}}, "cloned strategies")
        eq(env.ok("GET", APP + "/schemes/storm")["description"], "for storms", "description")
        click(b, '#schemes button.activate[data-scheme="storm"]')
        doc = wait_api(env, APP + "/active_scheme", lambda d: d["scheme"] == "storm", "activated")
        eq(env.ok("GET", APP + "/audit")[0]["comment"], "made in the cockpit", "audit comment")
        r = env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(1)}))
        eq((r["version"], r["strategies"]["points"]["order"]["visit_threshold"]),
           (doc["version"], 500), "the host gets storm's strategies")
        b.wait_js("document.getElementById('app-scheme').textContent == 'storm'", what="active shown")
        # default is inactive now: deleted from the page with a comment.
        click(b, '#schemes button.delete[data-scheme="default"]')
        b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
        set_values(b, {"ks-comment": "storm is the plan now"})
        b.js("document.getElementById('ks-confirm').click()")
        wait_api(env, APP + "/schemes", lambda d: [s["name"] for s in d] == ["storm"], "deleted")
        eq(env.ok("GET", APP + "/audit")[0]["comment"], "storm is the plan now", "delete audited")
        # Renamed from the page: still the active one, its strategies kept.
        b.wait_js("document.querySelectorAll('#sc-from option').length == 1", what="rename list")
        set_values(b, {"sc-from": "storm", "sc-to": "gale", "scheme-comment": "a better name"})
        b.js("document.getElementById('sc-rename').click()")
        wait_api(env, APP + "/schemes", lambda d: [s["name"] for s in d] == ["gale"], "renamed")
        eq(env.ok("GET", APP + "/active_scheme")["scheme"], "gale", "the active scheme, renamed")
        eq(env.ok("GET", APP + "/schemes/gale/strategies")["points"],
           {"order": {"visit_threshold": 500, "downgrade_rate": 100}}, "strategies after the rename")
        a0 = env.ok("GET", APP + "/audit")[0]
        eq((a0["action"], a0["detail"], a0["comment"]),
           ("scheme.rename", "storm -> gale", "a better name"), "rename audited")
        # A group and an app from the fleet page.
        b.js("location.hash = '#/'")
        b.wait_js("!document.getElementById('fleet').hidden", what="fleet page")
        set_values(b, {"ng-name": "newgrp", "ng-desc": "made here"})
        b.js("document.getElementById('ng-create').click()")
        eq(wait_api(env, "/groups/newgrp", lambda d: True, "group")["description"], "made here", "group")
        set_values(b, {"na-group": "newgrp", "na-name": "newapp"})
        b.js("document.getElementById('na-create').click()")
        wait_api(env, "/groups/newgrp/apps/newapp", lambda d: True, "app created")
        b.wait_js("location.hash == '#/app/newgrp/newapp' && "
                  "document.getElementById('app-scheme').textContent == 'default'", what="new app's page")
        # A refresh in flight when default was deleted, or storm renamed,
        # may ask for it once.
        no_errors(b, allowed=("schemes/storm/strategies",
                              "schemes/default/strategies"))
    finally:
        b.close()
    env.stop_admin()


CLEAR = "document.getElementById('error').textContent = ''"


@test
def test_cockpit_refused(env):
    """With a read-only token, then none: the kill switch, a new scheme
    and an activation are refused with the API's reason on the page, and
    nothing changes."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin(*read_token(env))
    fleet_data(env)
    env.ok("POST", APP + "/schemes", {"name": "spare"}, want=201)
    before = (env.ok("GET", APP), env.ok("GET", APP + "/schemes"),
              env.ok("GET", APP + "/strategies"))
    b = page(env, "#/app/demo/shop")
    try:
        b.wait_js("document.querySelectorAll('#points tbody tr').length == 2", what="point rows")
        b.wait_js("document.querySelectorAll('#schemes tbody tr').length == 2", what="scheme rows")
        for tok, status, words in ((RD_TOKEN, 403, "this token's role may not write: an operator token is needed"),
                                   ("", 401, "missing or wrong bearer token")):
            set_token(b, tok)
            want = "refused (HTTP %d): %s" % (status, words)
            b.js(CLEAR)
            click(b, '#points button[data-point="order"]')
            b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
            set_values(b, {"ks-comment": "not allowed"})
            b.js("document.getElementById('ks-confirm').click()")
            b.wait_js("document.getElementById('ks-error').textContent == %s" % json.dumps(want),
                      what="the refusal in the dialog")
            eq(b.js("document.getElementById('error').textContent"), want, "the refusal in the banner")
            check(b.js("!document.getElementById('error').hidden"), "banner shown")
            b.js("document.getElementById('ks-cancel').click()")
            b.js(CLEAR)
            set_values(b, {"sc-name": "nope"})
            b.js("document.getElementById('sc-create').click()")
            b.wait_js("document.getElementById('error').textContent == %s" % json.dumps(want),
                      what="scheme refused")
            b.js(CLEAR)
            click(b, '#schemes button.activate[data-scheme="spare"]')
            b.wait_js("document.getElementById('error').textContent == %s" % json.dumps(want),
                      what="activation refused")
        time.sleep(1.2)     # a tick after the refusals: the page still says why
        check(b.js("document.getElementById('error').textContent").startswith("refused (HTTP 401)"),
              "the refusal stays on the page")
        after = (env.ok("GET", APP), env.ok("GET", APP + "/schemes"),
                 env.ok("GET", APP + "/strategies"))
        eq(after, before, "nothing changed")
        eq(b.js("document.getElementById('app-scheme').textContent"), "default", "page unchanged")
        # The read token's refused writes are in the audit log, as every 403 is.
        denied = [a for a in env.ok("GET", APP + "/audit") if a["action"] == "denied"]
        eq(len(denied), 3, "the read token's refusals audited: %r" % denied)
        no_errors(b, allowed=(401, 403))
    finally:
        b.close()
    env.stop_admin()


@test
def test_fleet_roles(env):
    """Under --protect-reads the fleet is a read like the others: a read
    or operator token, else 401; a heartbeat token's 403."""
    hbf = sdstest.write_token(os.path.join(env.tmp, "hb.token"), "hb-t0ken.for_the_cockpit")
    env.start_admin(*read_token(env), "--heartbeat-token-file", hbf, "--protect-reads")
    fleet_data(env)
    for tok in (bearer(RD_TOKEN), True):
        eq([g["name"] for g in env.ok("GET", "/fleet", token=tok)["groups"]], ["demo", "ops"],
           "the fleet with a read token")
    env.ok("GET", APP + "/stats/hosts?point=order", token=bearer(RD_TOKEN))
    env.bad("GET", "/fleet", token=False, want=401)
    env.bad("GET", APP + "/stats/hosts?point=order", token=False, want=401)
    env.bad("GET", "/fleet", token=bearer("hb-t0ken.for_the_cockpit"), want=403)
    env.stop_admin()
