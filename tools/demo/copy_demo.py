#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/copy_demo.py: traffic copy, live (make demo-copy), ~25 s.

Two instances of the demo service (tools/demo/demo.c) on 127.0.0.1: the
source, app "demo", and its shadow, app "demo-shadow".  A loader on each
(`sds-bpf attach --pid`) counts handle_request as a function point; the
source's loader also captures serve_request's raw request bytes
(`serve=serve_request:copy=2,3`: its arguments 2 and 3 are the buffer and
its length) and sends them with `--copy-to` to an `sds-copy serve` whose
plan sends every request 3 times, raw, to the shadow.  A load generator
sends DEMO_RATE requests/s (default 200) to the source for DEMO_SECONDS
(default 15); every second the visits of handle_request on both are
printed: the shadow's are 3 times the source's.  At the end the counts are
checked, exactly: the records sds-copy received = the calls the source's
loader captured (= serve_request's visits when it dropped none), the
copies dispatched = 3 x received, the shadow's handle_request visits =
dispatched.  Exit 1 on a mismatch.

Runs copies of build/demo/demo in its temporary directory (the binary its
loaders probe: no other process on the host is touched) and pins under a
root of its own (SDS_PIN_ROOT /sys/fs/bpf/sds-demo-*); a pin left there
once everything stopped fails the run (a LEAK line).  sds-copy's port is
given up for another if something else took it first.  Cleans up every
process, its temporary directory and pin root, also when interrupted.
Talks to nothing but 127.0.0.1.  Needs root (BPF).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import demo_lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
SDS = os.path.join(BUILD, "bin", "sds-bpf")
COPY = os.path.join(BUILD, "bin", "sds-copy")
DEMO = os.path.join(BUILD, "demo", "demo")
LOAD = os.path.join(BUILD, "demo", "demo-load")
RATE = int(os.environ.get("DEMO_RATE", "200"))
SECONDS = int(os.environ.get("DEMO_SECONDS", "15"))
AMPLIFICATION = 3
COPY_NAME = "demo-copy"


def die(msg):
    print("demo-copy: %s" % msg, file=sys.stderr)
    sys.exit(1)


class Demo:
    """The processes of the demo and the directory they share."""

    def __init__(self):
        self.t = tempfile.mkdtemp(prefix="sds-demo-copy.")
        self.env = demo_lib.own_env(self.t)
        self.procs = []     # (name, Popen), in start order
        # The service both loaders probe: the run's own copy.
        self.demo = demo_lib.stage(DEMO, self.t)

    def start(self, name, argv, show=True):
        """Start @argv in the background, its output in T/@name.out."""
        if show:
            print("$ %s &" % " ".join(os.path.basename(a) if a.startswith(
                (BUILD, self.t)) else a for a in argv))
        out = open(os.path.join(self.t, name + ".out"), "w")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                             env=self.env, start_new_session=True)
        out.close()
        self.procs.append((name, p))
        return p

    def output(self, name):
        try:
            with open(os.path.join(self.t, name + ".out")) as f:
                return f.read()
        except OSError:
            return ""

    def wait_for(self, what, cond, p, name, timeout=20):
        """Until cond() is true; die with @name's output if @p exits."""
        end = time.monotonic() + timeout
        while not cond():
            if p.poll() is not None or time.monotonic() > end:
                sys.stderr.write(self.output(name))
                die("%s: %s" % (name, what))
            time.sleep(0.1)

    def stop(self, p):
        """SIGTERM, then SIGKILL after 10 s; its exit status."""
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def cleanup(self):
        """Every process stopped, the temp dir and the pin root removed:
        True when no pin was left (else a LEAK line)."""
        for _, p in reversed(self.procs):
            self.stop(p)
        shutil.rmtree(self.t, ignore_errors=True)
        return demo_lib.say_leaks("demo-copy", self.env,
                                  demo_lib.pins_left(self.env))

    def run(self, argv):
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                           timeout=30)
        return r.returncode, r.stdout, r.stderr

    def stats(self, app):
        """`sds-bpf stats --app APP --json`, or None."""
        rc, out, _ = self.run([SDS, "stats", "--app", app, "--json"])
        try:
            return json.loads(out) if rc == 0 else None
        except ValueError:
            return None

    def copy_stats(self):
        """The plan's counters in `sds-copy stats --json`, or None."""
        rc, out, _ = self.run([COPY, "stats", "--name", COPY_NAME, "--json"])
        try:
            plans = json.loads(out)["plans"] if rc == 0 else []
        except (ValueError, KeyError):
            return None
        return plans[0] if plans else None


