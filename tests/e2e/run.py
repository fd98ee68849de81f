#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
End-to-end tests of the heartbeat (DESIGN.md §4, §5, §7; issue 4,
"Integration"): a real sds-admin on a free loopback port with its own
SQLite file, a real `sds-bpf attach --admin` on a private copy of
target_pie (tests/targets/target.c), real uprobes, exact numbers.

Run as root from anywhere:

    python3 tests/e2e/run.py [-v] [NAME-SUBSTRING...]

Periods are natural 10-s wall-clock periods, each sent at this host's
offset (2-9 s) after it ends, so most tests take one or two periods.
Every test gets its own temp dir, SDS_RUN_DIR, SDS_STATE_DIR, token file,
database and port; every process it starts runs in its own session and
its group is killed when the test ends, pass or fail.  Nothing is
skipped: a test that cannot run fails and says why.  The last line is
"N passed, M failed"; the exit status is non-zero when anything failed.

Python 3 standard library only.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import (BUILD, SDS, Fail, KernelSnapshot,  # noqa: E402
                     check, eq, free_port, log, wait_until)
from fake_admin import NOTHING_NEW, FakeAdmin  # noqa: E402

_kill_group = sdstest.kill_group
sdstest.log_stamps()
ADMIN = sdstest.admin_path()
TARGET = os.path.join(BUILD, "test", "targets", "target_pie")

APP = "target_pie"              # what the loader reports TARGET as
GROUP = "default"
A = "/groups/%s/apps/%s" % (GROUP, APP)
TOKEN = "e2e-t0ken_%d" % os.getpid()
PERIOD = 10
READY_TIMEOUT = 10.0            # seconds for the loader's socket to appear
TEST_TIMEOUT = 100              # seconds for a whole test


# ---------------------------------------------------------------------------
# Wall-clock periods

def period_of(t):
    return int(t) // PERIOD * PERIOD


def wait_safe(lo=2.0, hi=6.5):
    """Sleep until the wall clock is between @lo and @hi seconds into a
    period, and return that period.  The loader counts in monotonic
    seconds and maps them to wall seconds, so calls made well inside a
    period belong to it whatever the rounding."""
    now = time.time()
    into = now - period_of(now)
    if into < lo:
        time.sleep(lo - into)
    elif into > hi:
        time.sleep(PERIOD - into + lo)
    p = period_of(time.time())
    log("now %.2f s into period %d" % (time.time() - p, p))
    return p


def sleep_until(t):
    left = t - time.time()
    if left > 0:
        time.sleep(left)


# ---------------------------------------------------------------------------
# Processes

class Admin:
    """One sds-admin on a loopback port; restartable on the same port/db."""

    def __init__(self, ctx, port=None):
        self.ctx = ctx
        self.db = os.path.join(ctx.tmp, "sds.db")
        self.port = port
        self.p = None
        self.runs = 0
        self.extra = []         # more sds-admin arguments

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _errpath(self):
        return os.path.join(self.ctx.tmp, "admin-%d.err" % self.runs)

    def stderr(self):
        try:
            with open(self._errpath(), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self, same_port=False):
        attempts = 1 if same_port else 5
        for _ in range(attempts):
            if not same_port:
                self.port = free_port()
            self.runs += 1
            argv = sdstest.admin_argv(ADMIN, self.port, self.db,
                                      self.ctx.token_file, self.extra)
            log(" ".join(argv))
            with open(self._errpath(), "wb") as e:
                self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                          stderr=e, stdin=subprocess.DEVNULL,
                                          cwd=self.ctx.tmp,
                                          start_new_session=True)
            self.ctx.procs.append(self.p)
            deadline = time.time() + 10
            while time.time() < deadline and self.p.poll() is None:
                try:
                    st, _ = self.req("GET", "/healthz", token=False)
                    if st == 200:
                        return self
                except OSError:
                    pass
                time.sleep(0.05)
            if self.p.poll() is None:
                _kill_group(self.p)
                self.p.wait(5)
                raise Fail("sds-admin on port %d: no /healthz within 10 s; "
                           "stderr %r" % (self.port, self.stderr()))
            if "Address already in use" not in self.stderr() or same_port:
                break
        raise Fail("sds-admin did not start on port %d (exit %s): %s"
                   % (self.port, self.p.returncode, self.stderr().strip()))

    def stop(self):
        """SIGTERM: the admin must exit 0 and say nothing."""
        log("stopping sds-admin (SIGTERM)")
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(15)
        except subprocess.TimeoutExpired:
            _kill_group(self.p)
            self.p.wait(5)
            raise Fail("sds-admin did not exit within 15 s of SIGTERM")
        eq(rc, 0, "sds-admin exit status after SIGTERM (stderr %r)"
           % self.stderr())
        eq(self.stderr(), "", "sds-admin stderr")
        # Nothing may answer on the port any more.
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
            raise Fail("port %d still accepts connections after sds-admin "
                       "exited" % self.port)
        except OSError:
            pass

    def req(self, method, path, body=None, token=True):
        h = {}
        if token:
            h["Authorization"] = "Bearer " + TOKEN
        return sdstest.http_request(self.port, method, path, body, h)

    def ok(self, method, path, body=None, want=200):
        st, doc = self.req(method, "/api/v1" + path, body)
        if st != want:
            raise Fail("%s /api/v1%s %s: status %d, want %d: %r"
                       % (method, path, json.dumps(body) if body else "",
                          st, want, doc))
        return doc

    def hosts(self):
        st, doc = self.req("GET", "/api/v1" + A + "/hosts")
        return doc if st == 200 else []

    def last_period(self, host):
        for h in self.hosts():
            if h.get("host") == host:
                return h.get("last_period")
        return None

    def stats(self, point, frm, to):
        return self.ok("GET", "%s/stats?from=%d&to=%d&step=10&point=%s"
                       % (A, frm, to, point))


class Target(sdstest.LineReader):
    """target_pie driven on stdin (tests/targets/target.c)."""

    name = APP

    def __init__(self, ctx, path):
        self.ctx = ctx
        self.path = path
        self.errf = open(os.path.join(ctx.tmp, "target.err"), "wb")
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf,
                                  cwd=ctx.tmp, start_new_session=True)
        ctx.procs.append(self.p)
        ctx.files.append(self.errf)
        self.buf = b""
        eq(self.readline(10), "ready", "target_pie's first line")

    def stamp(self):
        """One call of work(); the wall clock just before and after it, as
        the program read it: (t0, t1) in seconds."""
        log("target_pie <- stamp")
        self.p.stdin.write(b"stamp\n")
        self.p.stdin.flush()
        at = self.readline(10).split()
        eq((len(at), at[0] if at else None), (3, "at"), "stamp's reply")
        eq(self.readline(10), "done", "stamp's last line")
        return int(at[1]) / 1e9, int(at[2]) / 1e9

    def cmd(self, line, timeout=60):
        log("target_pie <- " + line)
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        while True:
            l = self.readline(timeout)
            if l == "done":
                return
            if l.startswith("error"):
                raise Fail("target_pie: %s" % l)


