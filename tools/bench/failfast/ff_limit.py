#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""What the semaphore and the token bucket add to a :failfast= point's
probe (docs/FAILFAST.md "Limits"; make ff-limit-bench, part of make bench).

One run, root and BPF: bench-keys fn (tools/bench/keys) calls kb_fn (a
nop5 site) back to back in three byte-identical copies: none (no probe),
plain (f=kb_fn:failfast=connect) and limits (the same point with
concurrent_threshold 1,000,000,000 and token_rate 1,000,000,000 with a
bucket of 1,000,000,000: both armed, neither ever refuses), each with a
loader of its own.  Every round runs each copy once, the order reversed
every other round; per-call ns, the limits' added ns (limits minus plain)
per round, medians; then a second pass reading the BPF programs' own run
time (kernel.bpf_stats_enabled=1).  Target: <= 50 ns added a call, on
the programs' run time (a :failfast= point pairs its entry with a
uretprobe, whose trap moves the wall-clock rounds by microseconds).
Environment: BUILD (default build), FFL_ROUNDS (21), FFL_ITERS (300000),
BENCH_CPU (the CPU the driver is pinned to, default the last).  With
BENCH_OUT set (make bench) the table goes to BENCH_OUT/ff_limit.md, the
rounds to ff_limit.raw.json.  Exits non-zero if a check fails (a count,
a refusal, an attach), not if the target is missed.
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "keys"))
import results  # noqa: E402
import keys_bench as kb  # noqa: E402

ROUNDS = int(os.environ.get("FFL_ROUNDS", "21"))
ITERS = int(os.environ.get("FFL_ITERS", "300000"))
SPEC = "f=kb_fn:failfast=connect:site=nop5"
BIG = 1000000000
LIMITS = {"concurrent_threshold": BIG, "token_rate": BIG, "token_bucket": BIG}
VARIANTS = (("none", None, None), ("plain", SPEC, {}),
            ("limits", SPEC, {"f": LIMITS}))


def die(msg):
    print("ff_limit: " + msg, file=sys.stderr)
    sys.exit(1)


def failfast_of(b, app):
    doc = json.loads(b.sds("stats", "--app", app, "--json"))
    for p in doc.get("points", []):
        if p.get("name") == "f":
            return p.get("failfast") or {}, doc.get("tick_count", 0)
    die("stats of %s has no point f" % app)
    return None, 0


def attach(b, bins, name, spec, points):
    path = os.path.join(b.tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"version": 1, "points": points}, f)
    b.attach(bins[name], ["--strategies", path, bins[name], spec],
             "default.kb-%s.sock" % name)
    # Two ticks: the strategies' limits are in the programs.
    _, t0 = failfast_of(b, "kb-" + name)
    for _ in range(300):
        if failfast_of(b, "kb-" + name)[1] >= t0 + 2:
            return
        time.sleep(0.05)
    die("kb-%s: the loader did not tick" % name)


def bpf_pass(b, bins):
    with open(kb.STATS) as f:
        old = f.read().strip()
    per = {"plain": [], "limits": []}
    n_iters = max(ITERS // 3, 1000)
    try:
        with open(kb.STATS, "w") as f:
            f.write("1")
        for r in range(max(ROUNDS // 3, 3)):
            order = list(per)
            if r & 1:
                order.reverse()
            for n in order:
                pid = b.pid["kb-" + n]
                t0 = kb.bpf_time(pid)
                b.run(bins[n], "fn", str(n_iters))
                per[n].append((kb.bpf_time(pid) - t0) / (n_iters + kb.WARM))
    finally:
        with open(kb.STATS, "w") as f:
            f.write(old)
    return per, n_iters


def table(b, raw):
    bins = {}
    for name, spec, points in VARIANTS:
        bins[name] = b.copy(name)
        if spec:
            attach(b, bins, name, spec, points)
    ns = {n: [] for n, _, _ in VARIANTS}
    for r in range(ROUNDS):
        order = [n for n, _, _ in VARIANTS]
        if r & 1:
            order.reverse()
        for n in order:
            out = b.run(bins[n], "fn", str(ITERS))
            ns[n].append(float(out.split("=", 1)[1]))
    raw["fn"] = ns
    bpf, n_bpf = bpf_pass(b, bins)
    raw["bpf"] = bpf
    want = ROUNDS * (ITERS + kb.WARM) + len(bpf["plain"]) * (n_bpf + kb.WARM)
    for n in ("plain", "limits"):
        got = kb.point_calls(b.sds("stats", "--app", "kb-" + n, "--json"), "f")
        if got != want:
            die("point f of kb-%s counted %s calls, the driver made %d"
                % (n, got, want))
        ff, _ = failfast_of(b, "kb-" + n)
        if ff.get("denied") or ff.get("refused_concurrent") or ff.get("refused_token"):
            die("kb-%s refused calls: %r" % (n, ff))
    med = statistics.median
    probe = {n: [ns[n][i] - ns["none"][i] for i in range(ROUNDS)]
             for n in ("plain", "limits")}
    added = [ns["limits"][i] - ns["plain"][i] for i in range(ROUNDS)]
    badd = [bpf["limits"][i] - bpf["plain"][i] for i in range(len(bpf["plain"]))]
    out = ["| point | ns per call | probe's ns (minus none) | limits' added ns |",
           "|---|---|---|---|"]
    for n, spec, _ in VARIANTS:
        label = {"none": "none (no probe)",
                 "plain": "`f=kb_fn:failfast=connect`",
                 "limits": "the same, semaphore and bucket armed"}[n]
        cells = ["%.1f (%s)" % (med(ns[n]), kb.spread(ns[n]))]
        if n == "none":
            cells += ["—", "—"]
        else:
            cells.append("%.1f (%s)" % (med(probe[n]), kb.spread(probe[n])))
            cells.append("—" if n == "plain" else
                         "%.1f (%s)" % (med(added), kb.spread(added)))
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    out += ["", "The BPF programs' own run time, ns per call "
            "(kernel.bpf_stats_enabled=1, %d-call runs, %d rounds, a separate "
            "pass): plain %.1f (%s), limits %.1f (%s), added %.1f (%s)."
            % (n_bpf, len(bpf["plain"]), med(bpf["plain"]),
               kb.spread(bpf["plain"]), med(bpf["limits"]),
               kb.spread(bpf["limits"]), med(badd), kb.spread(badd)), ""]
    # The uretprobe's trap moves whole runs by microseconds: the programs'
    # own run time is what the limits change, and what the target is on.
    a = med(badd)
    out.append("target <= 50 ns added a call (the programs' run time): %s "
               "(%.1f ns)" % ("met" if a <= 50 else "NOT met", a))
    return out


def main():
    if os.geteuid():
        die("needs root")
    for f in (kb.SDS, kb.BIN):
        if not os.access(f, os.X_OK):
            die("%s missing: run make bench-bins" % f)
    b = kb.Bench()
    raw = {"rounds": ROUNDS, "iters": ITERS}
    try:
        t = table(b, raw)
    finally:
        b.close()
    text = "\n".join(
        ["The semaphore and token bucket of a :failfast= point "
         "(docs/FAILFAST.md \"Limits\"), `tools/bench/failfast/ff_limit.py`; "
         "%d rounds of %d calls of kb_fn on a nop5 site, medians, (lo–hi) the "
         "rounds' spread; driver pinned to CPU %s." % (ROUNDS, ITERS, kb.CPU),
         ""] + t)
    print(text)
    results.save("ff_limit", text, raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
