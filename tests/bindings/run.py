#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The guards of C++, Rust and Go (issue 10): sds.hpp, the Rust crate
(bindings/rust) and the Go package (bindings/go), each with its own unit
tests and its example under a real `sds-bpf attach`, counted exactly.
t_types.py: the C header's type names in C and C++; t_cpp.py: sds.hpp;
t_rust.py: the crate; t_go.py: the package.

Run as root from anywhere (after `make bindings-bins`, which `make
bindings-tests` does):

    python3 tests/bindings/run.py [-v] [NAME-SUBSTRING...]

The Rust and Go examples are built by their tests with Debian's
toolchains (caches under build/bindings); a missing toolchain fails.
The last line is "N passed, M failed, K skipped"; the exit status is non-zero when
anything failed.  Python 3 standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bindings_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, bindings_lib.SUITE, bindings_lib.Ctx,
                               needs=(sdstest.SDS, bindings_lib.LIBSDS_A)))
