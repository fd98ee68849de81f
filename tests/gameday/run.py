#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Game days (issue 38; docs/GAMEDAY.md): a named plan of steps run by
sds-admin's scheduler against real `sds-bpf attach --admin` loaders as
hosts of their own (tests/drillfleet's harness: own UTS namespaces, run,
state and pin directories, each on its own copy of tests/drill/drillapp).

  five_steps_against_loaders   two hosts calling every 4 ms; the default
      scheme trips the point at an exception rate of 40 %, scheme
      "emergency" has no strategy.  The game day: an error drill (ratio
      100), a wait until the point's downgrades are above 0 over 10 s, the
      scheme switched to emergency, a wait of 5 s, the drill stopped.  Its
      steps ran in that order, each started when the one before ended,
      the first within a tick and a margin of the run; the wait ended
      after the period of the trip the loaders' events date, and at most
      a heartbeat's offset, a tick and a margin after that period was
      stored; the 5-s wait took 5 s to 5 s and two ticks.  The report's
      fault began in the period the drill first failed calls in, the first
      trip is the period and point of the loaders' `started` event, the
      switch is the scheme step's end and the app's new version (in force
      on both loaders), the recovery is the period after the one the
      loaders ended the drill in.  The audit log holds the run's writes in
      order; the drill's row is the game day's, started and stopped
      within its steps.
  abort_stops_what_it_started   on PostgreSQL: a run of a drill and a
      5-minute wait aborted: it ends "aborted by ..." within 3 s, and the
      drill it started is stopped (on the host too, calls pass again);
      a second run while one runs is refused (400, one line), nothing
      started
  schedule_keeps_last_reports(_pg)   on SQLite and on PostgreSQL: a game
      day every 10 s, keeping 2: three
      runs 10 s apart (a tick of margin), started by the schedule, only
      the last two kept; a copy step starts the named plan again with its
      settings and the run's end stops it; a due run while another game
      day runs on the app is recorded as skipped, with why
  two_admins_one_run_per_due_time   two admins of one PostgreSQL, both
      ticking: three due times, three runs, each advanced once
  bad_input   steps naming a copy plan or a scheme the app does not have,
      a drill the drills API would refuse, malformed steps and schedules:
      each a 400 of one line, nothing stored, nothing audited

Run as root:  python3 tests/gameday/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "drillfleet", os.path.join(os.path.dirname(HERE), "drillfleet", "run.py"))
df = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(df)
e2e = df.e2e
import pgtest  # noqa: E402  (tests/lib, on sys.path through drillfleet)
import sdstest  # noqa: E402
from sdstest import SDS, check, eq, log  # noqa: E402

A = df.A
POINT = df.POINT
GD = A + "/gamedays"
TICK = 1.0          # --gameday-tick-ms's default
P = 10              # the stored statistics' period
MARGIN = 3.0        # a loaded 2-core box

SUITE = sdstest.Suite(timeout=300)
test = SUITE.test


def floor(t):
    return int(t) // P * P


def gameday(a, name):
    return a.ok("GET", GD + "/" + name)


def wait_ended(a, name, run, deadline_s):
    def ended():
        for r in gameday(a, name)["runs"]:
            if r["run"] == run and r["ended_at"] is not None:
                return r
        return None
    return e2e.wait_until(ended, time.time() + deadline_s,
                          lambda _: "run %d of %s not ended within %d s: %r"
                          % (run, name, deadline_s, gameday(a, name)["runs"]))


def events(h, reason, event):
    return [e for e in h.events() if e.get("reason") == reason and e.get("event") == event
            and e.get("point") == POINT]


BREAKER = {"exception_rate_threshold": 40, "exception_rate_start": 20,
           "delay_ms": 60000, "retry_interval_ms": 60000, "downgrade_rate": 100}


