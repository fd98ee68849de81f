# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Registration never opens a path a client names, and only processes that
run TARGET, as a uid the socket lets in, may register (loader/serve/register.c,
docs/TRUST.md).  The hostile client is tests/hostile/files_client.c run
as nobody; in most tests a copy of it is the loader's TARGET, so that it
passes the "runs TARGET" check and reaches the file handling.
"""

import json
import os
import re
import shutil
import subprocess
import time

import guarded
import hostile_lib
import sdstest
from hostile_lib import AS_NOBODY, NOBODY, test
from sdstest import BUILD, Fail, check, eq, log

GUARDED_STATIC = os.path.join(BUILD, "test", "targets", "guarded_static")
GENERIC = re.compile(r'^reply \{"error":"register: no usable libsds file '
                     r'mapped at 0x[0-9a-f]+"\}$')
INT3 = 0xcc


def query(sock, req="stats", timeout=1.0):
    """(reply, seconds); the loader must answer within 1 s."""
    return hostile_lib.query(sock, req, timeout)


def refused(loader):
    st, _ = query(loader.sock)
    check(isinstance(st.get("refused"), dict), "stats: no refused: %r" % st)
    return st["refused"]


def attach(ctx, target, mode="0666", app="files", extra=()):
    l = ctx.attach(["--app", app, "--socket-mode", mode] + list(extra)
                   + [target], app)
    return l


def enter_offset(loader):
    """File offset of libsds's enter site in TARGET, as attach prints it."""
    m = re.search(r"^\(guards\)\s+sds__site_enter\s+(0x[0-9a-f]+)",
                  loader.stdout(), re.M)
    check(m, "attach printed no (guards) line: %r" % loader.stdout())
    return int(m.group(1), 16)


def file_byte(path, off):
    with open(path, "rb") as f:
        f.seek(off)
        return f.read(1)[0]


def mem_byte(pid, path, off):
    """The byte process @pid sees at file offset @off of @path (mapped)."""
    st = os.stat(path)
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fs = line.split()
            if len(fs) < 5 or int(fs[4]) != st.st_ino:
                continue
            lo, hi = (int(x, 16) for x in fs[0].split("-"))
            pgoff = int(fs[2], 16)
            if pgoff <= off < pgoff + hi - lo:
                with open("/proc/%d/mem" % pid, "rb") as m:
                    m.seek(lo + off - pgoff)
                    return m.read(1)[0]
    raise Fail("pid %d does not map offset 0x%x of %s" % (pid, off, path))


