#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Drills an operator can trust in production (issue 38; docs/DRILL.md): a
drill's blast radius and its automatic abort, on a real sds-admin (SQLite)
and real `sds-bpf attach --admin` loaders as several hosts (own UTS
namespaces, run, state and pin directories), each on its own copy of
tests/drill/drillapp (libsds.a; a drilled call's SDS_FAULT is signed as
an exception, as a real failure would be).

  named_two_of_four   an error drill (ratio 100) naming two of four hosts:
      on those two every one of 400 calls faults, on the other two none
      does; the drill's row says the two hosts, the loaders' stats say
      which run it; hosts_pct 50 and hosts_count 3 pick the hosts of the
      lowest FNV-1a hash of "GROUP/APP\\nPOINT\\nKIND\\nHOST" (computed
      here), the same again on a retry
  exception_rate_stops_everywhere   an error drill of ratio 40 on two
      hosts with stop_when exception_rate above 0.3 over 2 s: host A calls
      every 2 ms (its own exceptions rise to 40 %), host B makes no call;
      A's loader stops it, the admin stops it for B: both within 3 s of
      A's first call; the row's stop_reason, the audit log's drill.abort
      and A's `events` say exception_rate and its numbers; calls after it
      fault no more
  fleet_judges_what_no_host_sees   a 60 % error drill on two hosts each
      calling 3 times a second (too few calls for a host's own 2-s
      window): the admin's judgment over the heartbeats' periods stops
      it (stopped_by sds-admin, a "fleet:" reason) within 30 s, and both
      hosts within 3 s of that; no host's events give a reason
  postgresql_radius_and_abort   the same on PostgreSQL: a drill naming one
      of two hosts with the condition stops within 3 s, the other host's
      2,000 calls all pass; the row, the audit log
  window_under_tick_refused   a loader ticking every 500 ms handed a
      condition of a 0.2-s window: it refuses to run the drill unwatched
      (no call faults), and the row says why
  bad_input   a host the app does not have, a share outside 1..100, a
      count over the live hosts, two kinds of radius at once, a stop
      condition on no such field, a window under a tick, a rate over 1:
      each a 400 of one line, no drill stored, none on the host

Run as root:  python3 tests/drillfleet/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import e2e_lib as e2e  # noqa: E402  (puts tests/lib on sys.path)
import pgtest  # noqa: E402
import sdstest  # noqa: E402
from sdstest import Fail, SDS, check, eq, log  # noqa: E402

APPBIN = os.path.join(sdstest.BUILD, "test", "drill", "drillapp")
GROUP = "default"
APP = "drillfleet"
POINT = "order"
A = "/groups/%s/apps/%s" % (GROUP, APP)

SUITE = sdstest.Suite(timeout=240)
test = SUITE.test


