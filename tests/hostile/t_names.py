# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Names and directories (issue 8, "Names that always fit", "Directories
like sshd's StrictModes"): every valid group and app has a socket that
fits sun_path and that clients and queries find; a run or state dir that
someone but root could write into is refused before anything is loaded;
nothing root opens there follows a symlink; the strategies cache is
written atomically.
"""

import json
import os
import stat
import subprocess
import time

import sdstest
from fake_admin import FakeAdmin
from hostile_lib import AS_NOBODY, test
from sdstest import (NOBODY, SDS, Fail, KernelSnapshot, check, eq,
                     get_point, sock_path)
from guarded import Target

TT = os.path.join(sdstest.BUILD, "test", "targets")
KILL = {"version": 1, "points": {"order": {"visit_threshold": 0}}}
VICTIM = b"root's file: not to be touched\n"


# ---------------------------------------------------------------------------
# Helpers

def staged_target(ctx):
    return ctx.stage(os.path.join(TT, "guarded_static"))


def write_json(ctx, name, doc):
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def victim(ctx, name="victim"):
    """A root-owned 0600 file: (path, its lstat) to compare after."""
    path = os.path.join(ctx.tmp, name)
    with open(path, "wb") as f:
        f.write(VICTIM)
    os.chmod(path, 0o600)
    return path, os.lstat(path)


def assert_victim(path, before, what):
    st = os.lstat(path)
    with open(path, "rb") as f:
        data = f.read()
    eq(data, VICTIM, what + ": the root file's bytes")
    eq((stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_nlink,
        st.st_mtime_ns),
       (stat.S_IMODE(before.st_mode), before.st_uid, before.st_gid,
        before.st_nlink, before.st_mtime_ns),
       what + ": the root file's mode, owner, group, links, mtime")


def sds(ctx, *args):
    return sdstest.run_group([SDS] + list(args), ctx.env, ctx.tmp,
                             ctx.others, timeout=30)


def attach_refused(ctx, args, app, wants, group="default", what=""):
    """`sds-bpf attach ARGS` exits non-zero within 15 s with one
    'sds-bpf: ' line holding every string of @wants, and leaves nothing:
    no program, no pin, no socket in the run dir."""
    snap = KernelSnapshot()
    l = ctx.attach(args, app, group, wait=False)
    # Only the wait's own expiry is "still runs": the suite's per-test
    # Timeout (an Exception too) must go through as itself.
    try:
        rc = l.p.wait(15)
    except subprocess.TimeoutExpired:
        raise Fail("%s: attach still runs after 15 s; stderr %r"
                   % (what, l.stderr()))
    err = l.stderr()
    lines = [x for x in err.splitlines() if x.strip()]
    check(rc != 0, "%s: attach exited 0: %r" % (what, err))
    check(len(lines) == 1 and lines[0].startswith("sds-bpf: "),
          "%s: want one 'sds-bpf: ' line, got %r" % (what, err))
    for w in wants:
        check(w in lines[0], "%s: %r not in %r" % (what, w, lines[0]))
    if os.path.isdir(ctx.run_dir):
        socks = [f for f in os.listdir(ctx.run_dir)
                 if sdstest.is_socket(os.path.join(ctx.run_dir, f))]
        eq(socks, [], what + ": sockets in the run dir")
    snap.assert_nothing_new({l.pid}, what)
    return lines[0]


class StrategiesAdmin(FakeAdmin):
    """A fake sds-admin that answers every heartbeat with @doc as the
    app's strategies (the reply of common/heartbeat/heartbeat.h)."""

    def __init__(self, doc):
        self.doc = doc
        self.posts = 0
        super().__init__(self._answer)

    def _answer(self, beat):
        self.posts += 1
        return {"version": self.doc["version"], "changed": True,
                "strategies": self.doc, "drills": []}


def admin_args(ctx, url):
    token = sdstest.write_token(os.path.join(ctx.tmp, "token"), "t0ken_for.hostile-tests")
    return ["--admin", url, "--token-file", token, "--state-dir",
            ctx.state_dir]


def set_run_dir(ctx, path):
    ctx.run_dir = path
    ctx.env["SDS_RUN_DIR"] = path


# ---------------------------------------------------------------------------
# Names that always fit

