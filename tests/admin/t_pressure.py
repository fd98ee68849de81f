# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Host pressure rules and points' priorities (docs/PRESSURE.md) through
the strategies API: stored, read back and cloned as written, in the
heartbeat's answer, never counted or listed as a point, and a point's
own PUT or DELETE that would leave a rule shedding nothing refused.
"""

from sdstest import eq
from admin_lib import APP, T0, heartbeat, pt, test

RULES = [
    {"resource": "cpu", "kind": "some", "above_pct": 40, "below_pct": 30,
     "for_ms": 5000, "clear_ms": 5000, "action": "downgrade",
     "priority": "low"},
    {"resource": "memory", "kind": "full", "above_pct": 5, "below_pct": 0,
     "for_ms": 1000, "clear_ms": 1000, "action": "limits",
     "limits": {"order": {"token_rate": 100, "token_bucket": 100,
                          "downgrade_rate": 100}}},
]


@test
def test_pressure_rules_stored(env):
    env.start_admin()
    env.ok("POST", "/groups", {"name": "demo"}, want=201)
    env.ok("POST", "/groups/demo/apps", {"name": "shop"}, want=201)
    body = {"points": {"report": {"priority": "low"}, "order": {}},
            "pressure": [{"resource": "cpu", "above_pct": 40, "for_ms": 5000,
                          "action": "downgrade"}, RULES[1]]}
    r = env.ok("PUT", APP + "/schemes/default/strategies", body)
    # The defaults written out: kind, below_pct, clear_ms, priority.
    eq(r["pressure"], RULES, "the rules as stored")
    eq(r["points"], {"report": {"priority": "low", "downgrade_rate": 100},
                     "order": {"downgrade_rate": 100}}, "the points")
    doc = env.ok("GET", APP + "/strategies")
    eq((doc["version"], doc["pressure"]), (2, RULES), "the active strategies")
    # The rules are no point: not counted, not listed.
    eq(env.ok("GET", APP + "/schemes/default")["points"], 2, "scheme's points")
    # A clone takes them along.
    s = env.ok("POST", APP + "/schemes", {"name": "storm", "clone_from": "default"},
               want=201)
    eq(s["points"], 2, "clone's points")
    eq(env.ok("GET", APP + "/schemes/storm/strategies")["pressure"], RULES,
       "the clone's rules")
    # The loader gets them in the heartbeat's answer.
    r = env.ok("POST", "/heartbeat", heartbeat("web-1", T0, {"order": pt(3)}))
    eq((r["version"], r["strategies"]["pressure"]), (2, RULES), "heartbeat answer")
    eq(env.ok("GET", APP + "/points"), ["order", "report"],
       "points (the rules' row is none)")
    # One point's strategy: its priority round-trips, others are kept.
    r = env.ok("PUT", APP + "/schemes/default/strategies/order",
               {"visit_threshold": 9, "priority": "high"})
    eq(r["strategy"], {"visit_threshold": 9, "priority": "high",
                       "downgrade_rate": 100}, "one point with a priority")
    eq(env.ok("GET", APP + "/strategies")["pressure"], RULES,
       "the rules after a point's PUT")
    # The only low point made normal, or deleted: rule 0 would shed nothing.
    msg = ("pressure rule 0: no point has priority \"low\": the rule would "
           "downgrade nothing")
    e = env.bad("PUT", APP + "/schemes/default/strategies/report", {})
    eq(e["error"], msg, "a PUT that drops the last low point")
    e = env.bad("DELETE", APP + "/schemes/default/strategies/report")
    eq(e["error"], msg, "a DELETE of the last low point")
    eq(env.ok("GET", APP + "/schemes/default/strategies/report"),
       {"priority": "low", "downgrade_rate": 100}, "the low point kept")
    eq(env.ok("GET", APP)["version"], 3, "version: only the accepted PUT counted")
    # Refused as the loader refuses them, one line naming the rule.
    e = env.bad("PUT", APP + "/schemes/default/strategies",
                {"points": {}, "pressure": [dict(RULES[1], above_pct=100)]})
    eq(e["error"], "pressure rule 0: above_pct must be an integer 0..99", "bad threshold")
    e = env.bad("PUT", APP + "/schemes/default/strategies",
                {"points": {}, "pressure": [dict(RULES[1], for_ms=100)]})
    eq(e["error"], "pressure rule 0: for_ms must be an integer 500..10000", "bad window")
    # Replaced without rules: none left.
    r = env.ok("PUT", APP + "/schemes/default/strategies", {"points": {"order": {}}})
    eq("pressure" in r, False, "no rules after a replace without them")
    env.stop_admin()
