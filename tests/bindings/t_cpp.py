# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""sds.hpp under a real loader: bindings/cpp/example.cc (g++ -O2, libsds.a)."""

import os

from bindings_lib import BIN, example_counts, example_keyed, test


@test
def cpp_guard_and_invoke_counts(ctx):
    """A guarded scope that throws counts exactly one exception and
    leaves nothing in flight; a passing scope counts a visit and no
    exception; g.fail() signs a failure without a throw; sds::invoke
    signs and rethrows; under a kill switch sds::invoke and the scope
    run the fallback (no exception, nothing in flight)."""
    example_counts(ctx, os.path.join(BIN, "cpp_example"), "cppex",
                   [("throw", "guard-throw"), ("throw", "guard-fail")])


@test
def cpp_invoke_key(ctx):
    """sds::invoke_key under `sds-bpf attach`: keyed calls pass, and
    under a kill switch run the fallback (docs/KEYS.md)."""
    example_keyed(ctx, os.path.join(BIN, "cpp_example"), "cppkey")
