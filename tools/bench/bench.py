#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Helpers for tools/bench/probe/run.sh (POSIX sh cannot parse JSON).

  bench.py progs PID           BPF programs process PID holds open (found
                               through /proc/PID/fdinfo, so programs that
                               other loaders on the host run are not mixed
                               in), from `bpftool prog show --json`, one a
                               line: "id name run_cnt run_time_ns"
  bench.py point STATS_JSON P  point P of `sds-bpf stats --json`:
                               "site visits completed"
  bench.py variants            the columns of the cost breakdown, in order:
                               sds-bpf's variant loaders (VARIANTS below)
  bench.py offset BIN SYMBOL   SYMBOL's file offset in BIN (for bench-floor,
                               whose session link takes one)
  bench.py report DIR          the tables, from the files run.sh wrote in DIR:
                               res.KIND.TOOL (ns/call), runs.KIND.TOOL (the
                               rounds), site.KIND (sds-bpf's site),
                               bpf.KIND.TOOL (progs, as above) and
                               calls.KIND.TOOL (calls during the stats pass)
"""
import glob
import json
import os
import subprocess
import sys

KINDS = [("stepped", "stepped: `mov %edi,%eax`"),
         ("endbr", "`endbr64; push %rbp`"),
         ("nop5", "nop5: `-pg -mfentry -mnop-mcount`")]
TOOLS = [("none", "none"), ("bare", "bare pair"), ("sdsbpf", "sds-bpf"),
         ("bpftrace", "bpftrace")]
# (kind, numerator, denominator, limit): the targets of issue 2
TARGETS = [("stepped", "sdsbpf", "bare", 1.03),
           ("endbr", "sdsbpf", "bpftrace", 0.05),
           ("nop5", "sdsbpf", "bare", 1.10),
           ("nop5", "sdsbpf", "bpftrace", 0.75)]
SHORT = {"bare": "bare", "bpftrace": "bpftrace"}
# The cost breakdown: sds-bpf's loader built without one part more at each
# step (tools/bench/probe/variants/variants.mk), run as more columns on the same
# site.  (column, label, what the step from the column above removes.)
# Cumulative, so the steps from sds-bpf down to the bare pair add up.
VARIANTS = [("sdsbpf-noclock", "sds-bpf, no clock reads", "clock reads"),
            ("sdsbpf-noframes", "sds-bpf, no clock reads, no frame stack",
             "frame stack")]


def prog_ids(pid):
    ids = set()
    for fdinfo in glob.glob("/proc/%d/fdinfo/*" % pid):
        try:
            with open(fdinfo) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def cmd_progs(pid):
    ids = prog_ids(pid)
    out = subprocess.run(["bpftool", "prog", "show", "--json"], check=True,
                         capture_output=True, text=True).stdout
    for p in sorted(json.loads(out or "[]"), key=lambda p: p["id"]):
        if p["id"] in ids:
            print(p["id"], p.get("name", "?"), p.get("run_cnt", 0),
                  p.get("run_time_ns", 0))
    return 0


def cmd_point(path, name):
    with open(path) as f:
        st = json.load(f)
    for pt in st.get("points", []):
        if pt.get("name") == name:
            print(pt.get("site", "?"), pt["total"]["visits"],
                  pt["latency_ns"]["count"])
            return 0
    return 1


def read(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read().strip()
    except OSError:
        return None


def num(d, name):
    s = read(d, name)
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


def fmt_ratio(r):
    if r is None:
        return "n/a"
    return ("%.4f×" if r < 0.1 else "%.3f×") % r


def ratio(a, b):
    return a / b if a is not None and b else None


def median(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def rounds(d, k, t):
    s = read(d, "runs.%s.%s" % (k, t))
    return [float(l.split()[0]) for l in s.splitlines()] if s else []


def paired(d, k, a, b):
    """(ratio, lo, hi): the ratio of a's median to b's median in this run,
    and the spread of the rounds' own ratios (a round runs every column
    once, within a second).  A target is met only when the whole spread
    meets it: a median ratio under the limit with rounds over it is noise,
    not a result."""
    r = ratio(num(d, "res.%s.%s" % (k, a)), num(d, "res.%s.%s" % (k, b)))
    ra, rb = rounds(d, k, a), rounds(d, k, b)
    if not ra or len(ra) != len(rb) or not all(rb):
        return r, None, None
    per = [x / y for x, y in zip(ra, rb)]
    return r, min(per), max(per)


def diffs(d, k, a, b):
    """(median difference, lo, hi) of a's and b's ns/call: the medians'
    difference in this run, and the spread of the rounds' own ones."""
    ma, mb = num(d, "res.%s.%s" % (k, a)), num(d, "res.%s.%s" % (k, b))
    if ma is None or mb is None:
        return None, None, None
    ra, rb = rounds(d, k, a), rounds(d, k, b)
    if not ra or len(ra) != len(rb):
        return ma - mb, None, None
    per = [x - y for x, y in zip(ra, rb)]
    return ma - mb, min(per), max(per)