class Host:
    """One host: its own UTS namespace (the loader reports gethostname()),
    run, state and pin directories; a loader of app APP on its own copy
    of drillapp, and that copy running, registered."""

    def __init__(self, ctx, name, url, extra=()):
        self.ctx = ctx
        self.name = name
        self.dir = os.path.join(ctx.tmp, name)
        os.mkdir(self.dir)
        self.path = os.path.join(self.dir, "drillapp")
        shutil.copy2(APPBIN, self.path)
        self.env = dict(ctx.env)
        for k in ("run", "state"):
            os.mkdir(os.path.join(self.dir, k), 0o755)
        self.env["SDS_RUN_DIR"] = os.path.join(self.dir, "run")
        self.env["SDS_STATE_DIR"] = os.path.join(self.dir, "state")
        self.env["SDS_PIN_ROOT"] = ctx.pin_root + "_" + name.replace("-", "_")
        # Heartbeats 2 s into each period: the admin knows the hosts sooner.
        self.env[e2e_offset_env()] = "2000"
        sdstest._OWN_PIN_ROOTS.add(self.env["SDS_PIN_ROOT"])
        ctx.pin_roots.append(self.env["SDS_PIN_ROOT"])
        args = ["--app", APP, "--admin", url, "--token-file", ctx.token_file,
                "--state-dir", self.env["SDS_STATE_DIR"]] + list(extra) + [self.path]
        cmd = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
               name, SDS, "attach"] + args
        log(" ".join(cmd))
        self.errpath = os.path.join(self.dir, "attach.err")
        err = open(self.errpath, "wb")
        ctx.files.append(err)
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                  stdin=subprocess.DEVNULL, env=self.env,
                                  cwd=ctx.tmp, start_new_session=True)
        ctx.procs.append(self.p)
        self.sock = os.path.join(self.env["SDS_RUN_DIR"], "%s.%s.sock" % (GROUP, APP))
        e2e.wait_until(lambda: os.path.exists(self.sock) or self.p.poll() is not None,
                       time.time() + e2e.READY_TIMEOUT,
                       lambda _: "attach as %s: no socket %s" % (name, self.sock))
        check(self.p.poll() is None, "attach as %s exited: %r" % (name, self.stderr()))
        self.app = subprocess.Popen([self.path, GROUP, APP, POINT], env=self.env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, cwd=self.dir,
                                    universal_newlines=True, start_new_session=True)
        ctx.procs.append(self.app)
        eq(self.app.stdout.readline().strip(), "ready", name + ": drillapp start")
        self.host = None    # the admin's name of it (NAME_ID), once it heartbeated

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stats(self):
        r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"],
                              self.env, self.ctx.tmp, self.ctx.procs, 30)
        return sdstest.json_out(r, "sds-bpf stats on %s" % self.name)

    def drill(self):
        """The drill running on POINT here (stats --json), or None."""
        p = sdstest.get_point(self.stats(), POINT, required=False)
        return p.get("drill") if p else None

    def send(self, line):
        self.app.stdin.write(line + "\n")
        self.app.stdin.flush()

    def answer(self):
        line = self.app.stdout.readline()
        check(line, self.name + ": drillapp ended")
        return json.loads(line)

    def run(self, line):
        self.send(line)
        return self.answer()

    def events(self):
        """The loader's kept events (the control socket's `events 0`)."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(self.sock)
        s.sendall(b"events 0\n")
        data = b""
        while not data.endswith(b"\n"):
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        return json.loads(data)["events"]


def e2e_offset_env():
    return "SDS_HB_OFFSET_MS"


class Ctx(e2e.Ctx):
    def __init__(self, name):
        super().__init__(name)
        self.pin_roots = []

    def cleanup(self):
        super().cleanup()
        for r in self.pin_roots:
            sdstest.remove_pin_root(r)
            sdstest._OWN_PIN_ROOTS.discard(r)


def fleet(ctx, names, extra=(), pg=False):
    """An admin with app APP and a host per name, each known to the admin
    by its first heartbeat; Host.host is the admin's name of it.  @pg: the
    admin on a database of its own on a real PostgreSQL."""
    a = e2e.Admin(ctx)
    if pg:
        why = pgtest.available()
        check(why is None, "no PostgreSQL: %s" % why)
        ctx.pg = pgtest.cluster()
        ctx.pg.start()
        a.db = ctx.pg.create_db(pgtest.unique_name("sds_drillfleet"))
    a.start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    hosts = [Host(ctx, n, a.url, extra) for n in names]
    for h in hosts:
        h.host = e2e.admin_of(h.stats())["host"]
    want = sorted(h.host for h in hosts)
    e2e.wait_until(
        lambda: sorted(x["host"] for x in a.ok("GET", A + "/hosts")) == want or None,
        time.time() + 30, lambda _: "the admin did not hear of %r within 30 s: %r"
        % (want, a.ok("GET", A + "/hosts")))
    return a, hosts


def drill(a, body, want=201):
    doc = {"point": POINT, "kind": "error", "ratio": 100, "duration_s": 120,
           "by": "drillfleet test"}
    doc.update(body)
    return a.ok("POST", A + "/drills", doc, want=want)


def wait_drill(hosts, id_, present=True, deadline_s=15):
    """Until each of @hosts runs admin drill @id_ (or runs none).  Which
    hosts run it, not how soon: a loader whose push channel is down
    learns a change at its next heartbeat, so the bound is one 10-s
    period and a margin (a stale reply can no longer undo a push:
    docs/DRILL.md, "The drills' version"); the stop's speed is
    exception_rate_stops_everywhere's."""
    def ok():
        return all(((h.drill() or {}).get("source") == id_) == present for h in hosts)
    e2e.wait_until(lambda: ok() or None, time.time() + deadline_s,
                   lambda _: "drill %d %s on %r within %d s: %r"
                   % (id_, "not running" if present else "still running",
                      [h.name for h in hosts], deadline_s,
                      {h.name: h.drill() for h in hosts}))


