# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
An app's page of the dashboard in a real headless chromium (chromium.py):
charts, hosts and the points table (the newest period's state and rates,
an adaptive point's limit) drawn from real heartbeats, a strategy edited, a drill (its hosts and
stop condition too) started and stopped, and game days run, aborted and reported from its folded
forms, no console error.  A screenshot is kept at
build/test/admin/dashboard.png.  The fleet page, the kill switch, schemes
and refusals: t_cockpit.py.
"""

import base64
import json
import os
import time

from sdstest import BUILD, check, eq
from admin_lib import APP, CHROMIUM, TOKEN, heartbeat, pt, test
from chromium import Browser


@test
def test_dashboard(env):
    """The page of an app with two hosts' heartbeats: what it draws, a
    strategy and a drill made from it, no console error."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop", "description": "the \"demo\" shop"},
           want=201)
    now, visits = post_periods(env)
    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/demo/shop" % env.port)
        b.wait_event("Page.loadEventFired")
        drawn(b, now, visits)
        deps_shown(b)
        strategy_edited(b, env, now)
        drill_started_and_stopped(b, env, now)
        gamedays_run_and_aborted(b, env)
        screenshot(b)
        # Drain pending events before judging the console.
        b.js("1")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()


def post_periods(env):
    """Twelve periods of web-1 (the newest with order suspended by the
    budget and adaptive at 40), one of web-2 (adaptive at 25): the period
    now, and the visits of order."""
    now = (int(time.time()) // 10) * 10
    visits = 0
    for i in range(12):
        p = now - 120 + i * 10
        v = 100 + 10 * i
        visits += v
        pts = {"order": pt(v, i % 3, i % 2, 5 if i > 8 else 0, 3 + i % 4,
                           [0] * 14 + [v // 2, v // 3, v - v // 2 - v // 3]),
               "pay": pt(20, 1, 0, 0, 1, [0] * 18 + [20])}
        if i == 11:
            # The newest period: order's probes suspended by the budget.
            pts["order"].update(suspended=True, overhead_pct=12.345, adaptive_limit=40,
                                adaptive_latency_ns=2500000)
            pts["pay"].update(overhead_pct=0.014)
            # Its dependencies since attach (docs/DEPS.md).
            pts["order"]["deps"] = [
                {"addr": "10.0.0.5", "port": 5432, "proto": "tcp", "connects": 3,
                 "sends": 30},
                {"addr": "::1", "port": 6379, "proto": "tcp", "connects": 2,
                 "connect_errors": 2}]
        env.ok("POST", "/heartbeat", heartbeat("web-1", p, pts))
    env.ok("POST", "/heartbeat", heartbeat("web-2", now - 20, {"order": dict(
        pt(50, 0, 0, 0, 9), adaptive_limit=25, adaptive_latency_ns=4000000,
        deps=[{"addr": "10.0.0.5", "port": 5432, "proto": "tcp", "connects": 1,
               "sends": 12, "send_errors": 1}])}))
    visits += 50
    return now, visits


def drawn(b, now, visits):
    """The app list, the order chart's visits, hosts, and the points
    table with the budget's state as of the newest heartbeat."""
    b.wait_js("document.querySelector('#apps li') && document.querySelector('#apps li').textContent",
              what="app list")
    check("shop" in b.js("document.getElementById('apps').textContent"), "app in the list")
    b.wait_js("document.querySelectorAll('#charts .chartcard').length == 2", what="two charts")
    got = b.wait_js("""(() => { const c = document.querySelector('.chartcard[data-point="order"] canvas');
        const ch = c && Chart.getChart(c);
        return ch ? ch.data.datasets[0].data.reduce((a, b) => a + b, 0) : 0; })()""",
                    what="chart data")
    eq(got, visits, "visits drawn in the order chart")
    check(b.js("document.getElementById('app-desc').textContent") == 'the "demo" shop',
          "description shown verbatim")
    eq(b.js("document.querySelectorAll('#hosts tbody tr').length"), 2, "host rows")

    # The points table: the newest period's state and rates (order: 210
    # visits, 5 downgraded, 2 exceptions, 1 timeout; pay: 20 and 1), the
    # budget's state as of that heartbeat.
    rows_js = """[...document.querySelectorAll('#points tbody tr')].map(
        (tr) => [...tr.cells].map((td) => td.textContent))"""
    b.wait_js("document.querySelectorAll('#points tbody tr').length == 2", what="point rows")
    as_of = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(now - 10))
    # order's adaptive limit: each host's latest (web-1's 40 of the newest
    # period, web-2's 25 of the one before) summed, the higher latency.
    eq([r[:6] + r[8:] for r in b.js(rows_js)],
       [["order", "downgrading 2%suspended: overhead", "21.0", "0.5", "0.2", "0.1", "12.3%",
         "limit 65 (adaptive, sum of 2 hosts), steering by up to 4.00 ms", "-", "0", as_of,
         "Kill switch"],
        ["pay", "ok", "2.0", "0.0", "0.1", "0.0", "0.014%", "-", "-", "0", as_of, "Kill switch"]],
       "points table")
    # Styled as the other warning state (a host behind the version).
    eq(b.js("""[...document.querySelectorAll('#points tbody tr td:nth-child(2) span.warn')].map(
               (s) => [s.textContent, getComputedStyle(s).color])"""),
       [["downgrading 2%", "rgb(180, 83, 9)"], ["suspended: overhead", "rgb(180, 83, 9)"]],
       "colour of the warning states")
    check(b.js("Chart.getChart(document.querySelectorAll('.chartcard[data-point=\"order\"] canvas')[1])"
               ".data.datasets[2].data.some(v => v > 0)"), "p99 latency drawn")
    adaptive_shown(b)


def deps_shown(b):
    """The Dependencies panel: order's two peers summed over the hosts
    that sent them, heaviest first, the class unknown."""
    rows_js = """[...document.querySelectorAll('#deps tbody tr')].map(
        (tr) => [...tr.cells].map((td) => td.textContent))"""
    b.wait_js("document.querySelectorAll('#deps tbody tr').length == 2", what="deps rows")
    eq(b.js(rows_js),
       [["order", "10.0.0.5:5432", "tcp", "2", "4", "0", "42", "1", "0", "unknown"],
        ["", "[::1]:6379", "tcp", "1", "2", "2", "0", "0", "0", "unknown"]],
       "dependencies table")
    check(b.js("document.getElementById('deps-sum').textContent").startswith(
        "since each loader attached, from 2 hosts"), "deps' summary")


def adaptive_shown(b):
    """order's adaptive limit on its chart card: summed, then per host
    once the card is broken down by host; pay (not adaptive) says none."""
    sum_js = "document.querySelector('.chartcard[data-point=\"%s\"] .sum').textContent"
    total = "limit 65 (adaptive, sum of 2 hosts), steering by up to 4.00 ms"
    got = b.wait_js("(() => { const t = %s; return t.includes('limit') ? t : ''; })()"
                    % (sum_js % "order"), what="the limit on order's card")
    check(got.endswith(" · " + total), "order's card: %r" % got)
    check("limit" not in b.js(sum_js % "pay"), "pay's card: %r" % b.js(sum_js % "pay"))
    b.js("document.querySelector('.chartcard[data-point=\"order\"] input.byhost').click()")
    hosts = ("web-1: limit 40 (adaptive), steering by 2.50 ms · "
             "web-2: limit 25 (adaptive), steering by 4.00 ms")
    got = b.wait_js("(() => { const t = %s; return t.includes('by host') ? t : ''; })()"
                    % (sum_js % "order"), what="order's card by host")
    check(got.endswith(" · by host: 2 · " + hosts), "order's card by host: %r" % got)
    b.js("document.querySelector('.chartcard[data-point=\"order\"] input.byhost').click()")
    b.wait_js("!(%s).includes('by host')" % (sum_js % "order"), what="order's card summed again")



def strategy_edited(b, env, now):
    """A strategy edited in the page reaches the API, the audit and the
    next heartbeat's reply."""
    b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
        e.dispatchEvent(new Event('change')); })()""" % json.dumps(TOKEN))
    b.js("""(() => {
        const set = (id, v) => { document.getElementById(id).value = v; };
        set('ed-point', 'order');
        set('f-visit_threshold', '123');
        set('f-downgrade_rate', '50');
        set('f-timeout_ms', '200');
        set('f-probe_calls', '5');
        set('f-probe_failure_pct', '20');
        set('f-slow_rate_threshold', '40');
        set('f-slow_rate_start', '30');
        set('ed-comment', 'from the dashboard');
        document.getElementById('ed-save').click(); })()""")
    deadline = time.time() + 20
    while time.time() < deadline:
        st, doc = env.req("GET", "/api/v1" + APP + "/schemes/default/strategies/order")
        if st == 200:
            break
        time.sleep(0.2)
    check(st == 200, "strategy never reached the API; page status: %r"
          % b.js("document.getElementById('status').textContent"))
    st = env.ok("GET", APP + "/schemes/default/strategies/order")
    eq(st, {"visit_threshold": 123, "downgrade_rate": 50, "timeout_ms": 200,
            "probe_calls": 5, "probe_failure_pct": 20, "slow_rate_threshold": 40,
            "slow_rate_start": 30}, "strategy saved from the page")
    eq(b.js("[document.getElementById('f-probe_calls').placeholder, "
            "document.getElementById('f-probe_failure_pct').placeholder, "
            "document.getElementById('f-slow_rate_threshold').placeholder]"),
       ["1", "0", "off"], "the defaults the editor shows")
    eq(env.ok("GET", APP + "/audit")[0]["comment"], "from the dashboard", "audit comment")
    b.wait_js("document.getElementById('ed-table').textContent.includes('123')",
              what="editor table updated")
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", now - 10, {"order": pt(1)}))
    eq(r["strategies"]["points"]["order"]["visit_threshold"], 123, "heartbeat gets the edit")



def drill_started_and_stopped(b, env, now):
    """A 60-s error drill started from the drill panel, then stopped
    there: each step in the API and in the heartbeat's reply."""
    b.js("""(() => {
        const set = (id, v) => { document.getElementById(id).value = v; };
        set('dr-point', 'order'); set('dr-kind', 'error'); set('dr-ratio', '30');
        set('dr-errno', 'ETIMEDOUT');
        set('dr-for', '60'); set('dr-by', 'ops from the page');
        set('dr-hosts-mode', 'hosts'); set('dr-hosts', 'web-1');
        set('dr-stop-field', 'exception_rate'); set('dr-stop-above', '0.3');
        set('dr-stop-window', '2');
        document.getElementById('dr-start').click(); })()""")
    deadline = time.time() + 20
    drills = []
    while time.time() < deadline and not drills:
        drills = env.ok("GET", APP + "/drills")
        time.sleep(0.2)
    check(len(drills) == 1, "drill never reached the API; page status: %r"
          % b.js("document.getElementById('status').textContent"))
    d = drills[0]
    eq((d["point"], d["kind"], d["ratio"], d["errno"], d["started_by"][:17]),
       ("order", "error", 30, "ETIMEDOUT", "ops from the page"),
       "drill started from the page")
    check(58 <= d["expires_at"] - d["created"] <= 60, "drill lasts 60 s")
    eq((d["hosts"], d["stop_when"]),
       (["web-1"], [{"field": "exception_rate", "above": 0.3, "window_s": 2.0}]),
       "the drill's hosts and stop condition from the page")
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(1)}))
    eq([x["id"] for x in r["drills"]], [d["id"]], "heartbeat carries the drill")
    b.wait_js("!!document.querySelector('#drills tbody button')", what="Stop button")
    b.js("document.querySelector('#drills tbody button').click()")
    deadline = time.time() + 20
    while time.time() < deadline and env.ok("GET", APP + "/drills")[0]["stopped_at"] is None:
        time.sleep(0.2)
    check(env.ok("GET", APP + "/drills")[0]["stopped_at"] is not None,
          "drill stopped from the page")
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", now + 10, {"order": pt(1)}))
    eq(r["drills"], [], "a stopped drill leaves the heartbeat")
    # The heartbeat of `now` came without the fields: the page clears the state.
    b.wait_js("""document.querySelector('#points tbody tr td:nth-child(2)').textContent == 'ok'
              && document.querySelector('#points tbody tr td:nth-child(9)').textContent
                 == '0.000%'""", what="suspension cleared in the points table")


