# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Hot keys (docs/KEYS.md) in sds-admin: a keyed point's heaviest keys from
each host's heartbeat (points.P.keys), stored per (host, period) and
served merged over hosts and periods by GET {A}/points/P/keys; a
duplicate heartbeat adds nothing, a key of raw bytes is refused, the
app's deletion and retention take them; key_overrides stored, returned
and sent to the loaders, bad ones refused with the codec's (the loader's)
one line; each key's p99 (the highest of its host periods'); the dashboard's hot-keys
panel in a real chromium (a screenshot kept at
build/test/admin/hotkeys.png).
"""

import base64
import json
import os
import sqlite3
import time

from sdstest import BUILD, check, eq
import admin_lib
from admin_lib import APP, CHROMIUM, TOKEN, heartbeat, pt, test
from chromium import Browser
from t_cockpit import wait_api


def key(k, kind, calls, exc=0, down=0, p99=0):
    d = {"key": k, "kind": kind, "calls": calls}
    if exc:
        d["exceptions"] = exc
    if down:
        d["downgrades"] = down
    if p99:
        d["p99_ns"] = p99
    return d


# A printable key that looks like markup: the dashboard shows its text.
MARKUP = "<b id=inj>x</b>"

# What each (host, period offset) sends for point "order": three periods
# of web-1, two of web-2; "7" hot everywhere, "0x00ff" (a buf key shown as
# hex) on web-2 only, "alice" in web-1's first period only.
# Each host period's p99 of a key (ns, a log2 bucket's upper end); "0x00ff"
# sends none (none of its calls completed: all were downgraded).
SENT = {
    ("web-1", 30): [key("7", "int", 900, 9, 100, 4095), key("alice", "str", 40, 1, 0, 1023)],
    ("web-1", 20): [key("7", "int", 800, 8, 0, 131071), key("11", "int", 50, 0, 0, 2047)],
    ("web-1", 10): [key("7", "int", 700, 7, 50, 8191), key("11", "int", 60, 2, 0, 4095)],
    ("web-2", 20): [key("7", "int", 300, 3, 0, 16383), key("0x00ff", "buf", 90, 0, 90)],
    ("web-2", 10): [key("0x00ff", "buf", 110, 0, 110), key("7", "int", 200, 0, 0, 2047),
                    key(MARKUP, "str", 5, 0, 0, 511)],
}


def expected(sent, periods):
    """The merge, computed from what was sent: summed per key, rates over
    @periods periods of 10 s, by calls then exceptions, descending; the
    highest p99 sent (None: none sent)."""
    m = {}
    for (host, _), keys in sent.items():
        for k in keys:
            e = m.setdefault((k["kind"], k["key"]), {
                "key": k["key"], "kind": k["kind"], "calls": 0, "exceptions": 0,
                "downgrades": 0, "hosts": set(), "p99_ns": None})
            e["calls"] += k["calls"]
            if k.get("p99_ns"):
                e["p99_ns"] = max(e["p99_ns"] or 0, k["p99_ns"])
            e["exceptions"] += k.get("exceptions", 0)
            e["downgrades"] += k.get("downgrades", 0)
            e["hosts"].add(host)
    out = []
    for e in sorted(m.values(), key=lambda e: (-e["calls"], -e["exceptions"],
                                                e["kind"], e["key"])):
        secs = periods * 10
        out.append({"key": e["key"], "kind": e["kind"], "calls": e["calls"],
                    "exceptions": e["exceptions"], "downgrades": e["downgrades"],
                    "calls_per_s": round(e["calls"] / secs, 3),
                    "exceptions_per_s": round(e["exceptions"] / secs, 3),
                    "downgrades_per_s": round(e["downgrades"] / secs, 3),
                    "hosts": len(e["hosts"]), "p99_ns": e["p99_ns"]})
    return out


def inside(got, now=None):
    """What SENT has in the reply's range [from, to), now @now (default: as posted)."""
    now = now if now is not None else POSTED[0]
    return {k: v for k, v in SENT.items() if got["from"] <= now - k[1] < got["to"]}


