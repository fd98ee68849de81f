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
    of each post, in order, and each post's whole "NAME_ID" host in
    .full."""

    def __init__(self, ctx):
        self.posts = []         # (host, period_start), first post first
        self.full = set()       # the heartbeats' hosts, NAME_ID
        super().__init__(self._answer)
        ctx.servers.append(self.srv)

    def _answer(self, doc):
        self.posts.append((host_name(doc["host"]), doc["period_start"]))
        self.full.add(doc["host"])
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


HEARTBEATS = 3

# consistent_hash's map, computed here from its definition
# (docs/BALANCE.md, libsds/balance_hash.c), not by the code under test:
# each admin URL puts 160 points on a ring of 2^64, XXH64(url, seed = r)
# for r in 0..159; a host goes to the admin of the first point at or
# after XXH64(host, 0), wrapping past the top.  The host is the
# heartbeat's "NAME_ID" (loader/report/hostid.c).

M64 = (1 << 64) - 1
XP1, XP2, XP3 = 0x9e3779b185ebca87, 0xc2b2ae3d27d4eb4f, 0x165667b19e3779f9
XP4, XP5 = 0x85ebca77c2b2ae63, 0x27d4eb2f165667c5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    return _rotl((acc + lane * XP2) & M64, 31) * XP1 & M64


def xxh64(data, seed=0):
    """XXH64 of @data, from its specification (xxhash.h v0.8)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + XP1 + XP2) & M64, (seed + XP2) & M64, seed,
             (seed - XP1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i:i + 8], "little"))
                i += 8
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12)
             + _rotl(v[3], 18)) & M64
        for x in v:
            h = ((h ^ _round(0, x)) * XP1 + XP4) & M64
    else:
        h = (seed + XP5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i:i + 8], "little"))
        h = (_rotl(h, 27) * XP1 + XP4) & M64
        i += 8
    if i + 4 <= n:
        h ^= int.from_bytes(data[i:i + 4], "little") * XP1 & M64
        h = (_rotl(h, 23) * XP2 + XP3) & M64
        i += 4
    while i < n:
        h ^= data[i] * XP5 & M64
        h = _rotl(h, 11) * XP1 & M64
        i += 1
    h ^= h >> 33
    h = h * XP2 & M64
    h ^= h >> 29
    h = h * XP3 & M64
    h ^= h >> 32
    return h


VNODES = 160


def ring_pick(urls, key):
    """The index in @urls of the admin consistent_hash gives @key."""
    ring = sorted((xxh64(u.encode(), r), i) for i, u in enumerate(urls)
                  for r in range(VNODES))
    h = xxh64(key.encode(), 0)
    return next((i for p, i in ring if p >= h), ring[0][1])


def host_id(machine_id):
    """The ID loader/report/hostid.c derives from @machine_id (as in t_5_hosts)."""
    h = 0xcbf29ce484222325
    for b in b"sds-bpf host id v1:" + machine_id.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%012x" % (h >> 16)


def machine_hid():
    """This machine's host ID, the loaders' (/etc/machine-id)."""
    with open("/etc/machine-id") as f:
        return host_id(f.read().strip().lower())


def spread_hosts(urls, n):
    """@n host names, host-a.., that consistent_hash puts on every admin
    of @urls (one each at least, the rest in name order): {name: admin}.
    The ports are new each run, so the names are chosen for them; a
    policy that sent every host to one admin cannot pass."""
    hid = machine_hid()
    cand = {"host-%s" % c: ring_pick(urls, "host-%s_%s" % (c, hid))
            for c in "abcdefghijklmnopqrstuvwxyz"}
    pick = {}
    for i in range(len(urls)):
        h = next((h for h in sorted(cand) if cand[h] == i), None)
        check(h, "no host-[a-z] goes to admin %d of %r: %r" % (i, urls, cand))
        pick[h] = i
    for h in sorted(cand):
        if len(pick) < n:
            pick.setdefault(h, cand[h])
    return pick


@test
def admin_policy_consistent_hash(ctx):
    """Three admins, five hosts with --admin-policy consistent_hash: every
    heartbeat of a host goes to the admin the ring gives it (computed
    here), the hosts chosen so that each admin has at least one,
    HEARTBEATS of them each, every period stored exactly once."""
    admins = [CountingAdmin(ctx) for _ in range(3)]
    urls = [a.url for a in admins]
    want = spread_hosts(urls, 5)
    HOSTS = sorted(want)
    log("hosts and their admins by the ring: %r" % want)
    apps = {}
    for h in HOSTS:
        # The heartbeats' policy alone: no push channel, no syncs.
        _, apps[h] = host_loader(ctx, h, urls, "consistent_hash",
                                 extra=["--no-push"])
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
        eq(i, want[h], "host %s: the admin it went to (the ring's: %d)"
           % (h, want[h]))
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
    # The names the ring was computed for are the heartbeats' own.
    eq(sorted(x for a in admins for x in a.full),
       sorted("%s_%s" % (h, machine_hid()) for h in HOSTS),
       "the heartbeats' hosts (NAME_ID)")


