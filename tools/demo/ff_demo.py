#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/ff_demo.py: fail-fast inside software nobody here wrote
(make demo-failfast; with --check, make demo-failfast-check).
docs/FAILFAST.md, "The nginx demo".

Debian's nginx, started here with its own prefix and config in a temp dir
(no system service), is a reverse proxy to an upstream that accepts every
connection and never answers (proxy_connect_timeout 5 s,
proxy_read_timeout 10 s).  sds-bpf attaches to /usr/sbin/nginx with

    up=ngx_event_connect_peer:failfast=connect

(no --pid: the uprobes on the file cover the master and every worker it
forked; SDS_DEMO_NGINX_SYMBOL names another function to try) and the kill switch (visit_threshold 0) on "up": the connect()
nginx makes inside ngx_event_connect_peer fails with ECONNREFUSED, so
nginx answers 502 at once instead of waiting on its upstream.  Then the
kill switch goes off and requests reach the upstream again.

--check asserts (exit 1 otherwise), exactly:
  * kill switch on: 200 requests, each a 502 within 1 s (at once, not
    after the upstream's timeouts: the time is printed, not held); the
    upstream accepts none; nginx's error log says "connect() ... failed
    (111: Connection refused)" 200 times; sds-bpf counts 200 visits of
    "up" and 200 connects failed fast;
  * kill switch off: 20 requests at once all reach the upstream (it counts
    20 accepted connections) and wait on it (no answer within the
    client's 1.5 s); no more connects fail;
  * the loader stopped: none of its programs stays on the cgroup2 root
    (those it held; other runs' programs there are not this run's).

nginx runs, and is probed, as a copy in the run's temp dir: the uprobes
touch no other nginx on the host.  The loader pins under a root of its
own (SDS_PIN_ROOT /sys/fs/bpf/sds-demo-*); a pin left there after it
stopped fails the run (a LEAK line).  nginx's port is given up for
another if something else took it first.  Needs root (BPF).  Cleans up
every process, its temp dir and pin root, also on failure or Ctrl-C.
"""

import json
import os
import signal
import socket
import sys
import threading
import time

import demo_lib
from demo_lib import ROOT, SDS

sys.path.insert(0, os.path.join(ROOT, "tests", "failfast"))
from ff_lib import CgWatch, Server, wait_cg_clean  # noqa: E402
from sdstest import Fail, free_port  # noqa: E402

NGINX = os.environ.get("SDS_DEMO_NGINX", "/usr/sbin/nginx")
APP = "ffnginx"
SYMBOL = os.environ.get("SDS_DEMO_NGINX_SYMBOL", "ngx_event_connect_peer")
SPEC = "up=%s:failfast=connect" % SYMBOL
KILL_N = 200            # requests under the kill switch
# Each must be answered within this: a functional bound, not a speed.
# Refused at connect(), nginx answers 502 at once; let through, it waits
# on the silent upstream (proxy_read_timeout 10 s, or the client's 3 s).
# 1 s tells the two apart with room for a loaded machine; how fast the
# 502 comes is measured and printed (p50, p99, max), never asserted.
KILL_MAX_MS = 1000
OFF_N = 20              # requests once it is off, sent at once
CLIENT_WAIT_S = 1.5     # how long a client waits for those

NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 2;
user root;
pid {t}/nginx.pid;
error_log {t}/logs/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {t}/tmp/body;
    proxy_temp_path {t}/tmp/proxy;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{up};
            proxy_connect_timeout 5s;
            proxy_read_timeout 10s;
        }}
    }}
}}
"""


def die(msg):
    demo_lib.die("ff-demo", msg)


class Run(demo_lib.Run):
    """The temp dir, the upstream and the processes of one run; stop()
    ends them all."""

    def __init__(self):
        super().__init__("ff-demo", ("logs", "tmp"))
        self.up = None
        self.loader = None
        self.strategies = os.path.join(self.t, "strategies.json")
        self.version = 0
        # The nginx the demo runs and the loader probes: the run's copy.
        self.nginx = demo_lib.stage(NGINX, self.t)
        # This run's programs on the cgroup2 root: the loader's.
        self.cg = CgWatch(lambda: [self.loader.pid] if self.loader and
                          self.loader.poll() is None else [])

    def start(self, args, out):
        # In our process group: a test that kills the group on a timeout
        # takes nginx, its workers and the loader with us.
        return super().start(args, out, own_session=False)

    def stop(self):
        clean = super().stop()
        if self.up:
            self.up.close()
        return clean

    def point(self):
        s = json.loads(self.sds("stats", "--json", "--app", APP))
        for p in s["points"]:
            if p["name"] == "up":
                return s, p
        die("stats: no point 'up': %r" % s)

    def write_strategies(self, points):
        """A new version; a running loader is told (SIGHUP) and must show
        it within 5 s."""
        self.version += 1
        with open(self.strategies + ".new", "w") as f:
            json.dump({"version": self.version, "points": points}, f)
        os.rename(self.strategies + ".new", self.strategies)
        if not self.loader:
            return
        self.loader.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 5
        while self.point()[0].get("strategies_version") != self.version:
            if time.monotonic() > deadline:
                die("strategies version %d not in force after 5 s" % self.version)
            time.sleep(0.05)


def start_nginx(run, tries=5):
    """nginx listening on a free port (its master holding the socket): the
    port.  One that another process took before nginx's bind ("Address
    already in use") is given up for another, @tries times."""
    run.up = Server()
    errlog = os.path.join(run.t, "logs", "error.log")
    for _ in range(tries):
        port = free_port()
        conf = os.path.join(run.t, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(t=run.t, port=port, up=run.up.port))
        print("$ %s -p %s -c nginx.conf   (proxy to 127.0.0.1:%d, which "
              "accepts and never answers)" % (run.nginx, run.t, run.up.port))
        log = open(os.path.join(run.t, "nginx.out"), "w")
        # -e: the error log before the config is read is ours too, not
        # /var/log.
        p = run.start([run.nginx, "-e", errlog, "-p", run.t, "-c", conf], log)
        deadline = time.monotonic() + 20
        while p.poll() is None and not demo_lib.listening(p.pid, port):
            if time.monotonic() > deadline:
                die("nginx did not listen within 20 s:\n" +
                    open(log.name).read() + open(errlog).read())
            time.sleep(0.1)
        if p.poll() is None:
            return port
        if "Address already in use" not in open(errlog).read():
            die("nginx exited %d:\n%s%s" % (p.returncode, open(log.name).read(),
                                            open(errlog).read()))
    die("nginx: every port of %d tries was taken" % tries)


def attach(run):
    print("$ cat strategies.json")
    print(open(run.strategies).read())
    print("$ sds-bpf attach --app %s --strategies strategies.json %s '%s' &"
          % (APP, run.nginx, SPEC))
    log = open(os.path.join(run.t, "attach.out"), "w")
    run.loader = run.start([SDS, "attach", "--app", APP, "--strategies",
                            run.strategies, run.nginx, SPEC], log)
    sock = os.path.join(run.t, "run", "default.%s.sock" % APP)
    deadline = time.monotonic() + 30
    while not os.path.exists(sock):
        if run.loader.poll() is not None or time.monotonic() > deadline:
            die("sds-bpf attach did not start serving within 30 s:\n" +
                open(log.name).read())
        time.sleep(0.1)
    run.cg.ours()       # what it attached to the cgroup2 root is this run's
    print(open(log.name).read(), end="")


def request(port, timeout):
    """One GET through nginx: (status or "wait" if no answer came within
    @timeout, seconds taken)."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout)
    try:
        s.settimeout(timeout)
        s.sendall(b"GET / HTTP/1.0\r\nHost: demo\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            b = s.recv(4096)
            if not b:
                break
            head += b
    except socket.timeout:
        return "wait", time.monotonic() - t0
    finally:
        s.close()
    took = time.monotonic() - t0
    parts = head.split(b" ", 2)
    return (parts[1].decode() if len(parts) > 1 else "none"), took


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def say(ok, msg):
    print("check: %s: %s" % (msg, "ok" if ok else "FAILED"))
    return ok


def kill_switch_on(run, port):
    print("\n== kill switch on: %d requests, one after another" % KILL_N)
    before = run.up.accepted
    res = [request(port, 3)]
    # A symbol that fails nothing (SDS_DEMO_NGINX_SYMBOL): one wait says so.
    if res[0][0] != "wait":
        res += [request(port, 3) for _ in range(KILL_N - 1)]
    codes = {}
    for c, _ in res:
        codes[c] = codes.get(c, 0) + 1
    ms = [t * 1000 for _, t in res]
    p99 = pct(ms, 99)
    print("   statuses %s; p50 %.2f ms, p99 %.2f ms, max %.2f ms; the "
          "upstream accepted %d" % (codes, pct(ms, 50), p99, max(ms),
                                    run.up.accepted - before))
    _, p = run.point()
    ff = p.get("failfast", {})
    print("   sds-bpf: 'up' visits %d, connects failed fast %d"
          % (p["total"]["visits"], ff.get("denied", -1)))
    with open(os.path.join(run.t, "logs", "error.log")) as f:
        refused = [x for x in f if "failed (111: Connection refused)" in x]
    print("   nginx's error log, %d times: %s" % (
        len(refused), refused[-1].split("] ", 1)[-1].strip()
        if refused else "(nothing)"))
    ok = say(codes == {"502": KILL_N}, "all %d answered 502" % KILL_N)
    ok &= say(max(ms) < KILL_MAX_MS, "each answered within %d ms (max "
              "%.2f ms), not after the upstream's timeouts"
              % (KILL_MAX_MS, max(ms)))
    ok &= say(run.up.accepted == before, "the upstream accepted none")
    ok &= say(len(refused) == KILL_N, "nginx logged connect() refused %d "
              "times" % KILL_N)
    ok &= say((p["total"]["visits"], ff.get("denied")) == (KILL_N, KILL_N),
              "visits and connects failed fast both %d" % KILL_N)
    return ok


def kill_switch_off(run, port):
    print("\n== kill switch off: %d requests at once, each client waiting "
          "%.1f s" % (OFF_N, CLIENT_WAIT_S))
    before = run.up.accepted
    res = []
    ts = [threading.Thread(target=lambda: res.append(
        request(port, CLIENT_WAIT_S))) for _ in range(OFF_N)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # nginx connects when it reads a request: well before the clients give up.
    deadline = time.monotonic() + 5
    while run.up.accepted - before < OFF_N and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    got = run.up.accepted - before
    codes = {}
    for c, _ in res:
        codes[c] = codes.get(c, 0) + 1
    _, p = run.point()
    ff = p.get("failfast", {})
    print("   outcomes %s (wait: no answer from the upstream); the upstream "
          "accepted %d" % (codes, got))
    print("   sds-bpf: 'up' visits %d, connects failed fast %d, failing %s"
          % (p["total"]["visits"], ff.get("denied", -1), ff.get("failing")))
    ok = say(got == OFF_N, "the upstream accepted exactly %d" % OFF_N)
    ok &= say(codes == {"wait": OFF_N}, "all %d wait on the upstream" % OFF_N)
    ok &= say((p["total"]["visits"], ff.get("denied"), ff.get("failing")) ==
              (KILL_N + OFF_N, KILL_N, False),
              "visits %d, still %d failed fast, not failing"
              % (KILL_N + OFF_N, KILL_N))
    return ok


def loader_gone(run):
    print("\n== the loader stopped (SIGINT)")
    run.loader.send_signal(signal.SIGINT)
    rc = run.loader.wait(30)
    try:
        wait_cg_clean("the loader stopped", run.cg)
    except Fail:
        pass
    left = run.cg.left()
    ok = say(rc == 0, "sds-bpf attach exited %d" % rc)
    ok &= say(not left, "none of its programs on the cgroup2 root%s"
              % (": %s left" % left if left else ""))
    return ok


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        die("usage: ff_demo.py [--check]")
    if os.geteuid():
        die("needs root for BPF: run it as root (sudo make demo-failfast)")
    if not os.access(SDS, os.X_OK):
        die("%s missing: run make all" % SDS)
    if not os.access(NGINX, os.X_OK):
        die("%s missing: apt-get install nginx-light (make deps)" % NGINX)
    run = Run()
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    try:
        port = start_nginx(run)
        if not check:
            print("\n== before: one request, the client waiting %.1f s"
                  % CLIENT_WAIT_S)
            c, t = request(port, CLIENT_WAIT_S)
            print("   %s after %.2f s (nginx waits up to proxy_read_timeout "
                  "10 s)" % (c, t))
        run.write_strategies({"up": {"visit_threshold": 0}})
        attach(run)
        ok = kill_switch_on(run, port)
        run.write_strategies({})
        ok &= kill_switch_off(run, port)
        print("\n$ sds-bpf stats --app %s" % APP)
        print(run.sds("stats", "--app", APP), end="")
        ok &= loader_gone(run)
        run.loader = None
    finally:
        clean = run.stop()
    ok &= clean
    print("ff-demo: %s" % ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
