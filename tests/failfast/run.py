#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The fail-fast suite (issue 15, docs/FAILFAST.md): function points with
:failfast= on an unmodified program (build/test/targets/fftarget), its
fetch() talking to a local server that accepts and never answers.

Two halves.  The dry run (SDS_FAILFAST_DRYRUN: uprobes on libc take the
LSM programs' decision and count it, never denying) runs on every
kernel: which calls would fail, exact counts, probes of a hold, nothing
outside the point.  The enforcing tests need a kernel that loads BPF LSM
programs (`bpftool feature probe kernel`: "program_type lsm is
available"); where it does not, each says SKIP with the reason on its
own line, and the refusal of attach is tested instead.  Run as root:

    python3 tests/failfast/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ff_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


def preflight():
    if not os.path.exists(ff_lib.LIBC):
        return "%s missing: the dry run probes libc there" % ff_lib.LIBC
    return None


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, ff_lib.SUITE, ff_lib.Ctx,
                               needs=(sdstest.SDS, ff_lib.TARGET), extra=preflight))
