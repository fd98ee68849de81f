#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Hostile-client tests (issue 8, docs/TRUST.md): a root `sds-bpf attach`
and clients that run as nobody and try to turn it against the host.
One test per attack; each checks exact numbers on a victim process.

Run as root from anywhere (after `make hostile-bins`, which `make
hostile-tests` does):

    python3 tests/hostile/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; the exit status is non-zero when
anything failed.  Python 3 standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hostile_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, hostile_lib.SUITE, hostile_lib.Ctx,
                               needs=()))
