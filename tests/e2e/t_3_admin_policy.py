# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Several admins (--admin-policy): consistent_hash keeps a host on one
admin, least_active avoids a hung one, bad policies are refused, and a
plugin's policy (sds-bpf ext list, sds-admin --ext-list) picks the
admin of every heartbeat.
"""

import json
import os
import shutil
import socket
import subprocess
import threading
import time

from e2e_lib import (ADMIN, APP, PERIOD, TARGET, admin_of, admin_stats,
                     attach_fails, host_loader, host_name, test)
import sdstest
from sdstest import check, eq, free_port, log, wait_until
from fake_admin import FakeAdmin, NOTHING_NEW


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
