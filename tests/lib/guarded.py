# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A guarded program driven on stdin (tests/targets/guarded.c), shared by
the suites that need a real libsds process: tests/guard and
tests/hostile.  Its context @ctx is a sdstest.ProcDir (Target adds
itself to ctx.targets, so the test's cleanup ends it).
"""

import os
import signal
import subprocess

import sdstest
from sdstest import Fail, check, log

GROUP = "default"
_kill_group = sdstest.kill_group


def kv(line):
    """'passed 3 downgraded 1' -> {'passed': 3, 'downgraded': 1}."""
    f = line.split()
    check(len(f) % 2 == 0, "not key-value pairs: %r" % line)
    return {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}


class Target(sdstest.LineReader):
    """A guarded program driven on stdin (tests/targets/guarded.c)."""

    def __init__(self, ctx, path, prefix=None):
        self.ctx = ctx
        self.path = path
        self.name = os.path.basename(path)
        self.app = None
        n = len(ctx.targets)
        self.errpath = os.path.join(ctx.tmp, "target-%d.err" % n)
        self.errf = open(self.errpath, "wb")
        self.p = subprocess.Popen((prefix or []) + [path],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf,
                                  env=ctx.env, cwd=ctx.tmp,
                                  start_new_session=True)
        ctx.targets.append(self)
        self.buf = b""
        line = self.readline(10)
        check(line == "ready", "%s did not say ready: %r" % (self.name, line))

    def alive(self):
        return self.p.poll() is None

    CHUNK = 65536

    def eof_message(self):
        st = self.p.poll()
        if st is None:
            try:
                st = self.p.wait(2)
            except subprocess.TimeoutExpired:
                pass
        return ("%s (pid %d) exited (status %s%s)"
                % (self.name, self.pid, st,
                   ", killed by %s" % signal.Signals(-st).name
                   if isinstance(st, int) and st < 0 else ""))

    def cmd(self, line, timeout=60):
        """Send one command, wait for "done"; return the lines before it."""
        log("%s[%d] <- %s" % (self.name, self.pid, line))
        try:
            self.p.stdin.write((line + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Fail("%s (pid %d) is gone (status %s)"
                       % (self.name, self.pid, self.p.poll()))
        out = []
        while True:
            l = self.readline(timeout)
            if l == "done":
                log("%s[%d] -> %s" % (self.name, self.pid,
                                       " | ".join(x[:200] for x in out)))
                return out
            if l.startswith("error"):
                raise Fail("%s: %s (command %r)" % (self.name, l, line))
            out.append(l)

    def open(self, app, group=GROUP):
        self.app = app
        self.cmd("open %s %s" % (group, app))

    def _one(self, line, timeout=60):
        out = self.cmd(line, timeout)
        check(len(out) >= 1, "%s: %r printed nothing" % (self.name, line))
        return out

    def call(self, point, n, exp=None, timeouts=False, **opts):
        """N guarded calls (opts: err, sleep_ms, every_us, times=True,
        since_mark=True: the times since the last `mark`)."""
        args = ["call", point, str(n)]
        for k, v in opts.items():
            if k in ("times", "all", "since_mark"):
                if v:
                    args.append(k)
            else:
                args.append("%s=%d" % (k, v))
        out = self._one(" ".join(args), timeout=120)
        r = kv(out[0])
        if opts.get("times"):
            check(len(out) == 2 and out[1].startswith("times"),
                  "no times line: %r" % out)
            r["times"] = [int(x) for x in out[1].split()[1:]]
        if exp is not None:
            exp.add(r, timeouts=timeouts)
        return r

    def hold(self, point, k, exp=None):
        """K threads enter; returns how many were refused."""
        out = self._one("hold %s %d" % (point, k))
        f = out[0].split()
        check(len(f) == 2 and f[0] == "refused", "hold: %r" % out)
        refused = int(f[1])
        if exp is not None:
            exp.visits += k
            exp.downgrades += refused
        return refused

    def release(self, held=0, exp=None):
        self.cmd("release")
        if exp is not None:
            exp.completed += held

    def rate(self, point, secs, exp=None, threads=1):
        r = kv(self._one("rate %s %g threads=%d" % (point, secs, threads),
                         timeout=secs + 60)[0])
        if exp is not None:
            exp.add(r)
        return r

    def first_down(self, point, exp=None, every_us=100, max_ms=10000, err=0):
        r = kv(self._one("first_down %s every_us=%d max_ms=%d err=%d"
                         % (point, every_us, max_ms, err),
                         timeout=max_ms / 1000 + 60)[0])
        if exp is not None:
            down = 1 if r["elapsed_ns"] >= 0 else 0
            exp.add({"passed": r["passed"], "downgraded": down,
                     "failed": r["failed"]})
        return r

    def first_pass(self, point, exp=None, every_us=1000, max_ms=10000):
        r = kv(self._one("first_pass %s every_us=%d max_ms=%d"
                         % (point, every_us, max_ms),
                         timeout=max_ms / 1000 + 60)[0])
        if exp is not None:
            passed = 1 if r["elapsed_ns"] >= 0 else 0
            exp.add({"passed": passed, "downgraded": r["downgraded"]})
        return r

    def fork_call(self, point, n, exp=None, wait_ms=300, err=0):
        """A forked child makes N calls after @wait_ms; its report."""
        r = kv(self._one("fork_call %s %d wait_ms=%d err=%d"
                         % (point, n, wait_ms, err))[0])
        if exp is not None:
            exp.add(r)
        return r

    def leak(self, point, n, exp=None):
        """N sds_should_downgrade() without the finally (leaked frames):
        their report; @exp counts their visits and downgrades."""
        r = kv(self._one("leak %s %d" % (point, n))[0])
        if exp is not None:
            exp.visits += r["passed"] + r["downgraded"]
            exp.downgrades += r["downgraded"]
        return r

    @staticmethod
    def _sites(line):
        f = line.split()
        check(len(f) == 5 and f[0] == "sites", "not a sites line: %r" % line)
        return dict(zip(("enter", "exit", "exception", "downgrade"), f[1:]))

    def sites(self):
        """{site: its first 5 bytes in hex} of this process."""
        return self._sites(self._one("sites")[0])

    def seccomp(self, *what):
        """A seccomp filter: "pwrite", "mprotect_wx" fail with EPERM."""
        self.cmd("seccomp " + " ".join(what))

    def fork_pause(self):
        """Fork a child that waits for fork_resume; its pid."""
        f = self._one("fork_pause")[0].split()
        check(len(f) == 2 and f[0] == "child", "fork_pause: %r" % f)
        return int(f[1])

    def fork_resume(self, point, n, exp=None):
        """The paused child's sites (as it reads them) and the report
        of its N guarded calls."""
        out = self._one("fork_resume %s %d" % (point, n))
        check(len(out) == 2, "fork_resume: %r" % out)
        r = kv(out[1])
        if exp is not None:
            exp.add(r)
        return self._sites(out[0]), r

    def uid(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("Uid:"):
                    return [int(x) for x in line.split()[1:]]
        return None

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            _kill_group(self.p, sig)
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def cleanup(self):
        self.kill()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except Exception:
                pass
        self.errf.close()


