# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The Rust crate (bindings/rust): its own `cargo test --offline`, a bad
libsds dir, and its example under a real loader."""

import os
import re

from bindings_lib import (CACHE, cargo, example_counts, example_keyed,
                          rust_example, test)
from sdstest import check


@test
def rust_crate_cargo_test(ctx):
    """`cargo test --offline` (Debian's cargo and rustc): every unit test
    and the doc example pass, none ignored."""
    r = cargo(["test"])
    check(r.rc == 0, "cargo test --offline: %r" % r)
    got = re.findall(r"test result: ok\. (\d+) passed; (\d+) failed; "
                     r"(\d+) ignored", r.out)
    check([tuple(map(int, g)) for g in got] == [(8, 0, 0), (1, 0, 0)],
          "cargo test: results %r, want 8 unit tests and 1 doc test "
          "passed: %r" % (got, r))


@test
def rust_crate_without_libsds(ctx):
    """SDS_LIB_DIR without libsds.a: the build fails with one line that
    says where it looked and what to do."""
    empty = os.path.join(ctx.tmp, "nolib")
    os.mkdir(empty)
    r = cargo(["build", "--lib"], {
        "SDS_LIB_DIR": empty,
        "CARGO_TARGET_DIR": os.path.join(CACHE, "cargo-nolib")})
    want = ("sds-bpf: %s/libsds.a: no libsds.a (run make in the sds-bpf "
            "tree, or set SDS_LIB_DIR)" % empty)
    check(r.rc != 0 and want in r.err,
          "cargo build with an empty SDS_LIB_DIR: want a failure saying "
          "%r; got %r" % (want, r))


@test
def rust_example_counts(ctx):
    """The example (cargo build --release) under `sds-bpf attach`: Ok
    counts a visit, Err and a panic are signed exactly once each, through
    invoke and through a Guard; under a kill switch the fallback runs."""
    example_counts(ctx, rust_example(), "rustex",
                   [("err", "guard-err"), ("panic", "guard-panic")])


@test
def rust_example_keyed_calls(ctx):
    """Point::invoke_key under `sds-bpf attach`: keyed calls pass, and
    under a kill switch run the fallback (docs/KEYS.md)."""
    example_keyed(ctx, rust_example(), "rustkey")