POSTED = [0]


def post_keys(env, now):
    POSTED[0] = now
    for (host, back), keys in sorted(SENT.items()):
        p = heartbeat(host, now - back, {"order": pt(1000), "pay": pt(5)})
        p["points"]["order"]["keys"] = keys
        env.ok("POST", "/heartbeat", p)


@test
def test_hot_keys_merged(env):
    env.start_admin()
    now = (int(time.time()) // 10) * 10
    post_keys(env, now)
    got = env.ok("GET", APP + "/points/order/keys?period=60")
    want = expected(inside(got), 3)
    eq(got["keys"], want, "the merged keys")
    eq((got["point"], got["period"], got["periods"], sorted(got["hosts"])),
       ("order", 60, 3, ["web-1", "web-2"]), "the range heard")
    eq(got["to"] - got["from"], 60, "the range's length")
    # The top two only.
    eq(env.ok("GET", APP + "/points/order/keys?period=60&top=2")["keys"], want[:2], "top=2")
    # The last 20 s (the two newest periods: now-20 is outside [now+10-20, now+10)).
    got = env.ok("GET", APP + "/points/order/keys?period=20")
    last = inside(got, now)
    eq(got["keys"], expected(last, len({b for _, b in last})), "period=20: the newest period")
    # The same heartbeat again adds nothing.
    p = heartbeat("web-1", now - 10, {"order": pt(1000)})
    p["points"]["order"]["keys"] = [key("7", "int", 99999)]
    env.ok("POST", "/heartbeat", p)
    eq(env.ok("GET", APP + "/points/order/keys?period=60")["keys"], want, "after a duplicate")
    # A point without keys, a point never heard: none.
    for point in ("pay", "nosuch"):
        r = env.ok("GET", APP + "/points/%s/keys" % point)
        eq((r["keys"], r["periods"], r["hosts"]), ([], 0, []), "%s's keys" % point)
    # Raw bytes are no key: the heartbeat is refused whole, nothing stored.
    p = heartbeat("web-3", now, {"order": pt(1)})
    p["points"]["order"]["keys"] = [key("a\u0001b", "buf", 5)]
    env.bad("POST", "/heartbeat", p, field="points.order.keys[0].key must be printable text")
    eq(sorted(env.ok("GET", APP + "/points/order/keys")["hosts"]), ["web-1", "web-2"],
       "web-3 stored nothing")
    # Bad arguments.
    for q, msg in (("period=15", "period must be a multiple of 10, 10..3600 (seconds)"),
                   ("period=0", "period must be a multiple of 10, 10..3600 (seconds)"),
                   ("period=3610", "period must be a multiple of 10, 10..3600 (seconds)"),
                   ("top=0", "top must be an integer 1..256"),
                   ("top=257", "top must be an integer 1..256")):
        eq(env.bad("GET", APP + "/points/order/keys?" + q)["error"], msg, q)
    env.bad("GET", APP + "/points/b%21d/keys", field="point")
    env.bad("GET", "/groups/demo/apps/nosuch/points/order/keys", want=404)
    env.bad("POST", APP + "/points/order/keys", {}, want=405)
    # The app deleted takes its keys along; registered again, none.
    env.ok("DELETE", APP)
    env.ok("POST", "/heartbeat", heartbeat("web-1", now, {"order": pt(1)}))
    eq(env.ok("GET", APP + "/points/order/keys")["keys"], [], "after the app's deletion")
    env.stop_admin()


@test
def test_key_overrides_refused(env):
    """Bad key_overrides: 400 and the codec's one line (the loader's,
    common/strategy.c), in a whole document's PUT and a point's; nothing
    stored, no version."""
    env.start_admin()
    env.ok("POST", "/groups", {"name": "demo"}, want=201)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    env.ok("PUT", APP + "/schemes/default/strategies", {"points": {"order": {"visit_threshold": 5}}})
    lim = {"key_visit_threshold": 100}
    many = {str(i): {"key_visit_threshold": 5} for i in range(1025)}
    cases = [
        (many, "point 'order': key_overrides: 1025 keys (at most 1024)"),
        ({"": {"key_token_rate": 5}}, "point 'order': key_overrides: an empty key"),
        ({"k" * 65: {"key_token_rate": 5}},
         "point 'order': key_overrides: key '%s...' is 65 bytes (at most 64)" % ("k" * 32)),
        ({"7": {"key_rate": 5}},
         "point 'order': key_overrides '7': unknown field 'key_rate'; an override has "
         "key_visit_threshold, key_token_rate, key_token_bucket"),
        ({"7": {"key_token_rate": 0}},
         "point 'order': key_overrides '7': key_token_rate must be an integer 1..1000000000"
         " (negative: off for this key)"),
        ({"7": {"key_token_rate": "5"}},
         "point 'order': key_overrides '7': key_token_rate must be an integer 1..1000000000"
         " (negative: off for this key)"),
        ({"7": {"key_token_bucket": 5}},
         "point 'order': key_overrides '7': key_token_bucket needs key_token_rate"),
        # A key or field of any bytes: the line stays one line of text.
        ({"a\nb": {"x\u0007": 5}},
         "point 'order': key_overrides 'a?b': unknown field 'x?'; an override has "
         "key_visit_threshold, key_token_rate, key_token_bucket"),
        ({"7": 5}, "point 'order': key_overrides '7': expected an object of "
         "key_visit_threshold, key_token_rate, key_token_bucket"),
        ([], "point 'order': key_overrides must be an object of key -> "
         "{key_visit_threshold, key_token_rate, key_token_bucket}"),
    ]
    for ov, msg in cases:
        body = dict(lim, key_overrides=ov)
        e = env.bad("PUT", APP + "/schemes/default/strategies", {"points": {"order": body}})
        eq((e["error"], "\n" in e["error"]), (msg, False), "document PUT: %.60s" % msg)
        e = env.bad("PUT", APP + "/schemes/default/strategies/order", body)
        eq(e["error"], msg, "point PUT: %.60s" % msg)
    eq(env.ok("GET", APP + "/schemes/default/strategies")["points"],
       {"order": {"visit_threshold": 5, "downgrade_rate": 100}}, "the strategies kept")
    eq(env.ok("GET", APP)["version"], 2, "no version for a refusal")
    env.stop_admin()


def strategies_sent(env, host="web-1"):
    """What a loader at version 0 is sent: the reply's strategies."""
    now = (int(time.time()) // 10) * 10
    r = env.ok("POST", "/heartbeat", heartbeat(host, now, {"order": pt(1)}))
    eq(r["changed"], True, "a loader at version 0 is sent the strategies")
    return r["strategies"]


@test
def test_key_overrides_stored(env):
    """key_overrides stored (a point's PUT and a whole document's), returned
    by every GET, sent to the loaders in the heartbeat's reply, kept across
    a restart; 1,024 keys a point stored whole, a 4,097th key of the
    document refused with the loader's line and nothing stored; an
    override removed by a PUT without it."""
    env.start_admin()
    env.ok("POST", "/groups", {"name": "demo"}, want=201)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    order = {"key_token_rate": 100, "key_overrides": {
        "7": {"key_token_rate": 1000}, "alice": {"key_token_rate": 5, "key_token_bucket": 10},
        "vip": {"key_token_rate": -1}, "k" * 64: {"key_visit_threshold": 50}}}
    # What the codec gives back: a negative is "off" (-1), an override's
    # bucket left out with a rate of its own stays out, the point's
    # defaults added (its bucket: its rate).
    want = {"key_token_rate": 100, "key_token_bucket": 100, "downgrade_rate": 100, "key_overrides": {
        "7": {"key_token_rate": 1000}, "alice": {"key_token_rate": 5, "key_token_bucket": 10},
        "vip": {"key_token_rate": -1}, "k" * 64: {"key_visit_threshold": 50}}}
    r = env.ok("PUT", APP + "/schemes/default/strategies/order", order)
    eq((r["point"], r["strategy"], r["version"]), ("order", want, 2), "the point's PUT reply")
    eq(env.ok("GET", APP + "/schemes/default/strategies/order"), want, "GET the point")
    eq(env.ok("GET", APP + "/schemes/default/strategies")["points"], {"order": want},
       "GET the document")
    eq(strategies_sent(env)["points"], {"order": want}, "sent to a loader")
    # A second point beside it: each keeps its own.
    pay = {"key_visit_threshold": 10, "key_overrides": {"9": {"key_visit_threshold": 20}}}
    pay_want = dict(pay, downgrade_rate=100)
    env.ok("PUT", APP + "/schemes/default/strategies/pay", pay)
    eq(env.ok("GET", APP + "/schemes/default/strategies")["points"],
       {"order": want, "pay": pay_want}, "two points' overrides")
    # Keys of any UTF-8 text: stored and returned as sent, even where the
    # audit's detail (the body cut at 200 bytes) would cut one in two.
    # Three points' names a byte apart: one of them puts the cut inside a
    # key's three-byte character.
    utf = {"key_token_rate": 10, "key_overrides": {
        "\u7528\u6237\u7528\u6237-%02d" % i: {"key_token_rate": i + 1} for i in range(30)}}
    for point in ("u", "ux", "uxx"):
        r = env.ok("PUT", APP + "/schemes/default/strategies/" + point, utf)
        eq(r["strategy"]["key_overrides"], utf["key_overrides"], "UTF-8 keys stored")
        eq(env.ok("GET", APP + "/schemes/default/strategies/" + point)["key_overrides"],
           utf["key_overrides"], "UTF-8 keys returned")
        a = env.ok("GET", APP + "/audit")[0]
        check(a["action"] == "strategy.put" and
              a["detail"].startswith("default: %s {" % point), "the audit's detail: %r" % a)
        env.ok("DELETE", APP + "/schemes/default/strategies/" + point)
    # Kept across a restart (the store, not a cache).
    env.stop_admin()
    env.start_admin()
    eq(env.ok("GET", APP + "/schemes/default/strategies")["points"],
       {"order": want, "pay": pay_want}, "after a restart")
    eq(strategies_sent(env, "web-2")["points"], {"order": want, "pay": pay_want},
       "sent after a restart")
    # A whole document: 1,024 keys a point, four points: 4,096 in all.
    big = {"p%d" % p: {"key_token_rate": 100, "key_overrides": {
        "%d" % (p * 10000 + i): {"key_token_rate": i + 1} for i in range(1024)}}
        for p in range(4)}
    r = env.ok("PUT", APP + "/schemes/default/strategies", {"points": big})
    got = env.ok("GET", APP + "/schemes/default/strategies")["points"]
    eq(sorted(got), ["p0", "p1", "p2", "p3"], "the document's points")
    for p in range(4):
        eq(got["p%d" % p]["key_overrides"], big["p%d" % p]["key_overrides"],
           "p%d's 1,024 overrides" % p)
    sent = strategies_sent(env, "web-3")["points"]
    eq(sum(len(v["key_overrides"]) for v in sent.values()), 4096, "4,096 overrides sent")
    version = env.ok("GET", APP)["version"]
    # One more key in a fifth point: over the document's 4,096.
    e = env.bad("PUT", APP + "/schemes/default/strategies/p4",
                {"key_token_rate": 5, "key_overrides": {"x": {"key_token_rate": 1}}})
    eq(e["error"], "point 'p4': key_overrides: more than 4096 keys in all points",
       "a 4,097th key")
    eq((sorted(env.ok("GET", APP + "/schemes/default/strategies")["points"]),
        env.ok("GET", APP)["version"]), (["p0", "p1", "p2", "p3"], version),
       "nothing stored")
    # Replacing a point's 1,024 by one stays within the bound.
    r = env.ok("PUT", APP + "/schemes/default/strategies/p0",
               {"key_token_rate": 100, "key_overrides": {"x": {"key_token_rate": 1}}})
    eq(r["strategy"]["key_overrides"], {"x": {"key_token_rate": 1}}, "p0 replaced")
    # The override removed: a PUT without key_overrides.
    r = env.ok("PUT", APP + "/schemes/default/strategies/p0", {"key_token_rate": 100})
    eq(r["strategy"], {"key_token_rate": 100, "key_token_bucket": 100, "downgrade_rate": 100},
       "p0's override gone")
    eq("key_overrides" in env.ok("GET", APP + "/schemes/default/strategies/p0"), False,
       "GET p0: no overrides")
    env.stop_admin()


@test
def test_hot_keys_dashboard(env):
    """The point's card shows its hot keys: key, kind, calls/s, errors/s,
    downgrades/s and hosts, as text (hex for bytes), a point without none."""
    check(os.path.exists(CHROMIUM), "%s missing: run make deps" % CHROMIUM)
    env.start_admin()
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    now = (int(time.time()) // 10) * 10
    post_keys(env, now)
    want = expected(SENT, 3)
    b = Browser(env)
    try:
        b.call("Page.navigate", url="http://127.0.0.1:%d/#/app/demo/shop" % env.port)
        b.wait_event("Page.loadEventFired")
        b.wait_js("""(() => { const t = document.querySelector(
            '.chartcard[data-point="order"] .hotkeys tbody');
            return t && t.rows.length == %d; })()""" % len(want), what="order's hot keys")
        rows = b.js("""[...document.querySelectorAll(
            '.chartcard[data-point="order"] .hotkeys tbody tr')].map(
            (tr) => [...tr.cells].map((c) => c.textContent))""")
        eq(rows, [[k["key"], k["kind"], "%.1f" % k["calls_per_s"], "%.1f" % k["exceptions_per_s"],
                   "%.1f" % k["downgrades_per_s"], str(k["calls"]), str(k["hosts"]),
                   fmt_ns(k["p99_ns"]), "-" if k["kind"] == "buf" else "cap"]
                  for k in want], "order's hot keys table")
        eq(b.js("document.getElementById('inj')"), None, "a key is text, never markup")
        cap = b.js("""document.querySelector('.chartcard[data-point="order"] .hotkeys .sum')
                      .textContent""")
        eq(cap, "hot keys, last 60 s: 3 periods from 2 hosts (each host's 10 heaviest a period)",
           "the panel's caption")
        eq(b.js("""document.querySelector('.chartcard[data-point="pay"] .hotkeys').hidden"""),
           True, "pay has no keys: no panel")
        # build/test/admin/hotkeys.png, for the eye: order's card.
        b.js("""document.querySelector('.chartcard[data-point="order"]').scrollIntoView()""")
        time.sleep(0.3)
        shot = b.call("Page.captureScreenshot", format="png")
        os.makedirs(os.path.join(BUILD, "test", "admin"), exist_ok=True)
        with open(os.path.join(BUILD, "test", "admin", "hotkeys.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        cap_from_dashboard(env, b, now)
        b.js("1")
        check(not b.errors, "console errors: %s" % "; ".join(b.errors))
    finally:
        b.close()
    env.stop_admin()


def fmt_ns(ns):
    """The dashboard's fmtNs of a p99 (None: "-")."""
    if ns is None:
        return "-"
    if ns >= 1e9:
        return "%.2f s" % (ns / 1e9)
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.1f \u00b5s" % (ns / 1e3)
    return "%d ns" % ns


ROW = """document.querySelector('.chartcard[data-point="order"] .hotkeys tr[data-key="%s"]')"""


def confirm(b, comment):
    b.wait_js("document.getElementById('ks-dialog').open", what="confirmation")
    b.js("document.getElementById('ks-comment').value = %s" % json.dumps(comment))
    b.js("document.getElementById('ks-confirm').click()")
    b.wait_js("!document.getElementById('ks-dialog').open", what="dialog closed")


def cap_typed(b, rate):
    """Type @rate in 7's cap input and click its button, in one task of the
    page: a refresh that redraws the panel cannot come between them (it
    did, beside other suites: the click then found an empty input)."""
    b.js("(() => { const r = " + ROW % "7" + "; r.querySelector('input.caprate').value = %s;"
         " r.querySelector('button.capkey').click(); })()" % json.dumps(rate))


def cap_from_dashboard(env, b, now):
    """An operator caps key 7 of order at 50/s from its hot-keys row: the
    active scheme's strategy of order gets key_overrides {"7":
    {"key_token_rate": 50}}, its other settings kept, audited, sent in the
    next heartbeat's reply; the row says the cap; removed again, the
    override goes and the point's own limits stay."""
    env.ok("PUT", APP + "/schemes/default/strategies/order", {"key_token_rate": 500})
    b.js("""(() => { const e = document.getElementById('token'); e.value = %s;
        e.dispatchEvent(new Event('change')); })()""" % json.dumps(TOKEN))
    v0 = env.ok("GET", APP)["version"]
    # A cap that is no whole number is refused on the page: nothing written.
    b.wait_js("!!" + ROW % "7" + ".querySelector('input.caprate')", what="7's cap input")
    cap_typed(b, "0")
    b.wait_js("document.getElementById('error').textContent.includes('a cap is a whole number')",
              what="a cap of 0 refused")
    cap_typed(b, "50")
    confirm(b, "user 7 floods order")
    doc = wait_api(env, APP + "/strategies", lambda d: "key_overrides" in d["points"].get("order", {}),
                   "the cap stored")
    eq(doc["points"]["order"], {"key_token_rate": 500, "key_token_bucket": 500, "downgrade_rate": 100,
                                "key_overrides": {"7": {"key_token_rate": 50}}}, "capped")
    eq(doc["version"], v0 + 1, "one new version")
    a = env.ok("GET", APP + "/audit")[0]
    eq((a["action"], a["comment"]), ("strategy.put", "user 7 floods order"), "audited")
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", now + 10, {"order": pt(1)}))
    eq(r["strategies"]["points"]["order"]["key_overrides"], {"7": {"key_token_rate": 50}},
       "the hosts get the cap")
    b.wait_js(ROW % "7" + ".cells[8].textContent == '50/s remove cap'", what="7's row says its cap")
    b.js(ROW % "7" + ".querySelector('button.uncap').click()")
    confirm(b, "user 7 calm again")
    doc = wait_api(env, APP + "/strategies",
                   lambda d: "key_overrides" not in d["points"].get("order", {}), "the cap removed")
    eq(doc["points"]["order"], {"key_token_rate": 500, "key_token_bucket": 500,
                                "downgrade_rate": 100}, "cap removed")
    b.wait_js("!!" + ROW % "7" + ".querySelector('button.capkey')", what="7 cappable again")


def hot_key_periods(env):
    """The periods of the store's hot_keys rows, sorted, whichever engine."""
    q = "SELECT period_start FROM hot_keys ORDER BY period_start"
    if admin_lib.STORE == "pg":
        out = admin_lib.PG.sql(env.db_arg().rsplit("/", 1)[1], q)
        return [int(x) for x in out.split()]
    c = sqlite3.connect(os.path.join(env.tmp, "sds.db"), timeout=10)
    try:
        return [r[0] for r in c.execute(q)]
    finally:
        c.close()


@test
def test_hot_keys_retention(env):
    """Hot keys go with the statistics of their period: kept with
    --retention-days 0, those older than 30 days gone with 30 (PostgreSQL
    drops their day's partition)."""
    env.start_admin()
    now = (int(time.time()) // 10) * 10
    old = now - 40 * 86400
    for p in (old, now - 10):
        b = heartbeat("web-1", p, {"order": pt(10)})
        b["points"]["order"]["keys"] = [key("7", "int", 10)]
        env.ok("POST", "/heartbeat", b)
    env.stop_admin()
    eq(hot_key_periods(env), [old, now - 10], "stored")
    env.start_admin("--retention-days", "0")
    env.stop_admin()
    eq(hot_key_periods(env), [old, now - 10], "kept with 0")
    env.start_admin("--retention-days", "30")
    eq([k["calls"] for k in env.ok("GET", APP + "/points/order/keys")["keys"]], [10],
       "the recent period's key still served")
    env.stop_admin()
    eq(hot_key_periods(env), [now - 10], "after retention of 30 days")
