# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A loop no client can stall, and what one user may hold (issue 8;
loader/serve/conn.c, loader/serve/session.c, docs/PROTOCOL.md "Limits").

The loader runs as root with --socket-mode 0666 and attaches to a staged
copy of build/test/hostile/loop_victim (its TARGET): the hostile clients
run as nobody, the victims as root, and every victim is a loop_victim so
that the register checks of the loader let it in however it runs.  The
victim's `watch` mode makes guarded calls under a kill switch and reads
the tick from the region's header itself.
"""

import json
import os
import select
import subprocess
import sys
import threading
import time

import hostile_lib
from hostile_lib import test
import sdstest
from sdstest import Fail, check, eq, log

APP = "loop"
KILL = {"order": {"visit_threshold": 0}}

# Per-user caps of loader/serve/serve.h (docs/PROTOCOL.md, "Limits").
PENDING_PER_UID = 8
SESSIONS_PER_UID = 16
POINTS_PER_UID = 64


Loader = sdstest.AttachProcess


def start(ctx, points):
    """A root loader for the staged loop_victim with strategies @points;
    (the staged victim, the socket)."""
    target = ctx.hostile("loop_victim")
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump({"version": 1, "points": points}, f)
    l = Loader(ctx, ["--app", APP, "--socket-mode", "0666",
                     "--strategies", spath, target], APP)
    return target, l.sock


query = hostile_lib.query


def refused(sock):
    return query(sock)[0]["refused"]


def point_of(sock, name):
    return sdstest.get_point(query(sock)[0], name)


class StatsWatch:
    """Ask `stats` as root every @every s in a thread: the slowest answer."""

    def __init__(self, sock, every=0.2):
        self.sock = sock
        self.every = every
        self.worst = 0.0
        self.count = 0
        self.error = None
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            try:
                _, dt = query(self.sock, timeout=5.0)
                self.worst = max(self.worst, dt)
                self.count += 1
            except Fail as e:
                self.error = str(e)
                return
            self.stop.wait(self.every)

    def end(self, what):
        self.stop.set()
        self.t.join(10)
        check(self.error is None, "%s: stats failed: %s" % (what, self.error))
        check(self.count > 0, "%s: no stats answered" % what)
        log("%s: %d stats, slowest %.3f s" % (what, self.count, self.worst))
        check(self.worst < 1.0, "%s: stats took %.3f s (want < 1 s)"
              % (what, self.worst))


def script(ctx, name, text):
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def run_out(ctx, argv, nobody, timeout):
    """Start @argv; returns a function that waits for it: its stdout."""
    p = ctx.spawn(argv, nobody=nobody, stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE)

    def wait():
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Fail("%s did not end within %d s" % (argv, timeout))
        check(p.returncode == 0, "%s: exit %s, stderr %r"
              % (argv, p.returncode, err.decode(errors="replace")))
        return out.decode()
    return wait


def watch(ctx, target, sock, secs, period_ms=10):
    """A root victim under the kill switch of 'order' that also reads the
    tick's age from the header (loop_victim watch)."""
    return run_out(ctx, [target, "watch", sock, "default", APP, "order",
                         str(secs), str(period_ms)], False, secs + 30)


def check_watch(out, sock, what):
    """Every call downgraded, exactly counted; the tick never old."""
    r = sdstest_kv(out)
    log("%s: victim %r" % (what, r))
    check(r["calls"] >= 50, "%s: victim made %d calls" % (what, r["calls"]))
    eq(r["passed"], 0, "%s: victim calls that passed the kill switch" % what)
    eq(r["downgraded"], r["calls"], "%s: victim calls downgraded" % what)
    check(r["max_age_us"] < 200000, "%s: the header's tick was %.1f ms old "
          "(want < 200 ms)" % (what, r["max_age_us"] / 1e3))
    p = point_of(sock, "order")
    eq(p["total"]["visits"], r["calls"], "%s: visits of 'order' in stats" % what)
    eq(p["total"]["downgrades"], r["calls"],
       "%s: downgrades of 'order' in stats" % what)
    return r


def sdstest_kv(out):
    line = out.strip().splitlines()[-1] if out.strip() else ""
    f = line.split()
    check(len(f) >= 2 and len(f) % 2 == 0 and f[0] != "error",
          "not key-value pairs: %r" % out)
    return {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}


