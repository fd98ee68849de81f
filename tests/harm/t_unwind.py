# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Returns that do not break unwinding (issue 9, docs/UNWIND.md).  A
uretprobe plants the kernel's trampoline in the return slot, which has no
unwind information: a C++ exception or a Rust panic through the probed
function would end in std::terminate (exit 134).  In a TARGET that can
unwind, `attach` therefore puts a uprobe on each `ret` of the function
instead (loader/target/exits.c), and counts a call that ends without one as an
exception when it is caught.

- C++ (unwind_ex: f calls g, which throws every 2nd call, caught in main),
  three nested probed functions with destructors on the way
  (unwind_nested), and Rust (unwind_panic: a panic inside catch_unwind,
  probed by its mangled symbol): with default options the program prints
  exactly what it prints unprobed and exits 0; every call is counted
  (visits exact), the normal returns timed (latency count exact), the
  exceptional exits counted as exceptions (exact), none left in flight;
  attach says each point has a probe on each ret;
- a C++ function that ends in a tail call (unwind_tail) cannot have every
  exit probed: attach says entry-only and why (naming the jump), visits
  exact, the program unharmed;
- a leaf (unwind_ex's h) beside the thrower: nothing below it can throw
  (loader/target/nothrow.c), so it keeps its return probe, latency exact,
  and the exception through f is still caught;
- plain C (unwind_plain) keeps its pair: visits, latency count and
  exceptions (err=neg) exact, and attach prints no entry-only line;
- Go counts entries only (its runtime's stack walks).
"""

import json
import os
import re
import subprocess
import time

import sdstest
from harm_lib import test
from sdstest import SDS, check, eq

ENTRY_ONLY = "returns: entry-only"
EXITS = "returns: a probe on each of its"


def stats(ctx, app):
    r = subprocess.run([SDS, "stats", "--json", "--app", app], env=ctx.env,
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 0, "stats: %r" % r)
    return json.loads(r.stdout)


def run(ctx, argv):
    """Run @argv to its end: (exit status, stdout)."""
    r = subprocess.run(argv, env=ctx.env, cwd=ctx.tmp, capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout


def wait_visits(ctx, app, name, want):
    """The point once its visits reach @want (never more)."""
    def got():
        p = sdstest.get_point(stats(ctx, app), name)
        return p if p["total"]["visits"] >= want else None
    p = sdstest.wait_until(got, time.time() + 5, "point %s: visits never "
                           "reached %d" % (name, want))
    eq(p["total"]["visits"], want, "%s visits" % name)
    return p


def attach_and_run(ctx, argv, specs, want, extra=()):
    """@argv prints @want and exits 0 unprobed; so it does under `attach
    @extra` with points @specs (NAME=SYMBOL).  Returns the loader."""
    app = argv[0].rsplit("/", 1)[-1]
    rc, out = run(ctx, argv)
    eq((rc, out), (0, want), "%s unprobed: exit status, output" % app)
    a = sdstest.AttachProcess(ctx, list(extra) + [argv[0]] + specs, app)
    rc, out = run(ctx, argv)
    eq(rc, 0, "%s under attach: exit status (134: std::terminate)" % app)
    eq(out, want, "%s under attach: output" % app)
    return a


def check_entry_only(ctx, argv, specs, calls, want, extra=()):
    """attach_and_run(), each point counting @calls visits and nothing of
    returns; attach's table says entry-only for each.  Returns attach's
    output."""
    app = argv[0].rsplit("/", 1)[-1]
    a = attach_and_run(ctx, argv, specs, want, extra)
    for n in [s.split("=", 1)[0] for s in specs]:
        p = wait_visits(ctx, app, n, calls)
        eq(p["latency_ns"]["count"], 0, "%s latency count (entry-only)" % n)
        eq(p["total"]["exceptions"], 0, "%s exceptions (entry-only)" % n)
        eq(p["concurrency"], 0, "%s concurrency" % n)
    eq(a.stdout().count(ENTRY_ONLY), len(specs),
       "entry-only lines in attach's table: %r" % a.stdout())
    return a.stdout()


def check_exits(ctx, argv, specs, calls, thrown, want):
    """attach_and_run(); each point counts @calls visits, @calls - @thrown
    returns timed and @thrown exceptions, exactly, and none in flight;
    attach's table says each has a probe on each ret."""
    app = argv[0].rsplit("/", 1)[-1]
    a = attach_and_run(ctx, argv, specs, want)
    for n in [s.split("=", 1)[0] for s in specs]:
        p = wait_visits(ctx, app, n, calls)
        eq(p["total"]["exceptions"], thrown, "%s exceptions (unwound)" % n)
        eq(p["latency_ns"]["count"], calls - thrown,
           "%s latency count (normal returns)" % n)
        eq(p["concurrency"], 0, "%s concurrency" % n)
    eq(a.stdout().count(EXITS), len(specs),
       "exit-probe lines in attach's table: %r" % a.stdout())
    check(ENTRY_ONLY not in a.stdout(), "entry-only: %r" % a.stdout())


@test
def test_unwind_cxx_exception_caught(ctx):
    check_exits(ctx, [ctx.program("unwind_ex"), "100", "2"], ["f=_Z1fii"],
                100, 50, "caught 50\nsum 50\n")


@test
def test_unwind_cxx_leaf_pair_beside_thrower(ctx):
    """h, a leaf f calls before g throws through f: h keeps its return
    probe (nothing below it can throw), its 100 latencies exact; f, probed
    at its exits, counts the 50 exceptions; the program catches them as
    unprobed."""
    argv = [ctx.program("unwind_ex"), "100", "2"]
    a = attach_and_run(ctx, argv, ["f=_Z1fii", "h=h"], "caught 50\nsum 50\n")
    p = wait_visits(ctx, "unwind_ex", "h", 100)
    eq((p["returns"], p["latency_ns"]["count"], p["total"]["exceptions"],
        p["concurrency"]), ("pair", 100, 0, 0), "h: returns, latencies, "
       "exceptions, in flight")
    p = wait_visits(ctx, "unwind_ex", "f", 100)
    eq((p["returns"], p["latency_ns"]["count"], p["total"]["exceptions"],
        p["concurrency"]), ("exits", 50, 50, 0), "f: returns, latencies, "
       "exceptions, in flight")
    check("returns: pair (cannot unwind: a leaf" in a.stdout(),
          "attach's table: h's pair: %r" % a.stdout())
    check(re.search(r"no return probe; may unwind: calls g -> "
                    r"__cxa_allocate_exception\)", a.stdout()),
          "attach's table: why f has exit probes: %r" % a.stdout())


@test
def test_unwind_cxx_three_nested(ctx):
    check_exits(ctx, [ctx.program("unwind_nested"), "99", "3"],
                ["a=a", "b=b", "c=c"], 99, 33,
                "caught 33\nsum 165\ncleanups 297\n")


@test
def test_unwind_cxx_tail_call_entry_only(ctx):
    out = check_entry_only(ctx, [ctx.program("unwind_tail"), "100", "2"],
                           ["t=tail"], 100, "caught 50\nsum 0\n")
    check(re.search(r"it jumps at \+0x[0-9a-f]+ to thrower\+0x0 \(a tail "
                    r"call", out), "attach's reason: %r" % out)


def rust_symbol(path):
    """The mangled symbol of unwind_panic's `work` (its hash varies)."""
    r = subprocess.run(["nm", path], capture_output=True, text=True,
                       timeout=10)
    m = re.search(r"\b(_ZN12unwind_panic4work17h[0-9a-f]{16}E)\b", r.stdout)
    check(m, "no _ZN12unwind_panic4work17h...E in nm %s" % path)
    return m.group(1)


@test
def test_unwind_rust_panic_caught(ctx):
    path = os.path.join(sdstest.BUILD, "test", "harm", "unwind_panic")
    check(os.path.exists(path),
          "%s missing: no /usr/bin/rustc when harm-bins "
          "was built (make deps installs Debian's rustc, then make harm-bins)" % path)
    check_exits(ctx, [path, "100", "2"], ["work=" + rust_symbol(path)],
                100, 50, "caught 50\nsum 50\n")


@test
def test_unwind_plain_c_keeps_pair(ctx):
    ex = ctx.program("unwind_plain")
    a = sdstest.AttachProcess(ctx, [ex, "w=work:err=neg"], "unwind_plain")
    rc, out = run(ctx, [ex, "100"])
    eq(rc, 0, "unwind_plain exit status")
    eq(out, "sum 2400\n", "unwind_plain output")
    p = wait_visits(ctx, "unwind_plain", "w", 100)
    eq(p["latency_ns"]["count"], 100, "latency count (pair)")
    eq(p["total"]["exceptions"], 50, "exceptions (err=neg)")
    eq(p["concurrency"], 0, "concurrency")
    check(ENTRY_ONLY not in a.stdout(),
          "plain C shown entry-only: %r" % a.stdout())


@test
def test_unwind_go_stack_walks_survive(ctx):
    """Go: 1,000 goroutines recurse 40 deep through main.work (~12 KiB of
    frames: each stack grows from 2 KiB three times and is copied, a GC
    walks them): under attach's default the service lives and prints what
    it prints unprobed, every call counted (1,000 x 41 visits, exact),
    entry-only for the Go reason; `hist` of the point says it has no
    latencies (exit 1, one line).  The budget is off: Go's prologue is a
    stepped site, and this test counts, it does not budget."""
    prog = ctx.program("unwind_go")
    check_entry_only(ctx, [prog, "1000", "40"], ["w=main.work"], 1000 * 41,
                     "total %d\n" % (1000 * 41), extra=["--max-overhead", "0"])
    a = ctx.loaders[-1]
    check("a Go binary" in a.stdout(), "attach's reason: %r" % a.stdout())
    r = subprocess.run([SDS, "hist", "--app", "unwind_go", "w"], env=ctx.env,
                       capture_output=True, text=True, timeout=10)
    eq((r.returncode, r.stdout, r.stderr),
       (1, "", "sds-bpf: unwind_go: point 'w' counts entries only: it has no latencies "
        "(stats --json says why: returns_why)\n"), "hist of an entry-only point")
