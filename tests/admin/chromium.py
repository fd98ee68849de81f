# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The dashboard's browser: one headless Debian chromium for the admin
suite's run (Chromium), a page of its own for each test (Browser), driven
over the DevTools protocol by a tiny websocket client (WebSocket).
Used by t_dashboard.py and t_copy.py; run.py stops it last.
"""

import base64
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import sdstest
from sdstest import Fail
from admin_lib import CHROMIUM


class WebSocket:
    """Just enough RFC 6455 for the DevTools protocol: text frames."""

    def __init__(self, url, timeout=30):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        resp = b""
        while b"\r\n\r\n" not in resp:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Fail("websocket handshake: connection closed")
            resp += chunk
        head, self.buf = resp.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise Fail("websocket handshake: %r" % head[:100])

    def send(self, text):
        data = text.encode()
        hdr = bytearray([0x81])
        n = len(data)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr.append(0x80 | 126)
            hdr += struct.pack(">H", n)
        else:
            hdr.append(0x80 | 127)
            hdr += struct.pack(">Q", n)
        mask = os.urandom(4)
        hdr += mask
        self.sock.sendall(bytes(hdr) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise Fail("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            if b1 & 0x80:
                mask = self._read(4)
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read(n)))
            else:
                data = self._read(n)
            op = b0 & 0x0f
            if op == 8:
                raise Fail("websocket closed by chromium")
            if op in (9, 10):
                continue
            msg += data
            if b0 & 0x80:
                return msg.decode("utf-8", "replace")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Chromium:
    """One headless chromium for the whole run, started by the first
    dashboard test and stopped when the suite ends (main): each Browser
    is a page (a tab) of its own in it, closed after its test.  Each
    test's admin has a port of its own, so its page is an origin of its
    own (storage, cache).  Started again if it died."""
    proc = None
    tmp = None
    port = None

    @classmethod
    def devtools_port(cls):
        if cls.proc is not None and cls.proc.poll() is None and cls.port:
            return cls.port
        cls.stop()
        cls.tmp = tempfile.mkdtemp(prefix="sds-admin-chromium.")
        profile = os.path.join(cls.tmp, "profile")
        os.mkdir(profile)
        cls.proc = sdstest.spawn([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                  "--disable-quic", "--no-first-run",
                                  "--disable-background-networking",
                                  "--disable-component-update",
                                  "--disable-sync", "--disable-dev-shm-usage",
                                  "--user-data-dir=" + profile,
                                  "--remote-debugging-port=0", "--window-size=1400,1300",
                                  "about:blank"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while time.time() < deadline:
            if os.path.exists(port_file):
                lines = open(port_file).read().split("\n")
                if len(lines) >= 2 and lines[1]:
                    break
            if cls.proc.poll() is not None:
                raise Fail("chromium exited with %d" % cls.proc.returncode)
            time.sleep(0.1)
        else:
            raise Fail("chromium did not open its DevTools port in 30 s")
        cls.port = int(lines[0])
        return cls.port

    @classmethod
    def devtools(cls, method, path):
        c = http.client.HTTPConnection("127.0.0.1", cls.devtools_port(), timeout=10)
        try:
            c.request(method, path)
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise Fail("chromium %s %s: %d %r" % (method, path, r.status, body[:200]))
            return body
        finally:
            c.close()

    @classmethod
    def stop(cls):
        if cls.proc is not None:
            sdstest.reap(cls.proc, always=True)
            cls.proc = None
        cls.port = None
        if cls.tmp:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            cls.tmp = None


class Browser:
    """A page of its own in the run's chromium (Chromium), driven over
    the DevTools protocol."""

    def __init__(self, env):
        self.env = env
        page = json.loads(Chromium.devtools("PUT", "/json/new?about:blank"))
        self.target = page["id"]
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.errors = []
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(m)

    def _event(self, msg):
        self.events.append(msg)
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: %s %s" % (d.get("text"),
                                                     d.get("exception", {}).get("description", "")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append("log: %s %s" % (e.get("text"), e.get("url", "")))

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise Fail("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)

    def wait_event(self, name, timeout=20):
        deadline = time.time() + timeout
        for m in self.events:
            if m.get("method") == name:
                return m
        self.ws.sock.settimeout(timeout)
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            self._event(msg)
            if msg.get("method") == name:
                return msg
        raise Fail("no %s in %d s" % (name, timeout))

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise Fail("js %r: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_js(self, expr, timeout=20, what=None):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = self.js(expr)
            if last:
                return last
            time.sleep(0.2)
        raise Fail("%s: still %r after %d s" % (what or expr, last, timeout))

    def close(self):
        self.ws.close()
        try:
            Chromium.devtools("GET", "/json/close/" + self.target)
        except (OSError, Fail):
            pass        # chromium is gone: started again by the next Browser
