#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What following a deploy costs (docs/DEPLOY.md), as root after `make
deploy-bins`:

    python3 tests/deploy/measure.py [ROUNDS]

Prints, for ROUNDS deploys 5 s apart (default 10): the time from the
rename onto TARGET's path to the build event's time_ms (the new build
attached and current), how late the tick got in the 10 s after each
(the build before it is retired then: its links detached), and the loader's CPU (utime + stime of
/proc/PID/stat) over 60 s with an old build whose process still runs
(the /proc scan every 2 s) and over 60 s with none, with the number of
processes the scan reads.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loader_cpu(ctx, seconds=60.0):
    c0, t0 = cpu_s(ctx.loader.pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_s(ctx.loader.pid) - c0) / (time.monotonic() - t0) * 100


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    ctx = run.Ctx("measure")
    try:
        ctx.stage("svc", "svc")
        ctx.attach("w=work", "o=other")
        lat, late = [], []
        for i in range(rounds):
            new = ctx.stage(["svc.v1", "svc.v3"][i % 2], "svc.new")
            t0 = time.time()
            os.rename(new, ctx.path)
            while ctx.stats()["builds"]["deploys"] != i + 1:
                time.sleep(0.005)
            ev = [e for e in ctx.events() if e["event"] == "build"][-1]
            lat.append(ev["time_ms"] - t0 * 1000)
            # The build before is retired at the next scan (2 s): its
            # links detached in the loop, which makes the tick late.
            time.sleep(5)
            late.append(ctx.stats()["tick_late_ms"]["max"])
        print("rename to build event (its time_ms): %s ms (%d deploys, 2 "
              "points)" % (", ".join("%.0f" % x for x in lat), rounds))
        print("latest tick in the 10 s after each (the old build retired "
              "meanwhile): %s ms" % ", ".join("%.0f" % x for x in late))
        time.sleep(3)       # the builds no process runs are retired
        old = run.Svc(ctx, ctx.path)
        none = loader_cpu(ctx)
        ctx.stage("svc.v1" if rounds % 2 == 0 else "svc.v3", "svc.new")
        os.rename(os.path.join(ctx.dir, "svc.new"), ctx.path)
        time.sleep(1)
        held = len(ctx.stats()["builds"]["list"])
        pending = loader_cpu(ctx)
        nproc = sum(1 for d in os.listdir("/proc") if d.isdigit())
        print("loader CPU, 100 ms tick, no calls: %.3f%% of a core with no old "
              "build, %.3f%% with one old build still run (%d builds held, "
              "%d processes scanned every 2 s)" % (none, pending, held, nproc))
        old.quit()
    finally:
        ctx.cleanup()


if __name__ == "__main__":
    main()
