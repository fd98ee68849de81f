# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The cgroup lever: where the kernel refuses LSM programs, attach fails
connect(2) (and unconnected UDP sends) through cgroup sock_addr programs
on the cgroup2 root.  Registered only where that is the lever attach uses
(no LSM programs, cgroup_sock_addr programs load); elsewhere each prints
a SKIP line with the reason.  Every test ends with none of its own programs
left on the cgroup2 root (ff_lib.CgWatch: those its loaders held, and any
that came since it began that no process holds; other runs' programs
there are not its business).
"""

import math
import os
import signal
import socket
import time

import sdstest
from ff_lib import (TARGET, cg_lever, cg_ours, cgroup_root, check, eq, skip,
                    test, wait_cg_clean)

KILL = {"visit_threshold": 0}
SPECS = ["fetch=fetch:failfast=connect:err=neg",
         "fudp=fetch_udp:failfast=connect:err=neg"]
LEVER = ("sds-bpf: fail-fast: cgroup hooks (connect, UDP send; open and "
         "TCP send need BPF LSM)\n")
PROGS = ["sds_ff_cg_connect4", "sds_ff_cg_connect6", "sds_ff_cg_sendmsg4",
         "sds_ff_cg_sendmsg6"]
MS = 1000 * 1000


def held_port(ctx, kind=socket.SOCK_STREAM):
    """A port of 127.0.0.1 bound by the test and held until it ends, never
    listening: a TCP connect there is refused, a UDP datagram goes
    nowhere, and no other process can take it meanwhile (a port that
    free_port() closed could be bound by another run before its use)."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    ctx.held = getattr(ctx, "held", []) + [s]
    return s.getsockname()[1]


def end(ctx, a, what):
    """End loader @a (SIGINT) and check its programs left the cgroup."""
    a.end()
    ctx.loader = None
    wait_cg_clean(what)


def cg_fetch_fails_fast(ctx):
    """Kill switch: fetch() returns ECONNREFUSED at once (median of 100
    under 10 ms) instead of waiting 2 s; the same thread's connects
    outside fetch() and another process's succeed; counts exact.  Off
    again: fetch() waits for the server as before."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    a = ctx.attach(SPECS, dry=False)
    eq(a.stderr().count(LEVER), 1, "attach's lever line: %r" % a.stderr())
    eq(sorted(cg_ours()), PROGS, "our programs on the cgroup2 root")
    t = ctx.target()
    res, med, _ = t.run("fetch", srv.port, 100)
    eq(res, {"ECONNREFUSED": 100}, "fetch under the kill switch")
    print("  fetch() under the kill switch: median %.3f ms of 100 "
          "(the server never answers; 2 s otherwise)" % (med / MS))
    check(med < 10 * MS, "median fetch %d ns, want < 10 ms" % med)
    eq(t.run("connect", srv.port, 5)[0], {"OK": 5}, "connects outside fetch")
    other = ctx.target()
    eq(other.run("connect", srv.port, 5)[0], {"OK": 5},
       "another process's connects")
    f = ctx.ff("fetch")
    eq((f["denied"], f["probes"], f["failing"]), (100, 0, True),
       "fetch: denied, probes, failing")
    p = ctx.point("fetch")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (100, 100),
       "fetch's visits and exceptions")
    eq(srv.accepted, 10, "connections the server saw")
    ctx.write_strategies({})
    res, med, _ = t.run("fetch", srv.port, 1)
    eq(res, {"EAGAIN": 1}, "fetch with the point passing")
    check(med > 1900 * MS, "fetch took %d ns: not the 2 s wait" % med)
    eq(ctx.ff("fetch")["denied"], 100, "fetch: denied after recovery")
    end(ctx, a, "after the test")


def cg_udp_send(ctx):
    """An unconnected UDP sendto() inside fetch_udp() is judged as a
    connect: refused under the kill switch, sent once it is off."""
    ctx.write_strategies({"fudp": KILL})
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    port = held_port(ctx, socket.SOCK_DGRAM)
    eq(t.run("udp", port, 20)[0], {"ECONNREFUSED": 20}, "fetch_udp")
    eq(ctx.ff("fudp")["denied"], 20, "fudp: denied")
    eq(ctx.ff("fetch")["denied"], 0, "fetch: denied")
    ctx.write_strategies({})
    eq(t.run("udp", port, 5)[0], {"OK": 5}, "fetch_udp, passing")
    eq(ctx.ff("fudp")["denied"], 20, "fudp: denied after recovery")
    end(ctx, a, "after the test")


def cg_gone_with_the_loader(ctx):
    """A loader killed with SIGKILL denies nothing more: its cgroup links
    went with its file descriptors, and none of our programs remains on
    the cgroup2 root."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    eq(t.run("fetch", srv.port, 3)[0], {"ECONNREFUSED": 3}, "fetch")
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)
    ctx.loader = None
    wait_cg_clean("after SIGKILL")
    eq(t.run("connect", srv.port, 1)[0], {"OK": 1}, "connect")
    res, med, _ = t.run("fetch", srv.port, 1)
    eq(res, {"EAGAIN": 1}, "fetch after the loader died")


