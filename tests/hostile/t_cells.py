# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Shared limits only among the uids the operator trusts together (issue 30
finding 7; docs/TRUST.md, "Shared limits").

One root loader with --socket-mode 0666 attached to a staged copy of
cells_squat (tests/hostile/cells_squat.c; root's file, so by default only
root's processes share the app's cells).  The attacker, that very TARGET
run as nobody, registers as libsds does and sets every point's permits to
2^40 and every permit row to 2^30 in a loop, faster than any tick's
repair.  The victim, the same program run as root, makes guarded calls
under a concurrency limit of 2: it must see exactly the limit, and only
its own calls, while the attacker squats.  With --share-uid naming
nobody, nobody's processes share the app's cells again and the squat
refuses every call, as every shared limit allows (and as every process of
the app did before this rule).
"""

import errno
import json
import os
import subprocess
import time

import sdstest
from sdstest import NOBODY, SDS, Fail, check, eq, get_point, log
from hostile_lib import AS_NOBODY, test
from guarded import Target

APP = "cells"
TICK = 0.100
N = 200
STRATEGIES = {"version": 1, "points": {"conc": {"concurrent_threshold": 2}}}


def start(ctx, extra=(), owner=None):
    """The loader on a staged cells_squat (@owner's file when given), and
    a root victim of it."""
    prog = ctx.hostile("cells_squat")
    if owner is not None:
        os.chown(prog, owner, owner)
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump(STRATEGIES, f)
    loader = sdstest.AttachProcess(
        ctx, ["--app", APP, "--strategies", spath, "--socket-mode", "0666"]
        + list(extra) + [prog], APP)
    victim = Target(ctx, prog)
    victim.open(APP)
    victim.cmd("point conc")
    return loader, victim, prog


def squat(ctx, loader, prog):
    """Start the attacker as nobody; return it once it writes the cells,
    and has done so for a few of the loader's ticks."""
    p = ctx.spawn([prog, "squat", loader.sock], nobody=True,
                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = p.stdout.readline().decode(errors="replace").strip()
    log("squat: " + line)
    if not line.startswith("squatting"):
        raise Fail("the attacker did not squat: %r (exit %s)"
                   % (line, p.poll()))
    time.sleep(3 * TICK)
    check(p.poll() is None, "the attacker exited: %s" % p.poll())
    return p


def stop(p):
    p.kill()
    p.wait(10)


def totals(ctx, name):
    r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"], ctx.env,
                          ctx.tmp, ctx.others)
    check(r.rc == 0, "sds-bpf stats: %r" % r)
    t = get_point(json.loads(r.out), name).get("total", {})
    return t.get("visits"), t.get("downgrades")


def calls(victim, n):
    r = victim.call("conc", n)
    return r["passed"], r["downgraded"]


@test
def cells_other_uid_cannot_squat(ctx):
    """nobody, running TARGET, rewrites the cells it got in a loop; root's
    victim makes N calls one at a time under a limit of 2: N passed, 0
    refused; 3 holders: exactly 1 refused, 2 holders: 0.  stats count
    exactly the victim's calls and refusals."""
    loader, victim, prog = start(ctx)
    p = squat(ctx, loader, prog)
    eq(calls(victim, N), (N, 0),
       "root's calls while nobody squats (passed, downgraded)")
    eq(victim.hold("conc", 3), 1, "refused of 3 holders, limit 2")
    victim.release()
    eq(victim.hold("conc", 2), 0, "refused of 2 holders, limit 2")
    victim.release()
    eq(calls(victim, N), (N, 0), "root's calls after the holds")
    check(p.poll() is None, "the attacker exited: %s" % p.poll())
    stop(p)
    eq(totals(ctx, "conc"), (2 * N + 5, 1), "stats conc (visits, downgrades)")


@test
def cells_other_uid_own_limits(ctx):
    """A guarded process of nobody (not squatting: libsds) gets limits of
    its own: while root's victim holds both permits of a limit of 2,
    nobody's 3 holders see exactly 1 refused, and root's third holder is
    refused as before."""
    loader, victim, prog = start(ctx)
    other = Target(ctx, prog, prefix=AS_NOBODY)
    other.open(APP)
    other.cmd("point conc")
    eq(victim.hold("conc", 2), 0, "root: refused of 2 holders")
    eq(other.hold("conc", 3), 1,
       "nobody: refused of 3 holders while root holds 2, limit 2")
    other.release()
    victim.release()
    eq(victim.hold("conc", 3), 1, "root: refused of 3 holders")
    victim.release()


@test
def cells_share_uid_shares(ctx):
    """--share-uid naming nobody: nobody's processes share the app's cells
    with root's, so a squat holds every permit: of N calls of root's
    victim, N are refused, and a guarded process of nobody's shares root's
    limit (root holds 2 of 2, nobody's 1 holder is refused).  Once the
    attacker is gone the loader's repair gives the limit back: N pass."""
    loader, victim, prog = start(ctx, ["--share-uid", str(NOBODY)])
    other = Target(ctx, prog, prefix=AS_NOBODY)
    other.open(APP)
    other.cmd("point conc")
    eq(victim.hold("conc", 2), 0, "root: refused of 2 holders")
    eq(other.hold("conc", 1), 1, "nobody: refused of 1 holder, root holds 2")
    other.release()
    victim.release()
    p = squat(ctx, loader, prog)
    eq(calls(victim, N), (0, N),
       "root's calls while a shared nobody squats (passed, downgraded)")
    stop(p)
    time.sleep(3 * TICK + 0.1)
    eq(calls(victim, N), (N, 0), "root's calls after the squat")


def shares_with_root(ctx, victim, prog, prefix):
    """Does a guarded process run with @prefix share root's limit of 2?
    Root holds both permits; the other's one holder: refused (1) or not."""
    other = Target(ctx, prog, prefix=prefix)
    other.open(APP)
    other.cmd("point conc")
    eq(victim.hold("conc", 2), 0, "root: refused of 2 holders")
    refused = other.hold("conc", 1)
    other.release()
    victim.release()
    return refused


@test
def cells_share_gid(ctx):
    """--share-gid 12345: a nobody process with supplementary group 12345
    shares root's limit (its 1 holder refused while root holds 2 of 2),
    one without it does not (0 refused)."""
    loader, victim, prog = start(ctx, ["--share-gid", "12345"])
    with_group = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                  "--groups=12345"]
    eq(shares_with_root(ctx, victim, prog, with_group), 1,
       "nobody in group 12345: refused of 1 holder, root holds 2 of 2")
    eq(shares_with_root(ctx, victim, prog, AS_NOBODY), 0,
       "nobody in no group: refused of 1 holder, root holds 2 of 2")


