#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
End-to-end tests of the heartbeat (docs/DESIGN.md §4, §5, §7; issue 4,
"Integration"): a real sds-admin on a free loopback port with its own
SQLite file, a real `sds-bpf attach --admin` on a private copy of
target_pie (tests/targets/target.c), real uprobes, exact numbers.

Run as root from anywhere:

    python3 tests/e2e/run.py [-v] [NAME-SUBSTRING...]

Periods are natural 10-s wall-clock periods, each sent at this host's
offset (2-9 s) after it ends, so most tests take one or two periods.
Every test gets its own temp dir, SDS_RUN_DIR, SDS_STATE_DIR, token file,
database and port; every process it starts runs in its own session and
its group is killed when the test ends, pass or fail.  Nothing is
skipped: a test that cannot run fails and says why.  The last line is
"N passed, M failed, K skipped"; the exit status is non-zero when anything failed.

Python 3 standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_lib  # noqa: E402  (puts tests/lib on sys.path)
import sdstest  # noqa: E402
# tests/crash and tools/demo/cluster_demo.py load this file as a module
# and use the harness through it (e2e.Admin, e2e.Ctx, e2e.period_of...).
from e2e_lib import *  # noqa: E402,F401,F403


# Seconds each test took in a run of make test (2026-12-01; the rest take
# about 20 s or much less), for tests/lanes.py's shards (SDS_TEST_SHARD).
e2e_lib.SUITE.weights = {
    "cluster_admin_killed": 81, "admin_down_two_periods": 60,
    "admin_policy_hung_least_active": 57, "admin_reply_unusable": 40,
    "admin_policy_consistent_hash": 36, "period_boundary": 31,
    "hold_survives_unrelated_change": 30, "period_boundary_hist": 30,
    "failover_hung_first": 23, "loader_restart_admin_down": 13,
    "bad_input": 1, "admin_policy_bad_input": 1,
    "bad_admin_url_without_host": 1, "loader_token_file_modes": 1,
}


# What preflight_error() checks before a test runs (tools/demo/cluster_demo.py
# checks it too).
CHECKS = dict(needs=(sdstest.SDS, e2e_lib.ADMIN, e2e_lib.TARGET),
              tools=("bpftool",))


def preflight():
    return sdstest.preflight_error(**CHECKS)


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, e2e_lib.SUITE, e2e_lib.Ctx, **CHECKS))
