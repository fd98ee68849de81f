#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Fault drill tests (issue 5): `sds-bpf drill` and sds-admin's drills on
a real loader attached to build/test/drill/drillapp (linked with
libsds.a), real uprobes, exact numbers where the numbers are exact and a
binomial bound where they are random.

Run as root from anywhere (after `make -f Makefile -f tests/drill/drill.mk
build/test/drill/drillapp`, which `make drill-tests` does):

    python3 tests/drill/run.py [-v] [NAME-SUBSTRING...]

Every test gets its own temp dir, SDS_RUN_DIR and SDS_STATE_DIR; every
process it starts runs in its own session and is killed when the test
ends.  The last line is "N passed, M failed, K skipped"; the exit status is
non-zero when anything failed.  Python 3 standard library only.
"""

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import BUILD, SDS, Fail, check, eq  # noqa: E402
from fake_admin import FakeAdmin  # noqa: E402

sdstest.log_stamps()
ADMIN = sdstest.admin_path(env=False)
APPBIN = os.path.join(BUILD, "test", "drill", "drillapp")


GROUP = "default"
APP = "drillapp"
POINT = "order"
READY_TIMEOUT = 30.0
VERBOSE = False


def wait_until(fn, deadline, what, interval=0.1):
    return sdstest.wait_until(fn, deadline, what, interval)


def binomial_ok(hits, n, pct):
    """Within 5 standard deviations: a false failure once in ~3.5 million."""
    p = pct / 100.0
    sd = math.sqrt(n * p * (1 - p))
    return abs(hits - n * p) <= 5 * sd


class Ctx:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sds-drill-")
        self.env = dict(os.environ)
        self.env["SDS_RUN_DIR"] = os.path.join(self.tmp, "run")
        self.env["SDS_STATE_DIR"] = os.path.join(self.tmp, "state")
        # Pins of loaders the cleanup kills stay out of later tests' way.
        self.env["SDS_PIN_ROOT"] = sdstest.pin_root_for(self.tmp)
        os.makedirs(self.env["SDS_STATE_DIR"])
        self.procs = []
        self.n = 0

    def spawn(self, argv, **kw):
        self.n += 1
        err = open(os.path.join(self.tmp, "p%d.err" % self.n), "w+")
        p = subprocess.Popen(argv, env=self.env, stderr=err,
                             start_new_session=True,
                             universal_newlines=True, **kw)
        p.errfile = err
        self.procs.append(p)
        return p

    def cleanup(self):
        for p in self.procs:
            sdstest.reap(p, always=True)
            if hasattr(p, "errfile"):   # not the admin's (sdsadmin.Admin)
                p.errfile.close()
        sdstest.remove_pin_root(self.env["SDS_PIN_ROOT"])
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sock(self, group=GROUP, app=APP):
        return sdstest.sock_path(self.env["SDS_RUN_DIR"], group, app)

    def attach(self, *extra, group=GROUP, app=APP):
        p = self.spawn([SDS, "attach", "--group", group, "--app", app,
                        "--socket-mode", "0666"]
                       + list(extra) + [APPBIN], stdout=subprocess.DEVNULL)
        wait_until(lambda: (os.path.exists(self.sock(group, app)) or
                            p.poll() is not None),
                   time.time() + READY_TIMEOUT, "loader never served")
        if p.poll() is not None:
            p.errfile.seek(0)
            raise Fail("loader exited: " + p.errfile.read().strip())
        return p

    def app(self, group=GROUP, app=APP):
        p = self.spawn([APPBIN, group, app, POINT], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
        eq(p.stdout.readline().strip(), "ready", "drillapp start")
        return p

    def sds(self, *args, ok=True):
        r = subprocess.run([SDS] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30)
        if ok and r.returncode != 0:
            raise Fail("sds-bpf %s: exit %d: %s" % (" ".join(args),
                       r.returncode, r.stderr.strip()))
        return r

    def stats(self, group=GROUP, app=APP):
        return json.loads(self.sds("stats", "--group", group, "--app", app,
                                   "--json").stdout)

    def point(self, name=POINT, group=GROUP, app=APP):
        for p in self.stats(group, app)["points"]:
            if p["name"] == name:
                return p
        raise Fail("no point %s in stats" % name)

    def events_kept(self):
        # events follows forever: read what is kept through the socket
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock())
        s.sendall(b"events 0\n")
        data = b""
        while not data.endswith(b"\n"):
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        return json.loads(data)["events"]


def run_calls(p, n, mode="enter"):
    p.stdin.write("run %d %s\n" % (n, mode))
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def drillevents_kept(ctx):
    return [(e["event"], e["point"]) for e in ctx.events_kept()
            if e["reason"] == "drill"]


# ---------------------------------------------------------------------------
# Tests

def test_error_ratio_two_processes(ctx):
    """An error drill at ratio 30 over 10,000 calls on two processes:
    faults within a binomial bound, and every count exact."""
    ctx.attach()
    a, b = ctx.app(), ctx.app()
    ctx.sds("drill", "--app", APP, POINT, "--error", "--ratio", "30",
            "--for", "60")
    ra, rb = run_calls(a, 5000), run_calls(b, 5000)
    faults = ra["fault"] + rb["fault"]
    eq(ra["pass"] + ra["fault"], 5000, "process a: passed + faulted")
    eq(rb["pass"] + rb["fault"], 5000, "process b: passed + faulted")
    check(binomial_ok(faults, 10000, 30),
          "faults %d of 10000 outside the binomial bound of 30%%" % faults)
    p = ctx.point()
    eq(p["drill"]["kind"], "error", "drill kind")
    eq(p["drill"]["ratio"], 30, "drill ratio")
    eq(p["drill"]["faults"], faults, "stats drill.faults")
    eq(p["drill"]["delays"], 0, "stats drill.delays")
    eq(p["total"]["visits"], 10000, "visits (a fault is a visit)")
    eq(p["total"]["exceptions"], faults, "exceptions (the callers sign them)")
    eq(p["total"]["downgrades"], 0, "downgrades")
    # sds_should_downgrade sees a fault as a downgrade.
    rs = run_calls(a, 1000, "should")
    eq(rs["pass"] + rs["down"], 1000, "should: passed + downgraded")
    check(binomial_ok(rs["down"], 1000, 30),
          "should_downgrade: %d of 1000 downgraded" % rs["down"])
    p = ctx.point()
    eq(p["total"]["downgrades"], rs["down"], "downgrades from a should caller")
    eq(p["drill"]["faults"], faults + rs["down"], "drill.faults after should")
    eq(p["total"]["visits"], 11000, "visits")


def test_delay_p50_and_timeout(ctx):
    """A 50 ms delay drill: each of the 8 delayed calls in the delay's
    log2 bucket, 25 ([2^25, 2^26) ns), or the next, and the timeout
    strategy trips."""
    strat = os.path.join(ctx.tmp, "s.json")
    with open(strat, "w") as f:
        json.dump({"version": 1, "points": {POINT: {
            "timeout_ms": 20, "timeout_count_threshold": 8}}}, f)
    ctx.attach("--strategies", strat)
    a = ctx.app()
    ctx.sds("drill", "--app", APP, POINT, "--delay-ms", "50", "--for", "60")
    r = run_calls(a, 8)
    eq(r["pass"], 8, "delayed calls pass")
    check(r["max_ms"] >= 50, "slowest call %.1f ms, want >= 50" % r["max_ms"])
    p = ctx.point()
    eq(p["drill"]["delays"], 8, "stats drill.delays")
    eq(p["latency_ns"]["count"], 8, "completed calls")
    # A 50-ms delay lands in bucket 25 (33.5..67.1 ms) with only 17 ms to
    # spare: a call descheduled longer on a loaded machine lands in 26
    # (..134 ms).  Either is the delay; none may be faster than 2^25 ns
    # (not delayed) and none slower than 2^27 (a deadline, not a speed:
    # well short of the 2 delays two buckets up would take).
    p50 = p["latency_ns"]["p50"]
    check(2 ** 25 <= p50 < 2 ** 27, "p50 %d ns not in [2^25, 2^27)" % p50)
    h = json.loads(ctx.sds("hist", "--app", APP, POINT, "--json").stdout)
    b = h["buckets"]
    eq((sum(b), b[25] + b[26]), (8, 8), "calls in the histogram, and in "
       "buckets 25 and 26 (33.5..134 ms): buckets %r"
       % {i: v for i, v in enumerate(b) if v})
    eq(p["total"]["timeouts"], 8, "timeouts (> 20 ms)")
    p = wait_until(lambda: (lambda q: q if q["state"]["downgraded"] else None)(
        ctx.point()), time.time() + 3, "timeout strategy never tripped")
    eq(p["state"]["reason"], "timeout", "downgrade reason")
    r = run_calls(a, 10)
    eq(r["down"], 10, "calls downgraded by the timeout strategy")
    eq(ctx.point()["drill"]["delays"], 8, "downgraded calls are not delayed")


def test_stop_and_expiry(ctx):
    """--stop ends a drill at once; an unstopped one ends at its expiry;
    both show as drill started/ended events."""
    ctx.attach()
    a = ctx.app()
    ctx.sds("drill", "--app", APP, POINT, "--error", "--for", "60")
    eq(run_calls(a, 100)["fault"], 100, "ratio 100 faults every call")
    ctx.sds("drill", "--app", APP, POINT, "--stop")
    eq(run_calls(a, 100)["pass"], 100, "after --stop every call passes")
    eq(ctx.point()["drill"], None, "stats drill after --stop")
    r = ctx.sds("drill", "--app", APP, POINT, "--stop", ok=False)
    check(r.returncode != 0 and "no drill" in r.stderr,
          "second --stop: %r" % r.stderr)
    ctx.sds("drill", "--app", APP, POINT, "--error", "--for", "1")
    eq(run_calls(a, 10)["fault"], 10, "second drill faults")
    left = ctx.point()["drill"]["remaining_ms"]
    check(0 < left <= 1000, "remaining_ms %r" % left)
    time.sleep(1.3)
    eq(ctx.point()["drill"], None, "stats drill after its expiry")
    eq(run_calls(a, 100)["pass"], 100, "after the expiry every call passes")
    eq(drillevents_kept(ctx), [("started", POINT), ("ended", POINT),
                           ("started", POINT), ("ended", POINT)],
       "drill events")


def test_bad_input(ctx):
    """Every bad input is refused with one clear line and a non-zero exit,
    and nothing starts."""
    ctx.attach()
    ctx.app()
    cases = [
        (["nosuch", "--error", "--for", "5"], "no point 'nosuch'"),
        ([POINT, "--error", "--ratio", "101", "--for", "5"], "--ratio"),
        ([POINT, "--error", "--ratio", "-1", "--for", "5"], "--ratio"),
        ([POINT, "--error", "--for", "-5"], "--for"),
        ([POINT, "--error", "--for", "0"], "--for"),
        ([POINT, "--error"], "--for S is required"),
        ([POINT, "--error", "--delay-ms", "5", "--for", "5"], "exclude"),
        ([POINT, "--for", "5"], "give --error or --delay-ms"),
        ([POINT, "--delay-ms", "0", "--for", "5"], "--delay-ms"),
        ([POINT, "--stop", "--error"], "--stop takes no"),
        (["bad name!", "--error", "--for", "5"], "bad point name"),
        ([POINT, "--error", "--errno", "EIO", "--for", "5"],
         "'%s' is a guard point: --errno is for function points with "
         "failfast=" % POINT),
        ([], "missing POINT"),
    ]
    for args, want in cases:
        r = ctx.sds("drill", "--app", APP, *args, ok=False)
        lines = r.stderr.strip().splitlines()
        check(r.returncode != 0, "drill %s: exit 0" % args)
        check(len(lines) == 1 and lines[0].startswith("sds-bpf: ") and
              want in lines[0], "drill %s: stderr %r, want %r" %
              (args, r.stderr, want))
    eq(ctx.point()["drill"], None, "no drill started by bad input")
    # Changing state needs root, even for whoever may query.
    # A staged copy: nobody may not reach the build (a clone under /root).
    os.chmod(ctx.tmp, 0o755)
    sds = sdstest.stage(SDS, ctx.tmp)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", sds, "drill", "--app", APP, POINT,
                        "--error", "--for", "5"], env=ctx.env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=30)
    check(r.returncode != 0 and "needs root" in r.stderr,
          "non-root drill: exit %d, %r" % (r.returncode, r.stderr))
    eq(ctx.point()["drill"], None, "no drill started by non-root")


# ---------------------------------------------------------------------------
# Which app a drill goes to (issue 11)

def drills_running(ctx, apps):
    """{"group/app": [(point, drill kind)...]} of every point of every
    loader in @apps whose stats show a drill."""
    out = {}
    for g, a in apps:
        out["%s/%s" % (g, a)] = [(p["name"], p["drill"]["kind"])
                                 for p in ctx.stats(g, a)["points"]
                                 if p["drill"] is not None]
    return out


def refused(ctx, args, want, apps, running, what):
    """`sds-bpf drill ARGS` exits 1 with the one line @want on stderr, and
    afterwards the drills of @apps are exactly @running (nothing sent)."""
    r = ctx.sds("drill", *args, ok=False)
    eq(r.returncode, 1, "%s: exit status" % what)
    eq(drills_running(ctx, apps), running, "%s: drills afterwards" % what)
    eq(r.stderr, "sds-bpf: " + want + "\n", "%s: stderr" % what)
    eq(r.stdout, "", "%s: stdout" % what)


def test_app_choice_several_loaders(ctx):
    """With several loaders, a drill that does not name exactly one app
    (start or --stop) is refused with one line listing the candidates,
    and no loader gets it; one named by --app or --app/--group gets it
    alone."""
    apps = [(GROUP, APP), (GROUP, APP + "2"), ("other", APP)]
    procs = {}
    for g, a in apps:
        ctx.attach(group=g, app=a)
        procs[g, a] = ctx.app(group=g, app=a)
    none = {"%s/%s" % ga: [] for ga in apps}
    start = [POINT, "--error", "--for", "60"]
    every = "default/drillapp, default/drillapp2, other/drillapp"
    cases = [
        ([], "drill: 3 apps are attached (%s): name one with --app "
         "(and --group)" % every),
        (["--group", GROUP], "drill: 2 apps are attached in group 'default' "
         "(default/drillapp, default/drillapp2): name one with --app"),
        (["--app", APP], "drill: 2 apps named 'drillapp' are attached "
         "(default/drillapp, other/drillapp): name one with --group"),
    ]
    for sel, want in cases:
        refused(ctx, sel + start, want, apps, none, "drill start %s" % sel)
    for g, a in apps:
        eq(run_calls(procs[g, a], 100)["pass"], 100,
           "%s/%s: calls pass after the refused drills" % (g, a))
    # Named alone, by --app (unique across groups) or --app and --group.
    ctx.sds("drill", "--app", APP + "2", *start)
    ctx.sds("drill", "--group", "other", "--app", APP, POINT, "--delay-ms",
            "1", "--for", "60")
    both = dict(none)
    both["default/drillapp2"] = [(POINT, "error")]
    both["other/drillapp"] = [(POINT, "delay")]
    eq(drills_running(ctx, apps), both, "drills after two named starts")
    eq(run_calls(procs[GROUP, APP + "2"], 100)["fault"], 100,
       "default/drillapp2: every call faults")
    eq(run_calls(procs[GROUP, APP], 100)["pass"], 100,
       "default/drillapp: every call passes")
    # --stop that names no single app stops nothing.
    for sel, want in cases:
        refused(ctx, sel + [POINT, "--stop"], want, apps, both,
                "drill --stop %s" % sel)
    ctx.sds("drill", "--app", APP + "2", POINT, "--stop")
    ctx.sds("drill", "--group", "other", "--app", APP, POINT, "--stop")
    eq(drills_running(ctx, apps), none, "drills after the named stops")


def test_app_choice_bad_input(ctx):
    """An --app or --group that names no live loader (none at all, a
    name no loader serves, a dead loader's socket) is refused with one
    line and nothing is sent; a dead loader's socket does not make the
    one live loader ambiguous."""
    run = ctx.env["SDS_RUN_DIR"]
    start = [POINT, "--error", "--for", "60"]
    r = ctx.sds("drill", *start, ok=False)
    eq((r.returncode, r.stderr), (1, "sds-bpf: drill: no app is attached "
                                  "(no loader in %s)\n" % run),
       "drill with no loader at all")
    ctx.attach()
    a = ctx.app()
    # A loader killed by SIGKILL leaves its socket: bound, never served.
    ghost = socket.socket(socket.AF_UNIX)
    ghost.bind(ctx.sock(GROUP, "ghost"))
    ghost.close()
    apps = [(GROUP, APP)]
    none = {"default/drillapp": []}
    cases = [
        (["--app", "nosuch"], "drill: app 'nosuch' is not attached "
         "(no loader serving it in %s)" % run),
        (["--app", "ghost"], "drill: app 'ghost' is not attached "
         "(no loader serving it in %s)" % run),
        (["--group", "nosuch"], "drill: no app is attached in group "
         "'nosuch' (no loader in %s)" % run),
        (["--group", "nosuch", "--app", APP], "drill: app 'drillapp' in "
         "group 'nosuch' is not attached (no loader serving it in %s)" % run),
        (["--app", "bad!"], "bad --app 'bad!': use 1-64 of [A-Za-z0-9_-]"),
        (["--group", "bad!"], "bad --group 'bad!': use 1-64 of "
         "[A-Za-z0-9_-]"),
    ]
    for sel, want in cases:
        refused(ctx, sel + start, want, apps, none, "drill start %s" % sel)
        refused(ctx, sel + [POINT, "--stop"], want, apps, none,
                "drill --stop %s" % sel)
    eq(run_calls(a, 100)["pass"], 100, "calls pass after the refused drills")
    ctx.sds("drill", *start)
    eq(drills_running(ctx, apps), {"default/drillapp": [(POINT, "error")]},
       "the one live loader beside a dead one's socket gets the drill")
    eq(run_calls(a, 100)["fault"], 100, "every call faults")
    ctx.sds("drill", POINT, "--stop")
    eq(drills_running(ctx, apps), none, "drills after --stop")


# ---------------------------------------------------------------------------
# sds-admin

class Admin(sdsadmin.Admin):
    """sds-admin of @ctx on a free port, started (tests/lib/sdsadmin.py)."""

    def __init__(self, ctx):
        super().__init__(ctx, token="drill-t0ken.for_tests_%d" % os.getpid())
        self.start()


A = "/api/v1/groups/%s/apps/%s" % (GROUP, APP)


def test_admin_drill_reaches_loader_and_expires_without_admin(ctx):
    """A drill created in sds-admin reaches the loader in a heartbeat
    reply, injects faults, is audited, and ends at its expiry even after
    the admin is gone."""
    adm = Admin(ctx)
    eq(adm.req("POST", "/api/v1/groups", {"name": GROUP})[0] in (201, 409),
       True, "create group")
    eq(adm.req("POST", "/api/v1/groups/%s/apps" % GROUP, {"name": APP})[0],
       201, "create app")
    ctx.attach("--admin", adm.url, "--token-file", adm.token_file)
    a = ctx.app()
    # Bad input is refused by the API.
    for body, want in [
            ({"point": POINT, "kind": "error", "by": "t"}, "duration_s"),
            ({"point": POINT, "kind": "error", "duration_s": 5}, "by"),
            ({"point": POINT, "kind": "boom", "duration_s": 5, "by": "t"}, "kind"),
            ({"point": POINT, "kind": "error", "ratio": 101, "duration_s": 5,
              "by": "t"}, "ratio"),
            ({"point": POINT, "kind": "delay", "duration_s": 5, "by": "t"},
             "delay_ms"),
            ({"point": POINT, "kind": "error", "duration_s": -1, "by": "t"},
             "duration_s")]:
        st, r = adm.req("POST", A + "/drills", body)
        check(st == 400 and want in r.get("error", ""),
              "POST drills %s: %d %r" % (body, st, r))
    # Long enough to come in a heartbeat (<= 20 s), short enough to expire.
    st, d = adm.req("POST", A + "/drills", {
        "point": POINT, "kind": "error", "ratio": 100, "duration_s": 28,
        "by": "drill-test"})
    eq(st, 201, "create drill: %r" % (d,))
    t_end = time.time() + 28
    # In the reply to the first heartbeat posted after it (the loader's
    # numbers), applied at the next tick; 3 s for the post and the tick.
    p = wait_until(lambda: ctx.point()["drill"],
                   sdstest.heartbeat_after(ctx.stats()["admin"], time.time())
                   + 3.0, "the admin's drill never reached the loader", 0.5)
    eq(p["kind"], "error", "drill kind from the admin")
    eq(p["source"], d["id"], "drill source")
    eq(run_calls(a, 200)["fault"], 200, "faults from the admin's drill")
    st, lst = adm.req("GET", A + "/drills")
    eq([x["id"] for x in lst], [d["id"]], "drill list")
    check(lst[0]["started_by"].startswith("drill-test (token fnv:"),
          "started_by %r" % lst[0]["started_by"])
    st, audit = adm.req("GET", A + "/audit")
    check(any(e["action"] == "drill.start" for e in audit),
          "no drill.start in audit: %r" % audit)
    adm.kill()
    sleep = t_end - time.time() + 1.5
    check(sleep > 0, "drill reached the loader too late to test the expiry")
    eq(run_calls(a, 100)["fault"], 100, "drill runs with the admin gone")
    time.sleep(sleep)
    eq(ctx.point()["drill"], None, "drill after its expiry, admin gone")
    eq(run_calls(a, 100)["pass"], 100, "calls pass after the expiry")


def test_admin_stop_reaches_loader(ctx):
    """Stopping a drill in sds-admin stops it on the loader within a
    heartbeat; the stop is audited and faults reach the admin's stats."""
    adm = Admin(ctx)
    adm.req("POST", "/api/v1/groups", {"name": GROUP})
    adm.req("POST", "/api/v1/groups/%s/apps" % GROUP, {"name": APP})
    ctx.attach("--admin", adm.url, "--token-file", adm.token_file)
    a = ctx.app()
    st, d = adm.req("POST", A + "/drills", {
        "point": POINT, "kind": "error", "ratio": 100, "duration_s": 300,
        "by": "alice"})
    eq(st, 201, "create drill")
    wait_until(lambda: ctx.point()["drill"],
               sdstest.heartbeat_after(ctx.stats()["admin"], time.time()) + 3.0,
               "the admin's drill never reached the loader", 0.5)
    eq(run_calls(a, 50)["fault"], 50, "faults")
    st, r = adm.req("POST", A + "/drills/%d/stop" % d["id"], {"by": "bob"})
    eq(st, 200, "stop: %r" % (r,))
    st, r = adm.req("POST", A + "/drills/%d/stop" % d["id"], {"by": "bob"})
    eq(st, 409, "second stop")
    wait_until(lambda: ctx.point()["drill"] is None,
               sdstest.heartbeat_after(ctx.stats()["admin"], time.time()) + 3.0,
               "the stop never reached the loader", 0.5)
    eq(run_calls(a, 50)["pass"], 50, "calls pass after the stop")
    st, lst = adm.req("GET", A + "/drills")
    check(lst[0]["stopped_by"].startswith("bob (token fnv:"),
          "stopped_by %r" % lst[0]["stopped_by"])
    st, audit = adm.req("GET", A + "/audit")
    check(any(e["action"] == "drill.stop" for e in audit), "no drill.stop")

    def faults():
        st, s = adm.req("GET", A + "/stats?point=" + POINT)
        if st != 200:
            return None
        return s["points"].get(POINT, {}).get("total", {}).get("faults")
    # In the heartbeat of the period the calls were made in.
    eq(wait_until(faults, sdstest.period_sent_at(ctx.stats()["admin"],
                                                 time.time()) + 3.0,
                  "no faults in the admin's stats", 0.5), 50,
       "faults in the admin's stats")


def test_admin_drill_far_expiry_ends_within_a_day(ctx):
    """A reply whose drill expires in 2^40 s (an admin's clock far ahead,
    or not sds-admin at all) runs the drill for DRILL_MAX_S, a day, like
    any other: its expiry does not wrap to a past or random time."""
    far = (1 << 40) - 1           # SDS_HB_TIME_MAX - 1: the most a reply may say

    def answer(doc):
        return {"version": 0, "changed": False, "strategies": None,
                "drills": [{"id": 5, "point": POINT, "kind": "error",
                            "ratio": 100, "delay_ms": 0, "expires_at": far}]}
    adm = FakeAdmin(answer)
    try:
        tok = sdstest.write_token(os.path.join(ctx.tmp, "token"), "t0k-of.a_fake_admin")
        ctx.attach("--admin", adm.url, "--token-file", tok)
        a = ctx.app()
        p = wait_until(lambda: ctx.point()["drill"],
                       sdstest.heartbeat_after(ctx.stats()["admin"],
                                               time.time()) + 3.0,
                       "the fake admin's drill never reached the loader", 0.5)
        eq(p["source"], 5, "drill source")
        left = p["remaining_ms"]
        check(86400000 - 30000 < left <= 86400000,
              "remaining_ms %r, want just under 86,400,000" % left)
        eq(run_calls(a, 50)["fault"], 50, "faults of the far drill")
    finally:
        adm.close()


def test_admin_drills_older_seq_kept_out(ctx):
    """A reply whose drills_seq is lower than the list the loader keeps
    (a heartbeat's reply made before a change, come after the sync that
    brought it: docs/DRILL.md, "The drills' version") leaves the drill
    running; the next reply, of a higher counter, without it, stops it."""
    replies = []
    drill = {"id": 5, "point": POINT, "kind": "error", "ratio": 100, "delay_ms": 0,
             "expires_at": int(time.time()) + 600}

    def answer(doc):
        n = len(replies)
        r = {"version": 0, "changed": False, "strategies": None,
             "drills": [drill] if n == 0 else [], "drills_seq": (5, 4, 6)[min(n, 2)]}
        replies.append(r)
        return r
    adm = FakeAdmin(answer)
    try:
        tok = sdstest.write_token(os.path.join(ctx.tmp, "token"), "t0k-of.a_fake_admin")
        ctx.attach("--admin", adm.url, "--token-file", tok)
        a = ctx.app()
        deadline = sdstest.heartbeat_after(ctx.stats()["admin"], time.time()) + 3.0
        p = wait_until(lambda: ctx.point()["drill"], deadline,
                       "the fake admin's drill never reached the loader", 0.5)
        eq(p["source"], 5, "drill source")
        # The stale reply (counter 4, no drills) answered: the drill stays.
        wait_until(lambda: len(replies) >= 2 or None, time.time() + 15,
                   "no second heartbeat within 15 s", 0.2)
        time.sleep(1.0)
        eq((ctx.point()["drill"] or {}).get("source"), 5, "the drill after the stale reply")
        eq(run_calls(a, 50)["fault"], 50, "faults after the stale reply")
        # Counter 6, no drills: it ends.
        wait_until(lambda: len(replies) >= 3 or None, time.time() + 15,
                   "no third heartbeat within 15 s", 0.2)
        wait_until(lambda: ctx.point()["drill"] is None or None, time.time() + 3,
                   "the drill still runs after the newer reply", 0.2)
        eq(run_calls(a, 50)["pass"], 50, "calls pass after the newer reply")
    finally:
        adm.close()


TESTS = [test_error_ratio_two_processes, test_delay_p50_and_timeout,
         test_stop_and_expiry, test_bad_input,
         test_app_choice_several_loaders, test_app_choice_bad_input,
         test_admin_drill_reaches_loader_and_expires_without_admin,
         test_admin_stop_reaches_loader,
         test_admin_drill_far_expiry_ends_within_a_day,
         test_admin_drills_older_seq_kept_out]

# Seconds per test: a stuck guard, loader or browser fails its test
# instead of hanging `make test` (the slowest drill test takes ~31 s).
TEST_TIMEOUT = 120
SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
SUITE.tests = TESTS


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, lambda name: Ctx(),
                               needs=(SDS, APPBIN)))