TRICKLE = r'''
import select, socket, sys, time
sock, secs, iv = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
end = time.monotonic() + secs
conns = data = 0
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    conns += 1
    while True:
        try:
            s.send(b"s")
        except OSError:
            break
        # the loader hangs up on us: EOF (or a reset)
        wait = iv if time.monotonic() < end else 5.0
        r, _, _ = select.select([s], [], [], wait)
        if r:
            try:
                d = s.recv(4096)
            except OSError:
                d = b""
            data += len(d)
            if not d:
                break
        elif time.monotonic() >= end + 4:
            break
    s.close()
print("connections %d data %d" % (conns, data))
'''


@test
def loop_trickle_clients(ctx):
    """Five clients as nobody send one byte every 1.5 s for 10 s (and
    reconnect when dropped): stats answered within 1 s throughout, a root
    victim's kill-switch point downgrades every call, the header's tick
    is never 200 ms old, and every trickling connection is dropped at its
    deadline and counted in refused.slow."""
    target, sock = start(ctx, KILL)
    path = script(ctx, "trickle.py", TRICKLE)
    clients = [run_out(ctx, [sys.executable, path, sock, "10", "1.5"],
                       True, 40) for _ in range(5)]
    time.sleep(0.5)
    sw = StatsWatch(sock)
    victim = watch(ctx, target, sock, 9)
    out = victim()
    sw.end("trickle")
    conns = 0
    for c in clients:
        r = sdstest_kv(c())
        eq(r["data"], 0, "bytes the loader sent a trickling client")
        check(r["connections"] >= 4, "a trickling client made %d "
              "connections in 10 s (want >= 4: one per 2-s deadline)"
              % r["connections"])
        conns += r["connections"]
    check_watch(out, sock, "trickle")
    rf = refused(sock)
    eq(rf["slow"], conns, "refused.slow (every trickling connection)")
    eq(rf["connections"], 0, "refused.connections")


SLOW_READER = r'''
import select, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"stats\n")
t0 = time.monotonic()
p = select.poll()
p.register(s, select.POLLRDHUP)
# never read: wait for the loader to hang up
ev = p.poll(8000)
dt = time.monotonic() - t0
n = 0
s.setblocking(False)
while True:
    try:
        d = s.recv(65536)
    except OSError:
        break
    if not d:
        break
    n += len(d)
print("dropped %d ms %d bytes %d" % (1 if ev else 0, int(dt * 1000), n))
'''


@test
def loop_slow_reader(ctx):
    """A client as nobody asks for `stats` (255 points: more than the
    connection's send buffer) and never reads: dropped within its 2-s
    deadline with the reply cut short; a registered process as nobody that
    sends `point` lines without reading the replies: dropped too.
    refused.slow is 2, and stats and the tick stay on time throughout."""
    pts = dict(KILL)
    for i in range(254):
        pts["p%03d" % i] = {"visit_threshold": 1000000}
    target, sock = start(ctx, pts)
    full = len(json.dumps(query(sock)[0], separators=(",", ":")))
    path = script(ctx, "slow_reader.py", SLOW_READER)
    sw = StatsWatch(sock)
    victim = watch(ctx, target, sock, 5)
    reader = run_out(ctx, [sys.executable, path, sock], True, 30)
    pipe = run_out(ctx, [target, "pipeline", sock, "100000"], True, 30)
    r = sdstest_kv(reader())
    log("slow reader: %r (a whole stats is %d bytes)" % (r, full))
    eq(r["dropped"], 1, "the slow reader was dropped")
    check(1500 <= r["ms"] <= 3500, "the slow reader was dropped after %d ms "
          "(want the 2-s deadline)" % r["ms"])
    check(r["bytes"] < full, "the slow reader got %d bytes of a %d-byte "
          "reply: it was not slow" % (r["bytes"], full))
    eq(sdstest_kv(pipe())["dropped"], 1,
       "the session that does not read its replies was dropped")
    out = victim()
    sw.end("slow readers")
    check_watch(out, sock, "slow readers")
    rf = refused(sock)
    eq(rf["slow"], 2, "refused.slow")
    eq(rf["connections"] + rf["sessions"] + rf["points"], 0,
       "refused connections + sessions + points")


