#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The tables of tools/bench/guard/guard.sh, from the files it wrote in DIR.

  guard_report.py DIR TICK_MS

Reads cost1, cost2, costs (bench-guard cost), conc, token, react, their
.cmd files (the command lines), stats.json (sds-bpf stats --json),
bare.log (bench-bare-up's counters), progs.{sds,bare}.{0,1} (bench.py
progs before and after the stats pass) and machine.  Prints markdown
tables, the checks of every count against sds-bpf's and the targets.
Exit status 1 if a count does not match (not if a target is missed).
"""
import json
import os
import re
import sys

# targets of issue 3
NOLOADER_NS = 5.0
PASS_VS_BARE = 1.10
REACT_MARGIN_MS = 10.0


def read(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read()
    except OSError:
        return ""


def kv(line):
    return dict(m.groups() for m in re.finditer(r"(\w+)=(\S+)", line))


def median(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def cost(d, name):
    """{col: {"ns", "calls", "rounds": [...]}} of one bench-guard cost run."""
    out = {}
    for line in read(d, name).splitlines():
        if not line.startswith("col="):
            continue
        f = kv(line)
        out[f["col"]] = {"ns": float(f["ns_per_call"]),
                         "calls": int(f["calls"]),
                         "rounds": [float(x) for x in f["rounds"].split(",")]}
    return out


def paired(c, a, b):
    """(ratio, lo, hi): a's median over b's, and the spread of the rounds'
    own ratios (see bench.py); (None, None, None) if a column is missing."""
    if a not in c or b not in c or not c[b].get("ns"):
        return None, None, None
    per = [x / y for x, y in zip(c[a]["rounds"], c[b]["rounds"]) if y]
    return (c[a]["ns"] / c[b]["ns"], min(per) if per else None,
            max(per) if per else None)


def fmt_spread(p):
    r, lo, hi = p
    if r is None:
        return "n/a"
    if lo is None:
        return "%.3f×" % r
    return "%.3f× (%.3f×–%.3f×)" % (r, lo, hi)


def verdict(p, lim):
    """Met only if the whole spread of the rounds meets @lim."""
    r, lo, hi = p
    if r is None:
        return "n/a"
    return "met" if (hi if hi is not None else r) <= lim else "missed"


def iqr(v):
    v = sorted(v)
    if len(v) < 4 or not median(v):
        return 0
    return (v[(3 * len(v)) // 4] - v[len(v) // 4]) / median(v)


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


def cmd(d, name):
    return read(d, name + ".cmd").strip() or "?"


def progs(d, who):
    """{name: (runs, ns)} of the programs of @who during the stats pass."""
    def load(i):
        r = {}
        for line in read(d, "progs.%s.%d" % (who, i)).splitlines():
            pid, name, cnt, ns = line.split()
            r[pid] = (name, int(cnt), int(ns))
        return r
    before, after = load(0), load(1)
    out = {}
    for pid, (name, cnt, ns) in after.items():
        c0, n0 = before.get(pid, (name, 0, 0))[1:]
        if cnt - c0 > 0:
            out[name] = (cnt - c0, ns - n0)
    return out


def main(d, tick_ms):
    ok = True
    checks = []

    def check(what, got, want):
        nonlocal ok
        same = got == want
        ok &= same
        checks.append("  %-58s %12s = %-12s %s" % (what, got, want,
                                                     "exact" if same else "MISMATCH"))

    print(read(d, "machine").strip())
    print()
    c1, c2, cs = cost(d, "cost1"), cost(d, "cost2"), cost(d, "costs")
    st = {}
    try:
        for p in json.loads(read(d, "stats.json"))["points"]:
            st[p["name"]] = p
    except (ValueError, KeyError):
        ok = False
        print("bench-guard: no stats from sds-bpf")

    # ---- cost ----------------------------------------------------------
    print("### Guarded call: ns per call (`sds_should_downgrade` + `sds_downgrade_finally`)")
    print()
    print("`%s` and `%s`, with `sds-bpf attach --app bench-guard --group bench "
          "--tick-ms %d --strategies strategies.json bench-guard` and "
          "`bench-bare-up bench-guard bench_site_a bench_site_b` attached "
          "(tools/bench/guard/guard.sh, run by `make bench`)" % (
              cmd(d, "cost1"), cmd(d, "cost2"), tick_ms))
    print()
    print("| guarded call | 1 thread | 2 threads (both cores) | target | met |")
    print("|---|---:|---:|---|---|")
    rows = [("none", "no loader (the app's client is detached)"),
            ("pass", "loader attached, point passing (entry + exit probes)"),
            ("down", "point downgraded (kill switch; one probe)"),
            ("bare2", "two bare nop5 uprobes, a counter each (baseline)"),
            ("nop2", "the same two nop5 calls, no probe"),
            ("copyoff", "`sds_copy` of a passing point, copying off (256 B)")]
    for col, label in rows:
        a = c1.get(col, {}).get("ns")
        b = c2.get(col, {}).get("ns")
        tg = met = ""
        if col in ("none", "copyoff"):
            tg = "≤ %.0f ns" % NOLOADER_NS
            met = ", ".join("n/a" if x is None else
                            ("met" if x <= NOLOADER_NS else "missed") for x in (a, b))
        print("| %s | %s | %s | %s | %s |" % (label, fmt(a), fmt(b), tg, met))
    r1, r2 = paired(c1, "pass", "bare2"), paired(c2, "pass", "bare2")
    print("| **passing ÷ two bare uprobes** | %s | %s | ≤ %.2f× | %s |" % (
        fmt_spread(r1), fmt_spread(r2), PASS_VS_BARE,
        ", ".join(verdict(r, PASS_VS_BARE) for r in (r1, r2))))
    print()
    print("ns per call, median of %d rounds (each round runs every column once, in "
          "rotating order);" % len(c1.get("pass", {}).get("rounds", [])))
    print("2 threads: each thread on its own core, the mean of the two threads' ns "
          "per call; the ratio is of the medians, with the spread of the rounds' "
          "own ratios; a target is met only if the whole spread meets it.")
    print("The bare uprobes count per CPU, as sds-bpf does (bare.bpf.c: plain adds "
          "unless a uprobe program can be preempted, common/preempt.c).")
    noisy = ["%s/%s %.0f%%" % (n, col, 100 * iqr(c[col]["rounds"]))
             for n, c in (("1 thread", c1), ("2 threads", c2))
             for col in ("pass", "down", "bare2") if col in c and iqr(c[col]["rounds"]) > 0.05]
    if noisy:
        print("NOISY: the rounds' interquartile range exceeds 5%% of the median (%s); "
              "other load on the machine? Rerun it quiet." % ", ".join(noisy))
    print()

    ps, pb = progs(d, "sds"), progs(d, "bare")
    if ps or pb:
        print("BPF programs' own run time (kernel.bpf_stats_enabled=1, `%s`, "
              "run_time_ns / run_cnt):" % cmd(d, "costs"))
        print()
        print("| program | runs | ns per run |")
        print("|---|---:|---:|")
        for who, pr in (("sds-bpf", ps), ("bare", pb)):
            for name, (cnt, ns) in sorted(pr.items()):
                print("| %s: %s | %d | %.1f |" % (who, name, cnt, ns / cnt))
        per = lambda pr, names: sum(pr[n][1] / pr[n][0] for n in names if n in pr)
        e = per(ps, ("sds_guard_enter", "sds_guard_exit"))
        b = per(pb, ("bare_enter", "bare_leave"))
        print("| **passing call: sds_guard_enter + sds_guard_exit** | | %.1f |" % e)
        print("| **two bare uprobes: bare_enter + bare_leave** | | %.1f |" % b)
        print()
        if r1[0] is not None and "pass" in c1 and "bare2" in c1:
            print("passing minus two bare uprobes, 1 thread: %+.1f ns measured, "
                  "%+.1f ns in the BPF programs" % (
                      c1["pass"]["ns"] - c1["bare2"]["ns"], e - b))
            print()

    # ---- exact limits ----------------------------------------------------
    print("### Exact limits under contention (2 threads, one per core)")
    print()
    print("`%s`; `%s`" % (cmd(d, "conc"), cmd(d, "token")))
    print()
    print("| strategy | load | calls | passed | expected | result |")
    print("|---|---|---:|---:|---:|---|")
    conc, token = read(d, "conc"), read(d, "token")
    limits = []
    for line in conc.splitlines():
        f = kv(line)
        if line.startswith("conc-steps"):
            print("| concurrent_threshold %s | lock-step: both enter at once and hold "
                  "until both have their answer, %s rounds | %s | %s | %s (%s per round) | %s |" % (
                      f["limit"], f["rounds"], f["calls"], f["passed"], f["expected"],
                      min(int(f["limit"]), 2), line.split()[-1]))
            limits.append(line.split()[-1] == "exact")
        elif line.startswith("conc-hammer"):
            print("| concurrent_threshold %s | both hammering for %s ms | %s | %s | "
                  "≤ %s inside at once | max %s inside: %s |" % (
                      f["limit"], f["ms"], f["calls"], f["passed"], f["limit"],
                      f["max_inside"], line.split()[-1]))
            limits.append(line.split()[-1] == "within")
    for line in token.splitlines():
        if line.startswith("token "):
            f = kv(line)
            print("| token_rate %s, token_bucket %s (full) | both hammering, then one "
                  "drains the bucket: %.3f s from the first call to the last | %s | %s "
                  "(%s drained) | %.2f … %.2f (bucket + rate × time, ±1) | %s |" % (
                      f["rate"], f["bucket"], float(f["seconds"]), f["calls"],
                      f["passed"], f["drained"], float(f["low"]), float(f["high"]),
                      line.split()[-1]))
            limits.append(line.split()[-1] == "exact")
    if len(limits) != 3:
        ok = False
        limits.append(False)
        print("| (a result is missing) | | | | | MISSING |")
    print()

    # ---- reaction ---------------------------------------------------------
    react = read(d, "react")
    summary = [kv(l) for l in react.splitlines() if l.startswith("react ")]
    print("### Reaction time: the call that crosses visit_threshold → the first "
          "downgraded call")
    print()
    print("`%s` (tick %d ms; a new strategies version and a new point per trial, "
          "started at a random phase of the tick; 0 when the crossing call is itself "
          "the downgraded one, as exact trips make it)" % (cmd(d, "react"), tick_ms))
    print()
    print("| visit_threshold | calls every | trials | p50 | p90 | p99 | max | target | met |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---|")
    if summary:
        f = summary[0]
        ms = lambda k: float(f[k]) / 1000
        lim = tick_ms + REACT_MARGIN_MS
        print("| %s | %s µs | %s%s | %.1f ms | %.1f ms | %.1f ms | %.1f ms | p99 ≤ %.0f ms "
              "(tick + %.0f) | %s |" % (
                  f["threshold"], f["pace_us"], f["n"],
                  "" if f["failed"] == "0" else " (%s failed)" % f["failed"],
                  ms("p50_us"), ms("p90_us"), ms("p99_us"), ms("max_us"), lim,
                  REACT_MARGIN_MS, "met" if ms("p99_us") <= lim else "missed"))
        react_met = ms("p99_us") <= lim
    else:
        ok = False
        react_met = None
        print("| (no result) | | | | | | | | |")
    print()

    # ---- counts ------------------------------------------------------------
    def total(name, key):
        return st.get(name, {}).get("total", {}).get(key)

    def completed(name):
        return st.get(name, {}).get("latency_ns", {}).get("count")

    calls = lambda col: sum(c.get(col, {}).get("calls", 0) for c in (c1, c2, cs))
    check("pass: sds-bpf visits = calls", total("pass", "visits"), calls("pass"))
    check("pass: sds-bpf downgrades = 0", total("pass", "downgrades"), 0)
    check("pass: sds-bpf completed calls (latency count) = calls",
          completed("pass"), calls("pass"))
    check("down: sds-bpf visits = calls", total("down", "visits"), calls("down"))
    check("down: sds-bpf downgrades = calls", total("down", "downgrades"), calls("down"))
    m = re.search(r"^a (\d+) b (\d+)$", read(d, "bare.log"), re.M)
    check("bare uprobe on site a: count = calls", int(m.group(1)) if m else None,
          calls("bare2"))
    check("bare uprobe on site b: count = calls", int(m.group(2)) if m else None,
          calls("bare2"))
    for name, text in (("conc", conc), ("tok", token)):
        f = [kv(l) for l in text.splitlines() if l.startswith("point=")]
        f = f[0] if f else {}
        c, p, r = (int(f[k]) if k in f else None for k in ("calls", "passed", "refused"))
        check("%s: sds-bpf visits = calls" % name, total(name, "visits"), c)
        check("%s: sds-bpf downgrades = refused" % name, total(name, "downgrades"), r)
        check("%s: sds-bpf completed calls = passed" % name, completed(name), p)
    bad = []
    n = 0
    for line in react.splitlines():
        if line.startswith("trial="):
            f = kv(line)
            n += 1
            want = (int(f["calls"]), 1 if "react_us" in f else 0)
            got = (total(f["point"], "visits"), total(f["point"], "downgrades"))
            if got != want:
                bad.append("%s: sds-bpf %s, bench-guard %s" % (f["point"], got, want))
    check("reaction points r*: visits and downgrades = calls, 1 (mismatches)",
          len(bad), 0)
    for b in bad[:5]:
        checks.append("    " + b)
    print("Counts: every call the drivers made against sds-bpf's totals "
          "(`sds-bpf stats --json`) and the bare uprobes' counters (%d reaction "
          "points):" % n)
    print()
    print("\n".join(checks))
    print()

    # ---- targets ------------------------------------------------------------
    def verdict_ns(x, lim):
        return "n/a" if x is None else ("met" if x <= lim else "missed")
    print("target guard, no loader ≤ %.0f ns:                 1 thread %s (%s ns), "
          "2 threads %s (%s ns)" % (
              NOLOADER_NS, verdict_ns(c1.get("none", {}).get("ns"), NOLOADER_NS),
              fmt(c1.get("none", {}).get("ns")),
              verdict_ns(c2.get("none", {}).get("ns"), NOLOADER_NS),
              fmt(c2.get("none", {}).get("ns"))))
    print("target sds_copy, copying off ≤ %.0f ns:           1 thread %s (%s ns), "
          "2 threads %s (%s ns)" % (
              NOLOADER_NS, verdict_ns(c1.get("copyoff", {}).get("ns"), NOLOADER_NS),
              fmt(c1.get("copyoff", {}).get("ns")),
              verdict_ns(c2.get("copyoff", {}).get("ns"), NOLOADER_NS),
              fmt(c2.get("copyoff", {}).get("ns"))))
    print("target guarded call with probes ≤ %.2f× two bare: 1 thread %s (%s), "
          "2 threads %s (%s)" % (PASS_VS_BARE, verdict(r1, PASS_VS_BARE),
                                 fmt_spread(r1), verdict(r2, PASS_VS_BARE),
                                 fmt_spread(r2)))
    if summary:
        print("target reaction p99 ≤ tick + %.0f ms:              %s (%.1f ms)" % (
            REACT_MARGIN_MS, "met" if react_met else "missed",
            float(summary[0]["p99_us"]) / 1000))
    print("target concurrency and token limits exact:        %s" % (
        "met" if all(limits) else "missed (see the table)"))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
