# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The heartbeat's split (docs/SPLIT.md), stuck calls (docs/LIMITS.md) and
host pressure (docs/PRESSURE.md) through sds-admin: a point's split_*
summed per step and in the total, max_stuck and overload the highest
(a maximum is never summed), by host too; a host's pressure rules'
state and the admin's strategies it refused as its last heartbeat said
(GET hosts, GET refused, the fleet), a later heartbeat without them
clearing them; kept across a restart.
"""

import os
import time

from sdstest import check, eq
from admin_lib import APP, CHROMIUM, T0, heartbeat, pt, test
from chromium import Browser

B = T0 // 20 * 20

SPLIT = ("split_calls", "split_on_cpu_ns", "split_runqueue_ns", "split_blocked_ns")
KEYS = SPLIT + ("max_stuck", "overload")


def sp(visits, calls, cpu, rq, blk, stuck=0, overload=False):
    p = dict(pt(visits), split_calls=calls, split_on_cpu_ns=cpu,
             split_runqueue_ns=rq, split_blocked_ns=blk)
    if stuck:
        p["max_stuck"] = stuck
    if overload:
        p["overload"] = True
    return p


def series(env, frm, to, step=10):
    """{point: ({key: [per step]}, {key: total})} of GET stats."""
    s = env.ok("GET", APP + "/stats?from=%d&to=%d&step=%d" % (frm, to, step))
    return {n: ({k: p[k] for k in KEYS}, {k: p["total"][k] for k in KEYS})
            for n, p in s["points"].items()}


def by_host(env, frm, to, point="order"):
    s = env.ok("GET", APP + "/stats/hosts?from=%d&to=%d&step=10&point=%s" % (frm, to, point))
    return {h: {k: p["total"][k] for k in KEYS} for h, p in s["hosts"].items()}


def hosts(env):
    """{host: (pressure, refused)} of GET hosts."""
    return {h["host"]: (h["pressure"], h["refused"]) for h in env.ok("GET", APP + "/hosts")}


RULES = [{"firing": True, "fired": 3}, {"firing": False, "fired": 0}]
WHY = ("point 'order': concurrent_threshold needs a guard point"
       " (sds_enter/sds_should_downgrade) or :failfast= on this function point"
       " (docs/FAILFAST.md): a function point cannot hold its calls back")


@test
def test_split_stuck_overload(env):
    """Split sums, max_stuck and overload maxima, per step, total and host."""
    T0 = B     # noqa: N806 (a 20-s step holds its first two periods)
    env.start_admin()
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {
        "order": sp(10, 8, 4000, 1000, 250000, stuck=3), "pay": pt(2)}))
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0, {
        "order": sp(5, 4, 2000, 500, 125000, stuck=2, overload=True)}))
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {
        "order": sp(7, 6, 3000, 700, 1, stuck=1)}))
    # A repeat of (host, period) adds nothing.
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0, {
        "order": sp(5, 400, 2, 5, 1, stuck=90, overload=False)}))
    got = series(env, T0, T0 + 20)
    eq(got["order"], ({"split_calls": [12, 6], "split_on_cpu_ns": [6000, 3000],
                       "split_runqueue_ns": [1500, 700], "split_blocked_ns": [375000, 1],
                       "max_stuck": [3, 1], "overload": [1, 0]},
                      {"split_calls": 18, "split_on_cpu_ns": 9000,
                       "split_runqueue_ns": 2200, "split_blocked_ns": 375001,
                       "max_stuck": 3, "overload": 1}), "order by 10 s")
    eq(got["pay"][1], dict.fromkeys(KEYS, 0), "a point without them")
    # One 20-s step: the sums add, the maxima stay maxima (3, not 3 + 2 + 1).
    eq(series(env, T0, T0 + 20, step=20)["order"][0],
       {"split_calls": [18], "split_on_cpu_ns": [9000], "split_runqueue_ns": [2200],
        "split_blocked_ns": [375001], "max_stuck": [3], "overload": [1]}, "one 20-s step")
    eq(by_host(env, T0, T0 + 20),
       {"web-1": {"split_calls": 14, "split_on_cpu_ns": 7000, "split_runqueue_ns": 1700,
                  "split_blocked_ns": 250001, "max_stuck": 3, "overload": 0},
        "web-2": {"split_calls": 4, "split_on_cpu_ns": 2000, "split_runqueue_ns": 500,
                  "split_blocked_ns": 125000, "max_stuck": 2, "overload": 1}}, "by host")
    # The largest values the codec takes come back whole.
    env.ok("POST", "/heartbeat", heartbeat("web-3", T0 + 20, {
        "big": sp(1, 1 << 40, 1 << 53, 1 << 53, 1 << 53, stuck=1 << 40)}))
    eq(series(env, T0 + 20, T0 + 30)["big"][1],
       {"split_calls": 1 << 40, "split_on_cpu_ns": 1 << 53, "split_runqueue_ns": 1 << 53,
        "split_blocked_ns": 1 << 53, "max_stuck": 1 << 40, "overload": 0}, "the largest")
    # Bad values: 400 naming the field, nothing stored.
    for bad, field in (({"max_stuck": -1}, "points.order.max_stuck"),
                       ({"split_blocked_ns": (1 << 53) + 1}, "points.order.split_blocked_ns"),
                       ({"overload": 1}, "points.order.overload")):
        env.bad("POST", "/heartbeat", heartbeat("web-1", T0 + 30, {"order": dict(pt(1), **bad)}),
                field=field)
    eq(series(env, T0, T0 + 40)["order"][1]["max_stuck"], 3, "after bad heartbeats")
    env.stop_admin()
    env.start_admin()
    eq(series(env, T0, T0 + 20)["order"][1],
       {"split_calls": 18, "split_on_cpu_ns": 9000, "split_runqueue_ns": 2200,
        "split_blocked_ns": 375001, "max_stuck": 3, "overload": 1}, "after a restart")
    env.stop_admin()


@test
def test_host_pressure_and_refused(env):
    """A host's rules' state and refusals: its last heartbeat's, then cleared."""
    env.start_admin()
    hb = heartbeat("web-1", T0, {"order": pt(1)}, version=4)
    hb["pressure"] = RULES
    hb["refused"] = [{"version": 5, "point": "order", "reason": WHY}]
    env.ok("POST", "/heartbeat", hb)
    hb2 = heartbeat("web-2", T0, {"order": pt(1)}, version=4)
    hb2["refused"] = [{"version": 5, "point": "order", "reason": WHY},
                      {"version": 5, "reason": "pressure rule 0: this host cannot read PSI"}]
    env.ok("POST", "/heartbeat", hb2)
    env.ok("POST", "/heartbeat", heartbeat("web-3", T0, {"order": pt(1)}, version=4))
    ref1 = [{"version": 5, "point": "order", "reason": WHY}]
    eq(hosts(env), {"web-1": (RULES, ref1), "web-2": (None, hb2["refused"]),
                    "web-3": (None, [])}, "hosts")
    want = [{"point": "order", "version": 5, "reason": WHY, "hosts": ["web-1", "web-2"],
             "text": "refused on 2 hosts: " + WHY},
            {"point": None, "version": 5, "reason": "pressure rule 0: this host cannot read PSI",
             "hosts": ["web-2"],
             "text": "refused on 1 host: pressure rule 0: this host cannot read PSI"}]
    eq(env.ok("GET", APP + "/refused"), want, "refused")
    fleet = env.ok("GET", "/fleet?group=demo&app=shop")["groups"][0]["apps"][0]
    eq(fleet["refused"], want, "the fleet's refused")
    eq([(h["host"], h["pressure"]) for h in fleet["hosts"]],
       [("web-1", RULES), ("web-2", None), ("web-3", None)], "the fleet's hosts' pressure")
    # Kept across a restart, and by a repeat of (host, period) that says the same.
    env.stop_admin()
    env.start_admin()
    eq(env.ok("GET", APP + "/refused"), want, "after a restart")
    # web-1 accepted a later version: its next heartbeat has neither.
    env.ok("POST", "/heartbeat", heartbeat("web-1", T0 + 10, {"order": pt(1)}, version=6))
    eq(hosts(env)["web-1"], (None, []), "web-1 after accepting")
    eq([(e["hosts"], e["text"]) for e in env.ok("GET", APP + "/refused")],
       [(["web-2"], "refused on 1 host: " + WHY),
        (["web-2"], "refused on 1 host: pressure rule 0: this host cannot read PSI")],
       "refused after web-1 accepted")
    # Bad refusals: 400 naming the field, the host's kept.
    for bad, field in (([], "refused"),
                       ([{"version": 0, "reason": "x"}], "refused[0].version"),
                       ([{"version": 5, "reason": "a\nb"}], "refused[0].reason"),
                       ([{"version": 5, "reason": "x" * 201}], "refused[0].reason"),
                       ([{"version": 5, "point": "a b", "reason": "x"}], "refused[0].point"),
                       ([{"version": 5, "reason": "x", "why": 1}], "refused[0]"),
                       ([{"version": 5, "point": "p", "reason": "x"},
                         {"version": 6, "point": "p", "reason": "y"}], "refused[1]")):
        b = heartbeat("web-2", T0 + 10, {"order": pt(1)})
        b["refused"] = bad
        env.bad("POST", "/heartbeat", b, field=field)
    eq(len(hosts(env)["web-2"][1]), 2, "web-2 after bad heartbeats")
    env.ok("POST", "/heartbeat", heartbeat("web-2", T0 + 10, {"order": pt(1)}, version=6))
    eq(env.ok("GET", APP + "/refused"), [], "none left")
    env.stop_admin()


