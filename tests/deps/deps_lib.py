# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The dependencies suite's harness (docs/DEPS.md): local TCP servers on
loopback (one answering, and ports where nothing listens, held bound so
that a connect is refused), dltarget driven line by line, a loader
attached with --deps, and its `deps --json`.  Every process and socket
ends with the test.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import SDS, Fail, check, eq, log  # noqa: E402,F401

TARGET = os.path.join(sdstest.BUILD, "test", "targets", "dltarget")
GUARD = os.path.join(sdstest.BUILD, "test", "targets", "depsguard")
APP = "depsapp"
SUITE = sdstest.Suite(timeout=240)
SPECS = ["fetch=fetch:err=neg", "hold=fetch_hold:err=neg",
         "pool=fetch_pooled:err=neg", "other=fetch_other:err=neg"]
REQ = 4     # bytes of dltarget's request, "GET\n"

# Each request on a connection gets "OK\n" (with "reset": the connection
# is reset instead, SO_LINGER 0); prints its port first.
SERVER = r"""
import socket, struct, sys, threading
reset = sys.argv[1:] == ["reset"]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1024)
print(s.getsockname()[1], flush=True)
def one(c):
    c.settimeout(70)
    try:
        while c.recv(64):
            if reset:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                break
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


class Target:
    """dltarget; run() sends one command, returns {outcome: count}."""

    def __init__(self, ctx):
        self.p = sdstest.start_line_target(ctx, TARGET, "dltarget")

    def run(self, cmd, port, n, addr="127.0.0.1"):
        self.p.stdin.write(b"%s %s %d %d\n" % (cmd.encode(), addr.encode(),
                                                port, n))
        self.p.stdin.flush()
        line = self.p.stdout.readline().decode().split()
        check(line and line[0] == "res" and "ns" in line,
              "dltarget said %r to %s" % (line, cmd))
        i = line.index("ns")
        return {k: int(v) for k, v in (w.split("=") for w in line[1:i])}


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-deps-")
        self.loader = None
        self.held = []

    def cleanup(self):
        super().cleanup()
        for s in self.held:
            s.close()

    def server(self, reset=False):
        """A server answering on 127.0.0.1 (@reset: resetting each
        connection at its first request): its port."""
        p = subprocess.Popen(["python3", "-u", "-c", SERVER] + (["reset"] if reset else []),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self.others.append(p)
        return int(p.stdout.readline())

    def refusing(self):
        """A port of 127.0.0.1 where a connect is refused, for the test."""
        s, port = sdstest.dead_port()
        self.held.append(s)
        return port

    def target(self):
        return Target(self)

    def attach(self, extra=("--deps",), specs=SPECS, wait=True, target=TARGET):
        self.loader = sdstest.AttachProcess(
            self, ["--app", APP] + list(extra) + [target] + list(specs),
            APP, wait=False)
        if wait:
            # A hang, not speed: a loader verifying its objects beside
            # other suites has taken over 30 s to open its socket here.
            self.loader.wait_ready(timeout=90)
        return self.loader

    def sds(self, args, timeout=60):
        return sdstest.run_group([SDS] + args, self.env, self.tmp, self.others,
                                 timeout=timeout)

    def deps(self, *args):
        r = self.sds(["deps", "--json", "--app", APP] + list(args))
        eq(r.rc, 0, "deps --json: %r" % r)
        return json.loads(r.out)


def edges(d):
    """{(point, addr, port, proto): {connects, connect_errors, sends,
    send_errors, resets, bytes}} of a `deps --json` reply, with each edge's
    "errors" and "class" checked on the way."""
    out = {}
    for p in d["points"]:
        for e in p["deps"]:
            eq(e["errors"], e["connect_errors"] + e["send_errors"] + e["resets"],
               "%s -> %s:%d: errors" % (p["point"], e["addr"], e["port"]))
            eq(e["class"], "unknown", "an edge's class before any game day")
            k = (p["point"], e["addr"], e["port"], e["proto"])
            check(k not in out, "edge %r listed twice" % (k,))
            out[k] = {f: e[f] for f in ("connects", "connect_errors", "sends",
                                        "send_errors", "resets", "bytes")}
    return out


def counts(connects=0, connect_errors=0, sends=0, send_errors=0, resets=0,
           nbytes=0):
    return {"connects": connects, "connect_errors": connect_errors,
            "sends": sends, "send_errors": send_errors, "resets": resets,
            "bytes": nbytes}