def fnv_pick(names, k, kind="error"):
    """The @k of @names the admin picks: lowest FNV-1a 64 of
    GROUP/APP\\nPOINT\\nKIND\\nHOST, ties by name (docs/DRILL.md)."""
    def h(host):
        x = 0xcbf29ce484222325
        for c in ("%s/%s\n%s\n%s\n%s" % (GROUP, APP, POINT, kind, host)).encode():
            x = ((x ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        return x
    return sorted(sorted(names, key=lambda n: (h(n), n))[:k])


CALLS = 400


@test
def named_two_of_four(ctx):
    a, hosts = fleet(ctx, ["host-a", "host-b", "host-c", "host-d"])
    named = [hosts[0], hosts[2]]
    d = drill(a, {"hosts": [hosts[2].host, hosts[0].host]})
    eq(d["hosts"], sorted(h.host for h in named), "the 201's hosts")
    wait_drill(named, d["id"])
    for h in hosts:
        if h not in named:
            eq(h.drill(), None, h.name + " (not named): its drill")
    for h in hosts:
        r = h.run("run %d enter" % CALLS)
        log("%s: %r" % (h.name, r))
        if h in named:
            eq((r["pass"], r["fault"], r["down"]), (0, CALLS, 0), h.name + " (named): calls")
            eq(h.drill()["faults"], CALLS, h.name + ": the loader's faults")
        else:
            eq((r["pass"], r["fault"], r["down"]), (CALLS, 0, 0), h.name + " (not named): calls")
    row = [x for x in a.ok("GET", A + "/drills") if x["id"] == d["id"]][0]
    eq(row["hosts"], sorted(h.host for h in named), "the row's hosts")
    eq(row["stop_when"], [], "the row's stop conditions")
    a.ok("POST", A + "/drills/%d/stop" % d["id"], {"by": "test"})
    wait_drill(named, d["id"], present=False)

    # A share and a count: the lowest hashes, the same on a retry.
    names = [h.host for h in hosts]
    for body, k in (({"hosts_pct": 50}, 2), ({"hosts_count": 3}, 3), ({"hosts_pct": 1}, 1)):
        want = fnv_pick(names, k)
        first = drill(a, body)
        eq(first["hosts"], want, "%r: the hosts" % body)
        wait_drill([h for h in hosts if h.host in want], first["id"])
        for h in hosts:
            if h.host not in want:
                check((h.drill() or {}).get("source") != first["id"],
                      "%r: %s runs drill %d" % (body, h.name, first["id"]))
        a.ok("POST", A + "/drills/%d/stop" % first["id"], {"by": "test"})
        again = drill(a, body)
        eq(again["hosts"], want, "%r: the hosts of a retry" % body)
        a.ok("POST", A + "/drills/%d/stop" % again["id"], {"by": "test"})
    audit = a.ok("GET", A + "/audit")
    starts = [x for x in audit if x.get("action") == "drill.start"]
    check(any(("hosts " + json.dumps(sorted(h.host for h in named),
                                     separators=(",", ":"))) in x.get("detail", "")
              for x in starts), "no drill.start audit row names the hosts: %r" % starts)


STOP = [{"field": "exception_rate", "above": 0.3, "window_s": 2}]


@test
def exception_rate_stops_everywhere(ctx):
    a, hosts = fleet(ctx, ["host-a", "host-b"])
    busy, idle = hosts
    d = drill(a, {"ratio": 40, "stop_when": STOP})
    eq(d["stop_when"], [{"field": "exception_rate", "above": 0.3, "window_s": 2.0}],
       "the 201's stop_when")
    wait_drill(hosts, d["id"])
    for h in hosts:
        eq(h.drill()["stop_when"], [{"field": "exception_rate", "above": 0.3, "window_s": 2.0}],
           h.name + ": the conditions its loader judges")
    # 2,500 calls, one every 2 ms (5 s): the drill should end at about 2 s.
    t0 = time.monotonic()
    busy.send("run 2500 enter every_us=2000")
    stopped = {}
    while len(stopped) < 2 and time.monotonic() - t0 < 10:
        for h in hosts:
            if h.name not in stopped and (h.drill() or {}).get("source") != d["id"]:
                stopped[h.name] = time.monotonic() - t0
        time.sleep(0.05)
    r = busy.answer()
    log("stopped after %r s; busy host's calls %r" % (stopped, r))
    for h in hosts:
        check(h.name in stopped, "%s still runs the drill 10 s on" % h.name)
        check(stopped[h.name] <= 3.0, "%s stopped the drill %.2f s after the first call, "
              "want <= 3 s" % (h.name, stopped[h.name]))
    eq(r["pass"] + r["fault"], 2500, "calls made")
    # Faults while it ran (2 s of 5 s at 40 %), none after it stopped.
    check(0 < r["fault"] < 2500 * 0.4 * 4.0 / 5.0, "faults %d of 2500" % r["fault"])
    after = busy.run("run 500 enter")
    eq((after["pass"], after["fault"]), (500, 0), "calls after the stop")
    row = [x for x in a.ok("GET", A + "/drills") if x["id"] == d["id"]][0]
    log("row: %r" % row)
    check(row["stopped_at"] is not None, "the row is not stopped: %r" % row)
    eq(row["stopped_by"].split(" (token")[0], "host " + busy.host, "the row's stopped_by")
    why = row["stop_reason"] or ""
    check(why.startswith("exception_rate 0.") and "above 0.3 over 2 s" in why,
          "the row's stop_reason: %r" % why)
    rate = float(why.split()[1])
    check(0.3 < rate <= 0.6, "the rate the reason says: %r" % why)
    aborts = [x for x in a.ok("GET", A + "/audit") if x.get("action") == "drill.abort"]
    eq(len(aborts), 1, "drill.abort audit rows")
    check(why in aborts[0]["detail"] and ("drill %d" % d["id"]) in aborts[0]["detail"],
          "the audit row's detail: %r" % aborts[0])
    ev = [e for e in busy.events() if e.get("reason") == "drill" and e.get("detail")]
    eq(len(ev), 1, "the busy host's events with a reason: %r" % ev)
    eq(ev[0]["event"], "ended", "the event")
    eq(ev[0]["detail"], "drill %d stopped: %s" % (d["id"], why), "the event's detail")
    # The idle host ended it because the admin did: no reason of its own.
    eq([e for e in idle.events() if e.get("detail")], [], "the idle host's events with a reason")


@test
def postgresql_radius_and_abort(ctx):
    a, hosts = fleet(ctx, ["host-a", "host-b"], pg=True)
    other, named = hosts
    d = drill(a, {"ratio": 40, "hosts": [named.host], "stop_when": STOP})
    eq(d["hosts"], [named.host], "the 201's hosts")
    wait_drill([named], d["id"])
    eq(other.drill(), None, "the other host's drill")
    t0 = time.monotonic()
    for h in hosts:
        h.send("run 2000 enter every_us=2000")
    e2e.wait_until(lambda: named.drill() is None or None, time.time() + 10,
                   lambda _: "the drill still runs 10 s on: %r" % named.drill())
    took = time.monotonic() - t0
    res = {h.name: h.answer() for h in hosts}
    log("stopped after %.2f s; calls %r" % (took, res))
    check(took <= 3.0, "stopped %.2f s after the first call, want <= 3 s" % took)
    eq((res[other.name]["pass"], res[other.name]["fault"]), (2000, 0), "the other host's calls")
    check(res[named.name]["fault"] > 0, "no fault on the named host: %r" % res[named.name])
    row = [x for x in a.ok("GET", A + "/drills") if x["id"] == d["id"]][0]
    eq(row["hosts"], [named.host], "the row's hosts")
    check(row["stop_reason"].startswith("exception_rate 0."), "the row's stop_reason: %r" % row)
    eq(row["stopped_by"].split(" (token")[0], "host " + named.host, "the row's stopped_by")
    eq(len([x for x in a.ok("GET", A + "/audit") if x.get("action") == "drill.abort"]), 1,
       "drill.abort audit rows")


@test
def fleet_judges_what_no_host_sees(ctx):
    a, hosts = fleet(ctx, ["host-a", "host-b"])
    d = drill(a, {"ratio": 60, "stop_when": STOP})
    wait_drill(hosts, d["id"])
    # 3 calls a second each: 6 or 7 in a host's 2-s window, under the
    # loader's 10-call floor; the fleet's 10-s periods hold 60 at 60 %.
    t0 = time.monotonic()
    for h in hosts:
        h.send("run 90 enter every_us=333333")
    def row():
        r = [x for x in a.ok("GET", A + "/drills") if x["id"] == d["id"]][0]
        return r if r["stopped_at"] else None
    r = e2e.wait_until(row, time.time() + 40,
                       lambda _: "drill %d not stopped by the fleet within 40 s" % d["id"])
    took = time.monotonic() - t0
    log("stopped %.1f s after the first calls: %r" % (took, r))
    eq(r["stopped_by"].split(" (token")[0], "sds-admin", "the row's stopped_by")
    check(r["stop_reason"].startswith("fleet: exception_rate 0.") and
          "above 0.3 over " in r["stop_reason"], "the row's stop_reason: %r" % r["stop_reason"])
    # Two periods and a heartbeat's offset at most, with margin.
    check(took <= 30, "the fleet stopped it %.1f s after the first calls" % took)
    wait_drill(hosts, d["id"], present=False, deadline_s=3)
    res = [h.answer() for h in hosts]
    log("calls: %r" % res)
    for h, x in zip(hosts, res):
        eq(x["pass"] + x["fault"], 90, h.name + ": calls made")
        eq([e for e in h.events() if e.get("detail")], [], h.name + ": events with a reason "
           "(no host judged it alone)")
    aborts = [x for x in a.ok("GET", A + "/audit") if x.get("action") == "drill.abort"]
    eq(len(aborts), 1, "drill.abort audit rows")


@test
def window_under_tick_refused(ctx):
    a, hosts = fleet(ctx, ["host-a"], extra=["--tick-ms", "500"])
    h = hosts[0]
    d = drill(a, {"stop_when": [{"field": "downgrades", "above": 0, "window_s": 0.2}]})
    # Refused at once: it never runs here, and the row says why.
    def row():
        r = [x for x in a.ok("GET", A + "/drills") if x["id"] == d["id"]][0]
        return r if r["stop_reason"] else None
    r = e2e.wait_until(row, time.time() + 15,
                       lambda _: "the row of drill %d has no stop_reason; the loader said %r"
                       % (d["id"], h.stderr()))
    eq(r["stop_reason"], "stop_when[0].window_s 0.2 is shorter than this loader's tick "
       "(500 ms)", "the row's stop_reason")
    out = h.run("run %d enter" % CALLS)
    eq((out["pass"], out["fault"]), (CALLS, 0), "calls")
    eq(h.drill(), None, "the host's drill")


BAD = [
    ({"hosts": ["no-such-host"]},
     "hosts[0]: the app has no host 'no-such-host' (see GET .../hosts)"),
    ({"hosts_pct": 0}, "hosts_pct must be an integer 1..100"),
    ({"hosts_pct": 101}, "hosts_pct must be an integer 1..100"),
    ({"hosts_count": 2}, "hosts_count 2: the app has 1 live host (heard within 60 s)"),
    ({"hosts": "some"}, "hosts must be \"all\" or an array of 1..1024 host names"),
    ({"hosts_pct": 50, "hosts_count": 1}, "give one of hosts, hosts_pct, hosts_count"),
    ({"stop_when": [{"field": "latency", "above": 1, "window_s": 2}]},
     "stop_when[0].field: 'latency' is not one of exception_rate, p99_ms, downgrades"),
    ({"stop_when": [{"field": "p99_ms", "above": 5, "window_s": 0.05}]},
     "stop_when[0].window_s must be a number 0.1..60 (seconds; a tick is 100 ms)"),
    ({"stop_when": [{"field": "exception_rate", "above": 1.5, "window_s": 2}]},
     "stop_when[0].above must be a number 0..1 (a share of the calls)"),
    ({"stop_when": [{"field": "downgrades", "above": 1, "window_s": 2, "x": 1}]},
     "stop_when[0]: unknown field 'x' (field, above, window_s)"),
]


@test
def bad_input(ctx):
    a, hosts = fleet(ctx, ["host-a"])
    for body, why in BAD:
        doc = drill(a, body, want=400)
        eq(doc, {"error": why}, "POST drills %r" % body)
        check("\n" not in doc["error"], "one line")
    eq(a.ok("GET", A + "/drills"), [], "drills stored")
    eq([x for x in a.ok("GET", A + "/audit") if x.get("action", "").startswith("drill")],
       [], "drill audit rows")
    time.sleep(1.5)     # a push would have come
    eq(hosts[0].drill(), None, "the host's drill")
    r = hosts[0].run("run %d enter" % CALLS)
    eq((r["pass"], r["fault"]), (CALLS, 0), "calls")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx,
                               needs=(SDS, e2e.ADMIN, APPBIN),
                               tools=("bpftool", "unshare")))
