#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The capture suite (issue 12, the loader's side): function points with
:copy=, `attach --copy-to` a real `sds-copy serve` and recording shadows,
sampling, drops, truncation, write points, `sds-bpf record`, and every
bad input of the point spec.  Exact counts throughout (a 5-sigma binomial
bound where sampling is random).  Run as root:

    python3 tests/capture/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cap_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, cap_lib.SUITE, cap_lib.Ctx,
                               needs=(sdstest.SDS, cap_lib.copy_lib.COPY, cap_lib.TARGET)))
