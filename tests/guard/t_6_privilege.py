# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
An unprivileged program (guarded, or refused by the socket's mode), and
invalid strategies, which change nothing.
"""

import json
import os
import signal
import stat
import time

from guard_lib import Exp, SHARED, STATIC, assert_totals, setup, state_of, test
from sdstest import NOBODY, check, get_point, log


# ---------------------------------------------------------------------------
# An unprivileged program

def _unprivileged(ctx, variant):
    path = ctx.copy(variant)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 2}}})
    ctx.attach(path, "app", spath, extra=["--socket-mode", "0666"])
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
              "--clear-groups"]
    t = ctx.start(path, "app", prefix=prefix)
    uid = t.uid()
    check(uid and all(u == NOBODY for u in uid),
          "the program runs with uids %r, want %d" % (uid, NOBODY))
    eo, ep = Exp(), Exp()
    r = t.call("order", 1, eo)
    check(r["downgraded"] == 1, "as nobody, the first call under the kill "
          "switch: %r, want downgraded" % r)
    t.call("order", 499, eo)
    check(eo.downgrades == 500, "as nobody, kill switch: %r" % eo)
    refused = t.hold("pay", 3, ep)
    check(refused == 1, "as nobody, concurrency limit 2 and 3 threads: %d "
          "refused, want 1" % refused)
    t.release(2, ep)
    t.call("pay", 100, ep, err=7)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)


@test
def unprivileged_static(ctx):
    _unprivileged(ctx, STATIC)


@test
def unprivileged_shared(ctx):
    _unprivileged(ctx, SHARED)


@test
def unprivileged_refused_by_socket_mode(ctx):
    """With the default --socket-mode (0660, root's group) nobody cannot
    reach the loader: the guard stays detached and never downgrades, and
    the program runs normally."""
    path = ctx.copy(STATIC)
    spath = ctx.write_strategies({"version": 1, "points": {
        "order": {"visit_threshold": 0}}})
    l = ctx.attach(path, "app", spath)
    mode = stat.S_IMODE(os.lstat(l.sock).st_mode)
    check(mode == 0o660, "socket mode %o, want 660 by default" % mode)
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
              "--clear-groups"]
    t = ctx.start(path, "app", prefix=prefix)
    r = t.call("order", 1000)
    check(r["passed"] == 1000, "nobody, socket 0660: %r, want every call "
          "passed (detached)" % r)
    assert_totals(ctx, "app", "order", Exp(),
                  what="a process that could not register is not counted")
    check(t.alive(), "the program died")


# ---------------------------------------------------------------------------
# Invalid strategies change nothing

class _written_open:
    """The strategies file rewritten in place and kept open: the loader's
    watch (close, rename) has not fired until the block ends."""

    def __init__(self, path, doc):
        self.path, self.doc = path, doc

    def __enter__(self):
        self.fd = os.open(self.path, os.O_WRONLY | os.O_TRUNC)
        os.write(self.fd, (self.doc if isinstance(self.doc, str)
                           else json.dumps(self.doc)).encode())
        return self

    def __exit__(self, *a):
        os.close(self.fd)


def _new_lines(l, before, n, timeout):
    """Wait up to @timeout for @n lines on the loader's stderr after the
    first @before; return the new ones."""
    deadline = time.monotonic() + timeout
    while True:
        new = l.stderr().splitlines()[before:]
        if len(new) >= n or time.monotonic() > deadline:
            return new
        time.sleep(0.05)


@test
def invalid_strategy_changes_nothing(ctx):
    l, t, _ = setup(ctx, {"version": 1, "points": {
        "order": {"visit_threshold": 0}, "pay": {"concurrent_threshold": 2}}})
    eo, ep = Exp(), Exp()
    t.call("order", 5, eo)
    spath = ctx.strategies_path()
    bad_docs = [
        ({"version": 2, "points": {"order": {"visit_threshold": 5},
                                   "pay": {"exception_rate_threshold": 150}}},
         ["pay", "exception_rate_threshold"]),
        ({"version": 3, "points": {"pay": {"visits_threshold": 5}}},
         ["pay", "visits_threshold"]),
        ({"version": 4, "points": {"order": {"downgrade_rate": "half"}}},
         ["order", "downgrade_rate"]),
        ({"version": 5, "points": {"order": {"timeout_count_threshold": 0}}},
         ["order", "timeout_count_threshold"]),
        ('{"version": 6, "points": {"order": {"visit_threshold": 1}',
         []),
    ]
    for i, (doc, words) in enumerate(bad_docs):
        what = "invalid strategies %s" % (json.dumps(doc) if
                                          not isinstance(doc, str) else doc)
        before = len(l.stderr().splitlines())
        if i == 1:
            what += " (through SIGHUP)"
            with _written_open(spath, doc):
                l.signal(signal.SIGHUP)
                new = _new_lines(l, before, 1, 3.0)
            # Closing the file makes the loader read it again.
            _new_lines(l, before, 2, 2.0)
        else:
            ctx.write_strategies(doc)
            new = _new_lines(l, before, 1, 3.0)
            time.sleep(0.3)
            new = l.stderr().splitlines()[before:]
            check(len(new) == 1, "%s: want one line on stderr, got %r"
                  % (what, new))
        check(new, "%s: nothing on the loader's stderr within 3 s" % what)
        log("loader: %s" % new[0])
        check(new[0].startswith("sds-bpf: "), "%s: stderr line %r does not "
              "start with 'sds-bpf: '" % (what, new[0]))
        for w in words:
            check(w in new[0], "%s: the message does not name %r: %r"
                  % (what, w, new[0]))
        check(l.p.poll() is None, "%s: the loader exited" % what)
        st = ctx.stats("app")
        check(st.get("strategies_version") == 1,
              "%s: strategies_version %r, want 1 still"
              % (what, st.get("strategies_version")))
        check(state_of(get_point(st, "order"))[:2] == (True, "visit"),
              "%s: order no longer downgraded: %r"
              % (what, get_point(st, "order").get("state")))
        r = t.call("order", 5, eo)
        check(r["downgraded"] == 5, "%s: order's kill switch: %r" % (what, r))
        refused = t.hold("pay", 3, ep)
        t.release(3 - refused, ep)
        check(refused == 1, "%s: pay's concurrency limit 2, 3 threads: "
              "%d refused, want 1" % (what, refused))
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)
    # A valid version after all that is taken (through SIGHUP: before
    # the file is closed).
    with _written_open(spath, {"version": 9, "points": {
            "pay": {"concurrent_threshold": 1}}}):
        l.signal(signal.SIGHUP)
        ctx.wait_version("app", 9)
    r = t.call("order", 5, eo)
    check(r["passed"] == 5, "version 9 (no strategy for order): %r" % r)
    refused = t.hold("pay", 3, ep)
    t.release(3 - refused, ep)
    check(refused == 2, "version 9, pay limit 1, 3 threads: %d refused"
          % refused)
    assert_totals(ctx, "app", "order", eo)
    assert_totals(ctx, "app", "pay", ep)