GROUP64 = "grp_" + "g" * 59 + "1"
APP64 = "app-" + "a" * 59 + "2"


@test
def names_64_64_reachable(ctx):
    """Group and app of 64 characters each: the socket gets a hashed name
    that fits sun_path; a libsds process running as nobody registers and
    is guarded (kill switch: 100 of 100 downgraded); stats --app and list
    find the app by its real names."""
    check(len(GROUP64) == 64 and len(APP64) == 64, "64-character names")
    path = staged_target(ctx)
    spath = write_json(ctx, "s.json", KILL)
    l = ctx.attach(["--group", GROUP64, "--app", APP64, "--socket-mode",
                    "0666", "--strategies", spath, path], APP64, GROUP64)
    plain = os.path.join(ctx.run_dir, "%s.%s.sock" % (GROUP64, APP64))
    check(len(plain) > sdstest.SUN_PATH_MAX, "precondition: %d bytes"
          % len(plain))
    check(len(l.sock) <= sdstest.SUN_PATH_MAX and
          os.path.basename(l.sock).count(".") == 3,
          "socket %s (%d bytes): want a hashed name within %d"
          % (l.sock, len(l.sock), sdstest.SUN_PATH_MAX))
    eq(os.listdir(ctx.run_dir).count(os.path.basename(l.sock)), 1,
       "the hashed socket in the run dir")
    t = Target(ctx, path, prefix=AS_NOBODY)
    t.open(APP64, group=GROUP64)
    r = t.call("order", 100)
    eq(r.get("downgraded"), 100, "nobody's calls under the kill switch")
    r = sds(ctx, "stats", "--app", APP64, "--json")
    check(r.rc == 0, "stats --app <64 chars>: %r" % r)
    st = json.loads(r.out)
    eq((st.get("group"), st.get("app")), (GROUP64, APP64), "stats names")
    p = get_point(st, "order")
    eq((p["total"]["visits"], p["total"]["downgrades"]), (100, 100),
       "order's visits and downgrades")
    r = sds(ctx, "stats", "--group", GROUP64, "--app", APP64, "--json")
    check(r.rc == 0, "stats --group --app: %r" % r)
    r = sds(ctx, "list", "--json")
    check(r.rc == 0, "list: %r" % r)
    apps = [(a.get("group"), a.get("app"), a.get("socket"))
            for a in json.loads(r.out)]
    eq(apps, [(GROUP64, APP64, l.sock)], "list")
    # The lock file holds the names the query read.
    lock = l.sock[:-len(".sock")] + ".lock"
    with open(lock) as f:
        eq(f.read().split()[1:], [GROUP64, APP64], "the lock file's names")


@test
def long_run_dir_whose_path_fits(ctx):
    """A run dir so long that <dir>/default.app.sock is exactly 107
    bytes: attach serves (its temp name is never longer than the socket's),
    a libsds process as nobody is guarded."""
    path = staged_target(ctx)
    name = "/default.app.sock"
    d = ctx.tmp + "/" + "r" * (sdstest.SUN_PATH_MAX - len(ctx.tmp) - 1 -
                               len(name))
    set_run_dir(ctx, d)
    spath = write_json(ctx, "s.json", KILL)
    l = ctx.attach(["--app", "app", "--socket-mode", "0666",
                    "--strategies", spath, path], "app")
    eq((l.sock, len(l.sock)), (d + name, sdstest.SUN_PATH_MAX),
       "the socket path")
    eq(stat.S_IMODE(os.stat(d).st_mode), 0o755, "mode of the created dir")
    t = Target(ctx, path, prefix=AS_NOBODY)
    t.open("app")
    eq(t.call("order", 10).get("downgraded"), 10, "calls under the switch")


