#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
tools/bench/multilink/multilink.py: one uprobe session link per function
point, as the loader makes them (loader/kernel/probes_session.c), against
one link for all the points of a binary (issue 14); `make
multilink-bench`.  Root.

build/bench/bench-multilink (tools/bench/multilink/multilink.c) attaches
the session floor (tools/bench/baseline/floor.bpf.c) to N of 64 nop5
functions of its own binary, both ways in every round (A B A B):

  N links   N links of one offset and one cookie each (the loader)
  1 link    one link of N offsets and N cookies

and measures the wall time of the BPF_LINK_CREATE calls and of closing
the fds (the kernel detaches in close()), and the fds held, for N = 1, 8,
64 (BENCH_ML_ATTACH_ROUNDS rounds, default 21).  For detach only, with
N >= 2, the same rounds also close the N links from T threads at once
(BENCH_ML_THREADS, default 4,16; T at most N), timed from the threads'
release at a barrier until the last close returned; then ns per call of the
first function, attached either way, for N = 1 and 64 (BENCH_ML_ROUNDS
rounds, default 11, of BENCH_ML_CALLS calls, default 2,000,000), each
round's enter and leave counts checked against the calls made.  Pinned to
the last CPU (BENCH_CPU) when taskset is there.

Prints a markdown table: medians with the rounds' p25–p75, and each "1
link" (or threads') figure against "N links" as the median (p25–p75) of
the rounds' own ratios.  With BENCH_OUT=DIR, also DIR/multilink.md and
DIR/multilink.raw.json (results.py); `multilink.py --raw
DIR/multilink.raw.json` prints the table again from the kept rounds.
Takes about 4 minutes, half of it waiting for the kernel's grace periods
(measured before the threads' closes were added, which add about half a
minute).  `multilink.py --only detach`: the attach and detach rounds
alone, no calls (about 2 minutes).
"""

import argparse

import json
import os
import shutil
import statistics
import subprocess
import sys

# results.py is tools/bench's, one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
BIN = os.path.join(BUILD, "bench", "bench-multilink")
ATTACH_ROUNDS = int(os.environ.get("BENCH_ML_ATTACH_ROUNDS", "21"))
ROUNDS = int(os.environ.get("BENCH_ML_ROUNDS", "11"))
CALLS = int(os.environ.get("BENCH_ML_CALLS", "2000000"))
THREADS = os.environ.get("BENCH_ML_THREADS", "4,16")
WAYS = ("links", "one")
NO_WAIT_US = 2000


def threads_of(way):
    """T of a way "parT" (N links closed by T threads), else 0."""
    return int(way[3:]) if way.startswith("par") else 0


def way_title(way, n):
    if threads_of(way):
        return "%d links, closed by %d threads" % (n, threads_of(way))
    return "%d link%s" % (n, "" if n == 1 else "s") if way == "links" \
        else "1 link, %d offset%s" % (n, "" if n == 1 else "s")


def ways_of(attach, n):
    """The ways measured at @n: links, one, then by thread count."""
    ws = {w for w, m in attach if m == n}
    return [w for w in WAYS if w in ws] + sorted(
        (w for w in ws if threads_of(w)), key=threads_of)


def quartiles(xs):
    """(p25, median, p75) of @xs."""
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def cell(xs, fmt):
    lo, med, hi = quartiles(xs)
    return "%s [%s–%s]" % (fmt % med, fmt % lo, fmt % hi)


def us_cell(xs):
    lo, med, hi = quartiles(xs)
    return "%s [%s–%s]" % tuple(format(v, ",.0f") for v in (med, lo, hi))


def ratio_cell(a, b):
    """Median [p25–p75] of the rounds' own b/a."""
    return cell([y / x for x, y in zip(a, b)], "%.3f×")