@test
def five_steps_against_loaders(ctx):
    a, hosts = df.fleet(ctx, ["host-a", "host-b"])
    a.ok("PUT", A + "/schemes/default/strategies/" + POINT, BREAKER)
    a.ok("POST", A + "/schemes", {"name": "emergency"}, want=201)
    steps = [
        {"do": "drill", "drill": {"point": POINT, "kind": "error", "ratio": 100,
                                  "duration_s": 300}},
        {"do": "wait", "until": {"point": POINT, "field": "downgrades", "above": 0,
                                 "window_s": 10}, "timeout_s": 90},
        {"do": "scheme", "scheme": "emergency"},
        {"do": "wait", "for_s": 5},
        {"do": "stop", "step": 0},
    ]
    d = a.ok("POST", GD, {"name": "weekly", "steps": steps, "by": "test"}, want=201)
    eq((d["name"], d["steps"], d["schedule"], d["keep"], d["running"]),
       ("weekly", steps, None, 10, None), "the game day stored")
    v0 = a.ok("GET", A + "/active_scheme")["version"]
    e2e.wait_until(lambda: all(h.stats().get("strategies_version") == v0 for h in hosts)
                   or None, time.time() + 25,
                   lambda _: "version %d not on the loaders" % v0)
    # 15,000 calls each, one every 4 ms: 60 s, through the whole game day.
    for h in hosts:
        h.send("run 15000 enter every_us=4000")
    time.sleep(1.5)
    t_run = time.time()
    r = a.ok("POST", GD + "/weekly/run", {"by": "test"}, want=201)
    run = r["run"]
    row = wait_ended(a, "weekly", run, 70)
    log("run: %s" % json.dumps(row))
    eq(row["result"], "done", "the run's result")
    recs = row["state"]["steps"]
    eq([x["do"] for x in recs], ["drill", "wait", "scheme", "wait", "stop"], "the steps' order")
    for i, x in enumerate(recs):
        eq(x["result"], "ok", "steps[%d]'s result" % i)
        check(x["started_at"] <= x["ended_at"], "steps[%d] ended before it started: %r" % (i, x))
        if i:
            check(recs[i - 1]["ended_at"] <= x["started_at"] <= recs[i - 1]["ended_at"] + 0.1,
                  "steps[%d] did not start when steps[%d] ended: %r" % (i, i - 1, recs))
    check(t_run - 0.5 <= recs[0]["started_at"] <= t_run + TICK + MARGIN,
          "the drill started %.2f s after the run was asked" % (recs[0]["started_at"] - t_run))
    # The loaders' own dates: the trip, and the drill's end.
    trip = min(e["time_ms"] for h in hosts for e in events(h, "exception_rate", "started")) / 1e3
    ended = max(e["time_ms"] for h in hosts for e in events(h, "drill", "ended")) / 1e3
    log("trip at %.3f, drill ended at %.3f; steps %r" % (trip, ended, recs))
    w = recs[1]
    check(floor(trip) + P <= w["ended_at"] <= floor(trip) + P + 9 + TICK + MARGIN,
          "the wait ended %.2f s after the trip's period ended (its heartbeat comes 2 s "
          "after)" % (w["ended_at"] - floor(trip) - P))
    check(w["value"] > 0, "the wait's value: %r" % w)
    took = recs[3]["ended_at"] - recs[3]["started_at"]
    check(5.0 <= took <= 5.0 + 2 * TICK + MARGIN, "the 5-s wait took %.2f s" % took)
    eq(recs[2]["scheme_before"], "default", "the scheme before")
    eq(recs[2]["scheme"], "emergency", "the scheme after")
    v = a.ok("GET", A + "/active_scheme")
    eq((v["scheme"], v["version"]), ("emergency", recs[2]["version"]), "the app's scheme")
    eq(recs[2]["version"], v0 + 1, "the version after the switch")
    for h in hosts:
        eq(h.stats().get("strategies_version"), v0 + 1, h.name + ": the version in force")
    eq(recs[4]["stops"], [{"drill": recs[0]["drill"]}], "what the stop step stopped")
    dr = [x for x in a.ok("GET", A + "/drills") if x["id"] == recs[0]["drill"]][0]
    who = "game day weekly run %d (token gameday)" % run
    eq((dr["started_by"], dr["stopped_by"], dr["ratio"]), (who, who, 100), "the drill's row")
    check(int(recs[0]["started_at"]) - 1 <= dr["created"] <= recs[0]["ended_at"] + 1,
          "the drill's created %r, the step %r" % (dr["created"], recs[0]))
    check(int(recs[4]["started_at"]) - 1 <= dr["stopped_at"] <= recs[4]["ended_at"] + 1,
          "the drill's stopped_at %r, the step %r" % (dr["stopped_at"], recs[4]))
    check(recs[4]["ended_at"] - 0.5 <= ended <= recs[4]["ended_at"] + MARGIN,
          "the loaders ended the drill %.2f s after the stop step" % (ended - recs[4]["ended_at"]))

    # The report: the recovery's period is stored a heartbeat after it ends.
    def report():
        rep = a.ok("GET", GD + "/weekly/reports/%d" % run)
        return rep if rep["recovered"] else None
    rep = e2e.wait_until(report, time.time() + 3 * P + MARGIN,
                         lambda _: "no recovery in the report: %r"
                         % a.ok("GET", GD + "/weekly/reports/%d" % run))
    log("report: %s" % json.dumps(rep))
    eq(rep["steps"], recs, "the report's steps")
    eq((rep["run"], rep["gameday"], rep["result"], rep["error"]), (run, "weekly", "done", None),
       "the report's run")
    check(rep["started_by"].startswith("test (token fnv:"), "started_by %r" % rep["started_by"])
    first = rep["fault"]["first_period"]
    check(first in (floor(recs[0]["ended_at"]), floor(recs[0]["ended_at"]) + P),
          "the fault's first period %r, the drill stored at %.3f" % (first, recs[0]["ended_at"]))
    eq((rep["fault"]["step"], rep["fault"]["drill"], rep["fault"]["at"]),
       (0, recs[0]["drill"], recs[0]["ended_at"]), "the report's fault")
    eq(rep["first_trip"]["period_start"], floor(trip), "the first trip's period")
    eq(rep["first_trip"]["point"], POINT, "the point that tripped")
    check(rep["first_trip"]["downgrades"] > 0, "the trip's downgrades")
    eq(rep["scheme_switch"], {"step": 2, "at": recs[2]["ended_at"], "scheme": "emergency",
                              "version": v0 + 1}, "the report's switch")
    eq(rep["recovered"], {"period_start": floor(ended) + P}, "the recovery's period")
    eq(rep["took_s"]["fault_to_trip"], floor(trip) - first, "took_s.fault_to_trip")
    eq(rep["took_s"]["fault_to_recovered"], floor(ended) + P - first,
       "took_s.fault_to_recovered")
    check(abs(rep["took_s"]["trip_to_switch"] - (recs[2]["ended_at"] - floor(trip))) < 1e-6,
          "took_s.trip_to_switch %r" % rep["took_s"])
    eq(a.ok("GET", GD + "/weekly/reports"), [rep], "the reports kept")
    acts = [x["action"] for x in reversed(a.ok("GET", A + "/audit"))]
    i = acts.index("gameday.run")
    eq(acts[i:], ["gameday.run", "drill.start", "scheme.activate", "drill.stop", "gameday.end"],
       "the audit log from the run on")
    res = {h.name: h.answer() for h in hosts}
    log("calls: %r" % res)
    for h in hosts:
        eq(res[h.name]["pass"] + res[h.name]["fault"] + res[h.name]["down"], 15000,
           h.name + ": calls")
        check(res[h.name]["fault"] > 0 and res[h.name]["down"] > 0,
              h.name + ": faults and downgrades: %r" % res[h.name])
        eq(h.drill(), None, h.name + ": its drill")
        after = h.run("run 200 enter")
        eq((after["pass"], after["fault"], after["down"]), (200, 0, 0), h.name + ": calls after")