def attacker_dir(ctx, name="atk"):
    d = os.path.join(ctx.tmp, name)
    os.mkdir(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


def root_dir(ctx):
    d = os.path.join(ctx.tmp, "priv")
    os.mkdir(d, 0o700)
    return d


def run(ctx, argv, nobody=True, timeout=60):
    r = sdstest.run_group((AS_NOBODY if nobody else []) + argv, ctx.env,
                          ctx.tmp, ctx.others, timeout=timeout)
    log("%s -> %r" % (" ".join(argv[:2]), r))
    return r


def replies(out):
    return [l for l in out.splitlines() if l.startswith("reply ")]


class Held(sdstest.LineReader):
    """A files_client that holds what it registered until stopped."""

    def __init__(self, ctx, argv, nobody=True):
        self.name = os.path.basename(argv[0])
        self.buf = b""
        self.p = ctx.spawn(argv, nobody=nobody, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
        self.lines = []
        while True:
            line = self.readline(30)
            if line == "held":
                break
            self.lines.append(line)

    def stop(self):
        self.p.stdin.close()
        self.p.wait(10)
        self.p.stdout.close()


def sleeper(ctx, path):
    """@path (a copy of files_client) sleeping as root: a victim."""
    p = ctx.spawn([path, "sleep"], stdout=subprocess.PIPE)
    line = p.stdout.readline().decode().strip()
    check(line == "ready", "victim %s: %r" % (path, line))
    return p


def stats_while(ctx, loader, p, deadline_s=60):
    """Query stats every 0.1 s while @p runs (each within 1 s); the
    slowest answer and the count."""
    worst, n = 0.0, 0
    end = time.monotonic() + deadline_s
    while p.poll() is None:
        check(time.monotonic() < end, "the client still runs after %d s"
              % deadline_s)
        worst = max(worst, query(loader.sock)[1])
        n += 1
        time.sleep(0.1)
    return worst, n


# ---------------------------------------------------------------------------

def _fifo(ctx, src, n):
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    atk = attacker_dir(ctx)
    p = ctx.spawn(AS_NOBODY + [t, "fifo", l.sock, atk, src, str(n)],
                  stdout=subprocess.PIPE)
    worst, k = stats_while(ctx, l, p)
    out = p.stdout.read().decode()
    eq(p.wait(), 0, "files_client fifo exit status")
    check(k >= 1, "stats never queried while the client ran")
    log("stats answered %d times, slowest %.3f s" % (k, worst))
    check(worst < 1.0, "stats took %.3f s during the attack" % worst)
    fifo = os.path.join(atk, "lib (deleted)")
    check(os.path.exists(fifo), "the FIFO %s is gone" % fifo)
    return l, replies(out)


@test
def files_fifo_at_mapped_name(ctx):
    """A data file mapped, deleted, a FIFO at the name its maps line shows
    ("lib (deleted)"): 20 registrations each get the generic error, the
    loader answers stats within 1 s throughout, 20 refusals counted."""
    junk = os.path.join(ctx.tmp, "junk")
    with open(junk, "wb") as f:
        f.write(b"junk" * 4096)
    os.chmod(junk, 0o644)
    l, r = _fifo(ctx, junk, 20)
    eq(len(r), 20, "replies")
    for line in r:
        check(GENERIC.match(line), "reply %r, want the generic error" % line)
    eq(len(set(r)), 1, "distinct replies")
    eq(refused(l)["denied"], 20, "refused.denied")


@test
def files_fifo_at_name_of_libsds_copy(ctx):
    """The same with a libsds copy mapped: the loader registers the mapped
    inode itself (5 of 5), whatever now has its name."""
    t = ctx.hostile("files_client")
    l, r = _fifo(ctx, t, 5)
    eq(len(r), 5, "replies")
    for line in r:
        check(line.startswith('reply {"slot":'), "reply %r, want a slot" % line)
    eq(refused(l)["denied"], 0, "refused.denied")


@test
def files_symlink_root_only_and_missing(ctx):
    """A data file mapped and deleted, its name a symlink to a root-only
    libsds copy, then to a missing file: the same generic error both
    times (address aside), no probe in a root process running the
    root-only file, 2 refusals."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    enter = enter_offset(l)
    priv = root_dir(ctx)
    secret = os.path.join(priv, "secret")
    shutil.copy2(t, secret)
    os.chmod(secret, 0o700)
    victim = sleeper(ctx, secret)
    junk = os.path.join(ctx.tmp, "junk")
    with open(junk, "wb") as f:
        f.write(b"\x7fELF" + b"\0" * 8188)
    os.chmod(junk, 0o644)
    got = []
    for i, to in enumerate((secret, os.path.join(priv, "missing"))):
        atk = attacker_dir(ctx, "atk%d" % i)
        r = run(ctx, [t, "link", l.sock, atk, junk, to])
        eq(r.rc, 1, "files_client link exit status (%r)" % r)
        rs = replies(r.out)
        eq(len(rs), 1, "replies (%r)" % r)
        check(GENERIC.match(rs[0]), "reply %r, want the generic error" % rs[0])
        got.append(re.sub(r"0x[0-9a-f]+", "ADDR", rs[0]))
    eq(got[0], got[1], "error for a root-only file vs a missing one")
    eq(mem_byte(victim.pid, secret, enter), file_byte(secret, enter),
       "byte at the enter site in a root process of the root-only file")
    eq(refused(l)["denied"], 2, "refused.denied")


@test
def files_symlink_swap(ctx):
    """A libsds copy mapped and deleted, its name flipped between a symlink
    to another copy of the attacker's and one to a root-only copy that a
    root process runs, during 200 registrations: all 200 register (the
    mapped inode), and the root process's enter site holds its own byte,
    not an int3."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    enter = enter_offset(l)
    priv = root_dir(ctx)
    vpath = os.path.join(priv, "victim")
    shutil.copy2(t, vpath)
    os.chmod(vpath, 0o700)
    victim = sleeper(ctx, vpath)
    orig = file_byte(vpath, enter)
    check(orig != INT3, "the enter site is an int3 in the file itself")
    atk = attacker_dir(ctx)
    r = run(ctx, [t, "swap", l.sock, atk, t, vpath, "200"], timeout=120)
    eq(r.rc, 0, "files_client swap exit status (%r)" % r)
    eq(mem_byte(victim.pid, vpath, enter), orig,
       "byte at the enter site of the root process")
    rs = replies(r.out)
    eq(len(rs), 200, "replies")
    bad = [x for x in rs if not x.startswith('reply {"slot":')]
    check(not bad, "%d of 200 refused: %r" % (len(bad), bad[:3]))
    eq(refused(l)["denied"], 0, "refused.denied")


@test
def files_probe_lands_on_mapped_inode(ctx):
    """Registered by the address of a mapped copy, the probe is on that
    inode (the client reads an int3 at the enter site of its mapping, and
    so does a root process running that file) and on no other copy."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    enter = enter_offset(l)
    atk = attacker_dir(ctx)
    mine = os.path.join(atk, "mine")
    shutil.copy2(t, mine)
    os.chown(mine, NOBODY, NOBODY)
    other = ctx.stage(t, "other")
    orig = file_byte(mine, enter)
    check(orig != INT3, "the enter site is an int3 in the file itself")
    vm, vo = sleeper(ctx, mine), sleeper(ctx, other)
    h = Held(ctx, [t, "map", l.sock, mine, hex(enter)])
    check(len(h.lines) == 2 and h.lines[0].startswith('reply {"slot":'),
          "map: %r" % h.lines)
    eq(h.lines[1], "byte %s %02x" % (hex(enter), INT3), "the client's byte")
    eq(mem_byte(vm.pid, mine, enter), INT3, "a root process running the copy")
    eq(mem_byte(vo.pid, other, enter), orig, "a root process of another copy")
    h.stop()


@test
def files_not_target_refused(ctx):
    """TARGET is guarded_static; files_client (not TARGET) registers the
    address of its own libsds sites: refused 3 times as nobody, once as
    root, with a permission error; 4 refusals counted."""
    target = ctx.stage(GUARDED_STATIC)
    l = attach(ctx, target)
    c = ctx.hostile("files_client")
    for nobody, n in ((True, 3), (False, 1)):
        r = run(ctx, [c, "self", l.sock, str(n)], nobody=nobody)
        eq(r.rc, 0, "files_client self (%r)" % r)
        rs = replies(r.out)
        eq(len(rs), n, "replies")
        for x in rs:
            check(re.match(r'^reply \{"error":"register: permission denied: '
                           r'pid \d+ does not run %s"\}$' % re.escape(target),
                           x), "reply %r" % x)
    eq(refused(l)["denied"], 4, "refused.denied")


@test
def files_target_as_nobody_registers(ctx):
    """A legit unprivileged app (TARGET, as nobody, --socket-mode 0666)
    registers: the kill switch downgrades 200 of 200 calls, none refused."""
    target = ctx.stage(GUARDED_STATIC)
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump({"version": 1, "points": {"order": {"visit_threshold": 0}}}, f)
    l = attach(ctx, target, app="app", extra=["--strategies", spath])
    t = guarded.Target(ctx, target, prefix=AS_NOBODY)
    t.open("app")
    r = t.call("order", 200)
    eq(r, {"passed": 0, "downgraded": 200, "failed": 0}, "calls as nobody")
    eq(refused(l), {"connections": 0, "sessions": 0, "points": 0, "files": 0,
                    "denied": 0, "slow": 0}, "refused")


@test
def files_socket_mode_0660_kernel_refuses(ctx):
    """With the default --socket-mode 0660 a process of TARGET as nobody
    cannot connect (EACCES from the kernel); nothing reaches register."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t, mode="0660")
    r = run(ctx, [t, "self", l.sock, "1"])
    eq(replies(r.out), ["reply connect: Permission denied"], "reply")
    eq(refused(l)["denied"], 0, "refused.denied")


def _copier(ctx, src, owner):
    d = attacker_dir(ctx, "copies")

    def copy(name):
        p = os.path.join(d, name)
        if os.path.exists(p):
            os.unlink(p)
        shutil.copy2(src, p)
        os.chown(p, owner, owner)
        return p
    return copy


@test
def files_guard_file_recycle(ctx):
    """Two libsds copies, new inodes each round, registered and let go 20
    times (40 files through 16 slots): every registration succeeds, the
    idle files' slots are reused; none refused."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    copy = _copier(ctx, t, 0)
    for rnd in range(20):
        hs = [Held(ctx, [t, "map", l.sock, copy(n)], nobody=False)
              for n in ("a", "b")]
        for h in hs:
            check(len(h.lines) == 1 and h.lines[0].startswith('reply {"slot":'),
                  "round %d: %r" % (rnd, h.lines))
        for h in hs:
            h.stop()
    r = refused(l)
    eq((r["files"], r["denied"]), (0, 0), "refused files, denied")


@test
def files_guard_file_caps_per_uid(ctx):
    """nobody holds 4 libsds files at most (5 copies at once: the 5th is
    refused), and brings in new ones at most one per 10 s (after letting
    the 4 go, a 6th copy at once is refused; a 7th that reuses a held
    file's inode is not): 2 refusals counted."""
    t = ctx.hostile("files_client")
    l = attach(ctx, t)
    copy = _copier(ctx, t, NOBODY)
    hs = [Held(ctx, [t, "map", l.sock, copy("c%d" % i)]) for i in range(5)]
    got = [h.lines for h in hs]
    for i in range(4):
        check(got[i][0].startswith('reply {"slot":'), "copy %d: %r" % (i, got[i]))
    eq(got[4], ['reply {"error":"register: uid %d holds 4 libsds files '
                'already (at most 4)"}' % NOBODY], "the fifth copy")
    for h in hs[1:]:
        h.stop()
    h = Held(ctx, [t, "map", l.sock, copy("c5")])
    eq(h.lines, ['reply {"error":"register: uid %d brings in new libsds '
                 'files too fast (one per 10 s)"}' % NOBODY], "the sixth copy")
    h.stop()
    h = Held(ctx, [t, "map", l.sock, os.path.join(os.path.dirname(copy("x")),
                                                  "c0")])
    check(h.lines[0].startswith('reply {"slot":'), "c0 again: %r" % h.lines)
    h.stop()
    hs[0].stop()
    r = refused(l)
    eq((r["files"], r["denied"]), (2, 0), "refused files, denied")
