#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What fail-fast's cgroup programs (docs/FAILFAST.md, the cgroup lever) add
to a connect(2) made outside every point, in one run: rounds of
bench-ff-connect (a loop of connects to its own loopback listener, only
connect() timed) cycle through three states, the order rotated every
round: "none" (nothing on the hook), "empty" (an empty cgroup/connect4
program: the hook's own cost) and "ours" (a loader attached with a
failfast=connect point that passes: its connect4/6 and sendmsg4/6
programs on the cgroup2 root, run for every connect of the host).  Root;
from the repository:

    make all build/test/targets/fftarget build/bench/bench-ff-connect \
        build/bench/ff_empty.bpf.o
    python3 tools/bench/failfast/ff_connect.py [ROUNDS [CONNECTS]]

Prints each round and the medians' spread; the loader is ended (and our
programs checked gone from the cgroup2 root) whatever happens.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
SDS = os.path.join(BUILD, "bin", "sds-bpf")
TARGET = os.path.join(BUILD, "test", "targets", "fftarget")
BENCH = os.path.join(BUILD, "bench", "bench-ff-connect")
EMPTY = os.path.join(BUILD, "bench", "ff_empty.bpf.o")
EMPTY_PIN = "/sys/fs/bpf/sds_bench_ff_empty"
sys.path.insert(0, os.path.join(ROOT, "tests", "failfast"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import ff_lib  # noqa: E402


def wait(fn, secs, what):
    end = time.monotonic() + secs
    while not fn():
        if time.monotonic() > end:
            sys.exit("ff_connect: %s" % what)
        time.sleep(0.05)


class Loader:
    """sds-bpf attach with one passing failfast=connect point."""

    def __init__(self, tmp):
        env = dict(os.environ, SDS_RUN_DIR=os.path.join(tmp, "run"))
        env.pop("SDS_FAILFAST_DRYRUN", None)
        os.makedirs(env["SDS_RUN_DIR"], exist_ok=True)
        strat = os.path.join(tmp, "strategies.json")
        with open(strat, "w") as f:
            json.dump({"version": 1, "points": {}}, f)
        self.err = open(os.path.join(tmp, "attach.err"), "w+")
        self.p = subprocess.Popen(
            [SDS, "attach", "--app", "ffbench", "--strategies", strat, TARGET,
             "fetch=fetch:failfast=connect"], env=env, cwd=tmp,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.err, start_new_session=True)
        wait(lambda: self.p.poll() is not None or
             "sds_ff_cg_connect4" in ff_lib.cg_ours(), 30,
             "the cgroup programs never appeared")
        if self.p.poll() is not None:
            self.err.seek(0)
            sys.exit("ff_connect: attach exited: %s" % self.err.read().strip())

    def end(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(10)
        self.err.close()
        wait(lambda: not ff_lib.cg_ours(), 10, "our programs stayed attached")


class Empty:
    """The empty program, attached (multi) to the cgroup2 root by bpftool
    through a pin that end() takes away again."""

    def __init__(self):
        self.root = ff_lib.cgroup_root()
        subprocess.run(["bpftool", "prog", "load", EMPTY, EMPTY_PIN, "type",
                        "cgroup/connect4"], check=True)
        self.attached = False
        r = subprocess.run(["bpftool", "cgroup", "attach", self.root,
                            "connect4", "pinned", EMPTY_PIN, "multi"])
        self.attached = r.returncode == 0
        if not self.attached:
            self.end()
            sys.exit("ff_connect: attaching %s failed" % EMPTY)

    def end(self):
        if self.attached:
            subprocess.run(["bpftool", "cgroup", "detach", self.root,
                            "connect4", "pinned", EMPTY_PIN], check=True)
            self.attached = False
        if os.path.exists(EMPTY_PIN):
            os.unlink(EMPTY_PIN)


def one(n):
    out = subprocess.run([BENCH, str(n)], capture_output=True, text=True,
                         timeout=600, check=True).stdout.split()
    return int(out[3]), int(out[5])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    ok, why = ff_lib.cg_lever()
    if not ok:
        sys.exit("ff_connect: the cgroup lever is not what attach uses here: %s" % why)
    tmp = tempfile.mkdtemp(prefix="sds-ffbench-")
    kinds = ["none", "empty", "ours"]
    res = {k: [] for k in kinds}
    loader = None
    try:
        one(2000)  # warm the path up
        for r in range(rounds):
            for kind in kinds[r % 3:] + kinds[:r % 3]:
                if kind == "ours":
                    loader = Loader(tmp)
                elif kind == "empty":
                    loader = Empty()
                med, mean = one(n)
                if loader:
                    loader.end()
                    loader = None
                res[kind].append((med, mean))
                print("round %d %-5s connect med %6d ns mean %6d ns (%d connects)"
                      % (r + 1, kind, med, mean, n))
                sys.stdout.flush()
    finally:
        if loader:
            loader.end()
        shutil.rmtree(tmp, ignore_errors=True)
    for kind in kinds:
        meds = sorted(m for m, _ in res[kind])
        print("%-6s medians %d..%d ns, median of medians %d ns"
              % (kind, meds[0], meds[-1], meds[len(meds) // 2]))
    for a, b in (("empty", "none"), ("ours", "none"), ("ours", "empty")):
        d = sorted(x[0] - y[0] for x, y in zip(res[a], res[b]))
        print("%s - %s, per round (sorted): %s ns"
              % (a, b, ", ".join("%+d" % x for x in d)))


if __name__ == "__main__":
    main()
