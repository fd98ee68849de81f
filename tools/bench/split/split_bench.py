#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the split's scheduler tracepoints cost (docs/SPLIT.md; `make
split-bench`, root: it attaches).  pingpong (two threads on one CPU
passing a byte over pipes: A B A B, a wakeup and a switch each pass)
timed per switch:

  none     no loader
  floor    empty programs on the same two tracepoints (floor.bpf.c): what
           a raw tracepoint program costs here doing nothing
  nosplit  a loader with a point, attached --no-split: no tracepoints
  outside  a loader with a point, split on: pingpong's threads outside
           every point (the tracepoints' cost to the rest of the host)
  inside   a loader whose point is pingpong's loop: both threads inside
           a point the whole run, every switch and wakeup split

Rounds alternate the five, REPS times (SPLIT_BENCH_REPS, 7); the first
table has each one's median ns per switch and its difference from
`none` (a VM's switch varies by more than the tracepoints cost: read
the second).  The second is the programs' own run time (the kernel's
BPF statistics, enabled through BPF_ENABLE_STATS for the run only, which
add their own clock reads: the floor row has them alone): ns per run of
sds_split_switch and sds_split_wakeup, outside and inside.
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
FLOOR = os.path.join(BUILD, "bench", "bench-split-floor")
FLOOR_OBJ = os.path.join(BUILD, "bench", "split-floor.bpf.o")
SPLITAPP = os.path.join(BUILD, "test", "targets", "splitapp")
REPS = int(os.environ.get("SPLIT_BENCH_REPS", "7"))
ROUNDS = int(os.environ.get("SPLIT_BENCH_ROUNDS", "200000"))
MODES = ("none", "floor", "nosplit", "outside", "inside")


# 15 characters: the kernel's name; bpftool may print the BTF's in full.
SPLIT_PROGS = ("sds_split_switc", "sds_split_wakeu")
FLOOR_PROGS = ("sds_floor_switc", "sds_floor_wakeu")


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
    """{program name: (run_time_ns, run_cnt)} of @pid's split (or floor)
    programs, by their SPLIT_PROGS name."""
    holders = sdstest.prog_holders([pid])
    out = {}
    for p in sdstest.bpftool_progs():
        name = next((s for s, f in zip(SPLIT_PROGS, FLOOR_PROGS)
                     if p["name"].startswith(s) or p["name"].startswith(f)), None)
        if pid in holders.get(p["id"], ()) and name:
            out[name] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


def run_once(ctx, mode, pp, app, runs):
    l = None
    if mode == "floor":
        l = Floor()
    elif mode in ("nosplit", "outside"):
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
            if l in ctx.loaders:
                ctx.loaders.remove(l)


class Floor:
    """bench-split-floor: the empty programs attached until it ends."""

    def __init__(self):
        self.p = subprocess.Popen([FLOOR, FLOOR_OBJ], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().strip()
        if line != "ready":
            self.end()
            raise RuntimeError("bench-split-floor: %r" % line)

    @property
    def pid(self):
        return self.p.pid

    def end(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


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
        print("| program | ns per run, pingpong's threads outside every point | inside a point |")
        print("|---|---:|---:|")
        for name, full in zip(SPLIT_PROGS, ("sds_split_switch", "sds_split_wakeup")):
            cols = []
            for m in ("outside", "inside"):
                v = runs.get((m, name))
                cols.append("%.0f" % statistics.median(v) if v else "-")
            print("| %s | %s | %s |" % (full, cols[0], cols[1]))
        for name, full in zip(SPLIT_PROGS, ("sds_floor_switch", "sds_floor_wakeup")):
            v = runs.get(("floor", name))
            print("| %s (floor: does nothing) | %s | |"
                  % (full, "%.0f" % statistics.median(v) if v else "-"))
        print()
        print("rounds: " + "; ".join("%s %s" % (m, " ".join("%.0f" % v for v in got[m]))
                                     for m in MODES))
    finally:
        ctx.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
