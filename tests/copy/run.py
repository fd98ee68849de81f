#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The traffic copy suite (issue 12, first part): `sds-copy serve` against
test shadow servers fed by tests/copy/sender.py (standing in for a
loader), `sds-copy replay` of recordings, and every bad input of theirs.
Exact counts throughout.  Run as root:

    python3 tests/copy/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import copy_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, copy_lib.SUITE, copy_lib.Ctx,
                               needs=(copy_lib.COPY,)))