# admin_policy_hung_least_active: hosts at once, heartbeats each at least,
# heartbeats each at most while no hung admin was chosen.  least_active
# draws among idle admins at random (rdtsc-seeded, each loader its own),
# so one host skips its hung admin over 4 heartbeats 20% of the time;
# HUNG_HOSTS hosts of HUNG_MAX heartbeats all skip theirs with odds
# (2/3)^36, about 1 in 2 million, and then the test fails: it never passes
# without the path under test (a post timed out, the admin held down).
# HUNG_MAX keeps the test inside the suite's 100-s timeout.
HUNG_HOSTS = 6
HUNG_MIN = 4
HUNG_MAX = 6


@test
def admin_policy_hung_least_active(ctx):
    """Three admins, one hung (accepts, never answers), --admin-policy
    least_active (the default, named), HUNG_HOSTS hosts at once, each
    with a hung admin of its own: a hung one gets at most one heartbeat
    in all (timed out, then down and held against it), so it stops
    receiving at the latest one heartbeat after its first post; every
    period is stored once by the others.  When a host first posts to its
    hung admin is least_active's random tie-break among idle admins, so
    the hosts heartbeat until one has (fails if none did in HUNG_MAX
    heartbeats each), and that one a heartbeat more."""
    good = [CountingAdmin(ctx), CountingAdmin(ctx)]
    hosts = ["host-h%d" % k for k in range(HUNG_HOSTS)]
    hung = {h: HungAdmin(ctx) for h in hosts}
    apps = {}
    for h in hosts:
        _, apps[h] = host_loader(ctx, h, [good[0].url, hung[h].url,
                                          good[1].url], "least_active",
                                 extra=["--no-push"])
    start = time.time()

    def stored(h):
        return sorted(p for a in good for x, p in a.snapshot() if x == h)

    def accepted():
        return {h: hung[h].accepted for h in hosts}
    # A heartbeat after the first post to a hung admin: it was held down.
    chosen, need = None, 0
    deadline = start + (HUNG_MAX + 1) * PERIOD + 12
    while True:
        n = {h: len(stored(h)) for h in hosts}
        if chosen is None:
            chosen = next((h for h in hosts if hung[h].accepted), None)
            if chosen:
                need = n[chosen] + 1
        if (chosen and min(n.values()) >= HUNG_MIN
                and n[chosen] >= need):
            break
        check(chosen or min(n.values()) < HUNG_MAX,
              "no host posted to its hung admin in %d heartbeats each "
              "(stored %r): the path under test never ran" % (HUNG_MAX, n))
        check(time.time() < deadline, "heartbeats stored %r, hung admins "
              "accepted %r, the first chosen by %s (then %d stored, want "
              "%d)" % (n, accepted(), chosen, n.get(chosen, 0), need))
        time.sleep(0.2)
    log("the hung admins accepted %r; %s first, heartbeats stored %r"
        % (accepted(), chosen, {h: len(stored(h)) for h in hosts}))
    # A post the hung admin took in the last period may not have timed out
    # yet (3 s, loader/report/uplink_send.c): wait for its failure to be counted.
    for h in hosts:
        if hung[h].accepted:
            wait_until(lambda: admin_stats(ctx, apps[h])["admins"][1][
                "failures"] >= 1, time.time() + 8,
                "%s: the post to its hung admin never failed" % h)
    for h in hosts:
        periods = stored(h)
        eq(len(periods), len(set(periods)), "%s: a period stored twice: %r"
           % (h, periods))
        got = hung[h].accepted
        check(got <= 1, "%s: the hung admin got %d posts (want at most 1)"
              % (h, got))
        st = admin_stats(ctx, apps[h])
        eq(st["admin_policy"], "least_active", "%s: admin_policy" % h)
        a = st["admins"][1]
        eq((a["posts"], a["stored"], a["failures"], a["timed_out"]),
           (got, 0, got, got == 1),
           "%s: the hung admin's posts, stored, failures, timed_out" % h)
        if got:
            check(a["down_ms"] > 0, "%s: the hung admin is not down: %r"
                  % (h, a))
        check(sum(st["admins"][i]["stored"] for i in (0, 2)) >= len(periods),
              "%s: stored by the good admins %r, want at least the %d "
              "periods seen" % (h, st["admins"], len(periods)))
    eq(hung[chosen].accepted, 1, "posts to %s's hung admin" % chosen)


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
    from tests/unit/common/ext_plugin.c as a user would: (dir, lib)."""
    d = os.path.join(ctx.tmp, "ext")
    os.mkdir(d, 0o755)
    lib = os.path.join(d, "libgood.so")
    src = os.path.join(sdstest.ROOT, "tests", "unit", "common", "ext_plugin.c")
    r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-DPART=1", "-I",
                        os.path.join(sdstest.ROOT, "libsds"), "-o", lib,
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
