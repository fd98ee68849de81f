# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A flags region clients cannot forge (issue 8; docs/TRUST.md, "The flags
region"; bpf/sds_flags.h layout 5).

One root loader attached to a staged copy of region_forge
(tests/hostile/region_forge.c) with --socket-mode 0666; a victim (the same
program in its guarded.c mode, run as root) and an attacker (`forge`, run
as nobody) that registers as libsds does, then tries every way to write
the loader's read-only flags map and writes garbage into every cell of the
writable cells map, which it shares with the victim (--share-uid: see
t_cells.py for a uid that does not).  The victim must see exactly what the strategies say,
up to the app's documented shared limits while the attacker lives, and
exactly again a tick or two after it is gone; numbers come from the
victim's own reports and `sds-bpf stats --json`.
"""

import errno
import json
import os
import subprocess
import time

import sdstest
from sdstest import SDS, Fail, check, eq, get_point, log
from hostile_lib import test
from guarded import Target

APP = "region"
# Strategies of the victim's points; "free" has none.
STRATEGIES = {"version": 1, "points": {
    "kill": {"visit_threshold": 0},
    "conc": {"concurrent_threshold": 2},
    "tok": {"token_rate": 1, "token_bucket": 3},
    "vis": {"visit_threshold": 20},
}}


Loader = sdstest.AttachProcess


def start(ctx):
    """The loader on a staged region_forge, and a root victim of it."""
    prog = ctx.hostile("region_forge")
    spath = os.path.join(ctx.tmp, "strategies.json")
    with open(spath, "w") as f:
        json.dump(STRATEGIES, f)
    # nobody shares the app's cells (docs/TRUST.md "Shared limits"): the
    # forgery reaches the victim's cells, which the loader must repair.
    loader = Loader(ctx, ["--app", APP, "--strategies", spath,
                          "--socket-mode", "0666",
                          "--share-uid", str(sdstest.NOBODY), prog], APP)
    victim = Target(ctx, prog)
    victim.open(APP)
    for p in ("kill", "free", "conc", "tok", "slow", "vis"):
        victim.cmd("point %s" % p)
    return loader, victim, prog


def forge(ctx, loader, prog, stay_ms):
    """Run the attacker as nobody; its report {name: value} once it has
    written the cells (it stays registered @stay_ms ms, then exits)."""
    p = ctx.spawn([prog, "forge", loader.sock, str(stay_ms)], nobody=True,
                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    rep = {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = p.stdout.readline().decode(errors="replace").strip()
        if not line:
            break
        log("forge: " + line)
        if line == "done":
            return p, rep
        name, _, rest = line.partition(" ")
        rep[name] = dict(kv.split("=", 1) for kv in rest.split()
                         if "=" in kv) or rest
    raise Fail("the attacker did not finish its attack: %r (exit %s)"
               % (rep, p.poll()))


def wait_exit(p, what):
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        raise Fail("%s did not exit" % what)
    eq(rc, 0, "%s exit status" % what)


def stats(ctx):
    r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"], ctx.env,
                          ctx.tmp, ctx.others)
    check(r.rc == 0, "sds-bpf stats: %r" % r)
    return json.loads(r.out)


def totals(ctx, name):
    t = get_point(stats(ctx), name).get("total", {})
    return t.get("visits"), t.get("downgrades")


def call(victim, point, n):
    r = victim.call(point, n)
    return r["passed"], r["downgraded"]


@test
def region_flags_read_only(ctx):
    """Every way to write the loader's map through the fd a client gets
    fails: mmap PROT_WRITE and reopening for writing (EACCES), write(2)
    (EBADF), mprotect of the PROT_READ mapping (EACCES), and a store into
    every field of the header and of every entry (SIGSEGV each).  The
    victim's kill switch and free point stay exact."""
    loader, victim, prog = start(ctx)
    p, rep = forge(ctx, loader, prog, 0)
    eq(rep.get("registered"), "yes", "the attacker registered")
    eq(int(rep["mmap_write"]["errno"]), errno.EACCES, "mmap PROT_WRITE")
    eq(int(rep["reopen_rdwr"]["errno"]), errno.EACCES,
       "open /proc/self/fd/N O_RDWR")
    eq(int(rep["write"]["errno"]), errno.EBADF, "write(2)")
    check(int(rep["ftruncate"]["errno"]) != 0, "ftruncate worked")
    eq(int(rep["mmap_read"]["errno"]), 0, "mmap PROT_READ")
    eq(int(rep["mprotect"]["errno"]), errno.EACCES, "mprotect to write")
    n = int(rep["writes"]["of"])
    check(n > 1024 * 15, "only %d writes tried" % n)
    eq(int(rep["writes"]["faulted"]), n, "stores that faulted")
    wait_exit(p, "the attacker")
    eq(call(victim, "kill", 100), (0, 100), "kill switch (passed, downgraded)")
    eq(call(victim, "free", 100), (100, 0), "no strategy (passed, downgraded)")
    eq(totals(ctx, "kill"), (100, 100), "stats kill (visits, downgrades)")
    eq(totals(ctx, "free"), (100, 0), "stats free (visits, downgrades)")


