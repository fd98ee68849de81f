#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
tools/bench/loader/loader_cost.py: what a loader costs as its points grow
(issue 11: 1,024 points for <= 1% of a core, <= 32 MB RSS, stats <= 50 ms).

For each size (10, 100, 256 and 1,024 points) one `sds-bpf attach
--tick-ms 100 --max-overhead 0` per variant serves a byte-identical copy
of build/test/targets/target_many (1,024 functions, nop5 entries), with
calls flowing: the target calls every function 1-5 times every 100 ms
(~30,000 calls/s).  Variants:

  old       sds-bpf built from the commit before issue 11's core
            (BENCH_OLD_COMMIT, default OLD_COMMIT below; built from `git
            archive` in a temp dir, or BENCH_OLD_BIN): at most 256
            points, so no 1,024 row
  new       this tree: one batched read per tick into a snapshot
  per-key   this tree with SDS_COUNTERS_PER_KEY=1: the same snapshot,
            read one key per syscall (bpf_map_lookup_batch's worth)

All of a size's loaders run at once; the measuring windows alternate
between them (BENCH_WINDOWS rounds of BENCH_WINDOW_S seconds each, default
2 x 10 s), so whatever else the machine does weighs on all alike.  CPU %
of one core: utime + stime from /proc/PID/stat over the loader's windows;
RSS: VmRSS from /proc/PID/status at the end; stats: the median of
BENCH_STATS_N (default 7) `sds-bpf stats --json` wall times, taken after
the windows, and the loader's own part of it: the median time from
connecting to its socket and sending `stats` to the reply's last byte
(the command adds its process start, ~20 ms on an idle machine, more on
a loaded one).  Needs root and `make all test-targets`.  A benchmark, not a
test: exits non-zero only if a loader could not be started or measured.
"""

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# results.py is tools/bench's, one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
NEW = os.path.join(BUILD, "bin", "sds-bpf")
MANY = os.path.join(BUILD, "test", "targets", "target_many")
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "10 100 256 1024").split()]
WINDOWS = int(os.environ.get("BENCH_WINDOWS", "2"))
WINDOW_S = float(os.environ.get("BENCH_WINDOW_S", "10"))
STATS_N = int(os.environ.get("BENCH_STATS_N", "7"))
HZ = os.sysconf("SC_CLK_TCK")
OLD_MAX = 256           # SDS_MAX_POINTS before issue 11


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# The loader before issue 11's core (one snapshot per tick, 1,024 points):
# main as it was on 2026-11-30, the "old" column of docs/BENCHMARKS.md's table.
OLD_COMMIT = "a174ed0"


def build_old(tmp):
    """The old loader: BENCH_OLD_BIN, or built from BENCH_OLD_COMMIT."""
    if os.environ.get("BENCH_OLD_BIN"):
        return os.environ["BENCH_OLD_BIN"]
    commit = os.environ.get("BENCH_OLD_COMMIT") or OLD_COMMIT
    src = os.path.join(tmp, "old")
    os.makedirs(src)
    log("loader_cost: building the old loader from %s in %s" % (commit[:12], src))
    arch = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", commit],
                          capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=arch, check=True)
    subprocess.run(["nice", "make", "-j2", "all"], cwd=src, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(src, "build", "bin", "sds-bpf")


class Loader:
    def __init__(self, tmp, variant, binary, n):
        self.variant = variant
        self.binary = binary
        self.app = "lc%d-%s-%d" % (os.getpid(), variant.replace("-", ""), n)
        self.dir = os.path.join(tmp, self.app)
        os.makedirs(os.path.join(self.dir, "run"))
        os.makedirs(os.path.join(self.dir, "state"))
        self.env = dict(os.environ, SDS_RUN_DIR=os.path.join(self.dir, "run"),
                        SDS_STATE_DIR=os.path.join(self.dir, "state"))
        if variant == "per-key":
            self.env["SDS_COUNTERS_PER_KEY"] = "1"
        self.target = os.path.join(self.dir, "many")
        shutil.copy2(MANY, self.target)
        pts = ["p%04d=f%04d" % (i, i) for i in range(n)]
        self.err = open(os.path.join(self.dir, "attach.err"), "wb")
        self.p = subprocess.Popen(
            [binary, "attach", "--app", self.app, "--tick-ms", "100",
             "--max-overhead", "0", self.target] + pts,
            stdout=subprocess.DEVNULL, stderr=self.err, env=self.env,
            start_new_session=True)
        self.driver = None
        self.ticks = 0
        self.secs = 0.0

    def wait_ready(self, timeout=180):
        sock = os.path.join(self.dir, "run", "default.%s.sock" % self.app)
        end = time.monotonic() + timeout
        while not os.path.exists(sock):
            if self.p.poll() is not None or time.monotonic() > end:
                raise RuntimeError("%s: no socket (rc %r): %s" % (
                    self.app, self.p.poll(),
                    open(self.err.name, errors="replace").read()[-500:]))
            time.sleep(0.1)

    def drive(self, seconds):
        self.driver = subprocess.Popen([self.target, "1", str(int(seconds)), "100"],
                                       stdout=subprocess.DEVNULL,
                                       start_new_session=True)

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])   # utime, stime

    def rss_kb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def stats_ms(self):
        times = []
        for _ in range(STATS_N):
            t0 = time.monotonic()
            r = subprocess.run([self.binary, "stats", "--app", self.app, "--json"],
                               env=self.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=60)
            times.append((time.monotonic() - t0) * 1000)
            if r.returncode:
                raise RuntimeError("%s: stats exited %d" % (self.app, r.returncode))
        return statistics.median(times)

    def stats_sock_ms(self):
        path = os.path.join(self.dir, "run", "default.%s.sock" % self.app)
        times = []
        for _ in range(STATS_N):
            t0 = time.monotonic()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(60)
                s.connect(path)
                s.sendall(b"stats\n")
                buf = b""
                while not buf.endswith(b"\n"):
                    d = s.recv(1 << 16)
                    if not d:
                        break
                    buf += d
            times.append((time.monotonic() - t0) * 1000)
            if not buf.startswith(b"{"):
                raise RuntimeError("%s: stats over the socket: %r" % (self.app, buf[:200]))
        return statistics.median(times)

    def stop(self):
        for p in (self.driver, self.p):
            if p and p.poll() is None:
                os.killpg(p.pid, signal.SIGINT if p is self.p else signal.SIGKILL)

    def reap(self, timeout=300):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
        if self.driver:
            self.driver.wait()
        self.err.close()


def measure(tmp, old, n):
    variants = [("old", old)] if n <= OLD_MAX else []
    variants += [("new", NEW), ("per-key", NEW)]
    ls = [Loader(tmp, v, b, n) for v, b in variants]
    try:
        for l in ls:
            l.wait_ready()
        total = 3 + WINDOWS * WINDOW_S * len(ls) + STATS_N * len(ls) * 2 + 10
        for l in ls:
            l.drive(total)
        time.sleep(3)
        for _ in range(WINDOWS):
            for l in ls:
                t0, c0 = time.monotonic(), l.cpu_ticks()
                time.sleep(WINDOW_S)
                l.ticks += l.cpu_ticks() - c0
                l.secs += time.monotonic() - t0
        rows = []
        for l in ls:
            rows.append((n, l.variant, 100.0 * l.ticks / HZ / l.secs,
                         l.rss_kb() / 1024.0, l.stats_ms(), l.stats_sock_ms()))
        return rows
    finally:
        # Detaching 2 uprobes a point takes the kernel ~25 ms each.
        for l in ls:
            l.stop()
        for l in ls:
            l.reap()


def main():
    if os.geteuid() != 0:
        print("loader_cost: needs root", file=sys.stderr)
        return 1
    for f in (NEW, MANY):
        if not os.path.exists(f):
            print("loader_cost: %s missing: make all test-targets" % f,
                  file=sys.stderr)
            return 1
    tmp = tempfile.mkdtemp(prefix="sds-lc-")
    os.chmod(tmp, 0o755)
    try:
        old = build_old(tmp)
        rows = []
        for n in SIZES:
            log("loader_cost: %d points" % n)
            rows += measure(tmp, old, n)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = ["Loader cost (calls flowing, 100 ms tick; %d x %.0f s windows "
           "alternating; stats: median of %d; old: %s)" % (
               WINDOWS, WINDOW_S, STATS_N,
               os.environ.get("BENCH_OLD_COMMIT") or OLD_COMMIT), "",
           "| points | loader | CPU % of a core | RSS MB | stats --json ms "
           "| of which the loader's reply ms |",
           "|---:|---|---:|---:|---:|---:|"]
    for n, v, cpu, rss, st, sock in rows:
        out.append("| %d | %s | %.2f | %.1f | %.1f | %.1f |"
                   % (n, v, cpu, rss, st, sock))
    out += ["", "Targets at 1,024 points: ≤ 1% of a core, ≤ 32 MB RSS, "
            "stats ≤ 50 ms."]
    text = "\n".join(out)
    print(text)
    results.save("loader", text, [dict(zip(("points", "loader", "cpu_pct",
                                            "rss_mb", "stats_ms",
                                            "reply_ms"), r)) for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