class Loader:
    """A running `sds-bpf attach`."""

    def __init__(self, ctx, args, env=None):
        self.ctx = ctx
        self.args = args
        n = len(ctx.loaders)
        self.outpath = os.path.join(ctx.tmp, "attach-%d.out" % n)
        self.errpath = os.path.join(ctx.tmp, "attach-%d.err" % n)
        self.sock = os.path.join(ctx.run_dir, "%s.%s.sock" % (GROUP, APP))
        log("sds-bpf attach " + " ".join(args))
        with open(self.outpath, "wb") as o, open(self.errpath, "wb") as e:
            self.p = subprocess.Popen([SDS, "attach"] + args, stdout=o,
                                      stderr=e, stdin=subprocess.DEVNULL,
                                      env=env or ctx.env, cwd=ctx.tmp,
                                      start_new_session=True)
        self.started = time.time()
        ctx.procs.append(self.p)
        ctx.loaders.append(self)
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            rc = self.p.poll()
            if rc is not None:
                raise Fail("sds-bpf attach %s exited with %d before its socket "
                           "appeared; stderr: %s" % (" ".join(args), rc,
                                                     self.stderr().strip()))
            if os.path.exists(self.sock):
                break
            if time.monotonic() > deadline:
                raise Fail("sds-bpf attach %s: no socket after %.0f s; "
                           "stderr %r" % (" ".join(args), READY_TIMEOUT,
                                          self.stderr()))
            time.sleep(0.02)

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stats(self):
        r = self.ctx.sds(["stats", "--app", APP, "--json"], quiet=True)
        check(r.rc == 0, "sds-bpf stats --app %s --json: %r" % (APP, r))
        try:
            return json.loads(r.out)
        except ValueError as e:
            raise Fail("stats --json is not JSON (%s): %r" % (e, r.out))

    def stop(self, timeout=10):
        """SIGINT: attach detaches and exits 0."""
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGINT)
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill_group(self.p)
            self.p.wait(5)
            raise Fail("sds-bpf attach did not exit within %d s of SIGINT"
                       % timeout)
        eq(rc, 0, "sds-bpf attach exit status on SIGINT (stderr %r)"
           % self.stderr())
        check(not os.path.exists(self.sock), "socket %s left after SIGINT"
              % self.sock)


class Ctx(sdstest.TestDir):
    """One test's temp dir, environment, token and processes."""

    def __init__(self, name):
        super().__init__(name, "sds-e2e-")
        self.token_file = sdstest.write_token(os.path.join(self.tmp, "token"),
                                              TOKEN)
        self.procs = []
        self.loaders = []
        self.files = []
        self.socks = []
        self.servers = []
        self.target_path = None

    def cleanup(self):
        for p in self.procs:
            sdstest.reap(p, always=False)
            sdstest.close_streams(p)
        for srv in self.servers:
            srv.shutdown()
            srv.server_close()
        for f in self.files + self.socks:
            f.close()
        if getattr(self, "pg", None):
            self.pg.stop()      # after the admins using it are reaped
        self.remove()

    def target(self):
        """A private copy of target_pie (its own inode: only our calls hit
        our probes), started."""
        if not self.target_path:
            self.target_path = os.path.join(self.tmp, APP)
            shutil.copy2(TARGET, self.target_path)
        return Target(self, self.target_path)

    def admin(self):
        return Admin(self).start()

    def attach(self, admin_urls, extra=(), point="w=work:err=neg", env=None,
               state_dir=True):
        if not self.target_path:
            self.target_path = os.path.join(self.tmp, APP)
            shutil.copy2(TARGET, self.target_path)
        args = ["--admin", admin_urls, "--token-file", self.token_file]
        if state_dir:
            args += ["--state-dir", self.state_dir]
        return Loader(self, args + list(extra) + [self.target_path, point],
                      env=env)

    def sds(self, args, timeout=30, env=None, quiet=False):
        cmd = [SDS] + args
        if not quiet:
            log(" ".join(cmd))
        return sdstest.run_group(cmd, env or self.env, self.tmp, self.procs,
                                 timeout)


class BadAdmin(FakeAdmin):
    """A fake sds-admin (real HTTP on a loopback port) whose heartbeat
    replies are HTTP 200 with a body the loader cannot use: the first
    period it is sent gets @bodies[0], the second @bodies[1], and so on;
    periods past the list get a good reply.  It counts the posts of each
    period (what a real admin would have stored each time)."""

    GOOD = json.dumps(NOTHING_NEW).encode()

    def __init__(self, ctx, bodies):
        self.bodies = bodies
        self.posts = {}         # period_start -> posts
        self.order = []         # period_starts, first post first
        super().__init__(self._answer)
        ctx.servers.append(self.srv)

    def _answer(self, doc):
        p = doc["period_start"]
        if p not in self.posts:
            self.order.append(p)
            self.posts[p] = 0
        self.posts[p] += 1
        i = self.order.index(p)
        return self.bodies[i] if i < len(self.bodies) else self.GOOD

    def snapshot(self):
        with self.lock:
            return dict(self.posts), list(self.order)


# ---------------------------------------------------------------------------
# Assertions

COUNTS = ("visits", "exceptions", "timeouts", "downgrades")


def get_point(st, name):
    return sdstest.get_point(st, name, required=False)


def need_point(st, name):
    p = get_point(st, name)
    check(p is not None, "stats: no point %r in %r"
          % (name, [x.get("name") for x in st.get("points", [])]))
    return p


def admin_of(st):
    a = st.get("admin")
    check(isinstance(a, dict), "stats --json: no \"admin\" object: %r" % st)
    for k in ("urls", "host", "offset_ms", "sent", "pending", "dropped",
              "failures", "admin_errors", "last_error"):
        check(k in a, "stats --json admin: no %r in %r" % (k, a))
    return a


def totals(p):
    return {k: p["total"][k] for k in COUNTS}


def offset_s(loader):
    """This host's heartbeat offset inside the period, in seconds
    (DESIGN.md §7: 2-9 s after the period ends)."""
    st = loader.stats()
    off = admin_of(st)["offset_ms"] / 1000.0
    check(2.0 <= off < 9.0, "admin.offset_ms %r outside 2000..8999"
          % admin_of(st)["offset_ms"])
    return off


def sent_upto(admin, loader, host, period):
    """The loader's "admin" object once the admin holds @period of @host
    and the loader has nothing pending (the admin stores a heartbeat
    before it replies, the loader counts it sent after the reply)."""
    if (admin.last_period(host) or 0) < period:
        return None
    a = admin_of(loader.stats())
    return a if a["pending"] == 0 else None


def admin_totals(admin, point, frm, to):
    doc = admin.stats(point, frm, to)
    pts = doc.get("points", {})
    check(point in pts, "admin stats %d..%d: no point %r: %r"
          % (frm, to, point, doc))
    return pts[point], doc


def per_period(pt):
    """{period_start: {visits, exceptions, timeouts, downgrades}} for the
    periods with anything counted."""
    out = {}
    for i, t in enumerate(pt["t"]):
        row = {k: pt[k][i] for k in COUNTS}
        if any(row.values()):
            out[t] = row
    return out


def strategy_doc(admin):
    doc = admin.ok("GET", A + "/strategies")
    return {"version": doc["version"], "points": doc["points"]}


def make_app(admin, points):
    """The app with @points as its active scheme's strategies; the
    admin's version."""
    admin.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    doc = admin.ok("PUT", A + "/schemes/default/strategies",
                   {"points": points, "comment": "e2e"})
    v = admin.ok("GET", A + "/active_scheme")["version"]
    eq(doc.get("version"), v, "strategies PUT reply version vs active_scheme")
    check(v >= 2, "app version %r after a strategies PUT, want >= 2" % v)
    return v


KILL = {"visit_threshold": 0}
W_LIMIT = 5


