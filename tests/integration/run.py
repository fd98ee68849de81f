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
"N passed, M failed"; the exit status is non-zero when anything failed.

Python 3 standard library only.
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import integration_lib  # noqa: E402
import sdstest  # noqa: E402
from integration_lib import TT  # noqa: E402
from sdstest import SDS  # noqa: E402
# tests/probepath loads this file as a module and uses the harness
# through it (it.Ctx, it.assert_counts, it.wait_point...).
from integration_lib import *  # noqa: E402,F401,F403

sdstest.import_test_modules(HERE)


def preflight():
    err = sdstest.root_error()
    if err:
        return err
    if not os.path.exists(SDS):
        return "%s missing: run make" % SDS
    for t in ("target_pie", "target_nopie", "target_lib", "libsdstarget.so",
              "target_stripped", "target_nop5", "target_endbr"):
        if not os.path.exists(os.path.join(TT, t)):
            return "%s missing: run make integration" % os.path.join(TT, t)
    for tool in ("bpftool", "nm", "setpriv"):
        if not shutil.which(tool):
            return "%s not found in PATH" % tool
    return sdstest.mount_bpffs()


def main(argv):
    return integration_lib.SUITE.main(argv, integration_lib.Ctx, preflight)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
