# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
tests/targets/overload driven over its stdin (its header comment has the
commands): the guarded service in front of a dependency of fixed
capacity that tests/adaptive and tools/bench/overload offer their load.

Python 3 standard library only.
"""

import subprocess

import sdstest


class Service(sdstest.LineReader):
    """One overload process of @app's point @point, a test's other
    process (ctx.others: its cleanup kills it)."""

    def __init__(self, ctx, path, app, point, group="default"):
        self.name = "overload"
        self.buf = b""
        self.p = subprocess.Popen([path, group, app, point],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=ctx.env,
                                  cwd=ctx.tmp, start_new_session=True)
        ctx.others.append(self.p)
        sdstest.check(self.readline(10) == "ready", "overload did not start")

    def cmd(self, line, timeout=30):
        """Send @line; its answer's lines before "done"."""
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        out = []
        while True:
            got = self.readline(timeout)
            if got == "done":
                return out
            sdstest.check(not got.startswith("error"), "overload: %s" % got)
            out.append(got)

    def report(self):
        """The counts since the last report, and the goodput and the
        requests made a second."""
        f = self.cmd("report")[0].split()
        r = {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}
        secs = max(r["elapsed_ms"], 1) / 1000.0
        r["goodput"] = r["good"] / secs
        r["made"] = r["requests"] / secs
        return r
