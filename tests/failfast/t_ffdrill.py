# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Error drills on function points: a share of the failfast= operations
inside the function fail (here in the dry run: counted as drilled), the
drill ends at its expiry, and bad drills are refused in one line.
"""

import math
import os
import sys
import time

import sdstest
from ff_lib import APP, HERE, check, ctl_request, eq, test

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "copy"))
import copy_lib  # noqa: E402  (a real sds-admin)

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
    """A function point without failfast=, or a delay drill on one
    without failfast=connect (its traffic cannot be marked,
    docs/DELAY.md): refused in one line, nothing started."""
    ctx.attach(SPECS)
    r = drill(ctx, ["plain", "--error", "--for", "5"])
    eq((r.rc, r.err),
       (1, "sds-bpf: fftarget: 'plain' is a function point without failfast= "
           "operations: a drill fails the operations failfast= names "
           "(docs/FAILFAST.md)\n"), "drill on plain")
    r = drill(ctx, ["ffile", "--delay-ms", "100", "--for", "5"])
    eq((r.rc, r.err),
       (1, "sds-bpf: fftarget: 'ffile' is a function point whose traffic the "
           "loader cannot mark: a delay drill delays the sockets a thread "
           "connects inside the function, which needs :drill=net or "
           "failfast=connect on the point (docs/DELAY.md)\n"), "delay drill on ffile")
    check(ctx.point("ffile")["drill"] is None and
          ctx.point("plain")["drill"] is None, "a drill was started")


@test
def drill_bad_errno_ratio_duration(ctx):
    """--errno with an unknown name, --errno without --error, a ratio or
    duration out of range: one line each, exit 1, nothing started (the
    name is checked before any loader is asked, and again by the loader)."""
    ctx.attach(SPECS)
    names = ("ECONNREFUSED, ECONNRESET, ECONNABORTED, ETIMEDOUT, "
             "EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN, EPIPE, EIO, "
             "EACCES, EPERM, ENOENT, ENOSPC, EROFS, EMFILE, ENFILE, ENOMEM, "
             "EBUSY")
    cases = [
        (["--error", "--errno", "ETIMEOUT", "--for", "5"],
         "drill: unknown --errno 'ETIMEOUT' (%s)" % names),
        (["--error", "--errno", "EINTR", "--for", "5"],
         "drill: unknown --errno 'EINTR' (%s)" % names),
        (["--delay-ms", "5", "--errno", "EIO", "--for", "5"],
         "drill: --errno is for --error drills (at function points with "
         "failfast=)"),
        (["--stop", "--errno", "EIO"],
         "drill: --stop takes no --error, --errno, --delay-ms, --ratio or "
         "--for"),
        (["--error", "--ratio", "101", "--for", "5"],
         "drill: bad --ratio '101': expected a percentage 0..100"),
        (["--error", "--ratio", "-1", "--for", "5"],
         "drill: bad --ratio '-1': expected a percentage 0..100"),
        (["--error", "--for", "0"],
         "drill: bad --for '0': expected seconds 1..86400"),
        (["--error", "--for", "86401"],
         "drill: bad --for '86401': expected seconds 1..86400"),
    ]
    for args, want in cases:
        r = drill(ctx, ["ffile"] + args)
        eq((r.rc, r.err), (1, "sds-bpf: %s\n" % want), "drill ffile %s" % args)
    # The loader's own check, for a client that skips the command's.
    r = ctl_request(ctx.loader.sock, "drill ffile error 30 0 5 EAGAIN")
    eq(r, {"error": "unknown errno name (ECONNREFUSED, ECONNRESET, ETIMEDOUT, "
                    "EHOSTUNREACH, EIO, EACCES, ...: docs/FAILFAST.md)"},
       "the loader's reply to an unknown errno")
    # The errno is a word of its own, not the tail of FOR_S.
    r = ctl_request(ctx.loader.sock, "drill ffile error 30 0 5ETIMEDOUT")
    eq(r, {"error": "expected 'drill POINT error|delay RATIO DELAY_MS FOR_S "
                    "[ERRNO]' or 'drill POINT stop'"},
       "the loader's reply to an errno glued to FOR_S")
    check(ctx.point("ffile")["drill"] is None, "a drill was started")


@test
def drill_from_the_admin(ctx):
    """A drill created in sds-admin on a failfast= function point reaches
    the loader in a heartbeat reply, fails the operations, and its faults
    reach the admin's stats."""
    adm = copy_lib.Admin(ctx)
    sdstest.http_request(adm.port, "POST", "/api/v1/groups", {"name": "default"},
                         {"Authorization": "Bearer " + adm.TOKEN})
    adm.call("POST", "/api/v1/groups/default/apps", {"name": APP}, want=201)
    ctx.attach(SPECS, extra=["--admin", adm.url, "--token-file", adm.token_file])
    t = ctx.target()
    a = "/api/v1/groups/default/apps/%s" % APP
    d = adm.call("POST", a + "/drills", {"point": "ffile", "kind": "error",
                                         "ratio": 100, "duration_s": 300,
                                         "by": "ff-test"}, want=201)
    p = sdstest.wait_until(lambda: ctx.point("ffile")["drill"],
                           time.time() + 25,
                           "the admin's drill never reached the loader", 0.5)
    eq(p["source"], d["id"], "the drill's source")
    eq(t.run("file", ctx.file, 50)[0], {"OK": 50}, "fetch_file, dry")
    eq(ctx.ff("ffile")["drilled"], 50, "drilled by the admin's drill")

    def faults():
        s = adm.call("GET", a + "/stats?point=ffile")
        return s["points"].get("ffile", {}).get("total", {}).get("faults")
    eq(sdstest.wait_until(faults, time.time() + 30,
                          "no faults in the admin's stats", 0.5), 50,
       "faults in the admin's stats")
