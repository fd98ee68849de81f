#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/lb_demo.py: the balancing demo (make demo-lb; with --check,
make demo-lb-check).  docs/BALANCE.md, "The demo".

sds-bpf attaches to the demo service (tools/demo/lb_demo.c) with a
strategy for each provider point pay@p0..p2 (exception_threshold: a
provider answering with errors is downgraded for DELAY_MS); the service
balances its calls of "pay" over its three providers, prints a table per
second while p1 turns slow and p2 fails, the policy switches from
least_active to shortest_response, and both heal; then sds-bpf's visits,
downgrades and exceptions of each point are set beside the service's own
counts.

--check also asserts (exit 1 otherwise):
  * least_active, p1 slow: p1 gets under half of p0's calls;
  * shortest_response, p1 slow: p1 under 10% of the calls in every second
    from the second after the switch (two ticks in) until the heal;
  * p2 tripped: 0 calls in every second from the one after it broke until
    the one its downgrade ends in;
  * healed: p1 and p2 each over 20% of the calls in some second within
    HEAL_WITHIN s of the heal;
  * every call accounted: made = the providers' calls + fallbacks, and
    per point, sds-bpf's visits, downgrades and exceptions = the
    service's calls + refusals, refusals, errors (exact);
  * a bad argument to lb-demo: its usage line, exit 2.

Needs root (BPF).  Runs a copy of build/demo/lb-demo in its temp dir and
pins under a root of its own (SDS_PIN_ROOT /sys/fs/bpf/sds-demo-*): a
pin left there after the loader stopped fails the run (a LEAK line).
Cleans up every process, its temp dir and pin root, also on failure or
Ctrl-C.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import demo_lib
from demo_lib import BUILD, SDS, Run

LBDEMO = os.path.join(BUILD, "demo", "lb-demo")
APP = "lbdemo"                 # sds_client_open("default", "lbdemo")
BREAK, SWITCH, HEAL, SECONDS = 2, 8, 16, 30   # as in lb_demo.c
DELAY_MS = 15000               # p2's downgrade: until just after the heal
THRESHOLD = 20                 # exceptions per second that trip a provider
HEAL_WITHIN = 12               # seconds after the heal: both back (a slow
                               # call of p1 just before the heal is
                               # forgotten 10 s later)
STRATEGY = {"exception_threshold": THRESHOLD, "delay_ms": DELAY_MS,
            "retry_interval_ms": DELAY_MS}

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+p0\s+(\d+)\s+\d+%\s+(\d+)\s+"
                 r"p1\s+(\d+)\s+\d+%\s+(\d+)\s+p2\s+(\d+)\s+\d+%\s+(\d+)\s+"
                 r"fallback\s+(\d+)")
TOTALS = re.compile(r"^totals: made (\d+) = calls (\d+) \+ (\d+) \+ (\d+) "
                    r"\+ fallbacks (\d+)")
POINT = re.compile(r"^point (pay@p\d): visits (\d+) calls (\d+) errors (\d+) "
                   r"refused (\d+)")


def die(msg):
    demo_lib.die("lb-demo", msg)


def attach(run):
    path = os.path.join(run.t, "strategies.json")
    with open(path, "w") as f:
        json.dump({"version": 1, "points": {
            "pay@p%d" % i: STRATEGY for i in range(3)}}, f, indent=1)
    print("$ cat strategies.json")
    print(open(path).read())
    print("$ sds-bpf attach --app %s --strategies strategies.json %s &"
          % (APP, run.bin))
    log = open(os.path.join(run.t, "attach.out"), "w")
    p = run.start([SDS, "attach", "--app", APP, "--strategies", path, run.bin],
                  log)
    sock = os.path.join(run.t, "run", "default.%s.sock" % APP)
    deadline = time.monotonic() + 20
    while not os.path.exists(sock):
        if p.poll() is not None or time.monotonic() > deadline:
            die("sds-bpf attach did not start serving within 20 s:\n"
                + open(log.name).read())
        time.sleep(0.1)


def demo(run):
    """Run the service to its end, echoing its table; its lines."""
    print("$ %s   (%d s)" % (run.bin, SECONDS))
    p = run.start([run.bin, "--seconds", str(SECONDS)], subprocess.PIPE)
    lines = []
    # A service that hangs, silent, is killed: readline() then returns.
    hung = []
    watchdog = threading.Timer(SECONDS + 30, lambda: (hung.append(1), p.kill()))
    watchdog.start()
    try:
        for line in iter(p.stdout.readline, b""):
            line = line.decode(errors="replace").rstrip("\n")
            print(line, flush=True)
            lines.append(line)
        rc = p.wait()
    finally:
        watchdog.cancel()
    if rc:
        die("the service exited %d%s" % (rc, " (still running after %d s: "
                                            "killed)" % (SECONDS + 30) if hung else ""))
    return lines


