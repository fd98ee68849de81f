#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Run the suites of tests/suites.py in their lanes, side by side, and print
one table: suite, lane, tests passed / failed / skipped, seconds.

    python3 tests/lanes.py [--only SUITE,...] [--lane LANE,...] [--json]
    python3 tests/lanes.py --inventory [--json]
    python3 tests/lanes.py --table        (the lanes and their suites)

`make test` runs it after `make test-bins` built everything once: no
suite re-enters make.  Each lane runs its suites one after another, every
one to its end, whatever the others did; the lanes run at once.  A suite
fails when a command exits non-zero, when a test failed, when it ran no
test, or when it ran fewer tests than it lists (`--inventory`, read
before the lanes start), and when it outlives twice its budget (then its
process group is killed).  The exit status is 1 when any suite failed,
2 for bad arguments.

Each suite's output goes to BUILD/test/lanes/SUITE.log (BUILD from the
environment, default "build"); the table, and the FAIL lines of each
failed suite, to standard output; BUILD/test/lanes/summary.json holds the
table as JSON.

What every suite gets in its environment (docs/TESTING.md "Lanes"):
SDS_HB_OFFSET_MS=2000 (the heartbeat offset, the same on every machine),
GOCACHE under BUILD (one Go build cache for all), and, when
tests/lib/pgtest.py can start one, the one PostgreSQL server of the run.

Python 3 standard library only.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lib"))
import suites  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
LOGS = os.path.join(BUILD, "test", "lanes")

# sdstest.Suite's last line, the one report of every Python suite.
RE_SUITE = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")
RE_SKIP = re.compile(r"^SKIP \S+")
RE_NAME = re.compile(r"^[A-Za-z_]\w*$")
RE_CMOCKA = re.compile(r"^\[\s*(PASSED|FAILED|SKIPPED)\s*\] (\d+) test")
RE_CMOCKA_TEST = re.compile(r"\bcmocka_unit_test\w*\s*\(")


class Result:
    def __init__(self, suite):
        self.suite = suite
        self.passed = self.failed = self.skipped = 0
        self.seconds = 0.0
        self.why = []           # what failed it, beside failed tests
        self.ran = False

    @property
    def total(self):
        return self.passed + self.failed + self.skipped

    @property
    def ok(self):
        return self.ran and not self.why and not self.failed and self.total > 0

    def row(self):
        return {"suite": self.suite.name, "lane": self.suite.lane,
                "passed": self.passed, "failed": self.failed,
                "skipped": self.skipped, "seconds": round(self.seconds, 1),
                "ok": self.ok, "why": self.why}


def count_output(kind, text, rc, res):
    """Add what one command printed to @res, by the suite's @kind."""
    lines = text.splitlines()
    if kind == "exit":
        if rc == 0:
            res.passed += 1
        else:
            res.failed += 1
        return
    if kind == "cmocka":
        seen = {"PASSED": 0, "FAILED": 0, "SKIPPED": 0}
        for ln in lines:
            m = RE_CMOCKA.match(ln)
            if m:
                seen[m.group(1)] += int(m.group(2))
        res.passed += seen["PASSED"]
        res.skipped += seen["SKIPPED"]
        # A binary killed before its summary (ASan, a timeout) is one
        # failed test at least.
        res.failed += seen["FAILED"] or (1 if rc else 0)
        return
    last = None
    for ln in lines:
        m = RE_SUITE.match(ln)
        if m:
            last = m
    if last is None:
        if rc == 0:
            return          # a preparing command (mkroot.sh): no tests
        res.why.append("no result line (exit %d)" % rc)
        return
    res.passed += int(last.group(1))
    res.failed += int(last.group(2))
    res.skipped += int(last.group(3))


def suite_env(s, base):
    env = dict(base)
    for k, v in s.env.items():
        env[k] = v.replace("{build}", BUILD)
    return env