def drill(ctx, *args):
    r = ctx.sds(["drill", "--app", "fftarget"] + list(args))
    eq(r.rc, 0, "drill %s: %r" % (" ".join(args), r))
    return r


def cg_drill(ctx):
    """An error drill at ratio 30 with --errno ETIMEDOUT fails that share
    of 10,000 fetch() connects (a server that answers: the others
    succeed) with ETIMEDOUT, within 5 standard deviations of 3,000; stats'
    counts equal what the program saw, exactly.  Stopped, nothing more
    fails; a drill without --errno uses the point's ECONNREFUSED and ends
    by itself at --for."""
    srv = ctx.server(reply=True)
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    t0 = time.monotonic()
    drill(ctx, "fetch", "--error", "--errno", "ETIMEDOUT", "--ratio", "30",
          "--for", "300")
    n = 10000
    res = t.run("fetch", srv.port, n)[0]
    print("  10,000 fetch() under a 30%% drill: %r in %.1f s"
          % (res, time.monotonic() - t0))
    bound = 5 * math.sqrt(n * 0.3 * 0.7)
    failed = res.get("ETIMEDOUT", 0)
    check(abs(failed - 0.3 * n) <= bound and failed + res.get("OK", 0) == n,
          "fetch under a 30%% drill: %r, want %d +- %.0f ETIMEDOUT, the rest "
          "OK" % (res, 0.3 * n, bound))
    f = ctx.ff("fetch")
    eq((f["drilled"], f["denied"]), (failed, failed), "drilled, denied")
    d = ctx.point("fetch")["drill"]
    eq((d["faults"], d["errno"], d["ratio"]), (failed, "ETIMEDOUT", 30),
       "stats' drill: faults, errno, ratio")
    p = ctx.point("fetch")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (n, failed),
       "fetch's visits and exceptions")
    eq(srv.accepted, n - failed, "connections the server saw")
    drill(ctx, "fetch", "--stop")
    eq(t.run("fetch", srv.port, 200)[0], {"OK": 200}, "after --stop")
    t0 = time.monotonic()
    drill(ctx, "fetch", "--error", "--for", "2")
    eq(t.run("fetch", srv.port, 20)[0], {"ECONNREFUSED": 20},
       "a drill with the point's errno")
    check("errno" not in ctx.point("fetch")["drill"], "stats' drill: %r"
          % ctx.point("fetch")["drill"])
    time.sleep(max(0, t0 + 2.5 - time.monotonic()))
    eq(t.run("fetch", srv.port, 200)[0], {"OK": 200}, "after the expiry")
    check(ctx.point("fetch")["drill"] is None, "the drill outlived --for")
    eq(ctx.ff("fetch")["drilled"], failed + 20, "drilled after the expiry")
    end(ctx, a, "after the test")


def cg_drill_gone_with_the_loader(ctx):
    """A drill never survives its loader: SIGKILL in the middle of a
    300 s drill at ratio 100, and nothing is denied any more."""
    srv = ctx.server(reply=True)
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    drill(ctx, "fetch", "--error", "--errno", "ECONNRESET", "--for", "300")
    eq(t.run("fetch", srv.port, 20)[0], {"ECONNRESET": 20}, "fetch, drilled")
    os.kill(a.pid, signal.SIGKILL)
    a.p.wait(10)
    ctx.loader = None
    wait_cg_clean("after SIGKILL")
    eq(t.run("fetch", srv.port, 200)[0], {"OK": 200},
       "fetch after the loader died")
    eq(srv.accepted, 200, "connections the server saw")


