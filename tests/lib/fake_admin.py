# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A stand-in sds-admin for the suites: real HTTP on a loopback port, so
that the loader's uplink (loader/uplink*.c) is tested as it talks to the
real one, with the reply each test wants."""

import http.server
import json
import threading

# The reply of an admin with nothing to change (common/heartbeat/heartbeat.h).
NOTHING_NEW = {"version": 0, "changed": False, "strategies": None,
               "drills": []}


class FakeAdmin:
    """HTTP on 127.0.0.1, a free port (self.port, self.url), served by
    daemon threads until close().  Each heartbeat (a POST's JSON body) is
    given to @answer(doc), called under self.lock, whose result is the
    200 reply: bytes as they are, anything else as JSON.  Subclasses keep
    what they record under the same lock.

    With @token, a post without that bearer token is answered 401, as the
    real admin would, and only counted (self.foreign): a port is reused
    once freed, and a loader of another test or suite still posting to
    the admin it had there must not pass for this test's loader."""

    def __init__(self, answer, token=None):
        self.lock = threading.Lock()
        self.foreign = 0
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                if token is not None and \
                        self.headers.get("Authorization") != "Bearer " + token:
                    with fake.lock:
                        fake.foreign += 1
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                doc = json.loads(body)
                with fake.lock:
                    body = answer(doc)
                if not isinstance(body, bytes):
                    body = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()