def wait_strategy(loader, version, deadline, point="order"):
    """Until stats shows @version in force and @point tripped by the kill
    switch; the stats."""
    def probe():
        st = loader.stats()
        p = get_point(st, point)
        if st.get("strategies_version") == version and p and \
                p.get("state", {}).get("downgraded"):
            return st
        probe.last = st
        return None
    probe.last = None

    def why(_):
        st = probe.last or {}
        return ("strategies version %d not in force by %.1f s after attach: "
                "strategies_version %r, points %r, admin %r; loader stderr %r"
                % (version, deadline - loader.started,
                   st.get("strategies_version"),
                   [(p.get("name"), p.get("kind"), p.get("state"))
                    for p in st.get("points", [])],
                   st.get("admin"), loader.stderr()))
    return wait_until(probe, deadline, why)


def assert_kill_switch(st, version, what):
    eq(st.get("strategies_version"), version, what + ": strategies_version")
    p = need_point(st, "order")
    eq(p.get("kind"), "guard", what + ": kind of point order")
    s = p.get("state", {})
    eq((s.get("downgraded"), s.get("reason")), (True, "visit"),
       what + ": state of order (%r)" % s)


def assert_w_limit(ctx, loader, t, what):
    """w has visit_threshold W_LIMIT: W_LIMIT calls leave it alone, one
    more trips it (visits - downgrades > threshold), and function points
    only observe: downgrades stay 0."""
    base = need_point(loader.stats(), "w")["total"]["visits"]
    check(base == 0, "%s: w has %d visits before the test drove any"
          % (what, base))
    t.cmd("work %d 0 0 0" % W_LIMIT)
    time.sleep(0.5)         # five ticks
    p = need_point(loader.stats(), "w")
    eq(p["total"]["visits"], W_LIMIT, what + ": w visits")
    eq(p["state"].get("downgraded"), False,
       what + ": w with %d visits under visit_threshold %d (state %r)"
       % (W_LIMIT, W_LIMIT, p["state"]))
    t.cmd("work 1 0 0 0")

    def tripped():
        q = need_point(loader.stats(), "w")
        return q if q["state"].get("downgraded") else None
    p = wait_until(tripped, time.time() + 2,
                   lambda _: "%s: w not downgraded 2 s after %d visits > "
                   "visit_threshold %d: %r"
                   % (what, W_LIMIT + 1, W_LIMIT,
                      need_point(loader.stats(), "w")))
    eq(p["state"].get("reason"), "visit", what + ": reason of w's state")
    eq(p["kind"], "function", what + ": kind of w")
    eq(totals(p), {"visits": W_LIMIT + 1, "exceptions": 0, "timeouts": 0,
                   "downgrades": 0}, what + ": w totals")


# ---------------------------------------------------------------------------
# Tests

SUITE = sdstest.Suite(timeout=TEST_TIMEOUT, fail_time=True, log_total=True)
TESTS = SUITE.tests
test = SUITE.test


@test
def strategy_through_heartbeat(ctx):
    admin = ctx.admin()
    v = make_app(admin, {"order": KILL, "w": {"visit_threshold": W_LIMIT}})
    want = strategy_doc(admin)
    t = ctx.target()
    l = ctx.attach(admin.url)
    st = l.stats()
    a = admin_of(st)
    eq(a["urls"], [admin.url], "admin.urls")
    check(get_point(st, "order") is None,
          "point order exists before any heartbeat: %r" % get_point(st, "order"))
    cache = os.path.join(ctx.state_dir, "%s.%s.strategies.json" % (GROUP, APP))
    check(not os.path.exists(cache), "cache %s exists before any heartbeat"
          % cache)
    off = offset_s(l)
    # One period (the one open at attach) + the offset + 3 s of margin.
    deadline = period_of(l.started) + PERIOD + off + 3.0
    check(deadline - l.started <= 25, "deadline %.1f s > 25 s" %
          (deadline - l.started))
    st = wait_strategy(l, v, deadline)
    log("strategies in force %.1f s after attach" % (time.time() - l.started))
    assert_kill_switch(st, v, "after the first heartbeat")
    eq(admin_of(st)["failures"], 0, "admin.failures")
    check(admin_of(st)["sent"] >= 1, "admin.sent %r" % admin_of(st)["sent"])
    # The cache holds what the admin serves.
    check(os.path.exists(cache), "no cache %s (state dir holds %r)"
          % (cache, os.listdir(ctx.state_dir)))
    with open(cache) as f:
        got = json.load(f)
    eq(got, want, "cached strategies in %s" % cache)
    # The function point's visit limit is in force too.
    assert_w_limit(ctx, l, t, "strategy from the admin")
    # The host is known to the admin.
    hosts = [h["host"] for h in admin.hosts()]
    eq(hosts, [admin_of(st)["host"]], "the admin's hosts of %s" % APP)

    # A change at the admin is in force after the next heartbeat: the
    # kill switch is lifted, w's limit raised above its 6 visits.
    doc = admin.ok("PUT", A + "/schemes/default/strategies",
                   {"points": {"w": {"visit_threshold": 1000}}})
    v2 = doc["version"]
    eq(v2, v + 1, "version after the change")
    want2 = strategy_doc(admin)
    now = time.time()
    send = period_of(now) + off
    if send <= now:
        send += PERIOD
    st = wait_until(
        lambda: (lambda s: s if s.get("strategies_version") == v2 else None)(
            l.stats()),
        send + 3.0,
        lambda _: "version %d not in force 3 s after the next heartbeat: %r"
        % (v2, l.stats()))
    p = get_point(st, "order")
    check(p is None or p["state"].get("downgraded") is False,
          "order still downgraded after its strategy was removed: %r" % p)
    p = need_point(st, "w")
    eq((p["state"].get("downgraded"), totals(p)),
       (False, {"visits": W_LIMIT + 1, "exceptions": 0, "timeouts": 0,
                "downgrades": 0}),
       "w's state and totals under visit_threshold 1000")
    with open(cache) as f:
        eq(json.load(f), want2, "cache after the change")
    l.stop()


N, E, TS, MS, TMO = 1000, 137, 5, 30, 20