def accounting(run, lines):
    """sds-bpf's counts beside the service's; True when all are exact."""
    st = json.loads(run.sds("stats", "--app", APP, "--json"))
    pts = {p["name"]: p.get("total", {}) for p in st.get("points", [])}
    ok = True
    tot = [TOTALS.match(l) for l in lines if TOTALS.match(l)]
    own = [POINT.match(l) for l in lines if POINT.match(l)]
    if len(tot) != 1 or len(own) != 3:
        print("check: no totals from the service")
        return False
    made, c0, c1, c2, fb = map(int, tot[0].groups())
    same = made == c0 + c1 + c2 + fb
    ok &= same
    print("check: calls made %d = p0 %d + p1 %d + p2 %d + fallbacks %d: %s"
          % (made, c0, c1, c2, fb, "exact" if same else "MISMATCH"))
    visits = 0
    for m in own:
        name = m.group(1)
        v, calls, errors, refused = map(int, m.groups()[1:])
        visits += v
        got = pts.get(name, {})
        for what, want in (("visits", v), ("downgrades", refused),
                           ("exceptions", errors)):
            same = got.get(what) == want
            ok &= same
            print("check: %s %-10s sds-bpf %6s, the service %6d: %s"
                  % (name, what, got.get(what), want,
                     "exact" if same else "MISMATCH"))
    none = made - visits
    print("check: calls no provider was asked for (all downgraded): %d" % none)
    return ok


def shares(lines):
    """{second: (policy, [p0, p1, p2], fallback)} from the table."""
    rows = {}
    for l in lines:
        m = ROW.match(l)
        if m:
            g = m.groups()
            rows[int(g[0])] = (g[1], [int(g[2]), int(g[4]), int(g[6])],
                               int(g[8]))
    return rows


def pct(c, fb):
    total = sum(c) + fb
    return [x * 100.0 / total if total else 0.0 for x in c]


def check_shares(rows):
    ok = True

    def say(cond, msg):
        nonlocal ok
        ok &= bool(cond)
        print("check: %s: %s" % (msg, "ok" if cond else "FAILED"))

    if sorted(rows) != list(range(1, SECONDS + 1)):
        say(False, "a table row for each of %d seconds" % SECONDS)
        return False
    la = [rows[s][1] for s in range(BREAK + 2, SWITCH + 1)]
    say(all(c[1] * 2 < c[0] for c in la),
        "least_active, p1 slow (s %d-%d): p1 under half of p0's calls %r"
        % (BREAK + 2, SWITCH, [c[1] for c in la]))
    sr = [pct(*rows[s][1:]) for s in range(SWITCH + 2, HEAL + 1)]
    say(all(p[1] < 10 for p in sr),
        "shortest_response, p1 slow (s %d-%d): p1 under 10%% %r"
        % (SWITCH + 2, HEAL, [round(p[1], 1) for p in sr]))
    # p2 broke at the end of second BREAK and tripped a few ms later; its
    # downgrade of DELAY_MS ends a few ms into second BREAK + DELAY_MS /
    # 1000 + 1: the second before that is the last one surely without it.
    last = BREAK + DELAY_MS // 1000 - 1
    down = [rows[s][1][2] for s in range(BREAK + 2, last + 1)]
    say(all(c == 0 for c in down),
        "p2 downgraded (s %d-%d): 0 calls %r" % (BREAK + 2, last, down))
    # Healed, p1 comes back once its 10 ms are forgotten (10 s after its
    # last call: loader/publish/lbpub.h), p2 once its downgrade ends.
    for i in (1, 2):
        back = [s for s in range(HEAL + 1, min(HEAL + HEAL_WITHIN, SECONDS) + 1)
                if pct(*rows[s][1:])[i] > 20]
        say(back, "healed: p%d over 20%% of the calls within %d s "
            "(in s %r)" % (i, HEAL_WITHIN, back))
    return ok


def check_usage(run):
    """A bad argument: one line, exit 2, nothing started."""
    r = subprocess.run([run.bin, "--seconds", "0"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=10)
    want = "usage: lb-demo [--seconds N]  (N >= 1)\n"
    ok = r.returncode == 2 and r.stderr == want and r.stdout == ""
    print("check: lb-demo --seconds 0: exit %d, %r: %s"
          % (r.returncode, r.stderr, "ok" if ok else "FAILED"))
    return ok


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        die("usage: lb_demo.py [--check]")
    if os.geteuid():
        die("needs root for BPF: run it as root (sudo make demo-lb)")
    for p in (SDS, LBDEMO):
        if not os.access(p, os.X_OK):
            die("%s missing: run make demo-bins" % p)
    run = Run("lb-demo")
    # The service the loader probes: a copy of the run's own (uprobes on
    # build/demo/lb-demo would count another run's calls too).
    run.bin = demo_lib.stage(LBDEMO, run.t)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    clean = False
    try:
        attach(run)
        lines = demo(run)
        print()
        print("$ sds-bpf stats --app %s" % APP)
        print(run.sds("stats", "--app", APP), end="")
        ok = accounting(run, lines)
        if check:
            ok &= check_shares(shares(lines))
            ok &= check_usage(run)
    finally:
        clean = run.stop()
    ok &= clean
    print("lb-demo: %s" % ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
