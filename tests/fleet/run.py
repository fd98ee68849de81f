#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The push channel (docs/PUSH.md; issue 32, "one second from the console to
every host"): real sds-admin processes (three on one real PostgreSQL, or
one on SQLite), real `sds-bpf attach --admin` loaders as two hosts (own
UTS namespaces, own run, state and pin directories), real guarded
programs (tests/targets/guarded.c, libsds) timing their own calls.

  kill_switch_two_hosts_three_admins   a kill switch PUT through admin A
      downgrades every guarded call on both hosts within 1 s of the PUT,
      its lift lets them pass within 1 s, 20 changes at random phases of
      the heartbeat period, each host watching another admin (NOTIFY);
      each loader saw exactly the 20 changes, reconnected never
  channel_refused_heartbeat_carries   an admin with --max-watchers 0: the
      loader says the channel is retrying (503), and the kill switch still
      arrives, with the next heartbeat
  channel_blocked_heartbeat_carries   the channel firewalled (iptables on
      the admin's port: watch requests and their answers dropped, the
      heartbeats pass): the kill switch arrives with the next heartbeat
  hostile_admin_bounded   an admin that answers every watch at once, one
      whose answers are garbage: the loader's watches stay bounded (three
      quick ones then a second's wait; a failed one backs off 1, 2, 4 s)
  stop_while_waiting   SIGINT while the admin holds the watch: the loader
      exits within 2 s, not at the end of the 25-s wait
  no_push   --no-push: no watch reaches the admin, `stats` says "off"
  cluster_limit_two_hosts   cluster_visit_threshold 6,000 on two hosts
      that each try 5,000 calls in one window: at most 6,000 and at least
      5,900 pass on both together; a host killed, the other holds the whole
      limit within 2 s (docs/CLUSTER.md)
  cluster_tokens_two_hosts   cluster_token_rate 1,000/s (bucket 100) on two
      hosts calling back to back for 3 s: together at most rate x time +
      bucket pass, and at least 90 % of rate x time
  function_point_refusal   the admin pushes concurrent_threshold to a
      loader's function point (issue 36): the loader refuses it, keeps the
      version it had, and its heartbeat says which version, point and why;
      GET refused shows it exactly, a corrected push clears it

Run as root:  python3 tests/push/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import http.server
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import e2e_lib as e2e  # noqa: E402  (puts tests/lib on sys.path)
import guarded  # noqa: E402
import pgtest  # noqa: E402
import sdstest  # noqa: E402
from sdstest import Fail, SDS, check, eq, log  # noqa: E402

GUARDED = os.path.join(sdstest.BUILD, "test", "targets", "guarded_static")
GROUP = "default"
APP = "push"
POINT = "p"
HOSTS = ("host-a", "host-b")
PAIRS = 10                  # kill + lift: 20 changes
WITHIN_NS = 1000000000      # the bound: 1 s from the PUT's start
KILL = {"visit_threshold": 0}
LIFT = {"visit_threshold": 1000000000}

SUITE = sdstest.Suite(timeout=300)
test = SUITE.test