@test
def abort_stops_what_it_started(ctx):
    a, hosts = df.fleet(ctx, ["host-a"], pg=True)
    h = hosts[0]
    steps = [{"do": "drill", "drill": {"point": POINT, "kind": "error", "ratio": 100,
                                       "duration_s": 600}},
             {"do": "wait", "for_s": 300}]
    a.ok("POST", GD, {"name": "long", "steps": steps}, want=201)
    a.ok("POST", GD, {"name": "other", "steps": [{"do": "wait", "for_s": 1}]}, want=201)
    run = a.ok("POST", GD + "/long/run", {"by": "test"}, want=201)["run"]

    def waiting():
        r = gameday(a, "long")["runs"][0]
        s = (r["state"] or {}).get("steps") or []
        return r if len(s) == 2 and s[1]["started_at"] else None
    r = e2e.wait_until(waiting, time.time() + TICK + MARGIN + 5,
                       lambda _: "the wait never started: %r" % gameday(a, "long"))
    drill_id = r["state"]["steps"][0]["drill"]
    eq(gameday(a, "long")["running"], run, "the game day's running run")
    df.wait_drill([h], drill_id)
    busy = h.run("run 100 enter")
    eq((busy["pass"], busy["fault"]), (0, 100), "calls under the drill")
    audit_n = len(a.ok("GET", A + "/audit"))
    for name in ("long", "other"):
        doc = a.ok("POST", GD + "/%s/run" % name, {}, want=400)
        eq(doc, {"error": "game day 'long' is running on %s/%s (run %d): one at a time per app"
                 % (df.GROUP, df.APP, run)}, "a second run (%s)" % name)
    eq(len(a.ok("GET", A + "/audit")), audit_n, "audit rows after the refusals")
    eq(len(gameday(a, "other")["runs"]), 0, "runs of the other game day")
    t0 = time.time()
    eq(a.ok("POST", GD + "/long/abort", {"by": "alice"}),
       {"name": "long", "aborting": True}, "the abort's answer")
    row = wait_ended(a, "long", run, TICK + MARGIN)
    took = time.time() - t0
    check(took <= TICK + MARGIN, "aborted %.2f s after it was asked" % took)
    eq(row["result"], "aborted by alice (token %s)" % row["abort_by"].split("token ")[1][:-1],
       "the run's result")
    check(row["abort_by"].startswith("alice (token fnv:"), "abort_by %r" % row["abort_by"])
    eq(row["state"]["steps"][1]["result"], "aborted", "the wait's result")
    eq(row["state"]["cleanup"], [{"drill": drill_id}], "what the end stopped")
    dr = [x for x in a.ok("GET", A + "/drills") if x["id"] == drill_id][0]
    eq(dr["stopped_by"], "game day long run %d (token gameday)" % run, "the drill's stopped_by")
    df.wait_drill([h], drill_id, present=False, deadline_s=P + 5)
    after = h.run("run 100 enter")
    eq((after["pass"], after["fault"]), (100, 0), "calls after the abort")
    eq(a.ok("POST", GD + "/long/abort", {}, want=409), {"error": "game day 'long' is not running"},
       "an abort of no run")
    eq(a.ok("GET", GD + "/long")["running"], None, "running after")