@test
def run_dir_too_long_for_any_name(ctx):
    """The longest run dir a hashed name fits (107 - 6 - 20 = 81 bytes)
    serves two 64-character names; one byte more is refused before
    anything is loaded, with one line that says what to do."""
    path = staged_target(ctx)
    longest = sdstest.SUN_PATH_MAX - len("/.sock") - 20
    base = ctx.tmp + "/"
    d = base + "d" * (longest - len(base))
    set_run_dir(ctx, d)
    l = ctx.attach(["--group", GROUP64, "--app", APP64, path], APP64,
                   GROUP64)
    eq(len(l.sock), sdstest.SUN_PATH_MAX, "socket path length")
    stem = os.path.basename(l.sock)[:-len(".sock")]
    eq(stem.split(".")[:2], ["g", "a"], "the shortest prefixes")
    r = sds(ctx, "stats", "--app", APP64, "--json")
    check(r.rc == 0, "stats: %r" % r)
    l.end()
    set_run_dir(ctx, d + "d")
    attach_refused(ctx, ["--group", GROUP64, "--app", APP64, path], APP64,
                   ["run directory %s is too long" % (d + "d"),
                    "SDS_RUN_DIR"], GROUP64, "run dir of 82 bytes")
    check(not os.path.exists(d + "d"), "the refused run dir was created")


# ---------------------------------------------------------------------------
# Directories like sshd's StrictModes

@test
def run_dir_not_roots_refused(ctx):
    """A run dir owned by nobody, one that is group-writable, one under a
    world-writable (not sticky) parent, and a symlink to a dir of nobody:
    attach refuses each before loading anything, naming the culprit."""
    path = staged_target(ctx)
    args = ["--app", "app", path]
    os.chown(ctx.run_dir, NOBODY, NOBODY)
    attach_refused(ctx, args, "app", [ctx.run_dir, "owned by uid 65534",
                                      "SDS_RUN_DIR"], what="nobody's run dir")
    os.chown(ctx.run_dir, 0, 0)
    os.chmod(ctx.run_dir, 0o775)
    attach_refused(ctx, args, "app", [ctx.run_dir, "writable by group",
                                      "0775"], what="group-writable run dir")
    os.chmod(ctx.run_dir, 0o1777)
    attach_refused(ctx, args, "app", ["writable by group"],
                   what="a sticky world-writable run dir itself")
    parent = os.path.join(ctx.tmp, "open")
    os.mkdir(parent)
    os.chmod(parent, 0o777)
    set_run_dir(ctx, os.path.join(parent, "run"))
    attach_refused(ctx, args, "app", [parent + " is writable by group"],
                   what="a run dir under a 0777 parent")
    theirs = os.path.join(ctx.tmp, "theirs")
    os.mkdir(theirs, 0o755)
    os.chown(theirs, NOBODY, NOBODY)
    link = os.path.join(ctx.tmp, "link")
    os.symlink(theirs, link)
    set_run_dir(ctx, link)
    attach_refused(ctx, args, "app", [theirs + " is owned by uid 65534"],
                   what="a symlink to nobody's dir")
    eq(os.listdir(theirs), [], "files made in nobody's dir")


@test
def state_dir_not_roots_refused(ctx):
    """With --admin, a group-writable state dir or one owned by nobody is
    refused before anything is loaded; a missing one is created 0755."""
    path = staged_target(ctx)
    hold, port = sdstest.dead_port()    # refused for the whole test
    dead = "http://127.0.0.1:%d" % port
    args = admin_args(ctx, dead) + ["--app", "app", path]
    os.chmod(ctx.state_dir, 0o775)
    attach_refused(ctx, args, "app", ["state directory %s" % ctx.state_dir,
                                      "writable by group", "--state-dir"],
                   what="group-writable state dir")
    os.chmod(ctx.state_dir, 0o755)
    os.chown(ctx.state_dir, NOBODY, NOBODY)
    attach_refused(ctx, args, "app", ["owned by uid 65534"],
                   what="nobody's state dir")
    os.rmdir(ctx.state_dir)
    l = ctx.attach(args, "app")
    st = os.stat(ctx.state_dir)
    eq((stat.S_IMODE(st.st_mode), st.st_uid), (0o755, 0),
       "the created state dir")
    l.end()


# ---------------------------------------------------------------------------
# No symlink followed

@test
def lock_file_symlink_fifo_hardlink_refused(ctx):
    """A symlink to a root file planted as the lock file, a hard link to
    it, a FIFO: attach refuses each (no hang) and the root file is
    byte-for-byte, mode and mtime the same."""
    path = staged_target(ctx)
    v, before = victim(ctx)
    lock = os.path.join(ctx.run_dir, "default.app.lock")
    os.symlink(v, lock)
    attach_refused(ctx, ["--app", "app", path], "app", [lock, "symlink"],
                   what="symlink as lock")
    assert_victim(v, before, "symlink as lock")
    os.unlink(lock)
    os.link(v, lock)
    before = os.lstat(v)
    attach_refused(ctx, ["--app", "app", path], "app", [lock, "not a regular"],
                   what="hard link as lock")
    assert_victim(v, before, "hard link as lock")
    os.unlink(lock)
    os.mkfifo(lock)
    attach_refused(ctx, ["--app", "app", path], "app", [lock, "not a regular"],
                   what="FIFO as lock")