class Host:
    """One host: its own UTS namespace (the loader reports gethostname()),
    run, state and pin directories; a loader of app APP on its own copy
    of guarded_static, and that copy running, registered."""

    def __init__(self, ctx, name, urls, extra=()):
        self.ctx = ctx
        self.name = name
        self.dir = os.path.join(ctx.tmp, name)
        os.mkdir(self.dir)
        self.path = os.path.join(self.dir, APP)
        shutil.copy2(GUARDED, self.path)
        self.env = dict(ctx.env)
        for k in ("run", "state"):
            os.mkdir(os.path.join(self.dir, k), 0o755)
        self.env["SDS_RUN_DIR"] = os.path.join(self.dir, "run")
        self.env["SDS_STATE_DIR"] = os.path.join(self.dir, "state")
        self.env["SDS_PIN_ROOT"] = ctx.pin_root + "_" + name.replace("-", "_")
        sdstest._OWN_PIN_ROOTS.add(self.env["SDS_PIN_ROOT"])
        ctx.pin_roots.append(self.env["SDS_PIN_ROOT"])
        args = ["--app", APP, "--admin", ",".join(urls), "--token-file",
                ctx.token_file, "--state-dir", self.env["SDS_STATE_DIR"]] + \
            list(extra) + [self.path]
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
        sock = os.path.join(self.env["SDS_RUN_DIR"], "%s.%s.sock" % (GROUP, APP))
        e2e.wait_until(lambda: os.path.exists(sock) or self.p.poll() is not None,
                       time.time() + e2e.READY_TIMEOUT,
                       lambda _: "attach as %s: no socket %s" % (name, sock))
        check(self.p.poll() is None, "attach as %s exited: %r"
              % (name, self.stderr()))
        shim = types.SimpleNamespace(targets=ctx.targets, tmp=self.dir,
                                     env=self.env)
        self.t = guarded.Target(shim, self.path)
        self.t.open(APP)
        self.t.cmd("point %s" % POINT)

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stats(self):
        r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"],
                              self.env, self.ctx.tmp, self.ctx.procs, 30)
        return sdstest.json_out(r, "sds-bpf stats on %s" % self.name)

    def push(self):
        return e2e.admin_of(self.stats())["push"]

    def send(self, line):
        """A command without waiting for its answer (read with answer())."""
        log("%s <- %s" % (self.name, line))
        self.t.p.stdin.write((line + "\n").encode())
        self.t.p.stdin.flush()

    def answer(self, timeout=30):
        out = []
        while True:
            l = self.t.readline(timeout)
            if l == "done":
                return out
            if l.startswith("error"):
                raise Fail("%s: %s" % (self.name, l))
            out.append(l)


class Ctx(e2e.Ctx):
    def __init__(self, name):
        super().__init__(name)
        self.pin_roots = []

    def cleanup(self):
        super().cleanup()
        for r in self.pin_roots:
            sdstest.remove_pin_root(r)
            sdstest._OWN_PIN_ROOTS.discard(r)


def strategy(admin, doc):
    return admin.ok("PUT", "/groups/%s/apps/%s/schemes/default/strategies/%s"
                    % (GROUP, APP, POINT), dict(doc))


def wait_push(host, state, deadline_s=10):
    return e2e.wait_until(
        lambda: (lambda p: p if p["state"] == state else None)(host.push()),
        time.time() + deadline_s,
        lambda _: "%s: push not %r within %d s: %r"
        % (host.name, state, deadline_s, host.push()))


def random_phase():
    """Sleep until a random point of the 10-s heartbeat period."""
    now = time.time()
    at = e2e.period_of(now) + random.uniform(0, e2e.PERIOD)
    if at < now + 0.5:
        at += e2e.PERIOD
    time.sleep(at - now)


@test
def kill_switch_two_hosts_three_admins(ctx):
    why = pgtest.available()
    check(why is None, "no PostgreSQL: %s" % why)
    pg = pgtest.cluster()
    ctx.pg = pg
    pg.start()
    db = pgtest.unique_name("sds_push")
    url = pg.create_db(db)
    admins = []
    for _ in range(3):
        a = e2e.Admin(ctx)
        a.db = url
        admins.append(a.start())
    admins[0].ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    u = [a.url for a in admins]
    # Each host watches an admin other than A (its first URL): a change
    # written through A reaches them through PostgreSQL's NOTIFY.
    hosts = [Host(ctx, HOSTS[0], [u[1], u[2], u[0]]),
             Host(ctx, HOSTS[1], [u[2], u[0], u[1]])]
    for h in hosts:
        p = wait_push(h, "waiting")
        eq(p["url"], u[1] if h is hosts[0] else u[2], h.name + ": watched admin")
    worst = {"kill": 0, "lift": 0}
    for k in range(PAIRS):
        for what, doc, cmd, key in (
                ("kill", KILL, "first_down %s every_us=200 max_ms=5000", "since_mark_ns"),
                ("lift", LIFT, "first_pass %s every_us=200 max_ms=5000", "elapsed_ns")):
            random_phase()
            for h in hosts:
                h.t.cmd("mark")
            for h in hosts:
                h.send(cmd % POINT)
            phase = time.time() % e2e.PERIOD
            strategy(admins[0], doc)
            for h in hosts:
                r = guarded.kv(h.answer()[0])
                ns = r[key]
                check(ns >= 0, "%s %d on %s: no call %s within 5 s (%r)"
                      % (what, k, h.name, "downgraded" if what == "kill"
                         else "passed", r))
                log("%s %d at %.1f s into the period: %s in %.0f ms"
                    % (what, k, phase, h.name, ns / 1e6))
                check(ns <= WITHIN_NS, "%s %d (%.1f s into the period) took "
                      "%.0f ms on %s, want <= 1000 ms" % (what, k, phase,
                                                        ns / 1e6, h.name))
                worst[what] = max(worst[what], ns)
    for h in hosts:
        p = h.push()
        eq(p["wakes"], 2 * PAIRS, h.name + ": changes the channel announced")
        eq(p["reconnects"], 0, h.name + ": reconnects")
        eq(p["failures"], 0, h.name + ": failed watches")
        check(p["syncs"] >= 2 * PAIRS, "%s: %d syncs for %d changes"
              % (h.name, p["syncs"], 2 * PAIRS))
    log("worst: kill %.0f ms, lift %.0f ms" % (worst["kill"] / 1e6,
                                              worst["lift"] / 1e6))