def listing(s, env):
    """How many tests @s lists (None: it could not say, with why)."""
    if isinstance(s.listing, int):
        return s.listing, None
    if s.listing == "cmocka":
        n = 0
        for src in suites.CMOCKA_SOURCES[s.name]:
            with open(src) as f:
                n += len(RE_CMOCKA_TEST.findall(f.read()))
        return n, None
    if s.listing == "exit":
        return 1, None
    cmd = [c for c in s.argv(BUILD) if c[0] == "python3"][-1]
    try:
        p = subprocess.run(cmd + ["--list"], cwd=ROOT, env=suite_env(s, env),
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "--list timed out"
    if p.returncode:
        return None, "--list exit %d: %s" % (p.returncode,
                                             (p.stderr.strip().splitlines()
                                              or [""])[-1])
    # A test's name a line, and the SKIP lines of tests that cannot run
    # here (counted as skipped when it runs); NOTEs and the like are not.
    return len([ln for ln in p.stdout.splitlines()
                if RE_NAME.match(ln) or RE_SKIP.match(ln)]), None


def unassigned():
    """Runners and cmocka folders under tests/ that no suite runs."""
    run_by = set()
    for s in suites.SUITES:
        for c in s.argv(BUILD):
            run_by.update(a for a in c if a.endswith(".py"))
    missing = []
    for d in sorted(os.listdir(HERE)):
        for runner in ("run.py", "fn_run.py"):
            p = "tests/%s/%s" % (d, runner)
            if os.path.exists(os.path.join(ROOT, p)) and p not in run_by:
                missing.append(p)
    for name in ("unit", "libsds", "admin"):
        cm = "tests/%s" % name
        if suites.cmocka_sources(cm) and not any(
                s.count == "cmocka" and any(cm + "/" in src for src in
                                            suites.CMOCKA_SOURCES.get(s.name, []))
                for s in suites.SUITES):
            missing.append(cm + "/test_*.c")
    return missing


class Runner:
    def __init__(self, chosen, env, listed):
        self.chosen = chosen
        self.env = env
        self.listed = listed
        self.results = {}
        self.lock = threading.Lock()
        self.procs = set()
        self.stopping = False

    def say(self, text):
        with self.lock:
            print("[%s] %s" % (time.strftime("%H:%M:%S"), text), flush=True)

    def run_cmd(self, s, cmd, env, log, deadline):
        if s.nice:
            cmd = ["nice", "-n", "19", "ionice", "-c3"] + cmd
        log.write("== %s\n" % " ".join(cmd))
        log.flush()
        out_path = log.name + ".part"
        with open(out_path, "w") as out:
            p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out,
                                 stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL,
                                 start_new_session=True)
            with self.lock:
                self.procs.add(p)
            killed = False
            while True:
                try:
                    rc = p.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    if (time.monotonic() > deadline or self.stopping) \
                            and not killed:
                        killed = True
                        try:
                            os.killpg(p.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
            # Whatever the runner left in its group goes with it.
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            with self.lock:
                self.procs.discard(p)
        with open(out_path) as f:
            text = f.read()
        os.unlink(out_path)
        log.write(text)
        log.write("== exit %d\n" % rc)
        log.flush()
        return rc, text, killed

    def run_suite(self, s):
        res = Result(s)
        res.ran = True
        env = suite_env(s, self.env)
        t0 = time.monotonic()
        deadline = t0 + 2 * s.budget
        with open(os.path.join(LOGS, s.name + ".log"), "w") as log:
            for cmd in s.argv(BUILD):
                rc, text, killed = self.run_cmd(s, cmd, env, log, deadline)
                count_output(s.count, text, rc, res)
                if killed:
                    res.why.append("killed after %d s (twice its budget)"
                                   % (2 * s.budget) if not self.stopping
                                   else "stopped")
                    break
                if rc:
                    res.why.append("%s exit %d" % (os.path.basename(cmd[-1]
                                   if cmd[0] != "python3" else cmd[1]), rc))
        res.seconds = time.monotonic() - t0
        want = self.listed.get(s.name)
        if want is not None and res.total < want and not res.why:
            res.why.append("ran %d of the %d tests it lists" % (res.total, want))
        if res.total == 0 and not res.why:
            res.why.append("ran no test")
        with self.lock:
            self.results[s.name] = res
        note = ""
        if res.seconds > 1.25 * s.budget:
            note = " (over 1.25x its budget of %d s)" % s.budget
        self.say("%s %s: %d passed, %d failed, %d skipped, %.0f s%s%s"
                 % ("PASS" if res.ok else "FAIL", s.name, res.passed,
                    res.failed, res.skipped, res.seconds, note,
                    "" if not res.why else " [%s]" % "; ".join(res.why)))

    def lane(self, name):
        for s in self.chosen:
            if s.lane == name and not self.stopping:
                self.run_suite(s)

    def run(self):
        lanes = [n for n in suites.LANES if any(s.lane == n for s in self.chosen)]
        threads = [threading.Thread(target=self.lane, args=(n,), name=n)
                   for n in lanes]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)

    def stop(self, *_):
        self.stopping = True
        with self.lock:
            for p in list(self.procs):
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Processes a suite started in sessions of their own (loaders,
    admins, targets) come to this process when the suite's runner dies
    (killed at twice its budget, or the run stopped), instead of to init,
    so that reap_orphans() can end them: a loader left running posts to
    ports other suites' servers get later."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(known):
    """End every child of this process but @known's, until none is left
    (each one's own children come to us in turn): SIGTERM first, so that a
    loader detaches and takes its pins with it, SIGKILL 5 s later; their
    count."""
    me, n = os.getpid(), 0
    sig, until = signal.SIGTERM, time.monotonic() + 5
    for _ in range(100):
        if time.monotonic() > until:
            sig = signal.SIGKILL
        kids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) in known:
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if int(ppid) != me:
                continue
            if state == "Z":        # exited already: only reaped
                try:
                    os.waitpid(int(pid), os.WNOHANG)
                except ChildProcessError:
                    pass
                continue
            kids.append(int(pid))
        if not kids:
            break
        for pid in kids:
            try:
                os.kill(pid, sig)
                n += sig == signal.SIGKILL or 0
            except ProcessLookupError:
                pass
        time.sleep(0.1)
        for pid in kids:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid and sig == signal.SIGTERM:
                    n += 1
            except ChildProcessError:
                pass
    return n


