# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the "do no harm" tests share (tests/harm/run.py): the suite, the
per-test context, and the programs of build/test/harm.

Each test module (tests/harm/t_*.py) registers its tests with @test;
run.py imports them all and runs the suite.  A test gets a Ctx: a
sdstest.ProcDir (own run and state dirs in a 0755 temp dir; .targets,
.loaders and .others ended by its cleanup, whatever happened).
"""

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS, Fail, check  # noqa: E402

HARM_BIN = os.path.join(BUILD, "test", "harm")
TARGETS_BIN = os.path.join(BUILD, "test", "targets")
SUITE = sdstest.Suite(timeout=180)
test = SUITE.test


class Ctx(sdstest.ProcDir):
    """One test's dirs and processes (see sdstest.ProcDir)."""

    def __init__(self, name):
        super().__init__(name, "sds-harm-")

    def program(self, name, where=HARM_BIN):
        """A copy of build/test/harm/@name (or of @where/@name) in the
        test's dir: its own inode, so no other test's probes reach it.
        Fails, naming the make goal, when it was not built."""
        src = os.path.join(where, name)
        check(os.path.exists(src), "%s missing: run make %s" % (
            src, "harm-bins" if where == HARM_BIN else "test-targets"))
        dst = os.path.join(self.tmp, name)
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        return dst

    def spawn(self, argv, **kw):
        """Start @argv in its own session with the test's environment,
        stdin and stdout pipes; ended by cleanup()."""
        kw.setdefault("env", self.env)
        kw.setdefault("cwd", self.tmp)
        kw.setdefault("stdin", subprocess.PIPE)
        kw.setdefault("stdout", subprocess.PIPE)
        p = subprocess.Popen(list(argv), start_new_session=True, **kw)
        self.others.append(p)
        return p

    def attach(self, args, app, group="default", **kw):
        """`sds-bpf attach ARGS`, ready (ended by cleanup())."""
        return sdstest.AttachProcess(self, args, app, group, **kw)

    def sds(self, args, timeout=30):
        """`sds-bpf ARGS` to its end: a sdstest.Result."""
        return sdstest.run_group([SDS] + list(args), self.env, self.tmp,
                                 self.others, timeout=timeout)

    def stats(self, app, group="default"):
        """`sds-bpf stats --json` of @app, parsed."""
        args = ["stats", "--group", group, "--app", app, "--json"]
        return sdstest.json_out(self.sds(args), "sds-bpf " + " ".join(args))


# ELF helpers are the shared harness's (sdstest).
elf_symbol_vaddr = sdstest.elf_symbol_vaddr
symbol_file_offset = sdstest.symbol_file_offset


class Driven(sdstest.LineReader):
    """A program of the suite driven on stdin: it prints "ready ...",
    then answers each command line with lines ending in "done"."""

    def __init__(self, ctx, path, argv=()):
        self.name = os.path.basename(path)
        self.p = ctx.spawn([path] + list(argv))
        self.buf = b""
        line = self.readline(10)
        check(line.startswith("ready"),
              "%s did not say ready: %r" % (self.name, line))

    def cmd(self, line, timeout=60):
        """Send one command, wait for "done": the lines before it."""
        sdstest.log("%s[%d] <- %s" % (self.name, self.pid, line))
        try:
            self.p.stdin.write((line + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Fail(self.eof_message())
        out = []
        while True:
            got = self.readline(timeout)
            if got == "done":
                sdstest.log("%s[%d] -> %s" % (self.name, self.pid,
                                               " | ".join(out)))
                return out
            out.append(got)

    def alive(self):
        return self.p.poll() is None