def admin(ctx, pg=False):
    """An admin with app APP and no host; @pg: on a database of its own
    on a real PostgreSQL."""
    a = e2e.Admin(ctx)
    if pg:
        why = pgtest.available()
        check(why is None, "no PostgreSQL: %s" % why)
        ctx.pg = pgtest.cluster()
        ctx.pg.start()
        a.db = ctx.pg.create_db(pgtest.unique_name("sds_gameday"))
    a.start()
    a.ok("POST", "/groups/%s/apps" % df.GROUP, {"name": df.APP}, want=201)
    return a


@test
def schedule_keeps_last_reports(ctx):
    schedule(ctx, admin(ctx))


@test
def schedule_keeps_last_reports_pg(ctx):
    schedule(ctx, admin(ctx, pg=True))


def schedule(ctx, a):
    plan = {"name": "mirror", "points": [POINT], "sample_pct": 30, "amplification": 2,
            "framing": "http", "writes": False, "rate": 50, "shadows": ["127.0.0.1:9"],
            "duration_s": 600, "by": "test"}
    old = a.ok("POST", A + "/copy-plans", plan, want=201)
    a.ok("POST", A + "/copy-plans/%d/stop" % old["id"], {"by": "test"})
    t0 = int(time.time()) + 2
    d = a.ok("POST", GD, {"name": "tick", "keep": 2,
                          "schedule": {"every": "10s", "from": t0},
                          "steps": [{"do": "copy", "plan": "mirror", "duration_s": 120},
                                    {"do": "wait", "for_s": 1}]}, want=201)
    eq((d["schedule"], d["next_run"]), ({"every_s": 10, "first": t0}, t0), "the schedule")
    e2e.wait_until(lambda: a.ok("GET", GD + "/tick")["next_run"] >= t0 + 30 or None,
                   time.time() + 40, lambda _: "three due times not reached: %r"
                   % a.ok("GET", GD + "/tick"))
    runs = wait_ended(a, "tick", gameday(a, "tick")["runs"][0]["run"], 10) and \
        gameday(a, "tick")["runs"]
    log("runs: %s" % json.dumps(runs))
    eq(len(runs), 2, "runs kept")
    eq([r["started_by"] for r in runs], ["schedule", "schedule"], "started by")
    eq([r["result"] for r in runs], ["done", "done"], "results")
    starts = [r["state"]["steps"][0]["started_at"] for r in reversed(runs)]
    for s, due in zip(starts, (t0 + 10, t0 + 20)):
        check(due <= s <= due + TICK + MARGIN, "a run started at %.2f, due %d" % (s, due))
    eq(len([x for x in a.ok("GET", A + "/audit") if x["action"] == "gameday.run"]), 3,
       "gameday.run audit rows")
    plans = a.ok("GET", A + "/copy-plans")
    eq(len(plans), 4, "copy plans (the first and three runs')")
    for p, r in zip(plans, runs):
        eq(p["id"], r["state"]["steps"][0]["copy_plan"], "the run's plan")
        for k in ("name", "points", "sample_pct", "amplification", "framing", "writes", "rate",
                  "shadows"):
            eq(p[k], old[k], "the plan's %s" % k)
        eq(p["state"], "stopped", "the plan after the run")
        eq(p["started_by"], "game day tick run %d (token gameday)" % r["run"], "started_by")
        eq(r["state"]["cleanup"], [{"copy_plan": p["id"]}], "what the run's end stopped")
    # A due time while another game day runs on the app: skipped, said why.
    a.ok("POST", GD, {"name": "busy", "steps": [{"do": "wait", "for_s": 30}]}, want=201)
    busy = a.ok("POST", GD + "/busy/run", {}, want=201)["run"]
    due = a.ok("GET", GD + "/tick")["next_run"]
    e2e.wait_until(lambda: a.ok("GET", GD + "/tick")["next_run"] > due or None,
                   time.time() + 20, lambda _: "the due time never passed")
    r = gameday(a, "tick")["runs"][0]
    eq((r["result"], r["started_at"], r["ended_at"]),
       ("skipped: game day 'busy' was running on the app (run %d)" % busy, r["started_at"],
        r["started_at"]), "the skipped run")
    a.ok("POST", GD + "/busy/abort", {})
    eq(a.ok("DELETE", GD + "/tick", {}), {"name": "tick", "deleted": True}, "delete")
    a.ok("GET", GD + "/tick", want=404)