@test
def cells_target_owner_shares(ctx):
    """No option, TARGET nobody's file: nobody's processes share its
    limits with root's (1 holder refused while root holds 2 of 2)."""
    loader, victim, prog = start(ctx, owner=NOBODY)
    eq(shares_with_root(ctx, victim, prog, AS_NOBODY), 1,
       "nobody, TARGET nobody's: refused of 1 holder, root holds 2 of 2")


@test
def cells_own_cannot_resize(ctx):
    """The cells map of a uid's own is a memfd the loader maps too: nobody
    can neither shrink nor grow it (EPERM: sealed), and the loader, which
    repairs it every tick, lives on: 5 ticks later root's N calls pass and
    3 holders see exactly 1 refused."""
    loader, victim, prog = start(ctx)
    p = ctx.spawn([prog, "resize", loader.sock], nobody=True,
                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = p.stdout.readline().decode(errors="replace").strip()
    log("resize: " + line)
    eq(line, "shrink errno=%d grow errno=%d" % (errno.EPERM, errno.EPERM),
       "nobody's resizes of its own cells")
    time.sleep(5 * TICK)
    check(loader.p.poll() is None, "the loader exited: %s" % loader.p.poll())
    eq(calls(victim, N), (N, 0), "root's calls (passed, downgraded)")
    eq(victim.hold("conc", 3), 1, "refused of 3 holders, limit 2")
    victim.release()
    stop(p)


@test
def cells_own_new_strategy_full_bucket(ctx):
    """A new strategy starts the bucket of a uid's own cells full, as it
    does the shared one's: nobody's process takes 3 of 5 calls of a bucket
    of 3 (rate 1/s); version 2 makes it a bucket of 8: 8 of 8 pass (a
    bucket left as it was would let about 5 through)."""
    prog = ctx.hostile("cells_squat")
    spath = os.path.join(ctx.tmp, "strategies.json")

    def write(version, bucket):
        with open(spath + ".new", "w") as f:
            json.dump({"version": version, "points": {
                "tok": {"token_rate": 1, "token_bucket": bucket}}}, f)
        os.rename(spath + ".new", spath)

    write(1, 3)
    sdstest.AttachProcess(ctx, ["--app", APP, "--strategies", spath,
                                "--socket-mode", "0666", prog], APP)
    other = Target(ctx, prog, prefix=AS_NOBODY)
    other.open(APP)
    other.cmd("point tok")
    r = other.call("tok", 5)
    eq((r["passed"], r["downgraded"]), (3, 2),
       "nobody, bucket 3 (passed, downgraded)")
    write(2, 8)
    deadline = time.monotonic() + 10
    while True:
        r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"],
                              ctx.env, ctx.tmp, ctx.others)
        if r.rc == 0 and json.loads(r.out).get("strategies_version") == 2:
            break
        check(time.monotonic() < deadline, "version 2 not taken in 10 s")
        time.sleep(0.05)
    time.sleep(2 * TICK)
    r = other.call("tok", 8)
    eq((r["passed"], r["downgraded"]), (8, 0),
       "nobody, a new bucket of 8 (passed, downgraded)")


