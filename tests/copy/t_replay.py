# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""sds-copy replay: order, pace, repetitions, framing, bad recordings."""

import os
import socket
import time

import sdstest
import sender
from copy_lib import Shadow, check, eq, test

MS = 1000000


def recording(ctx, n, gap_ms, name="rec.bin", app="app", point="pt"):
    """A file of @n records "rec-I\\n" @gap_ms apart; (path, bodies)."""
    t0 = time.time_ns()
    bodies = [b"rec-%05d\n" % i for i in range(n)]
    path = os.path.join(ctx.tmp, name)
    sender.write_file(path, [sender.record(app, point, b, ts_ns=t0 + i * gap_ms * MS)
                             for i, b in enumerate(bodies)])
    return path, bodies


@test
def t_replay_order_and_times(ctx):
    """The bodies arrive in file order, each once; --times 3 sends the
    whole sequence three times, in order."""
    sh = ctx.shadow()
    path, bodies = recording(ctx, 300, 1)
    r = ctx.run(["replay", path, "--to", sh.addr])
    check(r.rc == 0 and not r.out and not r.err, "replay: %r" % r)
    eq(sh.wait_count(300), 300, "requests")
    eq([b for b, _ in sh.got], bodies, "bodies in order")
    sh2 = ctx.shadow()
    r = ctx.run(["replay", path, "--to", sh2.addr, "--times", "3", "--speed", "10"])
    check(r.rc == 0, "replay --times 3: %r" % r)
    eq(sh2.wait_count(900), 900, "requests of 3 passes")
    eq([b for b, _ in sh2.got], bodies * 3, "three passes in order")


class TimedShadow(Shadow):
    """A raw Shadow that also stamps each request's arrival
    (time.monotonic()): .at, beside .got.  The pace is read from these
    stamps, not from the replay process's wall time, which holds its
    start-up and exit too."""

    def __init__(self):
        self.at = []
        super().__init__()

    def _raw(self, c):
        buf = b""
        while True:
            d = c.recv(65536)
            if not d:
                return
            now = time.monotonic()
            buf += d
            *lines, buf = buf.split(b"\n")
            with self.lock:
                self.got.extend((l + b"\n", None) for l in lines)
                self.at.extend(now for _ in lines)


def timed_shadow(ctx):
    sh = TimedShadow()
    ctx.shadows.append(sh)
    return sh


# The pace's bounds, as the shadow sees it, and why they are what they
# are.  Early: sds-copy sleeps to each record's offset from its own start
# (CLOCK_MONOTONIC, absolute), so no record may arrive ahead of its time
# counted from the first one's arrival; EARLY_S is what the first one's
# own delay (connect, this shadow's thread) may take off that.  Late: a
# deadline, not a speed: the span of a --speed 2 replay must stay closer
# to its 1 s than to --speed 1's 2 s, so LATE is half the span again.
EARLY_S = 0.2
LATE = 1.5


@test
def t_replay_speed(ctx):
    """A recording spanning 2 s (101 records 20 ms apart) replayed with
    --speed 2 arrives over 1 s, with --speed 1 over 2 s: no record ahead
    of the recorded pace (each at least I x 20 ms / speed after the
    first), the last within 1.5x the span, timed by the shadow's
    arrivals."""
    path, bodies = recording(ctx, 101, 20)        # span 100 x 20 ms = 2 s
    for speed, want in ((2, 1.0), (1, 2.0)):
        sh = timed_shadow(ctx)
        r = ctx.run(["replay", path, "--to", sh.addr, "--speed", str(speed)])
        check(r.rc == 0 and not r.out and not r.err, "replay: %r" % r)
        eq(sh.wait_count(101), 101, "--speed %d: requests" % speed)
        eq([b for b, _ in sh.got], bodies, "--speed %d: bodies in order" % speed)
        at = [t - sh.at[0] for t in sh.at]
        sdstest.log("--speed %d: the last of 101 %.3f s after the first, "
                    "want %.1f s" % (speed, at[-1], want))
        ahead = [(i, round(t, 3)) for i, t in enumerate(at)
                 if t < i * 0.020 / speed - EARLY_S]
        check(not ahead, "--speed %d: %d records ahead of the pace; the "
              "first (index, s after the first record): %r"
              % (speed, len(ahead), ahead[:5]))
        check(at[-1] <= LATE * want, "--speed %d: the last record %.3f s "
              "after the first, want %.1f s (at most %.1f)"
              % (speed, at[-1], want, LATE * want))