def fmt_spread(p):
    r, lo, hi = p
    if lo is None:
        return fmt_ratio(r)
    return "%s (%s–%s)" % (fmt_ratio(r), fmt_ratio(lo), fmt_ratio(hi))


def verdict(p, lim):
    r, lo, hi = p
    if r is None:
        return "n/a"
    worst = hi if hi is not None else r
    return "met" if worst <= lim else "missed"


# The probe paths of a function point (issue 14), on the nop5 site: every
# row against the session floor (bench-floor).  (column, label)
PATHS = [("sdsbpf", "sds-bpf, default path"),
         ("sdsbpf-pair", "sds-bpf, SDS_PROBE_PATH=pair"),
         ("sdsbpf-timed", "sds-bpf, default path, :timeout_ms=1000 (stuck table)"),
         ("sdsbpf-pair-timed", "sds-bpf, pair path, :timeout_ms=1000 (stuck table)"),
         ("floor", "session floor: counter + 2 clock reads + histogram"),
         ("bare", "bare uprobe + uretprobe pair, one counter each"),
         ("bpftrace", "bpftrace count + hist")]
PATH_TARGET = 1.05
# The path table's columns the site table has not.
EXTRA = [("sdsbpf-pair", "sds-bpf, pair path"), ("floor", "session floor")]


def quartiles(v):
    v = sorted(v)
    if len(v) < 4:
        return None, None
    return v[len(v) // 4], v[(3 * len(v)) // 4]


def cmd_paths(d, k="nop5"):
    """The probe-path table: median ns, the rounds' spread, and the ratio
    to the floor with the quartiles and extremes of the rounds' own
    ratios (each round runs every column once)."""
    if num(d, "res.%s.floor" % k) is None:
        return
    path = read(d, "path.%s" % k) or "n/a"
    print("Probe paths on the %s site (sds-bpf's default path here: %s):" % (k, path.strip()))
    print()
    print("| probe | ns/call (median) | rounds min–max | ÷ floor | rounds' ÷ floor p25–p75 (min–max) |")
    print("|---|---:|---:|---:|---:|")
    fl = rounds(d, k, "floor")
    for t, lbl in PATHS:
        m = num(d, "res.%s.%s" % (k, t))
        v = rounds(d, k, t)
        if m is None or not v:
            continue
        r = ratio(m, num(d, "res.%s.floor" % k))
        per = [x / y for x, y in zip(v, fl)] if len(v) == len(fl) and all(fl) else []
        q1, q3 = quartiles(per)
        spread = ("%s–%s (%s–%s)" % (fmt_ratio(q1), fmt_ratio(q3), fmt_ratio(min(per)),
                                    fmt_ratio(max(per)))) if q1 is not None else "n/a"
        print("| %s | %.1f | %.1f–%.1f | %s | %s |" % (lbl, m, min(v), max(v),
                                                      fmt_ratio(r), spread))
    r = ratio(num(d, "res.%s.sdsbpf" % k), num(d, "res.%s.floor" % k))
    print()
    print("Target: sds-bpf ≤ %.2f× the floor (medians): %s (%s)." % (
        PATH_TARGET, "met" if r is not None and r <= PATH_TARGET else "missed",
        fmt_ratio(r)))
    print()


def cmd_offset(path, sym):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "lib"))
    import sdstest  # noqa: E402
    print(sdstest.symbol_file_offset(path, sym))
    return 0