@test
def channel_refused_heartbeat_carries(ctx):
    a = e2e.Admin(ctx)
    a.extra = ["--max-watchers", "0"]
    a.start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    h = Host(ctx, HOSTS[0], [a.url])
    p = wait_push(h, "retrying")
    check("503" in p["last_error"], "push error does not say 503: %r" % p)
    h.t.cmd("mark")
    strategy(a, KILL)
    # The next heartbeat: its period's end plus this host's offset (<= 9 s).
    r = guarded.kv(h.t.cmd("first_down %s every_us=500 max_ms=25000" % POINT,
                           timeout=60)[0])
    check(r["since_mark_ns"] >= 0, "kill switch not in force within 25 s "
          "without the channel: %r" % r)
    log("in force %.1f s after the PUT, by the heartbeat"
        % (r["since_mark_ns"] / 1e9))
    eq(h.push()["wakes"], 0, "changes announced by a refused channel")


def iptables(op, rule):
    r = subprocess.run(["iptables", op, "OUTPUT"] + rule, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return r.returncode, r.stderr.strip()


@test
def channel_blocked_heartbeat_carries(ctx):
    check(shutil.which("iptables"), "iptables missing: run make deps")
    a = e2e.Admin(ctx).start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    h = Host(ctx, HOSTS[0], [a.url])
    wait_push(h, "waiting")
    tag = ["-m", "comment", "--comment", "sds-fleet-test-%d" % os.getpid()]
    # The watches to this admin and their answers, not the heartbeats'
    # posts or the syncs (no "seq" in their bodies).
    rules = [["-p", "tcp", "--dport", str(a.port), "-m", "string", "--string",
              "GET /api/v1/watch", "--algo", "bm"] + tag + ["-j", "DROP"],
             ["-p", "tcp", "--sport", str(a.port), "-m", "string", "--string",
              '{"seq"', "--algo", "bm"] + tag + ["-j", "DROP"]]
    added = []
    try:
        for rule in rules:
            rc, err = iptables("-A", rule)
            check(rc == 0, "iptables -A %s: %s" % (" ".join(rule), err))
            added.append(rule)
        h.t.cmd("mark")
        strategy(a, KILL)
        r = guarded.kv(h.t.cmd("first_down %s every_us=500 max_ms=25000" % POINT,
                               timeout=60)[0])
        check(r["since_mark_ns"] >= 0, "kill switch not in force within 25 s "
              "with the channel blocked: %r" % r)
        log("in force %.1f s after the PUT, by the heartbeat"
            % (r["since_mark_ns"] / 1e9))
        eq(h.push()["wakes"], 0, "changes announced through a blocked channel")
    finally:
        for rule in added:
            iptables("-D", rule)


class HostileAdmin:
    """An admin that answers heartbeats and syncs with nothing new and
    every watch as @mode says: "instant" (a new seq at once, always),
    "garbage" (200, not JSON).  Counts the watches (self.watches: their
    arrival times)."""

    NOTHING = {"version": 0, "changed": False, "strategies": None,
               "drills": []}

    def __init__(self, mode):
        self.mode = mode
        self.watches = []
        self.lock = threading.Lock()
        me = self

        class H(http.server.BaseHTTPRequestHandler):
            def reply(self, code, body):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.reply(200, json.dumps(me.NOTHING).encode())

            def do_GET(self):
                if self.path.startswith("/api/v1/watch"):
                    with me.lock:
                        me.watches.append(time.monotonic())
                        n = len(me.watches)
                    if me.mode == "instant":
                        self.reply(200, json.dumps({"seq": n}).encode())
                    else:
                        self.reply(200, b"\x00not json")
                else:
                    self.reply(200, json.dumps(me.NOTHING).encode())

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@test
def hostile_admin_bounded(ctx):
    for mode, most, least in (("instant", 3 * 6 + 3, 6), ("garbage", 4, 3)):
        fake = HostileAdmin(mode)
        ctx.servers.append(fake.srv)
        h = Host(ctx, "host-" + mode, [fake.url])
        e2e.wait_until(lambda: fake.watches, time.time() + 10,
                       lambda _: "no watch reached the %s admin" % mode)
        with fake.lock:
            t0 = fake.watches[0]
        time.sleep(6.5)
        with fake.lock:
            n = sum(1 for t in fake.watches if t - t0 < 6.0)
        log("%s admin: %d watches in the first 6 s" % (mode, n))
        check(least <= n <= most, "%s admin: %d watches in 6 s, want %d..%d"
              % (mode, n, least, most))
        p = h.push()
        if mode == "garbage":
            eq(p["state"], "retrying", "push state against garbage")
            check("seq" in p["last_error"], "push error: %r" % p)
        h.p.send_signal(signal.SIGINT)
        eq(h.p.wait(10), 0, "loader exit status")


@test
def stop_while_waiting(ctx):
    a = e2e.Admin(ctx).start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    h = Host(ctx, HOSTS[0], [a.url])
    wait_push(h, "waiting")
    time.sleep(1.0)         # well inside the 25-s wait
    t0 = time.monotonic()
    h.p.send_signal(signal.SIGINT)
    eq(h.p.wait(10), 0, "loader exit status")
    took = time.monotonic() - t0
    log("exited %.2f s after SIGINT" % took)
    check(took < 2.0, "loader took %.1f s to exit while its watch was held"
          % took)


@test
def no_push(ctx):
    a = e2e.Admin(ctx).start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    h = Host(ctx, HOSTS[0], [a.url], extra=["--no-push"])
    time.sleep(2.0)
    p = h.push()
    eq(p["state"], "off", "push state with --no-push")
    eq(p["syncs"], 0, "syncs with --no-push")
    st, text = a.req("GET", "/metrics")
    eq(st, 200, "admin /metrics")
    line = [l for l in text.splitlines() if l.startswith("sds_admin_watchers ")]
    eq(line, ["sds_admin_watchers 0"], "the admin's waiting watchers")


CLUSTER_L = 6000
TRIES = 5000


def first_heartbeat(admin, n, deadline_s=25):
    """Wait until @n hosts of the app sent a heartbeat (cluster fields need
    live hosts)."""
    return e2e.wait_until(
        lambda: (lambda st, d: d if st == 200 and len(d) >= n else None)(
            *admin.req("GET", "/api/v1/groups/%s/apps/%s/hosts" % (GROUP, APP))),
        time.time() + deadline_s,
        lambda _: "fewer than %d hosts heartbeated within %d s" % (n, deadline_s))


def cluster_of(host):
    p = sdstest.get_point(host.stats(), POINT)
    return p.get("cluster")


@test
def cluster_limit_two_hosts(ctx):
    a = e2e.Admin(ctx).start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    hosts = [Host(ctx, h, [a.url]) for h in HOSTS]
    first_heartbeat(a, 2)
    strategy(a, {"cluster_visit_threshold": CLUSTER_L})
    # Both hosts hold a share from the admin, together the whole limit
    # (the first to report held it all until its ack of a smaller share
    # let the other's grow: a second or so).
    def settled():
        c = [cluster_of(h) or {} for h in hosts]
        ok = all(x.get("source") == "admin" and x.get("visits", 0) > 0 for x in c)
        return c if ok and sum(x["visits"] for x in c) == CLUSTER_L else None
    e2e.wait_until(settled, time.time() + 5,
                   lambda _: "the shares did not settle within 5 s: %r"
                   % [cluster_of(h) for h in hosts])
    shares = [cluster_of(h)["visits"] for h in hosts]
    eq(sum(shares), CLUSTER_L, "the shares of two idle hosts (%r)" % shares)
    # The admin shows each host's share (GET {A}/hosts, the dashboard's hosts).
    rows = {x["host"]: x for x in a.ok("GET", "/groups/%s/apps/%s/hosts" % (GROUP, APP))}
    for h in hosts:
        name = e2e.admin_of(h.stats())["host"]
        sh = rows[name]["shares"][POINT]
        check(sh["live"], "%s not live in the admin's shares: %r" % (name, sh))
        check(sh["visits"] >= 0 and sh["token_rate"] == -1,
              "%s: the admin's shares %r" % (name, sh))
    eq(sum(rows[e2e.admin_of(h.stats())["host"]]["shares"][POINT]["visits"]
           for h in hosts), CLUSTER_L, "the shares the admin lists")
    # 5,000 calls each, over 4 s, both at once: one window.
    for h in hosts:
        h.send("call %s %d every_us=800" % (POINT, TRIES))
    res = [guarded.kv(h.answer(timeout=60)[0]) for h in hosts]
    passed = sum(r["passed"] for r in res)
    log("passed %r of %d each: %d together (limit %d)"
        % ([r["passed"] for r in res], TRIES, passed, CLUSTER_L))
    for r in res:
        eq(r["passed"] + r["downgraded"], TRIES, "calls made")
    check(passed <= CLUSTER_L, "%d calls passed on both hosts, limit %d"
          % (passed, CLUSTER_L))
    check(passed >= CLUSTER_L - 100, "only %d calls passed on both hosts, "
          "want at least %d" % (passed, CLUSTER_L - 100))
    # A host killed: its share goes to the other within 2 s.
    victim, other = hosts
    t0 = time.monotonic()
    sdstest.kill_group(victim.p)
    victim.t.cleanup()
    took = e2e.wait_until(
        lambda: (lambda c: time.monotonic() - t0 if c and c["visits"] == CLUSTER_L
                 else None)(cluster_of(other)),
        time.time() + 5, lambda _: "the other host's share after 5 s: %r"
        % cluster_of(other))
    log("the whole limit on %s %.2f s after %s was killed"
        % (other.name, took, victim.name))
    check(took <= 2.0, "the share moved %.2f s after the kill, want <= 2 s" % took)
    eq(cluster_of(other)["hosts"], 1, "live hosts the admin counts")


@test
def cluster_tokens_two_hosts(ctx):
    R, B, T = 1000, 100, 3.0
    a = e2e.Admin(ctx).start()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": APP}, want=201)
    hosts = [Host(ctx, h, [a.url]) for h in HOSTS]
    first_heartbeat(a, 2)
    strategy(a, {"cluster_token_rate": R, "cluster_token_bucket": B})
    # Both hold a share of their own (the first to report held the whole
    # rate until its ack of a smaller one: the other's 0 meanwhile is 0 calls).
    e2e.wait_until(
        lambda: all((cluster_of(h) or {}).get("source") == "admin" and
                    cluster_of(h)["token_rate"] > 0 for h in hosts),
        time.time() + 5, lambda _: "no token shares from the admin within 5 s: %r"
        % [cluster_of(h) for h in hosts])
    c = [cluster_of(h) for h in hosts]
    eq(sum(x["token_rate"] for x in c), R, "the rate shares (%r)" % c)
    check(sum(x["token_bucket"] for x in c) <= B, "the bucket shares (%r)" % c)
    for h in hosts:
        h.send("rate %s %g threads=1" % (POINT, T))
    res = [guarded.kv(h.answer(timeout=60)[0]) for h in hosts]
    elapsed = max(r["elapsed_ns"] for r in res) / 1e9
    passed = sum(r["passed"] for r in res)
    log("passed %r in %.2f s: %d together (rate %d/s, bucket %d)"
        % ([r["passed"] for r in res], elapsed, passed, R, B))
    check(passed <= R * elapsed + B, "%d calls passed in %.2f s on both hosts, "
          "at most %d" % (passed, elapsed, R * elapsed + B))
    # Below the rate only while the shares move between the hosts (a
    # decrease at once, the other's increase after the ack, 500 ms).
    check(passed >= 0.9 * R * T, "only %d calls passed in %.2f s on both "
          "hosts, want at least %d" % (passed, elapsed, 0.9 * R * T))


FN_POINT = "w"
FN_WHY = ("point 'w': concurrent_threshold needs a guard point (sds_enter/"
          "sds_should_downgrade) or :failfast= on this function point "
          "(docs/FAILFAST.md): a function point cannot hold its calls back")


def fn_strategy(admin, doc):
    return admin.ok("PUT", e2e.A + "/schemes/default/strategies/" + FN_POINT, dict(doc))["version"]


def fn_host(admin, pred, what, deadline_s=30):
    """The app's one host once @pred(host row) holds (heartbeats come once a
    period, at its end plus the host's offset)."""
    def one():
        st, d = admin.req("GET", "/api/v1" + e2e.A + "/hosts")
        return d[0] if st == 200 and len(d) == 1 and pred(d[0]) else None
    return e2e.wait_until(one, time.time() + deadline_s,
                          lambda _: "%s within %d s: %r"
                          % (what, deadline_s, admin.req("GET", "/api/v1" + e2e.A + "/hosts")))


@test
def function_point_refusal(ctx):
    a = ctx.admin()
    a.ok("POST", "/groups/%s/apps" % GROUP, {"name": e2e.APP}, want=201)
    v1 = fn_strategy(a, {"visit_threshold": 1000000})
    loader = ctx.attach(a.url, point="%s=work" % FN_POINT)
    host = fn_host(a, lambda h: h["version"] == v1, "the loader in force at version %d" % v1)
    eq(host["refused"], [], "no refusal at first")
    eq(a.ok("GET", e2e.A + "/refused"), [], "GET refused at first")
    # A field the function point cannot enforce: refused, v1 stays in force.
    v2 = fn_strategy(a, {"concurrent_threshold": 2})
    h = fn_host(a, lambda h: h["refused"], "the refusal in a heartbeat")
    eq((h["version"], h["refused"]),
       (v1, [{"version": v2, "point": FN_POINT, "reason": FN_WHY}]), "the heartbeat's refusal")
    eq(a.ok("GET", e2e.A + "/refused"),
       [{"point": FN_POINT, "version": v2, "reason": FN_WHY, "hosts": [h["host"]],
         "text": "refused on 1 host: " + FN_WHY}], "GET refused")
    fleet = a.ok("GET", "/fleet?group=%s&app=%s" % (GROUP, e2e.APP))
    eq([r["text"] for r in fleet["groups"][0]["apps"][0]["refused"]],
       ["refused on 1 host: " + FN_WHY], "the fleet's refused")
    eq(loader.stats()["strategies_version"], v1, "the loader's version in force")
    check(FN_WHY + "; the strategies in force stay" in loader.stderr(),
          "the loader's log line: %r" % loader.stderr())
    # Still refused a period later: the admin offers v2 again, the loader says so again.
    last = h["last_period"]
    h = fn_host(a, lambda h: h["last_period"] > last, "the next heartbeat")
    eq((h["version"], [r["version"] for r in h["refused"]]), (v1, [v2]), "refused still")
    # A corrected push: taken, the refusal gone with the next heartbeat.
    v3 = fn_strategy(a, {"visit_threshold": 5})
    h = fn_host(a, lambda h: h["version"] == v3, "the corrected version in force")
    eq(h["refused"], [], "refusal cleared")
    eq(a.ok("GET", e2e.A + "/refused"), [], "GET refused after the correction")
    eq(loader.stats()["strategies_version"], v3, "the loader's version in force")
    loader.stop()


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx,
                               needs=(SDS, e2e.ADMIN, GUARDED),
                               tools=("bpftool", "unshare")))