@test
def two_admins_one_run_per_due_time(ctx):
    """Two admins of one PostgreSQL, both ticking: each due time of a
    10-s schedule opens one run, and each run is advanced by one admin
    (its steps' records once each, the audit's gameday.run once a run)."""
    a = admin(ctx, pg=True)
    b = e2e.Admin(ctx)
    b.db = a.db
    b.start()
    t0 = int(time.time()) + 2
    a.ok("POST", GD, {"name": "both", "keep": 5, "schedule": {"every": 10, "from": t0},
                      "steps": [{"do": "wait", "for_s": 2}]}, want=201)
    e2e.wait_until(lambda: b.ok("GET", GD + "/both")["next_run"] >= t0 + 30 or None,
                   time.time() + 45, lambda _: "three due times not reached: %r"
                   % b.ok("GET", GD + "/both"))
    last = b.ok("GET", GD + "/both")["runs"][0]["run"]
    wait_ended(b, "both", last, 10)
    runs = list(reversed(a.ok("GET", GD + "/both")["runs"]))
    log("runs: %s" % json.dumps(runs))
    eq(len(runs), 3, "runs of three due times")
    for r, due in zip(runs, (t0, t0 + 10, t0 + 20)):
        eq((r["result"], r["started_by"]), ("done", "schedule"), "run %d" % r["run"])
        check(due <= r["started_at"] <= due + TICK + MARGIN, "run %d opened at %d, due %d"
              % (r["run"], r["started_at"], due))
        eq([x["do"] for x in r["state"]["steps"]], ["wait"], "run %d's steps" % r["run"])
        took = r["state"]["steps"][0]["ended_at"] - r["state"]["steps"][0]["started_at"]
        check(2.0 <= took <= 2.0 + 2 * TICK + MARGIN, "run %d's wait took %.2f s"
              % (r["run"], took))
    eq(len([x for x in a.ok("GET", A + "/audit") if x["action"] == "gameday.run"]), 3,
       "gameday.run audit rows")
    eq(len([x for x in a.ok("GET", A + "/audit") if x["action"] == "gameday.end"]), 3,
       "gameday.end audit rows")


