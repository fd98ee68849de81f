#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
make admin-bench: start a real sds-admin on a free loopback port with a
fresh database, drive it with build/bench/admin-bench (heartbeats of 20
points on keep-alive connections), print the table, clean up.

    python3 admin/bench/run.py [--seconds S] [--conns N] [--points P]

Targets (issue 4): at least 2000 heartbeats/s, p99 under 50 ms.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from sdstest import BUILD, admin_argv, free_port, healthz, write_token  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--points", type=int, default=20)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sds-admin-bench.")
    admin = None
    try:
        tok = write_token(os.path.join(tmp, "token"), "bench-token-0123456789")
        port = free_port()
        admin = subprocess.Popen(admin_argv(os.path.join(BUILD, "bin", "sds-admin"),
                                            port, os.path.join(tmp, "sds.db"), tok))
        for _ in range(100):
            if healthz(port):
                break
            time.sleep(0.05)
        out = subprocess.run([os.path.join(BUILD, "bench", "admin-bench"),
                              "--addr", "127.0.0.1:%d" % port, "--token-file", tok,
                              "--seconds", str(args.seconds), "--conns", str(args.conns),
                              "--points", str(args.points)],
                             stdout=subprocess.PIPE, universal_newlines=True)
        kv = out.stdout.split()
        r = dict(zip(kv[0::2], kv[1::2]))
        print("| sds-admin heartbeats (%s points, %s conns, %s s) | heartbeats/s | p50 ms | p99 ms | max ms | errors |"
              % (r.get("points"), r.get("conns"), r.get("seconds")))
        print("|---|---|---|---|---|---|")
        print("| loopback, SQLite WAL | %s | %s | %s | %s | %s |"
              % (r.get("heartbeats_per_s"), r.get("p50_ms"), r.get("p99_ms"),
                 r.get("max_ms"), r.get("errors")))
        ok = (out.returncode == 0 and float(r.get("heartbeats_per_s", 0)) >= 2000
              and float(r.get("p99_ms", 1e9)) < 50)
        print()
        print("target (>= 2000/s, p99 < 50 ms): %s" % ("met" if ok else "NOT met"))
        return 0 if out.returncode == 0 else 1
    finally:
        if admin:
            admin.send_signal(signal.SIGTERM)
            try:
                admin.wait(10)
            except subprocess.TimeoutExpired:
                admin.kill()
                admin.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
