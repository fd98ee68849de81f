#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
"First, do no harm" tests (issue 9): a probe never crashes, and never
overloads, the program it watches.  t_fork.py: fork safety; t_budget.py:
the probe-cost budget; t_unwind.py: exceptions and panics through probed
functions.  Each test checks exact numbers on a target program.

Run as root from anywhere (after `make harm-bins`, which `make
harm-tests` does):

    python3 tests/harm/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; the exit status is non-zero when
anything failed.  Python 3 standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harm_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, harm_lib.SUITE, harm_lib.Ctx,
                               needs=(sdstest.SDS,)))