@test
def t_replay_http_spread(ctx):
    """--framing http over two targets: coloured POSTs, alternating, each
    body once, in order on each target."""
    a, b = ctx.shadow(http=True), ctx.shadow(http=True)
    path, bodies = recording(ctx, 100, 0, app="orders", point="handle")
    r = ctx.run(["replay", path, "--to", "%s,%s" % (a.addr, b.addr),
                 "--framing", "http"])
    check(r.rc == 0, "replay: %r" % r)
    eq((a.wait_count(50), b.wait_count(50)), (50, 50), "requests per target")
    eq([x for x, _ in a.got], bodies[0::2], "target A's bodies")
    eq([x for x, _ in b.got], bodies[1::2], "target B's bodies")
    eq({c for _, c in a.got + b.got}, {"orders/handle"}, "X-SDS-Copy")
    bad = ctx.shadow(http=True, status=503)
    r = ctx.run(["replay", path, "--to", bad.addr, "--framing", "http"])
    check(r.rc == 1 and r.err == "sds-copy: replay: 100 of 100 requests answered "
          "with status >= 400\n", "replay to a 503 shadow: %r" % r)


def bad_file(ctx, name, data, want):
    """Replaying @data fails with one line naming @want, sends nothing."""
    sh = ctx.shadow()
    path = os.path.join(ctx.tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    r = ctx.run(["replay", path, "--to", sh.addr])
    eq(r.rc, 1, "%s: exit" % name)
    eq(r.err.count("\n"), 1, "%s: stderr lines %r" % (name, r.err))
    check(r.err.startswith("sds-copy: replay: %s: %s" % (path, want)),
          "%s: %r, want %r" % (name, r.err, want))
    # Replay has exited, so any connection it made is in the shadow's
    # queue: ours, after it, is accepted after it.  Once ours is counted,
    # a count of 1 says replay made none (and so sent nothing).
    socket.create_connection(("127.0.0.1", sh.port), 5).close()
    sdstest.wait_until(lambda: sh.conns >= 1, time.time() + 10,
                       "%s: the shadow did not accept our connection" % name,
                       0.01)
    eq((sh.conns, sh.count()), (1, 0), "%s: connections (ours only), "
       "requests at the shadow" % name)


@test
def t_replay_bad_recordings(ctx):
    """Truncated and corrupt recordings: one line with the offset, exit 1,
    not even a connection to the target."""
    recs = [sender.record("app", "pt", b"x-%d\n" % i, ts_ns=i) for i in range(3)]
    good = sender.file_header() + b"".join(recs)
    n = len(recs[0])                      # 20 + 3 + 2 + 4 = 29
    eq(n, 29, "record length")
    bad_file(ctx, "empty", b"", "offset 0: truncated file header")
    bad_file(ctx, "short-header", good[:9], "offset 0: truncated file header")
    bad_file(ctx, "magic", b"XDSr" + good[4:], "offset 0: bad magic")
    bad_file(ctx, "stream-hello", sender.hello() + good[8:], "offset 0: bad magic")
    bad_file(ctx, "version", good[:4] + b"\x02" + good[5:], "offset 4: unsupported version")
    bad_file(ctx, "cut-head", good[:16 + n + 7], "offset 45: truncated record")
    bad_file(ctx, "cut-body", good[:16 + 3 * n - 1], "offset 74: truncated record")
    name = bytearray(good)
    name[16 + n + 21] = ord(".")          # the second record's app name
    bad_file(ctx, "name", bytes(name), "offset 65: app name not of")
    big = bytearray(good)
    big[16 + 2 * n + 14] = 0x10           # third record: cap 2^20 + 4
    bad_file(ctx, "oversize", bytes(big), "offset 86: captured length above 65536")
    flags = bytearray(good)
    flags[16 + 16] = 0x10    # bits 0..3 are truncated, write, paired, response
    bad_file(ctx, "flags", bytes(flags), "offset 32: unknown flags")


@test
def t_replay_bad_args(ctx):
    """Bad options: one line each, exit 2; an unreachable target: exit 1,
    nothing sent."""
    path, _ = recording(ctx, 3, 0)
    for args, want in ((["--to", "127.0.0.1:1", "--times", "0"], "--times 0"),
                       (["--to", "127.0.0.1:1", "--speed", "0"], "--speed 0"),
                       (["--to", "127.0.0.1:1", "--framing", "grpc"], "unknown framing"),
                       (["--to", "nohost"], "not HOST:PORT"),
                       ([], "--to HOST:PORT")):
        r = ctx.run(["replay", path] + args)
        check(r.rc == 2 and r.err.count("\n") == 1 and want in r.err,
              "%r: %r" % (args, r))
    hold, port = sdstest.dead_port()
    r = ctx.run(["replay", path, "--to", "127.0.0.1:%d" % port])
    hold.close()
    check(r.rc == 1 and "Connection refused; nothing sent" in r.err, "dead target: %r" % r)