@test
def socket_temp_symlink_not_followed(ctx):
    """A symlink to a root 0600 file planted at the temp name the socket
    is bound under: attach --socket-mode 0666 serves, its socket is 0666,
    the root file keeps its mode and bytes."""
    path = staged_target(ctx)
    v, before = victim(ctx)
    tmp = os.path.join(ctx.run_dir, ".default.app.new")
    os.symlink(v, tmp)
    l = ctx.attach(["--app", "app", "--socket-mode", "0666", path], "app")
    eq(stat.S_IMODE(os.lstat(l.sock).st_mode), 0o666, "socket mode")
    assert_victim(v, before, "symlink at the temp name")
    check(not os.path.lexists(tmp), "the temp name is left")


# ---------------------------------------------------------------------------
# The strategies cache

def cache_path(ctx):
    return os.path.join(ctx.state_dir, "default.app.strategies.json")


@test
def cache_written_atomically(ctx):
    """A symlink to a root file planted as the cache's temp file: the
    cache is still written (the admin's strategies, mode 0600, a regular
    file), the root file unchanged, no temp file left in the state dir."""
    path = staged_target(ctx)
    v, before = victim(ctx)
    cache = cache_path(ctx)
    os.symlink(v, cache + ".tmp")
    doc = {"version": 7, "points": {"order": {"visit_threshold": 0}}}
    admin = StrategiesAdmin(doc)
    try:
        l = ctx.attach(admin_args(ctx, admin.url) + ["--app", "app", path], "app")
        sdstest.wait_until(lambda: os.path.exists(cache) and
                           not os.path.lexists(cache + ".tmp"),
                           time.time() + 30,
                           lambda _: "no cache after 30 s (%d heartbeats); "
                           "state dir %r; stderr %r"
                           % (admin.posts, os.listdir(ctx.state_dir),
                              l.stderr()))
    finally:
        admin.close()
    st = os.lstat(cache)
    check(stat.S_ISREG(st.st_mode), "the cache is not a regular file")
    eq((stat.S_IMODE(st.st_mode), st.st_uid), (0o600, 0), "cache mode, uid")
    with open(cache) as f:
        eq(json.load(f).get("version"), 7, "the cached version")
    # The heartbeat backlog (docs/BACKLOG.md) is there too, since the
    # first period closed: no temp file of either.
    eq(sorted(os.listdir(ctx.state_dir)), ["default.app.backlog",
                                           os.path.basename(cache)],
       "the state dir")
    assert_victim(v, before, "symlink at the cache's temp name")


@test
def cache_symlink_or_fifo_not_read(ctx):
    """A cache that is a symlink (to a root file of valid strategies) or
    a FIFO is not read: attach starts at once (no hang on the FIFO), says
    it ignores it, and no cached strategy is in force."""
    path = staged_target(ctx)
    hold, port = sdstest.dead_port()    # refused for the whole test
    dead = "http://127.0.0.1:%d" % port
    cache = cache_path(ctx)
    planted = write_json(ctx, "planted.json", KILL)
    os.symlink(planted, cache)
    for kind, want in (("symlink", "a symlink"),
                       ("FIFO", "not a regular file")):
        if kind == "FIFO":
            os.unlink(cache)
            os.mkfifo(cache)
        l = ctx.attach(admin_args(ctx, dead) + ["--app", "app", path], "app")
        r = sds(ctx, "stats", "--app", "app", "--json")
        check(r.rc == 0, "%s: stats %r" % (kind, r))
        st = json.loads(r.out)
        eq(st.get("strategies_version"), -1, kind + ": strategies version (none)")
        check(get_point(st, "order", required=False) is None,
              "%s: a strategy point from the cache: %r" % (kind, st))
        l.end()
        err = l.stderr()
        check("ignoring cached strategies: %s: %s" % (cache, want) in err,
              "%s: stderr %r" % (kind, err))
