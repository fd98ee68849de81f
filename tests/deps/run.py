#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The dependencies suite (docs/DEPS.md): an unmodified program
(build/test/targets/dltarget) attached with --deps, whose function
points connect to local TCP servers (one answering, one refusing) and
send on a pooled connection; `sds-bpf deps` must list each point's
peers with the exact counts of what the test made it do.  Run as root:

    python3 tests/deps/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import deps_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, deps_lib.SUITE, deps_lib.Ctx,
                               needs=(sdstest.SDS, deps_lib.TARGET, deps_lib.GUARD),
                               tools=("bpftool",)))
