# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Bad input: each a one-line error, a non-zero exit, nothing attached or
started (no sds_dl link, the veth's qdisc as it was, no drill in stats),
and the loader serves on."""

import subprocess

from dl_lib import (APP, check, ctl_request, dl_links, eq, fq_loads, root_qdisc,
                    test)
import sdstest


def refused(ctx, net, args, why):
    """`sds-bpf drill ARGS` exits 1 saying exactly "sds-bpf: @why", and
    nothing of a drill is left."""
    before = root_qdisc(net.dev)
    r = ctx.drill(*args)
    eq(r.rc, 1, "drill %s: exit status" % " ".join(args))
    eq(r.err, "sds-bpf: %s\n" % why, "drill %s: stderr" % " ".join(args))
    eq(dl_links(), [], "links after the refused drill %s" % " ".join(args))
    eq(root_qdisc(net.dev), before, "%s's root qdisc" % net.dev)
    check(ctx.point("fetch").get("drill") is None,
          "a drill runs after the refusal: %r" % ctx.point("fetch"))
    check(ctx.loader.p.poll() is None, "the loader exited")


@test
def bad_point_delay_ratio(ctx):
    """A delay drill on a function point without failfast=connect (its
    traffic cannot be marked); over 60,000 ms or a ratio outside 0..100:
    the command refuses, and so does the loader for a client that skips
    the command's checks."""
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev])
    refused(ctx, net, ["other", "--delay-ms", "200", "--for", "30"],
            "%s: 'other' is a function point whose traffic the loader cannot "
            "mark: a delay drill delays the sockets a thread connects inside "
            "the function, which needs :drill=net or failfast=connect on the "
            "point (docs/DELAY.md)" % APP)
    refused(ctx, net, ["fetch", "--delay-ms", "60001", "--for", "30"],
            "drill: bad --delay-ms '60001': expected milliseconds 1..60000")
    refused(ctx, net, ["fetch", "--delay-ms", "200", "--ratio", "101",
                       "--for", "30"],
            "drill: bad --ratio '101': expected a percentage 0..100")
    for req, why in (("drill fetch delay 50 60001 30", "delay out of range 1..60000 ms"),
                     ("drill fetch delay 101 200 30", "ratio out of range 0..100")):
        eq(ctl_request(ctx.loader.sock, req), {"error": why}, "the loader's answer to %r" % req)
    eq(dl_links(), [], "links after the raw requests")
    check(ctx.point("fetch").get("drill") is None, "a drill runs")


@test
def bad_no_qdisc(ctx):
    """--no-drill-qdisc on an interface without fq: refused, naming it."""
    net = ctx.net()
    ctx.attach(["--drill-dev", net.dev, "--no-drill-qdisc"], dry=False)
    refused(ctx, net, ["fetch", "--delay-ms", "200", "--ratio", "50",
                       "--for", "30"],
            "%s: delay drill on 'fetch': %s has no fq qdisc (its root is "
            "noqueue) and --no-drill-qdisc forbids the loader to set one: "
            "nothing would hold the packets" % (APP, net.dev))


@test
def bad_no_such_dev(ctx):
    net = ctx.net()
    ctx.attach(["--drill-dev", "dlnosuch0"])
    refused(ctx, net, ["fetch", "--delay-ms", "200", "--for", "30"],
            "%s: delay drill on 'fetch': no interface 'dlnosuch0' (--drill-dev)"
            % APP)


@test
def bad_loopback_dev(ctx):
    """--drill-dev lo: attach refuses, fq cannot delay loopback traffic."""
    a = ctx.attach(["--drill-dev", "lo"], wait=False)
    try:
        a.p.wait(30)
    except subprocess.TimeoutExpired:
        raise sdstest.Fail("attach --drill-dev lo did not exit")
    eq(a.p.returncode, 1, "attach --drill-dev lo: exit status")
    eq(a.stderr(), "sds-bpf: bad --drill-dev 'lo': loopback traffic cannot be "
       "delayed by fq (its packets skip the departure time); drill traffic "
       "that leaves by a real or virtual interface (a veth)\n", "stderr")
    ctx.loader = None


if not fq_loads()[0]:
    @test
    def bad_kernel_without_fq(ctx):
        """Where the kernel has no fq qdisc: the drill is refused naming
        CONFIG_NET_SCH_FQ, nothing set on the interface."""
        net = ctx.net()
        ctx.attach(["--drill-dev", net.dev], dry=False)
        refused(ctx, net, ["fetch", "--delay-ms", "200", "--ratio", "50",
                           "--for", "30"],
                "%s: delay drill on 'fetch': setting fq as the root qdisc of "
                "%s: No such file or directory (Specified qdisc kind is "
                "unknown); this kernel has no fq qdisc (CONFIG_NET_SCH_FQ), "
                "which is what holds the packets" % (APP, net.dev))
