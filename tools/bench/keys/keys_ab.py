#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""What a key costs in two builds, measured side by side (docs/KEYS.md).

  keys_ab.py BUILD_A BUILD_B      (as root; each a build directory with
                                   bin/sds-bpf, e.g. one of a commit before)

On a loaded host two runs of keys_bench.py minutes apart differ by more
than a change to the key path does.  Here both builds' loaders are
attached at once, each to its own copies of bench-keys (BUILD_B's):
f=kb_fn, f=kb_fn:key=arg1, f=kb_fn:key=str2 (a 32-byte string) for each
build, six copies; every round runs each copy once (ITERS calls, 1,024
keys in turn), the order reversed every other round, with
kernel.bpf_stats_enabled=1 throughout.  Per round and copy: the BPF ns
per call (run_time_ns of the loader's function-point programs) and the
wall ns per call (the median of the round's 1,024-call batches); then,
per build, the key's added ns (keyed minus unkeyed, same build, same
round), medians over rounds, and B's over A's.  Environment: KEYS_ROUNDS
(15), KEYS_ITERS (60000), BENCH_CPU.  Prints a table; exits non-zero if
an attach or a run fails.
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import keys_bench as kb  # noqa: E402
from bench import prog_ids  # noqa: E402

ROUNDS = int(os.environ.get("KEYS_ROUNDS", "15"))
ITERS = int(os.environ.get("KEYS_ITERS", "60000"))
SPECS = (("plain", "f=kb_fn:site=nop5"), ("int", "f=kb_fn:key=arg1:site=nop5"),
         ("str", "f=kb_fn:key=str2:site=nop5"))
# The programs a function point's call runs (either probe path).
HOT = ("sds_session", "sds_enter", "sds_leave")
STATS = "/proc/sys/kernel/bpf_stats_enabled"


def bpf_ns(pid):
    ids = prog_ids(pid)
    out = subprocess.run(["bpftool", "prog", "show", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return sum(p.get("run_time_ns", 0) for p in json.loads(out or "[]")
               if p["id"] in ids and p.get("name") in HOT)


def main(argv):
    if len(argv) != 2:
        kb.die("usage: keys_ab.py BUILD_A BUILD_B")
    if os.geteuid():
        kb.die("needs root")
    builds = [os.path.abspath(a) for a in argv]
    for d in builds:
        if not os.access(os.path.join(d, "bin", "sds-bpf"), os.X_OK):
            kb.die("%s/bin/sds-bpf missing" % d)
    kb.BIN = os.path.join(builds[1], "bench", "bench-keys")
    if not os.access(kb.BIN, os.X_OK):
        kb.die("%s missing: make bench-bins there" % kb.BIN)
    with open(STATS) as f:
        old = f.read().strip()
    b = kb.Bench()
    names = []
    try:
        bins = {}
        for i, d in enumerate(builds):
            kb.SDS = os.path.join(d, "bin", "sds-bpf")
            for n, spec in SPECS:
                name = "AB"[i] + n
                bins[name] = b.copy(name)
                b.attach(bins[name], [bins[name], spec],
                         "default.kb-%s.sock" % name)
                names.append(name)
        wall = {n: [] for n in names}
        bpf = {n: [] for n in names}
        with open(STATS, "w") as f:
            f.write("1")
        for r in range(ROUNDS):
            order = names[::-1] if r & 1 else list(names)
            for n in order:
                pid = b.pid["kb-" + n]
                t0 = bpf_ns(pid)
                f = dict(x.split("=", 1)
                         for x in b.run(bins[n], "fn", str(ITERS)).split())
                bpf[n].append((bpf_ns(pid) - t0) / (ITERS + kb.WARM))
                wall[n].append(float(f["batch_median"]))
    finally:
        with open(STATS, "w") as f:
            f.write(old)
        b.close()
    med = statistics.median

    def added(m, side, n):
        return med([m[side + n][i] - m[side + "plain"][i]
                    for i in range(ROUNDS)])

    print("keys_ab.py: A %s, B %s; %d rounds of %d calls, medians"
          % (builds[0], builds[1], ROUNDS, ITERS))
    print("")
    print("| point | A BPF ns | B BPF ns | A wall ns | B wall ns |")
    print("|---|---|---|---|---|")
    for n, spec in SPECS:
        print("| `%s` | %.1f | %.1f | %.1f | %.1f |" % (
            spec.replace(":site=nop5", ""), med(bpf["A" + n]),
            med(bpf["B" + n]), med(wall["A" + n]), med(wall["B" + n])))
    print("")
    print("| key's added ns | A | B | B ÷ A |")
    print("|---|---|---|---|")
    for what, m in (("BPF", bpf), ("wall", wall)):
        for n in ("int", "str"):
            a, z = added(m, "A", n), added(m, "B", n)
            print("| %s, `%s` | %.1f | %.1f | %s |" % (
                what, n, a, z, "%.2f" % (z / a) if a > 0 else "—"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
