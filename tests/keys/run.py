#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Hot keys counted in the kernel (docs/KEYS.md): a real `sds-bpf attach`
on tests/targets/keytarget's keyed functions, every count computed from
what the test made the target call.

  * int_users, str_users, buf_users: for 2 s, users 1..1000 at 50 calls/s
    each and user 7 at 5,000/s through handle(user) (:key=arg1),
    handle_str("user-N") (:key=str1) and handle_buf(&user, 4)
    (:key=buf1,len2): every user's calls and exceptions (users that are
    multiples of 10 fail) exact, 1,000 keys in the table, none evicted;
    `stats --keys` lists user 7 first with its exact count; buffer keys
    shown as hex, string keys as their text; `top --keys` shows user 7 first.
  * guard_keys: libsds's keyed guard calls (tests/targets/keyguard,
    sds_enter_key with "user-N" N times, user 7 500 more; a guard's
    (key, len) is of kind buf, shown as its text): the guard
    point's table is made at the tick after its first key ("warm", that
    call counted lost), then every key's calls, completed calls and
    exceptions exact, user 7 first.
  * unreadable: 1,000 calls with a pointer nobody can read (0x10), through
    a string and a buffer key: each counted under (unreadable), the calls
    themselves all made and counted.
  * evictions: 100,000 distinct keys through a point of key_capacity
    4,096: the table holds at most 4,096 (its capacity), 100,000 were
    inserted, and the evictions are exactly 100,000 less the keys held.
  * zipf: 200,000 calls of a Zipf(1.1) stream over 100,000 keys through a
    point of key_capacity 4,096: the top 10 are the stream's 10 heaviest
    keys with their exact counts.
  * heartbeat: the heartbeat of a period with 1 s of the users' calls
    (5.0-6.5 s into it, inside the 10-s window the period's close reads)
    carries the point's 10 heaviest keys: user 7 first with its 5,000
    calls, the others 50 each, exceptions exact, each key's p99 of the
    period that of all its calls (a fake admin keeps it).
  * blocked_key: on a keyed :failfast=connect point, key 2 blocked
    through the control socket's root-only `keys-block`: its 10 connects
    fail, key 1's 10 pass; the block counted (blocked 1, key 2's downgrade, the
    point's failfast denied 10), and unblocked key 2 passes again.
  * bad_key, bad_capacity: each malformed :key= and key_capacity is one
    exact line and exit 1, nothing attached.
  * bad_reload: a SIGHUP reload with key_capacity 0 is refused and the
    strategies in force stay.
  * limits.py's: key limits at the tick (guard_token, guard_override,
    function_token, guard_visit, guard_no_key, bad_limits).
  * admin_cap.py's: user 7 capped through a real sds-admin's API
    (admin_cap) and from its dashboard in chromium (dashboard_cap), on a
    keyed :failfast= function point of an unmodified program.

Run as root:  python3 tests/keys/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only.
"""

import bisect
import collections
import json
import os
import random
import signal
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, check, eq, get_point, log  # noqa: E402
from fake_admin import NOTHING_NEW, FakeAdmin  # noqa: E402

TT = os.path.join(BUILD, "test", "targets")
KEYTARGET = os.path.join(TT, "keytarget")
KEYGUARD = os.path.join(TT, "keyguard")
SECS = 2                     # the users' run: 2 s of the issue's rates
USERS = 1000
HOT, HOT_RATE, RATE = 7, 5000, 50


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-keys-")
        self.target = sdstest.stage(KEYTARGET, self.tmp)

    def sds(self, args, timeout=20):
        return sdstest.run_group([SDS] + args, self.env, self.tmp,
                                 self.others, timeout)

    def strategies(self, points, version=1):
        path = os.path.join(self.tmp, "strategies.json")
        with open(path, "w") as f:
            json.dump({"version": version, "points": points}, f)
        return path

    def attach(self, points, strategies=None, extra=()):
        args = ["--app", "keys", "--max-overhead", "0"] + list(extra)
        if strategies is not None:
            args += ["--strategies", self.strategies(strategies)]
        return sdstest.AttachProcess(self, args + [self.target] + points,
                                     "keys")

    def run_target(self, *args, timeout=60):
        r = sdstest.run_group([self.target] + [str(a) for a in args],
                              self.env, self.tmp, self.others, timeout)
        check(r.rc == 0 and r.out.endswith("done\n"),
              "keytarget %s: %r" % (" ".join(map(str, args)), r))
        return r.out

    def keys(self, point, top=1000):
        r = self.sds(["stats", "--app", "keys", "--keys", point, "--top",
                      str(top), "--json"])
        check(r.rc == 0, "stats --keys %s --json: %r" % (point, r))
        return json.loads(r.out)

    def point(self, name):
        r = self.sds(["stats", "--app", "keys", "--json"])
        check(r.rc == 0, "stats --json: %r" % r)
        return get_point(json.loads(r.out), name)


def user_key(kind, u):
    """User @u's key as the loader shows it."""
    if kind == "int":
        return str(u)
    if kind == "str":
        return "user-%d" % u
    return "0x" + struct.pack("<I", u).hex()


