#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
tools/bench/copy/copy_cost.py: what traffic copy costs the application per call
(issue 12), `make copy-cost-bench`, also run by tools/bench/probe/run.sh.

build/bench/bench-copy-target calls handle_request(req, len) (a nop5
entry: tools/bench/copy/copy_fn.c) in a tight loop with distinct requests of
256 bytes and of 4 KiB.  Four byte-identical copies of it (uprobes belong
to a file), each served by its own `sds-bpf attach --tick-ms 100
--max-overhead 0`, all running at once:

  none      req=handle_request:site=nop5            the function point alone
  copy 100% ...:copy=1,2:copy_rate=100 --copy-to    every request copied
  copy 10%  ...:copy=1,2:copy_rate=10  --copy-to    one in ten
  copy+ret  ...:copy=1,2:copy_rate=100:copy_ret=3,4  every request and its
            64-byte response (a uretprobe at the return: issue 37)

The copies go to a sink on 127.0.0.1 (this script: it reads and discards).
BENCH_ROUNDS rounds (default 11); each runs every column once per size,
in rotating order, BENCH_COPY_CALLS calls (default 50,000) per run.  The
table has the median ns per call with the rounds' spread, and each copy
column's extra cost over "none": the median of the rounds' own
differences, with their spread.  Then the loaders' counts: calls,
captured, dropped (ring full or read fault), sent, lost (send buffer
full).  Needs root and `make
all bench-bins`.  A benchmark, not a test: exits non-zero only if a loader
could not be started or a run failed.
"""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# results.py is tools/bench's, one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
SDS = os.path.join(BUILD, "bin", "sds-bpf")
TARGET = os.path.join(BUILD, "bench", "bench-copy-target")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "11"))
CALLS = int(os.environ.get("BENCH_COPY_CALLS", "50000"))
SIZES = [256, 4096]
# (column, copy_rate or None for no copy)
VARIANTS = [("none", None), ("copy100", 100), ("copy10", 10), ("copyret", 100)]
TITLE = {"none": "no copy", "copy100": "copy, 100%", "copy10": "copy, 10%",
         "copyret": "copy + copy_ret, 100%"}


class Sink:
    """A TCP server on 127.0.0.1 that reads and discards what it gets."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.bytes = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c):
        with c:
            while True:
                try:
                    d = c.recv(1 << 20)
                except OSError:
                    return
                if not d:
                    return
                with self.lock:
                    self.bytes += len(d)


