#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The delay-drill suite (docs/DELAY.md): delay drills at a function point
with failfast=connect of an unmodified program
(build/test/targets/dltarget), whose fetch() connects to a server in a
network namespace behind a veth pair.

Where the kernel has the fq qdisc, a 200-ms drill is timed call by call;
where it has not (the development VM), that test says SKIP with the
reason, the refusal is tested instead, and the dry run
(SDS_DELAY_DRYRUN: no qdisc checked or set, the programs attached and
counting) checks call by call which sockets are marked and which packets
stamped.  Run as root:

    python3 tests/delaydrill/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped"; non-zero exit when anything failed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dl_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, dl_lib.SUITE, dl_lib.Ctx,
                               needs=(sdstest.SDS, dl_lib.TARGET),
                               tools=("ip", "tc", "bpftool")))
