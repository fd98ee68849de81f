# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
libsds under attack (issue 8, docs/TRUST.md "libsds"): leaked guard
frames heal, a child forked while the parent's probes were optimized
survives their removal, and libsds trusts only a loader of root (or
$SDS_LOADER_UID).  The victim is tests/targets/guarded.c (guarded_static,
staged: the loader's TARGET).
"""

import json
import os
import subprocess
import time

from hostile_lib import test
import sdstest
from sdstest import BUILD, NOBODY, SDS, Fail, check, get_point, log
from guarded import Target

TT = os.path.join(BUILD, "test", "targets")
NOP5 = "0f1f440000"             # the sites' NOP (libsds/sites.S)
UNOPT = "cc1f440000"            # int3 + the NOP's tail: an unoptimized probe


def _strategies(ctx, doc):
    path = os.path.join(ctx.tmp, "strategies.json")
    with open(path + ".new", "w") as f:
        json.dump(doc, f)
    os.rename(path + ".new", path)
    return path


def _stats(ctx, app):
    r = sdstest.run_group([SDS, "stats", "--app", app, "--json"], ctx.env,
                          ctx.tmp, ctx.others, 30)
    check(r.rc == 0, "stats: %r" % r)
    return json.loads(r.out)


def _wait_version(ctx, app, version, timeout=3.0):
    deadline = time.monotonic() + timeout
    while True:
        st = _stats(ctx, app)
        if st.get("strategies_version") == version:
            return
        if time.monotonic() > deadline:
            raise Fail("strategies_version %r, want %d"
                       % (st.get("strategies_version"), version))
        time.sleep(0.05)


def _point(ctx, app, name, want, what):
    """Exact counters of @name: @want {visits, downgrades, completed,
    concurrency}; one retry 1.5 s later (stats reads per-CPU maps)."""
    for attempt in range(2):
        p = get_point(_stats(ctx, app), name)
        got = {"visits": p.get("total", {}).get("visits"),
               "downgrades": p.get("total", {}).get("downgrades"),
               "completed": p.get("latency_ns", {}).get("count"),
               "concurrency": p.get("concurrency")}
        if got == want:
            return p
        if attempt == 0:
            time.sleep(1.5)
    raise Fail("%s: point %s has %r, want %r (%s)"
               % (what, name, got, want, json.dumps(p)))


_Loader = sdstest.AttachProcess


def _loader(ctx, path, doc, app="app"):
    spath = _strategies(ctx, doc)
    return _Loader(ctx, ["--app", app, "--strategies", spath, path], app)


OFF = {"visit_threshold": 1000000}    # named, never trips
KILL = {"visit_threshold": 0}         # the kill switch


@test
def libsds_leaked_frames_heal(ctx):
    """64 guarded calls that never end, then a kill switch: the next call
    is downgraded (not passed untracked), and the in-flight gauge counts
    exactly the leaked calls libsds still holds: 64, then 63 once one is
    evicted, then 0 once all are."""
    path = ctx.stage(os.path.join(TT, "guarded_static"))
    _loader(ctx, path, {"version": 1, "points": {"order": OFF}})
    t = Target(ctx, path)
    t.open("app")
    want = {"visits": 0, "downgrades": 0, "completed": 0, "concurrency": 0}
    r = t.call("order", 1)
    check(r["passed"] == 1, "first call: %r" % r)
    want.update(visits=1, completed=1)
    r = t.leak("order", 64)
    check(r == {"passed": 64, "downgraded": 0}, "64 leaked calls: %r" % r)
    want.update(visits=65, concurrency=64)
    _point(ctx, "app", "order", want, "64 calls leaked their frames")

    _strategies(ctx, {"version": 2, "points": {"order": KILL}})
    _wait_version(ctx, "app", 2)
    r = t.call("order", 1)
    check(r["downgraded"] == 1, "the call after 64 leaked frames under a "
          "kill switch: %r, want downgraded (the thread is unguarded)" % r)
    # It evicted the oldest leaked frame, in libsds and in BPF alike.
    want.update(visits=66, downgrades=1, concurrency=63)
    _point(ctx, "app", "order", want, "one leaked frame evicted")
    # 64 downgraded calls that leak too: the second to the 64th each
    # evict one of the 63 leaked calls that passed.
    r = t.leak("order", 64)
    check(r == {"passed": 0, "downgraded": 64}, "leak under the kill "
          "switch: %r" % r)
    want.update(visits=130, downgrades=65, concurrency=0)
    _point(ctx, "app", "order", want, "every leaked call evicted")

    _strategies(ctx, {"version": 3, "points": {"order": OFF}})
    _wait_version(ctx, "app", 3)
    r = t.call("order", 10)
    check(r["passed"] == 10, "after the kill switch: %r" % r)
    want.update(visits=140, completed=11)
    _point(ctx, "app", "order", want, "calls on a stack full of leaked "
           "downgraded frames")


def _optimized_parent(ctx):
    """A loader on a staged guarded_static and the target, whose sites
    enter, exit and downgrade have been hit (optimized on Linux >= 6.18)."""
    path = ctx.stage(os.path.join(TT, "guarded_static"))
    l = _loader(ctx, path, {"version": 1, "points": {"order": OFF}})
    t = Target(ctx, path)
    t.open("app")
    r = t.call("order", 20)
    check(r["passed"] == 20, "parent: %r" % r)
    _strategies(ctx, {"version": 2, "points": {"order": KILL}})
    _wait_version(ctx, "app", 2)
    r = t.call("order", 20)
    check(r["downgraded"] == 20, "parent under the kill switch: %r" % r)
    s = t.sites()
    log("parent's sites: %r" % s)
    for k in ("enter", "exit", "downgrade"):
        check(s[k][:2] in ("e8", "cc"), "parent's %s site %s: neither "
              "an optimized (e8) nor an int3 probe" % (k, s[k]))
    return l, t, s


@test
def libsds_fork_then_probes_removed(ctx):
    """A child forked while the parent's probes were optimized, the loader
    exits before the child's next guarded call: every site of the child
    reads the NOP again (not 0f + the call's rel32) and its calls return."""
    l, t, ps = _optimized_parent(ctx)
    t.fork_pause()
    time.sleep(0.3)     # the child repairs and re-registers meanwhile
    l.end()             # SIGINT: the probes are removed
    check(l.p.poll() is not None, "the loader did not exit")
    sites, r = t.fork_resume("order", 10)
    log("child's sites after the probes went: %r" % sites)
    for k, v in sites.items():
        check(v == NOP5, "child's %s site reads %s after the probes were "
              "removed, want %s (the parent's read %s at fork)"
              % (k, v, NOP5, ps[k]))
    check(r == {"passed": 10, "downgraded": 0, "failed": 0},
          "child's calls with no loader: %r" % r)
    check(t.sites() == {k: NOP5 for k in sites}, "parent's sites: %r"
          % t.sites())


@test
def libsds_fork_repair_without_proc_mem(ctx):
    """pwrite to /proc/self/mem fails (seccomp): the child repairs its
    sites with mprotect instead and is guarded (kill switch: all its
    calls downgraded, counted by the loader)."""
    l, t, ps = _optimized_parent(ctx)
    check("e8" in [v[:2] for v in ps.values()],
          "no optimized site in the parent (%r): nothing to repair" % ps)
    t.seccomp("pwrite")
    t.fork_pause()
    time.sleep(0.5)     # the child re-registers
    sites, r = t.fork_resume("order", 10)
    log("child's sites: %r" % sites)
    for k in sites:
        check(sites[k] == UNOPT, "child's %s site %s before its first "
              "call, want %s (parent: %s)" % (k, sites[k], UNOPT, ps[k]))
    check(r == {"passed": 0, "downgraded": 10, "failed": 0},
          "child repaired by mprotect, under the kill switch: %r" % r)
    _point(ctx, "app", "order", {"visits": 50, "downgrades": 30,
                                 "completed": 20, "concurrency": 0},
           "parent's 40 calls and the child's 10")


@test
def libsds_fork_repair_impossible_disables_child(ctx):
    """Neither /proc/self/mem nor mprotect may write (seccomp): the child
    keeps the parent's calls at its sites, so its guards are off for good:
    it never registers, never calls a site, its calls pass (fail open),
    the loader counts none of them, and it exits 0."""
    l, t, ps = _optimized_parent(ctx)
    check("e8" in [v[:2] for v in ps.values()],
          "no optimized site in the parent (%r): nothing to repair" % ps)
    t.seccomp("pwrite", "mprotect_wx")
    t.fork_pause()
    # A child that registered would have by now: its own thread's time
    # to connect, then 3 of the loader's ticks, so the loader has served
    # whatever came meanwhile (it registers a client between ticks).
    time.sleep(1.5)
    sdstest.wait_ticks(lambda: _stats(ctx, "app"), 3)
    sites, r = t.fork_resume("order", 10)
    log("child's sites: %r" % sites)
    for k in ("enter", "exit", "downgrade"):
        check(sites[k] == ps[k], "child's %s site %s, want the parent's "
              "%s (nothing could write it)" % (k, sites[k], ps[k]))
    check(r == {"passed": 10, "downgraded": 0, "failed": 0},
          "child with unrepaired sites under the kill switch: %r, want "
          "all passed (detached)" % r)
    _point(ctx, "app", "order", {"visits": 40, "downgrades": 20,
                                 "completed": 20, "concurrency": 0},
           "the parent's 40 calls, none of the child's")


# A loader impostor: serves the app's socket as nobody, answers register
# with a region (layout 5, bpf/sds_flags.h) whose point 0 is downgraded,
# and logs what it was asked.
FAKE = r'''
import mmap, os, socket, sys, threading, time, struct
sock_path, log_path = sys.argv[1], sys.argv[2]
SIZE = (1 + 1024) * 128 + 1024 * 8256   # the entries, then the key tables
CELLS = (1024 + (64 * 1024 * 4 + 127) // 128) * 128
fd = os.memfd_create("sds-fake-region")
os.ftruncate(fd, SIZE)
cfd = os.memfd_create("sds-fake-cells")
os.ftruncate(cfd, CELLS)
m = mmap.mmap(fd, SIZE)
now = lambda: time.clock_gettime_ns(time.CLOCK_MONOTONIC)
m[0:40] = struct.pack("<IIIIQQQ", 0x53445346, 5, os.getpid(), 1, 1, now(),
                      100000000)
m[128:152] = struct.pack("<IIIIQ", 0, 1, 1, 100, now() + 3600 * 10**9)
def tick():
    while True:
        m[24:32] = struct.pack("<Q", now())
        time.sleep(0.1)
threading.Thread(target=tick, daemon=True).start()
log = open(log_path, "a", buffering=1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sock_path)
s.listen(16)
log.write("listening\n")
def serve(c):
    buf = b""
    while True:
        d = c.recv(512)
        if not d:
            return
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            log.write("request %s\n" % line.decode(errors="replace"))
            if line.startswith(b"register"):
                socket.send_fds(c, [b'{"slot": 0, "key": 1, "epoch": 1, '
                                    b'"layout": 5, "size": %d, '
                                    b'"cells_size": %d}\n' % (SIZE, CELLS)],
                                [fd, cfd])
            elif line.startswith(b"point"):
                c.sendall(b'{"id": 0}\n')
            else:
                c.sendall(b'{"error": "?"}\n')
while True:
    c, _ = s.accept()
    log.write("accepted\n")
    threading.Thread(target=serve, args=(c,), daemon=True).start()
'''


def _fake_loader(ctx):
    """The impostor's run dir, socket and log."""
    run = os.path.join(ctx.tmp, "fakerun")
    os.mkdir(run, 0o755)
    os.chown(run, NOBODY, NOBODY)
    script = os.path.join(ctx.tmp, "fake_loader.py")
    with open(script, "w") as f:
        f.write(FAKE)
    os.chmod(script, 0o644)
    logp = os.path.join(run, "fake.log")
    sock = os.path.join(run, "default.app.sock")
    ctx.spawn(["python3", script, sock, logp], nobody=True)
    deadline = time.monotonic() + 5
    while not (os.path.exists(logp) and "listening" in open(logp).read()):
        check(time.monotonic() < deadline, "the fake loader did not start")
        time.sleep(0.05)
    return run, logp


def _maps_memfd(pid):
    with open("/proc/%d/maps" % pid) as f:
        return [l for l in f if "sds-fake-region" in l]


def _fds_memfd(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if "sds-fake-region" in os.readlink("/proc/%d/fd/%s"
                                                % (pid, fd)):
                n += 1
        except OSError:
            pass
    return n


@test
def libsds_refuses_loader_of_other_uid(ctx):
    """A loader socket bound by nobody (a run dir it may write): a root
    process's libsds connects, sees SO_PEERCRED uid 65534 and sends
    nothing: no register, no fd taken, nothing mapped, every call passes.
    The control: the same process told SDS_LOADER_UID=65534 trusts the
    very same impostor (so the impostor works, and the check is what
    refuses it)."""
    run, logp = _fake_loader(ctx)
    path = ctx.stage(os.path.join(TT, "guarded_static"))
    env0 = ctx.env
    ctx.env = dict(env0, SDS_RUN_DIR=run)
    ctx.env.pop("SDS_LOADER_UID", None)
    t = Target(ctx, path)
    t.open("app")
    time.sleep(2.5)     # open, then the thread's look every second
    r = t.call("order", 20)
    lines = open(logp).read().splitlines()
    accepts = lines.count("accepted")
    reqs = [l for l in lines if l.startswith("request")]
    check(reqs == [], "libsds sent the impostor %r" % reqs)
    check(accepts >= 2, "libsds connected %d times to the impostor in "
          "2.5 s, want >= 2 (is the socket reachable?)" % accepts)
    check(r == {"passed": 20, "downgraded": 0, "failed": 0},
          "calls with an impostor loader of uid %d: %r" % (NOBODY, r))
    check(_maps_memfd(t.pid) == [] and _fds_memfd(t.pid) == 0,
          "the impostor's region in the victim: maps %r, %d fds"
          % (_maps_memfd(t.pid), _fds_memfd(t.pid)))
    t.cleanup()

    # The control: trusted by uid, the same impostor is obeyed.
    ctx.env = dict(env0, SDS_RUN_DIR=run, SDS_LOADER_UID=str(NOBODY))
    u = Target(ctx, path)
    u.open("app")
    r = u.call("order", 20)
    ctx.env = env0
    check(r == {"passed": 0, "downgraded": 20, "failed": 0},
          "control (SDS_LOADER_UID=%d): %r, want all downgraded by the "
          "impostor's region" % (NOBODY, r))
    check(len(_maps_memfd(u.pid)) == 1, "control: the region is not mapped")
    for bad in ("0x0", "65534x", "-1", "4294967295", ""):
        ctx.env = dict(env0, SDS_RUN_DIR=run, SDS_LOADER_UID=bad)
        v = Target(ctx, path)
        ctx.env = env0
        v.open("app")
        r = v.call("order", 5)
        check(r["passed"] == 5 and _maps_memfd(v.pid) == [],
              "SDS_LOADER_UID=%r (not a uid) trusted the impostor: %r"
              % (bad, r))
        v.cleanup()


@test
def libsds_bpf_stack_full_evicts(ctx):
    """BPF guard frames that leaked where libsds's did not (64 direct
    sds__site_enter): the next guarded call finds the BPF stack full,
    evicts the oldest and pairs with its own exit, so no call counts a
    leaked call's 50 ms as its latency (timeout_ms 20: 0 timeouts; without
    the eviction the first exit ended a leaked frame: 1); the gauge says
    63 in flight (64 leaked - 1 evicted; the other 9 calls found room),
    and 0 once the thread exits."""
    path = ctx.hostile("libsds_bpf_frames")
    _loader(ctx, path, {"version": 1, "points": {
        "order": {"visit_threshold": 1000000, "timeout_ms": 20}}})
    p = ctx.spawn([path, "default", "app", "order", "64", "10"],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = p.stdout.readline().decode().strip()
    check(out == "passed 10 downgraded 0", "libsds_bpf_frames: %r" % out)
    for attempt in range(2):
        pt = get_point(_stats(ctx, "app"), "order")
        got = (pt["total"]["visits"], pt["total"]["timeouts"],
               pt["latency_ns"]["count"], pt["concurrency"])
        if got == (74, 0, 10, 63):
            break
        time.sleep(1.5)
    check(got == (74, 0, 10, 63), "visits, timeouts, completed, in flight "
          "= %r, want (74, 0, 10, 63): %s" % (got, json.dumps(pt)))
    p.stdin.write(b"\n")
    p.stdin.flush()
    p.wait(5)
    _point(ctx, "app", "order", {"visits": 74, "downgrades": 0,
                                 "completed": 10, "concurrency": 0},
           "the leaking thread exited")
