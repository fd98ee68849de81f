# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
How libsds finds its loader: one libsds.so shared by two apps with two
loaders, a loader that starts after the program, and a forked child
that re-registers by itself (sds.h) and is guarded.
"""

from guard_lib import (Exp, FIND_MAX, SHARED, SHARED2, STATIC, assert_totals,
                       setup, test)
from sdstest import Fail, check, log


# ---------------------------------------------------------------------------
# libsds.so shared by two apps

@test
def shared_library_two_apps_two_loaders(ctx):
    """Both programs run build/lib/libsds.so: one file, one set of probe
    sites for the host.  Each loader counts and guards only its app."""
    pa = ctx.copy(SHARED)
    pb = ctx.copy(SHARED2)
    sa = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}}, "a.json")
    sb = ctx.write_strategies({"version": 1, "points": {
        "order": {"exception_threshold": 1000},
        "pay": {"concurrent_threshold": 1}}}, "b.json")
    ctx.attach(pa, "appa", sa)
    ctx.attach(pb, "appb", sb)
    a = ctx.start(pa, "appa")
    b = ctx.start(pb, "appb")
    # A process naming appb but running appa's executable may not register
    # with appb's loader (not its TARGET, docs/TRUST.md): it runs
    # unguarded, uncounted by either loader.
    c = ctx.start(pa, "appb")
    ea, eb, ebp, eap = Exp(), Exp(), Exp(), Exp()
    r = a.call("order", 300, ea, err=3)
    check(r["downgraded"] == 300, "appa kill switch: %r" % r)
    r = b.call("order", 500, eb, err=7)
    check(r["passed"] == 500, "appb order: %r" % r)
    r = c.call("order", 200, None, err=2)
    check(r["passed"] == 200, "appb order from the other exe: %r" % r)
    a.call("pay", 40, eap, err=4)
    refused = b.hold("pay", 2, ebp)
    check(refused == 1, "appb pay limit 1, 2 threads: %d refused" % refused)
    b.release(1, ebp)
    assert_totals(ctx, "appa", "order", ea)
    assert_totals(ctx, "appb", "order", eb)
    assert_totals(ctx, "appa", "pay", eap)
    assert_totals(ctx, "appb", "pay", ebp)


# ---------------------------------------------------------------------------
# No loader, then a loader

def _no_loader(ctx, variant):
    path = ctx.copy(variant)
    t = ctx.start(path, "app")
    r = t.call("order", 20000, None, err=5000)
    check(r["passed"] == 20000, "no loader: %r, want every call passed" % r)
    r = t.rate("order", 0.2)
    check(r["downgraded"] == 0, "no loader: %r" % r)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    ctx.attach(path, "app", spath)
    # From the loader's socket, not its start: how long a loader takes to
    # start (BPF loads, attaches; longer beside other suites) is not what
    # this checks, libsds's finding a loader that serves (its 1-s poll) is.
    t.cmd("mark")
    r = t.first_down("order", None, every_us=1000, max_ms=6000)
    check(r["elapsed_ns"] >= 0, "a loader started after the program: not "
          "obeyed within 6 s")
    found = r["since_mark_ns"] / 1e9
    log("found the loader %.2f s after its socket appeared" % found)
    check(found <= FIND_MAX, "a loader started after the program was obeyed "
          "%.2f s after its socket appeared, want within ~1-2 s (%.1f)"
          % (found, FIND_MAX))
    exp = Exp()
    exp.add({"downgraded": 1})
    r = t.call("order", 100, exp)
    check(r["downgraded"] == 100, "%r" % r)
    assert_totals(ctx, "app", "order", exp,
                  what="counting from registration (the calls before it "
                  "passed unseen; the first one after it was downgraded)")


@test
def no_loader_then_loader_static(ctx):
    _no_loader(ctx, STATIC)


@test
def no_loader_then_loader_shared(ctx):
    _no_loader(ctx, SHARED)


# ---------------------------------------------------------------------------
# fork(): a child re-registers by itself (sds.h) and is guarded

def _fork(ctx, variant):
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 1}}},
        variant)
    eo, ep = Exp(), Exp()
    # A child forked before the parent made any guarded call re-registers
    # by itself and is guarded.
    r = t.fork_call("order", 100, eo, wait_ms=300)
    check(r["downgraded"] == 100, "a child forked before any guarded call, "
          "300 ms on, under the kill switch: %r, want all 100 downgraded" % r)
    r = t.fork_call("pay", 50, ep, wait_ms=300, err=5)
    check(r["passed"] == 50, "a child's calls of pay: %r" % r)
    assert_totals(ctx, "app", "order", eo, what="children's calls")
    assert_totals(ctx, "app", "pay", ep, what="children's calls")
    # Then the parent hits every probe site, as a server does before it
    # forks more workers.
    t.call("order", 10, eo)
    t.call("pay", 10, ep, err=2)
    errors = []
    for point, exp, want, err in (("order", eo, "downgraded", 0),
                                  ("pay", ep, "passed", 5)):
        try:
            r = t.fork_call(point, 100, exp, wait_ms=300, err=err)
            if r[want] != 100:
                errors.append("child's calls of %s 300 ms after fork(): "
                              "%r, want all 100 %s" % (point, r, want))
        except Fail as e:
            hint = ""
            if "killed by signal 11" in str(e):
                hint = (" (the child has the parent's probe sites, already "
                        "rewritten by the kernel into calls of the parent's "
                        "[uprobes-trampoline], but not that mapping)")
            errors.append("child's calls of %s after fork(), the parent "
                          "having called %s before: %s%s"
                          % (point, point, e, hint))
    check(t.alive(), "the parent died")
    check(not errors, " | ".join(errors))
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)


@test
def fork_child_guarded_static(ctx):
    _fork(ctx, STATIC)


@test
def fork_child_guarded_shared(ctx):
    _fork(ctx, SHARED)
