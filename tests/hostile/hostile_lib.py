# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the hostile-client tests share (tests/hostile/run.py): the suite,
the per-test context and a client that runs as nobody.

Each test module (tests/hostile/t_*.py) registers its tests with
@test; run.py imports them all and runs the suite.  A test gets a Ctx:
a ProcDir (own run and state dirs, processes killed at the end) whose
temp dir is world-traversable, so programs staged there run as nobody
from a checkout under a 0700 directory.
"""

import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, NOBODY, Fail  # noqa: E402

HOSTILE_BIN = os.path.join(BUILD, "test", "hostile")
SUITE = sdstest.Suite(timeout=120)
test = SUITE.test

# Run a command as nobody, with no supplementary groups.
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
             "--clear-groups"]


class Ctx(sdstest.ProcDir):
    """One test's dirs and processes (see sdstest.ProcDir)."""

    def __init__(self, name):
        super().__init__(name, "sds-hostile-")

    def stage(self, path, as_name=None):
        """A copy of @path (a file of the build) in the test's dir, which
        nobody can reach: its own inode, mode 0755, with the libsds.so it
        needs (sdstest.stage)."""
        return sdstest.stage(path, self.tmp, as_name)

    def hostile(self, name):
        """build/test/hostile/@name, staged."""
        src = os.path.join(HOSTILE_BIN, name)
        sdstest.check(os.path.exists(src),
                      "%s missing: run make hostile-bins" % src)
        return self.stage(src)

    def spawn(self, argv, nobody=False, **kw):
        """Start @argv (as nobody when @nobody) in its own session with
        the test's environment; ended by cleanup()."""
        kw.setdefault("env", self.env)
        kw.setdefault("cwd", self.tmp)
        kw.setdefault("stdin", subprocess.DEVNULL)
        p = subprocess.Popen((AS_NOBODY if nobody else []) + list(argv),
                             start_new_session=True, **kw)
        self.others.append(p)
        return p

    def attach(self, args, app, group="default", **kw):
        """`sds-bpf attach ARGS` (ended by cleanup())."""
        return sdstest.AttachProcess(self, args, app, group, **kw)


def query(sock, req="stats", timeout=5.0):
    """One request on the loader's socket @sock, as root: (the parsed
    reply, seconds).  Fail when the whole reply has not come within
    @timeout, or is not JSON."""
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    data = b""
    try:
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall((req + "\n").encode())
        while not data.endswith(b"\n"):
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                raise socket.timeout()
            s.settimeout(left)
            d = s.recv(65536)
            if not d:
                break
            data += d
    except socket.timeout:
        raise Fail("the loader did not answer %r within %.1f s"
                   % (req, timeout))
    except OSError as e:
        raise Fail("%r: %s after %.2f s" % (req, e, time.monotonic() - t0))
    finally:
        s.close()
    try:
        return json.loads(data), time.monotonic() - t0
    except ValueError:
        raise Fail("%r: not JSON: %r" % (req, data[:200]))