def check_users(ctx, kind, point):
    ctx.run_target("users", SECS, kind)
    r = ctx.keys(point)
    eq((r["live"], r["inserted"], r["evicted"], r["unreadable"], r["lost"],
        r["capacity"]), (USERS, USERS, 0, 0, 0, 4096),
       "%s: live, inserted, evicted, unreadable, lost, capacity" % point)
    got = {e["key"]: e for e in r["top"]}
    eq(len(got), USERS, "%s: keys listed" % point)
    bad = []
    for u in range(1, USERS + 1):
        e = got.get(user_key(kind, u))
        calls = SECS * (HOT_RATE if u == HOT else RATE)
        exc = calls if u % 10 == 0 else 0
        if not e or (e["calls"], e["exceptions"], e["completed"],
                     e["kind"]) != (calls, exc, calls, kind):
            bad.append((u, e))
    check(not bad, "%s: %d users' counts wrong, first %r" % (point, len(bad),
                                                             bad[:3]))
    first = r["top"][0]
    eq((first["key"], first["calls"]), (user_key(kind, HOT), SECS * HOT_RATE),
       "%s: the heaviest key" % point)
    # The point's own counts are every call.
    p = ctx.point(point)
    eq(p["total"]["visits"], SECS * ((USERS - 1) * RATE + HOT_RATE),
       "%s: visits" % point)
    # The table people read: user 7's line first, its count exact.
    t = ctx.sds(["stats", "--app", "keys", "--keys", point, "--top", "3"])
    check(t.rc == 0, "stats --keys: %r" % t)
    lines = t.out.splitlines()
    check(len(lines) == 5 and lines[1].split()[0] == "KEY" and
          lines[2].split()[:2] == [user_key(kind, HOT), str(SECS * HOT_RATE)],
          "stats --keys %s --top 3:\n%s" % (point, t.out))
    check(lines[0].startswith("point %s (key " % point) and
          " 1000 of 4096 keys, 1000 inserted, 0 evicted, 0 unreadable" in lines[0],
          "stats --keys head: %r" % lines[0])
    log(t.out.rstrip())


SUITE = sdstest.Suite(timeout=120)


@SUITE.test
def int_users(ctx):
    """Per-key counts by an integer argument; user 7 first."""
    ctx.attach(["u=handle:key=arg1:err=neg:site=nop5"])
    check_users(ctx, "int", "u")
    # top --keys: a live table, the hottest key first.
    t = ctx.sds(["top", "--app", "keys", "--keys", "u", "--interval", "1",
                 "--count", "1"])
    check(t.rc == 0, "top --keys: %r" % t)
    lines = t.out.splitlines()
    check(len(lines) >= 3 and lines[1].split()[0] == "KEY" and
          lines[2].split()[0] == "7",
          "top --keys u:\n%s" % t.out)


@SUITE.test
def str_users(ctx):
    """The same through a string key (:key=str1)."""
    ctx.attach(["s=handle_str:key=str1:err=neg:site=nop5"])
    check_users(ctx, "str", "s")


@SUITE.test
def buf_users(ctx):
    """The same through bytes and their length (:key=buf1,len2), as hex."""
    ctx.attach(["b=handle_buf:key=buf1,len2:err=neg:site=nop5"])
    check_users(ctx, "buf", "b")