def readline(p, timeout):
    r, _, _ = select.select([p.stdout], [], [], timeout)
    check(r, "no line from pid %d within %.0f s" % (p.pid, timeout))
    return p.stdout.readline().decode().strip()


@test
def loop_idle_registrations(ctx):
    """100 processes as nobody register and stay idle: 16 get a session,
    84 are refused (one-line error, refused.sessions 84); a root process
    started afterwards is registered and its kill-switch calls are all
    downgraded."""
    target, sock = start(ctx, KILL)
    ok = bad = 0
    for i in range(100):
        p = ctx.spawn([target, "idle", sock], nobody=True,
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = readline(p, 10)
        if line.startswith("registered"):
            ok += 1
        else:
            check("processes registered already" in line,
                  "registration %d: %r" % (i, line))
            bad += 1
    eq(ok, SESSIONS_PER_UID, "idle registrations of nobody that got a session")
    eq(bad, 100 - SESSIONS_PER_UID, "idle registrations of nobody refused")
    out = watch(ctx, target, sock, 2)()
    check_watch(out, sock, "100 idle registrations")
    rf = refused(sock)
    eq(rf["sessions"], 100 - SESSIONS_PER_UID, "refused.sessions")
    eq(rf["slow"] + rf["connections"], 0, "refused.slow + refused.connections")


FLOOD = r'''
import select, socket, sys, time
n = int(sys.argv[2])
conns = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    conns.append(s)
time.sleep(0.5)
refused, pending = 0, []
for s in conns:
    s.setblocking(False)
    try:
        d = s.recv(4096)
    except BlockingIOError:
        pending.append(s)
        continue
    if b"too many connections" in d:
        refused += 1
print("refused %d pending %d" % (refused, len(pending)), flush=True)
dropped = 0
end = time.monotonic() + 5
for s in pending:
    r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
    if r and not s.recv(4096):
        dropped += 1
print("dropped %d" % dropped)
'''


@test
def loop_connection_flood(ctx):
    """nobody opens 40 connections and sends nothing: 8 are held (its
    per-uid cap), 32 refused with a one-line error (refused.connections
    32); root's stats is answered within 1 s meanwhile; the 8 are dropped
    at their deadline (refused.slow 8)."""
    target, sock = start(ctx, KILL)
    path = script(ctx, "flood.py", FLOOD)
    p = ctx.spawn([sys.executable, path, sock, "40"], nobody=True,
                  stdout=subprocess.PIPE)
    first = readline(p, 10).split()
    eq(first[:4], ["refused", str(40 - PENDING_PER_UID), "pending",
                   str(PENDING_PER_UID)], "the flood's connections")
    st, dt = query(sock)
    check(dt < 1.0, "stats during the flood took %.3f s" % dt)
    eq(st["refused"]["connections"], 40 - PENDING_PER_UID,
       "refused.connections during the flood")
    eq(readline(p, 10), "dropped %d" % PENDING_PER_UID,
       "the flood's held connections dropped at their deadline")
    rf = refused(sock)
    eq(rf["slow"], PENDING_PER_UID, "refused.slow")
    eq(rf["connections"], 40 - PENDING_PER_UID, "refused.connections")


@test
def loop_point_exhaustion(ctx):
    """nobody asks for 70 new points: 64 get ids, 6 an error
    (refused.points 6); asking again for points that exist costs nothing;
    a root process's new point still gets an id."""
    target, sock = start(ctx, KILL)
    n = POINTS_PER_UID + 6

    def points(prefix, k, nobody):
        return sdstest_kv(run_out(ctx, [target, "points", sock, prefix,
                                        str(k)], nobody, 30)())
    eq(points("nb", n, True), {"ids": POINTS_PER_UID, "errors": 6},
       "nobody's %d new points" % n)
    eq(points("nb", 10, True), {"ids": 10, "errors": 0},
       "nobody asking again for 10 points it created")
    eq(points("order", 1, True), {"ids": 0, "errors": 1},
       "nobody asking for 'order0', new")
    eq(points("root", 3, False), {"ids": 3, "errors": 0},
       "root's 3 new points")
    eq(refused(sock)["points"], 7, "refused.points")
    names = [p["name"] for p in query(sock)[0]["points"]]
    eq(len(names), 1 + POINTS_PER_UID + 3, "points in stats")
