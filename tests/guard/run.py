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
100 ms); counts do not.  The last line is "N passed, M failed, K skipped"; the exit
status is non-zero when anything failed.

Python 3 standard library only.
"""

import os
import pwd
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import guard_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402
from guard_lib import GT_DEPS, LIBSDS_SO, PROGRAMS, TT  # noqa: E402


def preflight():
    for t in PROGRAMS:
        # guarded_static embeds libsds.a: an old one would run old guards.
        err = sdstest.stale_error(os.path.join(TT, t), GT_DEPS)
        if err:
            return err
    try:
        pwd.getpwuid(sdstest.NOBODY)
    except KeyError:
        return "no user %d (nobody) on this host" % sdstest.NOBODY
    return None


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(
        __file__, guard_lib.SUITE, guard_lib.Ctx, tools=("setpriv",),
        needs=[sdstest.SDS, LIBSDS_SO] + [os.path.join(TT, t) for t in PROGRAMS],
        extra=preflight))