@test
def statistics_equal(ctx):
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url, point="w=work:err=neg:timeout_ms=%d" % TMO)
    first = period_of(l.started)
    off = offset_s(l)
    host = admin_of(l.stats())["host"]
    p = wait_safe()
    t.cmd("work %d %d %d %d" % (N, E, TS, MS))
    check(period_of(time.time()) == p and time.time() - p < 8.5,
          "the calls did not fit in period %d (now %.2f)" % (p, time.time()))
    lp = need_point(l.stats(), "w")
    want = {"visits": N, "exceptions": E, "timeouts": TS, "downgrades": 0}
    eq(totals(lp), want, "loader totals")
    eq(lp["latency_ns"]["count"], N, "loader latency_ns.count")
    # The period is sent once it ends, at the offset.
    wait_until(lambda: sent_upto(admin, l, host, p),
               p + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin by its offset + 4 s: "
               "hosts %r, loader admin %r" % (p, admin.hosts(),
                                              admin_of(l.stats())))
    st = l.stats()
    lp = need_point(st, "w")
    eq(totals(lp), want, "loader totals after the heartbeat")
    at, doc = admin_totals(admin, "w", first - PERIOD, p + PERIOD)
    got = {k: at["total"][k] for k in COUNTS}
    eq(got, totals(lp), "admin's sums over %d..%d vs the loader's totals"
       % (first - PERIOD, p + PERIOD))
    eq(per_period(at), {p: want}, "admin's periods with counts")
    hist = at["total"].get("latency_hist", [])
    eq(sum(hist), lp["latency_ns"]["count"],
       "admin's summed latency_hist vs the loader's latency_ns.count")
    a = admin_of(st)
    eq((a["dropped"], a["failures"], a["admin_errors"], a["last_error"]),
       (0, 0, 0, ""), "admin.dropped, failures, admin_errors, last_error")
    check(a["sent"] == (p - first) // PERIOD + 1,
          "admin.sent %d, want %d (periods %d..%d)"
          % (a["sent"], (p - first) // PERIOD + 1, first, p))
    l.stop()


@test
def admin_down_two_periods(ctx):
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url, point="w=work:err=neg:timeout_ms=%d" % TMO)
    first = period_of(l.started)
    off = offset_s(l)
    host = admin_of(l.stats())["host"]
    batches = {}

    def drive(n, e, ts, after=0):
        p = wait_safe()
        while p <= after:
            sleep_until(p + PERIOD)
            p = wait_safe()
        t.cmd("work %d %d %d %d" % (n, e, ts, MS if ts else 0))
        check(period_of(time.time()) == p, "batch did not fit in period %d" % p)
        check(p not in batches, "two batches in period %d" % p)
        batches[p] = {"visits": n, "exceptions": e, "timeouts": ts,
                      "downgrades": 0}
        return p

    pa = drive(100, 10, 0)
    a0 = wait_until(lambda: sent_upto(admin, l, host, pa),
                    pa + PERIOD + off + 4.0,
                    lambda _: "period %d not at the admin: hosts %r, loader %r"
                    % (pa, admin.hosts(), admin_of(l.stats())))
    eq((a0["pending"], a0["failures"]), (0, 0), "admin.pending, failures "
       "before the admin stops")
    admin.stop()
    down_at = time.time()
    pb = drive(200, 20, 2)
    pc = drive(300, 30, 0, after=pb)
    check(pc == pb + PERIOD, "batches B and C in periods %d and %d, want "
          "consecutive" % (pb, pc))
    # Until C's send time has passed: both B and C failed to go.
    sleep_until(pc + PERIOD + off + 2.5)
    down_for = time.time() - down_at
    check(down_for >= 2 * PERIOD, "admin down only %.1f s" % down_for)
    a1 = admin_of(l.stats())
    log("while down: %r" % a1)
    check(a1["failures"] > 0, "admin.failures %r while the admin was down"
          % a1["failures"])
    check(a1["pending"] >= 2, "admin.pending %r, want >= 2 (periods %d and "
          "%d at least)" % (a1["pending"], pb, pc))
    check(a1["last_error"] != "", "admin.last_error empty while down")
    eq(a1["sent"], a0["sent"], "admin.sent while the admin was down")
    eq(a1["dropped"], 0, "admin.dropped")
    admin.start(same_port=True)
    up_at = time.time()
    a2 = wait_until(lambda: (lambda a: a if a["pending"] == 0 else None)(
                        admin_of(l.stats())),
                    up_at + 8.0,
                    lambda _: "backlog not sent 8 s after the admin came "
                    "back: %r" % admin_of(l.stats()))
    log("backlog sent %.1f s after the restart: %r" % (time.time() - up_at, a2))
    eq(a2["dropped"], 0, "admin.dropped after the backlog")
    check(a2["sent"] >= a1["sent"] + a1["pending"],
          "admin.sent %d, want >= %d + %d" % (a2["sent"], a1["sent"],
                                              a1["pending"]))
    check((admin.last_period(host) or 0) >= pc, "admin's last_period %r < %d"
          % (admin.last_period(host), pc))
    lp = need_point(l.stats(), "w")
    want = {k: sum(b[k] for b in batches.values()) for k in COUNTS}
    eq(totals(lp), want, "loader totals")
    at, _ = admin_totals(admin, "w", first - PERIOD, pc + PERIOD)
    eq({k: at["total"][k] for k in COUNTS}, totals(lp),
       "admin's sums vs the loader's totals")
    eq(per_period(at), batches, "admin's periods with counts (no period lost)")
    l.stop()
    admin.stop()


@test
def loader_restart_admin_down(ctx):
    admin = ctx.admin()
    v = make_app(admin, {"order": KILL, "w": {"visit_threshold": W_LIMIT}})
    want = strategy_doc(admin)
    t = ctx.target()
    # The state dir from $SDS_STATE_DIR (DESIGN.md §5), no --state-dir.
    l1 = ctx.attach(admin.url, state_dir=False)
    off = offset_s(l1)
    wait_strategy(l1, v, period_of(l1.started) + PERIOD + off + 3.0)
    cache = os.path.join(ctx.state_dir, "%s.%s.strategies.json" % (GROUP, APP))
    wait_until(lambda: os.path.exists(cache), time.time() + 2,
               "no cache %s" % cache)
    with open(cache) as f:
        eq(json.load(f), want, "cached strategies")
    l1.stop()
    admin.stop()
    l2 = ctx.attach(admin.url, state_dir=False)
    st = l2.stats()
    a = admin_of(st)
    eq(a["sent"], 0, "admin.sent of the restarted loader")
    assert_kill_switch(st, v, "restarted loader, admin down")
    assert_w_limit(ctx, l2, t, "cached strategy")
    with open(cache) as f:
        eq(json.load(f), want, "cache after the restart")
    eq(admin_of(l2.stats())["sent"], 0, "admin.sent (the admin is down)")
    l2.stop()


@test
def failover(ctx):
    admin = ctx.admin()
    dead = "http://127.0.0.1:%d" % free_port()
    t = ctx.target()
    l = ctx.attach(dead + "," + admin.url)
    st = l.stats()
    eq(admin_of(st)["urls"], [dead, admin.url], "admin.urls")
    host = admin_of(st)["host"]
    off = offset_s(l)
    first = period_of(l.started)
    t.cmd("work 10 3 0 0")
    a = wait_until(lambda: sent_upto(admin, l, host, first),
                   first + PERIOD + off + 4.0,
                   lambda _: "no heartbeat reached the admin (second URL): "
                   "hosts %r, loader %r" % (admin.hosts(), admin_of(l.stats())))
    eq(admin.last_period(host), first, "the host's last_period")
    check(a["sent"] > 0, "admin.sent %r" % a["sent"])
    eq((a["pending"], a["dropped"], a["last_error"]), (0, 0, ""),
       "admin.pending, dropped, last_error")
    at, _ = admin_totals(admin, "w", first - PERIOD, first + PERIOD)
    eq({k: at["total"][k] for k in COUNTS}, totals(need_point(l.stats(), "w")),
       "admin's sums vs the loader's totals")
    l.stop()


def attach_fails(ctx, args, names):
    snap = KernelSnapshot()
    what = "attach %s" % " ".join(args)
    try:
        r = ctx.sds(["attach"] + args, timeout=5)
    except Fail:
        raise Fail("%s: accepted (still running after 5 s, killed), want a "
                   "non-zero exit naming %s" % (what, " and ".join(names)))
    check(r.rc not in (0, None), "%s: want a non-zero exit: %r" % (what, r))
    lines = [x for x in r.err.splitlines() if x.strip()]
    check(len(lines) == 1, "%s: want one line on stderr: %r" % (what, r.err))
    check(lines[0].startswith("sds-bpf: "),
          "%s: stderr does not start with 'sds-bpf: ': %r" % (what, lines[0]))
    for s in names:
        check(s in lines[0], "%s: stderr does not name %r: %r"
              % (what, s, lines[0]))
    eq(r.out, "", what + ": stdout")
    eq(os.listdir(ctx.run_dir), [], what + ": left in SDS_RUN_DIR")
    eq(os.listdir(ctx.state_dir), [], what + ": left in the state dir")
    snap.assert_nothing_new({r.pid}, what)


@test
def bad_input(ctx):
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    url = "http://127.0.0.1:%d" % free_port()
    missing = os.path.join(ctx.tmp, "no-such-token")
    empty = os.path.join(ctx.tmp, "empty-token")
    open(empty, "w").close()
    sd = ["--state-dir", ctx.state_dir]
    pt = [path, "w=work"]
    attach_fails(ctx, ["--admin", url] + sd + pt, ["--admin", "--token-file"])
    attach_fails(ctx, ["--admin", url, "--token-file", missing] + sd + pt,
                 ["--token-file", missing])
    attach_fails(ctx, ["--admin", url, "--token-file", empty] + sd + pt,
                 ["--token-file", empty])
    attach_fails(ctx, ["--admin", url, "--token-file", ctx.tmp] + sd + pt,
                 ["--token-file", ctx.tmp])
    for bad in ("ftp://127.0.0.1:1", "127.0.0.1:8887", url + ",tcp://x:1",
                "", ","):
        attach_fails(ctx, ["--admin", bad, "--token-file", ctx.token_file]
                     + sd + pt, ["--admin"])
    attach_fails(ctx, ["--admin", ",".join([url] * 9), "--token-file",
                       ctx.token_file] + sd + pt, ["--admin"])
    attach_fails(ctx, ["--token-file", ctx.token_file] + sd + pt,
                 ["--token-file"])


@test
def failover_hung_first(ctx):
    """The first admin accepts connections and never answers: each post
    to it times out, the second one gets every period."""
    admin = ctx.admin()
    hung = socket.socket()
    ctx.socks.append(hung)
    hung.bind(("127.0.0.1", 0))
    hung.listen(64)
    hung_url = "http://127.0.0.1:%d" % hung.getsockname()[1]
    t = ctx.target()
    l = ctx.attach(hung_url + "," + admin.url)
    host = admin_of(l.stats())["host"]
    off = offset_s(l)
    first = period_of(l.started)
    # The calls well inside one period (attach may end late in its first).
    p = wait_safe()
    t.cmd("work 10 3 0 0")
    n = (p - first) // PERIOD + 1      # periods the loader sends up to p
    # A post to the hung URL takes its timeout (a few seconds).  With
    # this host's offset past 7 s the next period is queued before
    # that post ends, so "nothing pending" is not the sign here: the
    # loader's count of periods sent is.
    def sent_p():
        if (admin.last_period(host) or 0) < p:
            return None
        a = admin_of(l.stats())
        return a if a["sent"] >= n else None

    a = wait_until(sent_p, p + PERIOD + off + 8.0,
                   lambda _: "no heartbeat reached the second admin: hosts "
                   "%r, loader %r" % (admin.hosts(), admin_of(l.stats())))
    eq(admin.last_period(host), p, "the host's last_period")
    eq((a["sent"], a["dropped"]), (n, 0), "admin.sent, dropped")
    # The policy may or may not have tried the hung one first: every post
    # to it failed by timing out, and the second stored every period.
    hung_a, good_a = a["admins"]
    eq((hung_a["stored"], hung_a["failures"], hung_a["timed_out"]),
       (0, hung_a["posts"], hung_a["posts"] > 0), "the hung admin: stored, failures, timed out")
    eq((good_a["posts"], good_a["stored"], good_a["failures"]), (n, n, 0),
       "the second admin: posts, stored, failures")
    at, _ = admin_totals(admin, "w", p, p + PERIOD)
    eq({k: at["total"][k] for k in COUNTS},
       {"visits": 10, "exceptions": 3, "timeouts": 0, "downgrades": 0},
       "admin's sums")
    l.stop()


class CountingAdmin(FakeAdmin):
    """A fake sds-admin (real HTTP on a loopback port) that stores every
    heartbeat: it answers a good reply and records (host, period_start)
    of each post, in order."""

    def __init__(self, ctx):
        self.posts = []         # (host, period_start), first post first
        super().__init__(self._answer)
        ctx.servers.append(self.srv)

    def _answer(self, doc):
        self.posts.append((host_name(doc["host"]), doc["period_start"]))
        return NOTHING_NEW

    def snapshot(self):
        with self.lock:
            return list(self.posts)


class HungAdmin:
    """Accepts connections and never answers; counts them."""

    def __init__(self, ctx):
        self.sock = socket.socket()
        ctx.socks.append(self.sock)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        ctx.files.append(self)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)     # held open, never answered
            self.accepted += 1

    def close(self):
        for c in self.conns:
            c.close()


