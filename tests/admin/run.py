#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Integration tests of sds-admin: a real sds-admin on a free loopback port
with a fresh SQLite file per test, driven over HTTP; heartbeats are posted
by the test itself (a fake loader) and the statistics the admin returns are
checked exactly; the dashboard is checked in a real headless Debian
chromium driven over the DevTools protocol (chromium.py): one chromium
for the run, a page of its own for each test.

admin_lib.py holds the harness (Env, the store under test, the
registry); the tests are in t_*.py by concept: t_api (command line,
organisation, auth, SIGTERM, static files), t_heartbeat (sums, the probe
budget's state), t_bad_inputs, t_dashboard, t_cockpit (the fleet page,
the kill switch, schemes, refusals), t_copy, t_roles, t_scope,
t_drill_errno, t_pwfile, t_scan_apart, t_watch (the push channel: watch
and sync), t_shares (the cluster shares), t_adaptive (an adaptive
point's limit), t_pressure (host pressure rules in the strategies),
t_fields (the split, max_stuck, overload, a host's pressure and refusals),
t_keys (hot keys stored, merged over hosts, on the dashboard; bad
key_overrides refused),
t_pg (PostgreSQL's own).
SDS_TEST_STORE=pg runs them on PostgreSQL (make admin-integration-pg).

    python3 tests/admin/run.py [-v] [NAME-SUBSTRING...]

Every process is started in its own session and its group is killed when
the test ends, pass or fail; temp dirs are removed.  The last line is
"N passed, M failed, K skipped"; the exit status is non-zero when anything failed.
A screenshot of the dashboard is kept at build/test/admin/dashboard.png.

Python 3 standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import admin_lib  # noqa: E402  (puts tests/lib on sys.path)
import pgtest  # noqa: E402
import sdstest  # noqa: E402
from chromium import Chromium  # noqa: E402


def run(argv, extra=None):
    return sdstest.run_suite(__file__, admin_lib.SUITE, lambda name: admin_lib.Env(),
                             argv, root=False, needs=(admin_lib.ADMIN,), extra=extra)


def main(argv):
    if admin_lib.STORE != "pg":
        return run(argv)
    # SQLite's own migration test has no PostgreSQL form; said, not skipped silently.
    print("NOTE: test_point_budget_old_database and test_adaptive_old_database are SQLite's"
          " schema 2 -> 9 and 6 -> 9 migrations, not run on PostgreSQL (whose schema is"
          " test_pg_newer_schema's and the unit test_adaptive_state's)")
    if pgtest.available() or "--list" in argv:
        return run(argv, pgtest.available)
    try:
        admin_lib.PG = pgtest.cluster()
        admin_lib.PG.start()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        if admin_lib.PG:
            admin_lib.PG.stop()
        return run(argv, lambda: "no PostgreSQL: %s" % str(e).strip().splitlines()[0])
    # The run's own dir: a server the lane runner shares has no dir of ours.
    passdir = tempfile.mkdtemp(prefix="sds-admin-pgpass.")
    try:
        passfile = os.path.join(passdir, "pgpass")
        sdstest.write_token(passfile, "127.0.0.1:%d:*:%s:%s" % (
            admin_lib.PG.port, pgtest.USER, admin_lib.PG.password))
        os.environ["PGPASSFILE"] = passfile
        return run(argv, pgtest.available)
    finally:
        admin_lib.PG.stop()
        shutil.rmtree(passdir, ignore_errors=True)


if __name__ == "__main__":
    try:
        rc = main(sys.argv[1:])
    finally:
        Chromium.stop()
    sys.exit(rc)
