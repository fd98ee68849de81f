#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Separate debug info (issue 17; loader/target/debuginfo.c, docs/INSTALL.md): a
stripped binary's static function, which only the .symtab of its debug
file names, attached and counted exactly.

The target (prog.c) is built per test with -g; `objcopy --only-keep-debug`
splits its debug file off, `strip` strips it.  The debug root is the
test's own (SDS_DEBUG_ROOT, the tests-only override of /usr/lib/debug).

  * by build-id: ROOT/.build-id/xx/yyyy.debug; N calls counted, the
    attach table's "symbols:" line names the debug file and the build-id;
  * by .gnu_debuglink: beside the binary, in its .debug/ subdir, under
    ROOT/DIR;
  * a deploy: a new stripped build moved onto the path is followed
    through its own debug file, both builds counted exactly;
  * refused: a debug file of another build under the build-id path; a
    debuglink whose CRC32 does not match; a symlink at the build-id path;
    each one line naming the file and why, non-zero exit;
  * no debug file at all: the "stripped" message names the debug root;
  * a binary with its own .symtab says so.

Run as root (make debuginfo-tests):

    python3 tests/debuginfo/run.py [-v] [NAME-SUBSTRING...]

Everything is in the test's temp dir, removed whatever happens.  The
last line is "N passed, M failed, K skipped".  Python 3 standard library only.
"""

import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import SDS, Fail, check, eq, get_point, log  # noqa: E402

SUITE = sdstest.Suite(timeout=120)
test = SUITE.test
N = 1000
FUNC = "secret_work"


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-dbg-")
        self.root = os.path.join(self.tmp, "debugroot")
        os.mkdir(self.root)
        self.env["SDS_DEBUG_ROOT"] = self.root

    def sh(self, argv, cwd=None):
        log(" ".join(argv))
        r = subprocess.run(argv, cwd=cwd or self.tmp, capture_output=True,
                           text=True)
        check(r.returncode == 0, "%s: %s" % (" ".join(argv), r.stderr.strip()))
        return r.stdout

    def build(self, name, salt=1, sub=None):
        """prog.c as @name (in @sub of the temp dir) with -g; returns
        (the stripped binary, its split debug file, its build-id)."""
        d = os.path.join(self.tmp, sub) if sub else self.tmp
        os.makedirs(d, exist_ok=True)
        exe = os.path.join(d, name)
        self.sh(["gcc", "-g", "-O2", "-DSALT=%d" % salt, "-o", exe,
                 os.path.join(HERE, "prog.c")])
        dbg = exe + ".debug"
        self.sh(["objcopy", "--only-keep-debug", exe, dbg])
        self.sh(["strip", exe])
        out = self.sh(["readelf", "-n", exe])
        bid = [l.split()[-1] for l in out.splitlines() if "Build ID" in l]
        check(len(bid) == 1, "readelf -n %s: %r" % (exe, out))
        syms = subprocess.run(["readelf", "-s", exe], capture_output=True,
                              text=True).stdout
        check(FUNC not in syms, "%s still names %s after strip" % (exe, FUNC))
        return exe, dbg, bid[0]

    def place_buildid(self, dbg, bid):
        d = os.path.join(self.root, ".build-id", bid[:2])
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, bid[2:] + ".debug")
        shutil.copy(dbg, dst)
        return dst

    def attach(self, exe, app):
        return sdstest.AttachProcess(self, ["-a", app, exe,
                                            "w=" + FUNC], app)

    def attach_fails(self, exe, app):
        r = sdstest.run_group([SDS, "attach", "-a", app, exe, "w=" + FUNC],
                              self.env, self.tmp, self.others, 30)
        check(r.rc != 0, "attach of %s succeeded: %r" % (exe, r))
        lines = r.err.strip().splitlines()
        eq(len(lines), 1, "lines of attach's error %r" % r.err)
        return lines[0]


def run_target(ctx, exe, n):
    """Start @exe, make it call secret_work @n times, end it."""
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, cwd=ctx.tmp, start_new_session=True)
    ctx.others.append(p)
    eq(p.stdout.readline().strip(), "ready", "%s's first line" % exe)
    p.stdin.write("call %d\n" % n)
    p.stdin.flush()
    eq(p.stdout.readline().strip(), "done", "%s after call" % exe)
    p.stdin.close()
    p.wait(10)


def counted(ctx, exe, app, symbols_has):
    """Attach to @exe, call N times, visits == N; the "symbols:" line of
    the attach table holds every string of @symbols_has."""
    ld = ctx.attach(exe, app)
    sym = [l for l in ld.stdout().splitlines() if l.startswith("symbols: ")]
    eq(len(sym), 1, "symbols: lines in %r" % ld.stdout())
    for s in symbols_has:
        check(s in sym[0], "%r not in %r" % (s, sym[0]))
    run_target(ctx, exe, N)
    r = sdstest.run_group([SDS, "stats", "--app", app, "--json"], ctx.env,
                          ctx.tmp, ctx.others, 30)
    check(r.rc == 0, "stats: %r" % r)
    p = get_point(json.loads(r.out), "w")
    eq(p["total"]["visits"], N, "visits of %s" % FUNC)
    eq(p["symbol"], FUNC, "the point's symbol")
    ld.end()
    return sym[0]


@test
def by_buildid_counted_exactly(ctx):
    exe, dbg, bid = ctx.build("prog")
    path = ctx.place_buildid(dbg, bid)
    os.unlink(dbg)
    counted(ctx, exe, "bid", [path, "by build-id " + bid])


@test
def by_debuglink_beside_counted_exactly(ctx):
    exe, dbg, _ = ctx.build("prog")
    ctx.sh(["objcopy", "--add-gnu-debuglink=" + dbg, exe])
    counted(ctx, exe, "link", [dbg, "by .gnu_debuglink"])


@test
def by_debuglink_dot_debug_counted_exactly(ctx):
    exe, dbg, _ = ctx.build("prog", sub="bin")
    ctx.sh(["objcopy", "--add-gnu-debuglink=" + dbg, exe])
    dd = os.path.join(os.path.dirname(exe), ".debug")
    os.mkdir(dd)
    moved = os.path.join(dd, os.path.basename(dbg))
    os.rename(dbg, moved)
    counted(ctx, exe, "dotdebug", [moved, "by .gnu_debuglink"])


@test
def by_debuglink_under_root_counted_exactly(ctx):
    exe, dbg, _ = ctx.build("prog", sub="opt")
    ctx.sh(["objcopy", "--add-gnu-debuglink=" + dbg, exe])
    real = os.path.realpath(os.path.dirname(exe))
    d = ctx.root + real
    os.makedirs(d)
    moved = os.path.join(d, os.path.basename(dbg))
    os.rename(dbg, moved)
    counted(ctx, exe, "rootlink", [moved, "by .gnu_debuglink"])


def stats(ctx, app):
    r = sdstest.run_group([SDS, "stats", "--app", app, "--json"], ctx.env,
                          ctx.tmp, ctx.others, 30)
    check(r.rc == 0, "stats: %r" % r)
    return json.loads(r.out)


@test
def deploy_of_stripped_build_counted_exactly(ctx):
    """attach to a stripped build (symbols by build-id); mv a new
    stripped build (another build-id, its own debug file) onto the path:
    the loader follows it through the new debug file; both counted."""
    exe, dbg, bid = ctx.build("svc", sub="app")
    ctx.place_buildid(dbg, bid)
    ld = ctx.attach(exe, "deploy")
    run_target(ctx, exe, N)
    eq(get_point(stats(ctx, "deploy"), "w")["total"]["visits"], N, "old build")
    new, ndbg, nbid = ctx.build("svc.new", salt=7, sub="app")
    check(nbid != bid, "two builds, one build-id")
    ctx.place_buildid(ndbg, nbid)
    os.rename(new, exe)
    deadline = time.monotonic() + 20
    while True:
        b = stats(ctx, "deploy").get("builds", {})
        if b.get("deploys") == 1:
            break
        check(time.monotonic() < deadline and not b.get("rejected"),
              "the new build was not followed: builds %r; stderr %r"
              % (b, ld.stderr()))
        time.sleep(0.2)
    eq(b.get("current"), nbid, "the current build")
    run_target(ctx, exe, 500)
    eq(get_point(stats(ctx, "deploy"), "w")["total"]["visits"], N + 500,
       "old and new builds")
    ld.end()


@test
def buildid_mismatch_refused(ctx):
    exe, _, bid = ctx.build("prog")
    _, other, obid = ctx.build("other", salt=7)
    check(bid != obid, "two builds, one build-id %s" % bid)
    path = ctx.place_buildid(other, bid)
    line = ctx.attach_fails(exe, "mism")
    want = "%s: build-id %s, not the binary's %s" % (path, obid, bid)
    check("refused " + want in line, "%r not in %r" % (want, line))
    check(line.startswith("sds-bpf: symbol '%s' not found in %s: the file is "
                          "stripped (no .symtab) and has no debug file under %s"
                          % (FUNC, exe, ctx.root)), line)


@test
def debuglink_crc_mismatch_refused(ctx):
    exe, dbg, _ = ctx.build("prog")
    ctx.sh(["objcopy", "--add-gnu-debuglink=" + dbg, exe])
    with open(dbg, "ab") as f:          # still an ELF file; another CRC
        f.write(b"\0")
    line = ctx.attach_fails(exe, "crc")
    check(("refused %s: CRC32 " % dbg) in line and
          ".gnu_debuglink says" in line, line)


@test
def buildid_symlink_refused(ctx):
    exe, dbg, bid = ctx.build("prog")
    d = os.path.join(ctx.root, ".build-id", bid[:2])
    os.makedirs(d)
    path = os.path.join(d, bid[2:] + ".debug")
    os.symlink(dbg, path)
    line = ctx.attach_fails(exe, "link")
    check(("refused %s: a symlink" % path) in line, line)


@test
def no_debug_file_says_where_it_looked(ctx):
    exe, _, _ = ctx.build("prog")
    line = ctx.attach_fails(exe, "none")
    eq(line, "sds-bpf: symbol '%s' not found in %s: the file is stripped "
       "(no .symtab) and has no debug file under %s; rebuild without -s, "
       "install its debug symbols (-dbgsym) or use a binary with symbols"
       % (FUNC, exe, ctx.root), "attach's error")


@test
def own_symtab_says_so(ctx):
    exe = os.path.join(ctx.tmp, "full")
    ctx.sh(["gcc", "-g", "-O2", "-o", exe, os.path.join(HERE, "prog.c")])
    counted(ctx, exe, "full", ["%s's .symtab" % exe])


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(
        __file__, SUITE, Ctx, needs=(SDS,), bpffs=True,
        tools=("gcc", "objcopy", "strip", "readelf", "bpftool")))
