#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of `sds-bpf attach` and its query commands: real BPF
programs, real uprobes on real processes (the programs built from
tests/targets/ by tests/targets/targets.mk), exact counts.

Run as root from anywhere (make integration does it):

    python3 tests/integration/run.py [-v] [NAME-SUBSTRING...]

Every test gets its own temp dir with private copies of the target
binaries (so uprobes placed by anyone else on build/test/targets/* cannot
add to our counts), its own SDS_RUN_DIR and SDS_STATE_DIR, and kills every
process group it started when it ends, pass or fail.  Nothing is skipped:
a test that cannot load BPF fails and says why.  The last line is
"N passed, M failed, K skipped"; the exit status is non-zero when anything failed.

Python 3 standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import integration_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402
# tests/probepath loads this file as a module and uses the harness
# through it (it.Ctx, it.assert_counts, it.wait_point...).
from integration_lib import *  # noqa: E402,F401,F403

# What preflight_error() checks before a test runs here (and in probepath).
CHECKS = dict(
    needs=[sdstest.SDS] + [os.path.join(integration_lib.TT, t) for t in (
        "target_pie", "target_nopie", "target_lib", "libsdstarget.so",
        "target_stripped", "target_nop5", "target_endbr")],
    tools=("bpftool", "nm", "setpriv"), bpffs=True)


def preflight():
    return sdstest.preflight_error(**CHECKS)


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, integration_lib.SUITE,
                               integration_lib.Ctx, **CHECKS))
