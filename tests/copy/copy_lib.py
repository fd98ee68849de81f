# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The copy suite's harness: test shadow servers (raw and HTTP) that record
what they receive, a running `sds-copy serve`, plans files, and the
test context that ends every process and socket whatever happens.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import Fail, check, eq, log  # noqa: E402,F401

# $SDS_COPY: another build (e.g. a sanitizer one) of the same program.
COPY = os.environ.get("SDS_COPY") or os.path.join(sdstest.BUILD, "bin", "sds-copy")
SUITE = sdstest.Suite(timeout=120)


class Shadow:
    """A TCP server on 127.0.0.1 that records what it gets: raw lines
    (@http False: each b"...\\n" is one request) or HTTP/1.1 requests
    (body and X-SDS-Copy), answered with @status; with @stall it
    accepts connections and never reads them; @answer(body), when given,
    is the whole response to each HTTP request.  .got: [(body, colour)]
    in arrival order; .conns: connections accepted."""

    def __init__(self, http=False, status=200, stall=False, answer=None):
        self.http = http
        self.answer = answer
        self.stall = stall
        self.status = status
        self.got = []
        self.conns = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.addr = "127.0.0.1:%d" % self.port
        self.closed = False
        self.threads = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self.threads.append((t, c))

    def _serve(self, c):
        try:
            if self.stall:      # takes the connection, never reads it
                while not self.closed:
                    time.sleep(0.05)
                return
            (self._http if self.http else self._raw)(c)
        except OSError:
            pass
        finally:
            c.close()

    def _raw(self, c):
        buf = b""
        while True:
            d = c.recv(65536)
            if not d:
                return
            buf += d
            *lines, buf = buf.split(b"\n")
            with self.lock:
                self.got.extend((l + b"\n", None) for l in lines)

    def _http(self, c):
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            check(lines[0] == "POST / HTTP/1.1", "request line %r" % lines[0])
            h = {}
            for l in lines[1:]:
                k, v = l.split(":", 1)
                h[k.strip().lower()] = v.strip()
            n = int(h["content-length"])
            while len(buf) < n:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            body, buf = buf[:n], buf[n:]
            with self.lock:
                self.got.append((body, h.get("x-sds-copy")))
            if self.answer:     # @answer(body): the whole HTTP response
                c.sendall(self.answer(body))
            else:
                c.sendall(b"HTTP/1.1 %d X\r\nContent-Length: 2\r\n\r\nok" % self.status)

    def count(self):
        with self.lock:
            return len(self.got)

    def wait_count(self, n, timeout=30):
        """Wait until @n requests arrived; then a moment for any extra."""
        sdstest.wait_until(lambda: self.count() >= n, time.time() + timeout,
                           lambda _: "shadow %s: %d of %d requests after %d s"
                           % (self.addr, self.count(), n, timeout), 0.05)
        time.sleep(0.3)
        return self.count()

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for _, c in self.threads:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def plan(name, shadows, app="app", points=("pt",), amplification=1,
         framing="raw", expires_in=3600, **kw):
    p = {"name": name, "app": app, "points": list(points),
         "amplification": amplification, "shadows": shadows,
         "framing": framing, "expires_at": int(time.time()) + expires_in}
    p.update(kw)
    return p


