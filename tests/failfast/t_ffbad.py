# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Bad input: each a one-line error, a non-zero exit, nothing attached."""

import subprocess

import sdstest
from ff_lib import cg_lever, check, eq, lsm_loads, test, wait_cg_clean


def refused(ctx, spec, why, dry=True):
    """attach with @spec exits 1 with exactly "sds-bpf: @why", and
    leaves nothing in the kernel and no socket."""
    before = sdstest.KernelSnapshot()
    a = ctx.attach([spec], dry=dry, wait=False)
    # Only the wait's own expiry is "did not exit": the suite's per-test
    # Timeout (an Exception too) must go through as itself.
    try:
        a.p.wait(30)
    except subprocess.TimeoutExpired:
        raise sdstest.Fail("attach %s did not exit" % spec)
    eq(a.p.returncode, 1, "attach %s: exit status" % spec)
    err = a.stderr()
    eq(err, "sds-bpf: %s\n" % why, "attach %s: stderr" % spec)
    check(not sdstest.is_socket(a.sock), "a socket was left: %s" % a.sock)
    before.assert_nothing_new([a.pid], "refused attach")
    ctx.loader = None


@test
def bad_unknown_operation(ctx):
    refused(ctx, "fetch=fetch:failfast=connect,read",
            "bad point 'fetch=fetch:failfast=connect,read': unknown failfast= "
            "operation 'read' (connect, send, open)")


@test
def bad_unknown_errno(ctx):
    refused(ctx, "fetch=fetch:failfast=connect:errno=ECONNREFUSD",
            "bad point 'fetch=fetch:failfast=connect:errno=ECONNREFUSD': "
            "unknown errno= name 'ECONNREFUSD' (ECONNREFUSED, ECONNRESET, "
            "ETIMEDOUT, EHOSTUNREACH, EIO, EACCES, ...: docs/FAILFAST.md)")


@test
def bad_errno_without_failfast(ctx):
    refused(ctx, "fetch=fetch:errno=EIO",
            "bad point 'fetch=fetch:errno=EIO': errno= needs "
            "failfast=connect,send,open (which operations fail)")


@test
def bad_operation_twice(ctx):
    refused(ctx, "fetch=fetch:failfast=open,open",
            "bad point 'fetch=fetch:failfast=open,open': failfast= names "
            "'open' twice")


@test
def lever_said_once(ctx):
    """attach says once which lever fails the operations: BPF LSM, else
    the cgroup hooks (t_ffcg.py tests them); with neither, a failfast=
    spec is refused naming lsm=, CONFIG_BPF_LSM and CONFIG_CGROUP_BPF."""
    if lsm_loads()[0]:
        a = ctx.attach(["fetch=fetch:failfast=connect"], dry=False)
        eq(a.stderr().count("sds-bpf: fail-fast: BPF LSM (connect, send, "
                            "open)\n"), 1,
           "attach's lever line: %r" % a.stderr())
        return
    if cg_lever()[0]:
        a = ctx.attach(["fetch=fetch:failfast=connect"], dry=False)
        eq(a.stderr().count("sds-bpf: fail-fast: cgroup hooks (connect, UDP "
                            "send; open and TCP send need BPF LSM)\n"), 1,
           "attach's lever line: %r" % a.stderr())
        a.end()
        ctx.loader = None
        wait_cg_clean("after the test")
        return
    a = ctx.attach(["fetch=fetch:failfast=connect"], dry=False, wait=False)
    a.p.wait(30)
    ctx.loader = None
    err = a.stderr()
    eq(a.p.returncode, 1, "attach: exit status")
    check(err.startswith("sds-bpf: point 'fetch': failfast= needs BPF LSM "
                         "(a kernel built with CONFIG_BPF_LSM=y, booted with "
                         "\"bpf\" in lsm=) and it is not usable here: ") and
          "; nor are cgroup sock_addr programs (CONFIG_CGROUP_BPF): " in err and
          err.endswith("; nothing attached (watching works without "
                       "failfast=)\n") and err.count("\n") == 1,
          "attach: stderr %r" % err)


@test
def watching_without_failfast(ctx):
    """Without a failfast= point nothing of fail-fast is loaded or said."""
    a = ctx.attach(["fetch=fetch:err=neg"], dry=False)
    names = sdstest.sds_progs_of(a.pid)
    check(names and not [n for n in names if n.startswith("sds_ff")],
          "the loader's programs: %s" % names)
    check("LSM" not in a.stderr() and "failfast" not in a.stderr(),
          "attach said: %r" % a.stderr())
    check("failfast" not in ctx.point("fetch"), "stats: %r" % ctx.point("fetch"))