BAD = [
    ({"steps": [{"do": "scheme", "scheme": "nope"}]},
     "steps[0].scheme: the app has no scheme 'nope' (see GET .../schemes)"),
    ({"steps": [{"do": "wait", "for_s": 1}, {"do": "copy", "plan": "nope"}]},
     "steps[1].plan: the app has no copy plan 'nope' (see GET .../copy-plans)"),
    ({"steps": [{"do": "drill", "drill": {"point": POINT, "kind": "error", "duration_s": 9,
                                          "hosts": ["web-9"]}}]},
     "steps[0].drill: hosts[0]: the app has no host 'web-9' (see GET .../hosts)"),
    ({"steps": [{"do": "drill", "drill": {"point": POINT, "kind": "error", "ratio": 101,
                                          "duration_s": 9}}]},
     "steps[0].drill: ratio must be an integer 0..100"),
    ({"steps": [{"do": "drill", "drill": {"point": POINT, "kind": "error", "duration_s": 9,
                                          "by": "x"}}]},
     "steps[0].drill.by: the game day says who"),
    ({"steps": [{"do": "explode"}]}, "steps[0].do must be one of drill, copy, wait, scheme, stop"),
    ({"steps": []}, "steps must be an array of 1..32 steps"),
    ({"steps": [{"do": "wait"}]}, "steps[0]: give one of for_s, until"),
    ({"steps": [{"do": "wait", "until": {"point": POINT, "field": "latency", "above": 1,
                                         "window_s": 10}, "timeout_s": 5}]},
     "steps[0].until.field: 'latency' is not one of exception_rate, p99_ms, downgrades"),
    ({"steps": [{"do": "wait", "until": {"point": POINT, "field": "p99_ms", "above": 1,
                                         "window_s": 10}}]},
     "steps[0].timeout_s: required with until, an integer 1..86400 (seconds)"),
    ({"steps": [{"do": "wait", "until": {"point": POINT, "field": "exception_rate",
                                         "above": 1, "below": 0, "window_s": 10},
                 "timeout_s": 5}]},
     "steps[0].until: give one of above, below"),
    ({"steps": [{"do": "wait", "until": {"point": POINT, "field": "exception_rate",
                                         "above": 0.5, "window_s": 2}, "timeout_s": 5}]},
     "steps[0].until.window_s must be a number 10..600 (seconds of the stored 10-s periods)"),
    ({"steps": [{"do": "wait", "for_s": 1}, {"do": "stop", "step": 0}]},
     "steps[1].step must be the index of an earlier drill or copy step"),
    ({"steps": [{"do": "stop", "x": 1}]}, "steps[0]: unknown field 'x' (do, step)"),
    ({"steps": [{"do": "wait", "until": {"point": POINT, "field": "downgrades", "above": 1,
                                         "window_s": 10, "over": 2}, "timeout_s": 5}]},
     "steps[0].until: unknown field 'over' (point, field, above, below, window_s)"),
    ({"steps": [{"do": "wait", "for_s": 1}], "schedule": {"every": "5x"}},
     "schedule.every must be a period of 10 s to 366 d: seconds, or N followed by s, m, h "
     "or d (\"7d\")"),
    ({"steps": [{"do": "wait", "for_s": 1}], "schedule": {"every": 5}},
     "schedule.every must be a period of 10 s to 366 d: seconds, or N followed by s, m, h "
     "or d (\"7d\")"),
    ({"steps": [{"do": "wait", "for_s": 1}], "schedule": {"every": "7d", "from": "monday"}},
     "schedule.from must be Unix seconds or a UTC time YYYY-MM-DDTHH:MM:SSZ"),
    ({"steps": [{"do": "wait", "for_s": 1}], "schedule": {"every": "7d", "at": 1}},
     "schedule: unknown field 'at' (every, from)"),
    ({"steps": [{"do": "wait", "for_s": 1}], "schedule": "weekly"},
     "schedule must be an object {every, from} or null"),
    ({"steps": [{"do": "wait", "for_s": 1}], "keep": 0}, "keep must be an integer 1..100 (reports kept)"),
    ({"steps": [{"do": "wait", "for_s": 1}], "x": 1}, "unknown field 'x'"),
]