def gamedays_run_and_aborted(b, env):
    """Two game days defined through the API: one run from the panel to
    its end (the last report's steps and the scheme switch shown), the
    other run and aborted from it; one saved from the panel's form."""
    GD = APP + "/gamedays"
    env.ok("POST", APP + "/schemes", {"name": "emergency"}, want=201)
    env.ok("POST", GD, {"name": "gd-page", "steps": [{"do": "wait", "for_s": 1},
                                                     {"do": "scheme", "scheme": "emergency"}]},
           want=201)
    env.ok("POST", GD, {"name": "gd-long", "steps": [{"do": "wait", "for_s": 60}]}, want=201)
    b.js("""(() => { document.getElementById('gd-name').value = 'gd-form';
        document.getElementById('gd-every').value = '7d';
        document.getElementById('gd-steps').value = '[{"do": "wait", "for_s": 2}]';
        document.getElementById('gd-save').click(); })()""")
    b.wait_js("document.querySelectorAll('#gamedays tbody tr').length == 3", timeout=30,
              what="three game days in the panel")
    g = env.ok("GET", GD + "/gd-form")
    eq((g["steps"], g["schedule"]["every_s"]), ([{"do": "wait", "for_s": 2}], 7 * 86400),
       "the game day saved from the panel")
    click = """(() => { const r = [...document.querySelectorAll('#gamedays tbody tr')]
        .find((tr) => tr.cells[0].textContent === '%s');
        r.cells[5].querySelector('button').click(); })()"""
    b.js(click % "gd-page")
    deadline = time.time() + 20
    while time.time() < deadline and not [r for r in env.ok("GET", GD + "/gd-page")["runs"]
                                          if r["result"] == "done"]:
        time.sleep(0.2)
    run = env.ok("GET", GD + "/gd-page")["runs"]
    eq([r["result"] for r in run], ["done"], "the run from the panel")
    eq(env.ok("GET", APP + "/active_scheme")["scheme"], "emergency", "the scheme it switched to")
    b.wait_js("""document.getElementById('gd-report').textContent.includes('gd-page run %d · done')
              && document.getElementById('gd-milestones').textContent.includes('scheme → emergency')
              && document.querySelectorAll('#gd-steps-table tr').length == 2"""
              % run[0]["run"], timeout=30, what="the last report in the panel")
    # The panel open, for the eye: build/test/admin/gameday.png.
    b.js("document.getElementById('p-gamedays').open = true;"
         "document.getElementById('p-gamedays').scrollIntoView()")
    screenshot(b, "gameday.png")
    b.js("document.getElementById('gd-by').value = 'ops'")
    b.js(click % "gd-long")
    b.wait_js("""[...document.querySelectorAll('#gamedays tbody tr')].some((tr) =>
              tr.cells[0].textContent === 'gd-long' && tr.cells[5].textContent.includes('Abort'))""",
              timeout=30, what="gd-long running in the panel")
    b.js(click % "gd-long")
    deadline = time.time() + 20
    while time.time() < deadline and env.ok("GET", GD + "/gd-long")["runs"][0]["ended_at"] is None:
        time.sleep(0.2)
    r = env.ok("GET", GD + "/gd-long")["runs"][0]
    check((r["result"] or "").startswith("aborted by ops (token "), "the abort from the panel: %r"
          % r)


def screenshot(b, name="dashboard.png"):
    """build/test/admin/@name, for the eye."""
    time.sleep(0.5)
    shot = b.call("Page.captureScreenshot", format="png")
    out = os.path.join(BUILD, "test", "admin")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "wb") as f:
        f.write(base64.b64decode(shot["data"]))