class Bench:
    def __init__(self):
        self.t = tempfile.mkdtemp(prefix="sds-copy-cost.")
        self.env = dict(os.environ, SDS_RUN_DIR=os.path.join(self.t, "run"),
                        SDS_STATE_DIR=os.path.join(self.t, "state"))
        os.makedirs(self.env["SDS_RUN_DIR"])
        os.makedirs(self.env["SDS_STATE_DIR"])
        self.loaders = []
        self.sink = Sink()

    def binary(self, name):
        d = os.path.join(self.t, name)
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, "bench-copy-target")

    def attach(self, name, rate):
        b = self.binary(name)
        shutil.copy2(TARGET, b)
        spec = "req=handle_request:site=nop5"
        extra = []
        if rate is not None:
            spec += ":copy=1,2:copy_rate=%d" % rate
            if name == "copyret":
                spec += ":copy_ret=3,4"
            extra = ["--copy-to", self.sink.addr]
        app = "cc-" + name
        out = open(os.path.join(self.t, name + ".out"), "w")
        p = subprocess.Popen([SDS, "attach", "--app", app, "--tick-ms", "100",
                              "--max-overhead", "0"] + extra + [b, spec],
                             stdout=out, stderr=subprocess.STDOUT,
                             env=self.env, start_new_session=True)
        out.close()
        self.loaders.append(p)
        sock = os.path.join(self.env["SDS_RUN_DIR"], "default.%s.sock" % app)
        end = time.monotonic() + 30
        while not os.path.exists(sock):
            if p.poll() is not None or time.monotonic() > end:
                with open(os.path.join(self.t, name + ".out")) as f:
                    sys.stderr.write(f.read())
                raise SystemExit("copy_cost: sds-bpf attach %s did not start" % spec)
            time.sleep(0.1)

    def run(self, name, size):
        r = subprocess.run([self.binary(name), str(CALLS), str(size)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise SystemExit("copy_cost: %s: %s" % (name, r.stderr.strip()))
        return float(r.stdout.split()[0].split("=")[1])

    def stats(self, name):
        r = subprocess.run([SDS, "stats", "--app", "cc-" + name, "--json"],
                           capture_output=True, text=True, env=self.env,
                           timeout=60)
        if r.returncode:
            return {}
        for p in json.loads(r.stdout).get("points", []):
            if p.get("name") == "req":
                return p
        return {}

    def cleanup(self):
        for p in self.loaders:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.sink.sock.close()
        shutil.rmtree(self.t, ignore_errors=True)


def cell(xs):
    return "%.1f (%.1f–%.1f)" % (statistics.median(xs), min(xs), max(xs))


def diff_cell(a, b):
    d = [x - y for x, y in zip(a, b)]
    return "%+.1f (%+.1f…%+.1f)" % (statistics.median(d), min(d), max(d))


def measure(b):
    """{(name, size): [ns per call of each round]}."""
    ns = {(n, s): [] for n, _ in VARIANTS for s in SIZES}
    names = [n for n, _ in VARIANTS]
    for r in range(ROUNDS):
        for s in SIZES:
            k = (r + SIZES.index(s)) % len(names)
            for n in names[k:] + names[:k]:
                ns[(n, s)].append(b.run(n, s))
    return ns


def report(b, ns, sink_bytes):
    lines = []
    out = lines.append
    out("### Traffic copy: ns per call of a function point (`make copy-cost-bench`)")
    out("")
    out("`bench-copy-target %d SIZE` (handle_request(req, len), nop5 entry) under "
        "`sds-bpf attach --tick-ms 100 --max-overhead 0 [--copy-to SINK] "
        "req=handle_request:site=nop5[:copy=1,2:copy_rate=R[:copy_ret=3,4]]`, four loaders "
        "at once, %d rounds in rotating order (tools/bench/copy/copy_cost.py)" % (
            CALLS, ROUNDS))
    out("")
    out("| request | no copy | copy, 100% | copy, 10% | copy + copy_ret | 100% − none | 10% − none | copy_ret's cost |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in SIZES:
        out("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            "256 B" if s == 256 else "4 KiB", cell(ns[("none", s)]),
            cell(ns[("copy100", s)]), cell(ns[("copy10", s)]),
            cell(ns[("copyret", s)]),
            diff_cell(ns[("copy100", s)], ns[("none", s)]),
            diff_cell(ns[("copy10", s)], ns[("none", s)]),
            diff_cell(ns[("copyret", s)], ns[("copy100", s)])))
    out("")
    out("ns per call, median of the rounds (min–max); the differences are the "
        "medians of each round's own difference (min…max).  The loop's own "
        "cost (a memcpy of the request number) is in every column.")
    out("")
    out("| loader | calls | captured | responses | dropped | truncated | sent | lost |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|")
    raw_counts = {}
    for n, _ in VARIANTS:
        p = b.stats(n)
        c = p.get("copy") or {}
        calls = (p.get("total") or {}).get("visits", 0)
        raw_counts[n] = {"calls": calls, "copy": c}
        out("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            TITLE[n], calls, c.get("captured", "-"), c.get("responses", "-"),
            c.get("dropped", "-"),
            c.get("truncated", "-"), c.get("sent", "-"), c.get("lost", "-")))
    out("")
    out("The sink read %d bytes of records.  Dropped: in the kernel, the ring "
        "was full or the read faulted (the call never waits for the loader); "
        "lost: after the ring, the loader's send buffer was full." % sink_bytes)
    return "\n".join(lines) + "\n", raw_counts


def settle(b, timeout=20):
    """Until the copy loaders' counts stop moving (0.5 s apart): the
    last copies drained from the ring and written to the sink."""
    last, end = None, time.monotonic() + timeout
    while time.monotonic() < end:
        now = [json.dumps(b.stats(n).get("copy"), sort_keys=True)
               for n, rate in VARIANTS if rate is not None]
        if now == last:
            return
        last = now
        time.sleep(0.5)


def main():
    if os.geteuid():
        raise SystemExit("copy_cost: needs root (BPF)")
    for f in (SDS, TARGET):
        if not os.access(f, os.X_OK):
            raise SystemExit("copy_cost: %s missing: make all bench-bins" % f)
    b = Bench()
    try:
        for n, rate in VARIANTS:
            b.attach(n, rate)
        time.sleep(0.5)
        ns = measure(b)
        settle(b)
        with b.sink.lock:
            sink_bytes = b.sink.bytes
        text, counts = report(b, ns, sink_bytes)
    finally:
        b.cleanup()
    print(text, end="")
    results.save("copy_cost", text, {"calls": CALLS, "rounds": ROUNDS,
                                     "ns": {"%s/%d" % k: v for k, v in ns.items()},
                                     "counts": counts, "sink_bytes": sink_bytes})
    return 0


if __name__ == "__main__":
    sys.exit(main())