@test
def cells_share_bad_input(ctx):
    """--share-uid/--share-gid with no such user or group, or nothing:
    one line on stderr and a non-zero exit, before anything is loaded."""
    prog = ctx.hostile("cells_squat")
    for args, want in (
            (["--share-uid", "no-such-user-sds"],
             "bad --share-uid 'no-such-user-sds': no such user"),
            (["--share-gid", "no-such-group-sds"],
             "bad --share-gid 'no-such-group-sds': no such group"),
            (["--share-uid", ","], "bad --share-uid ','"),
            (["--share-uid", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"],
             "at most 16")):
        r = subprocess.run([SDS, "attach", "--app", APP] + args + [prog],
                           env=ctx.env, cwd=ctx.tmp, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30)
        lines = r.stderr.strip().splitlines()
        check(r.returncode != 0 and len(lines) == 1 and want in lines[0],
              "attach %r: exit %d, stderr %r, want one line with %r"
              % (args, r.returncode, r.stderr, want))


@test
def cells_own_leave_nothing_asan(ctx):
    """The loader under ASan/LSan/UBSan (build/test/sds-bpf-asan): two
    guarded processes of nobody share one cells map of their own (each
    refused 1 of 3 holders with the other gone: the limit is theirs), a
    third comes after both left (a new map), the squatter writes its own
    in a loop and is killed; SIGINT: exit 0 and nothing reported."""
    asan = os.path.join(sdstest.BUILD, "test", "sds-bpf-asan")
    check(os.path.exists(asan), "%s missing: run make hostile-bins" % asan)
    prog = ctx.hostile("cells_squat")
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump(STRATEGIES, f)
    loader = sdstest.AttachProcess(
        ctx, ["--app", APP, "--strategies", spath, "--socket-mode", "0666",
              prog], APP, binary=asan)
    a = Target(ctx, prog, prefix=AS_NOBODY)
    a.open(APP)
    a.cmd("point conc")
    b = Target(ctx, prog, prefix=AS_NOBODY)
    b.open(APP)
    b.cmd("point conc")
    eq(a.hold("conc", 1), 0, "nobody a: refused of 1 holder")
    eq(b.hold("conc", 2), 1, "nobody b: refused of 2 while a holds 1 of 2")
    b.release()
    a.release()
    p = squat(ctx, loader, prog)
    stop(p)
    a.cleanup()
    b.cleanup()
    time.sleep(3 * TICK)
    c = Target(ctx, prog, prefix=AS_NOBODY)
    c.open(APP)
    c.cmd("point conc")
    eq(c.hold("conc", 3), 1, "nobody c: refused of 3 holders, limit 2")
    c.release()
    c.cleanup()
    loader.end()
    err = loader.stderr()
    eq(loader.p.returncode, 0, "the ASan loader's exit status (stderr: %s)"
       % err[-4000:])
    check("Sanitizer" not in err and "runtime error" not in err,
          "the sanitizers reported: %s" % err[-4000:])
