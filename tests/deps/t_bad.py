# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Bad input: one line, non-zero exit, nothing attached.
"""

import os

from deps_lib import APP, TARGET, SPECS, check, eq, test
import sdstest


def refused(ctx, args, want):
    r = ctx.sds(["attach", "--app", APP] + args + [TARGET] + SPECS)
    check(r.rc != 0, "attach %s: exit 0" % " ".join(args))
    lines = r.err.strip().splitlines()
    eq(len(lines), 1, "attach %s: one line: %r" % (" ".join(args), r.err))
    check(want in lines[0], "attach %s said %r, not %r" % (" ".join(args),
                                                           lines[0], want))
    check(not os.path.exists(sdstest.sock_path(ctx.run_dir, "default", APP)),
          "a socket after a refused attach")
    eq(set(sdstest.pins_under([ctx.pin_root])), set(), "pins after a refused attach")


@test
def test_bad_attach_options(ctx):
    refused(ctx, ["--deps", "--deps-max", "0"], "bad --deps-max '0'")
    refused(ctx, ["--deps", "--deps-max", "65537"], "bad --deps-max '65537'")
    refused(ctx, ["--deps", "--deps-max", "x"], "bad --deps-max 'x'")
    refused(ctx, ["--deps-max", "10"], "--deps-max needs --deps")


@test
def test_deps_without_deps(ctx):
    ctx.attach(extra=())
    r = ctx.sds(["deps", "--app", APP])
    check(r.rc != 0, "deps on a loader without --deps: exit 0")
    eq(len(r.err.strip().splitlines()), 1, "one line: %r" % r.err)
    check("without --deps" in r.err, "deps said %r" % r.err)


@test
def test_deps_bad_arguments(ctx):
    ctx.attach()
    for args, want in ((["nosuch"], "no point of that name"),
                       (["bad name!"], "bad point name"),
                       (["fetch", "more"], "unexpected argument"),
                       (["--interval", "1"], "not deps' options")):
        r = ctx.sds(["deps", "--app", APP] + args)
        check(r.rc != 0, "deps %s: exit 0" % args)
        eq(len(r.err.strip().splitlines()), 1, "deps %s: one line: %r" % (args, r.err))
        check(want in r.err, "deps %s said %r, not %r" % (args, r.err, want))
    r = ctx.sds(["deps", "--help"])
    eq(r.rc, 0, "deps --help")
    check("Usage: sds-bpf deps" in r.out, "deps --help: %r" % r.out)