def host_name(host):
    """The host name in a loader's heartbeat host "NAME_ID" (loader/hostid.c)."""
    name, sep, hid = host.rpartition("_")
    check(sep and len(hid) == 12 and all(c in "0123456789abcdef" for c in hid),
          "heartbeat host %r is not NAME_ID" % host)
    return name


def host_loader(ctx, host, urls, policy, app=None, machine_id=None,
                token_file=None, tag=None):
    """`sds-bpf attach` as host @host (its own UTS namespace: the loader
    reports gethostname()), app @app (default "h_<host>") on its own copy
    of the target, heartbeating to @urls with --admin-policy @policy.
    @machine_id: a file bind-mounted on /etc/machine-id (its own mount
    namespace too).  @tag names its directory (default @host)."""
    d = os.path.join(ctx.tmp, tag or host)
    os.mkdir(d)
    path = os.path.join(d, APP)
    shutil.copy2(TARGET, path)
    app = app or "h_" + host.replace("-", "_")
    env = dict(ctx.env)
    env["SDS_STATE_DIR"] = os.path.join(d, "state")
    os.mkdir(env["SDS_STATE_DIR"])
    args = ["--app", app, "--admin", ",".join(urls), "--admin-policy", policy,
            "--token-file", token_file or ctx.token_file, "--state-dir",
            env["SDS_STATE_DIR"], path, "w=work"]
    if machine_id:
        cmd = ["unshare", "--uts", "--mount", "sh", "-c",
               'hostname "$0" && mount --bind "$1" /etc/machine-id && shift && exec "$@"',
               host, machine_id, SDS, "attach"] + args
    else:
        cmd = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
               host, SDS, "attach"] + args
    log(" ".join(cmd))
    err = open(os.path.join(d, "attach.err"), "wb")
    ctx.files.append(err)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                         stdin=subprocess.DEVNULL, env=env, cwd=ctx.tmp,
                         start_new_session=True)
    ctx.procs.append(p)
    sock = os.path.join(ctx.run_dir, "%s.%s.sock" % (GROUP, app))
    wait_until(lambda: os.path.exists(sock) or p.poll() is not None,
               time.time() + READY_TIMEOUT,
               lambda _: "attach as %s: no socket %s" % (host, sock))
    check(p.poll() is None, "attach as %s exited: %r" % (
        host, open(os.path.join(d, "attach.err"), errors="replace").read()))
    return p, app


def admin_stats(ctx, app):
    r = ctx.sds(["stats", "--app", app, "--json"], quiet=True)
    check(r.rc == 0, "sds-bpf stats --app %s --json: %r" % (app, r))
    return admin_of(json.loads(r.out))


HOSTS = ("host-a", "host-b", "host-c", "host-d", "host-e")
HEARTBEATS = 3


