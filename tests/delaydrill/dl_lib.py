# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The delay-drill suite's harness: a server in a network namespace of the
test's own behind a veth pair (the loader hooks the host's end, never an
interface of the machine), dltarget driven line by line, a loader
attached with failfast=connect points, its stats, and what of ours is in
the kernel (sds_dl_* programs attached, the veth's root qdisc).  Every
process, namespace and link ends with the test, whatever happens.
"""

import itertools
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import SDS, Fail, check, ctl_request, eq, log  # noqa: E402,F401

TARGET = os.path.join(sdstest.BUILD, "test", "targets", "dltarget")
APP = "dltarget"
SUITE = sdstest.Suite(timeout=240)
DRY_ENV = "SDS_DELAY_DRYRUN"
SPECS = ["fetch=fetch:failfast=connect:err=neg", "other=fetch_other:err=neg",
         "hold=fetch_hold:failfast=connect:err=neg"]
PORT = 7000
MS = 1000 * 1000
_SEQ = itertools.count(1)

# The server in the namespace: each request on a connection gets "OK".
SERVER = r"""
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1024)
print("ready", flush=True)
def one(c):
    c.settimeout(70)
    try:
        while c.recv(64):
            c.sendall(b"OK\n")
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=one, args=(c,), daemon=True).start()
"""


def test(fn):
    return SUITE.test(fn)


def skip(name, why):
    SUITE.skip(name, why)


def ip(*args, check_rc=True):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True,
                       timeout=30)
    if check_rc:
        check(r.returncode == 0, "ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def root_qdisc(dev, ns=None):
    """`tc qdisc show dev DEV`'s root line, e.g. "qdisc noqueue 0: root ..."."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["tc", "qdisc", "show",
                                                          "dev", dev]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "tc qdisc show dev %s: %s" % (dev, r.stderr.strip()))
    for line in r.stdout.splitlines():
        if " root " in line:
            return " ".join(line.split()[:3])
    return ""


class Net:
    """A namespace with the server at 10.231.N.2:PORT behind a veth pair
    whose host end (@dev, 10.231.N.1) stays in this namespace."""

    def __init__(self, ctx):
        n = next(_SEQ)
        tag = "%d%d" % (os.getpid() % 100000, n)
        self.ns = "sdsdl%s" % tag
        self.dev = ("dl%sh" % tag)[:15]
        peer = ("dl%sn" % tag)[:15]
        sub = 100 + (os.getpid() + n) % 150
        self.addr = "10.231.%d.2" % sub
        ctx.nets.append(self)
        ip("netns", "add", self.ns)
        ip("link", "add", self.dev, "type", "veth", "peer", "name", peer,
           "netns", self.ns)
        ip("addr", "add", "10.231.%d.1/30" % sub, "dev", self.dev)
        ip("link", "set", self.dev, "up")
        ip("-n", self.ns, "addr", "add", self.addr + "/30", "dev", peer)
        ip("-n", self.ns, "link", "set", peer, "up")
        ip("-n", self.ns, "link", "set", "lo", "up")
        self.srv = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "python3", "-u", "-c", SERVER,
             self.addr, str(PORT)], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True)
        ctx.others.append(self.srv)
        eq(self.srv.stdout.readline().strip(), b"ready", "the server's first line")

    def cleanup(self):
        sdstest.reap(self.srv)
        ip("link", "del", self.dev, check_rc=False)
        ip("netns", "del", self.ns, check_rc=False)


class Target:
    """dltarget in its own session; run() sends one command and returns
    ({outcome: count}, [each call's ns])."""

    def __init__(self, ctx):
        self.p = sdstest.start_line_target(ctx, TARGET, "dltarget")

    def run(self, cmd, net, n):
        self.p.stdin.write(b"%s %s %d %d\n" % (cmd.encode(), net.addr.encode(),
                                                PORT, n))
        self.p.stdin.flush()
        line = self.p.stdout.readline().decode().split()
        check(line and line[0] == "res" and "ns" in line,
              "dltarget said %r to %s" % (line, cmd))
        i = line.index("ns")
        res = {k: int(v) for k, v in (w.split("=") for w in line[1:i])}
        return res, [int(t) for t in line[i + 1].split(",")]


def dl_links():
    """Names of the sds_dl_* programs attached by a link now (bpftool)."""
    progs = {p["id"]: p["name"] for p in sdstest.bpftool_progs("sds_dl_")}
    r = subprocess.run(["bpftool", "link", "show", "--json"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool link show: %s" % r.stderr.strip())
    return sorted(progs[l["prog_id"]] for l in json.loads(r.stdout or "[]")
                  if l.get("prog_id") in progs)


def wait_unhooked(what):
    """None of our links within 5 s (a link closed leaves at once; its
    release may take a grace period)."""
    sdstest.wait_until(lambda: not dl_links(), time.time() + 5,
                       lambda _: "%s: sds_dl links left: %s" % (what, dl_links()))


_FQ = []


def fq_loads():
    """(True, "") when this kernel has the fq qdisc (tried once, on a
    dummy veth in a namespace of its own), else (False, why)."""
    if not _FQ:
        ns = "sdsdlfq%d" % os.getpid()
        ip("netns", "add", ns)
        try:
            ip("-n", ns, "link", "add", "fqa", "type", "veth", "peer", "name", "fqb")
            r = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add",
                                "dev", "fqa", "root", "fq"],
                               capture_output=True, text=True, timeout=30)
            _FQ.append((r.returncode == 0,
                        "tc qdisc add ... fq: %s (CONFIG_NET_SCH_FQ): the "
                        "packets cannot be held" % r.stderr.strip()))
        finally:
            ip("netns", "del", ns, check_rc=False)
    return _FQ[0]


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-dl-")
        self.nets = []
        self.loader = None

    def cleanup(self):
        super().cleanup()
        for n in self.nets:
            n.cleanup()

    def net(self):
        return Net(self)

    def target(self):
        return Target(self)

    def attach(self, extra=(), dry=True, wait=True, specs=SPECS):
        env = dict(self.env)
        if dry:
            env[DRY_ENV] = "1"
        else:
            env.pop(DRY_ENV, None)
        saved, self.env = self.env, env
        try:
            self.loader = sdstest.AttachProcess(
                self, ["--app", APP] + list(extra) + [TARGET] + list(specs),
                APP, wait=False)
        finally:
            self.env = saved
        # A hang, not speed: beside other suites' loaders verifying their
        # programs, one with fail-fast's and the delay drills' objects has
        # taken over 30 s to open its socket here.
        if wait:
            self.loader.wait_ready(timeout=90)
        return self.loader

    def sds(self, args, timeout=60):
        return sdstest.run_group([SDS] + args, self.env, self.tmp, self.others,
                                 timeout=timeout)

    def drill(self, *args):
        return self.sds(["drill", "--app", APP] + list(args))

    def stats(self):
        r = self.sds(["stats", "--json", "--app", APP])
        check(r.rc == 0, "stats: %r" % r)
        return json.loads(r.out)

    def point(self, name):
        return sdstest.get_point(self.stats(), name)

    def delay(self, name="fetch"):
        p = self.point(name)
        check("delay" in p, "stats: point %s has no \"delay\": %r" % (name, p))
        return p["delay"]