@test
def bad_input(ctx):
    a = admin(ctx)
    for body, why in BAD:
        doc = dict(body, name="gd")
        got = a.ok("POST", GD, doc, want=400)
        eq(got, {"error": why}, "POST gamedays %r" % body)
        check("\n" not in got["error"], "one line")
    eq(a.ok("GET", GD), [], "game days stored")
    eq([x for x in a.ok("GET", A + "/audit") if x["action"].startswith("gameday")], [],
       "game day audit rows")
    eq(a.ok("POST", GD + "/nope/run", {}, want=404), {"error": "game day 'nope' not found"},
       "a run of no game day")
    eq(a.ok("POST", "/groups/%s/apps/nope/gamedays" % df.GROUP,
            {"name": "gd", "steps": [{"do": "wait", "for_s": 1}]}, want=404),
       {"error": "app 'nope' not found in group '%s'" % df.GROUP}, "a game day of no app")
    a.ok("POST", GD, {"name": "gd", "steps": [{"do": "wait", "for_s": 1}]}, want=201)
    eq(a.ok("POST", GD, {"name": "gd", "steps": [{"do": "wait", "for_s": 1}]}, want=409),
       {"error": "game day 'gd' exists already"}, "a name taken")
    eq(a.ok("GET", A + "/drills"), [], "drills started")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, df.Ctx,
                               needs=(SDS, e2e.ADMIN, df.APPBIN),
                               tools=("bpftool", "unshare")))
