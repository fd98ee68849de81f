#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Hot keys' benchmark (docs/KEYS.md; make keys-bench, part of make bench).

Three tables, one run, root and BPF:
  1. a function point's per-call cost, keyed beside unkeyed: bench-keys fn
     calls kb_fn (a nop5 site) back to back in four byte-identical copies,
     none (no probe), f=kb_fn, f=kb_fn:key=arg1, f=kb_fn:key=str2 (a
     32-byte string), all attached at once; every round runs each copy once,
     the order reversed every other round (A B C D, D C B A); a round's
     per-call ns is the median of its 1,024-call batches (each every key
     once: on a loaded host the mean is mostly the driver's preemptions;
     the means are kept in keys.raw.json, "fn_mean"); per-call ns with
     probes minus without, and the key's added ns, per round, then
     medians (targets: integer <= 100 ns, string <= 250 ns);
  2. a libsds guarded call, sds_should_downgrade_key(p, key, 8) beside
     sds_should_downgrade(p), a loader attached, in alternation inside one
     process; ratio keyed/unkeyed per round, median (target <= 1.5x);
  3. top-K: CALLS calls (default 3,000,000) of a keyed point whose keys are
     drawn Zipf(1.1) over 1,000,000 keys from a fixed seed, key_capacity
     the default 4,096; `sds-bpf stats --keys z --top 20 --json` against the
     generator's own counts (targets: the top 20 exact in rank, counts
     within 1 %).
Environment: BUILD (default build), KEYS_ROUNDS (21), KEYS_ITERS (300000),
KEYS_CALLS (3000000), BENCH_CPU (the CPU the drivers are pinned to, default
the last).  With BENCH_OUT set (make bench) its tables go to
BENCH_OUT/keys.md, the rounds to keys.raw.json.  Exits non-zero if a check
fails (a count, an attach), not if a target is missed.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))
import results  # noqa: E402
from bench import prog_ids  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
SDS = os.path.join(BUILD, "bin", "sds-bpf")
BIN = os.path.join(BUILD, "bench", "bench-keys")
ROUNDS = int(os.environ.get("KEYS_ROUNDS", "21"))
ITERS = int(os.environ.get("KEYS_ITERS", "300000"))
CALLS = int(os.environ.get("KEYS_CALLS", "3000000"))
CPU = os.environ.get("BENCH_CPU", str((os.cpu_count() or 1) - 1))
WARM = 5000
VARIANTS = (("none", None), ("plain", "f=kb_fn:site=nop5"),
            ("int", "f=kb_fn:key=arg1:site=nop5"),
            ("str", "f=kb_fn:key=str2:site=nop5"))


def die(msg):
    print("keys_bench: " + msg, file=sys.stderr)
    sys.exit(1)


