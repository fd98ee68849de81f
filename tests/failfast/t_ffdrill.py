# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Error drills on function points: a share of the failfast= operations
inside the function fail (here in the dry run: counted as drilled), the
drill ends at its expiry, and bad drills are refused in one line.
"""

import math
import time

from ff_lib import check, eq, test

SPECS = ["ffile=fetch_file:failfast=open:err=neg", "plain=fetch:err=neg"]


def drill(ctx, args):
    return ctx.sds(["drill", "--app", "fftarget"] + args)


@test
def drill_ratio_and_expiry(ctx):
    """--ratio 30 over 3,000 calls: drilled within 5 standard deviations
    of 900, stats' drill faults the same count; none once it expired."""
    ctx.attach(SPECS)
    t = ctx.target()
    r = drill(ctx, ["ffile", "--error", "--ratio", "30", "--for", "3"])
    eq(r.rc, 0, "drill: %r" % r)
    n = 3000
    t0 = time.monotonic()
    eq(t.run("file", ctx.file, n)[0], {"OK": n}, "fetch_file, dry")
    check(time.monotonic() - t0 < 2.5, "the calls outlasted the drill")
    f = ctx.ff("ffile")
    bound = 5 * math.sqrt(n * 0.3 * 0.7)
    check(abs(f["drilled"] - 0.3 * n) <= bound,
          "drilled %d of %d at ratio 30: outside %d +- %.0f"
          % (f["drilled"], n, 0.3 * n, bound))
    eq(f["denied"], f["drilled"], "every failed operation was the drill's")
    eq(ctx.point("ffile")["drill"]["faults"], f["drilled"], "stats' drill faults")
    time.sleep(3.2)
    check(ctx.point("ffile")["drill"] is None, "the drill outlived --for")
    eq(t.run("file", ctx.file, 500)[0], {"OK": 500}, "fetch_file after")
    eq(ctx.ff("ffile")["drilled"], f["drilled"], "drilled after the expiry")


@test
def drill_bad_on_function_points(ctx):
    """A function point without failfast=, or a delay drill: refused in
    one line, nothing started."""
    ctx.attach(SPECS)
    r = drill(ctx, ["plain", "--error", "--for", "5"])
    eq((r.rc, r.err),
       (1, "sds-bpf: fftarget: 'plain' is a function point without failfast= "
           "operations: a drill fails the operations failfast= names "
           "(docs/FAILFAST.md)\n"), "drill on plain")
    r = drill(ctx, ["ffile", "--delay-ms", "100", "--for", "5"])
    eq((r.rc, r.err),
       (1, "sds-bpf: fftarget: 'ffile' is a function point: only error drills "
           "(its failfast= operations fail); a delay cannot be injected "
           "there (LSM programs cannot sleep)\n"), "delay drill on ffile")
    check(ctx.point("ffile")["drill"] is None and
          ctx.point("plain")["drill"] is None, "a drill was started")
