#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Deploy tests (issue 11, "Deploys keep counting"; docs/DEPLOY.md): a
TARGET replaced by `mv` (a new inode at the path) while `sds-bpf attach`
serves it.  The processes of the old build and of the new one are both
counted exactly, under the same point ids; `events` shows the switch
with both build-ids; a vanished symbol, a file that is not ELF and a
symlink moved onto the name are events and the loader serves on; two
replacements in a row end on the last build; an old build's probes go
once no process maps it.

Run as root from anywhere (after `make deploy-bins`, which `make
deploy-tests` does):

    python3 tests/deploy/run.py [-v] [NAME-SUBSTRING...]

Each test stages the builds of build/test/deploy in its own temp dir
(own inodes, so no other test's probes reach them) and ends every
process it started, whatever happens; a KernelSnapshot checks that the
loader left no program and no pin behind.  The last line is "N passed,
M failed".  Python 3 standard library only.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, Fail, check, eq  # noqa: E402
from fake_admin import NOTHING_NEW, FakeAdmin  # noqa: E402

DEPLOY_BIN = os.path.join(BUILD, "test", "deploy")
GROUP = "deploytest"
SUITE = sdstest.Suite(timeout=120)
test = SUITE.test
# The loader checks old builds for processes every 2 s (WATCH_SCAN_NS).
RETIRE_WITHIN = 8.0
# The loader under test: SDS_DEPLOY_LOADER=build/test/sds-bpf-asan runs
# the suite under ASan/LSan/UBSan (finish() fails on their reports).
LOADER = os.path.abspath(os.environ.get("SDS_DEPLOY_LOADER") or SDS)


class Svc(sdstest.LineReader):
    """A running build of svc.c: "N" calls work() (and other()) N times."""

    def __init__(self, ctx, path):
        self.name = os.path.basename(path)
        self.p = ctx.spawn([path])
        self.buf = b""
        eq(self.readline(10), "ready", "%s start" % self.name)

    def calls(self, n):
        self.p.stdin.write(b"%d\n" % n)
        self.p.stdin.flush()
        eq(self.readline(60), "done", "%s after %d calls" % (self.name, n))

    def quit(self):
        self.p.stdin.close()
        self.p.wait(10)


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-deploy-")
        self.app = "svc%d" % os.getpid()
        self.dir = os.path.join(self.tmp, "app")
        os.mkdir(self.dir, 0o755)
        self.path = os.path.join(self.dir, "svc")
        self.kernel = sdstest.KernelSnapshot()
        self.loader = None

    def stage(self, build, name):
        """build/test/deploy/@build copied into the app dir as @name."""
        src = os.path.join(DEPLOY_BIN, build)
        check(os.path.exists(src), "%s missing: run make deploy-bins" % src)
        dst = os.path.join(self.dir, name)
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        return dst

    def spawn(self, argv):
        p = subprocess.Popen(argv, env=self.env, cwd=self.tmp,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             start_new_session=True)
        self.others.append(p)
        return p

    def attach(self, *points, opts=()):
        """`sds-bpf attach --group G --app A OPTS svc POINTS`, ready."""
        self.loader = sdstest.AttachProcess(
            self, ["--group", GROUP, "--app", self.app] + list(opts) +
            [self.path] + list(points), self.app, GROUP, binary=LOADER)
        return self.loader

    def sds(self, *args):
        return sdstest.run_group([SDS] + list(args), self.env, self.tmp,
                                 self.others)

    def stats(self):
        r = self.sds("stats", "--group", GROUP, "--app", self.app, "--json")
        check(r.rc == 0, "stats: %r" % r)
        return json.loads(r.out)

    def visits(self, point):
        return sdstest.get_point(self.stats(), point)["total"]["visits"]

    def events(self):
        """The deploy events kept, asked over the socket (`events`
        follows forever): {"reason": "deploy", ...} each."""
        s = socket.socket(socket.AF_UNIX)
        try:
            s.settimeout(10)
            s.connect(sdstest.sock_path(self.run_dir, GROUP, self.app))
            s.sendall(b"events 0\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            s.close()
        return [e for e in json.loads(data)["events"]
                if e.get("reason") == "deploy"]

    def finish(self):
        """The end of a test that passed so far: SIGINT the loader, which
        must exit 0 without a sanitizer's report (SDS_DEPLOY_LOADER may
        name build/test/sds-bpf-asan), and check that what it held in the
        kernel is gone: its programs (by id, taken while it ran: other
        suites on the machine load and pin their own meanwhile) and any
        pin naming this test's app.  cleanup() ends everything in any
        case, and raises nothing."""
        pid = self.loader.pid
        held = {i for i, p in sdstest.sds_progs().items() if pid in p}
        # SIGINT, and time to end: a loaded machine, or the ASan build's
        # leak check at exit, take seconds (cleanup() kills it if not).
        os.kill(pid, signal.SIGINT)
        try:
            self.loader.p.wait(30)
        except subprocess.TimeoutExpired:
            raise Fail("the loader did not end within 30 s of SIGINT")
        err = self.loader.stderr()
        eq(self.loader.p.returncode, 0, "the loader's exit status (stderr: %s)"
           % err[-2000:])
        check("Sanitizer" not in err and "runtime error" not in err,
              "the sanitizers reported: %s" % err[-4000:])
        self.nothing_left(held)

    def nothing_left(self, held, timeout=5.0):
        check(held, "the loader held no sds_* program (bpftool prog show?)")
        deadline = time.monotonic() + timeout
        while True:
            progs = sorted(held & set(sdstest.sds_progs()))
            pins = sorted(p for p in sdstest.pins_under(self.kernel.roots)
                          - self.kernel.pins if self.app in p)
            if not progs and not pins:
                return
            if time.monotonic() > deadline:
                raise Fail("the deploy loader left in the kernel: programs "
                           "%s, pins %s" % (progs, pins))
            time.sleep(0.2)


def build_id(path):
    """The GNU build-id readelf shows for @path."""
    r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    check(r.returncode == 0, "readelf -n %s: %s" % (path, r.stderr.strip()))
    for line in r.stdout.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    raise Fail("%s has no build-id" % path)


def wait_for(fn, what, timeout=20.0):
    """Poll @fn until it returns a true value, which is returned."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.1)
    raise Fail("%s: not within %.0f s (last: %r)" % (what, timeout, last))


def folded(ctx, sec):
    """The loader's stats once it has folded second @sec (Unix) of every
    point into its totals: stats' folded_through."""
    return wait_for(lambda: (lambda st: st if (st.get("folded_through") or 0)
                             >= sec else None)(ctx.stats()),
                    "the loader folded second %d" % sec)


def exact(ctx, point, want):
    """@point's total visits reach @want and stay there once the seconds
    of those calls are folded into the totals (1-2 s on: a tick folds its
    second - 2)."""
    wait_for(lambda: ctx.visits(point) == want or None,
             "point %s at %d visits (has %d)" % (point, want,
                                                 ctx.visits(point)))
    st = folded(ctx, int(time.time()))     # every call counted is before
    eq(sdstest.get_point(st, point)["total"]["visits"], want,
       "point %s's visits once their seconds were folded" % point)


def deployed(ctx, n):
    """stats says @n deploys were followed: its builds object."""
    return wait_for(lambda: (ctx.stats()["builds"]["deploys"] == n and
                             ctx.stats()["builds"]),
                    "%d deploys followed" % n)


def replace(ctx, build):
    """`mv svc.new svc` with @build staged as svc.new: its path."""
    new = ctx.stage(build, "svc.new")
    os.rename(new, ctx.path)
    return ctx.path


@test
def test_old_and_new_build_counted(ctx):
    """attach ./svc w=work; 1,000 calls; mv svc.new svc (work at another
    offset); the old process's and the new one's calls both counted."""
    old_id, new_id = build_id(os.path.join(DEPLOY_BIN, "svc")), \
        build_id(os.path.join(DEPLOY_BIN, "svc.v1"))
    check(old_id != new_id, "the two builds have one build-id")
    check(sdstest.symbol_file_offset(os.path.join(DEPLOY_BIN, "svc"), "work") !=
          sdstest.symbol_file_offset(os.path.join(DEPLOY_BIN, "svc.v1"), "work"),
          "work() has one offset in both builds: the test proves nothing")
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    old = Svc(ctx, ctx.path)
    old.calls(1000)
    exact(ctx, "w", 1000)
    b = ctx.stats()["builds"]
    eq(b["current"], old_id, "build before the deploy")
    eq(b["deploys"], 0, "deploys before")

    replace(ctx, "svc.v1")
    b = deployed(ctx, 1)
    eq(b["current"], new_id, "current build after mv")
    eq(sorted((x["build_id"], x["current"], x["points"]) for x in b["list"]),
       sorted([(old_id, False, 1), (new_id, True, 1)]), "builds list")
    eq(sdstest.get_point(ctx.stats(), "w")["offset"],
       sdstest.symbol_file_offset(ctx.path, "work"), "w's offset: the new build's")

    old.calls(300)                      # the old inode, still running
    new = Svc(ctx, ctx.path)            # the new inode
    new.calls(700)
    exact(ctx, "w", 2000)

    evs = [e for e in ctx.events() if e["event"] == "build"]
    eq(len(evs), 1, "build events")
    eq((evs[0]["old_build"], evs[0]["new_build"]), (old_id, new_id),
       "the build event's build-ids")
    check("1 of 1 points attached" in evs[0]["detail"], evs[0]["detail"])
    # The text form says old -> new too.
    r = ctx.sds("events", "--group", GROUP, "--app", ctx.app, "--count", "1")
    check(r.rc == 0 and "%s -> %s" % (old_id, new_id) in r.out,
          "events text: %r" % r)
    r = ctx.sds("stats", "--group", GROUP, "--app", ctx.app)
    check(r.rc == 0 and "builds: %s (current, 1 points), %s (old, 1 points); "
          "1 deploys followed" % (new_id[:12], old_id[:12]) in r.out,
          "stats text: %r" % r)

    # The old process ends: its build's probes go, its counts stay.
    old.quit()
    wait_for(lambda: len(ctx.stats()["builds"]["list"]) == 1,
             "old build detached", RETIRE_WITHIN)
    ret = [e for e in ctx.events() if e["event"] == "retired"]
    eq([e["old_build"] for e in ret], [old_id], "retired event")
    new.calls(5)
    exact(ctx, "w", 2005)
    ctx.finish()


@test
def test_deploy_then_kill9(ctx):
    """Crash-only after a deploy: the pins and the kept TARGET follow the
    current build, so a loader killed (-9) after `mv svc.new svc` is
    adopted by the next attach on the new inode: nothing the new build's
    process calls is lost, before or after the crash."""
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    old = Svc(ctx, ctx.path)
    old.calls(100)
    exact(ctx, "w", 100)
    replace(ctx, "svc.v1")
    deployed(ctx, 1)
    new = Svc(ctx, ctx.path)
    new.calls(500)
    exact(ctx, "w", 600)
    old.quit()
    os.kill(ctx.loader.pid, signal.SIGKILL)
    ctx.loader.p.wait(10)
    new.calls(50)                       # while no loader runs: still counted
    ctx.attach("w=work")
    check("adopted the pins" in wait_for(
        lambda: "adopted the pins" in ctx.loader.stderr() and
        ctx.loader.stderr(), "the adoption line"),
        "the new loader's stderr: %r" % ctx.loader.stderr())
    new.calls(200)
    exact(ctx, "w", 850)
    new.quit()
    ctx.finish()


@test
def test_vanished_symbol(ctx):
    """The new build lacks other(): point o is an event, w follows, the
    loader serves on; o keeps its count, w counts the new build."""
    ctx.stage("svc", "svc")
    ctx.attach("w=work", "o=other")
    first = Svc(ctx, ctx.path)
    first.calls(500)
    exact(ctx, "w", 500)
    exact(ctx, "o", 500)
    replace(ctx, "svc.v2")
    b = deployed(ctx, 1)
    new_id = build_id(ctx.path)
    eq(b["current"], new_id, "current build")
    evs = ctx.events()
    un = [e for e in evs if e["event"] == "unresolved"]
    eq(len(un), 1, "unresolved events")
    eq(un[0]["point"], "o", "the unresolved point")
    eq(un[0]["new_build"], new_id, "its build-id")
    check("symbol 'other' not found" in un[0]["detail"], un[0]["detail"])
    check("1 of 2 points attached" in
          [e for e in evs if e["event"] == "build"][0]["detail"],
          "build detail: %r" % evs)
    new = Svc(ctx, ctx.path)
    new.calls(400)
    first.calls(100)                    # the old build still has o
    exact(ctx, "w", 1000)
    exact(ctx, "o", 600)
    check(ctx.loader.p.poll() is None, "the loader exited")
    ctx.finish()


@test
def test_not_elf_symlink_foreign_owner(ctx):
    """A shell script, a symlink, then a build owned by another uid moved
    onto the name: rejected events with their reasons, counting goes on;
    a real build after them is followed."""
    old_id = build_id(os.path.join(DEPLOY_BIN, "svc"))
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    old = Svc(ctx, ctx.path)
    old.calls(200)
    tmp = os.path.join(ctx.dir, "svc.new")
    with open(tmp, "w") as f:
        f.write("#!/bin/sh\necho not a build\n")
    os.chmod(tmp, 0o755)
    os.rename(tmp, ctx.path)
    wait_for(lambda: ctx.stats()["builds"]["rejected"] == 1, "rejected script")
    os.symlink(os.path.join(DEPLOY_BIN, "svc.v1"), tmp)
    os.rename(tmp, ctx.path)
    wait_for(lambda: ctx.stats()["builds"]["rejected"] == 2, "rejected symlink")
    # A real build, but owned by someone who does not own TARGET.
    ctx.stage("svc.v1", "svc.new")
    os.chown(tmp, 65534, 65534)
    os.rename(tmp, ctx.path)
    wait_for(lambda: ctx.stats()["builds"]["rejected"] == 3, "rejected owner")
    rej = [e for e in ctx.events() if e["event"] == "rejected"]
    eq(len(rej), 3, "rejected events")
    check("not an ELF file" in rej[0]["detail"], rej[0]["detail"])
    eq(rej[1]["detail"], "not followed: a symbolic link", "symlink event")
    eq(rej[2]["detail"], "not followed: owned by uid 65534, not by root or "
       "TARGET's owner (uid 0)", "foreign owner event")
    eq(rej[0]["old_build"], old_id, "the build still counted")
    b = ctx.stats()["builds"]
    eq((b["deploys"], b["current"]), (0, old_id), "no deploy followed")
    old.calls(300)
    exact(ctx, "w", 500)
    replace(ctx, "svc.v1")
    deployed(ctx, 1)
    Svc(ctx, ctx.path).calls(250)
    exact(ctx, "w", 750)
    check(ctx.loader.p.poll() is None, "the loader exited")
    ctx.finish()


@test
def test_rapid_double_replacement(ctx):
    """mv v1 then mv v3 at once: the loader ends on v3 (v1 followed or
    not), a v3 process is counted exactly, and no build but v3 keeps
    probes once the processes of the others are gone."""
    v3_id = build_id(os.path.join(DEPLOY_BIN, "svc.v3"))
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    first = Svc(ctx, ctx.path)
    first.calls(1000)
    first.quit()
    a = ctx.stage("svc.v1", "svc.a")
    c = ctx.stage("svc.v3", "svc.c")
    os.rename(a, ctx.path)
    os.rename(c, ctx.path)
    wait_for(lambda: ctx.stats()["builds"]["current"] == v3_id,
             "v3 is the current build")
    builds = [e for e in ctx.events() if e["event"] == "build"]
    check(1 <= len(builds) <= 2, "build events: %r" % builds)
    eq(builds[-1]["new_build"], v3_id, "the last build event's new build")
    new = Svc(ctx, ctx.path)
    new.calls(600)
    exact(ctx, "w", 1600)
    wait_for(lambda: [x["build_id"] for x in ctx.stats()["builds"]["list"]]
             == [v3_id], "only v3 keeps probes", RETIRE_WITHIN)
    ctx.finish()


@test
def test_rollback(ctx):
    """ln svc svc.keep; mv v1 onto svc; mv svc.keep back: the old build,
    still held (a process runs it), is current again without a new
    attach ("back to an older build"); processes of both count."""
    old_id = build_id(os.path.join(DEPLOY_BIN, "svc"))
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    old = Svc(ctx, ctx.path)
    keep = os.path.join(ctx.dir, "svc.keep")
    os.link(ctx.path, keep)
    replace(ctx, "svc.v1")
    deployed(ctx, 1)
    v1 = Svc(ctx, ctx.path)
    os.rename(keep, ctx.path)
    b = deployed(ctx, 2)
    eq(b["current"], old_id, "current build after the rollback")
    eq(len(b["list"]), 2, "builds held")
    ev = [e for e in ctx.events() if e["event"] == "build"][-1]
    check(ev["detail"].startswith("back to an older build: 1 of 1 points"),
          ev["detail"])
    eq(ev["new_build"], old_id, "the rollback's new build")
    again = Svc(ctx, ctx.path)
    for p, n in ((old, 100), (v1, 200), (again, 300)):
        p.calls(n)
    exact(ctx, "w", 600)
    eq(sdstest.get_point(ctx.stats(), "w")["offset"],
       sdstest.symbol_file_offset(ctx.path, "work"), "w's offset: the old build's")
    ctx.finish()


@test
def test_rewritten_in_place(ctx):
    """`cp svc.v1 svc` over a TARGET no process runs (the same inode,
    other bytes): the points move to the new offsets at once and the
    probes at the old ones go; a process of it is counted exactly."""
    ctx.stage("svc", "svc")
    ino = os.stat(ctx.path).st_ino
    ctx.attach("w=work")
    first = Svc(ctx, ctx.path)
    first.calls(100)
    first.quit()
    with open(os.path.join(DEPLOY_BIN, "svc.v1"), "rb") as src, \
            open(ctx.path, "r+b") as dst:
        dst.truncate(0)
        dst.write(src.read())
    eq(os.stat(ctx.path).st_ino, ino, "the inode after the rewrite")
    b = deployed(ctx, 1)
    eq(b["current"], build_id(ctx.path), "the current build")
    eq(len(b["list"]), 1, "builds held: the stale offsets' went")
    ret = [e for e in ctx.events() if e["event"] == "retired"]
    eq([e["detail"] for e in ret], ["probes of inode %d detached: rewritten "
                                    "in place: its offsets are stale" % ino],
       "retired event")
    eq(sdstest.get_point(ctx.stats(), "w")["offset"],
       sdstest.symbol_file_offset(ctx.path, "work"), "w's offset")
    Svc(ctx, ctx.path).calls(250)
    exact(ctx, "w", 350)
    ctx.finish()


@test
def test_pid_not_following(ctx):
    """attach --pid: that process runs the build it runs; a new file at
    the path is not followed ("following": false), and the process is
    counted exactly before and after it."""
    ctx.stage("svc", "svc")
    one = Svc(ctx, ctx.path)
    ctx.attach("w=work", opts=("--pid", str(one.pid)))
    eq(ctx.stats()["builds"]["following"], False, "following with --pid")
    one.calls(100)
    replace(ctx, "svc.v1")
    one.calls(50)
    exact(ctx, "w", 150)
    b = ctx.stats()["builds"]
    eq((b["deploys"], b["rejected"], len(b["list"])), (0, 0, 1),
       "deploys, rejected, builds with --pid")
    eq(ctx.events(), [], "deploy events with --pid")
    ctx.finish()


@test
def test_bound_on_builds(ctx):
    """Five deploys while a process of each build runs: at most 4 builds
    keep probes (WATCH_BUILDS_MAX); the oldest is retired with an event
    that says why, and every call to a build still attached counts."""
    ctx.stage("svc", "svc")
    ctx.attach("w=work")
    procs = [Svc(ctx, ctx.path)]
    ids = [build_id(ctx.path)]
    for i, build in enumerate(["svc.v1", "svc.v2", "svc.v3", "svc.v1"]):
        # The fifth is v1 again but a new inode: a new build to the loader.
        replace(ctx, build)
        deployed(ctx, i + 1)
        procs.append(Svc(ctx, ctx.path))
        ids.append(build_id(ctx.path))
    # The oldest build's links are detached off the loop (watch_detach.c).
    b = wait_for(lambda: (ctx.stats()["builds"]["detaching"] == 0 and
                          ctx.stats()["builds"]), "old links detached")
    eq(len(b["list"]), 4, "builds with probes")
    ret = [e for e in ctx.events() if e["event"] == "retired"]
    eq(len(ret), 1, "retired events")
    eq(ret[0]["old_build"], ids[0], "the oldest build retired")
    check("4 builds at once at most" in ret[0]["detail"], ret[0]["detail"])
    for p in procs:
        p.calls(100)
    # The first build's probes are gone: its 100 calls are not counted.
    exact(ctx, "w", 400)
    ctx.finish()


@test
def test_guarded_build_registers(ctx):
    """A TARGET linked with libsds replaced by a copy (a new inode, the
    same build-id): a process of the new inode registers (the loader's
    register policy moved to it) and its guard point counts exactly; the
    old process's session goes on counting, and it registers again."""
    src = os.path.join(BUILD, "test", "targets", "guarded_static")
    check(os.path.exists(src), "%s missing: run make test-targets" % src)
    shutil.copy2(src, ctx.path)
    ctx.attach()
    old = Guarded(ctx, ctx.path, ctx.app)
    eq(old.cmd("call g 200"), ["passed 200 downgraded 0 failed 0"], "old calls")
    exact(ctx, "g", 200)
    new = os.path.join(ctx.dir, "svc.new")
    shutil.copy2(src, new)
    os.rename(new, ctx.path)
    b = deployed(ctx, 1)
    eq(b["current"], build_id(ctx.path), "the copy's build-id")
    fresh = Guarded(ctx, ctx.path, ctx.app)
    eq(fresh.cmd("call g 300"), ["passed 300 downgraded 0 failed 0"],
       "new calls")
    eq(old.cmd("call g 50"), ["passed 50 downgraded 0 failed 0"],
       "old calls after the deploy")
    exact(ctx, "g", 550)
    # The old build's process registers again (a new client; a forked
    # worker of an old server would): it runs a build still held.
    eq(old.cmd("open %s %s" % (GROUP, ctx.app)), [], "old process re-opens")
    eq(old.cmd("call g 25"), ["passed 25 downgraded 0 failed 0"],
       "old calls on the new session")
    exact(ctx, "g", 575)
    ctx.finish()


class Guarded(Svc):
    """tests/targets/guarded.c: "open GROUP APP", "call P N"; "done"."""

    def __init__(self, ctx, path, app):
        super().__init__(ctx, path)
        eq(self.cmd("open %s %s" % (GROUP, app)), [], "open")

    def cmd(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        out = []
        while True:
            got = self.readline(60)
            if got == "done":
                return out
            out.append(got)


class BodiesAdmin(FakeAdmin):
    """A fake sds-admin that keeps the heartbeats' bodies and answers as
    the admin does with nothing to change."""

    def __init__(self):
        self.bodies = []
        super().__init__(self._answer)

    def _answer(self, doc):
        self.bodies.append(doc)
        return NOTHING_NEW

    def cleanup(self):
        self.close()


@test
def test_heartbeat_build(ctx):
    """Heartbeats carry no "build" before a deploy (older admins refuse
    unknown fields) and {"id": new build-id, "deploys": 1} after it, in
    a period whose visits are exactly the new process's."""
    admin = BodiesAdmin()
    ctx.targets.append(admin)
    token = sdstest.write_token(os.path.join(ctx.tmp, "token"), "deploy-t0ken_for.tests")
    ctx.stage("svc", "svc")
    ctx.attach("w=work", opts=("--admin", "http://127.0.0.1:%d" % admin.port,
                               "--token-file", token))
    wait_for(lambda: admin.bodies, "a first heartbeat", 25)
    check(all("build" not in b for b in admin.bodies),
          "a build field before any deploy: %r" % admin.bodies[0])
    replace(ctx, "svc.v1")
    deployed(ctx, 1)
    new_id = build_id(ctx.path)
    Svc(ctx, ctx.path).calls(321)
    hb = wait_for(lambda: [b for b in admin.bodies if "build" in b and
                           b["points"].get("w", {}).get("visits")],
                  "a heartbeat with the build and the calls", 35)
    eq(hb[0]["build"], {"id": new_id, "deploys": 1}, "the heartbeat's build")
    got = wait_for(lambda: sum(b["points"].get("w", {}).get("visits", 0)
                               for b in admin.bodies) == 321 or None,
                   "321 visits in the heartbeats", 25)
    check(got, "visits")
    ctx.finish()


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx, needs=(SDS,),
                               tools=("readelf",)))