@test
def admin_policy_consistent_hash(ctx):
    """Three admins, five hosts with --admin-policy consistent_hash: every
    heartbeat of a host goes to the same admin, HEARTBEATS of them each,
    every period stored exactly once."""
    admins = [CountingAdmin(ctx) for _ in range(3)]
    urls = [a.url for a in admins]
    apps = {}
    for h in HOSTS:
        _, apps[h] = host_loader(ctx, h, urls, "consistent_hash")
    start = time.time()

    def enough():
        per = {}
        for a in admins:
            for host, period in a.snapshot():
                per.setdefault(host, set()).add(period)
        return all(len(per.get(h, ())) >= HEARTBEATS for h in HOSTS)
    wait_until(enough, start + (HEARTBEATS + 1) * PERIOD + 12,
               lambda _: "not %d heartbeats of each host: %r" % (
                   HEARTBEATS, [a.snapshot() for a in admins]))
    where = {}
    for i, a in enumerate(admins):
        for host, period in a.snapshot():
            where.setdefault(host, {}).setdefault(i, []).append(period)
    for h in HOSTS:
        check(len(where[h]) == 1, "host %s went to several admins: %r"
              % (h, where[h]))
        (i, periods), = where[h].items()
        eq(len(periods), len(set(periods)),
           "host %s: a period stored twice: %r" % (h, periods))
        st = admin_stats(ctx, apps[h])
        eq(st["admin_policy"], "consistent_hash", "admin_policy")
        eq([x["failures"] for x in st["admins"]], [0, 0, 0],
           "host %s: failures per admin" % h)
        eq([x["posts"] > 0 for x in st["admins"]],
           [k == i for k in range(3)], "host %s: admins posted to" % h)
    log("hosts per admin: %r" % {i: sorted(h for h in HOSTS if i in where[h])
                                 for i in range(3)})


@test
def admin_policy_hung_least_active(ctx):
    """Three admins, one hung (accepts, never answers), --admin-policy
    least_active (the default, named): the hung one gets at most one
    heartbeat in all (timed out, then down and held against it), so it
    stops receiving at the latest one heartbeat after its first post --
    when that first post comes is least_active's random tie-break among
    three idle admins, so the test does not ask for it; every period is
    stored once by the others."""
    good = [CountingAdmin(ctx), CountingAdmin(ctx)]
    hung = HungAdmin(ctx)
    urls = [good[0].url, hung.url, good[1].url]
    _, app = host_loader(ctx, "host-h", urls, "least_active")
    start = time.time()
    n = 4

    def stored():
        return sorted(p for a in good for _, p in a.snapshot())
    deadline = start + (n + 1) * PERIOD + 15
    while len(stored()) < n:
        check(time.time() < deadline, "not %d heartbeats stored: %r, hung "
              "accepted %d" % (n, stored(), hung.accepted))
        time.sleep(0.2)
    periods = stored()
    eq(len(periods), len(set(periods)), "a period stored twice: %r" % periods)
    check(hung.accepted <= 1, "the hung admin got %d posts (want at most 1)"
          % hung.accepted)
    st = admin_stats(ctx, app)
    log("hung admin accepted %d; admins %r" % (hung.accepted, st["admins"]))
    eq(st["admin_policy"], "least_active", "admin_policy")
    h = st["admins"][1]
    eq((h["posts"], h["stored"], h["failures"], h["timed_out"]),
       (hung.accepted, 0, hung.accepted, hung.accepted == 1),
       "the hung admin's posts, stored, failures, timed_out")
    if hung.accepted:
        check(h["down_ms"] > 0, "the hung admin is not down: %r" % h)
    eq(sum(st["admins"][i]["stored"] for i in (0, 2)) >= n, True,
       "stored by the good admins: %r" % st["admins"])


@test
def admin_policy_bad_input(ctx):
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    url = "http://127.0.0.1:%d" % free_port()
    base = ["--token-file", ctx.token_file, "--state-dir", ctx.state_dir]
    attach_fails(ctx, ["--admin", url, "--admin-policy", "nope"] + base
                 + [path, "w=work"],
                 ['--admin-policy: unknown balancer "nope" (known: random, '
                  'round_robin, least_active, shortest_response, '
                  'consistent_hash)'])
    attach_fails(ctx, ["--admin", url + "," + url] + base + [path, "w=work"],
                 ["--admin: %s given twice" % url])
    attach_fails(ctx, ["--admin-policy", "random", "--state-dir",
                       ctx.state_dir, path, "w=work"],
                 ["--admin-policy goes with --admin"])


def ext_dir(ctx):
    """A manifest dir of the test's (0755, root's) with libgood.so built
    from tests/unit/ext_plugin.c as a user would: (dir, lib)."""
    d = os.path.join(ctx.tmp, "ext")
    os.mkdir(d, 0o755)
    lib = os.path.join(d, "libgood.so")
    src = os.path.join(sdstest.ROOT, "tests", "unit", "ext_plugin.c")
    r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-DPART=1", "-I",
                        os.path.join(sdstest.ROOT, "userspace"), "-o", lib,
                        src], capture_output=True, text=True)
    check(r.returncode == 0, "building the plugin: %s" % r.stderr)
    os.chmod(lib, 0o755)
    return d, lib


@test
def ext_list_and_plugin_admin_policy(ctx):
    """sds-bpf ext list and sds-admin --ext-list show built-ins and what a
    manifest adds, exactly; a manifest problem is one line and exit 1; a
    user's policy from a plugin (the last URL that answers) picks the admin
    of every heartbeat, through the manifest's wrapper (which counts and
    must change nothing)."""
    d, lib = ext_dir(ctx)
    with open(os.path.join(d, "balancer.ext"), "w") as f:
        f.write("# the test's\nmine = %s:mine_balancer\n"
                "wrap.balancer = %s:count_wrapper\n" % (lib, lib))
    with open(os.path.join(d, "store.ext"), "w") as f:
        f.write("pg = /nonexistent/libpg.so:pg_store\n")
    env = dict(ctx.env, SDS_EXT_DIR=d)
    r = ctx.sds(["ext", "list", "--json"], env=env)
    eq((r.rc, r.err), (0, ""), "ext list --json: exit status, stderr")
    got = json.loads(r.out)
    builtin = [{"interface": "balancer", "name": n, "default": n == "random",
                "origin": "built-in", "state": "built-in", "why": ""}
               for n in ("random", "round_robin", "least_active",
                         "shortest_response", "consistent_hash")]
    m = os.path.join(d, "balancer.ext")
    eq(got, {"extensions": builtin + [
        {"interface": "balancer", "name": "mine", "default": False,
         "origin": "manifest", "state": "not loaded", "why": "", "file": m,
         "line": 2, "lib": lib, "symbol": "mine_balancer"},
        {"interface": "balancer", "name": "wrap.balancer", "default": False,
         "origin": "manifest", "state": "not loaded", "why": "", "file": m,
         "line": 3, "lib": lib, "symbol": "count_wrapper"}],
        "problems": []}, "ext list --json")
    r = sdstest.run_group([ADMIN, "--ext-list", "--json"], env, ctx.tmp,
                          ctx.procs)
    eq((r.rc, r.err), (0, ""), "sds-admin --ext-list --json")
    r = sdstest.run_group([ADMIN, "--listen", "127.0.0.1:%d" % free_port(),
                           "--db", "pg://db1", "--token-file",
                           ctx.token_file], env, ctx.tmp, ctx.procs)
    eq((r.rc, r.out, r.err), (1, "", 'sds-admin: --db: store "pg" '
                              '(%s:1): /nonexistent/libpg.so: No such file '
                              'or directory\n' % os.path.join(d, "store.ext")),
       "sds-admin --db pg://db1 (a plugin store whose library is missing)")
    # After the built-ins (sqlite, postgresql).
    eq(json.loads(sdstest.run_group([ADMIN, "--ext-list", "--json"], env,
                                    ctx.tmp, ctx.procs).out)["extensions"][2],
       {"interface": "store", "name": "pg", "default": False,
        "origin": "manifest", "state": "not loaded", "why": "",
        "file": os.path.join(d, "store.ext"), "line": 1,
        "lib": "/nonexistent/libpg.so", "symbol": "pg_store"},
       "sds-admin --ext-list: the manifest's store")
    bad = os.path.join(d, "balancer.zz.ext")
    with open(bad, "w") as f:
        f.write("oops\n")
    r = ctx.sds(["ext", "list"], env=env)
    eq(r.rc, 1, "ext list with a bad manifest: exit status")
    eq(r.err, "sds-bpf: extensions: %s:1: expected NAME = /path/lib.so:symbol;"
       " the rest of the file is skipped\n" % bad, "ext list: stderr")
    os.unlink(bad)

    # The plugin as --admin-policy: the last URL, every heartbeat.
    admins = [CountingAdmin(ctx), CountingAdmin(ctx)]
    t = ctx.target()
    l = ctx.attach(admins[0].url + "," + admins[1].url,
                   extra=["--admin-policy", "mine"], env=env)
    start = time.time()
    wait_until(lambda: len(admins[1].snapshot()) >= 2,
               start + 3 * PERIOD + 12,
               lambda _: "two heartbeats did not reach the last admin: %r"
               % [a.snapshot() for a in admins])
    eq(admins[0].snapshot(), [], "posts to the first admin")
    a = admin_of(l.stats())
    eq(a["admin_policy"], "mine", "admin_policy")
    eq([x["posts"] for x in a["admins"]], [0, len(admins[1].snapshot())],
       "posts per admin")
    eq(l.stderr(), "", "attach's stderr")
    t.cmd("work 1 0 0 0")
    l.stop()


