# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Bad input: each a one-line error, a non-zero exit, nothing attached."""

import sdstest
from ff_lib import check, eq, lsm_loads, test


def refused(ctx, spec, why, dry=True):
    """attach with @spec exits 1 with exactly "sds-bpf: @why", and
    leaves nothing in the kernel and no socket."""
    before = sdstest.KernelSnapshot()
    a = ctx.attach([spec], dry=dry, wait=False)
    try:
        a.p.wait(30)
    except Exception:
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
def no_bpf_lsm_refused(ctx):
    """Without usable BPF LSM a failfast= spec is refused naming lsm= and
    CONFIG_BPF_LSM; with it, attach says once that it is active."""
    ok, why = lsm_loads()
    if ok:
        a = ctx.attach(["fetch=fetch:failfast=connect"], dry=False)
        eq(a.stderr().count("BPF LSM is active"), 1,
           "attach's BPF LSM line: %r" % a.stderr())
        return
    refused(ctx, "fetch=fetch:failfast=connect",
            "point 'fetch': failfast= needs BPF LSM (a kernel built with "
            "CONFIG_BPF_LSM=y, booted with \"bpf\" in lsm=) and it is not "
            "usable here: the kernel lists bpf among its LSMs but refuses to "
            "load an LSM program: Operation not permitted; nothing attached "
            "(watching works without failfast=)", dry=False)


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
