#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/copy_admin_demo.py: traffic copy driven from the dashboard
(make demo-copy-admin; with --check, make demo-copy-check).

The source and shadow instances of the demo service as in copy_demo.py,
but nothing is configured by hand: sds-admin runs on 127.0.0.1, the
source's loader (`attach --admin`) and `sds-copy serve --admin` take
their copy plans from its heartbeat replies, and the source's
serve_request is a copy point (`serve=serve_request:copy=2,3`) that copies
nothing until a plan names it.

Interactive (the default): prints the dashboard's address and token and
what to do there -- start a copy of point "serve" x3 onto the shadow,
watch received and dispatched on the plan's chart, record with `sds-bpf
record`, replay with `sds-copy replay --speed 2` -- and shows both
instances' visits every second until Ctrl-C or DEMO_SECONDS (1800).
sds-admin listens on 127.0.0.1:DEMO_ADMIN_PORT (8887).

--check: the same steps scripted, the plan made with the request the
dashboard's "Start copy" sends; exits 1 unless the accounting is exact
(captured = received, dispatched = 3 x received = the shadow's visits,
and the admin's per-period sums of the plan say the same), the recording
replayed at 2x adds exactly its records to the shadow's visits, and the
replay takes half the recorded span (+-10%, plus 0.5 s of start-up).
`make test` runs --check.
"""

import json
import os
import signal
import struct
import subprocess
import sys
import time
import urllib.request

import copy_demo as cd
from copy_demo import AMPLIFICATION, COPY, DEMO, LOAD, SDS, die, visits

ADMIN = os.path.join(cd.BUILD, "bin", "sds-admin")
GROUP, APP = "default", "demo"
PLANS = "/api/v1/groups/%s/apps/%s/copy-plans" % (GROUP, APP)


class Admin:
    """sds-admin of the demo: its URL, token and API."""

    def __init__(self, d, port=0):
        self.token = os.urandom(18).hex()
        self.token_file = os.path.join(d.t, "token")
        with open(os.open(self.token_file, os.O_WRONLY | os.O_CREAT, 0o600),
                  "w") as f:
            f.write(self.token + "\n")
        _, self.port = cd.start_on_port(
            d, "sds-admin", lambda port: [
                ADMIN, "--listen", "127.0.0.1:%d" % port,
                "--db", os.path.join(d.t, "sds.db"),
                "--token-file", self.token_file], self.up, port)
        self.url = "http://127.0.0.1:%d" % self.port

    @staticmethod
    def up(port):
        try:
            return urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port,
                                          timeout=1).status == 200
        except OSError:
            return False

    def call(self, method, path, body=None):
        req = urllib.request.Request(
            self.url + path, method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": "Bearer " + self.token,
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def plan_totals(self, pid):
        doc = self.call("GET", PLANS + "/%d/stats?from=0&to=%d" % (pid, time.time() + 60))
        keys = ("captured", "dropped", "received", "dispatched", "shadow_errors")
        return {k: sum(x[k] for x in doc["periods"]) for k in keys}


def start_all(d, admin_port=0):
    """sds-admin (on @admin_port, else a free one), the shadow, sds-copy
    --admin, the source and its loader."""
    adm = Admin(d, admin_port)
    adm.call("POST", "/api/v1/groups", {"name": GROUP})
    adm.call("POST", "/api/v1/groups/%s/apps" % GROUP,
             {"name": APP, "description": "the demo service (copy source)"})
    sh_p, sh_port = cd.start_demo(d, "shadow", "demo-shadow")
    src_p, src_port = cd.start_demo(d, "source", APP)
    cd.start_loader(d, "attach-shadow", "demo-shadow", sh_p.pid, ["req=handle_request"])
    cd.start_on_port(
        d, "sds-copy", lambda port: [
            COPY, "serve", "--listen", "127.0.0.1:%d" % port, "--admin",
            adm.url, "--token-file", adm.token_file, "--name", cd.COPY_NAME],
        lambda port: any(s["live"] for s in adm.call("GET", "/api/v1/copy-servers")))
    cd.start_loader(d, "attach-source", APP, src_p.pid,
                    ["req=handle_request", "serve=serve_request:copy=2,3"],
                    ["--admin", adm.url, "--token-file", adm.token_file])
    return adm, src_port, sh_port


def guide(d, adm, sh_port):
    env = "SDS_RUN_DIR=%s" % d.env["SDS_RUN_DIR"]
    rec = "peak.rec"    # in the current directory: it outlives the demo
    print("""
== sds-admin: %s/   (token: %s)
== in the dashboard: group default, app demo -> Traffic copy:
     name x3, points serve, shadows 127.0.0.1:%d, amplification 3 -> Start copy.
   Within one heartbeat (10 s) the shadow's visits below turn to 3 x the
   source's, and the plan's chart shows received and dispatched per period.
== record ten minutes of it, then replay it at double speed:
     %s %s record --app demo serve --out %s --for 600
     %s replay %s --to 127.0.0.1:%d --speed 2
== Ctrl-C stops everything.
""" % (adm.url, adm.token, sh_port, env, SDS, rec, COPY, rec, sh_port), flush=True)


def live(d, seconds, on_tick=None):
    print("  %5s  %12s  %12s  %6s  %10s  %10s" % (
        "t", "source req", "shadow req", "ratio", "received", "dispatched"))
    for i in range(seconds):
        time.sleep(1)
        if on_tick:
            on_tick(i)
        src, sh = visits(d.stats(APP), "req"), visits(d.stats("demo-shadow"), "req")
        cs = d.copy_stats() or {}
        print("  %4ds  %12d  %12d  %6s  %10s  %10s" % (
            i + 1, src, sh, "%.2f" % (sh / src) if src else "-",
            cs.get("received", "-"), cs.get("dispatched", "-")), flush=True)


def records(path):
    """(count, span s) of a recording: docs/COPY.md's reader, in short."""
    with open(path, "rb") as f:
        buf = f.read()
    pos, ts = 16, []
    while pos < len(buf):
        t, _orig, cap, fl, al, pl = struct.unpack_from("<QIIHBB", buf, pos)
        if not fl & 8:                  # a response is not a request
            ts.append(t)
        pos += 20 + al + pl + (8 if fl & 4 else 0) + cap   # 4: a pair id
    return len(ts), ((ts[-1] - ts[0]) / 1e9 if ts else 0.0)


def verdict(what, got, want, ok=None):
    same = got == want if ok is None else ok
    print("check: %-52s %10s %10s  %s" % (what, got, want, "exact" if same else "MISMATCH"))
    return same


def check_run(d, adm, sh_port, src_port):
    """The scripted walk through the dashboard's steps; True if exact."""
    body = {"name": "x3", "points": ["serve"], "sample_pct": 100,
            "shadows": ["127.0.0.1:%d" % sh_port], "amplification": AMPLIFICATION,
            "framing": "raw", "writes": False, "duration_s": 3600, "by": "demo"}
    print("$ POST %s %s   (the dashboard's Start copy)" % (PLANS, json.dumps(body)))
    plan = adm.call("POST", PLANS, body)
    t0, end = time.monotonic(), time.monotonic() + 40
    while ((cd.point(d.stats(APP), "serve") or {}).get("copy") or {}).get("rate") != 100:
        if time.monotonic() > end:
            die("the plan did not reach the source's loader within 40 s")
        time.sleep(0.2)
    print("  the plan reached the source's loader %.1f s later (its next heartbeat)"
          % (time.monotonic() - t0))
    # sds-copy learns plans from its own heartbeats: a record that reaches
    # it before its plan does is counted "unmatched", not "received", and
    # captured = received would not hold.  Both know the plan before load.
    while not d.copy_stats():
        if time.monotonic() > end:
            die("the plan did not reach sds-copy within 40 s")
        time.sleep(0.2)
    print("  and sds-copy %.1f s later (its next heartbeat)" % (time.monotonic() - t0))
    load = d.start("load", [LOAD, "--port", str(src_port), "--rate", str(cd.RATE),
                            "--conns", "4", "--seconds", "30"], show=False)
    rec = os.path.join(d.t, "peak.rec")
    rec_p = []

    def tick(i):
        if i == 15:
            rec_p.append(d.start("record", [SDS, "record", "--app", APP, "serve",
                                            "--out", rec, "--for", "8"]))
    live(d, 30, tick)
    load.wait(30)
    rec_p[0].wait(30)
    cd.settle(d)
    ok = cd.check(d)
    src, cs = d.stats(APP), d.copy_stats() or {}
    want = {"captured": cd.point(src, "serve")["copy"]["captured"], "dropped": 0,
            "received": cs.get("received"), "dispatched": cs.get("dispatched"),
            "shadow_errors": 0}
    end, got = time.monotonic() + 40, None
    while time.monotonic() < end:       # the last period lands one heartbeat later
        got = adm.plan_totals(plan["id"])
        if got == want:
            break
        time.sleep(1)
    print("  the admin's sums of the plan: %s" % json.dumps(got))
    ok &= verdict("the admin's sums = the counters above", "", "", got == want)
    adm.call("POST", PLANS + "/%d/stop" % plan["id"], {"by": "demo"})
    print("\n" + d.output("record").strip())
    n, span = records(rec)
    before = visits(d.stats("demo-shadow"), "req")
    t0 = time.monotonic()
    r = subprocess.run([COPY, "replay", rec, "--to", "127.0.0.1:%d" % sh_port,
                        "--speed", "2"], env=d.env, capture_output=True, text=True,
                       timeout=120)
    took = time.monotonic() - t0
    print("$ sds-copy replay peak.rec --speed 2   (%d records over %.2f s) -> %.2f s%s"
          % (n, span, took, (": " + r.stderr.strip()) if r.returncode else ""))
    # Every second the replay's requests fell in folded into the shadow's
    # totals (a loaded machine folds late), then nothing more arriving.
    done = int(time.time()) + 1
    end = time.monotonic() + 15
    while time.monotonic() < end and ((d.stats("demo-shadow") or {}).get(
            "folded_through") or 0) < done:
        time.sleep(0.2)
    cd.settle(d)
    ok &= verdict("replay exit status", r.returncode, 0)
    ok &= verdict("shadow visits added by the replay = records", visits(
        d.stats("demo-shadow"), "req") - before, n)
    ok &= verdict("replay time (s) = span / 2 +-10%", "%.2f" % took, "%.2f" % (span / 2),
                  abs(took - span / 2) <= 0.1 * span / 2 + 0.5 and n > 0)
    return ok


def main():
    check = "--check" in sys.argv[1:]
    if os.geteuid():
        die("needs root for BPF: run it as root")
    for f in (SDS, COPY, ADMIN, DEMO, LOAD):
        if not os.access(f, os.X_OK):
            die("%s missing: run make all demo-bins" % f)
    d = cd.Demo()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    rc = 130
    try:
        adm, src_port, sh_port = start_all(
            d, 0 if check else int(os.environ.get("DEMO_ADMIN_PORT", "8887")))
        if check:
            ok = check_run(d, adm, sh_port, src_port)
            print("\n== done: %s" % ("every count exact" if ok else "a count did not match"))
            rc = 0 if ok else 1
        else:
            guide(d, adm, sh_port)
            d.start("load", [LOAD, "--port", str(src_port), "--rate", str(cd.RATE),
                             "--conns", "4", "--seconds",
                             os.environ.get("DEMO_SECONDS", "1800")], show=False)
            live(d, int(os.environ.get("DEMO_SECONDS", "1800")))
            rc = 0
    except KeyboardInterrupt:
        pass
    finally:
        clean = d.cleanup()
    return rc if clean else 1


if __name__ == "__main__":
    sys.exit(main())