def point(st, name):
    for p in (st or {}).get("points", []):
        if p.get("name") == name:
            return p
    return None


def visits(st, name):
    p = point(st, name)
    return p["total"]["visits"] if p else 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_on_port(d, name, argv_for, ready, port=0, tries=5):
    """@argv_for(port) started as @name on @port, else on a free one: (its
    Popen, the port) once @ready(port) and it listens there itself.  A
    free port another process took before its bind ("Address already in
    use") is given up for another, @tries times."""
    for _ in range(1 if port else tries):
        at = port or free_port()
        p = d.start(name, argv_for(at))
        end = time.monotonic() + 20
        # Its own listener first: a port's other holder is not asked.
        while p.poll() is None and not (demo_lib.listening(p.pid, at) and ready(at)):
            if time.monotonic() > end:
                sys.stderr.write(d.output(name))
                die("%s: not serving on port %d within 20 s" % (name, at))
            time.sleep(0.1)
        if p.poll() is None:
            return p, at
        if port or "Address already in use" not in d.output(name):
            sys.stderr.write(d.output(name))
            die("%s: exited %d" % (name, p.returncode))
    die("%s: every port of %d tries was taken" % (name, tries))


def start_demo(d, name, app):
    port_file = os.path.join(d.t, name + ".port")
    p = d.start(name, [d.demo, "--app", app, "--port-file", port_file,
                       "--fail-pct", "0", "--sleep-us", "200"])
    d.wait_for("did not start", lambda: os.path.exists(port_file), p, name)
    with open(port_file) as f:
        return p, int(f.read())


def start_loader(d, name, app, pid, points, extra=()):
    sock = os.path.join(d.env["SDS_RUN_DIR"], "default.%s.sock" % app)
    p = d.start(name, [SDS, "attach", "--app", app, "--pid", str(pid)] +
                list(extra) + [d.demo] + points)
    d.wait_for("did not start serving within 20 s",
               lambda: os.path.exists(sock), p, name)
    return p


def live(d, seconds):
    """Every second: both instances' handle_request visits."""
    print("\n  %5s  %12s  %12s  %6s  %10s  %10s" % (
        "t", "source req", "shadow req", "ratio", "received", "dispatched"))
    for i in range(seconds):
        time.sleep(1)
        src = visits(d.stats("demo"), "req")
        sh = visits(d.stats("demo-shadow"), "req")
        cs = d.copy_stats() or {}
        print("  %4ds  %12d  %12d  %6s  %10s  %10s" % (
            i + 1, src, sh, "%.2f" % (sh / src) if src else "-",
            cs.get("received", "-"), cs.get("dispatched", "-")), flush=True)


def settle(d, timeout=15):
    """Wait until the shadow's visits stop changing (1 s apart)."""
    last, end = -1, time.monotonic() + timeout
    while time.monotonic() < end:
        sh = visits(d.stats("demo-shadow"), "req")
        cs = d.copy_stats() or {}
        if sh == last and not cs.get("queued") and not cs.get("in_flight"):
            return
        last = sh
        time.sleep(1)


