#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Several admins on one PostgreSQL (docs/ADMIN.md "Several admins"):
a PostgreSQL in a temp dir, three sds-admin on it, two loader hosts
spreading their heartbeats over the three (consistent_hash), the admin
host-a posts to killed with SIGKILL and restarted; every period of both
hosts stored once, a strategy written through one admin in force at a
loader posting to another, the same data from every admin.  The
scenario is tests/e2e/t_cluster.py's, printed as it goes.

    python3 tools/demo/cluster_demo.py           # then Ctrl-C to stop
    python3 tools/demo/cluster_demo.py --check   # exit non-zero on a mismatch

Needs root (BPF, namespaces) and PostgreSQL 15 (make deps).
"""

import os
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import run as e2e  # noqa: E402
import t_cluster  # noqa: E402


def say(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def main(argv):
    check = "--check" in argv
    err = e2e.preflight()
    if err:
        print("cluster demo: %s" % err, file=sys.stderr)
        return 1
    ctx = e2e.Ctx("cluster_demo")
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    try:
        say("PostgreSQL, three sds-admin, two hosts; ~80 s (8 periods of 10 s)")
        out = t_cluster.run(e2e, ctx, say)
        ev = out["events"]
        k = ev["kill"]["admin"]
        say("admin %d killed at %s, restarted at %s" % (
            k, time.strftime("%H:%M:%S", time.localtime(ev["kill"]["at"])),
            time.strftime("%H:%M:%S", time.localtime(ev["restart"]))))
        for h, d in sorted(out["hosts"].items()):
            lost = d["posts"][k] - d["stored"][k]
            say("%s: stored per admin %r, posts per admin %r: %d post(s) to "
                "the killed admin failed and went to the next admin"
                % (h, d["stored"], d["posts"], lost))
        say("strategy written through admin %d in force at host-a (posting "
            "to admin %d) %.1f s later" % (ev["write"]["through"],
                                          ev["write"]["to"], ev["write"]["seen"]))
        if check:
            print("demo-cluster-check: OK")
            return 0
        say("dashboards (token in %s), each showing the same data:"
            % ctx.token_file)
        for line in out["urls"]:
            say("  %s/" % line)
        say("Ctrl-C to stop everything")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0
    except (e2e.Fail, RuntimeError, OSError) as e:
        print("demo-cluster: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        ctx.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
