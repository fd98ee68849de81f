#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Harm tests (issue 9, "First, do no harm"): a probe never crashes, and
never overloads, the program it watches.  (The unwind helper's minimal
copy, until the fork helper's run.py is merged.)

Run as root (after `make harm-bins`, which `make harm-tests` does):

    python3 tests/harm/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed"; the exit status is non-zero when
anything failed.  Python 3 standard library only.
"""

import glob
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harm_lib  # noqa: E402
import sdstest  # noqa: E402

for path in sorted(glob.glob(os.path.join(HERE, "t_*.py"))):
    importlib.import_module(os.path.basename(path)[:-3])


def preflight():
    return sdstest.root_error()


if __name__ == "__main__":
    sys.exit(harm_lib.SUITE.main(sys.argv[1:], harm_lib.Ctx, preflight))
