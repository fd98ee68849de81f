#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Run each store unit test binary against PostgreSQL: SDS_TEST_PG_URL names
a database of this run's own on the server SDS_TEST_PG_SERVER describes
(one server for the whole `make test`, tests/lib/pgtest.py), else on a
server started in a temp dir and stopped and removed after, pass or fail.
The database is dropped after.

    python3 tests/admin/with_pg.py BIN...

cmocka's lines are passed through.  On PostgreSQL no test may be SKIPPED
but the SQLite-only ones named in SQLITE_ONLY: a test that skips because
the URL never reached it (test_store_pg's every test does) fails the run.
The last line is "N binaries, M failed"; the exit status is non-zero when
any binary failed, skipped what it must not, or no server answered.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))
import pgtest  # noqa: E402

# Tests that say they have no PostgreSQL form and skip there (their line
# says why): SQLite's own schema migration.
SQLITE_ONLY = {"test_old_database"}
SKIPPED = re.compile(r"^\[  SKIPPED \] (\w+)$")


def run_bin(b, env):
    """Run @b, its output passed through: (exit status, names it skipped)."""
    p = subprocess.Popen([b], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    skipped = set()
    for line in p.stdout:
        sys.stdout.write(line)
        m = SKIPPED.match(line.rstrip("\n"))
        if m:
            skipped.add(m.group(1))
    sys.stdout.flush()
    return p.wait(), skipped


def main(bins):
    if not bins:
        print("with_pg.py: no binaries to run")
        return 1
    why = pgtest.available()
    if why:
        print(why)
        return 1
    failed = 0
    try:
        with pgtest.cluster() as pg:
            env = dict(os.environ, SDS_TEST_PG_URL=pg.create_db(pgtest.unique_name("sdsunit")))
            for b in bins:
                print("== %s (PostgreSQL)" % b, flush=True)
                rc, skipped = run_bin(b, env)
                wrong = sorted(skipped - SQLITE_ONLY)
                if wrong:
                    print("with_pg.py: %s skipped %s on PostgreSQL (SDS_TEST_PG_URL not seen?)"
                          % (b, ", ".join(wrong)))
                if rc or wrong:
                    failed += 1
    except RuntimeError as e:
        print("with_pg.py: %s" % str(e).strip().splitlines()[0])
        return 1
    print("%d binaries, %d failed" % (len(bins), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
