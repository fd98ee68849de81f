# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Every bad input of capture: one line, a non-zero exit, nothing left."""

import os

from cap_lib import APP, POINT, TARGET, check, eq, test

ARGS_WHY = ("copy= takes two argument numbers BUF,LEN, each 1..6 (x86-64 "
            "passes only the first six integer arguments in registers)")
MAX_WHY = "copy_max must be an integer 1..65536 (bytes; 64 KiB at most)"
RATE_WHY = "copy_rate must be an integer 0..100 (percent of calls)"

BAD_SPECS = [
    ("req=handle_request:copy=0,2", ARGS_WHY),
    ("req=handle_request:copy=1,7", ARGS_WHY),
    ("req=handle_request:copy=7,1", ARGS_WHY),
    ("req=handle_request:copy=2", ARGS_WHY),
    ("req=handle_request:copy=2,2",
     "copy=2,2: the buffer and its length are two different arguments"),
    ("req=handle_request:copy=1,2:copy_max=65537", MAX_WHY),
    ("req=handle_request:copy=1,2:copy_max=0", MAX_WHY),
    ("req=handle_request:copy=1,2:copy_rate=101", RATE_WHY),
    ("req=handle_request:copy=1,2:copy_rate=-1", RATE_WHY),
    ("req=handle_request:copy_max=100",
     "copy_max= needs copy=BUF,LEN (which arguments hold the request)"),
    ("req=handle_request:copy_rate=50",
     "copy_rate= needs copy=BUF,LEN (which arguments hold the request)"),
]


def one_line_error(r, want, what):
    check(r.rc != 0, "%s: exit status 0" % what)
    eq(r.err, "sds-bpf: %s\n" % want, "%s: stderr" % what)
    eq(r.out, "", "%s: stdout" % what)


@test
def test_bad_point_specs(ctx):
    for spec, why in BAD_SPECS:
        r = ctx.sds(["attach", "--app", APP, TARGET, spec])
        one_line_error(r, "bad point '%s': %s" % (spec, why), spec)
    eq(os.listdir(ctx.run_dir), [], "the run dir after refusals")


@test
def test_bad_copy_options(ctx):
    spec = "%s=handle_request:copy=1,2" % POINT
    for opt, why in [
            (["--copy-to", "nohostport"],
             "bad --copy-to: bad copy server 'nohostport': expected HOST:PORT"),
            (["--copy-to", "127.0.0.1:"],
             "bad --copy-to: bad copy server '127.0.0.1:': expected HOST:PORT"),
            (["--copy-to", "127.0.0.1:1,"],
             "bad --copy-to: bad copy server '': expected HOST:PORT"),
            (["--copy-ring", "5000"],
             "bad --copy-ring '5000': expected a power of 2, 4096..1073741824 (bytes)"),
            (["--copy-ring", "2048"],
             "bad --copy-ring '2048': expected a power of 2, 4096..1073741824 (bytes)")]:
        r = ctx.sds(["attach", "--app", APP] + opt + [TARGET, spec])
        one_line_error(r, why, " ".join(opt))


@test
def test_go_binary_refused(ctx):
    """A Go binary's register ABI is not System V's: copy= is refused."""
    gobin = None
    for cand in ("/usr/local/go/bin/gofmt", "/usr/lib/go/bin/gofmt",
                 "/usr/bin/gofmt"):
        if os.path.exists(cand):
            gobin = os.path.realpath(cand)
            break
    check(gobin, "no Go binary to attach to (gofmt) on this host")
    spec = "g=main.main:copy=1,2"
    r = ctx.sds(["attach", "--app", "gofmt", gobin, spec])
    one_line_error(r, "bad point '%s': copy= reads the request from the "
                   "System V argument registers, and Go's register ABI passes "
                   "arguments differently (and a slice or string is two or "
                   "three words): Go points cannot be copied" % spec, spec)


@test
def test_record_bad_inputs(ctx):
    ctx.attach(["%s=handle_request:copy=1,2" % POINT, "plain=main"])
    out = os.path.join(ctx.tmp, "x.rec")
    for args, why in [
            (["--app", APP, "nosuch", "--out", out],
             "record: no point 'nosuch' in app '%s'" % APP),
            (["--app", APP, "plain", "--out", out],
             "record: point 'plain' cannot be copied: give it :copy=BUF,LEN"),
            (["--app", APP, POINT], "record: --out FILE is required"),
            (["--app", APP, "--out", out], "record: name the points to record"),
            ([POINT, "--out", out],
             "record: --app is required (see sds-bpf record --help)"),
            (["--app", APP, POINT, "--out", out, "--for", "0"],
             "bad --for '0': expected seconds, 1..86400"),
            (["--app", "nosuchapp", POINT, "--out", out],
             "record: app 'nosuchapp' is not attached (no loader serving it in %s)"
             % ctx.run_dir)]:
        r = ctx.sds(["record"] + args)
        one_line_error(r, why, " ".join(args))
        check(not os.path.exists(out), "%s: %s left behind" % (args, out))