def check(d):
    """The exact accounting of the copies; True if every count matches."""
    src, sh, cs = d.stats("demo"), d.stats("demo-shadow"), d.copy_stats()
    if not src or not sh or not cs:
        print("check: no stats (source %s, shadow %s, sds-copy %s)" % (
            bool(src), bool(sh), bool(cs)))
        return False
    serve = point(src, "serve") or {}
    cp = serve.get("copy") or {}
    captured = cp.get("captured", serve.get("total", {}).get("visits", 0))
    dropped = cp.get("dropped", 0)
    print("\n  source: %d requests, serve_request visits %d, captured %d, "
          "dropped %d, truncated %d, sent %s, lost %s" % (
              visits(src, "req"), visits(src, "serve"), captured, dropped,
              cp.get("truncated", 0), cp.get("sent", "-"), cp.get("lost", "-")))
    print("  sds-copy: received %d, copies %d, dispatched %d, dropped %s" % (
        cs["received"], cs["copies"], cs["dispatched"],
        json.dumps(cs.get("dropped", {}), sort_keys=True)))
    ok = True
    for what, got, want in (
            ("captured = serve_request visits - dropped", captured,
             visits(src, "serve") - dropped),
            ("sds-copy received = captured", cs["received"], captured),
            ("dispatched = %d x received" % AMPLIFICATION, cs["dispatched"],
             AMPLIFICATION * cs["received"]),
            ("shadow handle_request visits = dispatched",
             visits(sh, "req"), cs["dispatched"])):
        same = got == want
        ok &= same
        print("check: %-44s %8d = %8d  %s" % (what, got, want,
                                              "exact" if same else "MISMATCH"))
    return ok


def main():
    if os.geteuid():
        die("needs root for BPF: run it as root (sudo make demo-copy)")
    for f in (SDS, COPY, DEMO, LOAD):
        if not os.access(f, os.X_OK):
            die("%s missing: run make all demo-bins" % f)
    d = Demo()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    rc = 130
    try:
        rc = run(d)
    except KeyboardInterrupt:
        pass
    finally:
        clean = d.cleanup()
    return rc if clean else 1


def run(d):
    print("== traffic copy: a source and a shadow instance of the demo service;")
    print("   the source's requests, captured at serve_request, go to sds-copy,")
    print("   which sends each one %d times to the shadow\n" % AMPLIFICATION)
    sh_p, sh_port = start_demo(d, "shadow", "demo-shadow")
    src_p, src_port = start_demo(d, "source", "demo")
    start_loader(d, "attach-shadow", "demo-shadow", sh_p.pid, ["req=handle_request"])

    plans = os.path.join(d.t, "plans.json")
    with open(plans, "w") as f:
        json.dump({"plans": [{
            "name": "demo-x%d" % AMPLIFICATION, "app": "demo",
            "points": ["serve"], "amplification": AMPLIFICATION,
            "shadows": ["127.0.0.1:%d" % sh_port], "framing": "raw",
            "expires_at": int(time.time()) + 3600}]}, f)
    print("$ cat plans.json")
    with open(plans) as f:
        print("  " + f.read())
    sock = os.path.join(d.env["SDS_RUN_DIR"], "copy-%s.sock" % COPY_NAME)
    _, cport = start_on_port(
        d, "sds-copy", lambda port: [COPY, "serve", "--listen",
                                     "127.0.0.1:%d" % port, "--plans", plans,
                                     "--name", COPY_NAME],
        lambda port: os.path.exists(sock))
    start_loader(d, "attach-source", "demo", src_p.pid,
                 ["req=handle_request", "serve=serve_request:copy=2,3"],
                 ["--copy-to", "127.0.0.1:%d" % cport])
    print(d.output("attach-source"), end="")
    # Each instance's guard client finds its loader within a second: then
    # the guard point "inventory" counts every call too.
    time.sleep(1.5)

    print("$ demo-load --port %d --rate %d --conns 4 --seconds %d &" % (
        src_port, RATE, SECONDS))
    load = d.start("load", [LOAD, "--port", str(src_port), "--rate", str(RATE),
                            "--conns", "4", "--seconds", str(SECONDS)], show=False)
    live(d, SECONDS)
    load.wait(30)
    settle(d)
    print("\n  load: " + (d.output("load").strip().splitlines() or ["?"])[-1])
    rc, out, err = d.run([SDS, "stats", "--app", "demo"])
    print("\n$ sds-bpf stats --app demo\n" + out + err)
    rc, out, err = d.run([SDS, "stats", "--app", "demo-shadow"])
    print("$ sds-bpf stats --app demo-shadow\n" + out + err)
    ok = check(d)
    print("\n== done: %s" % ("every count exact" if ok else "a count did not match"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
