#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The exact trips' benchmark (issue 14; `make exact-bench`, root):

1. Overshoot: calls passed beyond visit_threshold 1,000 at 1,000, 10,000
   and 100,000 calls/s (tests/targets/exactapp, one process, two threads,
   all calls inside one 10-s window), with the budget off (the loader run
   with SDS_EXACT_TRIPS=0: the tick decides, as before) and on, in the
   same run, REPS times each: median and max.
2. Cost: ns per guarded call (sds_should_downgrade + finally) of a point
   with the budget in place (a visit_threshold no run reaches: line 2's
   marks and one CAS per call) against today's passing call (no
   strategy), 1 and 2 threads, rounds alternating (bench-exact-cost);
   and the decision alone, without probes (bench-exact-decide).

Prints three Markdown tables.  Python 3 standard library only.
"""

import json
import math
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD  # noqa: E402

EXACTAPP = os.path.join(BUILD, "test", "targets", "exactapp")
COST = os.path.join(BUILD, "bench", "bench-exact-cost")
DECIDE = os.path.join(BUILD, "bench", "bench-exact-decide")
N = 1000
REPS = int(os.environ.get("EXACT_BENCH_REPS", "3"))
RATES = (1000, 10000, 100000)
MAX_CALLS = 400000


def attach(ctx, app, target, strategies, env_extra=None):
    spath = os.path.join(ctx.tmp, "strategies-%d.json" % len(ctx.loaders))
    with open(spath, "w") as f:
        json.dump({"version": 1, "points": strategies}, f)
    saved = ctx.env
    ctx.env = dict(saved, **(env_extra or {}))
    try:
        return sdstest.AttachProcess(ctx, ["--app", app, "--strategies",
                                           spath, target], app)
    finally:
        ctx.env = saved


def overshoot_once(ctx, rate, off):
    app = "ov%d%s" % (len(ctx.loaders), "off" if off else "on")
    path = sdstest.stage(EXACTAPP, ctx.tmp, app)
    l = attach(ctx, app, path, {"exact": {"visit_threshold": N}},
               {"SDS_EXACT_TRIPS": "0"} if off else None)
    shm = os.path.join(ctx.tmp, "calls")
    secs = 3 if rate <= 1000 else 1
    with open(shm, "wb") as f:
        f.truncate(64 + 16 * MAX_CALLS)
    # 100 ms into a wall-clock second: every call in one window.
    wall = math.floor(time.time()) + 2.1
    start = int((wall - time.time()) * 1e9) + time.monotonic_ns()
    r = subprocess.run([path, app, shm, "2", str(rate // 2), str(secs),
                        str(start), "visit"], env=ctx.env, cwd=ctx.tmp,
                       capture_output=True, text=True, timeout=60)
    l.end()
    if r.returncode:
        raise RuntimeError("exactapp: %s %s" % (r.stdout, r.stderr))
    f = r.stdout.split()
    passed, down = int(f[1]), int(f[3])
    # The rate the calls really came at around the threshold: the first
    # 2N calls' span (they catch up on their schedule when late).
    with open(shm, "rb") as fh:
        fh.seek(64)
        first = struct.unpack("<Q", fh.read(16)[:8])[0]
        fh.seek(64 + 16 * (2 * N - 1))
        last = struct.unpack("<Q", fh.read(16)[:8])[0]
    near = (2 * N - 1) / max(1e-9, (last - first) / 1e9)
    return passed - N, near


def cost(ctx, threads):
    app = "cost%d" % threads
    l = attach(ctx, app, COST, {"budget": {"visit_threshold": 10**12}})
    r = subprocess.run([COST, app, str(threads), "11", "200"], env=ctx.env,
                       cwd=ctx.tmp, capture_output=True, text=True,
                       timeout=120)
    l.end()
    if r.returncode:
        raise RuntimeError("bench-exact-cost: %s %s" % (r.stdout, r.stderr))
    out = {}
    for line in r.stdout.splitlines():
        kv = dict(x.split("=", 1) for x in line.split())
        out[kv["col"]] = kv
    return out


def main():
    err = sdstest.root_error()
    if err:
        print(err)
        return 1
    ctx = sdstest.ProcDir("exact-bench", "sds-exact-bench-")
    try:
        rows = []
        for rate in RATES:
            res = {}
            for off in (True, False):
                res[off] = [overshoot_once(ctx, rate, off) for _ in range(REPS)]
            rows.append((rate, res))
        print("Overshoot beyond visit_threshold %d (calls passed - %d; "
              "%d runs each, one window)\n" % (N, N, REPS))
        print("| calls/s (asked) | calls/s (made, first %d calls) | budget off: median | max "
              % (2 * N) +
              "| budget on: median | max |")
        print("|---|---|---|---|---|---|")
        for rate, res in rows:
            made = sorted(x[1] for x in res[False] + res[True])
            off = sorted(x[0] for x in res[True])
            on = sorted(x[0] for x in res[False])
            print("| %d | %d | %d | %d | %d | %d |"
                  % (rate, made[len(made) // 2], off[len(off) // 2], off[-1],
                     on[len(on) // 2], on[-1]))
        print("\nGuarded call, ns (sds_should_downgrade + finally; 11 "
              "alternating rounds of 200 ms: median [min-max])\n")
        print("| threads | passing call, no strategy | with the budget "
              "| difference |")
        print("|---|---|---|---|")
        for t in (1, 2):
            c = cost(ctx, t)
            p, b = c["pass"], c["budget"]
            print("| %d | %s [%s-%s] | %s [%s-%s] | %+.1f |"
                  % (t, p["median"], p["min"], p["max"], b["median"],
                     b["min"], b["max"],
                     float(b["median"]) - float(p["median"])))
        print("\nThe decision alone (bench-exact-decide: libsds/guard.c on a "
              "region in memory, no probes; an active passing entry with a "
              "semaphore, with and without the budget), ns: median [min-max] "
              "of 15 alternating rounds of 2,000,000\n")
        print("| threads | passing decision | with the budget | difference |")
        print("|---|---|---|---|")
        for t in (1, 2):
            r = subprocess.run([DECIDE, str(t), "15", "2000000"],
                               capture_output=True, text=True, timeout=300)
            c = {}
            for line in r.stdout.splitlines():
                kv = dict(x.split("=", 1) for x in line.split())
                c[kv["col"]] = kv
            p, b = c["pass"], c["budget"]
            print("| %d | %s [%s-%s] | %s [%s-%s] | %+.1f |"
                  % (t, p["median"], p["min"], p["max"], b["median"],
                     b["min"], b["max"],
                     float(b["median"]) - float(p["median"])))
    finally:
        ctx.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