@SUITE.test
def guard_keys(ctx):
    """A guard point's keys, as libsds passes them."""
    target = sdstest.stage(KEYGUARD, ctx.tmp)
    sdstest.AttachProcess(ctx, ["--app", "keys", target], "keys")
    r = sdstest.run_group([target, "keys"], ctx.env, ctx.tmp, ctx.others, 60)
    eq((r.rc, r.out), (0, "done\n"), "keyguard")
    r = ctx.keys("kg")
    eq((r["key"], r["capacity"], r["lost"], r["live"], r["inserted"],
        r["evicted"]), ("guard", 4096, 1, 100, 100, 0),
       "key, capacity, lost (the first key's call), live, inserted, evicted")
    want = {}
    for u in range(1, 101):
        n = u + (500 if u == HOT else 0)
        want["user-%d" % u] = ("buf", n, n, n if u % 10 == 0 else 0)
    got = {e["key"]: (e["kind"], e["calls"], e["completed"], e["exceptions"])
           for e in r["top"]}
    eq(got, want, "(kind, calls, completed, exceptions) by key")
    eq(r["top"][0]["key"], "user-7", "the heaviest key")


@SUITE.test
def unreadable(ctx):
    """A key pointer the kernel cannot read: the call is counted under
    (unreadable), never failed."""
    n = 1000
    ctx.attach(["s=handle_str:key=str1:site=nop5",
                "b=handle_buf:key=buf1,len2:site=nop5"])
    ctx.run_target("bad", n)
    for name in ("s", "b"):
        r = ctx.keys(name)
        eq((r["unreadable"], r["live"], r["inserted"], r["lost"]),
           (n, 1, 1, 0), "%s: unreadable, live, inserted, lost" % name)
        e = r["top"][0]
        eq((e["key"], e["kind"], e["calls"], e["completed"]),
           ("(unreadable)", "unreadable", n, n), "%s: its one key" % name)
        eq(ctx.point(name)["total"]["visits"], n, "%s: visits" % name)


@SUITE.test
def evictions(ctx):
    """100,000 distinct keys through 4,096 slots: bounded, evictions exact."""
    n, cap = 100000, 4096
    ctx.attach(["m=handle_many:key=arg1:site=nop5"],
               {"m": {"key_capacity": cap}})
    ctx.run_target("many", n)
    r = ctx.keys("m", 10)
    log("live %d, inserted %d, evicted %d" % (r["live"], r["inserted"],
                                               r["evicted"]))
    eq((r["capacity"], r["inserted"], r["lost"]), (cap, n, 0),
       "capacity, inserted, lost")
    check(0 < r["live"] <= cap, "live %d, want 1..%d" % (r["live"], cap))
    eq(r["evicted"], n - r["live"], "evicted (inserted - live)")
    # The newest keys are the ones kept: the last call's key is there.
    eq(r["top"][0]["calls"], 1, "a key's calls")
    # The kernel's table is the capacity asked: its memory is bounded.
    maps = json.loads(sdstest.run_group(
        ["bpftool", "-j", "map", "show"], ctx.env, ctx.tmp, ctx.others).out)
    mine = [m for m in maps if m.get("name") == "sds_keys_0" and
            m.get("max_entries") == cap]
    check(mine, "no LRU table sds_keys_0 of %d entries in bpftool map show"
          % cap)


def zipf_stream(n_keys, n_calls, s, seed):
    weights = [1.0 / (k ** s) for k in range(1, n_keys + 1)]
    cum, t = [], 0.0
    for w in weights:
        t += w
        cum.append(t)
    rng = random.Random(seed)
    # Keys shuffled, so that rank is not the key's number.
    names = list(range(1, n_keys + 1))
    rng.shuffle(names)
    return [names[bisect.bisect_left(cum, rng.random() * t)]
            for _ in range(n_calls)]


@SUITE.test
def zipf(ctx):
    """The top 10 of a Zipf(1.1) stream, exact, through 4,096 slots."""
    stream = zipf_stream(100000, 200000, 1.1, 34)
    want = collections.Counter(stream).most_common()
    # Ties at the 10th place would make the top 10 ambiguous.
    check(want[9][1] > want[10][1], "the stream's 10th and 11th tie")
    path = os.path.join(ctx.tmp, "zipf.bin")
    with open(path, "wb") as f:
        f.write(struct.pack("<%dq" % len(stream), *stream))
    ctx.attach(["z=handle_zipf:key=arg1:site=nop5"],
               {"z": {"key_capacity": 4096}})
    ctx.run_target("file", path)
    r = ctx.keys("z", 10)
    got = [(int(e["key"]), e["calls"]) for e in r["top"]]
    eq(got, want[:10], "top 10 (key, calls)")
    eq(r["evicted"], r["inserted"] - r["live"], "evicted")
    check(r["live"] <= 4096, "live %d over the capacity" % r["live"])


