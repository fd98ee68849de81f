# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the end-to-end suite shares (tests/e2e/run.py, and through it
tests/crash and tools/demo/cluster_demo.py): wall-clock periods, the
real sds-admin, the target and the loader, the per-test context, the
assertions, the helpers of several test modules and of t_cluster.py
(attach_fails, host_loader, admin_stats), and the suite.

Each test module (tests/e2e/t_[0-9]_*.py) registers its tests with
@test; run.py imports them in name order, which is the order they run
in.  t_cluster.py registers none: it is the scenario of
cluster_admin_killed, and of the cluster demo.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import target  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import (BUILD, Fail, KernelSnapshot, SDS, check, eq,  # noqa: E402
                     log, wait_until)

_kill_group = sdstest.kill_group
sdstest.log_stamps()
ADMIN = sdstest.admin_path()
TARGET = os.path.join(BUILD, "test", "targets", "target_pie")

APP = "target_pie"              # what the loader reports TARGET as
GROUP = "default"
A = "/groups/%s/apps/%s" % (GROUP, APP)
TOKEN = "e2e-t0ken.for_tests_%d" % os.getpid()
PERIOD = 10
READY_TIMEOUT = 30.0            # seconds for the loader's socket to appear (a hang)
TEST_TIMEOUT = 100              # seconds for a whole test
N, E, TS, MS, TMO = 1000, 137, 5, 30, 20


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

class Admin(sdsadmin.Admin):
    """One sds-admin on a loopback port (tests/lib/sdsadmin.py);
    restartable on the same port and db (start(same_port=True)), with
    the test's token file."""

    def __init__(self, ctx, port=None):
        super().__init__(ctx, token=TOKEN, token_file=ctx.token_file,
                         port=port)

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


class Target(target.Target):
    """target_pie driven on stdin (tests/lib/target.py)."""

    def __init__(self, ctx, path):
        super().__init__(ctx, path, name=APP)


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
        self.spawned = time.time()
        with open(self.outpath, "wb") as o, open(self.errpath, "wb") as e:
            self.env = env or ctx.env
            self.p = subprocess.Popen([SDS, "attach"] + args, stdout=o,
                                      stderr=e, stdin=subprocess.DEVNULL,
                                      env=self.env, cwd=ctx.tmp,
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
                self.ready = time.time()
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
        args = ["stats", "--app", APP, "--json"]
        return sdstest.json_out(self.ctx.sds(args, quiet=True),
                                "sds-bpf " + " ".join(args))

    def first_period(self):
        """The loader's first period (`admin.first_period`: the one its
        counting began in, the first it sends), in the periods of its
        spawn and of its socket's appearance.  Not period_of(spawn): the
        start-up takes seconds, and spawned late in a period the loader
        begins with the next one, sent a period later."""
        fp = admin_of(self.stats())["first_period"]
        check(period_of(self.spawned) <= fp <= period_of(self.ready),
              "admin.first_period %r outside the periods of spawn (%.2f) "
              "and ready (%.2f)" % (fp, self.spawned, self.ready))
        return fp

    def first_send(self):
        """When the loader sends its first period: its end + the offset."""
        return self.first_period() + PERIOD + offset_s(self)

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
        self.targets = []
        self.loaders = []
        self.files = []
        self.socks = []
        self.servers = []
        self.target_path = None

    def cleanup(self):
        for t in self.targets:
            t.cleanup()
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

    def target_file(self):
        """A private copy of target_pie (its own inode: only our calls hit
        our probes), made once."""
        if not self.target_path:
            self.target_path = os.path.join(self.tmp, APP)
            shutil.copy2(TARGET, self.target_path)
        return self.target_path

    def target(self):
        """The private copy of target_pie, started."""
        return Target(self, self.target_file())

    def admin(self):
        return Admin(self).start()

    def attach(self, admin_urls, extra=(), point="w=work:err=neg", env=None,
               state_dir=True):
        self.target_file()
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
    for k in ("urls", "host", "offset_ms", "first_period", "open_period",
              "sent", "last_sent", "pending", "queue", "dropped",
              "failures", "admin_errors", "last_error"):
        check(k in a, "stats --json admin: no %r in %r" % (k, a))
    return a


def totals(p):
    return {k: p["total"][k] for k in COUNTS}


def offset_s(loader):
    """The loader's heartbeat offset inside the period, in seconds: the
    test runner's SDS_HB_OFFSET_MS (sdstest sets 2000 when unset), else
    the host name's (2-9 s after the period ends)."""
    st = loader.stats()
    ms = admin_of(st)["offset_ms"]
    env = (loader.env or os.environ).get("SDS_HB_OFFSET_MS")
    if env is not None:
        eq(ms, int(env), "admin.offset_ms under SDS_HB_OFFSET_MS=%s" % env)
    check(2000 <= ms <= 9000, "admin.offset_ms %r outside 2000..9000" % ms)
    return ms / 1000.0


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
# Helpers of several test modules (and of t_cluster.py)

def attach_fails(ctx, args, names, env=None):
    snap = KernelSnapshot()
    what = "attach %s" % " ".join(args)
    try:
        r = ctx.sds(["attach"] + args, timeout=5, env=env)
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


def host_name(host):
    """The host name in a loader's heartbeat host "NAME_ID" (loader/report/hostid.c)."""
    name, sep, hid = host.rpartition("_")
    check(sep and len(hid) == 12 and all(c in "0123456789abcdef" for c in hid),
          "heartbeat host %r is not NAME_ID" % host)
    return name


def host_loader(ctx, host, urls, policy, app=None, machine_id=None,
                token_file=None, tag=None, extra=()):
    """`sds-bpf attach` as host @host (its own UTS namespace: the loader
    reports gethostname()), app @app (default "h_<host>") on its own copy
    of the target, heartbeating to @urls with --admin-policy @policy.
    @machine_id: a file bind-mounted on /etc/machine-id (its own mount
    namespace too).  @tag names its directory (default @host); @extra:
    more attach options."""
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
            env["SDS_STATE_DIR"]] + list(extra) + [path, "w=work"]
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


# ---------------------------------------------------------------------------
# The suite

SUITE = sdstest.Suite(timeout=TEST_TIMEOUT)
TESTS = SUITE.tests
test = SUITE.test
