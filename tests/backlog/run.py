#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The heartbeat backlog across loader restarts (issue 11, docs/BACKLOG.md):
a real sds-admin (down, then up on the same port), a real `sds-bpf attach
--admin` on a private copy of target_pie, real uprobes, exact numbers.

    python3 tests/backlog/run.py [-v] [NAME-SUBSTRING...]

  sigterm_restart, kill9_restart   the admin down, calls in two periods,
      both closed and queued; the loader ended (SIGTERM; kill -9); the
      admin up; a new loader: it restores exactly the queued periods, the
      admin's per-period sums equal the calls made in each, no heartbeat
      reaches the admin twice, the file ends with nothing pending.
  corrupt_file, truncated_file, symlink_file, directory_file   what is
      in the state dir is not a good backlog: one line on stderr, the
      loader runs and heartbeats (from memory when the path is a
      directory), a good record before a cut one is still delivered, a
      symlink is never followed.

The calls are made well inside a period and none in the period in flight
at the kill (its counts are the crash-only design's, tests/crash).  Every
test has its own temp dir, run and state dirs, port, and a group name of
its own (bl<pid>); every process it starts is ended, pass or fail.
Python 3 standard library only.
"""

import json
import os
import re
import shutil
import signal
import socket
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import target  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import (BUILD, SDS, Fail, check, eq,  # noqa: E402
                     log, wait_until)

sdstest.log_stamps()
ADMIN = sdstest.admin_path()
TARGET = os.path.join(BUILD, "test", "targets", "target_pie")
GROUP = "bl%d" % os.getpid()
APP = "blsvc"
A = "/groups/%s/apps/%s" % (GROUP, APP)
TOKEN = "backlog-t0ken.for_tests_%d" % os.getpid()
PERIOD = 10
COUNTS = ("visits", "exceptions", "timeouts", "downgrades")


def period_of(t):
    return int(t) // PERIOD * PERIOD


def sleep_until(t):
    if t > time.time():
        time.sleep(t - time.time())


def wait_safe(after=0):
    """Until 2..6.5 s into a period later than @after; that period."""
    while True:
        now = time.time()
        p, into = period_of(now), now - period_of(now)
        if p > after and 2.0 <= into <= 6.5:
            return p
        sleep_until(p + 2.0 if p > after and into < 2.0 else p + PERIOD + 2.0)


class Admin(sdsadmin.Admin):
    """sds-admin on a port chosen before it first starts, held dead until
    start() (tests/lib/sdsadmin.py)."""

    def __init__(self, ctx):
        super().__init__(ctx, token=TOKEN, token_file=ctx.token, hold=True)

    def get(self, path):
        st, doc = self.req("GET", path)
        if st != 200:
            raise Fail("GET %s: status %d: %r" % (path, st, doc))
        return doc

    def per_period(self, frm, to):
        """{period: counts} of point w for the periods with any count."""
        doc = self.get("/api/v1%s/stats?from=%d&to=%d&step=10&point=w"
                      % (A, frm, to))
        pt = doc.get("points", {}).get("w")
        check(pt is not None, "admin stats: no point w: %r" % doc)
        out = {}
        for i, t in enumerate(pt["t"]):
            row = {k: pt[k][i] for k in COUNTS}
            if any(row.values()):
                out[t] = row
        return out

    def metric(self, name):
        text = self.get("/metrics")
        m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
        check(m is not None, "/metrics has no %s" % name)
        return int(m.group(1))

    def last_period(self, host):
        st, doc = sdstest.http_request(
            self.port, "GET", "/api/v1%s/hosts" % A,
            headers={"Authorization": "Bearer " + TOKEN})
        if st == 404:
            return None         # no heartbeat yet: the app is not known
        check(st == 200, "GET %s/hosts: status %d: %r" % (A, st, doc))
        for h in doc:
            if h.get("host") == host:
                return h.get("last_period")
        return None


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-backlog-")
        self.token = sdstest.write_token(os.path.join(self.tmp, "token"), TOKEN)
        self.path = os.path.join(self.tmp, APP)
        shutil.copy2(TARGET, self.path)
        self.backlog = os.path.join(self.state_dir, "%s.%s.backlog"
                                    % (GROUP, APP))

    def cleanup(self):
        for p in self.others:
            sdstest.close_streams(p)
        super().cleanup()

    def attach(self, url, stale_inode=None):
        return sdstest.AttachProcess(
            self, ["--group", GROUP, "--app", APP, "--admin", url,
                   "--token-file", self.token, "--state-dir", self.state_dir,
                   self.path, "w=work:err=neg"], APP, group=GROUP,
            stale_inode=stale_inode)

    def admin_of(self, loader):
        r = sdstest.run_group([SDS, "stats", "--group", GROUP, "--app", APP,
                               "--json"], self.env, self.tmp, self.others)
        check(r.rc == 0, "sds-bpf stats: %r" % r)
        a = json.loads(r.out).get("admin")
        check(isinstance(a, dict) and "restored" in a and "backlog" in a,
              "stats --json: admin without backlog, restored: %r" % a)
        return a


def pending_in(path):
    """The periods the backlog file @path holds pending, oldest first."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    eq(lines[0], b"sds-backlog 1", "the backlog's first line")
    ps, done, acked = [], set(), 0
    for ln in lines[1:]:
        f = ln.split(b" ", 4)
        if f[0] == b"P":
            ps.append(int(f[1]))
        elif f[0] in (b"A", b"X"):
            done.add(int(f[1]))
            if f[0] == b"A":
                acked = max(acked, int(f[1]))
    return sorted(p for p in set(ps) if p > acked and p not in done)


def one_line(err, what, *words):
    lines = [x for x in err.splitlines() if x.strip()]
    eq(len(lines), 1, "%s: lines on the loader's stderr (%r)" % (what, err))
    check(lines[0].startswith("sds-bpf: "), "%s: %r" % (what, lines[0]))
    for w in words:
        check(w in lines[0], "%s: the line does not say %r: %r"
              % (what, w, lines[0]))


def queued_restart(ctx, sig):
    snap = sdstest.KernelSnapshot()
    admin = Admin(ctx)              # down: not started yet
    t = target.Target(ctx, ctx.path)
    l1 = ctx.attach(admin.url)
    made = {}
    pa = wait_safe()
    t.work(100, 7)
    check(period_of(time.time()) == pa, "batch A left period %d" % pa)
    made[pa] = {"visits": 100, "exceptions": 7, "timeouts": 0,
                "downgrades": 0}
    pb = wait_safe(after=pa)
    t.work(200, 0)
    check(period_of(time.time()) == pb, "batch B left period %d" % pb)
    made[pb] = {"visits": 200, "exceptions": 0, "timeouts": 0,
                "downgrades": 0}
    # B closes 1-2 s after it ends: then it is on disk, and queued.
    wait_until(lambda: pb in pending_in(ctx.backlog), pb + PERIOD + 4.0,
               lambda _: "period %d not in the backlog file" % pb)
    a = ctx.admin_of(l1)
    pend = pending_in(ctx.backlog)
    check(time.time() < pb + 2 * PERIOD, "too late: the next period may close")
    eq(a["pending"], len(pend), "loader's pending vs the file's periods %r"
       % pend)
    eq(a["backlog"], ctx.backlog, "admin.backlog")
    check(pa in pend and a["sent"] == 0 and a["failures"] > 0,
          "pending %r, loader %r" % (pend, a))
    stale = sdstest.inode_of(l1.sock)
    log("%s to the loader, %d periods queued: %r" % (sig.name, len(pend), pend))
    os.kill(l1.pid, sig)
    rc = l1.p.wait(10)
    eq(rc, 0 if sig == signal.SIGTERM else -signal.SIGKILL, "loader's exit")
    eq(pending_in(ctx.backlog), pend, "the file after the loader ended")

    admin.start()
    l2 = ctx.attach(admin.url, stale_inode=stale)
    a = ctx.admin_of(l2)
    eq(a["restored"], len(pend), "admin.restored of the new loader")
    # After a kill -9 the new loader adopts the pins the dead one left
    # (crash-only, docs/CRASH.md) and says so in one line.
    want_err = ""
    if sig == signal.SIGKILL:
        want_err = ("sds-bpf: adopted the pins in %s: counting never "
                    "stopped\n" % os.path.join(ctx.pin_root, "%s:%s"
                                                % (GROUP, APP)))
    eq(l2.stderr(), want_err, "the new loader's stderr")
    host = a["host"]
    wait_until(lambda: (admin.last_period(host) or 0) >= pend[-1] and
               ctx.admin_of(l2)["pending"] == 0 and
               not pending_in(ctx.backlog),
               time.time() + 8,
               lambda _: "backlog not delivered within 8 s: admin's last "
               "period %r, loader %r, file %r"
               % (admin.last_period(host), ctx.admin_of(l2),
                  pending_in(ctx.backlog)))
    eq(admin.per_period(pend[0] - PERIOD, pb + 2 * PERIOD), made,
       "the admin's per-period sums of w")
    eq(admin.metric("sds_admin_heartbeat_duplicates_total"), 0,
       "heartbeats the admin got twice")
    check(admin.metric("sds_admin_heartbeats_total") >= len(pend),
          "the admin stored fewer heartbeats than the %d restored" % len(pend))
    a = ctx.admin_of(l2)
    check(a["sent"] >= len(pend) and a["dropped"] == 0,
          "loader after the backlog: %r (%d restored)" % (a, len(pend)))
    l2.end()
    eq(l2.p.returncode, 0, "the new loader's exit on SIGINT")
    snap.assert_nothing_new({l1.pid, l2.pid}, "two loaders, one %s'd"
                            % sig.name)


SUITE = sdstest.Suite(timeout=120)
test = SUITE.test


@test
def sigterm_restart(ctx):
    queued_restart(ctx, signal.SIGTERM)


@test
def kill9_restart(ctx):
    queued_restart(ctx, signal.SIGKILL)


def record(host, start, visits):
    body = json.dumps({"group": GROUP, "app": APP, "host": host, "ip": "",
                       "period_start": start, "period_s": 10, "version": 0,
                       "points": {"w": {"visits": visits}}},
                      separators=(",", ":")).encode()
    return b"P %d %d %08x %s\n" % (start, len(body), zlib.crc32(body), body)


def bad_file_runs(ctx, write, words, restored=0, good_after=True):
    """@write the backlog; a loader says one line naming @words, runs,
    heartbeats (and says nothing more); the file is a good backlog after
    (@good_after).  The admin and the loader."""
    admin = Admin(ctx)
    admin.start()
    write()
    l = ctx.attach(admin.url)
    one_line(l.stderr(), "a bad backlog", ctx.backlog, *words)
    a = ctx.admin_of(l)
    eq(a["restored"], restored, "admin.restored")
    # The loader's own first period (the one open when it started, not
    # the one open now: spawned late in a period it may be either) is
    # sent at its end + the loader's offset; 3 s for the post and a tick.
    first = a["first_period"]
    wait_until(lambda: (admin.last_period(a["host"]) or 0) >= first,
               sdstest.heartbeat_after(a, first) + 3.0,
               lambda _: "no heartbeat after a bad backlog: %r"
               % ctx.admin_of(l))
    one_line(l.stderr(), "after a heartbeat", ctx.backlog, *words)
    if good_after:
        # The admin stores a period before it answers, and the loader
        # drops the record once the answer is in: wait for that (a period
        # closing meanwhile is appended, then acknowledged in turn).
        wait_until(lambda: pending_in(ctx.backlog) == [], time.time() + 2 * PERIOD,
                   lambda _: "the backlog after the heartbeat: %r"
                   % pending_in(ctx.backlog))
    return admin, l


@test
def corrupt_file(ctx):
    def write():
        with open(ctx.backlog, "wb") as f:
            f.write(b"\x00garbage, not a backlog\n" * 10)
        os.chmod(ctx.backlog, 0o600)
    _, l = bad_file_runs(ctx, write, ["not a backlog", "skipped"])
    l.end()
    eq(l.p.returncode, 0, "the loader's exit")


@test
def truncated_file(ctx):
    """A good record, then one cut by a kill mid-write: the first is
    delivered, the second said."""
    host = socket.gethostname()
    p = period_of(time.time()) - 3 * PERIOD

    def write():
        with open(ctx.backlog, "wb") as f:
            f.write(b"sds-backlog 1\n" + record(host, p, 77) +
                    record(host, p + PERIOD, 5)[:-30])
        os.chmod(ctx.backlog, 0o600)
    admin, l = bad_file_runs(ctx, write, ["1 bad records skipped", "truncated",
                                          "1 periods restored"], restored=1)
    eq(admin.per_period(p - PERIOD, p + 2 * PERIOD),
       {p: {"visits": 77, "exceptions": 0, "timeouts": 0, "downgrades": 0}},
       "the restored period at the admin")
    l.end()


@test
def symlink_file(ctx):
    victim = os.path.join(ctx.tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")

    def write():
        os.symlink(victim, ctx.backlog)
    _, l = bad_file_runs(ctx, write, ["a symlink", "skipped"])
    with open(victim) as f:
        eq(f.read(), "precious\n", "the symlink's target")
    check(not os.path.islink(ctx.backlog), "the backlog is still a symlink")
    l.end()


@test
def directory_file(ctx):
    """A directory where the backlog goes: one line; the queue is in
    memory only, the loader heartbeats, a closing period says nothing."""
    def write():
        os.mkdir(ctx.backlog, 0o700)
    _, l = bad_file_runs(ctx, write, ["not a regular file", "skipped"],
                         good_after=False)
    check(os.path.isdir(ctx.backlog), "the directory is gone")
    eq(ctx.admin_of(l)["backlog"], ctx.backlog, "admin.backlog")
    l.end()
    eq(l.p.returncode, 0, "the loader's exit")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx,
                               needs=(SDS, ADMIN, TARGET)))
