# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The copy path against a hostile peer (docs/TRUST.md, "The copy path"):
an admin reply naming copy servers by host name never makes a loader ask
a resolver on its loop; only the copy-server role registers a server, and
a name stays bound to the token that registered it; sds-copy's senders
have a hello deadline, a cap per address and a token."""

import json
import os
import socket
import threading
import time

import sdstest
import guarded
from fake_admin import FakeAdmin
from copy_lib import Fail, check, eq, log, test

TT = os.path.join(sdstest.BUILD, "test", "targets")
KILL = {"version": 1, "points": {"order": {"visit_threshold": 0}}}
NAMES = ["copy-%d.fleet.invalid:7070" % i for i in range(8)]


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


@test
def copy_admin_names_never_resolved(ctx):
    """A loader under the kill switch whose admin names 8 copy servers by
    host name, a resolver that never answers as its only nameserver: no
    query reaches the resolver, the 8 names are refused once (the list is
    parsed again only when it changes, however many replies repeat it),
    every tick is on time (tick_late_ms max under 100 ms over 3 replies)
    and 200 of 200 guarded calls are downgraded."""
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
    finally:
        admin.close()
        res.close()
