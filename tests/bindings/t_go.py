# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The Go package (bindings/go, cgo): its own `go test`, and its example
under a real loader."""

import re

from bindings_lib import (Counts, Example, example_counts, example_keyed,
                          expect, go, go_example, test)
from sdstest import check


@test
def go_package_go_test(ctx):
    """`go test -v` (Debian's golang-go, offline): every test passes."""
    r = go(["test", "-count=1", "-v", "."])
    check(r.rc == 0, "go test: %r" % r)
    passed = re.findall(r"^--- PASS: (\w+)", r.out, re.M)
    check(len(passed) == 8 and "--- FAIL" not in r.out,
          "go test: passed %r, want 8 tests: %r" % (passed, r))


@test
def go_example_counts(ctx):
    """The example under `sds-bpf attach`: a nil error counts a visit, an
    error and a panic (raised again) are signed exactly once each,
    through Invoke and through Begin/End; under a kill switch the
    fallback runs."""
    example_counts(ctx, go_example(), "goex",
                   [("err", "guard-err"), ("panic", "guard-panic")])


@test
def go_example_goroutines_across_threads(ctx):
    """1,000 goroutines at once, each a guarded call that sleeps inside
    (a parked goroutine may wake on another thread; Begin locks it to its
    own): every call counted once, its latency recorded, nothing left in
    flight."""
    path = ctx.program(go_example(), "goex")
    spath = ctx.strategies({"version": 1, "points": {}})
    ctx.attach(path, "goex", spath)
    ex = Example(ctx, path, "goex")
    c = Counts()
    for _ in range(3):
        r = ex.run("spread", 1000)
        expect(r, 1000, 0, 0, "spread 1000")
        c.add(r)
    c.check(ctx, "goex", "3 x 1,000 goroutines")
    check(ex.quit() == 0, "the example did not exit 0")


@test
def go_example_keyed_calls(ctx):
    """InvokeKey under `sds-bpf attach`: keyed calls pass, and under a
    kill switch run the fallback (docs/KEYS.md)."""
    example_keyed(ctx, go_example(), "gokey")
