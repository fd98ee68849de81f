# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The capture suite's harness: the target (build/test/targets/copytarget,
handle_request called on demand), a loader attached to it, and through
tests/copy/copy_lib.py a real `sds-copy serve` and recording shadows.
Every process and socket ends with the test, whatever happens.
"""

import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "copy"))
import sdstest  # noqa: E402
import copy_lib  # noqa: E402
from fake_admin import NOTHING_NEW, FakeAdmin  # noqa: E402
from sdstest import SDS, Fail, check, eq, log  # noqa: E402,F401

TARGET = os.path.join(sdstest.BUILD, "test", "targets", "copytarget")
APP = "copytarget"
POINT = "req"
SUITE = sdstest.Suite(timeout=180)


def test(fn):
    return SUITE.test(fn)


def body(rnd, i, size):
    """What copytarget's call @i of round @rnd receives."""
    h = b"req %d.%d " % (rnd, i)
    return h + b"x" * (size - len(h) - 1) + b"\n"


def loader_admin(ctx):
    """The loader's `stats --json` "admin" object: its first period and
    offset, which say when it posts (sdstest.heartbeat_after)."""
    return sdstest.json_out(ctx.sds(["stats", "--json", "--app", APP]),
                            "sds-bpf stats --json")["admin"]


def beat_in(ctx, slack=3.0):
    """Seconds until the loader's next post, + @slack for the post and
    the tick that applies its reply."""
    return sdstest.heartbeat_after(loader_admin(ctx), time.time()) + slack \
        - time.time()


class PlanAdmin(FakeAdmin):
    """Answers every heartbeat with @copy as the reply's "copy" and keeps
    the heartbeats' points."""

    def __init__(self, ctx, copy):
        self.copy = copy
        self.beats = []
        super().__init__(self._answer)
        ctx.fakes.append(self)

    def _answer(self, doc):
        self.beats.append(doc)
        return dict(NOTHING_NEW, copy=self.copy)

    def captured(self, point=POINT):
        """copy_captured of @point summed over the heartbeats."""
        with self.lock:
            return sum(b["points"].get(point, {}).get("copy_captured", 0)
                       for b in self.beats)


class Target:
    """copytarget in its own session; go() makes calls and returns
    (max call ns, total ns)."""

    def __init__(self, ctx):
        self.p = subprocess.Popen([TARGET], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=ctx.tmp,
                                  start_new_session=True)
        ctx.others.append(self.p)
        self.rounds = 0

    def go(self, n, size):
        self.rounds += 1
        self.p.stdin.write(b"go %d %d\n" % (n, size))
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        check(line[:2] == [b"done", b"%d" % n], "copytarget said %r" % line)
        return int(line[2]), int(line[3])


class Ctx(copy_lib.Ctx):
    def __init__(self, name):
        super().__init__(name)
        self.fakes = []

    def cleanup(self):
        for f in self.fakes:
            f.close()
        super().cleanup()

    def attach(self, specs, extra=(), **kw):
        return sdstest.AttachProcess(self, ["--app", APP] + list(extra) +
                                     [TARGET] + list(specs), APP, **kw)

    def target(self):
        return Target(self)

    def sds(self, args, timeout=60):
        return sdstest.run_group([SDS] + args, self.env, self.tmp, self.others,
                                 timeout=timeout)

    def point(self, name=POINT, app=APP):
        r = self.sds(["stats", "--json", "--app", app])
        check(r.rc == 0, "stats: %r" % r)
        return sdstest.get_point(json.loads(r.out), name)

    def copy_counts(self, name=POINT, app=APP):
        p = self.point(name, app)
        check("copy" in p, "stats: point %s has no \"copy\": %r" % (name, p))
        return p["copy"]

    def wait_copy(self, pred, what, timeout=20, name=POINT, app=APP):
        return sdstest.wait_until(
            lambda: (lambda c: c if pred(c) else None)(
                self.copy_counts(name, app)),
            time.time() + timeout,
            lambda _: "%s: %r" % (what, self.copy_counts(name, app)), 0.1)


def read_recording(path):
    """[(ts, app, point, flags, orig_len, data, pair id or None)] of an
    "SDSr" file."""
    with open(path, "rb") as f:
        buf = f.read()
    check(buf[:4] == b"SDSr", "%s: magic %r" % (path, buf[:4]))
    eq(struct.unpack_from("<H", buf, 4)[0], 1, "recording version")
    out, pos = [], 16
    while pos < len(buf):
        ts, orig, cap, flags, al, pl = struct.unpack_from("<QIIHBB", buf, pos)
        o = pos + 20
        app, point = buf[o:o + al].decode(), buf[o + al:o + al + pl].decode()
        o2 = o + al + pl + (8 if flags & 4 else 0)     # paired: a u64 id
        data = buf[o2:o2 + cap]
        check(len(data) == cap, "%s: record at %d cut" % (path, pos))
        out.append((ts, app, point, flags, orig, data,
                     struct.unpack_from("<Q", buf, o + al + pl)[0]
                     if flags & 4 else None))
        pos = o2 + cap
    return out
