# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The copy path against a hostile peer (docs/TRUST.md, "The copy path"):
an admin reply naming copy servers by host name never makes a loader ask
a resolver on its loop; only the copy-server role registers a server, and
a name stays bound to the token that registered it; sds-copy's senders
have a hello deadline, a cap per address and a token."""

import json
import os
import socket
import struct
import sys
import threading
import time

import sdstest
import guarded
from fake_admin import FakeAdmin
import copy_lib
import sender
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
import cap_lib  # noqa: E402
from copy_lib import check, eq, log, test

HERE = os.path.dirname(os.path.abspath(__file__))
TT = os.path.join(sdstest.BUILD, "test", "targets")
KILL = {"version": 1, "points": {"order": {"visit_threshold": 0}}}
NAMES = ["copy-%d.fleet.invalid:7070" % i for i in range(8)]
NUMERIC = ["127.0.0.1:7071", "[::1]:7072", "127.0.0.3:7073"]


class SilentResolver:
    """A DNS server on 127.0.53.1:53 that counts queries and answers none:
    a resolver that never answers, as in a DNS outage."""

    ADDR = "127.0.53.1"

    def __init__(self):
        self.queries = 0
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind((self.ADDR, 53))
        self.s.settimeout(0.2)
        self.closed = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.closed:
            try:
                self.s.recvfrom(4096)
                self.queries += 1
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.closed = True
        self.s.close()


class NamesAdmin(FakeAdmin):
    """Every heartbeat answered with the kill switch and @servers as the
    copy servers (no plan: the loader parses the servers regardless)."""

    def __init__(self, servers):
        self.servers = servers
        self.posts = 0
        super().__init__(self._answer)

    def _answer(self, beat):
        self.posts += 1
        return {"version": 1, "changed": True, "strategies": KILL,
                "drills": [], "copy": {"servers": self.servers, "plans": []}}


def in_resolver_ns(ctx, resolver):
    """A wrapper that runs sds-bpf in a mount namespace whose
    /etc/resolv.conf names only @resolver (timeout 5 s, 2 attempts)."""
    conf = os.path.join(ctx.tmp, "resolv.conf")
    with open(conf, "w") as f:
        f.write("nameserver %s\noptions timeout:5 attempts:2\n" % resolver.ADDR)
    w = os.path.join(ctx.tmp, "sds-bpf-ns")
    with open(w, "w") as f:
        f.write("#!/bin/sh\nexec unshare -m --propagation private sh -c "
                "'mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"' "
                "%s %s \"$@\"\n" % (conf, sdstest.SDS))
    os.chmod(w, 0o755)
    return w


def loader_stats(ctx, app):
    r = sdstest.run_group([sdstest.SDS, "stats", "--json", "--app", app],
                          ctx.env, ctx.tmp, ctx.others, timeout=30)
    check(r.rc == 0, "stats: %r" % r)
    return json.loads(r.out)


def loader_point(ctx, app=cap_lib.APP, name=cap_lib.POINT):
    return sdstest.get_point(loader_stats(ctx, app), name)


@test
def copy_admin_names_never_resolved(ctx):
    """A loader under the kill switch whose admin names 8 copy servers by
    host name, a resolver that never answers as its only nameserver: no
    query reaches the resolver, the 8 names are refused once (the list is
    parsed again only when it changes, however many replies repeat it),
    every tick is on time (tick_late_ms max under 100 ms over 3 replies)
    and 200 of 200 guarded calls are downgraded.  Then a list of 5 of
    those names and 3 numeric servers: parsed once more (5 refused more,
    13 in all), the 3 kept, routed by point (t_spread.py follows the
    records)."""
    res = SilentResolver()
    admin = NamesAdmin(NAMES)
    try:
        path = sdstest.stage(os.path.join(TT, "guarded_static"), ctx.tmp)
        token = sdstest.write_token(os.path.join(ctx.tmp, "token"), "t0ken-names-16by")
        l = sdstest.AttachProcess(ctx, ["--app", "app", "--admin", admin.url,
                                        "--token-file", token, path], "app",
                                  binary=in_resolver_ns(ctx, res))
        t = guarded.Target(ctx, path)
        t.open("app")
        sdstest.wait_until(lambda: admin.posts >= 4, time.time() + 60,
                           lambda _: "%d heartbeats, not 4" % admin.posts, 0.2)
        eq(res.queries, 0, "DNS queries at the resolver")
        st = loader_stats(ctx, "app")
        out = st.get("copy_out")
        check(out is not None, "stats has no copy_out: %r" % sorted(st))
        eq(out["refused"], len(NAMES), "copy_out.refused (8 names, 3+ replies)")
        eq(out["servers"], 0, "copy_out.servers")
        late = st["tick_late_ms"]
        log("tick_late_ms %r" % late)
        check(late["ticks"] > 0 and late["max"] < 100,
              "tick_late_ms %r: a tick waited" % late)
        r = t.call("order", 200)
        eq((r["passed"], r["downgraded"]), (0, 200), "calls under the kill switch")
        eq(l.stderr().count("copy server from the admin refused"), len(NAMES),
           "refusal lines")

        with admin.lock:
            admin.servers = NAMES[:5] + NUMERIC
            seen = admin.posts
        sdstest.wait_until(lambda: admin.posts >= seen + 3, time.time() + 60,
                           lambda _: "%d heartbeats, not %d" % (admin.posts, seen + 3), 0.2)
        out = loader_stats(ctx, "app")["copy_out"]
        eq((out["refused"], out["servers"], out["route"]), (13, 3, "point"),
           "copy_out refused, servers, route")
        eq([x["server"] for x in out["streams"]], NUMERIC, "copy_out.streams")
        eq(res.queries, 0, "DNS queries at the resolver")
        eq(l.stderr().count("copy server from the admin refused"), 13, "refusal lines")
    finally:
        admin.close()
        res.close()


# ---------------------------------------------------------------------------
# sds-copy's senders: deadlines, a cap per address, the stream token

STREAM_TOKEN = "copy-stream.t0ken-for-tests"


def idle_from(addr, n, port):
    """@n TCP connections from source @addr to the server, sending nothing."""
    out = []
    for _ in range(n):
        s = socket.socket()
        s.bind((addr, 0))
        s.connect(("127.0.0.1", port))
        out.append(s)
    return out


def closed_by_peer(s, timeout=10):
    """True once the server closed @s (recv gives EOF or a reset)."""
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def token_hello(tok):
    t = tok.encode()
    return sender.STREAM_MAGIC + struct.pack("<HH", 2, len(t)) + t


@test
def copy_idle_senders_do_not_lock_out(ctx):
    """64 idle connections from 127.0.0.2 hold 8 slots (the cap per
    address: 56 refused), a real loader on 127.0.0.1 with the stream
    token gets in at once and its 300 records arrive, exactly; the 8 idle
    ones are closed at the 1-s hello deadline (timed_out 8)."""
    n, size = 300, 40
    shadow = ctx.shadow()
    tokf = sdstest.write_token(os.path.join(ctx.tmp, "stream.token"), STREAM_TOKEN)
    srv = copy_lib.Server(ctx, [copy_lib.plan("p", [shadow.addr], app=cap_lib.APP,
                                              points=[cap_lib.POINT])],
                          extra=["--stream-token-file", tokf, "--hello-timeout", "1"])
    idle = idle_from("127.0.0.2", 64, srv.port)
    try:
        st = sdstest.wait_until(lambda: (lambda x: x if x["refused"] == 56 else None)(
            srv.stats()), time.time() + 10, lambda _: "stats %r" % srv.stats(), 0.1)
        eq((st["senders"], st["refused_addr"]), (8, 56), "senders, refused_addr")
        sdstest.AttachProcess(ctx, ["--app", cap_lib.APP, "--copy-to", srv.addr,
                                    "--copy-token-file", tokf, cap_lib.TARGET,
                                    "%s=handle_request:copy=1,2" % cap_lib.POINT],
                              cap_lib.APP)
        t = cap_lib.Target(ctx)
        sdstest.wait_until(lambda: loader_point(ctx)["copy"]["rate"] == 100,
                           time.time() + 20, lambda _: "copy rate: %r"
                           % loader_point(ctx)["copy"], 0.1)
        t.go(n, size)
        eq(shadow.wait_count(n), n, "records of the loader at the shadow")
        eq({b for b, _ in shadow.got}, {cap_lib.body(1, i, size) for i in range(n)},
           "bodies")
        eq(sum(closed_by_peer(s) for s in idle[:8]), 8, "idle senders closed")
        st = srv.stats()
        eq((st["timed_out"], st["auth_failed"], st["bad_streams"]), (8, 0, 0),
           "timed_out, auth_failed, bad_streams")
    finally:
        for s in idle:
            s.close()


@test
def copy_stream_token_checked(ctx):
    """With --stream-token-file: a wrong token, a version 1 hello (no
    token) and a token of the right length but one byte off are each
    closed and counted in auth_failed (3), their records never reach the
    plan; the right token's 50 records do, exactly."""
    shadow = ctx.shadow()
    tokf = sdstest.write_token(os.path.join(ctx.tmp, "stream.token"), STREAM_TOKEN)
    srv = copy_lib.Server(ctx, [copy_lib.plan("p", [shadow.addr])],
                          extra=["--stream-token-file", tokf])
    recs = b"".join(sender.record("app", "pt", b"r%d\n" % i) for i in range(50))
    bad = [token_hello("nope-not-the-token"), sender.hello(),
           token_hello(STREAM_TOKEN[:-1] + "X")]
    for h in bad:
        s = socket.create_connection(("127.0.0.1", srv.port))
        try:
            s.sendall(h + recs)
            check(closed_by_peer(s), "hello %r: not closed" % h[:12])
        finally:
            s.close()
    s = socket.create_connection(("127.0.0.1", srv.port))
    try:
        s.sendall(token_hello(STREAM_TOKEN) + recs)
        eq(shadow.wait_count(50), 50, "records with the token")
    finally:
        s.close()
    st = srv.stats()
    eq((st["auth_failed"], st["bad_streams"], st["records"]), (3, 0, 50),
       "auth_failed, bad_streams, records")
    # A token file sds-copy cannot trust: one line, exit 1.
    os.chmod(tokf, 0o644)
    r = ctx.run(["serve", "--listen", "127.0.0.1:1", "--plans", srv.plans_path,
                 "--stream-token-file", tokf, "--name", "other"])
    eq(r.rc, 1, "serve with a 0644 token file: exit status")
    eq(len(r.err.strip().splitlines()), 1, "one line: %r" % r.err)
    check("--stream-token-file" in r.err, "names the option: %r" % r.err)


