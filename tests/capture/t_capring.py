# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A ring too small, requests too big: drops counted, the call never waits;
copy_max cuts requests and flags them truncated; `sds-bpf record`."""

import os
import signal
import subprocess
import time

import sdstest
from cap_lib import (APP, POINT, SDS, body, check, eq, read_recording, test)

# The caller's mean time per call must stay within this, captured or
# dropped: a probe costs microseconds (a stepped site ~25 us on a loaded
# 2-core machine); a call that waited for the loader would take far more.
CALL_MEAN_MAX_NS = 2000000


@test
def test_ring_full_drops(ctx):
    """A 64 KiB ring cannot hold a 40,000-byte capture (its size class
    is 64 KiB + the header): every call is a counted drop, none waits."""
    n, size = 2000, 40000
    ctx.attach(["%s=handle_request:copy=1,2:copy_max=65536" % POINT],
               extra=["--copy-to", "127.0.0.1:9", "--copy-ring", "65536"])
    t = ctx.target()
    ctx.wait_copy(lambda c: c["rate"] == 100, "capturing")
    mx, total = t.go(n, size)
    c = ctx.wait_copy(lambda c: c["captured"] + c["dropped"] == n,
                      "captured + dropped == %d" % n)
    eq(c["dropped"], n, "dropped")
    eq(c["captured"], 0, "captured")
    check(total / n < CALL_MEAN_MAX_NS, "mean call %d ns" % (total / n))


# A ring of 256 KiB holds 3 captures of the 64-KiB size class (each
# 65,536 bytes + its header, 8-byte aligned, + the ring's 8-byte header:
# 4 would need 262,304), so with nothing draining it the first calls are
# captured and the rest dropped.
SMALL_RING = 262144
SMALL_RING_HOLDS = 3


def stopped(pid):
    """Process @pid is stopped (state T in /proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@test
def test_ring_small_some_drops(ctx):
    """A 256 KiB ring, 30,000-byte requests at full speed while the loader
    is stopped (SIGSTOP: nothing drains the ring): captured + dropped ==
    calls, exactly: the 3 captures the ring holds, the rest dropped (a
    ring that drops all, or none, fails); the call never waits for the
    loader."""
    n, size = 3000, 30000
    l = ctx.attach(["%s=handle_request:copy=1,2:copy_max=65536" % POINT],
                   extra=["--copy-to", "127.0.0.1:9", "--copy-ring",
                          str(SMALL_RING)])
    t = ctx.target()
    ctx.wait_copy(lambda c: c["rate"] == 100, "capturing")
    os.kill(l.pid, signal.SIGSTOP)
    try:
        sdstest.wait_until(lambda: stopped(l.pid), time.time() + 5,
                           "the loader did not stop", 0.01)
        mx, total = t.go(n, size)
    finally:
        os.kill(l.pid, signal.SIGCONT)
    c = ctx.wait_copy(lambda c: c["captured"] + c["dropped"] == n,
                      "captured + dropped == %d" % n)
    sdstest.log("captured %d dropped %d, mean call %d ns"
                % (c["captured"], c["dropped"], total / n))
    eq((c["captured"], c["dropped"]), (SMALL_RING_HOLDS, n - SMALL_RING_HOLDS),
       "captured (what a %d-byte ring holds), dropped" % SMALL_RING)
    eq(c["truncated"], 0, "truncated")
    check(total / n < CALL_MEAN_MAX_NS, "mean call %d ns" % (total / n))


def start_record(ctx, args):
    out = os.path.join(ctx.tmp, "rec.out")
    err = os.path.join(ctx.tmp, "rec.err")
    with open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen([SDS, "record"] + args, stdout=o, stderr=e,
                             env=ctx.env, cwd=ctx.tmp, start_new_session=True)
    ctx.others.append(p)
    return p, out, err


def wait_recording(ctx, p, err):
    """The recorder is in place: its point captures."""
    def on():
        check(p.poll() is None, "record exited %r: %r"
              % (p.returncode, open(err).read()))
        return ctx.copy_counts()["rate"] == 100
    sdstest.wait_until(on, time.time() + 10,
                       lambda _: "not capturing while recording: %r"
                       % ctx.copy_counts(), 0.05)


@test
def test_record_order(ctx):
    """`record --for 2`: the file's records are the bodies in call order,
    app and point named, not truncated; the summary line counts them."""
    n, size = 1000, 50
    ctx.attach(["%s=handle_request:copy=1,2" % POINT])
    t = ctx.target()
    path = os.path.join(ctx.tmp, "req.rec")
    p, out, err = start_record(ctx, ["--app", APP, POINT, "--out", path,
                                     "--for", "2"])
    wait_recording(ctx, p, err)
    t.go(n, size)
    eq(p.wait(10), 0, "record's exit status (stderr %r)" % open(err).read())
    recs = read_recording(path)
    eq([r[5] for r in recs], [body(1, i, size) for i in range(n)],
       "recorded bodies in call order")
    eq({(r[1], r[2], r[3], r[4]) for r in recs}, {(APP, POINT, 0, size)},
       "app, point, flags, orig_len")
    eq(open(out).read(),
       "recorded %d records (%d bytes) of %s to %s; the loader dropped 0\n"
       % (n, os.path.getsize(path) - 16, APP, path), "record's summary")
    # Recording ended: the point stops capturing.
    ctx.wait_copy(lambda c: c["rate"] == 0, "capture off after record")
    t.go(10, size)
    time.sleep(0.3)
    eq(ctx.copy_counts()["captured"], n, "captured after record ended")


@test
def test_truncated(ctx):
    """copy_max=100 with 200-byte requests: truncated == calls, and each
    record holds the first 100 bytes, orig_len 200, flagged truncated."""
    n, size = 500, 200
    ctx.attach(["%s=handle_request:copy=1,2:copy_max=100" % POINT])
    t = ctx.target()
    path = os.path.join(ctx.tmp, "trunc.rec")
    p, out, err = start_record(ctx, ["--app", APP, POINT, "--out", path,
                                     "--for", "2"])
    wait_recording(ctx, p, err)
    t.go(n, size)
    eq(p.wait(10), 0, "record's exit status (stderr %r)" % open(err).read())
    c = ctx.copy_counts()
    eq(c["captured"], n, "captured")
    eq(c["truncated"], n, "truncated")
    recs = read_recording(path)
    eq(len(recs), n, "records")
    eq([r[5] for r in recs], [body(1, i, size)[:100] for i in range(n)],
       "the first 100 bytes of each")
    eq({(r[3], r[4]) for r in recs}, {(1, size)}, "flags, orig_len")