class Closing:
    """@x.close() at the test's cleanup (ctx.loaders' cleanup())."""

    def __init__(self, x):
        self.x = x

    def cleanup(self):
        self.x.close()


@SUITE.test
def heartbeat(ctx):
    """The period's heaviest keys in the heartbeat the loader posts."""
    posts = []

    def answer(doc):
        posts.append(doc)
        return NOTHING_NEW
    token = "t0k-of.the_keys_suite"
    adm = FakeAdmin(answer, token=token)
    ctx.loaders.append(Closing(adm))
    tok = sdstest.write_token(os.path.join(ctx.tmp, "token"), token)
    ctx.attach(["u=handle:key=arg1:err=neg:site=nop5"],
               extra=["--admin", adm.url, "--token-file", tok])
    # 5.0-5.5 s into a period: the calls end before 6.5 s, and the
    # period's close (a tick or two past its end) reads a window that
    # holds them all.
    while not 5.0 <= time.time() % 10 < 5.5:
        time.sleep(0.05)
    start = int(time.time()) // 10 * 10
    ctx.run_target("users", 1, "int")
    check(time.time() < start + 7, "the calls ran past 7 s into the period")
    deadline = time.monotonic() + 25
    doc = None
    while doc is None:
        check(time.monotonic() < deadline, "no heartbeat of period %d" % start)
        time.sleep(0.2)
        with adm.lock:
            doc = next((d for d in posts if d["period_start"] == start), None)
    p = doc["points"]["u"]
    eq(p["visits"], (USERS - 1) * RATE + HOT_RATE, "the period's visits")
    keys = p.get("keys")
    check(keys and len(keys) == 10, "keys %r, want 10" % keys)
    # Every call of these keys was made (and ended) in this period: each
    # one's p99 of the period is that of its whole histogram, as `stats
    # --keys` has it (after the period no call came), a log2 bucket's top.
    table = {e["key"]: e for e in ctx.keys("u")["top"]}
    p99 = [k.get("p99_ns") for k in keys]
    check(all(x and (x + 1) & x == 0 for x in p99),
          "p99_ns %r: not each a log2 bucket's upper end" % p99)
    eq(p99, [table[k["key"]]["p99_ns"] for k in keys], "the keys' p99 of the period")
    eq(dict(keys[0], p99_ns=0), {"key": "7", "kind": "int", "calls": HOT_RATE,
                                 "exceptions": 0, "downgrades": 0, "p99_ns": 0},
       "the heaviest key")
    for k in keys[1:]:
        u = int(k["key"])
        eq((k["kind"], k["calls"], k["exceptions"], k["downgrades"]),
           ("int", RATE, RATE if u % 10 == 0 else 0, 0), "key %s" % u)