@test
def test_fields_dashboard(env):
    """The app's page: a point's split, max stuck and overload, a host's
    pressure rules and refusals, the refusal beside the strategy."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    env.ok("PUT", APP + "/schemes/default/strategies", {
        "points": {"order": {"concurrent_threshold": 8}, "report": {"priority": "low"}},
        "pressure": [{"resource": "cpu", "above_pct": 40, "for_ms": 5000,
                      "action": "downgrade"}]})
    version = env.ok("GET", APP + "/strategies")["version"]
    now = (int(time.time()) // 10) * 10
    # The newest period's split: 1 ms on a CPU, 3 ms queued, 6 ms blocked.
    hb = heartbeat("web-1", now - 10, {
        "order": sp(10, 4, 1000000, 3000000, 6000000, stuck=7, overload=True),
        "report": pt(2)}, version=version - 1)
    hb["pressure"] = [{"firing": True, "fired": 2}]
    hb["refused"] = [{"version": version, "point": "order", "reason": WHY}]
    env.ok("POST", "/heartbeat", hb)
    env.ok("POST", "/heartbeat", heartbeat("web-2", now - 10, {"order": pt(5)}, version=version))
    b = Browser(env)
    try:
        b.call("Emulation.setDeviceMetricsOverride", width=1600, height=1200,
               deviceScaleFactor=1, mobile=False)
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/demo/shop" % env.port)
        b.wait_event("Page.loadEventFired")
        b.wait_js("document.querySelectorAll('#points tbody tr').length == 2 && "
                  "document.querySelector('#points tbody').textContent.includes('refused')",
                  what="point rows")
        rows = b.js("""[...document.querySelectorAll('#points tbody tr')].map(
            (tr) => [tr.cells[0].textContent, [...tr.cells[1].firstChild.children].map((s) => s.textContent),
                     tr.cells[10].textContent, tr.cells[11].textContent])""")
        refusal = "version %d refused on 1 host: %s" % (version, WHY)
        eq(rows, [["order", ["overload: a pressure rule shed it", refusal],
                   "on-CPU 10.0% · run queue 30.0% · blocked 60.0%", "7"],
                  ["report", ["ok"], "-", "0"]], "points table")
        eq(b.js("""[...document.querySelectorAll('#points tbody tr:first-child .splitbar span')]
                   .map((s) => s.style.width)"""), ["10%", "30%", "60%"],
           "the split's bar (the browser writes 10.0% as 10%)")
        hosts = b.js("""[...document.querySelectorAll('#hosts tbody tr')].map(
            (tr) => [tr.cells[0].textContent, tr.cells[7].textContent, tr.cells[8].textContent])""")
        eq(hosts, [["web-1", "rule 0 (cpu some > 40%): firing, fired 2×",
                    "version %d order: %s" % (version, WHY)],
                   ["web-2", "-", "-"]], "hosts table")
        # Beside the strategy in the editor's table (the active scheme's).
        ed = b.wait_js("""(() => { const r = [...document.querySelectorAll('#ed-table tbody tr')]
            .find((tr) => tr.cells[0].textContent == 'order');
            return r ? r.cells[2].textContent : ''; })()""", what="the editor's table")
        eq(ed, refusal, "beside the strategy")
        # The fleet page: beside the app's version.
        b.js("location.hash = '#/'")
        got = b.wait_js("""(() => { const r = document.querySelector(
            'tr[data-app="demo/shop"] .refused'); return r ? r.textContent : ''; })()""",
                        what="the fleet's refusal")
        eq(got, "version %d order refused on 1 host: %s" % (version, WHY), "the fleet's refusal")
        b.js("location.hash = '#/app/demo/shop'")
        # web-1 takes the version: its next heartbeat has no refusal, the page none.
        env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(1)}, version=version))
        b.wait_js("!document.querySelector('#points tbody').textContent.includes('refused')",
                  what="the refusal cleared")
        eq(b.js("document.querySelector('#hosts tbody tr').cells[8].textContent"), "-",
           "web-1's refusals cleared")
        b.js("1")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()