def run():
    cmd = [BIN, "-a", str(ATTACH_ROUNDS), "-r", str(ROUNDS), "-c", str(CALLS),
           "-t", THREADS]
    if shutil.which("taskset"):
        cpu = os.environ.get("BENCH_CPU", str((os.cpu_count() or 1) - 1))
        cmd = ["taskset", "-c", cpu] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("multilink: %s exited %d" % (BIN, p.returncode))
    # attach[(way, n)] = [(create_ns, close_ns, fds, first_ns)],
    # call[(way, n)] = [ns]
    attach, call = {}, {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "attach":
            attach.setdefault((f[1], int(f[2])), []).append(
                (int(f[4]), int(f[5]), int(f[6]), int(f[7])))
        elif f[0] == "call":
            call.setdefault((f[1], int(f[2])), []).append(float(f[4]))
    return attach, call


def report(attach, call):
    ns = sorted({n for _, n in attach} | {n for _, n in call})
    calls = "%d rounds of %s calls" % (ROUNDS, format(CALLS, ",")) \
        if ROUNDS else "no calls (`--only detach`)"
    out = ["One uprobe session link per point against one link per binary: "
           "the session floor's program on N nop5 functions of one running "
           "binary, %s ways in every round; %d attach rounds, %s; medians "
           "[p25–p75]." % ("both" if len({w for w, _ in attach}) == 2
                           else "all", ATTACH_ROUNDS, calls),
           "",
           "| N | way | attach µs | ÷ N links | detach µs | ÷ N links | fds "
           "| ns/call | ÷ N links |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n in ns:
        ws = ways_of(attach, n) or list(WAYS)
        a = {w: attach.get((w, n), []) for w in ws}
        c = {w: call.get((w, n), []) for w in ws}
        for w in ws:
            row = ["%d" % n, way_title(w, n)]
            if threads_of(w):
                # Detach only: the links are made as "N links" makes them.
                close = [x[1] / 1e3 for x in a[w]]
                row += ["", "", us_cell(close),
                        ratio_cell([x[1] for x in a["links"]],
                                   [x[1] for x in a[w]]),
                        "%d" % statistics.median(x[2] for x in a[w]), "", ""]
                out.append("| " + " | ".join(row) + " |")
                continue
            if a[w]:
                create = [x[0] / 1e3 for x in a[w]]
                close = [x[1] / 1e3 for x in a[w]]
                row += [us_cell(create),
                        "" if w == "links" else
                        ratio_cell([x[0] for x in a["links"]], [x[0] for x in a[w]]),
                        us_cell(close),
                        "" if w == "links" else
                        ratio_cell([x[1] for x in a["links"]], [x[1] for x in a[w]]),
                        "%d" % statistics.median(x[2] for x in a[w])]
            else:
                row += ["", "", "", "", ""]
            if c[w]:
                row += [cell(c[w], "%.1f"),
                        "" if w == "links" else ratio_cell(c["links"], c[w])]
            else:
                row += ["not measured", ""]
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("attach: the BPF_LINK_CREATE calls; detach: closing the fds "
               "(the kernel unregisters the uprobes and waits for a grace "
               "period in each link's close); ÷ N links: the rounds' own "
               "ratios, each round running both ways.")
    if any(threads_of(w) for w, _ in attach):
        out[-1] = out[-1][:-len("both ways.")] + (
            "every way.  N links, closed by T threads: the N links made as "
            "\"N links\" makes them, their fds closed by T threads at once "
            "(every T-th fd each), timed from the threads' release at a "
            "barrier until the last close returned; detach only.")
    out += split_lines(attach)
    return "\n".join(out)


def split_lines(attach):
    """Where the attach time goes: the first BPF_LINK_CREATE of a round
    against the links after it."""
    attach = {k: v for k, v in attach.items() if k[0] in WAYS}
    first = [x[3] / 1e3 for k, v in attach.items() for x in v]
    out = ["", "The first BPF_LINK_CREATE of a round (of one link: its "
           "only one), either way, any N: %s µs (all %d rounds)."
           % (us_cell(first), len(first))]
    for (w, n), v in sorted(attach.items()):
        if w != "links" or n < 2:
            continue
        rest = [(x[0] - x[3]) / 1e3 / (n - 1) for x in v]
        out.append("%d links: each link after the first %s µs." % (
            n, cell(rest, "%.1f")))
    # The wait is all or nothing: ~0.5 ms at most without it, 4 ms and
    # more (ticks of the kernel's clock) with it.
    out += ["", "Rounds in which no BPF_LINK_CREATE waited (attach < %d µs), "
            "what the links themselves cost:" % NO_WAIT_US, ""]
    for (w, n), v in sorted(attach.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        fast = [x[0] / 1e3 for x in v if x[0] / 1e3 < NO_WAIT_US]
        out.append("- %s: %s (%d of %d rounds)" % (
            way_title(w, n), us_cell(fast) + " µs" if fast else "none",
            len(fast), len(v)))
    return out


def main():
    ap = argparse.ArgumentParser(description="make multilink-bench")
    ap.add_argument("--raw", metavar="FILE",
                    help="print the table again from a run's "
                    "multilink.raw.json")
    ap.add_argument("--only", choices=("detach",),
                    help="detach: the attach and detach rounds alone, "
                    "no calls")
    args = ap.parse_args()
    global ATTACH_ROUNDS, ROUNDS, CALLS
    if args.raw:
        # The table again from the rounds a run kept (multilink.raw.json).
        with open(args.raw) as f:
            raw = json.load(f)
        ATTACH_ROUNDS, ROUNDS, CALLS = (raw["attach_rounds"], raw["rounds"],
                                        raw["calls"])
        key = lambda k: (k.split("/")[0], int(k.split("/")[1]))  # noqa: E731
        print(report({key(k): v for k, v in raw["attach"].items()},
                     {key(k): v for k, v in raw["call"].items()}))
        return 0
    if args.only == "detach":
        ROUNDS = 0
    if os.geteuid():
        sys.exit("multilink: needs root (it attaches uprobes)")
    if not os.access(BIN, os.X_OK):
        sys.exit("multilink: %s missing: run make bench-bins" % BIN)
    attach, call = run()
    text = report(attach, call)
    print(text)
    raw = {"attach_rounds": ATTACH_ROUNDS, "rounds": ROUNDS, "calls": CALLS,
           "attach": {"%s/%d" % k: v for k, v in attach.items()},
           "call": {"%s/%d" % k: v for k, v in call.items()}}
    if any(threads_of(w) for w, _ in attach):
        raw["threads"] = THREADS
    if args.only:
        raw["only"] = args.only
    results.save("multilink", text, raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