def cg_hold_probes(ctx):
    """A hold (exception_threshold, delay_ms 600 s, retry_interval_ms
    3 s) lets one fetch() through per interval as its probe, every
    operation of that call; the others fail fast.  A probe that fails
    (the server never answers: EAGAIN after 2 s) renews the hold from its
    end, so no probe comes 3 s after the claim; one that succeeds ends the
    hold and fetch() reaches the server again.  Counts exact."""
    dead = ctx.server()
    live = ctx.server(reply=True)
    closed = held_port(ctx)
    ctx.write_strategies({"fetch": {"exception_threshold": 5,
                                    "delay_ms": 600000,
                                    "retry_interval_ms": 3000}})
    a = ctx.attach(SPECS, dry=False)
    t = ctx.target()
    eq(t.run("fetch", closed, 5)[0], {"ECONNREFUSED": 5},
       "fetch to a closed port (real refusals)")
    sdstest.wait_until(lambda: ctx.ff("fetch")["failing"], time.time() + 5,
                       "the hold never started", 0.05)
    t0 = time.monotonic()
    eq(t.run("fetch", live.port, 10)[0], {"ECONNREFUSED": 10},
       "fetch in the hold's first interval")
    eq(live.accepted, 0, "connections the live server saw")
    time.sleep(max(0, t0 + 3.2 - time.monotonic()))
    # The probe: let through to the dead server, EAGAIN after its 2 s.
    claim = time.monotonic()
    eq(t.run("fetch", dead.port, 3)[0], {"EAGAIN": 1, "ECONNREFUSED": 2},
       "fetch when a probe is due (the dead server)")
    eq((dead.accepted, ctx.ff("fetch")["probes"]), (1, 1),
       "the dead server's connections, probes")
    # Renewed from its end (~claim + 2 s): nothing due at claim + 3.5 s.
    time.sleep(max(0, claim + 3.5 - time.monotonic()))
    eq(t.run("fetch", live.port, 1)[0], {"ECONNREFUSED": 1},
       "fetch 3.5 s after the failed probe's claim (renewed hold)")
    eq(live.accepted, 0, "connections the live server saw")
    time.sleep(max(0, claim + 5.4 - time.monotonic()))
    eq(t.run("fetch", live.port, 1)[0], {"OK": 1},
       "fetch when the next probe is due (the live server)")
    sdstest.wait_until(lambda: not ctx.ff("fetch")["failing"],
                       time.time() + 5, "the probe did not end the hold", 0.05)
    eq(t.run("fetch", live.port, 20)[0], {"OK": 20}, "fetch after the hold")
    eq(live.accepted, 21, "connections the live server saw")
    f = ctx.ff("fetch")
    eq((f["denied"], f["probes"], f["failing"]), (13, 2, False),
       "fetch: denied, probes, failing")
    p = ctx.point("fetch")
    eq((p["total"]["visits"], p["total"]["exceptions"]), (5 + 10 + 3 + 1 + 1 + 20,
                                                         5 + 10 + 3 + 1),
       "fetch's visits and exceptions")
    end(ctx, a, "after the test")


def cg_no_cgroup2_mounted(ctx):
    """A loader that finds no cgroup2 mounted (its own mount namespace,
    the host's unmounted there) mounts one under its run directory to
    attach, takes the mount down again, and still fails fetch()."""
    srv = ctx.server()
    ctx.write_strategies({"fetch": KILL})
    wrap = os.path.join(ctx.tmp, "nocg2")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nexec unshare -m --propagation private sh -c "
                "'r=$0; s=$1; shift; umount \"$r\" || exit 9; "
                "exec \"$s\" \"$@\"' %s %s \"$@\"\n"
                % (cgroup_root(), sdstest.SDS))
    os.chmod(wrap, 0o700)
    a = sdstest.AttachProcess(
        ctx, ["--app", "fftarget", "--strategies", ctx.strategies,
              TARGET] + SPECS[:1], "fftarget", binary=wrap)
    ctx.loader = a
    eq(sorted(cg_ours()), PROGS, "our programs on the cgroup2 root")
    check(not os.path.exists(os.path.join(ctx.run_dir, "failfast-cgroup2")),
          "the loader's cgroup2 mount point was left in its run directory")
    t = ctx.target()
    eq(t.run("fetch", srv.port, 3)[0], {"ECONNREFUSED": 3}, "fetch")
    eq(t.run("connect", srv.port, 3)[0], {"OK": 3}, "connects outside fetch")
    end(ctx, a, "after the test")


def refused(ctx, spec, op):
    """attach @spec exits 1 with one line: @op needs BPF LSM, naming the
    kernel support, what the cgroup hooks cover; nothing attached."""
    before = sdstest.KernelSnapshot()
    a = ctx.attach([spec], dry=False, wait=False)
    a.p.wait(30)
    ctx.loader = None
    eq(a.p.returncode, 1, "attach %s: exit status" % spec)
    err = a.stderr()
    name = spec.split("=")[0]
    head = ("sds-bpf: point '%s': failfast=%s needs BPF LSM (a kernel built "
            "with CONFIG_BPF_LSM=y, booted with \"bpf\" in lsm=): " % (name, op))
    tail = ("; the cgroup hooks used instead fail connect only (open has "
            "none, and TCP sends none); nothing attached\n")
    check(err.startswith(head) and err.endswith(tail) and err.count("\n") == 1,
          "attach %s: stderr %r" % (spec, err))
    check(not sdstest.is_socket(a.sock), "a socket was left: %s" % a.sock)
    before.assert_nothing_new([a.pid], "refused attach")
    wait_cg_clean("refused attach")


def cg_refuses_open_and_send(ctx):
    """open has no cgroup hook and TCP send none: a point naming either is
    refused in one line; connect alone attaches (cg_fetch_fails_fast)."""
    refused(ctx, "ffile=fetch_file:failfast=open:err=neg", "open")
    refused(ctx, "fetch=fetch:failfast=connect,send", "send")


_ok, _why = cg_lever()
for _fn in (cg_fetch_fails_fast, cg_udp_send, cg_gone_with_the_loader,
            cg_drill, cg_drill_gone_with_the_loader, cg_hold_probes,
            cg_no_cgroup2_mounted,
            cg_refuses_open_and_send):
    if _ok:
        test(_fn)
    else:
        skip(_fn.__name__, _why)