class Server:
    """`sds-copy serve` of @ctx with @plans (a list of plan dicts or the
    file's whole text), ready once its control socket exists; @admin
    (a list of options: --admin ... --token-file ...) instead of --plans."""

    def __init__(self, ctx, plans, extra=(), name="default", wait=True, admin=None):
        self.ctx = ctx
        self.name = name
        self.plans_path = os.path.join(ctx.tmp, "plans-%s.json" % name)
        self.write_plans(plans)
        self.sock = os.path.join(ctx.run_dir, "copy-%s.sock" % name)
        self.errpath = os.path.join(ctx.tmp, "serve-%s.err" % name)
        source = list(admin) if admin is not None else ["--plans", self.plans_path]

        def start(port):
            self.port = port
            self.addr = "127.0.0.1:%d" % port
            argv = [COPY, "serve", "--listen", self.addr] + source + \
                ["--name", name] + list(extra)
            log(" ".join(argv))
            with open(self.errpath, "wb") as e:
                self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=e,
                                          stdin=subprocess.DEVNULL, env=ctx.env,
                                          start_new_session=True)
            ctx.others.append(self.p)
            return self.p
        if wait:
            sdstest.serve_on_free_port(start, "sds-copy serve")
            self.wait_ready()
        else:
            start(sdstest.free_port())

    def write_plans(self, plans):
        text = plans if isinstance(plans, str) else json.dumps({"plans": plans})
        with open(self.plans_path, "w") as f:
            f.write(text)

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        while not sdstest.is_socket(self.sock):
            if self.p.poll() is not None:
                raise Fail("sds-copy serve exited %d: %s" % (self.p.returncode,
                                                            self.stderr().strip()))
            if time.monotonic() > deadline:
                raise Fail("sds-copy serve: no socket %s after %d s" % (self.sock, timeout))
            time.sleep(0.02)

    def stats(self):
        r = sdstest.run_group([COPY, "stats", "--json", "--name", self.name],
                              self.ctx.env, self.ctx.tmp, self.ctx.others)
        check(r.rc == 0, "sds-copy stats: %r" % r)
        return json.loads(r.out)

    def plan_stats(self, name):
        for p in self.stats()["plans"]:
            if p["name"] == name:
                return p
        raise Fail("stats: no plan %s" % name)

    def wait_settled(self, name, timeout=30):
        """The plan's counters once nothing is queued or in flight:
        every copy made is dispatched or dropped."""
        def settled():
            p = self.plan_stats(name)
            d = sum(p["dropped"][k] for k in ("rate", "queue", "shadow", "reload"))
            return p if p["queued"] == 0 and p["in_flight"] == 0 and \
                p["dispatched"] + d == p["copies"] else None
        return sdstest.wait_until(settled, time.time() + timeout,
                                  lambda _: "plan %s never settled: %r"
                                  % (name, self.plan_stats(name)), 0.1)

    def hup(self):
        os.kill(self.p.pid, signal.SIGHUP)

    def stop(self):
        """SIGTERM; it must exit 0 and remove its socket and lock."""
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(10)
        eq(rc, 0, "sds-copy serve exit status")
        check(not os.path.exists(self.sock), "socket %s left behind" % self.sock)
        lock = os.path.join(self.ctx.run_dir, "copy-%s.lock" % self.name)
        check(not os.path.exists(lock), "lock %s left behind" % lock)


class Ctx(sdstest.ProcDir):
    """A test's dir, processes and shadows, all ended by cleanup()."""

    def __init__(self, name):
        super().__init__(name, "sds-copy-")
        self.shadows = []

    def shadow(self, **kw):
        s = Shadow(**kw)
        self.shadows.append(s)
        return s

    def run(self, args, timeout=60):
        return sdstest.run_group([COPY] + args, self.env, self.tmp, self.others,
                                 timeout=timeout)

    def cleanup(self):
        for s in self.shadows:
            s.close()
        super().cleanup()




class Admin(sdsadmin.Admin):
    """A real sds-admin of @ctx on a free loopback port (tests/copy and
    tests/capture; tests/lib/sdsadmin.py)."""

    TOKEN = "copy-admin-t0ken"

    def __init__(self, ctx):
        super().__init__(ctx, token=self.TOKEN,
                         db=os.path.join(ctx.tmp, "admin.db"))
        self.start()

    def call(self, method, path, body=None, want=200):
        st, doc = self.req(method, path, body)
        if st != want:
            raise Fail("%s %s: status %d, want %d: %r" % (method, path, st, want, doc))
        return doc

    def stop(self):
        super().stop(quiet=False)


def test(fn):
    return SUITE.test(fn)