def next_boundary(ctx):
    """An admin, a target and a loader heartbeating to it; the loader's
    host and heartbeat offset, and the next period boundary at least
    1.5 s away: (admin, target, loader, host, offset_s, boundary)."""
    admin = ctx.admin()
    t = ctx.target()
    l = ctx.attach(admin.url)
    host = admin_of(l.stats())["host"]
    off = offset_s(l)
    b = period_of(time.time()) + PERIOD
    if b - time.time() < 1.5:
        b += PERIOD
    return admin, t, l, host, off, b


@test
def period_boundary(ctx):
    """Calls are reported in the natural period they were made in, also
    in the last and the first second of a period: single calls every 50
    ms from 1 s before a period boundary to 1 s after it.  Which period a
    call belongs to is read from the program's own clock around the call
    (stamp), never from this script's: a call this script sends late on a
    loaded machine is still judged exactly.  A call whose own stamps
    straddle the boundary (microseconds) may go either way."""
    admin, t, l, host, off, b = next_boundary(ctx)
    made = {b - PERIOD: 0, b: 0}
    edge = {"last second": 0, "first second": 0}
    straddle = 0
    for k in range(40):
        sleep_until(b - 1.0 + 0.025 + 0.05 * k)
        t0, t1 = t.stamp()
        if period_of(t0) != period_of(t1):
            straddle += 1
            continue
        made[period_of(t0)] = made.get(period_of(t0), 0) + 1
        if b - 1.0 <= t0 < b:
            edge["last second"] += 1
        elif b <= t0 < b + 1.0:
            edge["first second"] += 1
    check(edge["last second"] >= 5 and edge["first second"] >= 5,
          "calls in the last and first second of the periods (by the "
          "program's clock; the rest were late): %r" % edge)
    wait_until(lambda: (admin.last_period(host) or 0) >= b,
               b + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin: %r" % (b, admin.hosts()))
    at, _ = admin_totals(admin, "w", b - 2 * PERIOD, b + PERIOD)
    got = {t0: c["visits"] for t0, c in per_period(at).items()}
    d = (time.time() - time.monotonic()) % 1.0
    what = ("visits per period at the admin (the fraction of a second by "
            "which CLOCK_REALTIME leads CLOCK_MONOTONIC here: %.3f)" % d)
    if not straddle:
        eq(got, made, what)
    else:
        eq(sum(got.values()), 40, what + ", in all")
        for p0, n in made.items():
            check(n <= got.get(p0, 0) <= n + straddle, "%s: %r, calls made "
                  "%r and %d on the boundary" % (what, got, made, straddle))
    eq(need_point(l.stats(), "w")["total"]["visits"], 40, "loader visits")
    l.stop()


@test
def period_boundary_hist(ctx):
    """A period's latency histogram covers the seconds its counts do
    (issue 11): 3 calls 0.5 s before a period boundary B, 5 calls 0.5 s
    after it.  The admin stores, for B - 10, 3 visits and a histogram of
    3 calls, and for B 5 and 5.  The loader takes the histograms at its
    first tick of a period, at most one tick (100 ms) plus the tick's
    lateness after the boundary: 0.5 s is far outside that."""
    admin, t, l, host, off, b = next_boundary(ctx)
    for at, n in ((b - 0.5, 3), (b + 0.5, 5)):
        sleep_until(at)
        t.cmd("work %d 0 0 0" % n)
        check(time.time() - at < 0.3, "%d calls at %+.1f s from the boundary "
              "took until %+.3f s" % (n, at - b, time.time() - b))
    wait_until(lambda: (admin.last_period(host) or 0) >= b,
               b + PERIOD + off + 4.0,
               lambda _: "period %d not at the admin: %r" % (b, admin.hosts()))
    got = {}
    for p in (b - PERIOD, b):
        at, _ = admin_totals(admin, "w", p, p + PERIOD)
        got[p] = (at["total"]["visits"], sum(at["total"]["latency_hist"]))
    st = l.stats()
    eq(got, {b - PERIOD: (3, 3), b: (5, 5)},
       "(visits, summed latency_hist) of periods %d and %d at the admin "
       "(the loader's tick_late_ms %r)" % (b - PERIOD, b,
                                           st.get("tick_late_ms")))
    eq(need_point(st, "w")["latency_ns"]["count"], 8, "loader latency count")
    l.stop()


@test
def admin_reply_unusable(ctx):
    """HTTP 200 means the admin stored the period (admin/API.md), so a
    reply the loader cannot use (not JSON; JSON whose strategies are
    malformed) is counted in admin_errors, logged once a minute, and the
    period is not sent again; the next periods go as usual."""
    garbage = b"<html>502 oops</html>"
    bad_strategies = json.dumps({"version": 3, "changed": True,
                                 "strategies": {"version": 3, "points": 7},
                                 "drills": []}).encode()
    fake = BadAdmin(ctx, [garbage, bad_strategies])
    t = ctx.target()
    l = ctx.attach(fake.url)
    off = offset_s(l)
    t.cmd("work 10 0 0 0")

    def three_periods():
        posts, order = fake.snapshot()
        return order if len(order) >= 3 else None
    order = wait_until(three_periods,
                       period_of(l.started) + 3 * PERIOD + off + 4.0,
                       lambda _: "3 periods not posted: %r; loader %r"
                       % (fake.snapshot(), admin_of(l.stats())))
    # A resend would come 2 s after a failed post.
    time.sleep(3.0)

    def settled():
        # Every closed period posted, and the next boundary over 1 s away:
        # nothing pending whatever this host's offset (its name's hash).
        now = time.time()
        posts, order = fake.snapshot()
        if order[-1] >= period_of(now) - PERIOD and period_of(now) + PERIOD - now > 1.0:
            return posts, order
        return None
    posts, order = wait_until(settled, time.time() + 2 * PERIOD + 2,
                              lambda _: "posts never settled: %r" % (fake.snapshot(),))
    p0 = order[0]
    eq(order[:3], [p0, p0 + PERIOD, p0 + 2 * PERIOD], "periods posted, in order")
    eq(posts, {p: 1 for p in order}, "posts per period")
    a = admin_of(l.stats())
    eq((a["sent"], a["admin_errors"], a["failures"], a["pending"],
        a["dropped"], a["last_error"]), (len(order), 2, 0, 0, 0, ""),
       "admin.sent, admin_errors, failures, pending, dropped, last_error")
    lines = [x for x in l.stderr().splitlines() if "reply" in x]
    eq(len(lines), 1, "stderr lines about the replies (once a minute): %r"
       % l.stderr())
    for s in ("sds-bpf: ", fake.url, "period %d" % p0, "not resent"):
        check(s in lines[0], "stderr line does not say %r: %r" % (s, lines[0]))
    eq(l.stats().get("strategies_version"), -1,
       "strategies_version (none: the malformed strategies not taken)")
    l.stop()


@test
def hold_survives_unrelated_change(ctx):
    """DESIGN.md §4: once tripped, a point stays downgraded for delay_ms.
    A new version that leaves w's strategy as it was must not end w's
    hold."""
    admin = ctx.admin()
    v = make_app(admin, {"w": {"visit_threshold": W_LIMIT, "delay_ms": 60000}})
    t = ctx.target()
    l = ctx.attach(admin.url)
    off = offset_s(l)
    wait_until(lambda: l.stats().get("strategies_version") == v,
               period_of(l.started) + PERIOD + off + 3.0,
               lambda _: "version %d not in force: %r" % (v, l.stats()))
    t.cmd("work %d 0 0 0" % (W_LIMIT + 1))
    tripped = time.time()
    wait_until(lambda: need_point(l.stats(), "w")["state"].get("downgraded"),
               tripped + 2, "w not downgraded after %d visits" % (W_LIMIT + 1))
    # Out of the 10-s window: only the hold keeps w downgraded now.
    sleep_until(tripped + 11)
    p = need_point(l.stats(), "w")
    eq((p["window"]["visits"], p["state"].get("downgraded")), (0, True),
       "w's window visits and state 11 s after the trip (the hold)")
    doc = admin.ok("PUT", A + "/schemes/default/strategies/other",
                   {"visit_threshold": 100})
    v2 = doc["version"]
    wait_until(lambda: l.stats().get("strategies_version") == v2,
               time.time() + PERIOD + off + 3.0,
               lambda _: "version %d not in force: %r" % (v2, l.stats()))
    p = need_point(l.stats(), "w")
    check(time.time() - tripped < 55, "too late to judge the hold")
    eq(p["state"].get("downgraded"), True,
       "w's state %.0f s into its 60-s hold, after version %d changed only "
       "point 'other' (state %r)" % (time.time() - tripped, v2, p["state"]))
    l.stop()


@test
def bad_admin_url_without_host(ctx):
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    for bad in ("http://", "http://:8887", "https://"):
        attach_fails(ctx, ["--admin", bad, "--token-file", ctx.token_file,
                           "--state-dir", ctx.state_dir, path, "w=work"],
                     ["--admin"])


# ---------------------------------------------------------------------------

def preflight():
    err = sdstest.root_error()
    if err:
        return err
    for f in (SDS, ADMIN, TARGET):
        if not os.access(f, os.X_OK):
            return "%s missing: run make && make test-targets" % f
    if not shutil.which("bpftool"):
        return "bpftool not found in PATH"
    return None


# ---------------------------------------------------------------------------
# Host identity and the loader's token (issue 16)

def host_id(machine_id):
    """The ID loader/hostid.c derives from @machine_id (32 hex digits)."""
    h = 0xcbf29ce484222325
    for b in b"sds-bpf host id v1:" + machine_id.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%012x" % (h >> 16)


@test
def hosts_by_machine_id(ctx):
    """Two hosts both named localhost, with different machine ids, one
    after the other on one app, each holding only a heartbeat token: the
    admin keeps two hosts, named "localhost_ID", each with its periods."""
    hbt = sdstest.write_token(os.path.join(ctx.tmp, "hb.token"), "hb-" + TOKEN)
    admin = Admin(ctx)
    admin.extra = ["--heartbeat-token-file", hbt]
    admin.start()
    ids = ["0123456789abcdef0123456789abcdef", "FEDCBA9876543210FEDCBA9876543210"]
    names = ["localhost_" + host_id(m.lower()) for m in ids]
    check(names[0] != names[1], "the two ids are one: %r" % names)
    hosts_path = "/api/v1/groups/%s/apps/h_local/hosts" % GROUP

    def hosts():
        st, doc = admin.req("GET", hosts_path)
        return sorted(h["host"] for h in doc) if st == 200 else []
    for i, mid in enumerate(ids):
        f = os.path.join(ctx.tmp, "machine-id-%d" % i)
        with open(f, "w") as o:
            o.write(mid + "\n")
        p, app = host_loader(ctx, "localhost", [admin.url], "least_active",
                             app="h_local", machine_id=f, token_file=hbt,
                             tag="m%d" % i)
        eq(admin_stats(ctx, app)["host"], names[i], "the loader's host")
        # One period, the offset (< 9 s), a margin.
        wait_until(lambda: names[i] in hosts(), time.time() + PERIOD + 9 + 5,
                   lambda _: "host %s not at the admin: %r" % (names[i], hosts()))
        os.kill(p.pid, signal.SIGINT)
        eq(p.wait(15), 0, "attach %d's exit status" % i)
    eq(hosts(), sorted(names), "the admin's hosts")
    # The heartbeat token never wrote: the app's audit log holds its
    # registration only.
    eq([a["action"] for a in admin.ok("GET", "/groups/%s/apps/h_local/audit" % GROUP)],
       ["app.register"], "the app's audit log")
    admin.stop()


@test
def loader_token_file_modes(ctx):
    """attach refuses a token file others may read, or another user's, in
    one line naming the file and its mode; nothing is attached."""
    admin = ctx.admin()
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    cases = [(0o644, "mode 0644"), (0o640, "mode 0640"), (0o604, "mode 0604"),
             (0o600, "owned by uid %d" % sdstest.NOBODY)]
    for mode, word in cases:
        f = sdstest.write_token(os.path.join(ctx.tmp, "loose"), TOKEN, mode=mode)
        if mode == 0o600:
            os.chown(f, sdstest.NOBODY, sdstest.NOBODY)
        r = ctx.sds(["attach", "--admin", admin.url, "--token-file", f, path,
                     "w=work"])
        check(r.rc not in (0, None), "attach with %s: exit %r" % (word, r.rc))
        lines = r.err.strip().split("\n")
        eq(len(lines), 1, "attach with %s: stderr %r" % (word, r.err))
        check(f in lines[0] and word in lines[0] and "--token-file" in lines[0],
              "attach with %s: %r does not name the file and why" % (word, lines[0]))
        check(not os.path.exists(os.path.join(ctx.run_dir, "%s.%s.sock" % (GROUP, APP))),
              "a socket after a refused token file")
        os.unlink(f)
    admin.stop()


# ---------------------------------------------------------------------------
# Several admins on one PostgreSQL (issue 16; tests/e2e/t_cluster.py)

CLUSTER_TIMEOUT = 150           # seconds: PostgreSQL, 8 periods, checks


@test
def cluster_admin_killed(ctx):
    import t_cluster
    signal.alarm(CLUSTER_TIMEOUT)   # longer than TEST_TIMEOUT: 8 periods
    t_cluster.run(sys.modules[__name__], ctx, log)


def main(argv):
    return SUITE.main(argv, Ctx, preflight)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