def failure_lines(name, limit=12):
    try:
        with open(os.path.join(LOGS, name + ".log")) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    fails = [ln for ln in lines if ln.startswith("FAIL") or "[  FAILED  ]" in ln
             or "ERROR: AddressSanitizer" in ln or "runtime error:" in ln]
    return (fails or lines[-limit:])[:limit]


def print_table(rows, total_s):
    w = max(len(r["suite"]) for r in rows)
    print("\n%-*s  %-6s %7s %7s %7s %8s" % (w, "suite", "lane", "passed",
                                             "failed", "skipped", "seconds"))
    for r in rows:
        print("%-*s  %-6s %7d %7d %7d %8.0f  %s" % (
            w, r["suite"], r["lane"], r["passed"], r["failed"], r["skipped"],
            r["seconds"], "ok" if r["ok"] else "FAIL " + "; ".join(r["why"])))
    tp = sum(r["passed"] for r in rows)
    tf = sum(r["failed"] for r in rows)
    ts = sum(r["skipped"] for r in rows)
    print("%-*s  %-6s %7d %7d %7d %8.0f" % (w, "all", "", tp, tf, ts, total_s))


def shared_services(env):
    """Start what the run shares (one PostgreSQL); returns the stoppers."""
    stops = []
    try:
        import pgtest
    except ImportError:
        return stops
    start = getattr(pgtest, "start_shared", None)
    if start is None:
        return stops
    extra, stop = start()
    env.update(extra)
    stops.append(stop)
    return stops


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="tests/lanes.py",
                                 description="Run the test suites in lanes.")
    ap.add_argument("--only", help="comma-separated suite names")
    ap.add_argument("--lane", help="comma-separated lane names")
    ap.add_argument("--inventory", action="store_true",
                    help="list the suites and their test counts; run nothing")
    ap.add_argument("--table", action="store_true",
                    help="print the lanes and their suites; run nothing")
    ap.add_argument("--json", action="store_true", help="JSON output")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    table = suites.by_name()
    chosen = list(suites.SUITES)
    if args.only:
        names = args.only.split(",")
        bad = [n for n in names if n not in table]
        if bad:
            print("tests/lanes.py: no suite %s (tests/lanes.py --table lists them)"
                  % ", ".join(bad), file=sys.stderr)
            return 2
        chosen = [s for s in chosen if s.name in names]
    if args.lane:
        names = args.lane.split(",")
        bad = [n for n in names if n not in suites.LANES]
        if bad:
            print("tests/lanes.py: no lane %s (lanes: %s)"
                  % (", ".join(bad), ", ".join(suites.LANES)), file=sys.stderr)
            return 2
        chosen = [s for s in chosen if s.lane in names]
    if args.table:
        for lane in suites.LANES:
            print("%-6s %s" % (lane, " ".join(s.name for s in suites.SUITES
                                              if s.lane == lane)))
        return 0

    env = dict(os.environ, BUILD=BUILD,
               GOCACHE=os.path.abspath(os.path.join(BUILD, "gocache")),
               PYTHONUNBUFFERED="1")
    env.setdefault("SDS_HB_OFFSET_MS", "2000")
    env.pop("SDS_TEST_SHARD", None)

    t0 = time.monotonic()
    listed, errs = {}, []
    for s in chosen:
        n, why = listing(s, env)
        if why:
            errs.append("%s: %s" % (s.name, why))
        listed[s.name] = n
    missing = unassigned()
    if args.inventory:
        if args.json:
            print(json.dumps({"suites": [{"suite": s.name, "lane": s.lane,
                                          "tests": listed[s.name]}
                                         for s in chosen],
                              "unassigned": missing, "errors": errs}, indent=1))
        else:
            for s in chosen:
                print("%-14s %-6s %s" % (s.name, s.lane,
                                         listed[s.name] if listed[s.name] is not None
                                         else "?"))
            print("%-14s %-6s %d" % ("all", "", sum(n or 0 for n in listed.values())))
            for m in missing:
                print("tests/lanes.py: %s is in no suite of tests/suites.py" % m,
                      file=sys.stderr)
            for e in errs:
                print("tests/lanes.py: %s" % e, file=sys.stderr)
        return 1 if missing or errs else 0

    os.makedirs(LOGS, exist_ok=True)
    subreaper = become_subreaper()
    stops = shared_services(env)
    runner = Runner(chosen, env, listed)
    signal.signal(signal.SIGTERM, runner.stop)
    signal.signal(signal.SIGHUP, runner.stop)
    runner.say("%d suites in %d lanes; logs in %s/"
               % (len(chosen), len({s.lane for s in chosen}), LOGS))
    try:
        runner.run()
    except KeyboardInterrupt:
        runner.stop()
    finally:
        for stop in stops:
            stop()
        left = reap_orphans(set()) if subreaper else 0
        if left:
            runner.say("ended %d processes the suites left running" % left)
    total_s = time.monotonic() - t0

    rows = []
    for s in chosen:
        r = runner.results.get(s.name)
        if r is None:
            r = Result(s)
            r.why.append("not run" if runner.stopping else "missing from the run")
        rows.append(r.row())
    for m in missing:
        rows.append({"suite": m, "lane": "-", "passed": 0, "failed": 0,
                     "skipped": 0, "seconds": 0, "ok": False,
                     "why": ["in no suite of tests/suites.py"]})
    for e in errs:
        name = e.split(":")[0]
        for r in rows:
            if r["suite"] == name:
                r["ok"] = False
                r["why"].append("its listing failed")
    with open(os.path.join(LOGS, "summary.json"), "w") as f:
        json.dump({"seconds": round(total_s, 1), "suites": rows,
                   "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                  f, indent=1)
    bad = [r for r in rows if not r["ok"]]
    if args.json:
        print(json.dumps({"seconds": round(total_s, 1), "suites": rows}, indent=1))
    else:
        for r in bad:
            print("\n--- %s (%s):" % (r["suite"], os.path.join(LOGS, r["suite"]
                                                            + ".log")))
            for ln in failure_lines(r["suite"]):
                print("  " + ln[:300])
        print_table(rows, total_s)
        tp = sum(r["passed"] for r in rows)
        tf = sum(r["failed"] for r in rows)
        ts = sum(r["skipped"] for r in rows)
        print("%d passed, %d failed, %d skipped" % (tp, tf, ts))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
