#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The capture suite (issue 12, the loader's side): function points with
:copy=, `attach --copy-to` a real `sds-copy serve` and recording shadows,
sampling, drops, truncation, write points, `sds-bpf record`, and every
bad input of the point spec.  Exact counts throughout (a 5-sigma binomial
bound where sampling is random).  Run as root:

    python3 tests/capture/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cap_lib  # noqa: E402
import sdstest  # noqa: E402

sdstest.import_test_modules(HERE)


def preflight():
    err = sdstest.root_error()
    if err:
        return err
    for p in (sdstest.SDS, cap_lib.copy_lib.COPY, cap_lib.TARGET):
        if not os.access(p, os.X_OK):
            return "%s missing: run make all test-targets" % p
    return None


if __name__ == "__main__":
    sys.exit(cap_lib.SUITE.main(sys.argv[1:], cap_lib.Ctx, preflight))
