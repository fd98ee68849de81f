#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Host pressure rules (issue 33, docs/PRESSURE.md): a real `sds-bpf attach
--strategies FILE` on a guarded program (tests/targets/guarded.c,
libsds.a), the host's real /proc/pressure/cpu raised by a CPU hog (more
spinning processes than CPUs), and the rules' refusals on the attach
and SIGHUP paths, each its exact line with the strategies in force
kept.

Run as root from anywhere (after `make && make test-targets`):

    python3 tests/pressure/run.py [-v] [NAME-SUBSTRING...]

Every test has its own temp dir, SDS_RUN_DIR, SDS_STATE_DIR and pin
root, and kills every process it started, the hog first.  Counts are
exact; times get margins (the hog slows the loader and this runner too).
The last line is "N passed, M failed, K skipped".  Python 3 standard
library only.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "guard"))
import guard_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdsadmin  # noqa: E402
import sdstest  # noqa: E402
from guard_lib import (GT_DEPS, STATIC, TT, Exp, assert_totals,  # noqa: E402
                       setup, state_of)
from sdstest import Fail, check, log  # noqa: E402
from fake_admin import NOTHING_NEW, FakeAdmin  # noqa: E402

TICK = 0.100
# The rules of the hog test: the hog keeps cpu "some" at 87-100 % here
# (measured: 4 spinning processes at nice 19 on 2 cores, 1-s shares 99.6,
# 92.1, 87.3 %), far above ABOVE; an idle host is at 0.2-0.3 %, and other
# engineers' suites beside this one were seen at 8-20 %, below BELOW.
ABOVE, BELOW = 70, 45
FOR_MS, CLEAR_MS = 2000, 1000
# The hog slows this runner's stats polls and the loader's tick: margin.
MARGIN = 1.5
HOGS = 2 * (os.cpu_count() or 2)
SETTLE = 45.0                 # seconds for other load to leave the host


def rules(above=ABOVE, below=BELOW):
    return [
        {"resource": "cpu", "kind": "some", "above_pct": above,
         "below_pct": below, "for_ms": FOR_MS, "clear_ms": CLEAR_MS,
         "action": "downgrade", "priority": "low"},
        {"resource": "cpu", "kind": "some", "above_pct": above,
         "below_pct": below, "for_ms": FOR_MS, "clear_ms": CLEAR_MS,
         "action": "limits", "limits": {"lim": {"visit_threshold": 0}}},
    ]


DOC = {"version": 1,
       "points": {"low": {"priority": "low"}, "norm": {},
                  "lim": {"priority": "high"}},
       "pressure": rules()}


class Hog:
    """@n processes spinning on the CPU, each in a session of its own,
    at nice 19: they wait for a CPU (which is what PSI's "some" counts)
    while the loader, this runner and other suites' processes go first."""

    def __init__(self, ctx, n):
        self.ps = [subprocess.Popen(["nice", "-n", "19", "sh", "-c",
                                     "while :; do :; done"],
                                    start_new_session=True)
                   for _ in range(n)]
        ctx.others.extend(self.ps)
        self.t0 = time.monotonic()

    def stop(self):
        for p in self.ps:
            sdstest.kill_group(p)
        for p in self.ps:
            p.wait(5)
        return time.monotonic()


class Closing:
    """@x.close() at the test's cleanup (ctx.loaders' cleanup())."""

    def __init__(self, x):
        self.x = x

    def cleanup(self):
        self.x.close()


def cpu_some_total():
    with open("/proc/pressure/cpu") as f:
        for line in f:
            if line.startswith("some "):
                return int(line.split("total=")[1])
    raise Fail("/proc/pressure/cpu has no some line")


def host_quiet(ctx):
    """Wait until this host's cpu pressure is below BELOW over a second
    (another suite's load would fire the rules before the hog)."""
    deadline = time.monotonic() + SETTLE
    while True:
        t0, w0 = cpu_some_total(), time.monotonic()
        time.sleep(1.0)
        pct = (cpu_some_total() - t0) / ((time.monotonic() - w0) * 1e4)
        if pct < BELOW:
            return pct
        if time.monotonic() > deadline:
            raise Fail("cpu some pressure stayed at %.1f %% (>= %d %%) for "
                       "%.0f s before the hog: the host is busy" %
                       (pct, BELOW, SETTLE))


def pressure_of(st):
    p = st.get("pressure")
    check(isinstance(p, dict), "stats has no pressure object: %r" % p)
    return p


def wait_rules(ctx, app, firing, timeout, what):
    t0 = time.monotonic()
    while True:
        st = ctx.stats(app)
        rs = pressure_of(st)["rules"]
        if all(r["firing"] == firing for r in rs):
            return time.monotonic() - t0, st
        if time.monotonic() - t0 > timeout:
            raise Fail("%s: rules not %s within %.1f s: %s"
                       % (what, "firing" if firing else "clear", timeout,
                          json.dumps(pressure_of(st))))
        time.sleep(0.05)


def wait_recovered(ctx, stopped):
    """(when low passed again, when this runner's own reading of cpu some
    over the last CLEAR_MS first was at most BELOW), both after @stopped;
    SETTLE bounds both."""
    samples = [(time.monotonic(), cpu_some_total())]
    quiet = recovered = None
    while recovered is None or quiet is None:
        now = time.monotonic()
        check(now - stopped < SETTLE, "after the hog: low recovered at %s, "
              "the host quiet at %s, within %.0f s" % (recovered, quiet,
                                                       SETTLE))
        samples.append((now, cpu_some_total()))
        old = [s for s in samples if now - s[0] >= CLEAR_MS / 1000.0]
        if quiet is None and old and samples[0][0] >= stopped:
            t0, u0 = old[-1]
            if (samples[-1][1] - u0) / ((now - t0) * 1e4) <= BELOW:
                quiet = now
        if recovered is None and not state_of(
                sdstest.get_point(ctx.stats("app"), "low"))[0]:
            recovered = time.monotonic()
        time.sleep(0.05)
    return recovered, quiet


def calls(t, point, n, exp, want):
    r = t.call(point, n, exp)
    check(r == want, "%d calls of %s: %r, want %r" % (n, point, r, want))


SUITE = sdstest.Suite(timeout=150)
test = SUITE.test


@test
def cpu_hog_sheds_low(ctx):
    quiet = host_quiet(ctx)
    log("cpu some before the hog: %.1f %%" % quiet)
    # An admin that keeps the heartbeats (posted 2 s after each period:
    # SDS_HB_OFFSET_MS) and changes nothing.
    posts = []

    def answer(doc):
        posts.append(doc)
        return NOTHING_NEW
    adm = FakeAdmin(answer)
    ctx.loaders.append(Closing(adm))     # the test's cleanup closes it
    tok = sdstest.write_token(os.path.join(ctx.tmp, "token"),
                              "t0k-of.a_fake_admin")
    path = ctx.copy(STATIC)
    l = ctx.attach(path, "app", ctx.write_strategies(DOC),
                   extra=["--admin", adm.url, "--token-file", tok])
    t = ctx.start(path, "app")
    el, ep, en = Exp(), Exp(), Exp()
    down = {"passed": 0, "downgraded": 50, "failed": 0}
    up = {"passed": 50, "downgraded": 0, "failed": 0}
    # Before the hog: every rule clear, every point passes.
    _, st = wait_rules(ctx, "app", False, 5, "before the hog")
    p = pressure_of(st)
    check(p["scope"] == "host" and p["dir"] == "/proc/pressure",
          "pressure scope %r dir %r" % (p["scope"], p["dir"]))
    check([(r["rule"], r["action"], r["fired"]) for r in p["rules"]] ==
          [(0, "downgrade", 0), (1, "limits", 0)], "rules %r" % p["rules"])
    for name, e in (("low", el), ("norm", en), ("lim", ep)):
        calls(t, name, 50, e, up)
    # The samples cover the rules' window, the host is quiet over it, and
    # a change other load made is a window old: what follows times the
    # rule, not the loader's start or other suites (on a shared host).
    deadline = time.monotonic() + SETTLE
    while True:
        rs = pressure_of(ctx.stats("app"))["rules"]
        if all(r["pct"] is not None and r["pct"] < BELOW and not r["firing"]
               and (r["since_ms"] is None or r["since_ms"] >= FOR_MS)
               for r in rs):
            break
        check(time.monotonic() < deadline, "the rules' windows not covered "
              "or not quiet within %.0f s: %s" % (SETTLE, json.dumps(rs)))
        time.sleep(0.1)
    # Other load may have fired and cleared them since attach: each time
    # 8 events (both rules, low's overload, lim's kill switch).
    fired0 = [r["fired"] for r in rs]
    check(fired0[0] == fired0[1], "the rules fired apart: %r" % fired0)
    hog = Hog(ctx, HOGS)
    react_max = FOR_MS / 1000.0 + TICK + MARGIN
    waited, p = ctx.wait_state("app", "low", True, react_max,
                               "low downgraded under the hog")
    log("low downgraded %.2f s after the hog started" % waited)
    down_period = int(time.time()) // 10 * 10
    check(state_of(p) == (True, "overload", 100), "low's state %r" %
          p.get("state"))
    _, st = wait_rules(ctx, "app", True, 1.0, "under the hog")
    for r in pressure_of(st)["rules"]:
        check(r["pct"] > ABOVE and r["fired"] == fired0[0] + 1,
              "a firing rule's pct %r (want > %d) fired %r (want %d)"
              % (r["pct"], ABOVE, r["fired"], fired0[0] + 1))
    check(pressure_of(st)["resources"]["cpu"]["some_pct"] > ABOVE,
          "cpu some now %r" % pressure_of(st)["resources"]["cpu"])
    # The table says it too: the host's shares, then each rule.
    text = ctx.sds(["stats", "--app", "app"]).out.splitlines()
    lines = [x for x in text if x.startswith("pressure")]
    check(len(lines) == 3 and
          re.match(r"pressure \(host\): cpu \d+\.\d%, memory \d+\.\d%, "
                   r"io \d+\.\d%$", lines[0]) and
          re.match(r"pressure rule 0: cpu some downgrade firing at "
                   r"\d+\.\d% for \d+\.\d s \(fired " +
                   str(fired0[0] + 1) + r"\)$", lines[1]) and
          re.match(r"pressure rule 1: cpu some limits firing at "
                   r"\d+\.\d% for \d+\.\d s \(fired " +
                   str(fired0[0] + 1) + r"\)$", lines[2]),
          "stats' pressure lines: %r" % lines)
    # The low point downgrades every call; the normal point is not
    # touched; the limits rule's kill switch replaces lim's own (none).
    calls(t, "low", 50, el, down)
    calls(t, "norm", 50, en, up)
    calls(t, "lim", 50, ep, down)
    check(state_of(sdstest.get_point(st, "norm")) == (False, None, 0),
          "norm's state under the hog %r"
          % sdstest.get_point(st, "norm").get("state"))
    check(state_of(sdstest.get_point(ctx.stats("app"), "lim"))[:2] ==
          (True, "visit"), "lim under its limits: %r"
          % sdstest.get_point(ctx.stats("app"), "lim").get("state"))
    # A new version with the same rules: they go on firing, no event.
    ctx.write_strategies(dict(DOC, version=2, points=dict(
        DOC["points"], norm={"visit_threshold": 100000})))
    st = ctx.wait_version("app", 2)
    check([(r["firing"], r["fired"]) for r in pressure_of(st)["rules"]] ==
          [(True, fired0[0] + 1)] * 2 and
          state_of(sdstest.get_point(st, "low")) == (True, "overload", 100),
          "after version 2 (the same rules): %s, low %r"
          % (json.dumps(pressure_of(st)["rules"]),
             sdstest.get_point(st, "low").get("state")))
    calls(t, "low", 50, el, down)
    stopped = hog.stop()
    # Within clear_ms + a tick of the hog's end, or, when other suites
    # keep this shared host's pressure up after it, of the moment this
    # runner's own reading of /proc/pressure/cpu over clear_ms fell to
    # BELOW (the loader must follow the host, not the hog).
    recovered, quiet = wait_recovered(ctx, stopped)
    log("low recovered %.2f s after the hog stopped (the host quiet "
        "over %d ms %.2f s after)" % (recovered - stopped, CLEAR_MS,
                                      quiet - stopped))
    check(recovered - max(stopped + CLEAR_MS / 1000.0, quiet)
          <= TICK + MARGIN,
          "low recovered %.2f s after the hog stopped, %.2f s after the "
          "host's cpu some over %d ms fell to %d %%: want within a tick "
          "+ %.1f s of the later of clear_ms and that"
          % (recovered - stopped, recovered - quiet, CLEAR_MS, BELOW,
             MARGIN))
    _, st = wait_rules(ctx, "app", False, 1.0, "after the hog")
    for name, e in (("low", el), ("norm", en), ("lim", ep)):
        calls(t, name, 50, e, up)
    for name, e in (("low", el), ("norm", en), ("lim", ep)):
        # The totals: the first calls may have left the 10-s window by now.
        assert_totals(ctx, "app", name, e, window=False)
    # The events: each rule fired and cleared once; low's overload
    # opened and closed; norm none.
    evs = ctx.events("app", 8 * fired0[0] + 8)[8 * fired0[0]:]
    got = sorted((e.get("point"), e.get("reason"), e.get("event"))
                 for e in evs)
    want = sorted([("pressure.0", "overload", "started"),
                   ("pressure.0", "overload", "ended"),
                   ("pressure.1", "overload", "started"),
                   ("pressure.1", "overload", "ended"),
                   ("low", "overload", "started"),
                   ("low", "overload", "ended"),
                   ("lim", "visit", "started"),
                   ("lim", "visit", "ended")])
    check(got == want, "events %r, want %r" % (got, want))
    order = [(e["point"], e["event"]) for e in evs if e["point"] in
             ("pressure.0", "low")]
    check(order == [("pressure.0", "started"), ("low", "started"),
                    ("pressure.0", "ended"), ("low", "ended")],
          "rule 0 and low in order: %r" % order)
    # The heartbeat of the period low was shed in: low's "overload", not
    # norm's, and each rule's state as the period ended.
    deadline = time.monotonic() + 25
    while True:
        with adm.lock:
            hb = [d for d in posts if d.get("period_start") == down_period]
        if hb or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(len(hb) == 1, "heartbeats of period %d: %d (posts: %r)"
          % (down_period, len(hb), [d.get("period_start") for d in posts]))
    pts = hb[0]["points"]
    check(pts["low"].get("overload") is True and "overload" not in pts["norm"]
          and "overload" not in pts["lim"],
          "the period's points: %s" % json.dumps(pts))
    rs = hb[0].get("pressure")
    check(isinstance(rs, list) and len(rs) == 2 and
          all(r["fired"] == fired0[0] + 1 for r in rs),
          "the period's rules: %r, want 2 that fired %d times"
          % (rs, fired0[0] + 1))


# ---------------------------------------------------------------------------
# Refusals: one line each, the strategies in force kept

def bad_rule(**kw):
    r = {"resource": "cpu", "kind": "some", "above_pct": 40, "for_ms": 1000,
         "action": "downgrade", "priority": "low"}
    r.update(kw)
    return {k: v for k, v in r.items() if v is not None}


def bad_doc(rule, version=2):
    return {"version": version, "points": {"low": {"priority": "low"}},
            "pressure": [rule]}


# (what, the document, the loader's line after "FILE: ")
REFUSALS = [
    ("threshold above 100", bad_doc(bad_rule(above_pct=150)),
     "pressure rule 0: above_pct must be an integer 0..99"),
    ("threshold 100 never exceeded", bad_doc(bad_rule(above_pct=100)),
     "pressure rule 0: above_pct must be an integer 0..99"),
    ("negative threshold", bad_doc(bad_rule(above_pct=-1)),
     "pressure rule 0: above_pct must be an integer 0..99"),
    ("window the kernel cannot poll", bad_doc(bad_rule(for_ms=100)),
     "pressure rule 0: for_ms must be an integer 500..10000"),
    ("clear window too long", bad_doc(bad_rule(clear_ms=20000)),
     "pressure rule 0: clear_ms must be an integer 500..10000"),
    ("unknown resource", bad_doc(bad_rule(resource="disk")),
     "pressure rule 0: resource must be \"cpu\", \"memory\" or \"io\""),
    ("cpu full never fires host-wide", bad_doc(bad_rule(kind="full")),
     "pressure rule 0: cpu full is always 0 host-wide: the rule can never "
     "fire"),
    ("no low point", {"version": 2, "points": {"norm": {}},
                      "pressure": [bad_rule()]},
     "pressure rule 0: no point has priority \"low\": the rule would "
     "downgrade nothing"),
    ("unknown field", bad_doc(bad_rule(above=40)),
     "pressure rule 0: unknown field 'above'"),
    ("bad priority", {"version": 2, "points": {"low": {"priority": "lo"}}},
     "point 'low': priority must be \"low\", \"normal\" or \"high\""),
    ("resource the host does not report",
     bad_doc(bad_rule(resource="memory", kind="full")),
     "pressure rule 0: this host does not report memory pressure "
     "(no {psi}/memory)"),
]


def psi_dir_without_memory(ctx):
    """A PSI directory with copies of the host's cpu and io, and no
    memory (the loader opens no symlink)."""
    d = os.path.join(ctx.tmp, "psi")
    os.mkdir(d)
    for res in ("cpu", "io"):
        with open(os.path.join("/proc/pressure", res)) as src, \
                open(os.path.join(d, res), "w") as dst:
            dst.write(src.read())
    return d


@test
def refused_on_sighup(ctx):
    # The loader reads the host's cpu and io, and no memory file.
    psi = psi_dir_without_memory(ctx)
    ctx.env["SDS_PSI_DIR"] = psi
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "low": {"priority": "low", "visit_threshold": 0}}})
    exp = Exp()
    calls(t, "low", 10, exp, {"passed": 0, "downgraded": 10, "failed": 0})
    spath = ctx.strategies_path()
    for what, doc, line in REFUSALS:
        line = line.format(psi=psi)
        want = "sds-bpf: %s: %s; the strategies in force stay\n" % (spath, line)
        if "does not report" in line:
            # Valid as a document: refused where it is applied.
            want = "sds-bpf: %s; the strategies in force stay\n" % line
        # The file renamed into place is read at once (the loop watches
        # it); SIGHUP reads it again: one line each time.
        for how in ("the file written", "SIGHUP"):
            before = l.stderr()
            if how == "SIGHUP":
                l.signal(signal.SIGHUP)
            else:
                ctx.write_strategies(doc)
            deadline = time.monotonic() + 5
            while l.stderr() == before and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)   # a second line would be there by now
            new = l.stderr()[len(before):]
            check(new == want, "%s, %s: the loader said %r, want %r"
                  % (what, how, new, want))
            st = ctx.stats("app")
            check(st.get("strategies_version") == 1,
                  "%s, %s: strategies_version %r, want 1 (kept)"
                  % (what, how, st.get("strategies_version")))
            # The kept kill switch still downgrades.
            calls(t, "low", 10, exp,
                  {"passed": 0, "downgraded": 10, "failed": 0})
    # A rule on a resource the host reports is taken.
    ctx.write_strategies(bad_doc(bad_rule(resource="io"), version=3))
    l.signal(signal.SIGHUP)
    ctx.wait_version("app", 3)
    p = pressure_of(ctx.stats("app"))
    check(p["dir"] == psi and p["resources"]["memory"] is None and
          [r["resource"] for r in p["rules"]] == ["io"],
          "pressure after version 3: %s" % json.dumps(p))
    assert_totals(ctx, "app", "low", exp, window=False)


@test
def refused_on_attach(ctx):
    psi = psi_dir_without_memory(ctx)
    ctx.env["SDS_PSI_DIR"] = psi
    path = ctx.copy(STATIC)
    for what, doc, line in REFUSALS:
        line = line.format(psi=psi)
        spath = ctx.write_strategies(doc)
        r = subprocess.run([sdstest.SDS, "attach", "--app", "app",
                            "--strategies", spath, path],
                           env=ctx.env, cwd=ctx.tmp, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=60)
        want = "sds-bpf: %s: %s\n" % (spath, line)
        check(r.returncode != 0 and r.stderr == want,
              "%s: attach exited %d saying %r, want non-zero and %r"
              % (what, r.returncode, r.stderr, want))
        check(not os.path.exists(sdstest.sock_path(ctx.run_dir, "default",
                                                   "app")),
              "%s: a socket was left" % what)


@test
def function_point_without_failfast_refused(ctx):
    """A function point cannot be downgraded without :failfast=: a rule
    that would shed it is refused at attach, and a rule shedding only low
    points (the function point is normal) is taken."""
    path = ctx.copy(STATIC)
    doc = {"version": 1, "points": {"fn": {"priority": "low"}},
           "pressure": [bad_rule()]}
    spath = ctx.write_strategies(doc)
    r = subprocess.run([sdstest.SDS, "attach", "--app", "app", "--strategies",
                        spath, path, "fn=guarded_call"],
                       env=ctx.env, cwd=ctx.tmp, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    want = ("sds-bpf: %s: pressure rule 0: function point 'fn' has no "
            ":failfast=, so it cannot be downgraded\n" % spath)
    check(r.returncode != 0 and r.stderr == want,
          "attach exited %d saying %r, want non-zero and %r"
          % (r.returncode, r.stderr, want))
    # Limits it cannot enforce: a function point has no token bucket.
    spath = ctx.write_strategies({"version": 1, "points": {}, "pressure": [
        {"resource": "cpu", "above_pct": 40, "for_ms": 1000,
         "action": "limits", "limits": {"fn": {"token_rate": 10}}}]})
    r = subprocess.run([sdstest.SDS, "attach", "--app", "app", "--strategies",
                        spath, path, "fn=guarded_call"],
                       env=ctx.env, cwd=ctx.tmp, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    want = ("sds-bpf: %s: pressure rule 0: limits: point 'fn': token_rate "
            "needs a guard point (sds_enter/sds_should_downgrade) or "
            ":failfast= on this function point (docs/FAILFAST.md): a function "
            "point cannot hold its calls back\n" % spath)
    check(r.returncode != 0 and r.stderr == want,
          "limits: attach exited %d saying %r, want non-zero and %r"
          % (r.returncode, r.stderr, want))
    # Normal, it is not shed by a low rule: the loader serves.
    doc["points"] = {"fn": {}, "low": {"priority": "low"}}
    ctx.write_strategies(doc)
    guard_lib.Loader(ctx, ["--app", "app", "--strategies", spath, path,
                           "fn=guarded_call"], "app")
    p = pressure_of(ctx.stats("app"))
    check([r["action"] for r in p["rules"]] == ["downgrade"],
          "rules %s" % json.dumps(p))


@test
def admin_rules_reach_loader(ctx):
    """Rules stored in sds-admin reach the loader in its answer and are
    in force there; a rule the host cannot enforce (memory, which the
    loader's PSI directory lacks) is refused by the loader in one line,
    the admin's earlier version kept."""
    psi = psi_dir_without_memory(ctx)
    ctx.env["SDS_PSI_DIR"] = psi
    adm = sdsadmin.Admin(ctx, token="pressure-t0ken.for_tests_%d" % os.getpid())
    adm.start()
    adm.ok("POST", "/groups", {"name": "default"}, want=201)
    adm.ok("POST", "/groups/default/apps", {"name": "app"}, want=201)
    a = "/groups/default/apps/app/schemes/default/strategies"
    adm.ok("PUT", a, {"points": {"low": {"priority": "low"}},
                      "pressure": [bad_rule(resource="io", above_pct=90)]})
    path = ctx.copy(STATIC)
    l = ctx.attach(path, "app", extra=["--admin", adm.url, "--token-file",
                                       adm.token_file])
    st = ctx.wait_version("app", 2, timeout=25)
    p = pressure_of(st)
    check([(r["resource"], r["action"]) for r in p["rules"]] ==
          [("io", "downgrade")], "the admin's rules in the loader: %s"
          % json.dumps(p))
    check(state_of(sdstest.get_point(st, "low"))[0] is False,
          "low before any pressure: %r" % sdstest.get_point(st, "low"))
    before = l.stderr()
    adm.ok("PUT", a, {"points": {"low": {"priority": "low"}},
                      "pressure": [bad_rule(resource="memory", kind="full")]})
    want = ("sds-bpf: pressure rule 0: this host does not report memory "
            "pressure (no %s/memory); the strategies in force stay\n" % psi)
    deadline = time.monotonic() + 25
    while want not in l.stderr()[len(before):] and time.monotonic() < deadline:
        time.sleep(0.2)
    check(l.stderr()[len(before):].count(want) >= 1,
          "the loader said %r, want %r" % (l.stderr()[len(before):], want))
    st = ctx.stats("app")
    check(st.get("strategies_version") == 2 and
          [r["resource"] for r in pressure_of(st)["rules"]] == ["io"],
          "after the admin's refused version 3: version %r, rules %s"
          % (st.get("strategies_version"), json.dumps(pressure_of(st))))


@test
def hostile_psi_text(ctx):
    """A PSI file that is not PSI's format: the resource reads as
    unknown, its rule never fires, the point passes."""
    d = os.path.join(ctx.tmp, "psi")
    os.mkdir(d)
    with open(os.path.join(d, "cpu"), "w") as f:
        # total goes past 64 bits' 19 digits: refused, not wrapped.
        f.write("some avg10=99.00 avg60=99.00 avg300=99.00 "
                "total=99999999999999999999999\n")
    ctx.env["SDS_PSI_DIR"] = d
    l, t, _ = setup(ctx, {"version": 1,
                          "points": {"low": {"priority": "low"}},
                          "pressure": [bad_rule(above_pct=0, for_ms=500)]})
    time.sleep(1.5)
    st = ctx.stats("app")
    p = pressure_of(st)
    check(p["resources"]["cpu"] is None and not p["rules"][0]["firing"] and
          p["rules"][0]["pct"] is None,
          "an unreadable cpu file: %s" % json.dumps(p))
    exp = Exp()
    calls(t, "low", 20, exp, {"passed": 20, "downgraded": 0, "failed": 0})
    assert_totals(ctx, "app", "low", exp)


def preflight():
    err = sdstest.stale_error(os.path.join(TT, STATIC), GT_DEPS)
    if err:
        return err
    if not os.path.exists("/proc/pressure/cpu"):
        return "this kernel has no /proc/pressure/cpu (PSI off)"
    return None


if __name__ == "__main__":
    sys.exit(SUITE.main(sys.argv[1:], guard_lib.Ctx,
                        lambda: sdstest.preflight_error(
                            needs=[sdstest.SDS, os.path.join(TT, STATIC)],
                            bpffs=True,
                            extra=preflight)))