@test
def copy_admin_shadow_names_left_out(ctx):
    """sds-copy --admin under a resolver that never answers (as the
    loader above): a plan whose shadow is a host name is left out with
    one line and no query, the plan beside it with a numeric shadow is
    taken; the server's heartbeats keep coming (3 more in 30 s)."""
    res = SilentResolver()
    try:
        adm = copy_lib.Admin(ctx)
        sh = ctx.shadow()
        plans = "/api/v1/groups/demo/apps/shop/copy-plans"
        adm.call("POST", "/api/v1/groups", {"name": "demo"}, want=201)
        adm.call("POST", "/api/v1/groups/demo/apps", {"name": "shop"}, want=201)
        for name, shadow in (("named", "shadow-1.fleet.invalid:9"), ("num", sh.addr)):
            adm.call("POST", plans, {"name": name, "points": ["p_" + name],
                                     "amplification": 1, "shadows": [shadow],
                                     "duration_s": 600, "by": "t_trust"}, want=201)
        conf = os.path.join(ctx.tmp, "resolv.conf")
        in_resolver_ns(ctx, res)
        w = os.path.join(ctx.tmp, "sds-copy-ns")
        with open(w, "w") as f:
            f.write("#!/bin/sh\nexec unshare -m --propagation private sh -c "
                    "'mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"' "
                    "%s %s \"$@\"\n" % (conf, copy_lib.COPY))
        os.chmod(w, 0o755)
        old = copy_lib.COPY
        copy_lib.COPY = w
        try:
            srv = copy_lib.Server(ctx, None, name="adm",
                                  admin=["--admin", adm.url, "--token-file", adm.token_file])
        finally:
            copy_lib.COPY = old
        sdstest.wait_until(lambda: [p["name"] for p in srv.stats()["plans"]] == ["num"],
                           time.time() + 15, lambda _: "plans: %r" % srv.stats(), 0.2)
        hb0 = srv.stats()["admin"]["heartbeats"]
        sdstest.wait_until(lambda: srv.stats()["admin"]["heartbeats"] >= hb0 + 3,
                           time.time() + 45, lambda _: "heartbeats: %r" % srv.stats()["admin"],
                           0.5)
        eq(res.queries, 0, "DNS queries at the resolver")
        lines = srv.stderr().splitlines()
        eq(lines, ["sds-copy: admin: plans left out: plan 0 (named): shadows[0]: "
                   "shadow-1.fleet.invalid:9: not a numeric address (names from the "
                   "admin are not resolved)"], "sds-copy stderr")
    finally:
        res.close()