def cmd_report(d):
    res = {(k, t): num(d, "res.%s.%s" % (k, t)) for k, _ in KINDS
           for t, _ in TOOLS}
    print("| probe site (first instruction) | sds-bpf site | "
          + " | ".join(lbl for _, lbl in TOOLS)
          + " | sds-bpf÷bare | sds-bpf÷bpftrace | target | met |")
    print("|---|---|" + "---:|" * (len(TOOLS) + 2) + "---|---|")
    verdicts = []
    for k, lbl in KINDS:
        row = [lbl, read(d, "site.%s" % k) or "n/a"]
        row += [fmt(res[k, t]) for t, _ in TOOLS]
        row.append(fmt_spread(paired(d, k, "sdsbpf", "bare")))
        row.append(fmt_spread(paired(d, k, "sdsbpf", "bpftrace")))
        tg, met = [], []
        for tk, num_t, den_t, lim in TARGETS:
            if tk != k:
                continue
            p = paired(d, k, num_t, den_t)
            r, ok = p[0], verdict(p, lim)
            tg.append("≤ %.2f× %s" % (lim, SHORT[den_t]))
            met.append(ok)
            verdicts.append((lbl, lim, den_t, r, ok))
        row += [", ".join(tg), ", ".join(met)]
        print("| " + " | ".join(row) + " |")
    print()
    print("ns per call, median of rounds; ratios: of the two columns' medians,")
    print("with the spread of the rounds' own ratios (each round runs every")
    print("column once); a target is met only if the whole spread meets it.")
    print("The bare pair and bpftrace probe at +0, sds-bpf past a leading")
    print("endbr64 (+4).")
    b4 = num(d, "res.endbr.bare4")
    if b4:
        print("On `endbr64; push %%rbp` the bare pair at +4, sds-bpf's site, costs "
              "%.1f ns/call: sds-bpf is %s that." % (
                  b4, fmt_spread(paired(d, "endbr", "sdsbpf", "bare4"))))
    noisy = []
    for k, lbl in KINDS:
        for t, tl in TOOLS[1:] + [("bare4", "bare pair at +4")] + [
                (v, vl) for v, vl, _ in VARIANTS] + EXTRA:
            v = sorted(rounds(d, k, t))
            if len(v) >= 4 and v[0] > 0:
                iqr = (v[(3 * len(v)) // 4] - v[len(v) // 4]) / median(v)
                if iqr > 0.05:
                    noisy.append("%s/%s %.0f%%" % (k, t, 100 * iqr))
    if noisy:
        print("NOISY: the rounds' interquartile range exceeds 5%% of the median "
              "(%s); other load on the machine? Rerun it quiet." % ", ".join(noisy))
    print()

    cmd_paths(d)

    # The programs' own run time, from the stats pass.
    rows = []
    bpf_per_call = {}
    for t, lbl in TOOLS[1:] + [("bare4", "bare pair at +4")] + [
            (v, vl) for v, vl, _ in VARIANTS] + EXTRA:
        per_kind = {}
        for k, _ in KINDS:
            s = read(d, "bpf.%s.%s" % (k, t))
            calls = num(d, "calls.%s.%s" % (k, t))
            if s is None:
                continue
            progs = []
            for line in s.splitlines():
                _, name, cnt, ns = line.split()
                cnt, ns = int(cnt), int(ns)
                # per-call programs only (not, say, a thread-exit hook)
                # per call, not per run: a session program runs twice a call
                if calls and cnt >= calls / 2:
                    progs.append((name, ns / calls))
            per_kind[k] = progs
        nprog = max((len(p) for p in per_kind.values()), default=0)
        for i in range(nprog):
            names = {p[i][0] for p in per_kind.values() if len(p) > i}
            name = "/".join(sorted(names))
            if t == "bpftrace":
                name = "%s (prog %d)" % (name, i + 1)
            rows.append(["%s: %s" % (lbl, name)] + [
                fmt(per_kind[k][i][1]) if len(per_kind.get(k, [])) > i
                else "n/a" for k, _ in KINDS])
        for k, _ in KINDS:
            if per_kind.get(k):
                bpf_per_call[k, t] = sum(a for _, a in per_kind[k])
        if nprog:
            rows.append(["%s: **per call**" % lbl] + [
                fmt(sum(a for _, a in per_kind[k])) if per_kind.get(k)
                else "n/a" for k, _ in KINDS])
    print("BPF programs' own run time, ns per call (kernel.bpf_stats_enabled=1,")
    print("run_time_ns from bpftool prog show --json over the calls the driver made,")
    print("separate short pass; a session program runs twice a call):")
    print()
    print("| program | " + " | ".join(lbl for _, lbl in KINDS) + " |")
    print("|---|" + "---:|" * len(KINDS))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    # Where the gap comes from: sds-bpf against the bare pair on the same
    # site (at +4 on the endbr64 function), and how far each target is.
    print("sds-bpf minus the bare pair on the same site, per call:")
    for k, lbl in KINDS:
        bt = "bare4" if k == "endbr" else "bare"
        a, b = res[k, "sdsbpf"], num(d, "res.%s.%s" % (k, bt))
        pa, pb = bpf_per_call.get((k, "sdsbpf")), bpf_per_call.get((k, bt))
        if None in (a, b, pa, pb):
            continue
        print("  %-34s %+7.1f ns measured, %+7.1f ns in the BPF programs" % (
            lbl.replace("`", "") + ":", a - b, pa - pb))
    print()
    breakdown(d, res, bpf_per_call)
    for lbl, lim, den_t, r, ok in verdicts:
        k = [k for k, l in KINDS if l == lbl][0]
        line = "target %-34s sds-bpf ≤ %.2f× %-8s: %-6s (%s" % (
            lbl.replace("`", ""), lim, SHORT[den_t], ok, fmt_ratio(r))
        if r is not None:
            # in ns of sds-bpf's median, at the measured ratio
            limit = res[k, "sdsbpf"] * lim / r
            line += "; limit ≈ %.0f ns/call, measured %.0f: %s by %.0f ns" % (
                limit, res[k, "sdsbpf"],
                "within" if r <= lim else "over",
                abs(res[k, "sdsbpf"] - limit))
        print(line + ")")
    return 0


def breakdown(d, res, bpf_per_call):
    """Where sds-bpf's cost over the bare pair goes, on each kind that ran
    the variant columns: a table of the columns from sds-bpf down to the
    bare pair, each step the difference of two columns' medians (with the
    rounds' own differences), and the same in the BPF programs' own run
    time; then one line that sums it up, from this run's medians.  The
    bare pair is the one on sds-bpf's own site (at +4 past an endbr64).
    The variants run on the pair path (run.sh), so the breakdown starts
    from sds-bpf on the pair path where that column ran: a session-path
    row above pair-path variants would put the paths' difference into the
    first step."""
    steps = [what for _, _, what in VARIANTS] + [
        "the rest (slots, gauge, histogram, config)"]
    for k, lbl in KINDS:
        if any(num(d, "res.%s.%s" % (k, v)) is None for v, _, _ in VARIANTS):
            continue
        top = ("sdsbpf-pair", "sds-bpf, pair path")
        if num(d, "res.%s.sdsbpf-pair" % k) is None:
            top = ("sdsbpf", "sds-bpf")
        cols = [top] + [(v, vl) for v, vl, _ in VARIANTS]
        base, bl = "bare", "bare pair"
        if k == "endbr":
            base, bl = "bare4", "bare pair at +4"
        print("Cost breakdown (%s): sds-bpf's loader built without one part "
              "more at each row (`tools/bench/probe/variants/`), in the same run "
              "and rounds; a step is its row's median less the next row's, "
              "with the spread of the rounds' own differences, and the same "
              "in the BPF programs' own run time (the stats pass):" % lbl)
        print()
        print("| column | ns/call | ÷ %s | next row drops " % bl +
              "| step, ns/call | step, BPF programs |")
        print("|---|---:|---:|---|---:|---:|")
        below = [c for c, _ in cols[1:]] + [base]
        parts = []
        for (c, cl), nxt, what in zip(cols, below, steps):
            dm, lo, hi = diffs(d, k, c, nxt)
            pa, pb = bpf_per_call.get((k, c)), bpf_per_call.get((k, nxt))
            prog = pa - pb if None not in (pa, pb) else None
            parts.append((what, dm, prog))
            step = "n/a" if dm is None else "%+.1f" % dm
            if lo is not None:
                step += " (%+.0f…%+.0f)" % (lo, hi)
            print("| %s | %s | %s | %s | %s | %s |" % (
                cl, fmt(num(d, "res.%s.%s" % (k, c))),
                fmt_spread(paired(d, k, c, base)), what, step,
                "n/a" if prog is None else "%+.1f" % prog))
        print("| %s | %s | 1.000× | | | |" % (
            bl, fmt(num(d, "res.%s.%s" % (k, base)))))
        print()
        total = diffs(d, k, top[0], base)[0]
        print("Breakdown, %s (medians of this run): %s %s the %s "
              "per call = %s." % (
                  lbl.replace("`", ""), top[1], fmt(total, "%+.1f ns over"), bl,
                  ", ".join("%s %s" % (w.split(" (")[0], fmt(m, "%+.1f ns"))
                            for w, m, _ in parts)))
        r0 = paired(d, k, top[0], base)
        r1 = paired(d, k, VARIANTS[0][0], base)
        print("Without its clock reads %s is %s the %s, with "
              "them %s; in the BPF programs' own time: %s." % (
                  top[1], fmt_spread(r1), bl, fmt_spread(r0),
                  ", ".join("%s %s" % (w.split(" (")[0], fmt(p, "%+.1f ns"))
                            for w, _, p in parts)))
        print()


def main(argv):
    if len(argv) == 3 and argv[1] == "progs":
        return cmd_progs(int(argv[2]))
    if len(argv) == 4 and argv[1] == "point":
        return cmd_point(argv[2], argv[3])
    if len(argv) == 2 and argv[1] == "variants":
        print(" ".join(v for v, _, _ in VARIANTS))
        return 0
    if len(argv) == 3 and argv[1] == "report":
        return cmd_report(argv[2])
    if len(argv) == 3 and argv[1] == "paths":
        return cmd_paths(argv[2])
    if len(argv) == 4 and argv[1] == "offset":
        return cmd_offset(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
