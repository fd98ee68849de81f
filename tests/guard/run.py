#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of enforcement (issue 3, "Tests"; docs/DESIGN.md §2, §4-§6):
applications linked with libsds, guarded by a real `sds-bpf attach
--strategies FILE`, with real BPF programs and real processes, exact
numbers.

The guarded programs are built from tests/targets/guarded.c by
tests/targets/targets.mk (`make && make test-targets`):
guarded_static (libsds.a), guarded_shared and guarded_shared2 (libsds.so,
the one of build/lib).  They are driven on stdin and report which of their
guarded calls passed and which were downgraded, so every count the loader
shows is checked against what the program saw.

Run as root from anywhere:

    python3 tests/guard/run.py [-v] [NAME-SUBSTRING...]

Every test gets its own temp dir with private copies of the programs, its
own SDS_RUN_DIR and SDS_STATE_DIR, and kills every process group it
started when it ends, pass or fail.  Nothing is skipped: a test that
cannot run fails and says why.  Times get margins (the loader ticks every
100 ms); counts do not.  The last line is "N passed, M failed"; the exit
status is non-zero when anything failed.

Python 3 standard library only.
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import guard_lib  # noqa: E402
import sdstest  # noqa: E402
from guard_lib import GT_DEPS, LIBSDS_SO, PROGRAMS, TT  # noqa: E402
from sdstest import NOBODY, SDS  # noqa: E402

sdstest.import_test_modules(HERE)


def preflight():
    err = sdstest.root_error()
    if err:
        return err
    if not os.path.exists(SDS):
        return "%s missing: run make" % SDS
    if not os.path.exists(LIBSDS_SO):
        return "%s missing: run make" % LIBSDS_SO
    for t in PROGRAMS:
        if not os.path.exists(os.path.join(TT, t)):
            return "%s missing: run make test-targets" % os.path.join(TT, t)
        # guarded_static embeds libsds.a: an old one would run old guards.
        err = sdstest.stale_error(os.path.join(TT, t), GT_DEPS)
        if err:
            return err
    for tool in ("setpriv",):
        if not shutil.which(tool):
            return "%s not found in PATH" % tool
    try:
        import pwd
        pwd.getpwuid(NOBODY)
    except KeyError:
        return "no user %d (nobody) on this host" % NOBODY
    return None


def main(argv):
    return guard_lib.SUITE.main(argv, guard_lib.Ctx, preflight)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
