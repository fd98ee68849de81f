# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
tests/targets/target.c (target_pie, target_nopie, target_lib, ... and
the suites' private copies of them) driven on stdin, as guarded.py
drives guarded.c: tests/integration (and probepath through it), e2e,
backlog and install.

    t = target.Target(ctx, path)      # waits for "ready"
    t.work(100, 3)                    # 100 calls of work(), 3 failing
    t0, t1 = t.stamp()                # one call, by the program's clock

The program runs in a session of its own, its stderr in a file of the
test's dir; it adds itself to ctx.targets (a sdstest.ProcDir's, or any
context's list of objects with .cleanup()), so the test's cleanup ends
it whatever happens.
"""

import os
import signal
import subprocess

import sdstest
from sdstest import Fail, check, eq, log


class Target(sdstest.LineReader):
    """A target.c program @path, named @name in messages (its file name),
    run with @env (default: this process's) in ctx.tmp."""

    def __init__(self, ctx, path, name=None, env=None):
        self.ctx = ctx
        self.path = path
        self.name = name or os.path.basename(path)
        self.errpath = os.path.join(ctx.tmp, "target-%d.err" % len(ctx.targets))
        self.errf = open(self.errpath, "wb")
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf,
                                  env=env, cwd=ctx.tmp, start_new_session=True)
        ctx.targets.append(self)
        self.buf = b""
        line = self.readline(10)
        check(line == "ready", "%s did not say ready: %r" % (self.name, line))

    def alive(self):
        return self.p.poll() is None

    def send(self, line):
        """Send one command without waiting for it (wait_done() after)."""
        log("%s[%d] <- %s" % (self.name, self.pid, line))
        try:
            self.p.stdin.write((line + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Fail("%s (pid %d) is gone (status %s)"
                       % (self.name, self.pid, self.p.poll()))

    def wait_done(self, timeout=120):
        """The lines of the command's answer before its "done"; its
        "error: ..." line fails the test."""
        out = []
        while True:
            l = self.readline(timeout)
            if l == "done":
                return out
            if l.startswith("error"):
                raise Fail("%s: %s" % (self.name, l))
            out.append(l)

    def cmd(self, line, timeout=120):
        """Send one command, wait for "done"; return the lines before it."""
        self.send(line)
        return self.wait_done(timeout)

    def work(self, n, e=0, t=0, ms=0, timeout=120):
        """@n calls of work(), the first @e failing, the last @t sleeping
        @ms ms: (min, max) ns of a call as the program timed it."""
        out = self.cmd("work %d %d %d %d" % (n, e, t, ms), timeout)
        took = out[-1].split() if out else []
        eq((len(took), took[:1]), (3, ["took"]), "%s: work's reply %r"
           % (self.name, out))
        return int(took[1]), int(took[2])

    def stamp(self):
        """One call of work(); the wall clock just before and after it, as
        the program read it: (t0, t1) in seconds."""
        out = self.cmd("stamp", 10)
        at = out[-1].split() if out else []
        eq((len(at), at[:1]), (3, ["at"]), "%s: stamp's reply %r"
           % (self.name, out))
        return int(at[1]) / 1e9, int(at[2]) / 1e9

    def kill(self):
        if self.p.poll() is None:
            sdstest.kill_group(self.p, signal.SIGKILL)
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except Exception:
                pass
        self.errf.close()

    cleanup = kill
