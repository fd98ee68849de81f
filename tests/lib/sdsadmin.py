# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
One real sds-admin of a test (the admin fixture of every suite that runs
one: tests/admin, e2e, backlog, copy, capture, drill, harm, metrics).

    adm = sdsadmin.Admin(ctx).start()      # a free port, SQLite in ctx.tmp
    adm.ok("POST", "/groups", {"name": "demo"}, want=201)
    adm.stop()                             # SIGTERM: exit 0, nothing said

The admin runs in a session of its own and is tracked by @ctx (a
sdstest.ProcDir's .others, or a .procs list), so the test's cleanup ends
it whatever happens.  It starts on a free port through
sdstest.serve_on_free_port() (again on another port when another run's
server took it first), or on a port given (a restart on the same port,
or one held dead until start(): hold=True), and is up once /healthz
answers 200 from it.  Its stderr goes to a file of the test's dir
(stderr_text()), so a test reads what it said at any time.

The store: @db, a path (default: sds.db in ctx.tmp) or a postgresql://
URL (a database of the test's own on the run's shared PostgreSQL,
tests/lib/pgtest.py: the admin suite's Env.db_arg(), e2e's t_cluster).
@argv_for(port) instead: the whole command line (tests/admin/t_pwfile.py's
password files, tests/install's unit's ExecStart= under setpriv).

Python 3 standard library only.
"""

import json
import os
import signal
import socket
import subprocess
import time

import sdstest
from sdstest import Fail, eq, log

TOKEN = "t0k-3n_for.tests"


def _track(ctx):
    others = getattr(ctx, "others", None)
    return others if others is not None else ctx.procs


class Admin:
    """sds-admin of @ctx with bearer @token (written to a 0600 token file
    in ctx.tmp as @token_fmt, unless @token_file names one or @argv_for
    gives the whole command line), more arguments @extra; restartable on
    the same port and store."""

    def __init__(self, ctx, token=TOKEN, token_file=None, token_fmt="%s\n",
                 db=None, extra=(), port=None, hold=False, env=None,
                 binary=None, argv_for=None, cwd=None):
        self.ctx = ctx
        self.token = token
        # Absolute: it runs in the test's dir.
        self.binary = os.path.abspath(binary or sdstest.admin_path())
        self.token_file = token_file
        if token_file is None and argv_for is None:
            self.token_file = sdstest.write_token(
                os.path.join(ctx.tmp, "admin-token"), token, token_fmt)
        self.db = db or os.path.join(ctx.tmp, "sds.db")
        self.extra = list(extra)
        self.argv_for = argv_for
        self.cwd = cwd
        self.env = env
        self.port = port
        self.hold = None
        if hold:
            # Held (bound, never listening) until start(): a loader given
            # the URL meanwhile is refused as by an admin that is down,
            # and no other run's server can take the port.
            self.hold, self.port = sdstest.dead_port()
        self.p = None
        self.runs = 0

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    @property
    def pid(self):
        return self.p.pid

    def argv(self, port):
        if self.argv_for:
            return self.argv_for(port)
        return sdstest.admin_argv(self.binary, port, self.db, self.token_file,
                                  self.extra)

    def _errpath(self):
        return os.path.join(self.ctx.tmp, "admin-%d.err" % self.runs)

    def stderr_text(self):
        """What this run of the admin wrote to stderr so far."""
        try:
            with open(self._errpath(), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _spawn(self, port):
        self.runs += 1
        argv = self.argv(port)
        log(" ".join(argv))
        with open(self._errpath(), "wb") as err:
            self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                      stderr=err, stdin=subprocess.DEVNULL,
                                      cwd=self.cwd or self.ctx.tmp, env=self.env,
                                      start_new_session=True)
        _track(self.ctx).append(self.p)
        return self.p

    def start(self, same_port=False, timeout=10):
        """Start it; up once /healthz answers 200 from this process.
        @same_port: on the port of the last run (a restart)."""
        if self.hold is not None or same_port:
            if self.hold is not None:
                self.hold.close()
                self.hold = None
            self._spawn(self.port)
            sdstest.wait_until(
                lambda: sdstest.listens(self.p, self.port)
                or self.p.poll() is not None, time.time() + timeout,
                lambda _: "sds-admin on port %d: not listening within %d s; "
                "stderr %r" % (self.port, timeout, self.stderr_text()))
            if self.p.poll() is not None:
                raise Fail("sds-admin on port %d exited with %s: %s"
                           % (self.port, self.p.returncode,
                              self.stderr_text().strip()))
        else:
            self.port, _ = sdstest.serve_on_free_port(self._spawn, "sds-admin",
                                                      timeout=timeout)
        sdstest.wait_until(lambda: sdstest.healthz(self.port),
                           time.time() + timeout,
                           lambda _: "sds-admin on port %d: no /healthz within "
                           "%d s; stderr %r" % (self.port, timeout,
                                                self.stderr_text()))
        return self

    def wait(self, timeout=15):
        return self.p.wait(timeout)

    def poll(self):
        return self.p.poll()

    def send_signal(self, sig):
        self.p.send_signal(sig)

    def terminate(self):
        self.p.terminate()

    def stop(self, quiet=True):
        """SIGTERM: it must exit 0 (and with @quiet say nothing), and
        nothing answer on its port after.  Returns its stderr."""
        log("stopping sds-admin (SIGTERM)")
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Fail("sds-admin did not exit within 15 s of SIGTERM")
        err = self.stderr_text()
        eq(rc, 0, "sds-admin exit status after SIGTERM (stderr %r)"
           % err[-2000:])
        if quiet:
            eq(err, "", "sds-admin stderr")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        except OSError:
            return err
        raise Fail("port %d still accepts connections after sds-admin exited"
                   % self.port)

    def kill(self):
        """SIGKILL to its group (an admin gone without a word)."""
        sdstest.kill_group(self.p)
        self.p.wait(5)

    def req(self, method, path, body=None, token=True, headers=None, raw=None):
        """(status, parsed JSON or text) of one request; @token True: the
        admin's bearer token, a string: that Authorization header, False:
        none."""
        h = dict(headers or {})
        if token is True:
            h["Authorization"] = "Bearer " + self.token
        elif token:
            h["Authorization"] = token
        return sdstest.http_request(self.port, method, path, body, h, raw)

    def ok(self, method, path, body=None, want=200, **kw):
        """The document of /api/v1@path, which must answer @want."""
        st, doc = self.req(method, "/api/v1" + path, body, **kw)
        if st != want:
            raise Fail("%s /api/v1%s %s: status %d, want %d: %r"
                       % (method, path, json.dumps(body) if body else "",
                          st, want, doc))
        return doc

