#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the split's scheduler tracepoints cost (docs/SPLIT.md; `make
split-bench`, root: it attaches).  pingpong (two threads on one CPU
passing a byte over pipes: A B A B, a wakeup and a switch each pass)
timed per switch:

  none     no loader
  nosplit  a loader with a point, attached --no-split: no tracepoints
  outside  a loader with a point, split on: pingpong's threads outside
           every point (the tracepoints' cost to the rest of the host)
  inside   a loader whose point is pingpong's loop: both threads inside
           a point the whole run, every switch and wakeup split

Rounds alternate the four, REPS times (SPLIT_BENCH_REPS, 7); the first
table has each one's median ns per switch and its difference from
`none` (a VM's switch varies by more than the tracepoints cost: read
the second).  The second is the programs' own run time (the kernel's
BPF statistics, enabled through BPF_ENABLE_STATS for the run only): ns
per run of sds_split_switch and sds_split_wakeup, outside and inside.
Prints two Markdown tables.  Python 3 standard library only.
"""

import ctypes
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD  # noqa: E402

PINGPONG = os.path.join(BUILD, "bench", "bench-split-pingpong")
SPLITAPP = os.path.join(BUILD, "test", "targets", "splitapp")
REPS = int(os.environ.get("SPLIT_BENCH_REPS", "7"))
ROUNDS = int(os.environ.get("SPLIT_BENCH_ROUNDS", "200000"))
MODES = ("none", "nosplit", "outside", "inside")


SPLIT_PROGS = ("sds_split_switc", "sds_split_wakeu")   # 15 characters


def enable_stats():
    """BPF_ENABLE_STATS (BPF_STATS_RUN_TIME): run times counted while the
    returned fd is open, whoever else turns them on or off."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.c_uint32(0)
    fd = libc.syscall(321, 32, ctypes.byref(attr), 4)   # __NR_bpf, BPF_ENABLE_STATS
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
    return fd


def split_runs(pid):
    """{program name: (run_time_ns, run_cnt)} of @pid's split programs."""
    holders = sdstest.prog_holders([pid])
    out = {}
    for p in sdstest.bpftool_progs():
        # bpftool names a program in full from its BTF, or cut at 15.
        name = next((n for n in SPLIT_PROGS if p["name"].startswith(n)), None)
        if pid in holders.get(p["id"], ()) and name:
            out[name] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


def run_once(ctx, mode, pp, app, runs):
    l = None
    if mode in ("nosplit", "outside"):
        args = (["--no-split"] if mode == "nosplit" else []) + \
               ["--app", app, app_path(ctx), "nap=nap"]
        l = sdstest.AttachProcess(ctx, args, app)
    elif mode == "inside":
        l = sdstest.AttachProcess(ctx, ["--app", app, pp, "pp=pp_inside"], app)
    try:
        argv = [pp, str(ROUNDS)] + (["inside"] if mode == "inside" else [])
        before = split_runs(l.pid) if l else {}
        r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        after = split_runs(l.pid) if l else {}
        for name, (t, n) in after.items():
            t0, n0 = before.get(name, (0, 0))
            if n > n0:
                runs.setdefault((mode, name), []).append((t - t0) / (n - n0))
        if r.returncode:
            raise RuntimeError("pingpong: %s %s" % (r.stdout, r.stderr))
        f = r.stdout.split()
        if l and mode == "inside":
            # The split counted the two calls of pp_inside, and every one
            # of their switches as run queue or blocked time.
            st = sdstest.json_out(sdstest.run_group(
                [sdstest.SDS, "stats", "--app", app, "--json"], ctx.env,
                ctx.tmp, ctx.others), "stats")
            p = sdstest.get_point(st, "pp")
            if p.get("split", {}).get("calls") != 2:
                raise RuntimeError("inside: split %r, want 2 calls" % p.get("split"))
        return float(f[1])
    finally:
        if l:
            l.end()
            ctx.loaders.remove(l)


def app_path(ctx):
    return os.path.join(ctx.tmp, "splitapp")


def main():
    err = sdstest.root_error()
    if err:
        print(err, file=sys.stderr)
        return 1
    ctx = sdstest.ProcDir("split-bench", "sds-split-bench-")
    try:
        sdstest.stage(SPLITAPP, ctx.tmp)
        pp = sdstest.stage(PINGPONG, ctx.tmp, "pingpong")
        got = {m: [] for m in MODES}
        runs = {}
        stats_fd = enable_stats()
        try:
            for rep in range(REPS):
                for m in MODES:
                    got[m].append(run_once(ctx, m, pp, "sb%d%s" % (rep, m), runs))
        finally:
            os.close(stats_fd)
        base = statistics.median(got["none"])
        print("| pingpong, %d switches a round, %d rounds each | ns per switch (median) | vs none |"
              % (2 * ROUNDS, REPS))
        print("|---|---:|---:|")
        for m in MODES:
            med = statistics.median(got[m])
            print("| %s | %.0f | %+.0f |" % (m, med, med - base))
        print()
        print("| program | ns per run, pingpong outside every point | inside a point |")
        print("|---|---:|---:|")
        for name, full in zip(SPLIT_PROGS, ("sds_split_switch", "sds_split_wakeup")):
            cols = []
            for m in ("outside", "inside"):
                v = runs.get((m, name))
                cols.append("%.0f" % statistics.median(v) if v else "-")
            print("| %s | %s | %s |" % (full, cols[0], cols[1]))
        print()
        print("rounds: " + "; ".join("%s %s" % (m, " ".join("%.0f" % v for v in got[m]))
                                     for m in MODES))
    finally:
        ctx.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
