#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
make admin-bench: real sds-admins on free loopback ports, driven by
build/bench/admin-bench (heartbeats of 20 points on keep-alive
connections), one row per setup, cleaned up after:

  - SQLite: one admin on a fresh file (the embedded default);
  - PostgreSQL, one admin on a fresh database;
  - PostgreSQL, three admins on one database, the connections spread
    over them (connection i to admin i mod 3).

The PostgreSQL server is started for the run in a temp dir and removed
after (tests/lib/pgtest.py); without postgresql-15 its rows say so.
CPU per heartbeat is measured apart for the admins and for the database
(every process of the server): utime + stime from /proc/PID/stat over
the run, divided by the heartbeats stored.

    python3 admin/bench/run.py [--seconds S] [--conns N] [--points P] [--only sqlite|pg]

Targets: SQLite (issue 4) and three admins on PostgreSQL (issue 16) at
least 2000 heartbeats/s with p99 under 50 ms.
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
import pgtest  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pids):
    """{pid: utime + stime in seconds} of those of @pids still alive."""
    out = {}
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, IndexError, ValueError):
            pass
    return out


def server_pids(postmaster):
    """The postmaster and every process it forked (backends, writers)."""
    pids = [postmaster]
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == postmaster:
            pids.append(int(d))
    return pids


def cpu_delta(before, after):
    """CPU seconds spent between the two samples (a process that began in
    between counts from zero; one that ended in between is lost)."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def run_row(args, tok, dbs, pg=None):
    """One setup: an admin per entry of @dbs; its result dict."""
    admins = []
    try:
        ports = []
        for db in dbs:
            port = free_port()
            admins.append(subprocess.Popen(admin_argv(os.path.join(BUILD, "bin", "sds-admin"),
                                                      port, db, tok)))
            ports.append(port)
        for port in ports:
            for _ in range(200):
                if healthz(port):
                    break
                time.sleep(0.05)
        apids = [a.pid for a in admins]
        dpids = server_pids(pg.pid()) if pg else []
        a0, d0 = cpu_of(apids), cpu_of(dpids)
        argv = [os.path.join(BUILD, "bench", "admin-bench"), "--token-file", tok,
                "--seconds", str(args.seconds), "--conns", str(args.conns),
                "--points", str(args.points)]
        for port in ports:
            argv += ["--addr", "127.0.0.1:%d" % port]
        out = subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True)
        a1 = cpu_of(apids)
        d1 = cpu_of(server_pids(pg.pid())) if pg else {}
        kv = out.stdout.split()
        r = dict(zip(kv[0::2], kv[1::2]))
        r["rc"] = out.returncode
        n = max(int(r.get("heartbeats", 0)), 1)
        r["admin_us"] = "%.0f" % (cpu_delta(a0, a1) / n * 1e6)
        r["db_us"] = "%.0f" % (cpu_delta(d0, d1) / n * 1e6) if pg else "(in the admin)"
        return r
    finally:
        for a in admins:
            a.send_signal(signal.SIGTERM)
        for a in admins:
            try:
                a.wait(10)
            except subprocess.TimeoutExpired:
                a.kill()
                a.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--only", choices=("sqlite", "pg"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sds-admin-bench.")
    rows = []
    rc = 0
    try:
        tok = write_token(os.path.join(tmp, "token"), "bench-token-0123456789")
        if args.only != "pg":
            rows.append(("SQLite WAL, 1 admin", False,
                         run_row(args, tok, [os.path.join(tmp, "sds.db")])))
        if args.only != "sqlite":
            why = pgtest.available()
            if why:
                print("PostgreSQL rows not run: %s" % why)
                rc = 1
            else:
                with pgtest.PgCluster() as pg:
                    url = pg.create_db("bench1")
                    rows.append(("PostgreSQL 15, 1 admin", False, run_row(args, tok, [url], pg)))
                    url = pg.create_db("bench3")
                    rows.append(("PostgreSQL 15, 3 admins, one database", True,
                                 run_row(args, tok, [url] * 3, pg)))
        r0 = rows[0][2] if rows else {}
        print("| sds-admin heartbeats (%s points, %s conns, %s s, loopback) | heartbeats/s "
              "| p50 ms | p99 ms | max ms | errors | admin CPU us/hb | database CPU us/hb |"
              % (r0.get("points"), r0.get("conns"), r0.get("seconds")))
        print("|---|---|---|---|---|---|---|---|")
        for name, target, r in rows:
            print("| %s | %s | %s | %s | %s | %s | %s | %s |"
                  % (name, r.get("heartbeats_per_s"), r.get("p50_ms"), r.get("p99_ms"),
                     r.get("max_ms"), r.get("errors"), r["admin_us"], r["db_us"]))
            rc |= 1 if r["rc"] else 0
        print()
        for name, target, r in rows:
            if target or name.startswith("SQLite"):
                ok = (r["rc"] == 0 and float(r.get("heartbeats_per_s", 0)) >= 2000
                      and float(r.get("p99_ms", 1e9)) < 50)
                print("target for %s (>= 2000/s, p99 < 50 ms): %s"
                      % (name, "met" if ok else "NOT met"))
        return rc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