@test
def region_forged_cells(ctx):
    """Garbage in every cell of the cells map (permits 2^62, times and
    counters 2^63, every permit row 2^30): while the attacker lives the
    kill switch stays exactly downgraded and the free point passes every
    call; a tick or two after it exits, the concurrency point refuses
    exactly the calls beyond its limit again and the token point passes
    exactly its bucket."""
    loader, victim, prog = start(ctx)
    # Before: limit 2 of 3 holders; a bucket of 3 of 5 calls.
    eq(victim.hold("conc", 3), 1, "conc refused before")
    victim.release()
    eq(call(victim, "tok", 5), (3, 2), "tok before (passed, downgraded)")
    p, rep = forge(ctx, loader, prog, 1000)
    eq(rep.get("forged", {}).get("cells"), "1024", "cells forged")
    eq(call(victim, "kill", 50), (0, 50), "kill switch, cells forged")
    eq(call(victim, "free", 50), (50, 0), "free point, cells forged")
    wait_exit(p, "the attacker")
    sdstest.wait_ticks(lambda: stats(ctx), 3)     # its cells re-based
    eq(victim.hold("conc", 3), 1,
       "conc: refused of 3 holders, limit 2, after the attacker left")
    victim.release()
    eq(victim.hold("conc", 2), 0, "conc: refused of 2 holders, limit 2")
    victim.release()
    eq(call(victim, "tok", 5), (3, 2),
       "tok: a bucket of 3 after the attacker left (passed, downgraded)")
    eq(call(victim, "kill", 50), (0, 50), "kill switch after")
    eq(totals(ctx, "kill"), (100, 100), "stats kill (visits, downgrades)")
    eq(totals(ctx, "free"), (50, 0), "stats free (visits, downgrades)")
    eq(totals(ctx, "conc"), (8, 2), "stats conc (visits, downgrades)")
    eq(totals(ctx, "tok"), (10, 4), "stats tok (visits, downgrades)")


@test
def region_forged_budget(ctx):
    """Exact trips (PROTOCOL.md, "Exact trips"): with visit_threshold 20
    and 10 calls passed, the attacker writes 2^63 into every cell's
    visit_spent (a count above any mark: forged).  A tick later the loader
    has re-based it from the kernel's window, which no client writes: of
    50 calls exactly the 10 left pass."""
    loader, victim, prog = start(ctx)
    eq(call(victim, "vis", 10), (10, 0), "vis before (passed, downgraded)")
    p, rep = forge(ctx, loader, prog, 0)
    eq(rep.get("forged", {}).get("cells"), "1024", "cells forged")
    wait_exit(p, "the attacker")
    sdstest.wait_ticks(lambda: stats(ctx), 3)     # its cells re-based
    eq(call(victim, "vis", 50), (10, 40),
       "vis after the forgery (passed, downgraded)")
    eq(totals(ctx, "vis"), (60, 40), "stats vis (visits, downgrades)")


@test
def region_drill_delay_unreachable(ctx):
    """A delay drill of 50 ms: the attacker writes 2^63 into every cell a
    guard may write; the delay lives in the read-only map it cannot reach,
    so each of the victim's calls takes the drill's 50 ms (< 50 + 40 ms),
    and stats count exactly the victim's 4 delays made after the loader
    saw the forged counter (its leap counts nothing)."""
    loader, victim, prog = start(ctx)
    r = sdstest.run_group([SDS, "drill", "--app", APP, "slow", "--delay-ms",
                           "50", "--for", "60"], ctx.env, ctx.tmp, ctx.others)
    check(r.rc == 0, "sds-bpf drill: %r" % r)
    p, rep = forge(ctx, loader, prog, 3000)
    eq(int(rep["writes"]["faulted"]), int(rep["writes"]["of"]),
       "stores into the drill's settings that faulted")
    # The loader folds a forged leap (and whatever honest counts share its
    # tick) as nothing: let it see the leap first (of 2 ticks done, one
    # began after the forgery).
    sdstest.wait_ticks(lambda: stats(ctx), 2)
    t0 = time.monotonic()
    r = victim.call("slow", 4, times=True)
    took = time.monotonic() - t0
    eq((r["passed"], r["downgraded"]), (4, 0), "slow (passed, downgraded)")
    gaps = [b - a for a, b in zip(r["times"], r["times"][1:])]
    check(all(50e6 <= g < 90e6 for g in gaps),
          "calls under a 50-ms delay drill took %r ns" % gaps)
    check(took < 4 * 0.090 + 1.0, "4 calls took %.3f s" % took)
    d = get_point(stats(ctx), "slow").get("drill") or {}
    eq((d.get("delays"), d.get("faults")), (4, 0),
       "stats drill (delays, faults) with the counters forged")
    wait_exit(p, "the attacker")