def ctl(ctx, line):
    """One request line to the loader's control socket: its reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sdstest.sock_path(ctx.run_dir, "default", "keys"))
    s.sendall(line.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()
    return json.loads(buf)


@SUITE.test
def blocked_key(ctx):
    """A blocked key's calls fail fast; the other keys' do not."""
    ctx.attach(["ff=handle_ff:key=arg1:failfast=connect:site=nop5"])
    eq(ctl(ctx, "keys-block ff 30 2"),
       {"point": "ff", "key": "2", "seconds": 30}, "keys-block")
    eq(ctx.run_target("block"), "key1 failed 0\nkey2 failed 10\ndone\n",
       "connects failed by key")
    r = ctx.keys("ff")
    got = {e["key"]: (e["calls"], e["downgrades"]) for e in r["top"]}
    eq((r["blocked"], got), (1, {"1": (1, 0), "2": (1, 1)}),
       "blocked, (calls, downgrades) by key")
    eq(ctx.point("ff")["failfast"]["denied"], 10, "failfast denied")
    eq(ctl(ctx, "keys-block ff 0 2")["seconds"], 0, "unblock")
    eq(ctx.run_target("block"), "key1 failed 0\nkey2 failed 0\ndone\n",
       "connects failed once unblocked")
    # Not a key of the point, not a failfast point: refused.
    eq(ctl(ctx, "keys-block ff 30 x"),
       {"error": "keys-block: 'x' is not a key of the point"}, "a bad key")


BAD_KEYS = [
    ("key=arg0", "key=arg0: argument numbers are 1..6 (x86-64 passes only "
     "the first six integer arguments in registers)"),
    ("key=arg7", "key=arg7: argument numbers are 1..6 (x86-64 passes only "
     "the first six integer arguments in registers)"),
    ("key=buf1,len7", "key=buf1,len7: argument numbers are 1..6 (x86-64 "
     "passes only the first six integer arguments in registers)"),
    ("key=str1,65", "key=str1,65: a key's length is 1..64 bytes, not 65"),
    ("key=buf1,100", "key=buf1,100: a key's length is 1..64 bytes, not 100"),
    ("key=str1,buf2", "key=str1,buf2: one key a point, not both str and buf"),
    ("key=buf1,str2", "key=buf1,str2: one key a point, not both buf and str"),
    ("key=buf1", "key=buf1: bufN needs its length: bufN,lenM (the M-th "
     "argument) or bufN,LEN (bytes)"),
    ("key=buf2,len2", "key=buf2,len2: the bytes and their length are two "
     "different arguments"),
    ("key=arg1,8", "key=arg1,8: an integer key is its argument's 8 bytes: "
     "argN takes no length"),
    ("key=user", "key= takes argN, strN[,MAX], bufN,lenM or bufN,LEN (N, M: "
     "argument numbers 1..6; MAX, LEN: bytes 1..64)"),
]


@SUITE.test
def bad_key(ctx):
    """Each malformed :key= is one line and exit 1; nothing attached."""
    for opt, msg in BAD_KEYS:
        spec = "u=handle:%s" % opt
        r = ctx.sds(["attach", "--app", "keys", ctx.target, spec])
        eq((r.rc, r.out, r.err),
           (1, "", "sds-bpf: bad point '%s': %s\n" % (spec, msg)), spec)
    eq(sdstest.pins_under([ctx.pin_root]), set(), "pins left")


@SUITE.test
def bad_capacity(ctx):
    """key_capacity 0, over 65,536, or on a point with no key: refused."""
    cases = [
        ({"key_capacity": 0}, "u=handle:key=arg1",
         "point 'u': key_capacity must be an integer 1..65536"),
        ({"key_capacity": 65537}, "u=handle:key=arg1",
         "point 'u': key_capacity must be an integer 1..65536"),
        ({"key_capacity": -1}, "u=handle:key=arg1",
         "point 'u': key_capacity must be an integer 1..65536"),
        ({"key_capacity": 100}, "u=handle",
         "point 'u': key_capacity needs a keyed point (:key=argN, strN or "
         "bufN,lenM; docs/KEYS.md): this one has no key"),
    ]
    for st, spec, msg in cases:
        path = ctx.strategies({"u": st})
        r = ctx.sds(["attach", "--app", "keys", "--strategies", path,
                     ctx.target, spec])
        want = "%s: %s" % (path, msg)
        eq((r.rc, r.out, r.err), (1, "", "sds-bpf: %s\n" % want),
           "%s with %r" % (spec, st))
    eq(sdstest.pins_under([ctx.pin_root]), set(), "pins left")


@SUITE.test
def bad_reload(ctx):
    """A reload with a bad key_capacity keeps the strategies in force."""
    a = ctx.attach(["u=handle:key=arg1:site=nop5"], {"u": {"key_capacity": 64}})
    eq(ctx.keys("u")["capacity"], 64, "capacity")
    path = ctx.strategies({"u": {"key_capacity": 0}}, version=2)
    os.kill(a.pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    while "key_capacity" not in a.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    check("point 'u': key_capacity must be an integer 1..65536" in a.stderr(),
          "reload: stderr %r" % a.stderr())
    eq(ctx.keys("u")["capacity"], 64, "capacity after the refused reload")
    # A good one resizes the table.
    ctx.strategies({"u": {"key_capacity": 128}}, version=3)
    os.kill(a.pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    while ctx.keys("u")["capacity"] != 128:
        check(time.monotonic() < deadline, "capacity never 128")
        time.sleep(0.05)
    check(path, "")


# Key limits wired into the tick (limits.py).
import limits  # noqa: E402
limits.add(SUITE)
# One tenant capped from the console: a real sds-admin (admin_cap.py).
import admin_cap  # noqa: E402
admin_cap.add(SUITE)


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx,
                               needs=(SDS, KEYTARGET, KEYGUARD)))
