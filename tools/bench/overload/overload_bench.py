#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The overload benchmark of adaptive concurrency (issue 33; `make
overload-bench`, root: it attaches).

One `sds-bpf attach` and one tests/targets/overload: a guarded service
whose dependency serves 8 calls at once, 5 ms each, a FIFO queue behind,
offered an open-loop load by 256 threads (enough that with no limit the
calls in flight queue past the deadline: 256 / 1,600 a second = 160 ms).
Between configurations the load stops and the strategies file is
reloaded (SIGHUP): no limit ({}), each static concurrent_threshold N
(1..32), each adaptive algorithm ({"adaptive_limit": A, "adaptive_min":
1, "adaptive_max": 64}, nothing tuned).

1. At offered loads of 0.5, 1, 1.5, 2, 2.5 and 3 x the dependency's
   capacity (1,600 calls/s): goodput (answers within 100 ms of their
   scheduled start, a second) and the p99 latency of the calls let
   through, for no limit, the best static limit (the lowest p99 among
   the N whose goodput is within 1 % of the most any N got) and each
   algorithm (settled, then measured).  Target: adaptive goodput >= 95 %
   of the best static's, p99 <= 1.5 x its, at every load.
2. The slowdown: at 2 x, each algorithm settled, the dependency's calls
   go from 5 to 10 ms; goodput and p99 second by second, against the
   best static limit at 10 ms (searched again): the seconds until both
   stay within the bounds above.

Prints Markdown tables on stdout (progress on stderr); with BENCH_OUT
set, the per-run figures go to BENCH_OUT/overload.raw.json.  A benchmark:
a missed target is printed, only a wrong count (a call inside the
dependency beyond a static limit, a reload not taken) fails the run.

Durations, loads and values (environment):
  OVERLOAD_BENCH_QUICK=1   a quick run: the defaults in brackets
  OVERLOAD_LOADS           loads, x capacity (0.5,1,1.5,2,2.5,3 [0.5,2,3])
  OVERLOAD_STATIC          static limits tried (1-32 [2,4,6,8,10,12,16,24,32])
  OVERLOAD_ALGOS           algorithms (gradient2,vegas,aimd)
  OVERLOAD_STATIC_WARM_S   a static run's warm-up, s (0.4 [0.3])
  OVERLOAD_STATIC_S        ... measured, s (1.2 [0.7])
  OVERLOAD_SETTLE_S        an adaptive run's settling, s (10 [5])
  OVERLOAD_MEASURE_S       ... measured, s (3 [2])
  OVERLOAD_SLOW_S          seconds watched after the slowdown (15 [8]; 0: none)
  OVERLOAD_BENCH_TRACE=1   diagnostics on stderr: each adaptive limit polled
  OVERLOAD_BENCH_RELOAD    when an adaptive strategy comes in: "idle" (the
                           default: with the load stopped, as every other
                           configuration; it re-measures the no-load latency
                           with no calls) or "loaded" (0.5 s into the load,
                           under the configuration before: a diagnostic)

Python 3 standard library only.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import sdstest  # noqa: E402
import overload  # noqa: E402
from sdstest import BUILD, SDS  # noqa: E402

OVERLOAD = os.path.join(BUILD, "test", "targets", "overload")
APP, POINT = "overload", "dep"
CAPACITY, SERVICE_MS, SLOW_MS = 8, 5, 10
BASE_RATE = CAPACITY * 1000 // SERVICE_MS     # the capacity: 1,600 calls/s
THREADS = 256                                 # overload.c's most
DEADLINE_MS = 100
CEILING = 64
GOOD_FRAC, P99_FRAC = 0.95, 1.5               # the targets
BACK_S = 10                                   # ... after the slowdown
BEST_WITHIN = 0.99                            # "best static": see pick_best
P99_CAP_US = 409600                           # overload.c's histogram's top


def env_list(name, quick, full, conv):
    text = os.environ.get(name) or (quick if QUICK else full)
    out = []
    for part in text.split(","):
        if "-" in part and conv is int:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part.strip():
            out.append(conv(part))
    return out


def env_num(name, quick, full):
    return float(os.environ.get(name) or (quick if QUICK else full))


QUICK = os.environ.get("OVERLOAD_BENCH_QUICK") == "1"
TRACE = os.environ.get("OVERLOAD_BENCH_TRACE") == "1"
LOADS = env_list("OVERLOAD_LOADS", "0.5,2,3", "0.5,1,1.5,2,2.5,3", float)
STATIC = env_list("OVERLOAD_STATIC", "2,4,6,8,10,12,16,24,32", "1-32", int)
ALGOS = env_list("OVERLOAD_ALGOS", "gradient2,vegas,aimd",
                 "gradient2,vegas,aimd", str.strip)
STATIC_WARM_S = env_num("OVERLOAD_STATIC_WARM_S", 0.3, 0.4)
STATIC_S = env_num("OVERLOAD_STATIC_S", 0.7, 1.2)
SETTLE_S = env_num("OVERLOAD_SETTLE_S", 5, 10)
MEASURE_S = env_num("OVERLOAD_MEASURE_S", 2, 3)
SLOW_S = int(env_num("OVERLOAD_SLOW_S", 8, 15))
RELOAD = os.environ.get("OVERLOAD_BENCH_RELOAD") or "idle"
LOADED_AFTER_S = 0.5


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, ctx):
        self.ctx = ctx
        self.version = 1
        self.spath = os.path.join(ctx.tmp, "strategies.json")
        self.current = None
        self.write({})
        path = sdstest.stage(OVERLOAD, ctx.tmp)
        self.loader = sdstest.AttachProcess(
            ctx, ["--app", APP, "--strategies", self.spath, path], APP)
        self.svc = overload.Service(ctx, path, APP, POINT)
        self.svc.cmd("capacity %d" % CAPACITY)
        self.svc.cmd("deadline_ms %d" % DEADLINE_MS)

    def write(self, strategy):
        with open(self.spath + ".tmp", "w") as f:
            json.dump({"version": self.version,
                       "points": {POINT: strategy}}, f)
        os.replace(self.spath + ".tmp", self.spath)
        self.current = strategy

    def stats(self):
        r = sdstest.run_group([SDS, "stats", "--app", APP, "--json"],
                              self.ctx.env, self.ctx.tmp, self.ctx.others, 10)
        return sdstest.json_out(r, "stats --app %s --json" % APP)

    def configure(self, strategy, stop=True):
        """Stop the load (@stop) and put @strategy in force (a SIGHUP
        reload, waited for); the same strategy twice goes through {} so
        that an adaptive limit starts afresh (only a changed strategy
        resets)."""
        if stop:
            self.svc.cmd("stop")
        if strategy == self.current and strategy:
            self.configure({}, stop)
        self.version += 1
        self.write(strategy)
        os.kill(self.loader.pid, signal.SIGHUP)
        end = time.monotonic() + 10
        while True:
            s = self.stats()
            if s.get("strategies_version") == self.version:
                break
            sdstest.check(time.monotonic() < end,
                          "the reload to version %d was not taken: stats "
                          "show %r; loader stderr: %s"
                          % (self.version, s.get("strategies_version"),
                             self.loader.stderr()[-500:]))
            time.sleep(0.05)
        ad = sdstest.get_point(s, POINT, required=False) or {}
        sdstest.check(("adaptive" in ad) == ("adaptive_limit" in strategy),
                      "after the reload to %r the point shows %r"
                      % (strategy, ad.get("adaptive")))

    def start(self, strategy, rate):
        """The load at @rate under @strategy: put in force before the load
        starts, or (an adaptive one, OVERLOAD_BENCH_RELOAD=loaded) into
        the running load."""
        if RELOAD == "loaded" and "adaptive_limit" in strategy:
            self.svc.cmd("stop")
            self.svc.cmd("load %d %d" % (rate, THREADS))
            time.sleep(LOADED_AFTER_S)
            self.configure(strategy, stop=False)
        else:
            self.configure(strategy)
            self.svc.cmd("load %d %d" % (rate, THREADS))

    def limit(self):
        ad = sdstest.get_point(self.stats(), POINT).get("adaptive") or {}
        if TRACE and ad:
            progress("    limit %d latency %.2f ms no-load %.2f ms%s"
                     % (ad["limit"], ad["latency_ns"] / 1e6,
                        ad["no_load_ns"] / 1e6,
                        " re-measuring" if ad.get("remeasuring") else ""))
        return ad.get("limit")

    def run(self, strategy, rate, warm, measure, polls=0):
        """@strategy in force, the load at @rate: @warm s discarded, then
        the report of @measure s (and the adaptive limit's mean over
        @polls polls in it)."""
        self.start(strategy, rate)
        if TRACE and polls:
            t_end = time.monotonic() + warm
            while time.monotonic() < t_end - 0.5:
                self.limit()
                time.sleep(0.5)
            time.sleep(max(0, t_end - time.monotonic()))
        else:
            time.sleep(warm)
        self.svc.report()
        limits = []
        t0 = time.monotonic()
        for i in range(polls):
            at = t0 + measure * (i + 0.5) / polls
            time.sleep(max(0, at - time.monotonic()))
            limits.append(self.limit())
        time.sleep(max(0, t0 + measure - time.monotonic()))
        r = self.svc.report()
        self.svc.cmd("stop")
        if "concurrent_threshold" in strategy:
            sdstest.check(r["inside"] <= strategy["concurrent_threshold"],
                          "%d calls inside the dependency at once under "
                          "concurrent_threshold %d"
                          % (r["inside"], strategy["concurrent_threshold"]))
        if "adaptive_limit" in strategy:
            sdstest.check(r["inside"] <= CEILING,
                          "%d calls inside the dependency, above the ceiling "
                          "%d" % (r["inside"], CEILING))
        limits = [l for l in limits if l is not None]
        if limits:
            r["limit"] = sum(limits) / len(limits)
        return r

    def static_search(self, rate):
        out = {}
        for n in STATIC:
            out[n] = self.run({"concurrent_threshold": n}, rate,
                              STATIC_WARM_S, STATIC_S)
        return out

    def end(self):
        self.svc.cmd("stop")
        self.svc.p.stdin.close()
        self.svc.p.wait(10)
        self.loader.end()


def adaptive(algo):
    return {"adaptive_limit": algo, "adaptive_min": 1, "adaptive_max": CEILING}


def pick_best(search):
    """The best static limit of a search ({N: report}): of the N whose
    goodput is within 1 % of the most any N got (the goodputs of the N
    above the capacity differ by noise), the one with the lowest p99,
    the smallest N of equals -- what an operator trying every N keeps."""
    most = max(r["goodput"] for r in search.values())
    near = [n for n, r in search.items() if r["goodput"] >= BEST_WITHIN * most]
    return min(near, key=lambda n: (search[n]["p99_us"], n))


def ms(us):
    if us >= P99_CAP_US:
        return "> %.1f" % (P99_CAP_US / 1000)
    return "%.1f" % (us / 1000)


def meets(r, best):
    return (r["goodput"] >= GOOD_FRAC * best["goodput"] and
            r["p99_us"] <= P99_FRAC * best["p99_us"])


def miss_text(r, best):
    """How far @r is from the targets against @best ('' if met)."""
    out = []
    g = r["goodput"] / max(best["goodput"], 1e-9)
    p = r["p99_us"] / max(best["p99_us"], 1)
    if g < GOOD_FRAC:
        out.append("goodput %.1f %% of the best static's (want >= %d %%)"
                   % (100 * g, 100 * GOOD_FRAC))
    if p > P99_FRAC:
        out.append("p99 %.2f× its (want <= %.1f×)" % (p, P99_FRAC))
    return "; ".join(out)


def row(name, r, best):
    g = r["goodput"] / max(best["goodput"], 1e-9)
    p = r["p99_us"] / max(best["p99_us"], 1)
    return ("| %s | %.0f | %.0f | %s | %.3f | %.2f× |"
            % (name, r["made"], r["goodput"], ms(r["p99_us"]), g, p))


def slowdown(b, algo, rate):
    """@algo settled at @rate, then the dependency 2x slower: a report a
    second for SLOW_S s (and the limit polled each second)."""
    b.svc.cmd("service_ms %d" % SERVICE_MS)
    b.start(adaptive(algo), rate)
    time.sleep(SETTLE_S)
    b.svc.report()
    before = b.limit()
    b.svc.cmd("service_ms %d" % SLOW_MS)
    t0 = time.monotonic()
    secs = []
    for i in range(1, SLOW_S + 1):
        time.sleep(max(0, t0 + i - time.monotonic()))
        r = b.svc.report()
        r["limit"] = b.limit()
        secs.append(r)
    b.svc.cmd("stop")
    b.svc.cmd("service_ms %d" % SERVICE_MS)
    return before, secs


def back_within(secs, best):
    """The seconds after the slowdown from which every 1-s report meets
    the targets against @best, or None."""
    at = None
    for i, r in enumerate(secs):
        if meets(r, best):
            if at is None:
                at = i + 1
        else:
            at = None
    return at


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].strip(),
        epilog=__doc__[__doc__.index("Durations"):],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    err = sdstest.root_error()
    if err:
        print(err, file=sys.stderr)
        return 1
    for f in (SDS, OVERLOAD):
        if not os.access(f, os.X_OK):
            print("overload_bench: %s not built (make all test-bins)" % f,
                  file=sys.stderr)
            return 1
    if RELOAD not in ("idle", "loaded"):
        print("overload_bench: OVERLOAD_BENCH_RELOAD must be idle or loaded",
              file=sys.stderr)
        return 2
    if any(a not in ("gradient2", "vegas", "aimd") for a in ALGOS) or \
            not LOADS or not STATIC or any(n < 1 for n in STATIC):
        print("overload_bench: bad OVERLOAD_ALGOS, OVERLOAD_LOADS or "
              "OVERLOAD_STATIC", file=sys.stderr)
        return 2
    t_start = time.monotonic()
    ctx = sdstest.ProcDir("overload-bench", "sds-overload-bench-")
    raw = {"capacity": CAPACITY, "service_ms": SERVICE_MS, "threads": THREADS,
           "deadline_ms": DEADLINE_MS, "loads": {}, "slowdown": {}}
    out = []
    try:
        b = Bench(ctx)
        b.svc.cmd("service_ms %d" % SERVICE_MS)
        per_load = []
        for x in LOADS:
            rate = int(round(x * BASE_RATE))
            progress("load %.1f× (%d/s): no limit, static %d..%d, %s"
                     % (x, rate, min(STATIC), max(STATIC), ", ".join(ALGOS)))
            none = b.run({}, rate, STATIC_WARM_S, STATIC_S)
            search = b.static_search(rate)
            best_n = pick_best(search)
            algos = {}
            for a in ALGOS:
                algos[a] = b.run(adaptive(a), rate, SETTLE_S, MEASURE_S,
                                 polls=3)
                progress("  %s: goodput %.0f/s p99 %s ms limit %.1f (best "
                         "static %d: %.0f/s %s ms)"
                         % (a, algos[a]["goodput"], ms(algos[a]["p99_us"]),
                            algos[a].get("limit", 0), best_n,
                            search[best_n]["goodput"],
                            ms(search[best_n]["p99_us"])))
            per_load.append((x, rate, none, search, best_n, algos))
            raw["loads"][str(x)] = {"rate": rate, "none": none,
                                    "static": search, "best_static": best_n,
                                    "adaptive": algos}

        out.append("Goodput (answers within %d ms of their scheduled start, "
                   "a second) and p99 of the calls let through, ms; a "
                   "dependency of %d at once, %d ms a call (capacity %d/s), "
                   "%d threads of open-loop load; static runs %.1f s after "
                   "%.1f s, adaptive %.0f s after settling %.0f s (limit: "
                   "the mean of 3 polls); %s. Target: adaptive goodput "
                   "≥ %d %% of the best static limit's, p99 ≤ %.1f× its.\n"
                   % (DEADLINE_MS, CAPACITY, SERVICE_MS, BASE_RATE, THREADS,
                      STATIC_S, STATIC_WARM_S, MEASURE_S, SETTLE_S,
                      "each strategy reloaded with the load stopped"
                      if RELOAD == "idle" else
                      "each adaptive strategy reloaded %.1f s into the "
                      "load (OVERLOAD_BENCH_RELOAD=loaded)" % LOADED_AFTER_S,
                      100 * GOOD_FRAC, P99_FRAC))
        misses = {a: [] for a in ALGOS}
        for x, rate, none, search, best_n, algos in per_load:
            best = search[best_n]
            out.append("### %.1f× capacity: %d calls/s offered\n" % (x, rate))
            out.append("| config | made/s | goodput/s | p99 ms | goodput ÷ "
                       "best static | p99 ÷ best static | target |")
            out.append("|---|---:|---:|---:|---:|---:|:-:|")
            out.append(row("no limit", none, best) + " |")
            out.append(row("best static: concurrent_threshold %d" % best_n,
                           best, best) + " |")
            for a in ALGOS:
                r = algos[a]
                ok = meets(r, best)
                if not ok:
                    misses[a].append("%.1f×: %s" % (x, miss_text(r, best)))
                out.append(row("%s (limit %.1f)" % (a, r.get("limit", 0)),
                               r, best) + " %s |" % ("✓" if ok else "✗"))
            out.append("")
        over = [(x, none) for x, _, none, _, _, _ in per_load if x >= 1.5]
        if over:
            out.append("No limit at 1.5× and more: goodput %s/s of a "
                       "capacity of %d/s (the calls in flight queue past "
                       "the deadline).\n" % (", ".join(
                           "%.0f" % n["goodput"] for _, n in over), BASE_RATE))
        for a in ALGOS:
            if misses[a]:
                out.append("target %s: missed at %d of %d loads: %s" %
                           (a, len(misses[a]), len(per_load),
                            "; ".join(misses[a])))
            else:
                out.append("target %s: met at every load (%d)" %
                           (a, len(per_load)))
        out.append("")

        # The static search itself, one column per load.
        out.append("Static limits tried (goodput/s / p99 ms; **best**):\n")
        out.append("| N | " + " | ".join("%.1f×" % p[0] for p in per_load)
                   + " |")
        out.append("|---:|" + "---:|" * len(per_load))
        for n in STATIC:
            cells = []
            for _, _, _, search, best_n, _ in per_load:
                r = search[n]
                c = "%.0f / %s" % (r["goodput"], ms(r["p99_us"]))
                cells.append("**%s**" % c if n == best_n else c)
            out.append("| %d | %s |" % (n, " | ".join(cells)))
        out.append("")

        # The slowdown at 2x (OVERLOAD_SLOW_S=0: none).
        if SLOW_S > 0:
            rate = 2 * BASE_RATE
            progress("slowdown at 2× (%d/s): %s, then static at %d ms"
                     % (rate, ", ".join(ALGOS), SLOW_MS))
            slows = {a: slowdown(b, a, rate) for a in ALGOS}
            b.svc.cmd("service_ms %d" % SLOW_MS)
            search = b.static_search(rate)
            b.svc.cmd("service_ms %d" % SERVICE_MS)
            best_n = pick_best(search)
            best = search[best_n]
            raw["slowdown"] = {"rate": rate, "static": search,
                               "best_static": best_n,
                               "adaptive": {a: {"limit_before": s[0],
                                                "seconds": s[1]}
                                            for a, s in slows.items()}}
            out.append("### The dependency slows 2× (%d → %d ms a call) at "
                       "2× (%d calls/s offered)\n"
                       % (SERVICE_MS, SLOW_MS, rate))
            out.append("Best static limit at %d ms (%s tried): "
                       "concurrent_threshold %d, goodput %.0f/s, p99 %s ms. Each algorithm settled "
                       "%.0f s at %d ms, then goodput/s, p99 ms and the limit, "
                       "second by second after the slowdown:\n"
                       % (SLOW_MS, "1..32" if STATIC == list(range(1, 33))
                          else ",".join(map(str, STATIC)), best_n,
                          best["goodput"], ms(best["p99_us"]), SETTLE_S,
                          SERVICE_MS))
            out.append("| s | " + " | ".join(ALGOS) + " |")
            out.append("|---:|" + ":-:|" * len(ALGOS))
            for i in range(SLOW_S):
                cells = []
                for a in ALGOS:
                    r = slows[a][1][i]
                    cells.append("%.0f / %s / %s%s" % (
                        r["goodput"], ms(r["p99_us"]),
                        r["limit"] if r["limit"] is not None else "?",
                        " ✓" if meets(r, best) else ""))
                out.append("| %d | %s |" % (i + 1, " | ".join(cells)))
            out.append("")
            for a in ALGOS:
                at = back_within(slows[a][1], best)
                out.append("back within the bounds, %s (limit %s before): "
                           "%s; target <= %d s: %s"
                           % (a, slows[a][0], "%d s" % at if at else
                              "not within %d s" % SLOW_S, BACK_S,
                              "met" if at and at <= BACK_S else "missed"))
            out.append("")
        out.append("run took %.0f s" % (time.monotonic() - t_start))
        b.end()
    finally:
        ctx.cleanup()
    text = "\n".join(out)
    print(text)
    d = os.environ.get("BENCH_OUT")
    if d:
        with open(os.path.join(d, "overload.raw.json"), "w") as f:
            json.dump(raw, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