class Bench:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sds-bench-keys.")
        # the copies next to the original, in case /tmp is noexec
        self.cp = tempfile.mkdtemp(prefix="keys-copy.",
                                   dir=os.path.dirname(BIN))
        self.env = dict(os.environ, SDS_RUN_DIR=os.path.join(self.tmp, "run"),
                        SDS_STATE_DIR=os.path.join(self.tmp, "state"))
        for d in ("run", "state"):
            os.makedirs(os.path.join(self.tmp, d))
        self.procs = []
        self.pid = {}

    def copy(self, name):
        path = os.path.join(self.cp, "kb-" + name)
        shutil.copy2(BIN, path)
        return path

    def attach(self, app_bin, args, sock):
        log = open(os.path.join(self.tmp, os.path.basename(app_bin) + ".log"),
                   "w")
        p = subprocess.Popen([SDS, "attach", "--max-overhead", "0"] + args,
                             stdout=log, stderr=subprocess.STDOUT,
                             env=self.env)
        self.procs.append(p)
        self.pid[os.path.basename(app_bin)] = p.pid
        path = os.path.join(self.env["SDS_RUN_DIR"], sock)
        for _ in range(200):
            if os.path.exists(path):
                return p
            if p.poll() is not None:
                break
            time.sleep(0.1)
        with open(log.name) as f:
            die("sds-bpf attach %s did not serve:\n%s" % (" ".join(args),
                                                        f.read()))

    def sds(self, *args):
        r = subprocess.run([SDS] + list(args), capture_output=True, text=True,
                           env=self.env)
        if r.returncode:
            die("sds-bpf %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def run(self, *args):
        r = subprocess.run(["taskset", "-c", CPU] + list(args),
                           capture_output=True, text=True, env=self.env)
        if r.returncode:
            die("%s failed: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.cp, ignore_errors=True)


def point_calls(stats_json, point):
    """A point's calls since attach in `stats --json` output."""
    doc = json.loads(stats_json)
    pts = doc.get("points", doc)
    if isinstance(pts, dict):
        pts = [dict(v, name=k) for k, v in pts.items()]
    for p in pts:
        if p.get("name") == point:
            return p.get("total", {}).get("visits")
    return None


STATS = "/proc/sys/kernel/bpf_stats_enabled"


def bpf_time(pid):
    """run_time_ns summed over loader @pid's programs (bpftool)."""
    ids = prog_ids(pid)
    out = subprocess.run(["bpftool", "prog", "show", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return sum(p.get("run_time_ns", 0) for p in json.loads(out or "[]")
               if p["id"] in ids)


def bpf_pass(b, bins, raw):
    """The BPF programs' own ns per call, keyed and not: a short second
    pass with kernel.bpf_stats_enabled=1 (off for the timing above: its
    clock reads are a cost of their own), alternating as above."""
    with open(STATS) as f:
        old = f.read().strip()
    per = {n: [] for n, spec in VARIANTS if spec}
    n_iters = max(ITERS // 3, 1000)
    try:
        with open(STATS, "w") as f:
            f.write("1")
        for r in range(max(ROUNDS // 3, 3)):
            order = list(per)
            if r & 1:
                order.reverse()
            for n in order:
                pid = b.pid["kb-" + n]
                t0 = bpf_time(pid)
                b.run(bins[n], "fn", str(n_iters))
                per[n].append((bpf_time(pid) - t0) / (n_iters + WARM))
    finally:
        with open(STATS, "w") as f:
            f.write(old)
    raw["bpf"] = per
    return per


def spread(v):
    return "%.1f–%.1f" % (min(v), max(v))


def fn_table(b, raw):
    bins = {}
    for name, spec in VARIANTS:
        bins[name] = b.copy(name)
        if spec:
            b.attach(bins[name], [bins[name], spec],
                     "default.kb-%s.sock" % name)
    ns = {n: [] for n, _ in VARIANTS}
    mean = {n: [] for n, _ in VARIANTS}
    for r in range(ROUNDS):
        order = [n for n, _ in VARIANTS]
        if r & 1:
            order.reverse()
        for n in order:
            f = dict(x.split("=", 1)
                     for x in b.run(bins[n], "fn", str(ITERS)).split())
            ns[n].append(float(f["batch_median"]))
            mean[n].append(float(f["ns"]))
    raw["fn"] = ns
    raw["fn_mean"] = mean
    bpf = bpf_pass(b, bins, raw)
    # every call counted by its point
    want = ROUNDS * (ITERS + WARM) + len(bpf["plain"]) * (
        max(ITERS // 3, 1000) + WARM)
    for n, spec in VARIANTS[1:]:
        got = point_calls(b.sds("stats", "--app", "kb-" + n, "--json"), "f")
        if got != want:
            die("point f of kb-%s counted %s calls, the driver made %d"
                % (n, got, want))
    probe = {n: [ns[n][i] - ns["none"][i] for i in range(ROUNDS)]
             for n in ("plain", "int", "str")}
    added = {n: [ns[n][i] - ns["plain"][i] for i in range(ROUNDS)]
             for n in ("int", "str")}
    med = statistics.median
    out = ["| point | ns per call | probe's ns (minus none) | key's added ns "
           "| ÷ unkeyed probe |", "|---|---|---|---|---|"]
    for n, spec in VARIANTS:
        cells = ["%s (%s)" % ("%.1f" % med(ns[n]), spread(ns[n]))]
        if n == "none":
            cells += ["—", "—", "—"]
        else:
            cells.append("%.1f (%s)" % (med(probe[n]), spread(probe[n])))
            if n == "plain":
                cells += ["—", "1.00×"]
            else:
                cells.append("%.1f (%s)" % (med(added[n]), spread(added[n])))
                cells.append("%.2f×" % (med(probe[n]) / med(probe["plain"])))
        out.append("| `%s` | %s |" % (spec.replace(":site=nop5", "")
                                      if spec else "none (no probe)",
                                      " | ".join(cells)))
    ti, ts = med(added["int"]), med(added["str"])
    out.append("")
    out.append("The BPF programs' own run time, ns per call "
               "(kernel.bpf_stats_enabled=1, run_time_ns of each loader's "
               "programs over %d-call runs, %d rounds, a separate pass):"
               % (max(ITERS // 3, 1000), len(bpf["plain"])))
    out.append("")
    out.append("| point | BPF ns per call | key's added BPF ns |")
    out.append("|---|---|---|")
    for n, spec in VARIANTS[1:]:
        add = ("—" if n == "plain" else "%.1f (%s)" % (
            med([bpf[n][i] - bpf["plain"][i] for i in range(len(bpf[n]))]),
            spread([bpf[n][i] - bpf["plain"][i]
                    for i in range(len(bpf[n]))])))
        out.append("| `%s` | %.1f (%s) | %s |" % (
            spec.replace(":site=nop5", ""), med(bpf[n]), spread(bpf[n]), add))
    out.append("")
    out.append("target integer key <= 100 ns added: %s (%.1f ns)"
               % ("met" if ti <= 100 else "NOT met", ti))
    out.append("target string key <= 250 ns added: %s (%.1f ns)"
               % ("met" if ts <= 250 else "NOT met", ts))
    return out, ti, ts


def guard_table(b, raw):
    gbin = os.path.join(b.cp, "bench-keys")
    shutil.copy2(BIN, gbin)
    b.attach(gbin, ["--app", "bench-keys", "--group", "bench", gbin],
             "bench.bench-keys.sock")
    iters = max(ITERS // 3, 1000)
    out = b.run(gbin, "guard", str(ROUNDS), str(iters))
    u, k = [], []
    for line in out.splitlines():
        f = dict(x.split("=") for x in line.split()[2:])
        u.append(float(f["unkeyed"]))
        k.append(float(f["keyed"]))
    if len(u) != ROUNDS:
        die("bench-keys guard printed %d rounds of %d" % (len(u), ROUNDS))
    want = ROUNDS * iters * 2 + 4000
    got = point_calls(b.sds("stats", "--group", "bench", "--app",
                            "bench-keys", "--json"), "g")
    if got != want:
        die("point g counted %s calls, the driver made %d" % (got, want))
    raw["guard"] = {"unkeyed": u, "keyed": k}
    ratio = [k[i] / u[i] for i in range(ROUNDS)]
    med = statistics.median
    r = med(ratio)
    return ["| guarded call (loader attached, passing) | ns per call |",
            "|---|---|",
            "| `sds_should_downgrade(p)` + finally | %.1f (%s) |"
            % (med(u), spread(u)),
            "| `sds_should_downgrade_key(p, key, 8)` + finally | %.1f (%s) |"
            % (med(k), spread(k)),
            "| keyed ÷ unkeyed | %.3f× (%.2f×–%.2f×) |"
            % (r, min(ratio), max(ratio)),
            "", "target keyed <= 1.5× unkeyed: %s (%.3f×)"
            % ("met" if r <= 1.5 else "NOT met", r)], r


def topk_table(b, raw):
    zbin = b.copy("zipf")
    b.attach(zbin, [zbin, "z=kb_fn:key=arg1:site=nop5"],
             "default.kb-zipf.sock")
    out = b.run(zbin, "zipf", str(CALLS), "42")
    truth = [tuple(int(x) for x in l.split()[1:]) for l in out.splitlines()
             if l.startswith("truth ")]
    js = b.sds("stats", "--app", "kb-zipf", "--keys", "z", "--top", "20",
               "--json")
    doc = json.loads(js)
    raw["topk"] = {"truth": truth, "loader": doc}
    keys = doc.get("top")
    if keys is None:
        die("stats --keys --json has no \"top\": %s" % js[:300])
    shown = []
    for k in keys:
        kk = k.get("key")
        try:
            kk = int(kk)
        except (TypeError, ValueError):
            pass
        shown.append((kk, k.get("calls")))
    out = ["| truth rank | key | truth calls | loader rank | loader calls "
           "| error |", "|---|---|---|---|---|---|"]
    exact, worst = 0, 0.0
    for rank, key, cnt in truth:
        lr = next((i + 1 for i, s in enumerate(shown) if s[0] == key), None)
        lc = shown[lr - 1][1] if lr else None
        err = abs(lc - cnt) / cnt * 100 if lc is not None else 100.0
        worst = max(worst, err)
        exact += lr == rank
        out.append("| %d | %d | %d | %s | %s | %.2f %% |"
                   % (rank, key, cnt, lr or "absent", lc, err))
    head = ("%d calls, Zipf(1.1) over 1,000,000 keys (seed 42), "
            "key_capacity 4,096: `sds-bpf stats --keys z --top 20 --json`"
            % CALLS)
    for f in ("capacity", "live", "inserted", "evicted", "lost"):
        if f in doc:
            head += "; %s %s" % (f, doc[f])
    ok = exact == len(truth) == 20 and worst <= 1
    return [head, ""] + out + [
        "", "target top 20 exact in rank, counts within 1 %%: %s (%d of 20 "
        "in rank, worst count error %.2f %%)"
        % ("met" if ok else "NOT met", exact, worst)], exact, worst


def main():
    if os.geteuid():
        die("needs root")
    for f in (SDS, BIN):
        if not os.access(f, os.X_OK):
            die("%s missing: run make bench-bins" % f)
    b = Bench()
    raw = {"rounds": ROUNDS, "iters": ITERS, "calls": CALLS}
    try:
        fn, _, _ = fn_table(b, raw)
        g, _ = guard_table(b, raw)
        tk, _, _ = topk_table(b, raw)
    finally:
        b.close()
    text = "\n".join(
        ["Hot keys (docs/KEYS.md), `tools/bench/keys/keys_bench.py`; "
         "%d rounds, medians, (lo–hi) the rounds' spread; driver pinned to "
         "CPU %s." % (ROUNDS, CPU), "",
         "A function point, kb_fn on a nop5 site, %d calls a round (a "
         "round's ns: the median of its 1,024-call batches):" % ITERS,
         ""] + fn + ["", "A libsds guarded call:", ""] + g +
        ["", "Top keys:", ""] + tk)
    print(text)
    results.save("keys", text, raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
